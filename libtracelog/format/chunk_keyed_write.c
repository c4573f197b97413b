/*
 * Writing the keyed chunk body of format 1.1 (format-spec/ptl-format.md
 * 6.8): each distinct (id, pid, tid, address, truncation, payload length)
 * becomes a key, each event a key index and a timestamp delta, and the
 * payloads are grouped by key: short binary ones as XOR-delta byte planes,
 * which zstd compresses smaller and faster than rows, the others as rows
 * (the measurements are in 6.9).
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/bytes.h"
#include "format/chunk.h"
#include "format/planes.h"

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void put_varint(uint8_t **o, uint64_t v) { *o += tl_put_varint(*o, v); }

void tl_chunk_builder_reset(tl_chunk_builder *b)
{
    b->count = 0;
    b->nkeys = 0;
    b->min_ts = UINT64_MAX;
    b->max_ts = 0;
    b->prev_ts = b->first_ts = 0;
    b->max_zz = 0;
    b->fixed = TL_KEYED_HEADER_SIZE;
    b->pdata.len = 0;
    /* A new generation empties the key hash table without touching it. */
    if (++b->generation == 0) {
        if (b->slots)
            memset(b->slots, 0, ((size_t)b->slot_mask + 1) * sizeof *b->slots);
        b->generation = 1;
    }
}

void tl_chunk_builder_free(tl_chunk_builder *b)
{
    free(b->keys);
    free(b->slots);
    free(b->ts);
    free(b->idx);
    free(b->off);
    free(b->order);
    tl_buf_free(&b->pdata);
    tl_buf_free(&b->scratch);
    memset(b, 0, sizeof *b);
}

/*
 * Whether a payload looks like text: no byte below 0x20 but tab, line feed,
 * vertical tab, form feed and carriage return, no DEL; NUL allowed only as
 * padding at the end. Binary records (integers, pointers) almost always
 * have such bytes; text compresses better as rows, where zstd finds its
 * repeated words, than as planes (6.9).
 */
static int looks_like_text(const uint8_t *p, uint32_t len)
{
    while (len && p[len - 1] == 0)
        len--;
    for (uint32_t i = 0; i < len; i++)
        if ((p[i] < 0x20 && (p[i] < 0x09 || p[i] > 0x0d)) || p[i] == 0x7f)
            return 0;
    return 1;
}

/* How the payloads of ev's key are stored: short binary payloads as planes, the rest as rows. */
static int wants_planes(const tracelog_event *ev)
{
    return ev->payload_len >= 1 && ev->payload_len <= TL_PLANES_WRITE_MAX &&
           !looks_like_text(ev->payload, ev->payload_len);
}

/* ---- keys -------------------------------------------------------------------------- */

static inline uint64_t key_hash(uint32_t id, uint32_t pid, uint64_t tid, uint64_t addr, uint32_t trunc,
                         uint32_t len)
{
    uint64_t h = (tid ^ ((uint64_t)pid << 32 | trunc)) * 0x9E3779B97F4A7C15ull;
    h = (h ^ addr ^ ((uint64_t)id << 32 | len)) * 0xff51afd7ed558ccdull;
    return h ^ (h >> 32);
}

static inline int key_is(const tl_key_build *k, const tracelog_event *ev)
{
    return k->id == ev->event_id && k->tid == ev->tid && k->addr == ev->address &&
           k->len == ev->payload_len && k->pid == ev->pid && k->trunc == ev->truncation;
}

static inline uint64_t *find_slot(tl_chunk_builder *b, uint64_t hash, const tracelog_event *ev)
{
    for (uint32_t i = (uint32_t)hash & b->slot_mask;; i = (i + 1) & b->slot_mask) {
        uint64_t *s = &b->slots[i];
        if ((uint32_t)(*s >> 32) != b->generation)
            return s; /* empty in this chunk */
        if (ev && key_is(&b->keys[(uint32_t)*s], ev))
            return s;
    }
}

/* Doubles the hash table and reinserts the keys. */
static int grow_slots(tl_chunk_builder *b)
{
    size_t size = b->slots ? 2 * ((size_t)b->slot_mask + 1) : 256;
    uint64_t *s = calloc(size, sizeof *s);
    if (!s)
        return -1;
    free(b->slots);
    b->slots = s;
    b->slot_mask = (uint32_t)(size - 1);
    for (uint32_t k = 0; k < b->nkeys; k++) {
        const tl_key_build *key = &b->keys[k];
        uint64_t h = key_hash(key->id, key->pid, key->tid, key->addr, key->trunc, key->len);
        *find_slot(b, h, NULL) = (uint64_t)b->generation << 32 | k;
    }
    return 0;
}

/* Index of ev's key, a new one if needed; -1 out of memory, -2 too many keys. */
static int64_t key_of(tl_chunk_builder *b, const tracelog_event *ev)
{
    /*
     * A thread's events of one type mostly have one key (one call site): found by a cheap hash of the
     * thread and the event id, threads and types interleaved or not, without the key's full hash.
     */
    uint64_t who = (ev->tid ^ ev->kernel_tid ^ (uint64_t)ev->event_id << 40) * 0x9E3779B97F4A7C15ull;
    uint32_t *recent = &b->recent_key[who >> (64 - __builtin_ctz(TL_RECENT_KEYS))];
    if (*recent < b->nkeys && key_is(&b->keys[*recent], ev))
        return *recent;
    if (!b->slots && grow_slots(b))
        return -1;
    uint64_t h = key_hash(ev->event_id, ev->pid, ev->tid, ev->address, ev->truncation, ev->payload_len);
    uint64_t *s = find_slot(b, h, ev);
    if ((uint32_t)(*s >> 32) == b->generation)
        return *recent = (uint32_t)*s;
    if (b->nkeys == TL_KEYS_MAX)
        return -2;
    if (b->nkeys == b->keys_cap) {
        uint32_t cap = b->keys_cap ? 2 * b->keys_cap : 64;
        tl_key_build *k = realloc(b->keys, cap * sizeof *k);
        if (!k)
            return -1;
        b->keys = k;
        b->keys_cap = cap;
    }
    int planes = wants_planes(ev);
    if (4 * ((size_t)b->nkeys + 1) > (size_t)b->slot_mask + 1) { /* at most a quarter full */
        if (grow_slots(b))
            return -1;
        s = find_slot(b, h, ev);
    }
    uint32_t k = b->nkeys++;
    tl_key_build *key = &b->keys[k];
    const tl_key_build *prev = k ? &b->keys[k - 1] : NULL;
    *key = (tl_key_build){.tid = ev->tid, .addr = ev->address, .id = ev->event_id, .pid = ev->pid,
                          .len = ev->payload_len, .trunc = (uint8_t)ev->truncation,
                          .planes = (uint8_t)planes};
    *s = (uint64_t)b->generation << 32 | k;
    *recent = k;
    /* Its table entry (the count at its longest) and plane bitmap count against the limit. */
    b->fixed += 1 + varint_len(key->id) + varint_len(key->pid) +
                varint_len(tl_zigzag((int64_t)(key->tid - (prev ? prev->tid : 0)))) +
                varint_len(tl_zigzag((int64_t)(key->addr - (prev ? prev->addr : 0)))) +
                varint_len(key->len) + 5 + (key->planes ? (key->len + 7) / 8 : 0);
    return k;
}

/* ---- appending -------------------------------------------------------------------- */

static int grow_events(tl_chunk_builder *b)
{
    uint32_t cap = b->events_cap ? 2 * b->events_cap : 1024;
    uint64_t *ts = realloc(b->ts, cap * sizeof *ts);
    if (ts)
        b->ts = ts;
    uint16_t *idx = realloc(b->idx, cap * sizeof *idx);
    if (idx)
        b->idx = idx;
    uint32_t *off = realloc(b->off, cap * sizeof *off);
    if (off)
        b->off = off;
    if (!ts || !idx || !off)
        return -1;
    b->events_cap = cap;
    return 0;
}

/* Stores ev's payload (room was reserved). */
static void add_payload(tl_chunk_builder *b, const tracelog_event *ev)
{
    uint32_t len = ev->payload_len;
    if (len) /* (pdata may not be allocated yet when len is 0) */
        tl_copy_payload(b->pdata.data + b->pdata.len, ev->payload, len);
    b->off[b->count] = (uint32_t)b->pdata.len;
    b->pdata.len += len;
}

tracelog_status tl_chunk_add(tl_chunk_builder *b, const tracelog_event *ev)
{
    uint32_t len = ev->payload_len;
    if (ev->truncation > TRACELOG_TRUNC_READ || (len && !ev->payload))
        return TRACELOG_E_INVAL;
    if (b->count == UINT32_MAX || b->pdata.len > UINT32_MAX - len)
        return TRACELOG_E_LIMIT;
    /* Everything that can fail comes before the builder changes. */
    if ((b->count == b->events_cap && grow_events(b)) || tl_buf_reserve(&b->pdata, len))
        return TRACELOG_E_NOMEM;
    int64_t k = key_of(b, ev);
    if (k < 0)
        return k == -2 ? TRACELOG_E_LIMIT : TRACELOG_E_NOMEM;
    tl_key_build *key = &b->keys[k];
    add_payload(b, ev);
    uint64_t ts = ev->timestamp_ns;
    if (b->count == 0) {
        b->first_ts = b->min_ts = b->max_ts = ts;
    } else {
        uint64_t zz = tl_zigzag((int64_t)(ts - b->prev_ts));
        b->max_zz = zz > b->max_zz ? zz : b->max_zz;
        b->min_ts = ts < b->min_ts ? ts : b->min_ts;
        b->max_ts = ts > b->max_ts ? ts : b->max_ts;
    }
    b->prev_ts = ts;
    b->ts[b->count] = ts;
    b->idx[b->count] = (uint16_t)k;
    b->count++;
    key->count++;
    b->fixed += len;
    return TRACELOG_OK;
}

/* ---- finishing --------------------------------------------------------------------- */

/*
 * Writes n rows (at base + off[r], len bytes each) as XOR deltas against
 * the previous row (the first against zeros), transposed: delta byte b of
 * row r goes to start[b][r * step[b]] (step 0: a constant plane, whose
 * deltas are all zero, goes to a scratch place).
 */
static void rows_to_planes(const uint8_t *base, const uint32_t *off, uint32_t n, uint32_t len,
                           uint8_t *const *start, const uint8_t *step)
{
    uint32_t r = 0;
#ifdef __SSE2__
    if (len % 16 == 0) {
        for (; r + 16 <= n; r += 16) {
            for (uint32_t cb = 0; cb < len; cb += 16) {
                __m128i v[16];
                __m128i prev = r ? _mm_loadu_si128((const __m128i *)(base + off[r - 1] + cb))
                                 : _mm_setzero_si128();
                for (int j = 0; j < 16; j++) {
                    __m128i cur = _mm_loadu_si128((const __m128i *)(base + off[r + j] + cb));
                    v[j] = _mm_xor_si128(cur, prev);
                    prev = cur;
                }
                tl_transpose16(v);
                for (int j = 0; j < 16; j++)
                    _mm_storeu_si128((__m128i *)(start[cb + j] + (size_t)r * step[cb + j]), v[j]);
            }
        }
    }
#endif
    for (; r < n; r++) {
        const uint8_t *row = base + off[r];
        const uint8_t *prev = r ? base + off[r - 1] : NULL;
        for (uint32_t b = 0; b < len; b++)
            start[b][(size_t)r * step[b]] = (uint8_t)(row[b] ^ (prev ? prev[b] : 0));
    }
}

/*
 * Which bytes of n payloads of len bytes (at base + off[r]) ever differ from
 * the payload before: non-zero in varies where they do. Once per chunk, at
 * its end, rather than per event: a word at a time, held in a register.
 */
static void changed_bytes(const uint8_t *base, const uint32_t *off, uint32_t n, uint32_t len, uint8_t *varies)
{
    uint32_t j = 0;
    for (; j + 8 <= len; j += 8) {
        uint64_t acc = 0, prev, cur;
        memcpy(&prev, base + off[0] + j, 8);
        for (uint32_t r = 1; r < n; r++) {
            memcpy(&cur, base + off[r] + j, 8);
            acc |= cur ^ prev;
            prev = cur;
        }
        memcpy(varies + j, &acc, 8);
    }
    for (; j < len; j++) {
        uint8_t acc = 0;
        for (uint32_t r = 1; r < n; r++)
            acc |= (uint8_t)(base[off[r] + j] ^ base[off[r - 1] + j]);
        varies[j] = acc;
    }
}

/* A planes key's group: its constant-plane bitmap, then its planes (6.8.5). */
static uint8_t *write_planes_group(const tl_chunk_builder *b, const tl_key_build *key,
                                   const uint32_t *off, uint8_t *o)
{
    uint8_t *start[TL_PLANES_WRITE_MAX], step[TL_PLANES_WRITE_MAX], varies[TL_PLANES_WRITE_MAX];
    uint8_t trash[16];
    const uint8_t *first = b->pdata.data + off[0];
    uint32_t len = key->len;
    changed_bytes(b->pdata.data, off, key->count, len, varies);
    uint8_t *bitmap = o;
    memset(bitmap, 0, (len + 7) / 8);
    o += (len + 7) / 8;
    for (uint32_t p = 0; p < len; p++) {
        if (varies[p] == 0) { /* every payload of the key has this byte: stored once */
            bitmap[p / 8] |= (uint8_t)(1u << (p % 8));
            *o++ = first[p];
            start[p] = trash;
            step[p] = 0;
        } else {
            start[p] = o;
            step[p] = 1;
            o += key->count;
        }
    }
    rows_to_planes(b->pdata.data, off, key->count, len, start, step);
    return o;
}

/* The payload area: one group per key, in key order, its payloads in event order. */
static tracelog_status write_payload_area(tl_chunk_builder *b, uint8_t **o)
{
    uint32_t *order = tl_grow(b->order, &b->order_cap, b->count, sizeof *order);
    if (!order)
        return TRACELOG_E_NOMEM;
    b->order = order;
    /* Group the payload offsets by key (a counting sort). */
    uint32_t pos = 0;
    for (uint32_t k = 0; k < b->nkeys; k++) {
        tl_key_build *key = &b->keys[k];
        key->order_pos = pos;
        pos += key->count;
    }
    for (uint32_t i = 0; i < b->count; i++)
        b->order[b->keys[b->idx[i]].order_pos++] = b->off[i];
    for (uint32_t k = 0; k < b->nkeys; k++) {
        const tl_key_build *key = &b->keys[k];
        const uint32_t *off = b->order + key->order_pos - key->count;
        if (key->planes) {
            *o = write_planes_group(b, key, off, *o);
        } else if (key->len) {
            for (uint32_t r = 0; r < key->count; r++, *o += key->len)
                memcpy(*o, b->pdata.data + off[r], key->len);
        }
    }
    return TRACELOG_OK;
}

static uint8_t *write_key_table(const tl_chunk_builder *b, uint8_t *o)
{
    uint64_t tid = 0, addr = 0;
    for (uint32_t k = 0; k < b->nkeys; k++) {
        const tl_key_build *key = &b->keys[k];
        *o++ = (uint8_t)(key->trunc | (key->planes ? TL_KEY_PLANES : 0));
        put_varint(&o, key->id);
        put_varint(&o, key->pid);
        put_varint(&o, tl_zigzag((int64_t)(key->tid - tid)));
        put_varint(&o, tl_zigzag((int64_t)(key->addr - addr)));
        put_varint(&o, key->len);
        put_varint(&o, key->count);
        tid = key->tid;
        addr = key->addr;
    }
    return o;
}

/* Key index planes, then timestamp delta planes (the first delta from min_ts). */
static uint8_t *write_event_planes(const tl_chunk_builder *b, unsigned iw, unsigned tw, uint8_t *o)
{
    uint32_t n = b->count;
    for (uint32_t i = 0; i < n; i++)
        o[i] = (uint8_t)b->idx[i];
    if (iw == 2)
        for (uint32_t i = 0; i < n; i++)
            o[n + i] = (uint8_t)(b->idx[i] >> 8);
    o += (size_t)iw * n;
    uint64_t prev = b->min_ts;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t d = tl_zigzag((int64_t)(b->ts[i] - prev));
        prev = b->ts[i];
        for (unsigned p = 0; p < tw; p++)
            o[(size_t)p * n + i] = (uint8_t)(d >> (8 * p));
    }
    return o + (size_t)tw * n;
}

/* Assembles the body into s after its first `at` bytes (s->len: where it ends). */
static tracelog_status assemble_body(tl_chunk_builder *b, tl_buf *s, size_t at)
{
    if (b->count == 0)
        return TRACELOG_E_INVAL;
    uint64_t first = tl_zigzag((int64_t)(b->first_ts - b->min_ts));
    unsigned tw = tl_chunk_ts_width(b->max_zz > first ? b->max_zz : first);
    unsigned iw = b->nkeys > 256 ? 2 : 1;
    uint64_t bound = b->fixed + (uint64_t)b->count * (iw + tw);
    if (bound > UINT32_MAX)
        return TRACELOG_E_LIMIT;
    s->len = 0;
    if (tl_buf_reserve(s, at + bound))
        return TRACELOG_E_NOMEM;
    uint8_t *body = s->data + at, *o = body;
    memset(o, 0, TL_KEYED_HEADER_SIZE);
    tl_store32(o, b->nkeys);
    o[8] = (uint8_t)tw;
    uint8_t *keys = o + TL_KEYED_HEADER_SIZE;
    o = write_key_table(b, keys);
    tl_store32(body + 4, (uint32_t)(o - keys));
    o = write_event_planes(b, iw, tw, o);
    tracelog_status st = write_payload_area(b, &o);
    if (st != TRACELOG_OK)
        return st;
    s->len = (size_t)(o - s->data);
    return TRACELOG_OK;
}

/*
 * Level 1, the default, is zstd's level 1 with a longer minimum match (7)
 * and a smaller hash table (2^12): keyed bodies are long runs and short
 * random planes, where short matches rarely pay; about 10 % less encoding
 * time for 1 % more bytes (spec 6.9).
 */
static size_t compress_body(ZSTD_CCtx *cctx, int level, void *dst, size_t cap, const void *src, size_t len)
{
    if (level == 1) {
        ZSTD_CCtx_reset(cctx, ZSTD_reset_parameters);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, 7);
        ZSTD_CCtx_setParameter(cctx, ZSTD_c_hashLog, 12);
        return ZSTD_compress2(cctx, dst, cap, src, len);
    }
    return ZSTD_compressCCtx(cctx, dst, cap, src, len, level);
}

/* The chunk header (6.7) at h, for a body of raw bytes stored with codec. */
static void put_chunk_header(const tl_chunk_builder *b, uint8_t *h, size_t raw, uint8_t codec)
{
    memset(h, 0, TL_CHUNK_HEADER_SIZE);
    tl_store64(h, b->min_ts);
    tl_store64(h + 8, b->max_ts);
    tl_store32(h + 16, b->count);
    tl_store32(h + 20, (uint32_t)raw);
    h[24] = codec;
    h[25] = TL_BODY_KEYED;
}

tracelog_status tl_chunk_finish(tl_chunk_builder *b, ZSTD_CCtx *cctx, int level, tl_buf *out)
{
    if (level <= 0 || !cctx) { /* stored: the body is assembled in place, after the header */
        tracelog_status st = assemble_body(b, out, TL_CHUNK_HEADER_SIZE);
        if (st == TRACELOG_OK)
            put_chunk_header(b, out->data, out->len - TL_CHUNK_HEADER_SIZE, TL_CODEC_NONE);
        return st;
    }
    tracelog_status st = assemble_body(b, &b->scratch, 0);
    if (st != TRACELOG_OK)
        return st;
    size_t raw = b->scratch.len;
    size_t bound = ZSTD_compressBound(raw);
    out->len = 0;
    if (tl_buf_reserve(out, TL_CHUNK_HEADER_SIZE + (bound > raw ? bound : raw)))
        return TRACELOG_E_NOMEM;
    uint8_t *h = out->data;
    size_t z = compress_body(cctx, level, h + TL_CHUNK_HEADER_SIZE, bound, b->scratch.data, raw);
    int packed = !ZSTD_isError(z) && z < raw;
    if (!packed) /* incompressible: stored */
        memcpy(h + TL_CHUNK_HEADER_SIZE, b->scratch.data, raw);
    put_chunk_header(b, h, raw, packed ? TL_CODEC_ZSTD : TL_CODEC_NONE);
    out->len = TL_CHUNK_HEADER_SIZE + (packed ? z : raw);
    return TRACELOG_OK;
}
