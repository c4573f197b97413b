/*
 * Event chunks (format-spec/ptl-format.md section 6): events stored in
 * columns, compressed with zstd as one independent frame (or stored raw when
 * that is smaller). Pure encoding and decoding; no I/O.
 */
#ifndef TRACELOG_CHUNK_H
#define TRACELOG_CHUNK_H

#include <zstd.h>

#include "common/buf.h"
#include "tracelog/common.h"

#define TL_CHUNK_HEADER_SIZE 32
#define TL_CHUNK_COLUMNS 6 /* columns with a length in the column table */
#define TL_CHUNK_TABLE_SIZE (4 * TL_CHUNK_COLUMNS)
#define TL_CODEC_NONE 0
#define TL_CODEC_ZSTD 1

/* Record flag bits (one byte per event). */
#define TL_REC_PID 0x01   /* pid differs from the previous event's: a pid follows */
#define TL_REC_TID 0x02   /* thread id differs: a tid follows */
#define TL_REC_ADDR 0x04  /* address differs: an address delta follows */
#define TL_REC_TRUNC_SHIFT 3
#define TL_REC_TRUNC_MASK 0x18
#define TL_REC_KNOWN 0x1f

typedef struct tl_chunk_header {
    uint64_t min_ts, max_ts;
    uint32_t event_count;
    uint32_t raw_size;
    uint8_t codec;
} tl_chunk_header;

/* Builds one chunk from events appended one by one. */
typedef struct tl_chunk_builder {
    tl_buf flags, ts, ids, pids, tids, addrs, lens, data;
    uint32_t count;
    uint64_t min_ts, max_ts, prev_ts, first_ts;
    uint32_t prev_pid;
    uint64_t prev_tid, prev_addr;
    tl_buf scratch; /* the assembled body, before compression */
} tl_chunk_builder;

void tl_chunk_builder_reset(tl_chunk_builder *b);
void tl_chunk_builder_free(tl_chunk_builder *b);
/* Appends one event. Returns TRACELOG_E_NOMEM or TRACELOG_E_INVAL (bad truncation value). */
tracelog_status tl_chunk_add(tl_chunk_builder *b, const tracelog_event *ev);
/* Uncompressed body size of the chunk built so far. */
size_t tl_chunk_raw_size(const tl_chunk_builder *b);
/* Bytes event ev would add at most to the body. */
size_t tl_chunk_event_bound(const tracelog_event *ev);

/*
 * Writes the chunk payload (chunk header + stored body) to out (replacing its
 * content). level <= 0 stores the body raw; otherwise zstd at that level, kept
 * only if smaller. cctx may be NULL when level <= 0.
 */
tracelog_status tl_chunk_finish(tl_chunk_builder *b, ZSTD_CCtx *cctx, int level,
                                      tl_buf *out);

/* Decodes the 32-byte chunk header and checks its fields. 0 or -1. */
int tl_chunk_header_decode(const uint8_t *payload, size_t len, tl_chunk_header *h);

/*
 * Reading a chunk one event at a time: no memory beyond the decompressed
 * body, whatever the event count claims.
 */
typedef struct tl_chunk_cursor {
    tl_chunk_header h;
    const uint8_t *flags;
    const uint8_t *col[7], *end[7]; /* the six varint columns, then the payload bytes */
    uint32_t index;
    uint64_t ts, tid, addr;
    uint32_t pid;
} tl_chunk_cursor;

/*
 * Checks the chunk header, decompresses the body into raw (when compressed;
 * the declared size is checked against max_raw before anything is
 * allocated) and positions c before the first event. c points into payload
 * or raw, which must outlive it. TRACELOG_E_CORRUPT (reason in *why),
 * TRACELOG_E_LIMIT or TRACELOG_E_NOMEM.
 */
tracelog_status tl_chunk_open(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx, uint32_t max_raw,
                                    tl_buf *raw, tl_chunk_cursor *c, const char **why);

/*
 * Next event (its payload points into the chunk). TRACELOG_END after the
 * last one, once every column is checked to be exactly consumed;
 * TRACELOG_E_CORRUPT with *why otherwise.
 */
tracelog_status tl_chunk_next(tl_chunk_cursor *c, tracelog_event *ev, const char **why);

/* A whole chunk decoded into an array (tests and benchmarks). Reused from chunk to chunk. */
typedef struct tl_chunk_events {
    tl_buf raw;
    tracelog_event *events;
    size_t cap;
    uint32_t count;
} tl_chunk_events;

/*
 * Decodes a whole chunk payload into out. The declared uncompressed size is
 * checked against max_raw before anything is allocated. Every failure is
 * TRACELOG_E_CORRUPT (with a reason in *why) or TRACELOG_E_NOMEM / TRACELOG_E_LIMIT.
 */
tracelog_status tl_chunk_decode(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx,
                                      uint32_t max_raw, tl_chunk_events *out, const char **why);

void tl_chunk_events_free(tl_chunk_events *ce);

#endif
