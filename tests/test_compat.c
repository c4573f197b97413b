/*
 * Compatibility and resynchronisation, on files crafted with the format
 * functions from a real log: what a later minor version may write (unknown
 * block types, flags and reserved words, a longer header, compatible
 * feature bits) is read; what it may not (major 2, incompatible features)
 * is refused; a block whose payload checksum fails is skipped and reading
 * resumes after it; a missing block is reported as a sequence gap. And the
 * format 1.0 logs of tracelog 0.1.0 (samples/golden) read as they always did.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "format/chunk.h"
#include "format/format.h"
#include "tl_test.h"

/* One block of a crafted file. */
typedef struct cblock {
    uint16_t type, flags;
    uint64_t seq;
    uint32_t reserved;    /* header bytes 24..27 (written as zero by tracelog) */
    uint8_t *payload;     /* owned */
    uint32_t len;
    int bad_payload_crc;  /* store a payload CRC that does not match */
    long base;            /* index of the block in the base log, -1 for a new one */
    uint64_t offset;      /* set by craft_build */
} cblock;

typedef struct craft {
    uint8_t header[TL_HEADER_SIZE_MAX];
    uint32_t header_len;
    uint32_t salt32;
    cblock *b;
    size_t n;
} craft;

/* The base log: APPEND, several chunks, status blocks, a trailer. */
typedef struct base_log {
    tl_test_log_result res;
    tl_test_events all;
    tl_test_block *blocks;
    size_t nblocks;
} base_log;

static int make_base(base_log *l)
{
    memset(l, 0, sizeof *l);
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_APPEND, 200);
    spec.seed = 5150;
    spec.flush_every = 50;
    if (tl_test_write_log_mem(&spec, &l->res))
        return -1;
    tl_test_gen_events(spec.seed, 0, spec.n_events, 0, &l->all);
    l->nblocks = tl_test_scan_blocks(l->res.bytes, l->res.len, &l->blocks, NULL, NULL);
    return 0;
}

static void free_base(base_log *l)
{
    tl_test_log_result_free(&l->res);
    tl_test_events_free(&l->all);
    free(l->blocks);
}

/* Index (in the base log) of the k-th block of this type, or -1. */
static long nth_block(const base_log *l, uint16_t type, size_t k)
{
    for (size_t i = 0; i < l->nblocks; i++)
        if (l->blocks[i].type == type && k-- == 0)
            return (long)i;
    return -1;
}

static void craft_from(craft *c, const base_log *l)
{
    memset(c, 0, sizeof *c);
    tl_file_header h;
    size_t need;
    tracelog_error err;
    if (tl_header_decode(l->res.bytes, l->res.len, &h, &need, &err) != TRACELOG_OK)
        TL_DIE("base log header: %s", err.message);
    memcpy(c->header, l->res.bytes, TL_HEADER_SIZE);
    c->header_len = TL_HEADER_SIZE;
    c->salt32 = tl_salt32(h.salt);
    c->b = calloc(l->nblocks + 8, sizeof *c->b);
    if (!c->b)
        TL_DIE("out of memory");
    for (size_t i = 0; i < l->nblocks; i++) {
        const tl_test_block *s = &l->blocks[i];
        cblock *d = &c->b[c->n++];
        d->type = s->type;
        d->flags = s->flags;
        d->seq = s->seq;
        d->len = s->payload_len;
        d->payload = malloc(d->len ? d->len : 1);
        if (!d->payload)
            TL_DIE("out of memory");
        memcpy(d->payload, l->res.bytes + s->offset + TL_BLOCK_HEADER_SIZE, d->len);
        d->base = (long)i;
    }
}

static void craft_free(craft *c)
{
    for (size_t i = 0; i < c->n; i++)
        free(c->b[i].payload);
    free(c->b);
}

static void craft_insert(craft *c, size_t at, uint16_t type, uint16_t flags, const void *payload,
                         uint32_t len)
{
    memmove(c->b + at + 1, c->b + at, (c->n - at) * sizeof *c->b);
    c->n++;
    cblock *d = &c->b[at];
    memset(d, 0, sizeof *d);
    d->type = type;
    d->flags = flags;
    d->len = len;
    d->payload = malloc(len ? len : 1);
    if (!d->payload)
        TL_DIE("out of memory");
    if (len)
        memcpy(d->payload, payload, len);
    d->base = -1;
}

static void craft_remove(craft *c, size_t at)
{
    free(c->b[at].payload);
    memmove(c->b + at, c->b + at + 1, (c->n - at - 1) * sizeof *c->b);
    c->n--;
}

/* Position in the craft of the base log's block i. */
static size_t craft_find(const craft *c, long base)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->b[i].base == base)
            return i;
    TL_DIE("block %ld not in the craft", base);
}

/* Sequence numbers from the first block's, one by one, as a writer would number them. */
static void craft_renumber(craft *c)
{
    for (size_t i = 1; i < c->n; i++)
        c->b[i].seq = c->b[0].seq + i;
}

/* Keeps the trailer's chunk index and own offset true to the crafted layout. */
static void patch_trailer(craft *c, cblock *t, const base_log *l)
{
    uint8_t *p = t->payload;
    uint64_t idx = tl_align8(4 + (uint64_t)tl_load32(p));
    uint64_t count = tl_load64(p + idx);
    for (uint64_t k = 0; k < count; k++) {
        uint8_t *e = p + idx + 8 + k * TL_INDEX_ENTRY_SIZE;
        for (size_t i = 0; i < c->n; i++)
            if (c->b[i].base >= 0 && l->blocks[c->b[i].base].offset == tl_load64(e)) {
                tl_store64(e, c->b[i].offset);
                tl_store64(e + 8, c->b[i].seq);
            }
    }
    tl_store64(p + t->len - 16, t->offset);
}

static uint8_t *craft_build(craft *c, const base_log *l, size_t *len)
{
    uint64_t pos = c->header_len;
    for (size_t i = 0; i < c->n; i++) {
        c->b[i].offset = pos;
        pos += tl_block_span(c->b[i].len);
    }
    uint8_t *out = calloc(1, pos);
    if (!out)
        TL_DIE("out of memory");
    memcpy(out, c->header, c->header_len);
    for (size_t i = 0; i < c->n; i++) {
        cblock *b = &c->b[i];
        if (b->type == TL_BLOCK_TRAILER && b->base >= 0)
            patch_trailer(c, b, l);
        tl_block_header h = {b->type, b->flags, b->seq, b->len,
                             tl_block_payload_crc(c->salt32, b->payload, b->len)};
        if (b->bad_payload_crc)
            h.payload_crc ^= 0x00010000u;
        uint8_t *o = out + b->offset;
        tl_block_header_encode(&h, c->salt32, o);
        if (b->reserved) {
            tl_store32(o + 24, b->reserved);
            tl_store32(o + 28, tl_crc32c(c->salt32, o, 28));
        }
        memcpy(o + TL_BLOCK_HEADER_SIZE, b->payload, b->len);
    }
    *len = (size_t)pos;
    return out;
}

/* The base log's events without those of the base chunks listed (-1 ends the list). */
static void events_without(const base_log *l, const long *lost, tl_test_events *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < l->nblocks; i++) {
        int skip = 0;
        for (const long *x = lost; *x >= 0; x++)
            skip |= *x == (long)i;
        if (l->blocks[i].type != TL_BLOCK_CHUNK || skip)
            continue;
        for (uint32_t k = 0; k < l->blocks[i].event_count; k++)
            tl_test_events_push(out, &l->all.ev[l->blocks[i].first_event + k]);
    }
}

static void read_craft(craft *c, const base_log *l, tl_test_readout *out)
{
    size_t len;
    uint8_t *file = craft_build(c, l, &len);
    tl_test_read_bytes(file, len, NULL, out);
    free(file);
}

/* Checks that the whole log came back, cleanly and without problems. */
static void expect_everything(const base_log *l, const tl_test_readout *out)
{
    if (!CHECK_STATUS(out->open_status, TRACELOG_OK))
        return;
    CHECK_EVENTS_EQ(out->events.ev, out->events.n, l->all.ev, l->all.n);
    CHECK_KERNEL_TIDS_EQ(out->events.ev, out->events.n, l->all.ev, l->all.n);
    CHECK_EQ(out->info.clean, 1);
    CHECK_EQ(out->nproblems, 0);
    CHECK_METADATA_EQ(&out->meta, &l->res.meta);
    CHECK_EQ(out->ntypes, TL_TEST_NTYPES);
    CHECK_LOG_STATUS_EQ(&out->status, &l->res.status);
    if (out->nproblems)
        tl_test_readout_dump(out);
}

static void test_unmodified(void)
{
    /* The crafting machinery itself reproduces the log byte for byte. */
    base_log l;
    if (make_base(&l) == 0) {
        craft c;
        craft_from(&c, &l);
        size_t len;
        uint8_t *file = craft_build(&c, &l, &len);
        if (CHECK_EQ(len, l.res.len))
            CHECK_MEM_EQ(file, l.res.bytes, len);
        free(file);
        CHECK(nth_block(&l, TL_BLOCK_CHUNK, 4) >= 0); /* at least five chunks */
        craft_free(&c);
    }
    free_base(&l);
}

/*
 * A block type from a later version, between two chunks, is skipped by its
 * length. Every block takes the next sequence number whatever its type
 * (format-spec section 4), so a writer that knew type 0x7777 would have
 * numbered it: the blocks after it are renumbered (and the trailer's index
 * updated). Without that, the file would show a sequence jump that no
 * writer produces, which the reader rightly reports.
 */
static void test_unknown_block_type(void)
{
    base_log l;
    if (make_base(&l) != 0) {
        free_base(&l);
        return;
    }
    static const uint16_t types[] = {0x7777, 0xffff, 8}; /* 8: the first type no version assigns (7 is 1.1's THREADS) */
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        tl_test_context("unknown block type 0x%x", types[t]);
        craft c;
        craft_from(&c, &l);
        uint8_t junk[100];
        for (size_t i = 0; i < sizeof junk; i++)
            junk[i] = (uint8_t)(0x8b ^ i); /* even bytes that look like sync marks */
        size_t at = craft_find(&c, nth_block(&l, TL_BLOCK_CHUNK, 2));
        craft_insert(&c, at, types[t], 0x00ff, junk, sizeof junk);
        craft_insert(&c, 1, types[t], 0, NULL, 0); /* an empty one right after METADATA */
        craft_renumber(&c);
        tl_test_readout out;
        read_craft(&c, &l, &out);
        expect_everything(&l, &out);
        CHECK_EQ(out.info.blocks, l.nblocks + 2);
        tl_test_readout_free(&out);
        craft_free(&c);
    }
    tl_test_context(NULL);
    free_base(&l);
}

static void test_flags_and_reserved(void)
{
    /* Written as zero, ignored on read: a later minor version may use them. */
    base_log l;
    if (make_base(&l) == 0) {
        craft c;
        craft_from(&c, &l);
        for (size_t i = 0; i < c.n; i++) {
            c.b[i].flags = (uint16_t)(0xa5a5 ^ i);
            c.b[i].reserved = 0x12345678u + (uint32_t)i;
        }
        tl_test_readout out;
        read_craft(&c, &l, &out);
        expect_everything(&l, &out);
        tl_test_readout_free(&out);
        craft_free(&c);
    }
    free_base(&l);
}

static void set_header(craft *c, const tl_file_header *h)
{
    tl_header_encode(h, c->header);
    c->header_len = TL_HEADER_SIZE;
}

static void test_later_minor_version(void)
{
    base_log l;
    if (make_base(&l) != 0) {
        free_base(&l);
        return;
    }
    tl_file_header h;
    size_t need;
    tl_header_decode(l.res.bytes, l.res.len, &h, &need, NULL);

    tl_test_context("minor version 1");
    craft c;
    craft_from(&c, &l);
    tl_file_header h1 = h;
    h1.minor = 1;
    set_header(&c, &h1);
    tl_test_readout out;
    read_craft(&c, &l, &out);
    expect_everything(&l, &out);
    CHECK_EQ(out.info.format_major, 1);
    CHECK_EQ(out.info.format_minor, 1);
    tl_test_readout_free(&out);

    tl_test_context("minor version 0xffff, unknown compatible features");
    h1.minor = 0xffff;
    h1.compat_flags = 0xffffffffu;
    set_header(&c, &h1);
    read_craft(&c, &l, &out);
    expect_everything(&l, &out);
    tl_test_readout_free(&out);

    /* A longer header (a field added at its end): blocks start after it. */
    tl_test_context("72-byte header");
    h1 = h;
    h1.minor = 1;
    set_header(&c, &h1);
    tl_store32(c.header + 12, 72);
    tl_store64(c.header + 60, 0xfeedfacecafebeefull); /* the new field, where 1.0 has its CRC */
    tl_store32(c.header + 68, tl_crc32c(0, c.header, 68));
    c.header_len = 72;
    read_craft(&c, &l, &out);
    expect_everything(&l, &out);
    tl_test_readout_free(&out);
    craft_free(&c);
    tl_test_context(NULL);
    free_base(&l);
}

static void test_refused_versions(void)
{
    base_log l;
    if (make_base(&l) != 0) {
        free_base(&l);
        return;
    }
    tl_file_header h;
    size_t need;
    tl_header_decode(l.res.bytes, l.res.len, &h, &need, NULL);
    struct { const char *what; uint16_t major; uint32_t incompat; } cases[] = {
        {"major 2", 2, 0},
        {"major 0", 0, 0},
        {"unknown incompatible feature", 1, 2},
        {"unknown incompatible feature (high bit)", 1, 0x80000000u},
        {"unknown incompatible feature beside keyed chunks", 1, TL_INCOMPAT_KEYED_CHUNKS | 4u},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_test_context("%s", cases[i].what);
        craft c;
        craft_from(&c, &l);
        tl_file_header h2 = h;
        h2.major = cases[i].major;
        h2.incompat_flags = cases[i].incompat;
        set_header(&c, &h2);
        tl_test_readout out;
        read_craft(&c, &l, &out);
        CHECK_STATUS(out.open_status, TRACELOG_E_UNSUPPORTED_VERSION);
        CHECK_EQ(out.open_err.code, TRACELOG_E_UNSUPPORTED_VERSION);
        CHECK(out.open_err.message[0] != 0);
        tl_test_readout_free(&out);
        craft_free(&c);
    }
    tl_test_context(NULL);
    free_base(&l);
}

/* A block whose header is valid but whose payload is not: skipped whole, reading goes on. */
static void test_bad_payload_crc(void)
{
    base_log l;
    if (make_base(&l) != 0) {
        free_base(&l);
        return;
    }
    /* A chunk in the middle: its events are lost, the later chunks read. */
    tl_test_context("second chunk");
    long chunk = nth_block(&l, TL_BLOCK_CHUNK, 1);
    craft c;
    craft_from(&c, &l);
    cblock *b = &c.b[craft_find(&c, chunk)];
    b->bad_payload_crc = 1;
    tl_test_readout out;
    read_craft(&c, &l, &out);
    if (CHECK_STATUS(out.open_status, TRACELOG_OK)) {
        long lost[] = {chunk, -1};
        tl_test_events want;
        events_without(&l, lost, &want);
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
        tl_test_events_free(&want);
        if (CHECK_EQ(out.nproblems, 1)) {
            CHECK_EQ(out.problems[0].code, TRACELOG_E_CHECKSUM);
            CHECK_EQ(out.problems[0].offset, b->offset);
            CHECK_EQ(out.problems[0].length, tl_block_span(b->len));
        }
        /* The trailer is intact, but a log with a known loss is never clean. */
        CHECK_EQ(out.info.clean, 0);
    }
    tl_test_readout_free(&out);
    craft_free(&c);

    /* The first EVENT_TYPES block: the names still come from the trailer. */
    tl_test_context("event types block");
    craft_from(&c, &l);
    c.b[craft_find(&c, nth_block(&l, TL_BLOCK_EVENT_TYPES, 0))].bad_payload_crc = 1;
    read_craft(&c, &l, &out);
    if (CHECK_STATUS(out.open_status, TRACELOG_OK)) {
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, l.all.ev, l.all.n);
        CHECK_EQ(out.ntypes, TL_TEST_NTYPES);
        CHECK_EQ(tl_test_readout_problems(&out, TRACELOG_E_CHECKSUM), 1);
    }
    tl_test_readout_free(&out);
    craft_free(&c);
    tl_test_context(NULL);
    free_base(&l);
}

/* A block missing from the middle: reported as a gap before the next block, the rest returned. */
static void test_sequence_gap(void)
{
    base_log l;
    if (make_base(&l) != 0) {
        free_base(&l);
        return;
    }
    static const uint16_t removed_type[] = {TL_BLOCK_CHUNK, TL_BLOCK_STATUS};
    for (size_t t = 0; t < 2; t++) {
        tl_test_context("a %s block removed", t == 0 ? "CHUNK" : "STATUS");
        long gone = nth_block(&l, removed_type[t], t == 0 ? 2 : 0);
        craft c;
        craft_from(&c, &l);
        size_t at = craft_find(&c, gone);
        craft_remove(&c, at);
        size_t len;
        uint8_t *file = craft_build(&c, &l, &len);
        uint64_t next_offset = c.b[at].offset; /* the block after the gap */
        tl_test_readout out;
        tl_test_read_bytes(file, len, NULL, &out);
        free(file);
        if (CHECK_STATUS(out.open_status, TRACELOG_OK)) {
            long lost[] = {gone, -1};
            tl_test_events want;
            events_without(&l, lost, &want);
            CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
            tl_test_events_free(&want);
            if (CHECK_EQ(out.nproblems, 1)) {
                CHECK_EQ(out.problems[0].code, TRACELOG_E_CORRUPT);
                CHECK_EQ(out.problems[0].offset, next_offset);
                CHECK_EQ(out.problems[0].length, 0);
            }
        }
        tl_test_readout_free(&out);
        craft_free(&c);
    }
    tl_test_context(NULL);
    free_base(&l);
}

/* Reads samples/golden/<dir>/<name>.ptl; 0 when the file could be opened. */
static int read_golden(const char *dir, const char *name, tl_test_readout *out, uint8_t **bytes, size_t *len)
{
    const char *src = getenv("TL_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/samples/golden/%s%s.ptl", src ? src : "..", dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!CHECK_MSG(fd >= 0, "cannot open %s", path))
        return -1;
    tl_test_read_fd(fd, NULL, out);
    *bytes = tl_test_fd_slurp(fd, len);
    close(fd);
    return 0;
}

/*
 * The format 1.0 golden logs, written by tracelog 0.1.0 with column chunk
 * bodies, are read by today's reader: format 1.0 without incompatible
 * features, the events and problems they always had (their dumps are pinned
 * by test_samples_golden.sh), and the APPEND log holds exactly the events of
 * the same program's log written today in format 1.1.
 */
static void test_format_10_goldens(void)
{
    static const struct { const char *name; size_t events, problems; int sequential_ok; } g[] = {
        {"append", 402, 0, 1}, {"until_full", 302, 0, 1}, {"loop", 401, 0, 0},
        {"cut_short", 201, 1, 0}, {"damaged", 302, 1, 0},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        tl_test_context("%s.ptl", g[i].name);
        tl_test_readout out;
        uint8_t *bytes;
        size_t len;
        if (read_golden("", g[i].name, &out, &bytes, &len))
            continue;
        CHECK_STATUS(out.open_status, TRACELOG_OK);
        CHECK_EQ(out.info.format_major, 1);
        CHECK_EQ(out.info.format_minor, 0);
        CHECK_EQ(tl_load32(bytes + 16), 0); /* incompatible_flags */
        CHECK_EQ(out.events.n, g[i].events);
        CHECK_EQ(out.nproblems, g[i].problems);
        CHECK_STATUS(out.next_status, TRACELOG_END);
        if (g[i].sequential_ok) { /* every chunk has the column body */
            tl_test_block *blocks;
            size_t n = tl_test_scan_blocks(bytes, len, &blocks, NULL, NULL), chunks = 0;
            for (size_t b = 0; b < n; b++)
                if (blocks[b].type == TL_BLOCK_CHUNK)
                    chunks++, CHECK_EQ(blocks[b].body_format, TL_BODY_COLUMNS);
            CHECK(chunks >= 2);
            free(blocks);
        }
        if (!strcmp(g[i].name, "append")) {
            tl_test_readout now;
            uint8_t *now_bytes;
            size_t now_len;
            if (read_golden("1.1/", "append", &now, &now_bytes, &now_len) == 0) {
                CHECK_EQ(now.info.format_minor, 1);
                CHECK_EQ(tl_load32(now_bytes + 16), TL_INCOMPAT_KEYED_CHUNKS);
                CHECK_EVENTS_EQ(out.events.ev, out.events.n, now.events.ev, now.events.n);
                tl_test_readout_free(&now);
                free(now_bytes);
            }
        }
        tl_test_readout_free(&out);
        free(bytes);
    }
    tl_test_context(NULL);
}

int main(void)
{
    TL_TEST_RUN(test_unmodified);
    TL_TEST_RUN(test_unknown_block_type);
    TL_TEST_RUN(test_flags_and_reserved);
    TL_TEST_RUN(test_later_minor_version);
    TL_TEST_RUN(test_refused_versions);
    TL_TEST_RUN(test_bad_payload_crc);
    TL_TEST_RUN(test_sequence_gap);
    TL_TEST_RUN(test_format_10_goldens);
    return tl_test_finish();
}
