/*
 * Seed corpus generator for the fuzz targets (fuzz/README.md). Not a fuzz
 * target itself; build and run it with fuzz/make-corpus.sh.
 *
 *   gen_corpus CORPUS_DIR
 *
 * Writes CORPUS_DIR/<target>/seed-*: small logs of each policy (APPEND,
 * UNTIL_FULL, LOOP; stored and zstd-compressed chunks), each also cut short
 * and damaged in a few ways, for reader and reader_stream; writer programs
 * for roundtrip; CBOR payloads for cbor_meta. Each file stays under 20 KiB.
 * Logs get a random salt, so a rerun changes checksums but not structure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/event_types.h"
#include "format/meta.h"
#include "tracelog.h"

#define MAX_SEED (20 * 1024)

static const char *root;
static unsigned files_written;

static void die(const char *what)
{
    fprintf(stderr, "gen_corpus: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void put_file(const char *target, const char *name, const void *data, size_t len)
{
    if (len > MAX_SEED) {
        fprintf(stderr, "gen_corpus: %s/%s is %zu bytes, over the %d limit\n", target, name, len, MAX_SEED);
        exit(1);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, target);
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        die(path);
    snprintf(path, sizeof path, "%s/%s/seed-%s", root, target, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len || fclose(f) != 0)
        die(path);
    files_written++;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* ---- logs -------------------------------------------------------------- */

typedef struct log_spec {
    const char *name;
    tracelog_policy policy;
    int level;
    uint64_t log_max_size;
    int events;
    int abandon; /* 1: no close (no trailer), as after a crash */
    int typed;   /* 1: types with payload schemas (format 1.1) */
} log_spec;

static uint8_t *write_log(const log_spec *s, size_t *len)
{
    int fd = memfd_create("gen_corpus", MFD_CLOEXEC);
    if (fd < 0)
        die("memfd_create");
    tracelog_metadata meta;
    tracelog_metadata_init(&meta);
    strcpy(meta.trace_name, "seed");
    strcpy(meta.hostname, "host");
    strcpy(meta.program, "/usr/bin/seed");
    meta.creation_time_ns = 1700000000000000000ull;
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = s->policy;
    opt.compression_level = s->level;
    opt.chunk_size = 4096;
    if (s->policy != TRACELOG_POLICY_APPEND)
        opt.log_max_size = s->log_max_size;
    if (s->policy == TRACELOG_POLICY_LOOP) {
        opt.segment_size = 4096;
        opt.durable_size = 4096;
    }
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(fd, &meta, &opt, &w, &err) != TRACELOG_OK) {
        fprintf(stderr, "gen_corpus: create: %s\n", err.message);
        exit(1);
    }
    if (s->typed) { /* the payloads below are of any length: some fit, some are short or long */
        tracelog_writer_define_event_schema(w, 1, "start", "u64 seq; flags8 mode {R=0x1, W=0x2}", NULL);
        tracelog_writer_define_event_schema(w, 2, "io", "u32 len; u16 port; char[6] dev; bytes[] rest", NULL);
    } else {
        tracelog_writer_define_event(w, 1, "start");
        tracelog_writer_define_event(w, 2, "io");
    }
    uint64_t ts = 1700000000000000000ull;
    uint8_t payload[200];
    for (int i = 0; i < s->events; i++) {
        if (i == s->events / 2)
            tracelog_writer_define_event(w, 7, "late type");
        ts += rnd() % 5000;
        uint32_t plen = (uint32_t)(i % 5 == 0 ? 0 : rnd() % sizeof payload);
        for (uint32_t k = 0; k < plen; k++)
            payload[k] = (uint8_t)(i + k * 3); /* compressible, not constant */
        tracelog_event ev = {ts, (uint32_t)(i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : 7), 100 + (uint32_t)(i / 40), 0,
                             7000 + (uint64_t)(i % 2), 0x400000 + (uint64_t)(i % 7) * 16,
                             (uint32_t)(i % 11 == 0), plen, payload};
        tracelog_writer_append(w, &ev); /* UNTIL_FULL: LOG_FULL once full, as intended */
        if (i % 37 == 36) {
            tracelog_log_status st = {(uint64_t)i + 1, 0, (uint64_t)i / 50, 0, 0, 0};
            tracelog_writer_set_status(w, &st);
            tracelog_writer_flush(w);
        }
    }
    if (s->abandon) {
        tracelog_writer_flush(w);
        tracelog_writer_abandon(w);
    } else if (tracelog_writer_close(w, &err) != TRACELOG_OK) {
        fprintf(stderr, "gen_corpus: close: %s\n", err.message);
        exit(1);
    }
    off_t end = lseek(fd, 0, SEEK_END);
    uint8_t *buf = malloc((size_t)end);
    if (!buf || pread(fd, buf, (size_t)end, 0) != end)
        die("reading back a log");
    close(fd);
    *len = (size_t)end;
    return buf;
}

/* Offset of the n-th block header at or after from (8-byte steps), or 0. */
static size_t find_block(const uint8_t *p, size_t len, size_t from, int n)
{
    for (size_t off = from; off + 32 <= len; off += 8)
        if (memcmp(p + off, "\x8b" "BLK", 4) == 0 && n-- == 0)
            return off;
    return 0;
}

/* Ring (LOOP) logs cannot be read from a pipe: reader_stream gets one of
   each kind (to check that it refuses them), reader gets them all. */
static void put_both(const char *name, const void *p, size_t len)
{
    put_file("reader", name, p, len);
    if (strncmp(name, "loop", 4) != 0 || strstr(name, "-") == strrchr(name, '-'))
        put_file("reader_stream", name, p, len);
}

static void log_variants(const log_spec *s)
{
    size_t len;
    uint8_t *log = write_log(s, &len);
    char name[128];
    snprintf(name, sizeof name, "%s.ptl", s->name);
    put_both(name, log, len);
    if (s->abandon) {
        free(log);
        return;
    }

    /* Cut short: inside the header, inside a block header, inside a payload. */
    size_t cuts[] = {len / 3, len / 2 + 13, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        snprintf(name, sizeof name, "%s-cut%zu.ptl", s->name, cuts[i]);
        put_both(name, log, cuts[i]);
    }

    uint8_t *bad = malloc(len);
    if (!bad)
        die("malloc");
    /* A flipped byte in the payload of the third block (a chunk, usually). */
    size_t b = find_block(log, len, 64, 2);
    if (b && b + 60 < len) {
        memcpy(bad, log, len);
        bad[b + 32 + 20] ^= 0x40;
        snprintf(name, sizeof name, "%s-flip-payload.ptl", s->name);
        put_both(name, bad, len);
    }
    /* A damaged block header (its length field), so the reader must resynchronise. */
    b = find_block(log, len, 64, 1);
    if (b) {
        memcpy(bad, log, len);
        bad[b + 17] ^= 0x10;
        snprintf(name, sizeof name, "%s-bad-header.ptl", s->name);
        put_both(name, bad, len);
    }
    /* A zeroed range in the middle (a lost page). */
    memcpy(bad, log, len);
    memset(bad + len / 2, 0, len / 8);
    snprintf(name, sizeof name, "%s-hole.ptl", s->name);
    put_both(name, bad, len);
    free(bad);
    free(log);
}

static void logs(void)
{
    static const log_spec specs[] = {
        {"append-raw", TRACELOG_POLICY_APPEND, 0, 0, 70, 0, 0},
        {"append-zstd", TRACELOG_POLICY_APPEND, 1, 0, 200, 0, 0},
        {"append-abandoned", TRACELOG_POLICY_APPEND, 1, 0, 100, 1, 0},
        {"append-typed", TRACELOG_POLICY_APPEND, 0, 0, 60, 0, 1},
        {"untilfull-raw", TRACELOG_POLICY_UNTIL_FULL, 0, 6000, 150, 0, 0},
        {"untilfull-zstd", TRACELOG_POLICY_UNTIL_FULL, 1, 5000, 300, 0, 0},
        {"loop-raw", TRACELOG_POLICY_LOOP, 0, 8192, 300, 0, 0},
        {"loop-zstd", TRACELOG_POLICY_LOOP, 1, 8192, 900, 0, 0},
        {"loop-abandoned", TRACELOG_POLICY_LOOP, 1, 8192, 400, 1, 0},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        log_variants(&specs[i]);
    /* Degenerate files. */
    put_both("empty", "", 0);
    put_both("magic-only", "\x8bPTL\r\n\x1a\n", 8);
    size_t len;
    log_spec tiny = {"tiny", TRACELOG_POLICY_APPEND, 0, 0, 0, 0, 0};
    uint8_t *log = write_log(&tiny, &len);
    put_both("no-events.ptl", log, len);
    put_both("header-only.ptl", log, 64);
    free(log);
}

/* ---- roundtrip programs ------------------------------------------------ */

/* fuzz_roundtrip reads its choices from the end of the input: the last
   byte picks the policy (mod 3), the one before the compression level. */
static void programs(void)
{
    static const size_t sizes[] = {300, 1500, 5000};
    for (int policy = 0; policy < 3; policy++)
        for (int level = 0; level < 2; level++)
            for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
                size_t n = sizes[k];
                uint8_t *p = malloc(n);
                if (!p)
                    die("malloc");
                for (size_t i = 0; i < n; i++)
                    p[i] = (uint8_t)rnd();
                p[n - 1] = (uint8_t)policy;
                p[n - 2] = (uint8_t)level;
                char name[64];
                snprintf(name, sizeof name, "p%d-l%d-%zu", policy, level, n);
                put_file("roundtrip", name, p, n);
                free(p);
            }
}

/* ---- CBOR payloads ------------------------------------------------------ */

static void cbor_seeds(void)
{
    tl_buf b = {0};
    tracelog_metadata m;
    tracelog_metadata_init(&m);
    strcpy(m.trace_name, "seed trace");
    strcpy(m.hostname, "host");
    strcpy(m.program, "/usr/bin/seed");
    m.inherited = 1;
    tl_meta_encode(&m, &b);
    put_file("cbor_meta", "metadata", b.data, b.len);
    put_file("cbor_meta", "metadata-cut", b.data, b.len / 2);
    b.len = 0;

    tl_type_entry types[] = {{1, "start", NULL}, {2, "io", NULL}, {4000000000u, "a much longer event type name", NULL}};
    tl_types_encode(types, 3, &b);
    put_file("cbor_meta", "types", b.data, b.len);
    b.len = 0;

    tracelog_schema *rx = NULL;
    tracelog_schema_parse("u32 len; u16 port; char[16] iface; f64 latency; enum8 st {IDLE=0, BUSY=1}",
                          &rx, NULL);
    tl_type_entry typed[] = {{40, "net.rx", rx}, {41, "plain", NULL}};
    tl_types_encode(typed, 2, &b);
    put_file("cbor_meta", "types-schema", b.data, b.len);
    tracelog_schema_free(rx);
    b.len = 0;

    tracelog_log_status st = {1000, 990, 5, 5, 28, 1};
    tl_status_encode(&st, &b);
    put_file("cbor_meta", "status", b.data, b.len);
    b.len = 0;

    /* Hand-made oddities: an unknown key with a nested value, an indefinite
       map, deep nesting, a string claiming 2^64-1 bytes, a tag. */
    static const uint8_t unknown[] = {0xa2, 0x63, 'z', 'z', 'z', 0x82, 0xa1, 0x61, 'k', 0xf5, 0x80,
                                      0x68, 'l', 'o', 'g', '_', 'f', 'u', 'l', 'l', 0xf4};
    put_file("cbor_meta", "unknown-key", unknown, sizeof unknown);
    static const uint8_t indefinite[] = {0xbf, 0x62, 'i', 'd', 0x01, 0xff};
    put_file("cbor_meta", "indefinite", indefinite, sizeof indefinite);
    uint8_t deep[80];
    deep[0] = 0xa1;
    deep[1] = 0x61;
    deep[2] = 'x';
    for (size_t i = 3; i < sizeof deep - 1; i++)
        deep[i] = 0x81;
    deep[sizeof deep - 1] = 0x00;
    put_file("cbor_meta", "deep", deep, sizeof deep);
    static const uint8_t huge[] = {0xa1, 0x6a, 't', 'r', 'a', 'c', 'e', '_', 'n', 'a', 'm', 'e',
                                   0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'x'};
    put_file("cbor_meta", "huge-length", huge, sizeof huge);
    static const uint8_t tagged[] = {0x81, 0xa2, 0x62, 'i', 'd', 0xc1, 0x05, 0x64, 'n', 'a', 'm', 'e', 0x61, 'x'};
    put_file("cbor_meta", "tagged", tagged, sizeof tagged);
    tl_buf_free(&b);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    root = argv[1];
    if (mkdir(root, 0777) != 0 && errno != EEXIST)
        die(root);
    logs();
    programs();
    cbor_seeds();
    printf("gen_corpus: %u files written under %s\n", files_written, root);
    return 0;
}
