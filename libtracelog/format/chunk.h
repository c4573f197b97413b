/*
 * Event chunks (format-spec/ptl-format.md section 6): a 32-byte chunk header
 * and a body, compressed with zstd as one independent frame (or stored raw
 * when that is smaller). Two body formats: the keyed body of format 1.1
 * (6.8), which the writer writes, and the column body of format 1.0 (6.3),
 * which the reader still reads. Pure encoding and decoding; no I/O.
 */
#ifndef TRACELOG_CHUNK_H
#define TRACELOG_CHUNK_H

#include <zstd.h>

#include "common/buf.h"
#include "common/bytes.h"
#include "tracelog/common.h"

#define TL_CHUNK_HEADER_SIZE 32
#define TL_CODEC_NONE 0
#define TL_CODEC_ZSTD 1
#define TL_BODY_COLUMNS 0 /* chunk header body_format: the format 1.0 column body (6.3) */
#define TL_BODY_KEYED 1   /* the format 1.1 keyed body (6.8) */
#define TL_CHUNK_FLAGS_OFFSET 26 /* chunk header byte: chunk_flags (format 1.1, 6.10) */
#define TL_CHUNK_MERGE_NEXT 0x01 /* chunk_flags: the next chunk is in the same merge set */

/* Format 1.0 column body. */
#define TL_COLUMNS_TABLE_SIZE 24 /* six u32 column lengths */
#define TL_REC_PID 0x01          /* record flags: pid differs from the previous event's */
#define TL_REC_TID 0x02          /* thread id differs */
#define TL_REC_ADDR 0x04         /* address differs: an address delta follows */
#define TL_REC_TRUNC_SHIFT 3
#define TL_REC_TRUNC_MASK 0x18
#define TL_REC_KNOWN 0x1f

/* Format 1.1 keyed body. */
#define TL_KEYED_HEADER_SIZE 16
#define TL_KEYS_MAX 65536        /* keys per chunk (a key index is 1 or 2 bytes) */
#define TL_KEY_TRUNC_MASK 0x03   /* key flags: truncation status */
#define TL_KEY_PLANES 0x04       /* payloads stored as XOR-delta byte planes */
#define TL_KEY_KNOWN 0x07
#define TL_PLANES_LEN_MAX 255    /* longest payload a planes key may have (format limit) */
#define TL_PLANES_WRITE_MAX 255  /* longest payload the writer stores as planes */
/* Largest key table entry: flags, id, pid, tid, address, length, count (6.8.3). */
#define TL_KEY_ENTRY_MAX (1 + 5 + 5 + TL_VARINT_MAX + TL_VARINT_MAX + 5 + 5)

/* Fixed body bytes counted against the writer's chunk limit. */
#define TL_CHUNK_TABLE_SIZE TL_KEYED_HEADER_SIZE

typedef struct tl_chunk_header {
    uint64_t min_ts, max_ts;
    uint32_t event_count;
    uint32_t raw_size;
    uint8_t codec;
    uint8_t body_format;
    uint8_t flags; /* chunk_flags as stored: readers look at TL_CHUNK_MERGE_NEXT only */
} tl_chunk_header;

/* ---- building a chunk (keyed body) ------------------------------------------- */

/* A distinct (id, pid, tid, address, truncation, payload length) of the chunk being built. */
typedef struct tl_key_build {
    uint64_t tid, addr;
    uint32_t id, pid;
    uint32_t len;
    uint32_t count;
    uint8_t trunc, planes;
    uint32_t order_pos; /* finish: where its next payload offset goes in order (grouped by key) */
} tl_key_build;

#define TL_RECENT_KEYS 32 /* a power of two */

/* Builds one chunk from events appended one by one. */
typedef struct tl_chunk_builder {
    uint32_t count;
    uint64_t min_ts, max_ts, prev_ts, first_ts;
    uint64_t max_zz;       /* largest zigzag timestamp delta after the first event */
    size_t fixed;          /* body bytes that do not depend on the index and ts widths (a bound) */
    tl_key_build *keys;
    uint32_t nkeys, keys_cap;
    uint32_t recent_key[TL_RECENT_KEYS]; /* by thread and event id: the key of its last event (if below nkeys) */
    uint64_t *slots;       /* key hash table: generation << 32 | key index + 1 */
    uint32_t slot_mask;
    uint32_t generation;
    uint64_t *ts;          /* per event */
    uint16_t *idx;
    uint32_t *off;         /* offset of each event's payload in pdata */
    uint32_t events_cap;
    tl_buf pdata;          /* the payloads, in event order */
    tl_buf scratch;        /* the assembled body, before compression */
    uint32_t *order;       /* finish: payload offsets grouped by key */
    size_t order_cap;
} tl_chunk_builder;

void tl_chunk_builder_reset(tl_chunk_builder *b);
void tl_chunk_builder_free(tl_chunk_builder *b);

/*
 * Appends one event. TRACELOG_E_INVAL (bad truncation value, payload NULL
 * with a length), TRACELOG_E_LIMIT (the chunk already has TL_KEYS_MAX keys
 * and this event needs a new one) or TRACELOG_E_NOMEM.
 */
tracelog_status tl_chunk_add(tl_chunk_builder *b, const tracelog_event *ev);

static inline unsigned tl_chunk_ts_width(uint64_t max_zz)
{
    return max_zz ? (unsigned)(71 - __builtin_clzll(max_zz)) / 8 : 1;
}

/* Body bytes of a new key for ev and of its payload, at most. */
static inline size_t tl_chunk_key_bound(const tracelog_event *ev)
{
    size_t bitmap = ev->payload_len <= TL_PLANES_WRITE_MAX ? (ev->payload_len + 7) / 8 : 0;
    return TL_KEY_ENTRY_MAX + bitmap + (size_t)ev->payload_len;
}

/* Bytes ev would take in a chunk of its own, at most, beyond TL_CHUNK_TABLE_SIZE. */
static inline size_t tl_chunk_event_bound(const tracelog_event *ev)
{
    return tl_chunk_key_bound(ev) + 2 + 8; /* + key index and timestamp */
}

/*
 * Whether the body stays within limit bytes once ev is added (a bound: it
 * assumes ev needs a new key). The writer finishes the chunk first when not.
 */
static inline int tl_chunk_fits(const tl_chunk_builder *b, const tracelog_event *ev, size_t limit)
{
    if (b->count == 0)
        return TL_CHUNK_TABLE_SIZE + tl_chunk_event_bound(ev) <= limit;
    if (b->nkeys >= TL_KEYS_MAX)
        return 0;
    size_t key = tl_chunk_key_bound(ev);
    if (b->fixed + key + (size_t)(b->count + 1) * (2 + 8) <= limit)
        return 1; /* fits even at the widest index and timestamps: most events, without the exact widths */
    uint64_t min = ev->timestamp_ns < b->min_ts ? ev->timestamp_ns : b->min_ts;
    uint64_t zz = tl_zigzag((int64_t)(ev->timestamp_ns - b->prev_ts));
    uint64_t first = tl_zigzag((int64_t)(b->first_ts - min));
    uint64_t mx = b->max_zz > zz ? b->max_zz : zz;
    mx = mx > first ? mx : first;
    size_t per_event = (b->nkeys >= 256 ? 2 : 1) + tl_chunk_ts_width(mx);
    return b->fixed + key + (size_t)(b->count + 1) * per_event <= limit;
}

/*
 * Writes the chunk payload (chunk header + stored body) to out (replacing its
 * content). level <= 0 stores the body raw; otherwise zstd at that level, kept
 * only if smaller. cctx may be NULL when level <= 0. TRACELOG_E_INVAL for an
 * empty chunk.
 */
tracelog_status tl_chunk_finish(tl_chunk_builder *b, ZSTD_CCtx *cctx, int level, tl_buf *out);

/* ---- reading a chunk ------------------------------------------------------------ */

/* Decodes the 32-byte chunk header and checks its fields (6.7). 0 or -1. */
int tl_chunk_header_decode(const uint8_t *payload, size_t len, tl_chunk_header *h);

/* One key of a keyed body being read. */
typedef struct tl_key_read {
    uint64_t tid, addr;
    uint32_t id, pid;
    uint32_t len, left;      /* payload length; events of this key not read yet */
    uint32_t trunc;
    uint32_t planes;         /* payloads stored as planes (rebuilt at open), else as rows */
    const uint8_t *next;     /* its next payload: in the body, or rebuilt from planes */
    /* the reader's, for the events of this key: their thread's definition as of the reader's
       generation thread_gen of its thread map (0, as a key is read: not looked up yet) */
    const void *thread;
    uint64_t thread_gen;
} tl_key_read;

/*
 * Reading a chunk one event at a time. Memory: the decompressed body, and
 * for keyed bodies the key table and the payloads rebuilt from planes (each
 * checked against the reader's limit before it is allocated). The buffers
 * are kept from chunk to chunk; tl_chunk_cursor_free releases them.
 */
typedef struct tl_chunk_cursor {
    tl_chunk_header h;
    uint32_t index;
    uint64_t ts;
    /* column body */
    const uint8_t *flags;
    const uint8_t *col[7], *end[7]; /* the six varint columns, then the payload bytes */
    uint64_t tid, addr;
    uint32_t pid;
    /* keyed body */
    tl_key_read *keys;
    tl_key_read *last_key;   /* the last event's (NULL: a column body) */
    uint32_t nkeys, index_width, ts_width;
    const uint8_t *idx[2];   /* key index planes (low byte, high byte) */
    const uint8_t *tsp[8];   /* timestamp planes */
    /* memory */
    tl_buf raw;              /* decompressed body */
    tl_buf rebuilt;          /* payloads rebuilt from planes (len: their bytes, once open) */
    size_t keys_cap;
} tl_chunk_cursor;

/*
 * Checks the chunk header, decompresses the body (when compressed; the
 * declared size is checked against max_raw before anything is allocated) and
 * positions c before the first event. c points into payload or its own
 * buffers: payload must outlive the events. TRACELOG_E_CORRUPT (reason in
 * *why), TRACELOG_E_LIMIT or TRACELOG_E_NOMEM.
 */
tracelog_status tl_chunk_open(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx, uint32_t max_raw,
                              tl_chunk_cursor *c, const char **why);

void tl_chunk_cursor_free(tl_chunk_cursor *c);

/* Decoded bytes of an open chunk, what the reader's limit bounds (6.7): raw_size and the payloads rebuilt from planes. */
static inline uint64_t tl_chunk_decoded_size(const tl_chunk_cursor *c)
{
    return (uint64_t)c->h.raw_size + c->rebuilt.len;
}

tracelog_status tl_columns_next(tl_chunk_cursor *c, tracelog_event *ev, const char **why);
tracelog_status tl_keyed_end(tl_chunk_cursor *c, const char **why);
tracelog_status tl_keyed_bad(tl_chunk_cursor *c, const char *reason, const char **why);

static inline uint64_t tl_keyed_ts_delta(const tl_chunk_cursor *c, uint32_t i)
{
    uint64_t d = 0;
    for (uint32_t b = 0; b < c->ts_width; b++)
        d |= (uint64_t)c->tsp[b][i] << (8 * b);
    return d;
}

/*
 * Next event (its payload points into the chunk or the cursor's buffers).
 * TRACELOG_END after the last one, once the body is checked to be exactly
 * consumed; TRACELOG_E_CORRUPT with *why otherwise (the events before it
 * were good). Inline: a reader calls it once per event.
 */
static inline tracelog_status tl_chunk_next(tl_chunk_cursor *c, tracelog_event *ev, const char **why)
{
    if (c->h.body_format != TL_BODY_KEYED)
        return tl_columns_next(c, ev, why);
    uint32_t i = c->index;
    if (i == c->h.event_count)
        return tl_keyed_end(c, why);
    uint32_t k = c->idx[0][i];
    if (c->index_width == 2)
        k |= (uint32_t)c->idx[1][i] << 8;
    if (k >= c->nkeys)
        return tl_keyed_bad(c, "key index out of range", why);
    tl_key_read *key = &c->keys[k];
    c->last_key = key;
    if (key->left == 0)
        return tl_keyed_bad(c, "key used more often than its count", why);
    uint64_t ts = c->ts + (uint64_t)tl_unzigzag(tl_keyed_ts_delta(c, i));
    if (ts < c->h.min_ts || ts > c->h.max_ts)
        return tl_keyed_bad(c, "timestamp outside the chunk's range", why);
    key->left--;
    c->ts = ts;
    c->index = i + 1;
    const uint8_t *p = key->next;
    key->next = p + key->len;
    ev->timestamp_ns = ts;
    ev->event_id = key->id;
    ev->pid = key->pid;
    ev->tid = key->tid;
    ev->address = key->addr;
    ev->truncation = key->trunc;
    ev->payload_len = key->len;
    ev->payload = p;
    return TRACELOG_OK;
}

/* Opening a body once its bytes are in memory (chunk.c dispatches to these). */
tracelog_status tl_columns_open(tl_chunk_cursor *c, const uint8_t *body, const char **why);
tracelog_status tl_keyed_open(tl_chunk_cursor *c, const uint8_t *body, uint32_t max_raw,
                              const char **why);

/* A whole chunk decoded into an array (tests and benchmarks). Reused from chunk to chunk. */
typedef struct tl_chunk_events {
    tl_chunk_cursor cur;
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
