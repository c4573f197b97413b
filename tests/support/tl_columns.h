/* Making format 1.0 chunks (column bodies) for tests: see tl_columns.c. */
#ifndef TL_COLUMNS_H
#define TL_COLUMNS_H

#include "format/chunk.h"

/*
 * Writes the chunk payload (chunk header + stored body) of ev[0..n) with a
 * format 1.0 column body to out, as tracelog 0.1.0's writer did: zstd at
 * level when level > 0 and smaller, raw otherwise. TRACELOG_E_INVAL for no
 * events or a bad event, TRACELOG_E_NOMEM.
 */
tracelog_status tl_test_columns_chunk(const tracelog_event *ev, size_t n, ZSTD_CCtx *cctx, int level,
                                      tl_buf *out);

#endif
