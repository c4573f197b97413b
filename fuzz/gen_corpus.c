/*
 * Seed corpus generator for the fuzz targets (fuzz/README.md). Not a fuzz
 * target itself; build and run it with fuzz/make-corpus.sh.
 *
 *   gen_corpus CORPUS_DIR [TARGET]
 *
 * Writes CORPUS_DIR/<target>/seed-*: small logs of each policy (APPEND,
 * UNTIL_FULL, LOOP; stored and zstd-compressed chunks), each also cut short
 * and damaged in a few ways, and logs that reach each part of the keyed
 * chunk body (300 keys: two-byte key indexes; text payloads stored as rows;
 * constant and varying planes), for reader and reader_stream; writer programs for
 * roundtrip, some of them built choice by choice to repeat keys as real
 * traces do; CBOR payloads for cbor_meta; name maps for name_map (patches
 * of a map built with the controller's own calls, then spoiled). Each file
 * stays under 20 KiB.
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

#include "format/chunk.h"
#include "format/event_types.h"
#include "format/format.h"
#include "format/meta.h"
#include "format/threads.h"
#include "posix/names_map.h"
#include "stream/consumer.h"
#include "stream/produce.h"
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
    int style;   /* STYLE_*: what the events look like */
    int named;   /* 1: threads named, and renamed every 50 events (format 1.2) */
} log_spec;

enum {
    STYLE_MIXED,  /* a few keys, payloads of 0..199 bytes */
    STYLE_KEYS,   /* a key per event (distinct addresses), no payload, 16 KiB chunks: two-byte key indexes */
    STYLE_TEXT,   /* text payloads: keys stored as rows */
    STYLE_PLANES, /* 16-byte binary records of six keys: constant and varying planes */
};

/* Event i of a log of the given style; payload points to buf. */
static tracelog_event style_event(int style, int i, uint64_t ts, uint8_t *buf)
{
    tracelog_event ev = {.timestamp_ns = ts, .pid = 100 + (uint32_t)(i / 40), .payload = buf};
    switch (style) {
    case STYLE_KEYS:
        ev.event_id = 2;
        ev.tid = 7000;
        ev.address = 0x400000 + (uint64_t)i * 16;
        return ev;
    case STYLE_TEXT:
        ev.event_id = 2;
        ev.tid = 7000 + (uint64_t)(i % 3);
        ev.payload_len = (uint32_t)snprintf((char *)buf, 64, "request %d from user%d: %s", i,
                                            (int)(rnd() % 5), i % 4 ? "ok" : "connection reset");
        return ev;
    case STYLE_PLANES: {
        uint32_t seq = (uint32_t)i, small = (uint32_t)(i % 6 ? 0 : rnd() % 300);
        uint64_t ptr = 0x55d0c4a00000ull + (rnd() % 8) * 64;
        memcpy(buf, &seq, 4);
        memcpy(buf + 4, &small, 4);
        memcpy(buf + 8, &ptr, 8);
        ev.event_id = 1 + (uint32_t)(i % 2);
        ev.tid = 7000 + (uint64_t)(i % 3);
        ev.address = 0x400000;
        ev.payload_len = 16;
        return ev;
    }
    default: {
        uint32_t plen = (uint32_t)(i % 5 == 0 ? 0 : rnd() % 200);
        for (uint32_t k = 0; k < plen; k++)
            buf[k] = (uint8_t)(i + k * 3); /* compressible, not constant */
        ev.event_id = (uint32_t)(i % 3 == 0 ? 1 : i % 3 == 1 ? 2 : 7);
        ev.tid = 7000 + (uint64_t)(i % 2);
        /* kernel tids: a THREADS block, and a new one when a thread handle is reused (every 150 events) */
        ev.kernel_tid = 5000 + (uint32_t)(i % 2) + (uint32_t)(i / 150) * 2;
        ev.address = 0x400000 + (uint64_t)(i % 7) * 16;
        ev.truncation = (uint32_t)(i % 11 == 0);
        ev.payload_len = plen;
        return ev;
    }
    }
}

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
    opt.chunk_size = s->style == STYLE_KEYS ? 16384 : 4096;
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
        tracelog_event ev = style_event(s->style, i, ts, payload);
        if (s->named && ev.kernel_tid && i % 50 < 2) {
            char name[16];
            snprintf(name, sizeof name, "worker-%d", i / 50);
            tracelog_writer_name_thread(w, ev.pid, ev.tid, ev.kernel_tid, name);
        }
        tracelog_writer_append(w, &ev); /* UNTIL_FULL: LOG_FULL once full, as intended */
        if (i % 37 == 36) {
            tracelog_log_status st = {(uint64_t)i + 1, 0, (uint64_t)i / 50, 0, 0, 0, 0, 0};
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

/* Ring (LOOP) logs cannot be read from a pipe: reader_stream gets the log
   of each kind, not its damaged variants (to check that it refuses them),
   reader gets them all. The damaged variants of the keyed-body logs go to
   reader only too, to keep the corpus small: the stream reader decodes
   chunks with the same code. */
static void put_log(const log_spec *s, const char *name, const void *p, size_t len, int variant)
{
    put_file("reader", name, p, len);
    if (!variant || (s->policy != TRACELOG_POLICY_LOOP && s->style == STYLE_MIXED))
        put_file("reader_stream", name, p, len);
}

/* Degenerate files: both targets. */
static void put_both(const char *name, const void *p, size_t len)
{
    put_file("reader", name, p, len);
    put_file("reader_stream", name, p, len);
}

static void log_variants(const log_spec *s)
{
    size_t len;
    uint8_t *log = write_log(s, &len);
    char name[128];
    snprintf(name, sizeof name, "%s.ptl", s->name);
    put_log(s, name, log, len, 0);
    if (s->abandon) {
        free(log);
        return;
    }

    /* Cut short: inside the header, inside a block header, inside a payload. */
    size_t cuts[] = {len / 2 + 13, len / 3, len - 1};
    size_t ncuts = s->style == STYLE_MIXED ? 3 : 1; /* the keyed logs: one, in a chunk */
    for (size_t i = 0; i < ncuts; i++) {
        snprintf(name, sizeof name, "%s-cut%zu.ptl", s->name, cuts[i]);
        put_log(s, name, log, cuts[i], 1);
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
        put_log(s, name, bad, len, 1);
    }
    /* Framing damage (the same whatever the chunk body): the mixed logs only. */
    b = s->style == STYLE_MIXED ? find_block(log, len, 64, 1) : 0;
    /* A damaged block header (its length field), so the reader must resynchronise. */
    if (b) {
        memcpy(bad, log, len);
        bad[b + 17] ^= 0x10;
        snprintf(name, sizeof name, "%s-bad-header.ptl", s->name);
        put_log(s, name, bad, len, 1);
    }
    /* A zeroed range in the middle (a lost page). */
    if (s->style == STYLE_MIXED) {
        memcpy(bad, log, len);
        memset(bad + len / 2, 0, len / 8);
        snprintf(name, sizeof name, "%s-hole.ptl", s->name);
        put_log(s, name, bad, len, 1);
    }
    free(bad);
    free(log);
}

static void logs(void)
{
    static const log_spec specs[] = {
        {"append-raw", TRACELOG_POLICY_APPEND, 0, 0, 70, 0, 0, STYLE_MIXED, 0},
        {"append-zstd", TRACELOG_POLICY_APPEND, 1, 0, 200, 0, 0, STYLE_MIXED, 0},
        {"append-abandoned", TRACELOG_POLICY_APPEND, 1, 0, 100, 1, 0, STYLE_MIXED, 0},
        {"append-typed", TRACELOG_POLICY_APPEND, 0, 0, 60, 0, 1, STYLE_MIXED, 0},
        {"untilfull-raw", TRACELOG_POLICY_UNTIL_FULL, 0, 6000, 150, 0, 0, STYLE_MIXED, 0},
        {"untilfull-zstd", TRACELOG_POLICY_UNTIL_FULL, 1, 5000, 300, 0, 0, STYLE_MIXED, 0},
        {"loop-raw", TRACELOG_POLICY_LOOP, 0, 8192, 300, 0, 0, STYLE_MIXED, 0},
        {"loop-zstd", TRACELOG_POLICY_LOOP, 1, 8192, 900, 0, 0, STYLE_MIXED, 0},
        {"loop-abandoned", TRACELOG_POLICY_LOOP, 1, 8192, 400, 1, 0, STYLE_MIXED, 0},
        {"keyed-keys300-raw", TRACELOG_POLICY_APPEND, 0, 0, 300, 0, 0, STYLE_KEYS, 0},
        {"keyed-text-zstd", TRACELOG_POLICY_APPEND, 1, 0, 300, 0, 0, STYLE_TEXT, 0},
        {"keyed-planes-raw", TRACELOG_POLICY_APPEND, 0, 0, 150, 0, 0, STYLE_PLANES, 0},
        {"keyed-planes-zstd", TRACELOG_POLICY_APPEND, 1, 0, 300, 0, 0, STYLE_PLANES, 0},
        {"append-named", TRACELOG_POLICY_APPEND, 1, 0, 200, 0, 0, STYLE_MIXED, 1},
        {"loop-named", TRACELOG_POLICY_LOOP, 0, 8192, 300, 0, 0, STYLE_MIXED, 1},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++)
        log_variants(&specs[i]);
    /* Degenerate files. */
    put_both("bad-empty", "", 0);
    put_both("bad-magic-only", "\x8bPTL\r\n\x1a\n", 8);
    size_t len;
    log_spec tiny = {"tiny", TRACELOG_POLICY_APPEND, 0, 0, 0, 0, 0, STYLE_MIXED, 0};
    uint8_t *log = write_log(&tiny, &len);
    put_both("no-events.ptl", log, len);
    put_both("header-only.ptl", log, 64);
    free(log);
}

/*
 * Merge sets (format 1.1, spec 6.10): a log's chunks joined by MERGE_NEXT,
 * every fourth one ending a set, the last one left open; its blocks sealed
 * again (payload CRC, header CRC). For reader and reader_stream.
 */
static void merge_seeds(void)
{
    static const log_spec specs[] = {
        {"merge-append-raw", TRACELOG_POLICY_APPEND, 0, 0, 150, 0, 0, STYLE_MIXED, 0},
        {"merge-append-zstd", TRACELOG_POLICY_APPEND, 1, 0, 400, 0, 0, STYLE_MIXED, 0},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        size_t len, need;
        uint8_t *log = write_log(&specs[i], &len);
        tl_file_header hdr;
        tracelog_error err;
        if (tl_header_decode(log, len, &hdr, &need, &err) != TRACELOG_OK)
            die("merge seed header");
        uint32_t salt32 = tl_salt32(hdr.salt), chunks = 0;
        tl_block_header h;
        for (uint64_t off = hdr.header_size; off + TL_BLOCK_HEADER_SIZE <= len; off += tl_block_span(h.payload_len)) {
            if (tl_block_header_decode(log + off, salt32, 0, &h) != TL_BLOCK_OK)
                die("merge seed block");
            if (h.type != TL_BLOCK_CHUNK)
                continue;
            uint8_t *payload = log + off + TL_BLOCK_HEADER_SIZE;
            payload[TL_CHUNK_FLAGS_OFFSET] = ++chunks % 4 ? TL_CHUNK_MERGE_NEXT : 0;
            h.payload_crc = tl_block_payload_crc(salt32, payload, h.payload_len);
            tl_block_header_encode(&h, salt32, log + off);
        }
        char name[128];
        snprintf(name, sizeof name, "%s.ptl", specs[i].name);
        put_both(name, log, len);
        free(log);
    }
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

/*
 * A program built choice by choice: fuzz_fdp takes each choice from the end
 * of the input (a range of n bytes as a big-endian number, in the order the
 * harness asks) and payload bytes from the front.
 */
typedef struct program {
    uint8_t choices[16384];
    size_t nchoices;
    uint8_t front[16384];
    size_t nfront;
} program;

/* The choice fuzz_fdp_range(lo, hi) of fuzz_helpers.h returns as value. */
static void choose(program *p, uint64_t lo, uint64_t hi, uint64_t value)
{
    uint64_t span = hi - lo, d = value - lo;
    unsigned n = 0;
    for (unsigned bits = 0; bits < 64 && (span >> bits) != 0; bits += 8)
        n++;
    for (unsigned i = n; i-- > 0;)
        p->choices[p->nchoices++] = (uint8_t)(d >> (8 * i));
}

/* One append of fuzz_roundtrip's gen_event: ts + step, id, tid, address, a payload of len bytes. */
static void choose_event(program *p, uint64_t step, uint32_t id, uint64_t tid, uint64_t address,
                         uint32_t len, const uint8_t *payload)
{
    choose(p, 0, 31, 5);     /* op: append */
    choose(p, 0, 3, 0);      /* timestamp: the previous one plus ... */
    choose(p, 0, 1000, step);
    choose(p, 0, 255, 1);    /* a small event id */
    choose(p, 0, 9, id);
    choose(p, 0, 255, 1);    /* the previous pid */
    choose(p, 0, 255, 0);    /* a new thread id */
    choose(p, 0, UINT64_MAX, tid);
    choose(p, 0, 2, 2);      /* a new address */
    choose(p, 0, UINT64_MAX, address);
    choose(p, 0, 2, 0);      /* not truncated */
    choose(p, 0, 3, 1);      /* a payload of 1..64 bytes */
    choose(p, 1, 64, len);
    memcpy(p->front + p->nfront, payload, len);
    p->nfront += len;
}

/* Events of a few keys, as a traced program records them: 16-byte binary records or text. */
static void keyed_program(const char *name, int policy, int level, int text)
{
    static program p;
    memset(&p, 0, sizeof p);
    choose(&p, 0, 2, (uint64_t)policy);
    choose(&p, 0, 1, (uint64_t)level);
    choose(&p, 0, 2, 0); /* 4 KiB chunks */
    if (policy == 1)
        choose(&p, 1, 65536, 6000);
    if (policy == 2) {
        choose(&p, 8192, 131072, 8192);
        choose(&p, 0, 255, 1); /* default segment size */
        choose(&p, 0, 255, 1); /* default durable size */
    }
    choose(&p, 0, UINT64_MAX, rnd()); /* seek seed */
    for (int i = 0; i < 300; i++) {
        uint8_t payload[64];
        uint32_t len = 16;
        if (text) {
            len = (uint32_t)snprintf((char *)payload, sizeof payload, "open /var/log/app%d.log", i % 4);
        } else {
            uint32_t seq = (uint32_t)i, small = (uint32_t)(rnd() % 4 ? 0 : rnd() % 300);
            uint64_t ptr = 0x55d0c4a00000ull + (rnd() % 8) * 64;
            memcpy(payload, &seq, 4);
            memcpy(payload + 4, &small, 4);
            memcpy(payload + 8, &ptr, 8);
        }
        choose_event(&p, 50 + rnd() % 900, (uint32_t)(i % 3), 0x7f3a12345700ull + (uint64_t)(i % 2) * 0x801000,
                     0x55d4c3a01000ull + (uint64_t)(i % 4) * 0x40, len, payload);
    }
    uint8_t *input = malloc(p.nfront + p.nchoices);
    if (!input)
        die("malloc");
    memcpy(input, p.front, p.nfront);
    for (size_t i = 0; i < p.nchoices; i++) /* the first choice is the last byte */
        input[p.nfront + i] = p.choices[p.nchoices - 1 - i];
    put_file("roundtrip", name, input, p.nfront + p.nchoices);
    free(input);
}

static void keyed_programs(void)
{
    keyed_program("keyed-p0-l0", 0, 0, 0);
    keyed_program("keyed-p0-l1", 0, 1, 0);
    keyed_program("keyed-p1-l1", 1, 1, 0);
    keyed_program("keyed-p2-l1", 2, 1, 0);
    keyed_program("keyed-text-p0-l1", 0, 1, 1);
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
    put_file("cbor_meta", "bad-metadata-cut", b.data, b.len / 2);
    b.len = 0;
    strcpy(m.clock_source, "tsc"); /* format 1.1: the TSC's calibration */
    m.clock_tsc_base = 123456789012345ull;
    m.clock_ns_base = 1790000000123456789ull;
    m.clock_mult = 1651910039ull;
    m.clock_shift = 32;
    tl_meta_encode(&m, &b);
    put_file("cbor_meta", "metadata-1.1-tsc", b.data, b.len);
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

    tracelog_log_status st = {1000, 990, 5, 5, 28, 1, 0, 0};
    tl_status_encode(&st, &b);
    put_file("cbor_meta", "status", b.data, b.len);
    b.len = 0;

    /* format 1.1 */
    tracelog_log_status dropped = {1000, 990, 5, 5, 28, 1, 3, 7};
    tl_status_encode(&dropped, &b);
    put_file("cbor_meta", "status-1.1-dropped", b.data, b.len);
    b.len = 0;
    const tl_thread_def threads[] = {{0x7f0000001000ull, 4242, 4242, 0}, {0x7f0000002000ull, 4242, 4250, 0},
                                     {UINT64_MAX, UINT32_MAX, UINT32_MAX, 0}};
    tl_cbor_put_array(&b, 3);
    for (size_t i = 0; i < 3; i++)
        tl_threads_encode_entry(&threads[i], NULL, &b);
    put_file("cbor_meta", "threads-1.1", b.data, b.len);
    b.len = 0;
    /* format 1.2: names; a rename (same thread, new name); the longest name; names ignored (the
       entries stay valid): too long, not text, with a NUL, empty */
    static const char *const names[] = {"main", "worker-1", "worker-1b", "0123456789012345678901234567890123456789"
                                        "012345678901234567890123"};
    tl_cbor_put_array(&b, 4);
    for (size_t i = 0; i < 4; i++)
        tl_threads_encode_entry(&threads[i < 3 ? i : 1], names[i], &b);
    put_file("cbor_meta", "threads-1.2-names", b.data, b.len);
    b.len = 0;
    static const uint8_t bad_names[] = {
        0x84,
        0xa4, 0x63, 'p', 'i', 'd', 0x01, 0x63, 't', 'i', 'd', 0x07, 0x64, 'k', 't', 'i', 'd', 0x0a,
        0x64, 'n', 'a', 'm', 'e', 0x78, 0x41, /* 65 bytes: one too many */
        'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
        'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
        'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a',
        0xa4, 0x63, 'p', 'i', 'd', 0x01, 0x63, 't', 'i', 'd', 0x08, 0x64, 'k', 't', 'i', 'd', 0x0b,
        0x64, 'n', 'a', 'm', 'e', 0x82, 0x01, 0x02, /* not text */
        0xa4, 0x63, 'p', 'i', 'd', 0x01, 0x63, 't', 'i', 'd', 0x09, 0x64, 'k', 't', 'i', 'd', 0x0c,
        0x64, 'n', 'a', 'm', 'e', 0x63, 'a', 0x00, 'b', /* a NUL */
        0xa5, 0x63, 'p', 'i', 'd', 0x01, 0x63, 't', 'i', 'd', 0x0a, 0x64, 'k', 't', 'i', 'd', 0x0d,
        0x64, 'n', 'a', 'm', 'e', 0x60, /* empty, then a valid one: the last value wins */
        0x64, 'n', 'a', 'm', 'e', 0x64, 0xff, 0x1b, '\n', 'x'}; /* not UTF-8, control bytes: kept as they are */
    put_file("cbor_meta", "threads-1.2-bad-names", bad_names, sizeof bad_names);

    /* Hand-made oddities: an unknown key with a nested value, an indefinite
       map, deep nesting, a string claiming 2^64-1 bytes, a tag. */
    static const uint8_t unknown[] = {0xa2, 0x63, 'z', 'z', 'z', 0x82, 0xa1, 0x61, 'k', 0xf5, 0x80,
                                      0x68, 'l', 'o', 'g', '_', 'f', 'u', 'l', 'l', 0xf4};
    put_file("cbor_meta", "unknown-key", unknown, sizeof unknown);
    static const uint8_t indefinite[] = {0xbf, 0x62, 'i', 'd', 0x01, 0xff};
    put_file("cbor_meta", "bad-indefinite", indefinite, sizeof indefinite);
    uint8_t deep[80];
    deep[0] = 0xa1;
    deep[1] = 0x61;
    deep[2] = 'x';
    for (size_t i = 3; i < sizeof deep - 1; i++)
        deep[i] = 0x81;
    deep[sizeof deep - 1] = 0x00;
    put_file("cbor_meta", "bad-deep", deep, sizeof deep);
    static const uint8_t huge[] = {0xa1, 0x6a, 't', 'r', 'a', 'c', 'e', '_', 'n', 'a', 'm', 'e',
                                   0x7b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'x'};
    put_file("cbor_meta", "bad-huge-length", huge, sizeof huge);
    static const uint8_t tagged[] = {0x81, 0xa2, 0x62, 'i', 'd', 0xc1, 0x05, 0x64, 'n', 'a', 'm', 'e', 0x61, 'x'};
    put_file("cbor_meta", "bad-tagged", tagged, sizeof tagged);
    tl_buf_free(&b);
}

/* ---- shared stream buffers ----------------------------------------------- */

/* A stream as the consumer finds it in shared memory: 2 lanes of 4 KiB. */
static tl_stream *seed_stream(uint32_t policy, void *map, uint64_t size)
{
    tl_stream_params p = {.policy = policy, .stream_size = 4096, .max_data = 256, .max_sys_data = 256,
                          .nlanes = 2, .markers = {1, 2, 3, 4}};
    memset(map, 0, size);
    tl_stream *s = tl_stream_create_in(map, size, &p);
    if (!s)
        die("tl_stream_create_in");
    tl_stream_start(s, NULL);
    return s;
}

static void seed_events(tl_stream *s, uint32_t lane, int n, uint32_t len)
{
    static const uint8_t payload[256] = "shared buffer seed payload";
    for (int i = 0; i < n; i++) {
        tracelog_event ev = {.event_id = 10 + (uint32_t)i % 7, .pid = 42, .kernel_tid = 43, .tid = lane + 1,
                       .address = (uint64_t)i, .payload_len = len, .payload = payload};
        tl_stream_record(s, lane, &ev);
    }
}

static void put_stream(const char *name, uint8_t *map, size_t size)
{
    /* The consumer's watermark is "now" by the header's clock: a clock_gettime
       clock whose base is far ahead of every record's timestamp puts them all
       before it, whatever the uptime of the machine that fuzzes (with the
       creating process's base, records read as future ones, deferred and
       dropped, wherever that machine booted later than this one). */
    ((tl_stream *)map)->clock = (tl_clock){.kind = TL_CLOCK_GETTIME, .ns_base = INT64_C(1) << 62};
    while (size && !map[size - 1])
        size--; /* the fuzz target zero-fills the rest */
    put_file("shared_buffer", name, map, size);
}

static void shared_buffer_seeds(void)
{
    tl_stream_params p = {.policy = TRACELOG_POLICY_FLUSH, .stream_size = 4096, .max_data = 256,
                          .max_sys_data = 256, .nlanes = 2};
    uint64_t size = tl_stream_bytes(&p);
    uint8_t *map = aligned_alloc(4096, (size + 4095) & ~(uint64_t)4095);
    if (!map)
        die("aligned_alloc");
    tracelog_event sys = {.event_id = 3, .payload_len = 4, .payload = "\1\0\0\0"};

    tl_stream *s = seed_stream(TRACELOG_POLICY_FLUSH, map, size);
    seed_events(s, 0, 5, 16);
    seed_events(s, 1, 3, 0);
    put_stream("two-lanes", map, size);

    /* A lane that wrapped: PAD at the end of the lap, records from its start on. */
    s = seed_stream(TRACELOG_POLICY_FLUSH, map, size);
    tl_consumer *c = NULL;
    if (!(c = tl_consumer_new(s)))
        die("tl_consumer_init");
    seed_events(s, 0, 40, 40);
    tracelog_event ev;
    for (int i = 0; i < 30; i++)
        tl_consumer_take(c, &ev, 1);
    seed_events(s, 0, 20, 40);
    put_stream("wrapped", map, size);

    /* FLUSH: a full lane, then a LOSS record once there is room again. */
    s = seed_stream(TRACELOG_POLICY_FLUSH, map, size);
    tl_consumer_free(c);
    if (!(c = tl_consumer_new(s)))
        die("tl_consumer_init");
    seed_events(s, 1, 80, 64);
    for (int i = 0; i < 10; i++)
        tl_consumer_take(c, &ev, 1);
    seed_events(s, 1, 2, 64);
    put_stream("flush-loss", map, size);
    tl_consumer_free(c);

    /* LOOP: older records overwritten. */
    s = seed_stream(TRACELOG_POLICY_LOOP, map, size);
    seed_events(s, 0, 100, 24);
    put_stream("loop-overwritten", map, size);

    /* The marker queue at its fullest: in lane 0, a record reserved and never committed (its
       producer died: skipped once the producers are gone, which counts as garbage), then a FLUSH
       loss mark, and a LOOP overwrite count scribbled into the lane. The loss mark then brings
       three OVERFLOW/RESUME pairs: garbage, overwrites and the loss. */
    s = seed_stream(TRACELOG_POLICY_FLUSH, map, size);
    tl_lane *l = tl_stream_lane(s, 0);
    atomic_fetch_add(&l->head, tl_rec_size(8));
    atomic_store(&l->lost_first_ts, 1);
    atomic_store(&l->lost, 3);
    seed_events(s, 0, 2, 16);
    atomic_store(&l->dropped, 1);
    put_stream("three-marker-pairs", map, size);

    /* UNTIL_FULL stopped itself (STOP in the system lane). */
    s = seed_stream(TRACELOG_POLICY_UNTIL_FULL, map, size);
    seed_events(s, 0, 120, 32);
    tl_stream_record_system(s, &sys);
    put_stream("until-full-stopped", map, size);
    free(map);
}


/* ---- name maps (fuzz_name_map.c: patches of a zero map, steps, choices) ---- */

#define NAMES_STEP_END 0xffffffffu

typedef struct patches {
    uint8_t data[MAX_SEED];
    size_t len;
} patches;

static void patch_bytes(patches *p, const void *bytes, size_t n)
{
    if (p->len + n > sizeof p->data) {
        fprintf(stderr, "gen_corpus: a name map seed over %d bytes\n", MAX_SEED);
        exit(1);
    }
    memcpy(p->data + p->len, bytes, n);
    p->len += n;
}

static void patch_head(patches *p, uint32_t at, uint16_t n)
{
    uint8_t h[6] = {(uint8_t)at, (uint8_t)(at >> 8), (uint8_t)(at >> 16), (uint8_t)(at >> 24), (uint8_t)n,
                    (uint8_t)(n >> 8)};
    patch_bytes(p, h, sizeof h);
}

/* Patches that write every byte of m that differs from base (runs joined over gaps of < 16 bytes). */
static void patch_diff(patches *p, const tl_names *m, const tl_names *base)
{
    const uint8_t *a = (const uint8_t *)m, *b = (const uint8_t *)base;
    size_t size = sizeof *m;
    for (size_t i = 0; i < size;) {
        if (a[i] == b[i]) {
            i++;
            continue;
        }
        size_t end = i + 1, same = 0;
        while (end < size && end - i < 65535 && same < 16) {
            same = a[end] == b[end] ? same + 1 : 0;
            end++;
        }
        end -= same;
        patch_head(p, (uint32_t)i, (uint16_t)(end - i));
        patch_bytes(p, a + i, end - i);
        i = end;
    }
}

static void patch_step_end(patches *p) { patch_head(p, NAMES_STEP_END, 0); }

static tl_names *zero_map(void)
{
    tl_names *m = calloc(1, sizeof *m);
    if (!m)
        die("calloc");
    return m;
}

/* A map as a traced process leaves it: its header, names (typed, untyped, a controller's), filters, threads. */
static void fill_map(tl_names *m)
{
    atomic_store(&m->magic, TL_NAMES_MAGIC);
    m->version = TL_NAMES_VERSION;
    m->pid = 4242;
    m->euid = 1000;
    m->start = 987654321;
    m->nonce = 0x0123456789abcdefull;
    trace_event_id_t id;
    tl_names_open(m, "app.start", &id);
    tl_names_open_typed(m, "net.rx", "u32 len; u16 port; char[16] peer", &id);
    tl_names_open_typed(m, "net.tx", "u32 len; bytes[] data", &id);
    tl_names_open(m, "app.stop", &id);
    tl_names_open(m, "ctl.excluded", &id); /* opened by a controller first: TL_NAMES_BY_CONTROLLER */
    tl_names_filter_by_name(m, 7, "later.name", 0, &id);
    tl_names_filter_by_name(m, 7, "net.rx", 1, &id);
    tl_tname_put(&m->threads, 4242, 4242, "app", 0);
    tl_tname_put(&m->threads, 4242, 4243, "worker-1", 0);
    tl_tname_put(&m->threads, 4242, 4244, "\xc3\xa9t\xc3\xa9-\xc3\xa9t\xc3\xa9-\xc3\xa9", 0); /* 15 bytes of UTF-8 */
    tl_tname_put(&m->threads, 4250, 4250, "child", 0);
    tl_tname_put(&m->threads, 4250, 4243 + TL_TNAME_SLOTS, "same-slot", 0); /* the next probe */
}

static void put_map(const char *name, patches *p)
{
    static const uint8_t choices[16] = {3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3};
    patch_step_end(p);
    patch_bytes(p, choices, sizeof choices);
    put_file("name_map", name, p->data, p->len);
}

/* The spoiled map: every field another process can make wrong. */
static void spoil_map(tl_names *m)
{
    memset(m->names[1], 'a', sizeof m->names[1]);          /* no NUL */
    m->schema_at[1] = TL_NAMES_SCHEMA_ARENA;                /* its text past the arena's end */
    m->schema_len[1] = 2;
    m->schema_len[2] = TRACELOG_SCHEMA_TEXT_MAX + 1;        /* over the limit */
    m->schema_at[3] = 1;                                    /* a text that is not a schema */
    m->schema_len[3] = 12;
    m->schema_at[4] = 0x7fffffff;
    m->schema_len[4] = TL_NAMES_BY_CONTROLLER;
    memcpy(m->schemas, "u33 x; u8 y;", 12);
    m->count = 5000;
    m->schema_used = TL_NAMES_SCHEMA_ARENA + 7;
    m->filter_count = 1000;
    atomic_store(&m->lock, (uint64_t)0x7ffffff0u << 32 | 1); /* a holder that no longer lives */
    for (uint32_t i = 0; i < TL_TNAME_SLOTS; i++) {
        tl_tname_slot *s = &m->threads.slot[i];
        uint32_t k = atomic_load(&s->ktid);
        if (k == 4243)
            memset(s->name, 'w', sizeof s->name); /* no NUL */
        else if (k == 4250)
            memset(s->name, 0, sizeof s->name); /* empty */
        else if (k == 4244)
            atomic_store(&s->ktid, k | TL_TNAME_BUSY); /* caught being written */
    }
}

static void name_map_seeds(void)
{
    tl_names *zero = zero_map(), *m = zero_map();
    patches *p = calloc(1, sizeof *p);
    if (!p)
        die("calloc");

    put_map("bad-zero", p); /* nothing: not a map */

    fill_map(m);
    p->len = 0;
    patch_diff(p, m, zero);
    put_map("names", p);

    m->version = 3; /* an older build's map: refused by the check */
    p->len = 0;
    patch_diff(p, m, zero);
    put_map("bad-version-3", p);
    m->version = TL_NAMES_VERSION;

    tl_names *spoiled = zero_map();
    memcpy(spoiled, m, sizeof *m);
    spoil_map(spoiled);
    p->len = 0;
    patch_diff(p, spoiled, zero);
    put_map("spoiled", p);

    /* Rewritten between two of the controller's reads: the good map, then the spoiled one's changes. */
    p->len = 0;
    patch_diff(p, m, zero);
    patch_step_end(p);
    patch_diff(p, spoiled, m);
    put_map("rewritten", p);

    /* Full: every name counted (most of them empty), the arena used up, the filters too. */
    memcpy(spoiled, m, sizeof *m);
    spoiled->count = TL_NAMES_USER;
    spoiled->schema_used = TL_NAMES_SCHEMA_ARENA - 3;
    spoiled->filter_count = TL_NAME_FILTERS_MAX;
    p->len = 0;
    patch_diff(p, spoiled, zero);
    put_map("full", p);
    free(spoiled);
    free(p);
    free(m);
    free(zero);
}

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s CORPUS_DIR [name_map]\n", argv[0]);
        return 2;
    }
    root = argv[1];
    if (mkdir(root, 0777) != 0 && errno != EEXIST)
        die(root);
    if (argc == 3) { /* one target's seeds only: the others keep their bytes (logs get a new salt) */
        if (strcmp(argv[2], "name_map") != 0) {
            fprintf(stderr, "gen_corpus: %s: only name_map's seeds are made alone\n", argv[2]);
            return 2;
        }
        name_map_seeds();
        printf("gen_corpus: %u files written under %s\n", files_written, root);
        return 0;
    }
    logs();
    merge_seeds();
    programs();
    keyed_programs();
    cbor_seeds();
    shared_buffer_seeds();
    name_map_seeds();
    printf("gen_corpus: %u files written under %s\n", files_written, root);
    return 0;
}
