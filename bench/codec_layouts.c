/*
 * codec_layouts: the alternatives behind the keyed chunk body of format 1.1
 * (format-spec/ptl-format.md 6.8, justified in 6.9), measured. Each layout
 * below stores the same chunks of events (cut where the library's writer
 * cuts them: 128 KiB bodies); each body is compressed with zstd, and the
 * table gives the raw and stored bytes per event (stored: compressed body
 * plus the 64 bytes of block and chunk headers of each chunk) and the zstd
 * compression and decompression CPU time per event (best of --runs). The
 * cost of building each layout is not compared (these are plain loops, not
 * the library's): bench_codec measures the chosen one end to end.
 *
 * The event mixes: "codec" is bench_codec's (16-byte binary payloads, see
 * codec_workload.h); "struct64" and "struct128" are 64- and 128-byte records
 * of 8-byte counters, small values, pointers and constants; "text" is short
 * messages of varying length. Exit status 0, or 1 when a body does not
 * decompress to itself or the library's chunks do not read back.
 *
 *   codec_layouts [--events N] [--runs N] [--mix codec|struct64|struct128|text|all]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <time.h>
/* ZSTD_compressSequences (experimental, exported by the shared library): the entropy stage alone. */
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>
/* Its interface as of zstd 1.5 (Debian 12: 1.5.4); without it, its two rows are left out. */
#define HAVE_SEQUENCES (ZSTD_VERSION_NUMBER >= 10500)

#include "codec_workload.h"
#include "common/bytes.h"
#include "format/chunk.h"

enum { TS_VARINT, TS_PLANES };
enum {
    PAY_ROWS,          /* payloads in event order, as written */
    PAY_ROWS_KEY,      /* grouped by key */
    PAY_XROWS_KEY,     /* grouped by key, each XORed with the key's previous one */
    PAY_PLANES_KEY,    /* grouped by key, transposed into byte planes */
    PAY_XPLANES_KEY,   /* grouped by key, XOR deltas, byte planes */
    PAY_XPLANES_CONST, /* the same, a plane that does not change stored once (format 1.1) */
    PAY_XPLANES_EVENT, /* XOR deltas against the key's previous payload, planes in event order */
};

typedef struct layout {
    const char *name;
    int columns; /* the format 1.0 column body instead of a keyed one */
    int ts, pay;
} layout;

static const layout g_layouts[] = {
    {"1.0 column body (flags, varint columns, payload rows)", 1, 0, 0},
    {"keys, ts varints, payload rows", 0, TS_VARINT, PAY_ROWS},
    {"keys, ts planes, payload rows", 0, TS_PLANES, PAY_ROWS},
    {"keys, ts planes, rows grouped by key", 0, TS_PLANES, PAY_ROWS_KEY},
    {"keys, ts planes, XOR-delta rows by key", 0, TS_PLANES, PAY_XROWS_KEY},
    {"keys, ts planes, byte planes by key", 0, TS_PLANES, PAY_PLANES_KEY},
    {"keys, ts planes, XOR-delta planes by key", 0, TS_PLANES, PAY_XPLANES_KEY},
    {"keys, ts planes, XOR-delta planes, event order", 0, TS_PLANES, PAY_XPLANES_EVENT},
    {"keys, ts varints, XOR planes by key, constants once", 0, TS_VARINT, PAY_XPLANES_CONST},
    {"keys, ts planes, XOR planes by key, constants once", 0, TS_PLANES, PAY_XPLANES_CONST},
};
#define NLAYOUTS (sizeof g_layouts / sizeof g_layouts[0])

static int g_failed;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void put_varint(tl_buf *b, uint64_t v)
{
    if (tl_buf_reserve(b, TL_VARINT_MAX)) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
    b->len += tl_put_varint(b->data + b->len, v);
}

static void put_bytes(tl_buf *b, const void *p, size_t n)
{
    if (tl_buf_append(b, p, n)) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
}

/* ---- event mixes ---------------------------------------------------------------------- */

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The other mixes: same timing and threads as a simple process, other payloads. */
static void make_mix(workload *w, size_t n, const char *mix)
{
    static const char *const words[] = {"open", "read", "write", "close", "GET /index.html",
                                        "connection reset by peer", "user=alice", "retry",
                                        "timeout after 30s", "ok"};
    w->n = n;
    w->ev = malloc(n * sizeof *w->ev);
    w->payloads = malloc(n * 128);
    if (!w->ev || !w->payloads) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
    uint64_t s = 12345, ts = 1700000000000000000ull, seq[4] = {0};
    for (size_t i = 0; i < n; i++) {
        uint32_t t = (uint32_t)(xorshift(&s) % 4);
        uint8_t *p = w->payloads + i * 128;
        uint32_t len;
        ts += 50 + xorshift(&s) % 2000;
        if (!strcmp(mix, "text")) {
            len = (uint32_t)snprintf((char *)p, 128, "%s %s #%llu", words[xorshift(&s) % 10],
                                     words[xorshift(&s) % 10], (unsigned long long)(seq[t]++ % 1000));
        } else {
            len = !strcmp(mix, "struct64") ? 64 : 128;
            for (uint32_t f = 0; f < len / 8; f++) {
                uint64_t v = f % 4 == 0 ? seq[t]++
                           : f % 4 == 1 ? xorshift(&s) % 300
                           : f % 4 == 2 ? 0x55d0c4a00000ull + (xorshift(&s) % 64) * 64
                                        : f;
                memcpy(p + 8 * f, &v, 8);
            }
        }
        w->ev[i] = (tracelog_event){.timestamp_ns = ts, .event_id = 16 + t, .pid = 4242,
                                    .tid = 0x7f0000000000ull + (t % 3) * 0x801000ull,
                                    .address = 0x55d000001000ull + t * 0x40, .payload_len = len,
                                    .payload = p};
    }
}

/* ---- layouts ------------------------------------------------------------------------- */

/* The keys of a chunk, found by a linear probe table. */
typedef struct keyset {
    tracelog_event *key; /* first event of each key (its fields) */
    uint32_t n, cap;
    uint32_t *slot;      /* index + 1, 0: empty */
    uint32_t mask;
} keyset;

static int same_key(const tracelog_event *a, const tracelog_event *b)
{
    return a->event_id == b->event_id && a->pid == b->pid && a->tid == b->tid &&
           a->address == b->address && a->truncation == b->truncation && a->payload_len == b->payload_len;
}

static uint32_t key_index(keyset *k, const tracelog_event *e)
{
    uint64_t h = (e->tid ^ e->address ^ ((uint64_t)e->event_id << 32 | e->payload_len)) * 0x9E3779B97F4A7C15ull;
    uint32_t i = (uint32_t)(h >> 40) & k->mask;
    for (; k->slot[i]; i = (i + 1) & k->mask)
        if (same_key(&k->key[k->slot[i] - 1], e))
            return k->slot[i] - 1;
    k->key[k->n] = *e;
    k->slot[i] = ++k->n;
    return k->n - 1;
}

/* The 1.0 column body (format-spec 6.3). */
static void columns_body(const tracelog_event *e, size_t n, uint64_t min_ts, tl_buf *out)
{
    tl_buf col[6] = {{0}}, flags = {0};
    uint64_t ts = min_ts, tid = 0, addr = 0;
    uint32_t pid = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t f = (uint8_t)(e[i].truncation << TL_REC_TRUNC_SHIFT);
        if (e[i].pid != pid)
            f |= TL_REC_PID, put_varint(&col[2], pid = e[i].pid);
        if (e[i].tid != tid)
            f |= TL_REC_TID, put_varint(&col[3], tid = e[i].tid);
        if (e[i].address != addr)
            f |= TL_REC_ADDR, put_varint(&col[4], tl_zigzag((int64_t)(e[i].address - addr))), addr = e[i].address;
        put_varint(&col[0], tl_zigzag((int64_t)(e[i].timestamp_ns - ts)));
        ts = e[i].timestamp_ns;
        put_varint(&col[1], e[i].event_id);
        put_varint(&col[5], e[i].payload_len);
        put_bytes(&flags, &f, 1);
    }
    uint8_t table[TL_COLUMNS_TABLE_SIZE];
    for (int c = 0; c < 6; c++)
        tl_store32(table + 4 * c, (uint32_t)col[c].len);
    put_bytes(out, table, sizeof table);
    put_bytes(out, flags.data, flags.len);
    for (int c = 0; c < 6; c++) {
        put_bytes(out, col[c].data, col[c].len);
        tl_buf_free(&col[c]);
    }
    tl_buf_free(&flags);
    for (size_t i = 0; i < n; i++)
        put_bytes(out, e[i].payload, e[i].payload_len);
}

/* Payload byte b of event i as the layout stores it: itself, or XOR its key's previous payload. */
static uint8_t pay_byte(const tracelog_event *e, const int64_t *prev, size_t i, uint32_t b, int xor)
{
    uint8_t v = ((const uint8_t *)e[i].payload)[b];
    return xor && prev[i] >= 0 ? (uint8_t)(v ^ ((const uint8_t *)e[prev[i]].payload)[b]) : v;
}

static void payloads(const layout *l, const tracelog_event *e, size_t n, const keyset *k,
                     const uint32_t *idx, tl_buf *out)
{
    int xor = l->pay == PAY_XROWS_KEY || l->pay >= PAY_XPLANES_KEY;
    int64_t *prev = malloc(n * sizeof *prev), *last = malloc(k->n * sizeof *last);
    if (!prev || !last) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
    for (uint32_t j = 0; j < k->n; j++)
        last[j] = -1;
    for (size_t i = 0; i < n; i++) {
        prev[i] = last[idx[i]];
        last[idx[i]] = (int64_t)i;
    }
    if (l->pay == PAY_ROWS) {
        for (size_t i = 0; i < n; i++)
            put_bytes(out, e[i].payload, e[i].payload_len);
    } else if (l->pay == PAY_XPLANES_EVENT) { /* plane b: byte b of the payloads that have one */
        uint32_t longest = 0;
        for (size_t i = 0; i < n; i++)
            longest = e[i].payload_len > longest ? e[i].payload_len : longest;
        for (uint32_t b = 0; b < longest; b++)
            for (size_t i = 0; i < n; i++)
                if (e[i].payload_len > b) {
                    uint8_t v = pay_byte(e, prev, i, b, 1);
                    put_bytes(out, &v, 1);
                }
    } else {
        for (uint32_t j = 0; j < k->n; j++) {
            uint32_t len = k->key[j].payload_len;
            int planes = l->pay >= PAY_PLANES_KEY;
            for (uint32_t b = 0; b < (planes ? len : 1); b++) {
                int constant = l->pay == PAY_XPLANES_CONST;
                int64_t first = -1;
                for (size_t i = 0; i < n && constant; i++)
                    if (idx[i] == j) {
                        if (first >= 0 && ((const uint8_t *)e[i].payload)[b] != ((const uint8_t *)e[first].payload)[b])
                            constant = 0;
                        first = first < 0 ? (int64_t)i : first;
                    }
                if (constant) {
                    put_bytes(out, (const uint8_t *)e[first].payload + b, 1);
                    continue;
                }
                for (size_t i = 0; i < n; i++) {
                    if (idx[i] != j)
                        continue;
                    if (!planes) {
                        for (uint32_t c = 0; c < len; c++) {
                            uint8_t v = pay_byte(e, prev, i, c, xor);
                            put_bytes(out, &v, 1);
                        }
                    } else {
                        uint8_t v = pay_byte(e, prev, i, b, xor);
                        put_bytes(out, &v, 1);
                    }
                }
            }
        }
    }
    free(prev);
    free(last);
}

/* One chunk's body in layout l. */
static void make_body(const layout *l, const tracelog_event *e, size_t n, tl_buf *out)
{
    uint64_t min_ts = UINT64_MAX;
    for (size_t i = 0; i < n; i++)
        min_ts = e[i].timestamp_ns < min_ts ? e[i].timestamp_ns : min_ts;
    out->len = 0;
    if (l->columns) {
        columns_body(e, n, min_ts, out);
        return;
    }
    uint32_t cap = 1;
    while (cap < 4 * n)
        cap *= 2;
    keyset k = {malloc(n * sizeof *k.key), 0, (uint32_t)n, calloc(cap, sizeof *k.slot), cap - 1};
    uint32_t *idx = malloc(n * sizeof *idx);
    if (!k.key || !k.slot || !idx) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = key_index(&k, &e[i]);
    uint8_t head[TL_KEYED_HEADER_SIZE] = {0};
    put_bytes(out, head, sizeof head);
    uint64_t tid = 0, addr = 0;
    for (uint32_t j = 0; j < k.n; j++) {
        const tracelog_event *key = &k.key[j];
        uint8_t f = (uint8_t)key->truncation;
        put_bytes(out, &f, 1);
        put_varint(out, key->event_id);
        put_varint(out, key->pid);
        put_varint(out, tl_zigzag((int64_t)(key->tid - tid)));
        put_varint(out, tl_zigzag((int64_t)(key->address - addr)));
        put_varint(out, key->payload_len);
        put_varint(out, 1);
        tid = key->tid;
        addr = key->address;
    }
    for (unsigned b = 0; b < (k.n > 256 ? 2u : 1u); b++)
        for (size_t i = 0; i < n; i++) {
            uint8_t v = (uint8_t)(idx[i] >> (8 * b));
            put_bytes(out, &v, 1);
        }
    uint64_t prev = min_ts, maxzz = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t zz = tl_zigzag((int64_t)(e[i].timestamp_ns - prev));
        prev = e[i].timestamp_ns;
        maxzz = zz > maxzz ? zz : maxzz;
        if (l->ts == TS_VARINT)
            put_varint(out, zz);
    }
    if (l->ts == TS_PLANES) {
        for (unsigned b = 0; b < tl_chunk_ts_width(maxzz); b++) {
            prev = min_ts;
            for (size_t i = 0; i < n; i++) {
                uint8_t v = (uint8_t)(tl_zigzag((int64_t)(e[i].timestamp_ns - prev)) >> (8 * b));
                prev = e[i].timestamp_ns;
                put_bytes(out, &v, 1);
            }
        }
    }
    payloads(l, e, n, &k, idx, out);
    free(k.key);
    free(k.slot);
    free(idx);
}

/* ---- measuring -------------------------------------------------------------------------- */

typedef struct result {
    double raw, stored, comp_ns, decomp_ns; /* per event */
} result;

/*
 * How a body is compressed: zstd as the library does (tuned: its level 1's
 * parameters), with an acceleration (ZSTD_c_targetLength for the fast
 * strategy: it skips ahead faster where matches are rare), or without zstd's
 * match finder: its entropy stage alone (every byte a literal), or given the
 * matches a single pass finds (runs of one byte, as offset-1 matches).
 */
enum { STAGE_MATCH_FINDER, STAGE_LITERALS_ONLY, STAGE_OWN_RUNS };

#if HAVE_SEQUENCES
/* Runs of at least 5 equal bytes as matches at offset 1 (zstd's smallest match is 3). */
static size_t run_sequences(const uint8_t *s, size_t n, ZSTD_Sequence *q)
{
    size_t nq = 0, lit = 0;
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && s[j] == s[i]; j++)
            ;
        if (j - i < 5) {
            lit += j - i;
            continue;
        }
        q[nq++] = (ZSTD_Sequence){.offset = 1, .litLength = (unsigned)lit + 1, .matchLength = (unsigned)(j - i - 1)};
        lit = 0;
    }
    return nq;
}

#define SEQUENCE_BYTES sizeof(ZSTD_Sequence)
#else
#define SEQUENCE_BYTES 1
#endif

/* q: room for the sequences of STAGE_OWN_RUNS, a fifth of the body's bytes. */
static size_t compress_stage(ZSTD_CCtx *cc, int stage, void *q, void *dst, size_t cap, const uint8_t *src, size_t len)
{
    if (stage == STAGE_MATCH_FINDER)
        return ZSTD_compress2(cc, dst, cap, src, len);
#if HAVE_SEQUENCES
    ZSTD_CCtx_setParameter(cc, ZSTD_c_blockDelimiters, ZSTD_sf_noBlockDelimiters);
    size_t nq = stage == STAGE_OWN_RUNS ? run_sequences(src, len, q) : 0;
    return ZSTD_compressSequences(cc, dst, cap, q, nq, src, len);
#else
    (void)q;
    return (size_t)-1; /* an error code: never asked for (no row) */
#endif
}

/* Compresses and decompresses every body at level runs times; best CPU times. */
static result measure_stage(tl_buf *bodies, size_t nb, size_t events, int level, int runs, int tuned, int accel,
                            int stage)
{
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_DCtx *dc = ZSTD_createDCtx();
    result r = {0, 0, 1e30, 1e30};
    tl_buf z = {0}, back = {0};
    size_t most = 0;
    for (size_t b = 0; b < nb; b++) {
        r.raw += (double)bodies[b].len;
        most = bodies[b].len > most ? bodies[b].len : most;
    }
    void *q = stage == STAGE_OWN_RUNS ? malloc((most / 5 + 1) * SEQUENCE_BYTES) : NULL;
    if (stage == STAGE_OWN_RUNS && !q) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
    for (int run = 0; run < runs; run++) {
        double tc = 0, td = 0, stored = 0;
        for (size_t b = 0; b < nb; b++) {
            size_t bound = ZSTD_compressBound(bodies[b].len);
            z.len = back.len = 0;
            if (tl_buf_reserve(&z, bound) || tl_buf_reserve(&back, bodies[b].len + 1)) {
                fprintf(stderr, "codec_layouts: out of memory\n");
                exit(1);
            }
            ZSTD_CCtx_reset(cc, ZSTD_reset_parameters);
            ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
            if (tuned) {
                ZSTD_CCtx_setParameter(cc, ZSTD_c_minMatch, 7);
                ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, 12);
            }
            if (accel)
                ZSTD_CCtx_setParameter(cc, ZSTD_c_targetLength, accel);
            double t0 = cpu_now();
            size_t zn = compress_stage(cc, stage, q, z.data, bound, bodies[b].data, bodies[b].len);
            double t1 = cpu_now();
            size_t dn = ZSTD_isError(zn) ? 0 : ZSTD_decompressDCtx(dc, back.data, bodies[b].len + 1, z.data, zn);
            double t2 = cpu_now();
            if (ZSTD_isError(zn) || dn != bodies[b].len || memcmp(back.data, bodies[b].data, dn)) {
                fprintf(stderr, "codec_layouts: CHECK FAILED: a body does not decompress to itself\n");
                g_failed = 1;
            }
            tc += t1 - t0;
            td += t2 - t1;
            stored += (double)(zn < bodies[b].len ? zn : bodies[b].len) + 64;
        }
        r.stored = stored;
        r.comp_ns = tc < r.comp_ns ? tc : r.comp_ns;
        r.decomp_ns = td < r.decomp_ns ? td : r.decomp_ns;
    }
    double n = (double)events;
    r.raw /= n;
    r.stored /= n;
    r.comp_ns *= 1e9 / n;
    r.decomp_ns *= 1e9 / n;
    tl_buf_free(&z);
    tl_buf_free(&back);
    free(q);
    ZSTD_freeCCtx(cc);
    ZSTD_freeDCtx(dc);
    return r;
}

static result measure(tl_buf *bodies, size_t nb, size_t events, int level, int runs, int tuned)
{
    return measure_stage(bodies, nb, events, level, runs, tuned, 0, STAGE_MATCH_FINDER);
}

/* Chunk boundaries and bodies of the library's writer (its own keyed bodies, raw). */
static size_t library_chunks(const workload *w, size_t **ends, tl_buf **bodies)
{
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    size_t nb = 0, cap = 64;
    *ends = malloc(cap * sizeof **ends);
    *bodies = malloc(cap * sizeof **bodies);
    tl_buf out = {0};
    for (size_t i = 0; i <= w->n && *ends && *bodies; i++) {
        if (b.count && (i == w->n || !tl_chunk_fits(&b, &w->ev[i], 128u << 10))) {
            if (nb == cap) {
                cap *= 2;
                *ends = realloc(*ends, cap * sizeof **ends);
                *bodies = realloc(*bodies, cap * sizeof **bodies);
                if (!*ends || !*bodies)
                    break;
            }
            if (tl_chunk_finish(&b, NULL, 0, &out) != TRACELOG_OK)
                break;
            (*ends)[nb] = i;
            (*bodies)[nb] = (tl_buf){0};
            put_bytes(&(*bodies)[nb++], out.data + TL_CHUNK_HEADER_SIZE, out.len - TL_CHUNK_HEADER_SIZE);
            tl_chunk_builder_reset(&b);
        }
        if (i < w->n && tl_chunk_add(&b, &w->ev[i]) != TRACELOG_OK)
            break;
    }
    if (!*ends || !*bodies || (nb && (*ends)[nb - 1] != w->n)) {
        fprintf(stderr, "codec_layouts: the library's builder failed\n");
        exit(1);
    }
    tl_buf_free(&out);
    tl_chunk_builder_free(&b);
    return nb;
}

static void print_row(const char *name, result r)
{
    printf("  %-78s %6.2f %6.2f %7.1f %7.1f\n", name, r.raw, r.stored, r.comp_ns, r.decomp_ns);
}

static void run_mix(const char *mix, size_t n, int runs)
{
    workload w;
    if (!strcmp(mix, "codec"))
        make_workload(&w, n, 1);
    else
        make_mix(&w, n, mix);
    size_t *ends;
    tl_buf *lib;
    size_t nb = library_chunks(&w, &ends, &lib);
    printf("\nmix %s: %zu events in %zu chunks (zstd level 1 unless said; CPU ns per event, best of %d)\n",
           mix, n, nb, runs);
    printf("  %-78s %6s %6s %7s %7s\n", "layout", "raw B", "stored", "comp ns", "dec ns");
    tl_buf *bodies = calloc(nb, sizeof *bodies);
    if (!bodies) {
        fprintf(stderr, "codec_layouts: out of memory\n");
        exit(1);
    }
    for (size_t l = 0; l < NLAYOUTS; l++) {
        for (size_t c = 0, first = 0; c < nb; first = ends[c++])
            make_body(&g_layouts[l], w.ev + first, ends[c] - first, &bodies[c]);
        print_row(g_layouts[l].name, measure(bodies, nb, n, 1, runs, 0));
    }
    static const struct { const char *name; int level, tuned; } z[] = {
        {"format 1.1 body (library), zstd -1", -1, 0},
        {"format 1.1 body (library), zstd 1", 1, 0},
        {"format 1.1 body (library), zstd 1, minMatch 7, hashLog 12 (writer's level 1)", 1, 1},
        {"format 1.1 body (library), zstd 2", 2, 0},
        {"format 1.1 body (library), zstd 3", 3, 0},
    };
    for (size_t i = 0; i < sizeof z / sizeof z[0]; i++)
        print_row(z[i].name, measure(lib, nb, n, z[i].level, runs, z[i].tuned));
    /* Cheaper stages than the writer's level 1 (issue 27: the flusher's budget). */
    static const struct { const char *name; int accel, stage; } cheaper[] = {
        {"format 1.1 body (library), writer's level 1, acceleration 2", 2, STAGE_MATCH_FINDER},
        {"format 1.1 body (library), writer's level 1, acceleration 4", 4, STAGE_MATCH_FINDER},
#if HAVE_SEQUENCES
        {"format 1.1 body (library), zstd's entropy stage alone (all literals)", 0, STAGE_LITERALS_ONLY},
        {"format 1.1 body (library), entropy stage, byte runs as matches", 0, STAGE_OWN_RUNS},
#endif
    };
    for (size_t i = 0; i < sizeof cheaper / sizeof cheaper[0]; i++)
        print_row(cheaper[i].name, measure_stage(lib, nb, n, 1, runs, 1, cheaper[i].accel, cheaper[i].stage));
    for (size_t c = 0; c < nb; c++) {
        tl_buf_free(&bodies[c]);
        tl_buf_free(&lib[c]);
    }
    free(bodies);
    free(lib);
    free(ends);
    free(w.ev);
    free(w.payloads);
}

int main(int argc, char **argv)
{
    size_t n = 1000000;
    int runs = 3;
    const char *mix = "all";
    for (int i = 1; i + 1 < argc; i += 2) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(argv[i + 1], &end, 10);
        if (!strcmp(argv[i], "--mix"))
            mix = argv[i + 1];
        else if (!strcmp(argv[i], "--events") && !errno && !*end && v > 0 && v <= 100000000)
            n = (size_t)v;
        else if (!strcmp(argv[i], "--runs") && !errno && !*end && v > 0 && v <= 100)
            runs = (int)v;
        else
            return fprintf(stderr, "usage: codec_layouts [--events N] [--runs N] [--mix NAME|all]\n"), 2;
    }
    if (argc % 2 == 0)
        return fprintf(stderr, "usage: codec_layouts [--events N] [--runs N] [--mix NAME|all]\n"), 2;
    static const char *const mixes[] = {"codec", "struct64", "struct128", "text"};
    for (size_t m = 0; m < 4; m++)
        if (!strcmp(mix, "all") || !strcmp(mix, mixes[m]))
            run_mix(mixes[m], n, runs);
    return g_failed;
}
