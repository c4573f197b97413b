/*
 * The TRAILER payload (format-spec/ptl-format.md section 5.5):
 *   [u32 n][CBOR map of n bytes][pad to 8][u64 k][k index entries][u64 trailer_offset][end magic]
 * Pure encoding and decoding; no I/O.
 */
#ifndef TRACELOG_TRAILER_H
#define TRACELOG_TRAILER_H

#include "common/buf.h"
#include "format/event_types.h"
#include "tracelog/log.h"

/* One chunk of the index. */
typedef struct tl_index_entry {
    uint64_t offset, seq, min_ts, max_ts;
    uint32_t event_count;
} tl_index_entry;

/* What a TRAILER holds, for the encoder. */
typedef struct tl_trailer {
    const tracelog_log_status *status;
    const tracelog_event_types *types; /* names (and schemas) of type_ids, each of which it holds */
    const uint32_t *type_ids;          /* the ids listed, in this order */
    size_t ntypes;
    const tl_index_entry *index;
    size_t nindex;
    uint64_t offset;                   /* of the TRAILER block's header (ring logs: 0) */
} tl_trailer;

/* Replaces out's content with the payload. TRACELOG_E_NOMEM. */
tracelog_status tl_trailer_encode(const tl_trailer *t, tl_buf *out);

/* What the decoder found: the status if the map has one (the index is not kept). */
typedef struct tl_trailer_info {
    tracelog_log_status status;
    int have_status;
} tl_trailer_info;

/*
 * Decodes a TRAILER payload: checks the layout, the end magic and the CBOR
 * profile, decodes "status" into info and passes every "event_types" entry
 * to sink before the payload is known to be valid (a reader that applies
 * only valid trailers, spec 5.5, decodes twice: first with a sink that
 * applies nothing). TRACELOG_E_CORRUPT with the reason in *why, or the
 * sink's status.
 */
tracelog_status tl_trailer_decode(const uint8_t *p, size_t len, tl_trailer_info *info,
                                  tl_type_sink sink, void *ctx, const char **why);

#endif
