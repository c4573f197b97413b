/*
 * The keyed chunk body of format 1.1 (format-spec/ptl-format.md 6.8), in
 * memory: every field edge round-trips (timestamp widths and directions,
 * key counts and index widths, payload lengths on both sides of the planes
 * limit and of the 16-row blocks), the writer's size bound holds, damage to
 * one event delivers the events before it, every structural rule is
 * enforced on hand-made bodies, and no damaged or truncated body is read
 * out of bounds (the decoders get buffers of exactly their bytes: ASan).
 */
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "format/chunk.h"
#include "tl_test.h"

static ZSTD_CCtx *g_cctx;
static ZSTD_DCtx *g_dctx;

/* Builds the chunk of e[0..n) at level; dies when the builder refuses. */
static void build(const tracelog_event *e, size_t n, int level, tl_buf *out)
{
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    for (size_t i = 0; i < n; i++)
        if (tl_chunk_add(&b, &e[i]) != TRACELOG_OK)
            TL_DIE("tl_chunk_add refused event %zu", i);
    out->len = 0;
    if (tl_chunk_finish(&b, g_cctx, level, out) != TRACELOG_OK)
        TL_DIE("tl_chunk_finish failed");
    tl_chunk_builder_free(&b);
}

/* Decoded events of one chunk: status, the events delivered before it, copies of their payloads. */
typedef struct decoded {
    tracelog_status open, end; /* end: TRACELOG_END or the error that stopped the events */
    tl_test_events ev;
    const char *why;
} decoded;

/* Decodes an exact-size copy of payload[0..len) event by event, as the reader does. */
static void decode(const uint8_t *payload, size_t len, uint32_t max_raw, decoded *d)
{
    memset(d, 0, sizeof *d);
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        TL_DIE("out of memory");
    memcpy(copy, payload, len);
    tl_chunk_cursor c;
    memset(&c, 0, sizeof c);
    d->why = "";
    d->open = tl_chunk_open(copy, len, g_dctx, max_raw, &c, &d->why);
    d->end = d->open;
    if (d->open == TRACELOG_OK) {
        tracelog_event ev;
        while ((d->end = tl_chunk_next(&c, &ev, &d->why)) == TRACELOG_OK)
            tl_test_events_push(&d->ev, &ev); /* copies the payload: the chunk is freed below */
    }
    if (d->end != TRACELOG_OK && d->end != TRACELOG_END)
        CHECK(d->why && d->why[0]); /* every refusal says why */
    tl_chunk_cursor_free(&c);
    free(copy);
}

static void decoded_free(decoded *d) { tl_test_events_free(&d->ev); }

/* Round trip at level 0 and 1: every event back, exactly, and the chunk says keyed. */
static void roundtrip(const tracelog_event *e, size_t n)
{
    for (int level = 0; level <= 1; level++) {
        tl_buf out = {0};
        build(e, n, level, &out);
        CHECK_EQ(out.data[25], TL_BODY_KEYED);
        decoded d;
        decode(out.data, out.len, UINT32_MAX, &d);
        CHECK_STATUS(d.end, TRACELOG_END);
        CHECK_EVENTS_EQ(d.ev.ev, d.ev.n, e, n);
        decoded_free(&d);
        tl_buf_free(&out);
    }
}

/* The raw body of a chunk built at level 0 (after the 32-byte chunk header). */
static const uint8_t *body_of(const tl_buf *chunk) { return chunk->data + TL_CHUNK_HEADER_SIZE; }

/* ---- round trips ------------------------------------------------------------------- */

static void test_timestamp_widths(void)
{
    /* Deltas that need each width from 1 to 8 bytes, up and down, and equal timestamps. */
    for (unsigned w = 1; w <= 8; w++) {
        tl_test_context("width %u", w);
        uint64_t step = w == 1 ? 3 : (1ull << (8 * (w - 1) - 1)) + 5; /* zigzag(step) needs w bytes */
        tracelog_event e[6];
        uint64_t ts[6] = {1000, 1000, 1000 + step, 1000, 1000 + step / 2, 1000 + step / 2};
        for (int i = 0; i < 6; i++)
            e[i] = (tracelog_event){.timestamp_ns = ts[i], .event_id = 7, .pid = 1, .tid = 2};
        tl_buf out = {0};
        build(e, 6, 0, &out);
        CHECK_EQ(body_of(&out)[8], w);
        tl_buf_free(&out);
        roundtrip(e, 6);
    }
    tl_test_context(NULL);

    /* The first event is not the earliest: its delta from min_ts is the largest. */
    tracelog_event e[3] = {{.timestamp_ns = 1ull << 62}, {.timestamp_ns = 0}, {.timestamp_ns = 5}};
    tl_buf out = {0};
    build(e, 3, 0, &out);
    CHECK_EQ(body_of(&out)[8], 8);
    tl_buf_free(&out);
    roundtrip(e, 3);
}

/* n events over nkeys keys (tid and address vary), in a scrambled key order. */
static void key_events(tracelog_event *e, size_t n, uint32_t nkeys)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t k = (uint32_t)((i * 7919u) % nkeys);
        e[i] = (tracelog_event){.timestamp_ns = 1000 + i, .event_id = k % 5, .pid = 100 + k % 3,
                                .tid = 0x7f0000000000ull + (k % 11) * 0x801000ull,
                                .address = 0x400000ull + k * 64, .truncation = k % 3};
    }
}

static void test_key_counts(void)
{
    static const uint32_t counts[] = {1, 2, 255, 256, 257, 1000, TL_KEYS_MAX};
    for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
        uint32_t nkeys = counts[c];
        tl_test_context("%u keys", nkeys);
        size_t n = (size_t)nkeys + nkeys / 2 + 1;
        tracelog_event *e = calloc(n, sizeof *e);
        if (!e)
            TL_DIE("out of memory");
        key_events(e, n, nkeys);
        tl_buf out = {0};
        build(e, n, 0, &out);
        const uint8_t *body = body_of(&out);
        CHECK_EQ(tl_load32(body), nkeys);
        /* Key indexes take one byte each up to 256 keys, two beyond. */
        uint32_t keys_len = tl_load32(body + 4);
        size_t iw = nkeys > 256 ? 2 : 1;
        CHECK_EQ(tl_load32(out.data + 20), TL_KEYED_HEADER_SIZE + keys_len + (iw + body[8]) * n);
        tl_buf_free(&out);
        roundtrip(e, n);
        free(e);
    }
    tl_test_context(NULL);

    /* One key more than the format allows: the builder refuses it, and the writer's bound says so first. */
    size_t n = TL_KEYS_MAX + 1;
    tracelog_event *e = calloc(n, sizeof *e);
    if (!e)
        TL_DIE("out of memory");
    key_events(e, n, TL_KEYS_MAX + 1);
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    for (size_t i = 0; i < TL_KEYS_MAX; i++)
        tl_chunk_add(&b, &e[i]);
    CHECK_EQ(b.nkeys, TL_KEYS_MAX);
    CHECK(!tl_chunk_fits(&b, &e[TL_KEYS_MAX], UINT32_MAX));
    CHECK_STATUS(tl_chunk_add(&b, &e[TL_KEYS_MAX]), TRACELOG_E_LIMIT);
    CHECK_STATUS(tl_chunk_add(&b, &e[5]), TRACELOG_OK); /* a known key still goes in */
    tl_buf out = {0};
    CHECK_STATUS(tl_chunk_finish(&b, NULL, 0, &out), TRACELOG_OK);
    decoded d;
    decode(out.data, out.len, UINT32_MAX, &d);
    CHECK_STATUS(d.end, TRACELOG_END);
    CHECK_EQ(d.ev.n, TL_KEYS_MAX + 1);
    decoded_free(&d);
    tl_buf_free(&out);
    tl_chunk_builder_free(&b);
    free(e);
}

/* Payload byte j of the r-th payload of a key, by style: constant, counter-like, noise, text. */
static uint8_t payload_byte(int style, uint32_t r, uint32_t j)
{
    switch (style) {
    case 0:
        return (uint8_t)(j * 31 + 7);
    case 1:
        return j < 4 ? (uint8_t)((r * 3) >> (8 * j)) : (uint8_t)(j == 9 ? r % 5 : 0x5a);
    case 2: {
        uint64_t x = (r * 1000003ull + j) * 0x9E3779B97F4A7C15ull;
        return (uint8_t)(x >> 56);
    }
    default:
        return (uint8_t)('a' + (r + j) % 26);
    }
}

/* The reference writer's rule (6.8.6): binary payloads of 1..255 bytes as planes, text as rows. */
static int writer_uses_planes(const uint8_t *p, uint32_t len)
{
    if (len == 0 || len > TL_PLANES_WRITE_MAX)
        return 0;
    while (len && p[len - 1] == 0)
        len--;
    for (uint32_t i = 0; i < len; i++)
        if ((p[i] < 0x20 && !(p[i] >= '\t' && p[i] <= '\r')) || p[i] == 0x7f)
            return 1;
    return 0;
}

static void test_payload_lengths(void)
{
    /* Lengths on both sides of the planes limit and of the 16-byte blocks; counts on both sides
       of the 16-row blocks; two keys of each length interleaved with a row key. */
    static const uint32_t lens[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 100,
                                    240, 255, 256, 1000};
    static const uint32_t counts[] = {1, 2, 15, 16, 17, 33, 100};
    static uint8_t data[3 * 100 * 1000];
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++)
            for (int style = 0; style < 4; style++) {
                uint32_t len = lens[li], count = counts[ci];
                tl_test_context("length %u, %u payloads per key, style %d", len, count, style);
                tracelog_event e[300];
                size_t n = 0;
                for (uint32_t r = 0; r < count; r++)
                    for (uint32_t k = 0; k < 3; k++) {
                        uint32_t l = k == 2 ? 300 : len; /* key 2: a row key between them */
                        uint8_t *p = data + n * 1000;
                        for (uint32_t j = 0; j < l; j++)
                            p[j] = payload_byte(style, r + 50 * k, j);
                        e[n] = (tracelog_event){.timestamp_ns = 5000 + n, .event_id = k, .pid = 9,
                                                .tid = 1, .address = 0x1000, .payload_len = l,
                                                .payload = l ? p : NULL};
                        n++;
                    }
                roundtrip(e, n);
                tl_buf out = {0};
                build(e, n, 0, &out);
                /* The first key's flags follow the writer's rule for its first payload. */
                CHECK_EQ(body_of(&out)[TL_KEYED_HEADER_SIZE] & TL_KEY_PLANES,
                         writer_uses_planes(e[0].payload, len) ? TL_KEY_PLANES : 0);
                tl_buf_free(&out);
            }
    tl_test_context(NULL);
}

static void test_builder_reset(void)
{
    /* A builder reused after reset (and across the wrap of its key-table generation)
       does not see the keys of the chunk before. */
    tl_test_events l = {0};
    tl_test_gen_events(11, 0, 200, 40, &l);
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    for (int round = 0; round < 3; round++) {
        tl_test_context("round %d", round);
        if (round == 2)
            b.generation = UINT32_MAX; /* the next reset wraps to 0: the table is cleared */
        tl_chunk_builder_reset(&b);
        size_t first = (size_t)round * 50;
        for (size_t i = first; i < first + 100; i++)
            CHECK_STATUS(tl_chunk_add(&b, &l.ev[i]), TRACELOG_OK);
        tl_buf out = {0};
        CHECK_STATUS(tl_chunk_finish(&b, g_cctx, 1, &out), TRACELOG_OK);
        decoded d;
        decode(out.data, out.len, UINT32_MAX, &d);
        CHECK_EVENTS_EQ(d.ev.ev, d.ev.n, l.ev + first, 100);
        decoded_free(&d);
        tl_buf_free(&out);
    }
    tl_test_context(NULL);
    tl_buf out = {0};
    tl_chunk_builder_reset(&b);
    CHECK_STATUS(tl_chunk_finish(&b, NULL, 0, &out), TRACELOG_E_INVAL); /* no events */
    tl_buf_free(&out);
    tl_chunk_builder_free(&b);
    tl_test_events_free(&l);
}

static void test_fits_bound(void)
{
    /* Whatever the events, a chunk filled while tl_chunk_fits says yes stays within the limit. */
    static const uint32_t limits[] = {4096, 10000, 65536};
    for (size_t li = 0; li < sizeof limits / sizeof limits[0]; li++)
        for (uint64_t seed = 1; seed <= 6; seed++) {
            tl_test_context("limit %u, seed %llu", limits[li], (unsigned long long)seed);
            tl_test_events l = {0};
            tl_test_gen_events(seed, 0, 3000, seed % 2 ? 300 : 16, &l);
            tl_chunk_builder b;
            memset(&b, 0, sizeof b);
            tl_chunk_builder_reset(&b);
            size_t i = 0, chunks = 0;
            while (i < l.n) {
                while (i < l.n && tl_chunk_fits(&b, &l.ev[i], limits[li]))
                    CHECK_STATUS(tl_chunk_add(&b, &l.ev[i++]), TRACELOG_OK);
                tl_buf out = {0};
                CHECK_STATUS(tl_chunk_finish(&b, NULL, 0, &out), TRACELOG_OK);
                uint32_t raw = tl_load32(out.data + 20);
                CHECK(raw <= limits[li]);
                tl_buf_free(&out);
                tl_chunk_builder_reset(&b);
                chunks++;
            }
            CHECK(chunks > 1);
            tl_chunk_builder_free(&b);
            tl_test_events_free(&l);
        }
    tl_test_context(NULL);
}

/* ---- damage ----------------------------------------------------------------------------- */

/*
 * A raw (codec 0) keyed chunk of 40 generated events: 5 ns apart (one-byte
 * timestamp deltas), twelve keys that repeat, the first two without payload
 * (row keys), the others with 8-byte payloads (planes keys).
 */
static void damage_base(tl_test_events *l, tl_buf *out)
{
    memset(l, 0, sizeof *l);
    tl_test_gen_events(21, 0, 40, 24, l);
    for (size_t i = 0; i < l->n; i++) {
        tracelog_event *e = &l->ev[i];
        e->timestamp_ns = 1000 + 5 * i;
        e->event_id = (uint32_t)(i % 2);
        e->tid = 1 + i % 3;
        e->address = 0x400000 + (i % 2) * 16;
        e->pid = 77;
        e->truncation = 0;
        e->payload_len = i % 4 < 2 || e->payload_len < 8 ? 0 : 8;
    }
    build(l->ev, l->n, 0, out);
}

/* Offset (in the chunk payload) of the key index plane. */
static size_t index_plane(const tl_buf *chunk)
{
    return TL_CHUNK_HEADER_SIZE + TL_KEYED_HEADER_SIZE + tl_load32(body_of(chunk) + 4);
}

static void expect_prefix(const tl_buf *t, const tl_test_events *l, size_t good)
{
    decoded d;
    decode(t->data, t->len, UINT32_MAX, &d);
    CHECK_STATUS(d.open, TRACELOG_OK);
    CHECK_STATUS(d.end, TRACELOG_E_CORRUPT);
    CHECK_EVENTS_EQ(d.ev.ev, d.ev.n, l->ev, good);
    decoded_free(&d);
}

static void test_bad_event_prefix(void)
{
    /* Damage that makes event j invalid: events 0..j-1 are delivered intact, then the error. */
    tl_test_events l;
    tl_buf base = {0};
    damage_base(&l, &base);
    uint32_t nkeys = tl_load32(body_of(&base));
    size_t idx = index_plane(&base), n = l.n;
    CHECK(body_of(&base)[8] == 1 && nkeys < 256);
    for (size_t j = 0; j < n; j++) {
        tl_test_context("key index of event %zu out of range", j);
        tl_buf t = {0};
        tl_buf_append(&t, base.data, base.len);
        t.data[idx + j] = (uint8_t)nkeys;
        expect_prefix(&t, &l, j);

        tl_test_context("timestamp of event %zu outside the chunk's range", j);
        memcpy(t.data, base.data, base.len);
        /* A delta of -128 (zigzag 0xff) or +127 (0xfe), whichever leaves [min_ts, max_ts]. */
        uint64_t prev = j ? l.ev[j - 1].timestamp_ns : l.ev[0].timestamp_ns;
        t.data[idx + n + j] = prev < l.ev[0].timestamp_ns + 128 ? 0xff : 0xfe;
        expect_prefix(&t, &l, j);
        tl_buf_free(&t);
    }
    /* The first key's count one lower, the second's one higher (the total stays right): the
       events before the first key's excess use are delivered. Both are row keys without
       payload, so their areas keep their sizes. */
    tl_test_context("key count too low");
    tl_buf t = {0};
    tl_buf_append(&t, base.data, base.len);
    uint8_t *keys = t.data + TL_CHUNK_HEADER_SIZE + TL_KEYED_HEADER_SIZE;
    /* Each entry ends with its count varint (one byte here); find the first two entries' counts. */
    const uint8_t *p = keys, *end = keys + tl_load32(body_of(&base) + 4);
    uint8_t *count_at[2];
    for (int k = 0; k < 2; k++) {
        uint64_t v;
        p++;
        for (int f = 0; f < 6; f++)
            if (tl_get_varint(&p, end, &v))
                TL_DIE("bad key table");
        count_at[k] = (uint8_t *)p - 1;
    }
    CHECK(*count_at[0] > 1 && *count_at[0] < 0x80 && *count_at[1] < 0x7f);
    (*count_at[0])--;
    (*count_at[1])++;
    size_t last_use = 0, uses = 0; /* the event that uses key 0 once too often */
    for (size_t j = 0; j < n; j++)
        if (t.data[idx + j] == 0 && ++uses == *count_at[0] + 1u)
            last_use = j;
    expect_prefix(&t, &l, last_use);
    tl_buf_free(&t);
    tl_test_context(NULL);
    tl_buf_free(&base);
    tl_test_events_free(&l);
}

static void test_damage_sweep(void)
{
    /* Every bit of a raw chunk and every byte of a zstd chunk flipped, and every truncation of
       the raw body relabelled as a whole body: events or CORRUPT, never a read out of bounds. */
    tl_test_events l;
    tl_buf raw = {0}, z = {0};
    damage_base(&l, &raw);
    build(l.ev, l.n, 1, &z);
    CHECK_EQ(z.data[24], TL_CODEC_ZSTD);
    tl_buf t = {0};
    tl_buf_append(&t, raw.data, raw.len);
    for (size_t i = TL_CHUNK_HEADER_SIZE; i < raw.len; i++)
        for (int bit = 0; bit < 8; bit++) {
            tl_test_context("raw byte %zu bit %d", i, bit);
            memcpy(t.data, raw.data, raw.len);
            t.data[i] ^= (uint8_t)(1u << bit);
            decoded d;
            decode(t.data, t.len, UINT32_MAX, &d);
            CHECK(d.end == TRACELOG_END || d.end == TRACELOG_E_CORRUPT || d.end == TRACELOG_E_LIMIT);
            if (d.end == TRACELOG_END)
                CHECK_EQ(d.ev.n, l.n);
            decoded_free(&d);
        }
    tl_buf_free(&t);
    for (size_t i = TL_CHUNK_HEADER_SIZE; i < z.len; i++) {
        tl_test_context("zstd byte %zu", i);
        tl_buf_append(&t, z.data, z.len);
        t.data[i] ^= 0x5a;
        decoded d;
        decode(t.data, t.len, UINT32_MAX, &d);
        CHECK(d.end == TRACELOG_END || d.end == TRACELOG_E_CORRUPT);
        decoded_free(&d);
        tl_buf_free(&t);
    }
    for (size_t cut = 0; cut < raw.len - TL_CHUNK_HEADER_SIZE; cut++) {
        tl_test_context("body cut to %zu bytes", cut);
        tl_buf_append(&t, raw.data, TL_CHUNK_HEADER_SIZE + cut);
        tl_store32(t.data + 20, (uint32_t)cut);
        decoded d;
        decode(t.data, t.len, UINT32_MAX, &d);
        CHECK(d.open == TRACELOG_E_CORRUPT);
        decoded_free(&d);
        tl_buf_free(&t);
    }
    tl_test_context(NULL);
    tl_buf_free(&raw);
    tl_buf_free(&z);
    tl_test_events_free(&l);
}

/* ---- hand-made bodies: every structural rule of 6.8 ------------------------------------ */

/* A keyed body written field by field, so that each rule can be broken on its own. */
typedef struct craft {
    uint32_t nkeys, keys_len_delta;
    uint8_t tw, reserved;
    tl_buf keys, payloads; /* the key table and the payload area */
    uint32_t n;            /* event_count */
    uint8_t idx[16];       /* key index of each event */
    uint8_t delta[16];     /* one-byte timestamp deltas (tw = 1) */
} craft;

static void put_key(tl_buf *b, uint8_t flags, uint64_t id, uint64_t pid, uint64_t tid, uint64_t addr,
                    uint64_t len, uint64_t count)
{
    uint8_t tmp[1 + 6 * TL_VARINT_MAX], *o = tmp;
    *o++ = flags;
    uint64_t v[6] = {id, pid, tid, addr, len, count};
    for (int i = 0; i < 6; i++)
        o += tl_put_varint(o, v[i]);
    tl_buf_append(b, tmp, (size_t)(o - tmp));
}

/* The valid base: 3 events, a row key (2 events, 2-byte payloads "ab" "cd") and a planes key
   (1 event, 3-byte payload: plane 0 constant 'x', planes 1 and 2 varying). */
static void craft_base(craft *c)
{
    memset(c, 0, sizeof *c);
    c->nkeys = 2;
    c->tw = 1;
    c->n = 3;
    put_key(&c->keys, 1, 5, 42, tl_zigzag(7), tl_zigzag(0x1000), 2, 2);
    put_key(&c->keys, TL_KEY_PLANES, 6, 42, 0, tl_zigzag(16), 3, 1);
    uint8_t idx[] = {0, 1, 0}, delta[] = {0, 8, 4}; /* zigzag: +0, +4, +2 */
    memcpy(c->idx, idx, 3);
    memcpy(c->delta, delta, 3);
    /* Key 0's rows, then key 1's group: bitmap (plane 0 constant), its byte, planes 1 and 2. */
    uint8_t payloads[] = {'a', 'b', 'c', 'd', 0x01, 'x', 'y', 'z'};
    tl_buf_append(&c->payloads, payloads, sizeof payloads);
}

static void craft_free(craft *c)
{
    tl_buf_free(&c->keys);
    tl_buf_free(&c->payloads);
}

/* The chunk payload (header + raw body) of c. */
static void craft_chunk(const craft *c, tl_buf *out)
{
    uint8_t h[TL_CHUNK_HEADER_SIZE + TL_KEYED_HEADER_SIZE] = {0};
    uint32_t raw = (uint32_t)(TL_KEYED_HEADER_SIZE + c->keys.len + 2 * c->n + c->payloads.len);
    tl_store64(h, 100);
    tl_store64(h + 8, 106);
    tl_store32(h + 16, c->n);
    tl_store32(h + 20, raw);
    h[25] = TL_BODY_KEYED;
    uint8_t *b = h + TL_CHUNK_HEADER_SIZE;
    tl_store32(b, c->nkeys);
    tl_store32(b + 4, (uint32_t)c->keys.len + c->keys_len_delta);
    b[8] = c->tw;
    b[15] = c->reserved;
    out->len = 0;
    tl_buf_append(out, h, sizeof h);
    tl_buf_append(out, c->keys.data, c->keys.len);
    tl_buf_append(out, c->idx, c->n);
    tl_buf_append(out, c->delta, c->n);
    tl_buf_append(out, c->payloads.data, c->payloads.len);
}

static void test_crafted_base(void)
{
    /* The base decodes as the spec says: row payloads in event order, planes rebuilt. */
    craft c;
    craft_base(&c);
    tl_buf chunk = {0};
    craft_chunk(&c, &chunk);
    decoded d;
    decode(chunk.data, chunk.len, UINT32_MAX, &d);
    CHECK_STATUS(d.end, TRACELOG_END);
    if (CHECK_EQ(d.ev.n, 3)) {
        tracelog_event want[3] = {
            {.timestamp_ns = 100, .event_id = 5, .pid = 42, .tid = 7, .address = 0x1000,
             .truncation = 1, .payload_len = 2, .payload = "ab"},
            {.timestamp_ns = 104, .event_id = 6, .pid = 42, .tid = 7, .address = 0x1010,
             .truncation = 0, .payload_len = 3, .payload = "xyz"},
            {.timestamp_ns = 106, .event_id = 5, .pid = 42, .tid = 7, .address = 0x1000,
             .truncation = 1, .payload_len = 2, .payload = "cd"},
        };
        CHECK_EVENTS_EQ(d.ev.ev, d.ev.n, want, 3);
    }
    decoded_free(&d);
    tl_buf_free(&chunk);
    craft_free(&c);
}

typedef void (*breaker)(craft *c);

static void no_keys(craft *c) { c->nkeys = 0; }
static void more_keys_than_events(craft *c) { c->nkeys = 4; }
static void too_many_keys(craft *c) { c->nkeys = TL_KEYS_MAX + 1; }
static void ts_width_0(craft *c) { c->tw = 0; }
static void ts_width_9(craft *c) { c->tw = 9; }
static void reserved_set(craft *c) { c->reserved = 1; }
static void keys_len_past_body(craft *c) { c->keys_len_delta = 1000; }
static void key_table_long(craft *c) { tl_buf_append(&c->keys, "", 1); }
static void key_table_short(craft *c) { c->keys.len -= 1; }
static void key_flag_reserved(craft *c) { c->keys.data[0] |= 0x08; }
static void key_trunc_3(craft *c) { c->keys.data[0] |= 0x03; }
static void counts_exceed(craft *c) { c->keys.data[c->keys.len - 1] = 2; } /* planes key count 2: sum 4 */
static void bitmap_stray_bit(craft *c) { c->payloads.data[4] |= 0x10; }
static void payload_area_long(craft *c) { tl_buf_append(&c->payloads, "q", 1); }
static void payload_area_short(craft *c) { c->payloads.len -= 1; }
static void rows_group_short(craft *c) { c->payloads.len = 3; }

static void rebuild_keys(craft *c, uint8_t planes_flags, uint64_t planes_len, uint64_t count0,
                         uint64_t id)
{
    c->keys.len = 0;
    put_key(&c->keys, 1, id, 42, tl_zigzag(7), tl_zigzag(0x1000), 2, count0);
    put_key(&c->keys, planes_flags, 6, 42, 0, tl_zigzag(16), planes_len, 1);
}
static void count_zero(craft *c) { rebuild_keys(c, TL_KEY_PLANES, 3, 0, 5); }
static void id_too_big(craft *c) { rebuild_keys(c, TL_KEY_PLANES, 3, 2, 1ull << 32); }
static void planes_len_0(craft *c) { rebuild_keys(c, TL_KEY_PLANES, 0, 2, 5); }
static void planes_len_256(craft *c) { rebuild_keys(c, TL_KEY_PLANES, 256, 2, 5); }
static void overlong_varint(craft *c)
{
    c->keys.len = 0;
    uint8_t k[] = {1, 0x85, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    tl_buf_append(&c->keys, k, sizeof k); /* id: an 11-byte varint */
}

static void test_crafted_rejects(void)
{
    static const struct { const char *what; breaker f; } cases[] = {
        {"no keys", no_keys},
        {"more keys than events", more_keys_than_events},
        {"more keys than the format allows", too_many_keys},
        {"timestamp width 0", ts_width_0},
        {"timestamp width 9", ts_width_9},
        {"reserved body header byte", reserved_set},
        {"key table past the body", keys_len_past_body},
        {"key table longer than its keys", key_table_long},
        {"key table shorter than its keys", key_table_short},
        {"reserved key flag", key_flag_reserved},
        {"truncation 3", key_trunc_3},
        {"key counts above the event count", counts_exceed},
        {"key count 0", count_zero},
        {"event id above 2^32-1", id_too_big},
        {"planes key without payload", planes_len_0},
        {"planes key of 256 bytes", planes_len_256},
        {"11-byte varint", overlong_varint},
        {"bitmap bit past the payload length", bitmap_stray_bit},
        {"payload area longer than its keys", payload_area_long},
        {"payload area shorter than its keys (a plane cut)", payload_area_short},
        {"payload area shorter than its keys (a row cut)", rows_group_short},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_test_context("%s", cases[i].what);
        craft c;
        craft_base(&c);
        cases[i].f(&c);
        tl_buf chunk = {0};
        craft_chunk(&c, &chunk);
        decoded d;
        decode(chunk.data, chunk.len, UINT32_MAX, &d);
        CHECK_STATUS(d.open, TRACELOG_E_CORRUPT);
        CHECK_EQ(d.ev.n, 0);
        decoded_free(&d);
        tl_buf_free(&chunk);
        craft_free(&c);
    }
    tl_test_context(NULL);
}

static void test_rebuilt_limit(void)
{
    /* 200 events of one key whose 255 planes are all constant: a body of about 700 bytes that
       rebuilds 51,000 payload bytes. The body and those count together against the reader's
       limit, checked before anything is allocated for them. */
    tl_buf keys = {0}, chunk = {0};
    put_key(&keys, TL_KEY_PLANES, 1, 1, 0, 0, 255, 200);
    uint8_t group[32 + 255];
    memset(group, 0xff, 32);
    group[31] = 0x7f; /* 255 bitmap bits: every plane constant */
    memset(group + 32, 'k', 255);
    uint8_t h[TL_CHUNK_HEADER_SIZE + TL_KEYED_HEADER_SIZE] = {0};
    uint32_t raw = (uint32_t)(TL_KEYED_HEADER_SIZE + keys.len + 400 + sizeof group);
    tl_store64(h, 100);
    tl_store64(h + 8, 100);
    tl_store32(h + 16, 200);
    tl_store32(h + 20, raw);
    h[25] = TL_BODY_KEYED;
    tl_store32(h + 32, 1);
    tl_store32(h + 36, (uint32_t)keys.len);
    h[40] = 1;
    tl_buf_append(&chunk, h, sizeof h);
    tl_buf_append(&chunk, keys.data, keys.len);
    uint8_t zeros[400] = {0}; /* key indexes and timestamp deltas */
    tl_buf_append(&chunk, zeros, sizeof zeros);
    tl_buf_append(&chunk, group, sizeof group);
    decoded d;
    decode(chunk.data, chunk.len, raw + 255 * 200, &d);
    CHECK_STATUS(d.end, TRACELOG_END);
    if (CHECK_EQ(d.ev.n, 200))
        CHECK(d.ev.ev[199].payload_len == 255 && ((const uint8_t *)d.ev.ev[199].payload)[254] == 'k');
    decoded_free(&d);
    decode(chunk.data, chunk.len, raw + 255 * 200 - 1, &d);
    CHECK_STATUS(d.open, TRACELOG_E_LIMIT);
    decoded_free(&d);
    tl_buf_free(&chunk);
    tl_buf_free(&keys);
}

/* The chunk payloads of format-spec sections 13.7 and 13.8, byte for byte, both ways. */
static void test_spec_examples(void)
{
    static const uint8_t keyed_rows[] = {
        0xe8, 0x03, 0x2a, 0x36, 0xfe, 0x9c, 0x97, 0x17, 0xdc, 0x05, 0x2a, 0x36, 0xfe, 0x9c, 0x97, 0x17,
        0x03, 0x00, 0x00, 0x00, 0x36, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x03, 0x00, 0x00, 0x00, 0x18, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x01, 0x2a, 0x0e, 0x80, 0xc0, 0x80, 0x04, 0x02, 0x01, 0x00, 0x02, 0x2a, 0x00, 0x20, 0x03,
        0x01, 0x01, 0x02, 0x2a, 0x02, 0x00, 0x00, 0x01, 0x00, 0x01, 0x02, 0xe8, 0xe7, 0xf4, 0x03, 0x03,
        0x01, 0x68, 0x69, 0x61, 0x62, 0x63};
    static const uint8_t keyed_planes[] = {
        0x00, 0x00, 0x2a, 0x36, 0xfe, 0x9c, 0x97, 0x17, 0x14, 0x00, 0x2a, 0x36, 0xfe, 0x9c, 0x97, 0x17,
        0x03, 0x00, 0x00, 0x00, 0x27, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x01, 0x00, 0x00, 0x00, 0x0a, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x04, 0x03, 0x2a, 0x0e, 0xc0, 0xc0, 0x80, 0x04, 0x04, 0x03, 0x00, 0x00, 0x00, 0x00, 0x14, 0x14,
        0x0e, 0x01, 0x03, 0x07, 0x00, 0x00, 0x80};
    const uint64_t t0 = 1700000000000000000ull;
    tracelog_event rows[3] = {
        {.timestamp_ns = t0 + 1500, .event_id = 1, .pid = 42, .tid = 7, .address = 0x401000,
         .payload_len = 2, .payload = "hi"},
        {.timestamp_ns = t0 + 1000, .event_id = 2, .pid = 42, .tid = 7, .address = 0x401010,
         .payload_len = 3, .payload = "abc"},
        {.timestamp_ns = t0 + 1250, .event_id = 2, .pid = 42, .tid = 8, .address = 0x401010,
         .truncation = TRACELOG_TRUNC_RECORD},
    };
    static const uint8_t p[3][4] = {{0x01, 0, 0, 0x80}, {0x02, 0, 0, 0x80}, {0x05, 0, 0, 0x80}};
    tracelog_event planes[3];
    for (int i = 0; i < 3; i++)
        planes[i] = (tracelog_event){.timestamp_ns = t0 + 10 * (uint64_t)i, .event_id = 3, .pid = 42,
                                     .tid = 7, .address = 0x401020, .payload_len = 4, .payload = p[i]};
    struct { const char *what; const uint8_t *bytes; size_t len; const tracelog_event *e; } ex[] = {
        {"13.7", keyed_rows, sizeof keyed_rows, rows},
        {"13.8", keyed_planes, sizeof keyed_planes, planes},
    };
    for (size_t i = 0; i < 2; i++) {
        tl_test_context("spec %s", ex[i].what);
        tl_buf out = {0};
        build(ex[i].e, 3, 0, &out);
        if (CHECK_EQ(out.len, ex[i].len))
            CHECK_MEM_EQ(out.data, ex[i].bytes, ex[i].len);
        decoded d;
        decode(ex[i].bytes, ex[i].len, UINT32_MAX, &d);
        CHECK_STATUS(d.end, TRACELOG_END);
        CHECK_EVENTS_EQ(d.ev.ev, d.ev.n, ex[i].e, 3);
        decoded_free(&d);
        tl_buf_free(&out);
    }
    tl_test_context(NULL);
}

/*
 * The builder remembers each thread's last key (by kernel tid, in a few
 * slots): events that differ from it in any one key field, threads whose
 * tids share a slot, and a slot left over from the chunk before must each
 * get their own key, never the remembered one.
 */
static void test_recent_keys(void)
{
    static const uint8_t p4[4] = {1, 2, 3, 4}, p5[5] = {1, 2, 3, 4, 5};
    const tracelog_event base = {.event_id = 7, .pid = 9, .kernel_tid = 3, .tid = 0x100, .address = 0x1000,
                                 .payload_len = 4, .payload = p4};
    tracelog_event e[16];
    size_t n = 0;
    e[n++] = base;
    for (int field = 0; field < 6; field++) { /* one field differs from the key just used */
        tracelog_event v = base;
        switch (field) {
        case 0: v.event_id = 8; break;
        case 1: v.pid = 10; break;
        case 2: v.tid = 0x200; break;
        case 3: v.address = 0x2000; break;
        case 4: v.truncation = TRACELOG_TRUNC_RECORD; break;
        default: v.payload_len = 5, v.payload = p5; break;
        }
        e[n++] = v;
        e[n++] = base;
    }
    tracelog_event other = base; /* kernel tid 11 shares tid 3's slot */
    other.kernel_tid = 11;
    other.event_id = 9;
    e[n++] = other;
    e[n++] = base;
    for (size_t i = 0; i < n; i++)
        e[i].timestamp_ns = 1000 + i;
    roundtrip(e, n);
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    for (size_t i = 0; i < n; i++)
        CHECK_STATUS(tl_chunk_add(&b, &e[i]), TRACELOG_OK);
    CHECK_EQ(b.nkeys, 8); /* base, the six variants, the other thread's */
    /* The next chunk: its first key takes index 0, which the slot of tid 3 still names from before. */
    tl_chunk_builder_reset(&b);
    CHECK_STATUS(tl_chunk_add(&b, &other), TRACELOG_OK);
    CHECK_STATUS(tl_chunk_add(&b, &base), TRACELOG_OK);
    CHECK_EQ(b.nkeys, 2);
    tl_chunk_builder_free(&b);
}

int main(void)
{
    g_cctx = ZSTD_createCCtx();
    g_dctx = ZSTD_createDCtx();
    if (!g_cctx || !g_dctx)
        TL_DIE("out of memory");
    TL_TEST_RUN(test_timestamp_widths);
    TL_TEST_RUN(test_key_counts);
    TL_TEST_RUN(test_payload_lengths);
    TL_TEST_RUN(test_builder_reset);
    TL_TEST_RUN(test_recent_keys);
    TL_TEST_RUN(test_fits_bound);
    TL_TEST_RUN(test_bad_event_prefix);
    TL_TEST_RUN(test_damage_sweep);
    TL_TEST_RUN(test_crafted_base);
    TL_TEST_RUN(test_crafted_rejects);
    TL_TEST_RUN(test_rebuilt_limit);
    TL_TEST_RUN(test_spec_examples);
    ZSTD_freeCCtx(g_cctx);
    ZSTD_freeDCtx(g_dctx);
    return tl_test_finish();
}
