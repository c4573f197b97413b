/*
 * Reading the keyed chunk body of format 1.1 (format-spec/ptl-format.md
 * 6.8). Opening a chunk checks its whole structure (body header, key table,
 * areas) and rebuilds the payloads stored as planes; then each event is a
 * key lookup and a timestamp (tl_chunk_next in chunk.h), with the checks
 * that belong to one event.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "format/chunk.h"
#include "format/planes.h"

/* A constant plane's deltas, and the columns past a payload's last byte. */
static const uint8_t zeros[16];

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)

tracelog_status tl_keyed_bad(tl_chunk_cursor *c, const char *reason, const char **why)
{
    (void)c;
    *why = reason;
    return TRACELOG_E_CORRUPT;
}

tracelog_status tl_keyed_end(tl_chunk_cursor *c, const char **why)
{
    /* The key counts add up to event_count and each event took one from its
       key's count: every count is now zero, every payload area consumed. */
    (void)c;
    (void)why;
    return TRACELOG_END;
}

/* The body header and where the areas are (6.8.2). */
typedef struct keyed_layout {
    uint32_t nkeys;
    const uint8_t *keys, *keys_end;
    const uint8_t *payloads, *end;
} keyed_layout;

static tracelog_status locate(tl_chunk_cursor *c, const uint8_t *body, keyed_layout *l, const char **why)
{
    uint64_t n = c->h.event_count, size = c->h.raw_size;
    l->nkeys = tl_load32(body);
    uint64_t keys_len = tl_load32(body + 4);
    unsigned tw = body[8];
    for (int i = 9; i < TL_KEYED_HEADER_SIZE; i++)
        if (body[i])
            CORRUPT("reserved body header bytes set");
    if (l->nkeys == 0 || l->nkeys > TL_KEYS_MAX || l->nkeys > n)
        CORRUPT("bad key count");
    if (tw < 1 || tw > 8)
        CORRUPT("bad timestamp width");
    unsigned iw = l->nkeys > 256 ? 2 : 1;
    uint64_t fixed = TL_KEYED_HEADER_SIZE + keys_len + (iw + tw) * n;
    if (fixed > size)
        CORRUPT("body areas exceed the chunk");
    l->keys = body + TL_KEYED_HEADER_SIZE;
    l->keys_end = l->keys + keys_len;
    const uint8_t *p = l->keys_end;
    c->index_width = iw;
    c->ts_width = tw;
    c->idx[0] = p;
    c->idx[1] = p + (iw == 2 ? n : 0);
    p += iw * n;
    for (unsigned b = 0; b < 8; b++)
        c->tsp[b] = p + (b < tw ? b * n : 0);
    l->payloads = p + tw * n;
    l->end = body + size;
    return TRACELOG_OK;
}

static int get_u32(const uint8_t **p, const uint8_t *end, uint32_t *out)
{
    uint64_t v;
    if (tl_get_varint(p, end, &v) || v > UINT32_MAX)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* Parses the key table (6.8.3); *plane_bytes: the payload bytes stored as planes. */
static tracelog_status read_keys(tl_chunk_cursor *c, const keyed_layout *l, uint64_t *plane_bytes,
                                 const char **why)
{
    tl_key_read *keys = tl_grow(c->keys, &c->keys_cap, l->nkeys, sizeof *keys);
    if (!keys)
        return TRACELOG_E_NOMEM;
    c->keys = keys;
    const uint8_t *p = l->keys;
    uint64_t tid = 0, addr = 0, events = 0, v;
    *plane_bytes = 0;
    for (uint32_t i = 0; i < l->nkeys; i++) {
        tl_key_read *k = &c->keys[i];
        if (p == l->keys_end)
            CORRUPT("key table shorter than its keys");
        uint8_t f = *p++;
        if ((f & ~TL_KEY_KNOWN) || (f & TL_KEY_TRUNC_MASK) == TL_KEY_TRUNC_MASK)
            CORRUPT("bad key flags");
        if (get_u32(&p, l->keys_end, &k->id) || get_u32(&p, l->keys_end, &k->pid))
            CORRUPT("bad key id or pid");
        if (tl_get_varint(&p, l->keys_end, &v))
            CORRUPT("bad key thread id");
        tid += (uint64_t)tl_unzigzag(v);
        if (tl_get_varint(&p, l->keys_end, &v))
            CORRUPT("bad key address");
        addr += (uint64_t)tl_unzigzag(v);
        if (get_u32(&p, l->keys_end, &k->len) || get_u32(&p, l->keys_end, &k->left) || k->left == 0)
            CORRUPT("bad key payload length or count");
        k->tid = tid;
        k->addr = addr;
        k->trunc = f & TL_KEY_TRUNC_MASK;
        k->planes = (f & TL_KEY_PLANES) != 0;
        k->thread = NULL;
        k->thread_gen = 0;
        if (k->planes && (k->len == 0 || k->len > TL_PLANES_LEN_MAX))
            CORRUPT("planes key with a bad payload length");
        events += k->left;
        if (k->planes)
            *plane_bytes += (uint64_t)k->len * k->left;
    }
    if (p != l->keys_end)
        CORRUPT("key table longer than its keys");
    if (events != c->h.event_count)
        CORRUPT("key counts differ from the event count");
    return TRACELOG_OK;
}

/*
 * Rebuilds n rows of len bytes at out from their delta planes: plane b's
 * byte r is at src[b][r * step[b]] (step 0: a constant plane, all zero
 * deltas), prev holds row -1 (the constant planes' values, zeros elsewhere;
 * TL_PLANES_LEN_MAX + 1 bytes, zero past len). With SSE2, 16 rows at a time
 * in 16-byte columns, the last column narrower when len is not a multiple of
 * 16 (24-byte payloads are common): its rows are stored 16 bytes wide, and
 * the columns go right to left, so that the bytes a narrow store writes past
 * a row (into the next row, or up to 15 bytes past the last: out has room
 * for them) are rewritten after it.
 */
static void planes_to_rows(const uint8_t *const *src, const uint8_t *step, uint32_t n, uint32_t len,
                           uint8_t *prev, uint8_t *out)
{
    uint32_t r = 0;
#ifdef __SSE2__
    for (; r + 16 <= n; r += 16) {
        for (uint32_t cb = (len - 1) / 16 * 16;; cb -= 16) {
            uint32_t w = len - cb < 16 ? len - cb : 16;
            __m128i v[16];
            for (uint32_t j = 0; j < 16; j++)
                v[j] = _mm_loadu_si128((const __m128i *)(j < w ? src[cb + j] + (size_t)r * step[cb + j] : zeros));
            tl_transpose16(v);
            __m128i row = _mm_loadu_si128((const __m128i *)(prev + cb));
            for (int j = 0; j < 16; j++) {
                row = _mm_xor_si128(row, v[j]);
                _mm_storeu_si128((__m128i *)(out + (size_t)(r + j) * len + cb), row);
            }
            _mm_storeu_si128((__m128i *)(prev + cb), row);
            if (cb == 0)
                break;
        }
    }
#endif
    for (; r < n; r++) {
        uint8_t *row = out + (size_t)r * len;
        for (uint32_t b = 0; b < len; b++)
            row[b] = prev[b] ^= src[b][(size_t)r * step[b]];
    }
}

/* One planes key's group (6.8.5): checks it against the area and rebuilds its payloads. */
static tracelog_status read_key_planes(tl_key_read *k, const uint8_t **p, const uint8_t *end,
                                       uint8_t *out, const char **why)
{
    const uint8_t *src[TL_PLANES_LEN_MAX];
    uint8_t step[TL_PLANES_LEN_MAX], prev[TL_PLANES_LEN_MAX + 1] = {0};
    uint32_t len = k->len, bitmap_len = (len + 7) / 8;
    if ((size_t)(end - *p) < bitmap_len)
        CORRUPT("payload area shorter than its keys");
    const uint8_t *bitmap = *p, *q = *p + bitmap_len;
    if (len % 8 && bitmap[bitmap_len - 1] >> (len % 8))
        CORRUPT("plane bitmap bits past the payload length");
    for (uint32_t b = 0; b < len; b++) {
        int constant = bitmap[b / 8] >> (b % 8) & 1;
        size_t need = constant ? 1 : k->left;
        if ((size_t)(end - q) < need)
            CORRUPT("payload area shorter than its keys");
        prev[b] = constant ? *q : 0;
        src[b] = constant ? zeros : q;
        step[b] = constant ? 0 : 1;
        q += need;
    }
    planes_to_rows(src, step, k->left, len, prev, out);
    *p = q;
    return TRACELOG_OK;
}

tracelog_status tl_keyed_open(tl_chunk_cursor *c, const uint8_t *body, uint32_t max_raw, const char **why)
{
    keyed_layout l;
    uint64_t plane_bytes;
    tracelog_status st = locate(c, body, &l, why);
    if (st == TRACELOG_OK)
        st = read_keys(c, &l, &plane_bytes, why);
    if (st != TRACELOG_OK)
        return st;
    /* The body and the payloads rebuilt from it count together against the limit. */
    if (plane_bytes > max_raw - c->h.raw_size) {
        *why = "payloads rebuilt from planes exceed the reader's limit";
        return TRACELOG_E_LIMIT;
    }
    c->rebuilt.len = 0;
    if (tl_buf_reserve(&c->rebuilt, plane_bytes + 16)) /* planes_to_rows may store 15 bytes past the last row */
        return TRACELOG_E_NOMEM;
    const uint8_t *p = l.payloads;
    uint8_t *out = c->rebuilt.data;
    for (uint32_t i = 0; i < l.nkeys; i++) {
        tl_key_read *k = &c->keys[i];
        if (k->planes) {
            if ((st = read_key_planes(k, &p, l.end, out, why)) != TRACELOG_OK)
                return st;
            k->next = out;
            out += (size_t)k->len * k->left;
        } else {
            uint64_t group = (uint64_t)k->len * k->left;
            if (group > (uint64_t)(l.end - p))
                CORRUPT("payload area shorter than its keys");
            k->next = p;
            p += group;
        }
    }
    if (p != l.end)
        CORRUPT("payload area longer than its keys");
    c->nkeys = l.nkeys;
    c->rebuilt.len = plane_bytes; /* counted with raw_size against the limit (tl_chunk_decoded_size) */
    return TRACELOG_OK;
}
