/*
 * CBOR payloads of METADATA and STATUS blocks (format-spec/ptl-format.md
 * sections 5.2 and 5.4; EVENT_TYPES: format/event_types.h, TRAILER:
 * format/trailer.h). Pure encoding/decoding; no I/O.
 * Encoders append to `out`. Decoders ignore unknown keys (later minor
 * versions may add keys) and set *why on TRACELOG_E_CORRUPT.
 */
#ifndef TRACELOG_META_H
#define TRACELOG_META_H

#include "common/buf.h"
#include "format/cbor_io.h"
#include "tracelog/log.h"

tracelog_status tl_meta_encode(const tracelog_metadata *m, tl_buf *out);
/* default_log_policy: what a missing "log_full_policy" key means (the layout's policy, spec 5.2). */
tracelog_status tl_meta_decode(const uint8_t *p, size_t len, tracelog_policy default_log_policy,
                               tracelog_metadata *m, const char **why);

tracelog_status tl_status_encode(const tracelog_log_status *st, tl_buf *out);
tracelog_status tl_status_decode(tl_cbor_in *in, tracelog_log_status *st, const char **why);

#endif
