/*
 * CBOR payloads of METADATA, EVENT_TYPES, STATUS and TRAILER blocks
 * (format-spec/ptl-format.md section 5). Pure encoding/decoding; no I/O.
 * Encoders append to `out`. Decoders ignore unknown keys (later minor
 * versions may add keys) and set *why on TRACELOG_E_CORRUPT.
 */
#ifndef TRACELOG_META_H
#define TRACELOG_META_H

#include "common/buf.h"
#include "format/cbor_io.h"
#include "tracelog/log.h"

typedef struct tl_type_entry {
    uint32_t id;
    const char *name; /* NUL-terminated */
} tl_type_entry;

tracelog_status tl_meta_encode(const tracelog_metadata *m, tl_buf *out);
tracelog_status tl_meta_decode(const uint8_t *p, size_t len, tracelog_metadata *m,
                                     const char **why);

tracelog_status tl_types_encode(const tl_type_entry *e, size_t n, tl_buf *out);

/* Called for each entry; a non-zero return stops decoding with that status. */
typedef tracelog_status (*tl_type_sink)(void *ctx, uint32_t id, const char *name, size_t len);
/* Decodes one event-type array item by item from in. */
tracelog_status tl_types_decode(tl_cbor_in *in, tl_type_sink sink, void *ctx,
                                      const char **why);

tracelog_status tl_status_encode(const tracelog_log_status *st, tl_buf *out);
tracelog_status tl_status_decode(tl_cbor_in *in, tracelog_log_status *st, const char **why);

#endif
