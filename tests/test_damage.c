/*
 * Damage: every byte of a small multi-chunk log flipped in turn (three XOR
 * masks). The reader never crashes, never returns an invented or altered
 * event, loses exactly the block that holds the damage (and resynchronises
 * after it), and reports a problem whenever a checksummed byte changed.
 * Plus multi-byte damage (100 zeroed bytes) across chunk boundaries.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/chunk.h"
#include "format/format.h"
#include "tl_test.h"

typedef struct small_log {
    tl_test_log_result res;
    tl_test_events all;
    tl_test_block *blocks;
    size_t nblocks, nchunks;
    tl_test_events *without; /* [i]: the events without those of block i (a chunk or not) */
} small_log;

static void events_without(const small_log *l, const int *lost, tl_test_events *out);

static int make_log(small_log *l)
{
    memset(l, 0, sizeof *l);
    tl_test_log_spec spec;
    /* The sweep reads the whole log once per byte and mask: a few KiB, but
       several chunks (flushes cut them), most of them compressed. */
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_APPEND, 40);
    spec.seed = 2024;
    spec.payload_max = 40;
    spec.flush_every = 8;
    if (tl_test_write_log_mem(&spec, &l->res))
        return -1;
    tl_test_gen_events(spec.seed, 0, spec.n_events, spec.payload_max, &l->all);
    l->nblocks = tl_test_scan_blocks(l->res.bytes, l->res.len, &l->blocks, NULL, NULL);
    size_t zstd = 0;
    for (size_t i = 0; i < l->nblocks; i++) {
        l->nchunks += l->blocks[i].type == TL_BLOCK_CHUNK;
        zstd += l->blocks[i].type == TL_BLOCK_CHUNK && l->blocks[i].codec == TL_CODEC_ZSTD;
    }
    if (!CHECK(l->nchunks >= 5) || !CHECK(zstd >= 2) || !CHECK(l->res.len <= 4096))
        return -1;
    l->without = calloc(l->nblocks, sizeof *l->without);
    int *lost = calloc(l->nblocks, sizeof *lost);
    if (!l->without || !lost)
        TL_DIE("out of memory");
    for (size_t i = 0; i < l->nblocks; i++) {
        lost[i] = 1;
        events_without(l, lost, &l->without[i]);
        lost[i] = 0;
    }
    free(lost);
    return 0;
}

static void free_log(small_log *l)
{
    tl_test_log_result_free(&l->res);
    tl_test_events_free(&l->all);
    for (size_t i = 0; l->without && i < l->nblocks; i++)
        tl_test_events_free(&l->without[i]);
    free(l->without);
    free(l->blocks);
}

/* The block whose checksummed bytes (header and payload) hold off, or NULL
   (file header or padding). */
static const tl_test_block *covering_block(const small_log *l, uint64_t off)
{
    for (size_t i = 0; i < l->nblocks; i++) {
        const tl_test_block *b = &l->blocks[i];
        if (off >= b->offset && off < b->offset + TL_BLOCK_HEADER_SIZE + b->payload_len)
            return b;
    }
    return NULL;
}

/* The events of the log without those of the chunks marked in lost[] (by block index). */
static void events_without(const small_log *l, const int *lost, tl_test_events *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < l->nblocks; i++) {
        const tl_test_block *b = &l->blocks[i];
        if (b->type != TL_BLOCK_CHUNK || lost[i])
            continue;
        for (uint32_t k = 0; k < b->event_count; k++)
            tl_test_events_push(out, &l->all.ev[b->first_event + k]);
    }
}

/*
 * The weak form of "no invented or altered event", independent of which
 * chunks were lost: each event returned is an event of the log, in the
 * log's order.
 */
static int is_ordered_subset(const tl_test_events *got, const tl_test_events *all)
{
    size_t j = 0;
    for (size_t i = 0; i < got->n; i++) {
        while (j < all->n && !tl_test_event_equal(&got->ev[i], &all->ev[j]))
            j++;
        if (j == all->n)
            return 0;
        j++;
    }
    return 1;
}

/* What opening a file whose header byte i was XORed with mask returns. */
static tracelog_status header_damage_status(const small_log *l, size_t i, uint8_t mask)
{
    if (i < TL_FILE_MAGIC_LEN)
        return TRACELOG_E_BAD_MAGIC;
    if (i == 8 || i == 9)
        return TRACELOG_E_UNSUPPORTED_VERSION; /* major is no longer 1 */
    if (i >= 12 && i < 16) {
        /* header_size is checked before the CRC, which is then looked for at its end. */
        uint8_t b[4];
        memcpy(b, l->res.bytes + 12, 4);
        b[i - 12] ^= mask;
        uint32_t size = tl_load32(b);
        if (size < TL_HEADER_SIZE || size > TL_HEADER_SIZE_MAX || size % 8)
            return TRACELOG_E_CORRUPT;
        if (size > l->res.len)
            return TRACELOG_E_TRUNCATED;
    }
    return TRACELOG_E_CHECKSUM;
}

static void pwrite_byte(int fd, size_t off, uint8_t v)
{
    if (pwrite(fd, &v, 1, (off_t)off) != 1)
        TL_DIE("pwrite: %s", strerror(errno));
}

static void check_one_flip(const small_log *l, int fd, size_t off, uint8_t mask)
{
    const uint8_t orig = l->res.bytes[off];
    pwrite_byte(fd, off, (uint8_t)(orig ^ mask));
    tl_test_readout out;
    tl_test_read_fd(fd, NULL, &out);
    pwrite_byte(fd, off, orig);

    if (off < TL_HEADER_SIZE) {
        CHECK_STATUS(out.open_status, header_damage_status(l, off, mask));
        tl_test_readout_free(&out);
        return;
    }
    if (!CHECK_STATUS(out.open_status, TRACELOG_OK)) {
        tl_test_readout_free(&out);
        return;
    }
    CHECK_STATUS(out.next_status, TRACELOG_END);
    CHECK_MSG(is_ordered_subset(&out.events, &l->all), "an event that is not in the log, or out of order");

    const tl_test_block *b = covering_block(l, off);
    const tl_test_events *want = b ? &l->without[b - l->blocks] : &l->all;
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want->ev, want->n);
    if (b) {
        CHECK(out.nproblems >= 1); /* every header and payload byte is checksummed */
        CHECK_EQ(out.info.clean, 0);   /* whichever block it hit: a known loss is never clean */
    } else {
        CHECK_EQ(out.nproblems, 0); /* padding is not read */
        CHECK_EQ(out.info.clean, 1);
    }
    if (b && b->type != TL_BLOCK_METADATA)
        CHECK_METADATA_EQ(&out.meta, &l->res.meta);
    tl_test_readout_free(&out);
}

static void test_every_byte(void)
{
    static const uint8_t masks[] = {0x01, 0x80, 0xff};
    small_log l;
    if (make_log(&l) == 0) {
        int fd = tl_test_tmpfd();
        tl_test_fd_set(fd, l.res.bytes, l.res.len);
        unsigned long failures_before = tl_test_failures();
        size_t reads = 0;
        for (size_t m = 0; m < sizeof masks; m++)
            for (size_t off = 0; off < l.res.len; off++) {
                const tl_test_block *b = covering_block(&l, off);
                tl_test_context("byte %zu ^ 0x%02x (%s block at %llu)", off, masks[m],
                                off < TL_HEADER_SIZE ? "file header" : b ? "in the" : "padding of a",
                                b ? (unsigned long long)b->offset : 0ull);
                check_one_flip(&l, fd, off, masks[m]);
                reads++;
                if (tl_test_failures() - failures_before > 20)
                    goto done; /* enough to diagnose */
            }
done:
        printf("   %zu damaged files read (%zu bytes, %zu blocks, %zu chunks)\n", reads, l.res.len,
               l.nblocks, l.nchunks);
        close(fd);
    }
    free_log(&l);
}

/*
 * With checksums ignored (salvage mode), damaged content reaches the
 * decoders: no crash, no hang (every third byte, to stay fast).
 */
static void test_every_byte_unchecked(void)
{
    small_log l;
    if (make_log(&l) == 0) {
        int fd = tl_test_tmpfd();
        tl_test_fd_set(fd, l.res.bytes, l.res.len);
        tracelog_reader_options opt;
        tracelog_reader_options_init(&opt);
        opt.ignore_checksums = 1;
        for (size_t off = TL_HEADER_SIZE; off < l.res.len; off += 3) {
            tl_test_context("byte %zu ^ 0xff, checksums ignored", off);
            const uint8_t orig = l.res.bytes[off];
            pwrite_byte(fd, off, (uint8_t)~orig);
            tl_test_readout out;
            tl_test_read_fd(fd, &opt, &out);
            pwrite_byte(fd, off, orig);
            CHECK_STATUS(out.open_status, TRACELOG_OK);
            CHECK_STATUS(out.next_status, TRACELOG_END);
            tl_test_readout_free(&out);
        }
        close(fd);
    }
    free_log(&l);
}

/* Zeroes [from, from + 100): the chunks whose checksummed bytes change are lost, all others come back. */
static void check_zeroed(const small_log *l, size_t from, const char *what)
{
    tl_test_context("100 bytes zeroed at %zu (%s)", from, what);
    uint8_t *copy = malloc(l->res.len);
    int *lost = calloc(l->nblocks, sizeof *lost);
    if (!copy || !lost)
        TL_DIE("out of memory");
    memcpy(copy, l->res.bytes, l->res.len);
    size_t changed = 0;
    unsigned long failures_before = tl_test_failures();
    for (size_t off = from; off < from + 100 && off < l->res.len; off++) {
        const tl_test_block *b = covering_block(l, off);
        if (copy[off] && b) {
            lost[b - l->blocks] = 1;
            changed++;
        }
        copy[off] = 0;
    }
    uint64_t lost_bytes = 0;
    for (size_t i = 0; i < l->nblocks; i++)
        lost_bytes += lost[i] ? l->blocks[i].span : 0;
    CHECK(changed > 0);
    tl_test_events want;
    events_without(l, lost, &want);
    tl_test_readout out;
    tl_test_read_bytes(copy, l->res.len, NULL, &out);
    if (CHECK_STATUS(out.open_status, TRACELOG_OK)) {
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
        CHECK(out.nproblems >= 1);
        /* Exactly the damaged blocks were skipped: resynchronised at the next one. */
        CHECK_EQ(out.info.bytes_skipped, lost_bytes);
        if (tl_test_failures() != failures_before)
            tl_test_readout_dump(&out);
    }
    tl_test_readout_free(&out);
    tl_test_events_free(&want);
    free(lost);
    free(copy);
    tl_test_context(NULL);
}

static void test_zeroed_ranges(void)
{
    small_log l;
    if (make_log(&l) != 0) {
        free_log(&l);
        return;
    }
    /* The second and third chunks, and the boundary between them. */
    const tl_test_block *c[3] = {NULL, NULL, NULL};
    size_t found = 0;
    for (size_t i = 0; i < l.nblocks && found < 3; i++)
        if (l.blocks[i].type == TL_BLOCK_CHUNK)
            c[found++] = &l.blocks[i];
    if (CHECK_EQ(found, 3)) {
        check_zeroed(&l, l.res.len / 2 - 50, "the middle of the file");
        check_zeroed(&l, (size_t)(c[2]->offset - 50), "across the boundary of two chunks");
        check_zeroed(&l, (size_t)c[1]->offset, "a chunk's block header and payload start");
        check_zeroed(&l, (size_t)(c[1]->offset + 200), "inside a chunk's payload");
    }
    free_log(&l);
}

int main(void)
{
    TL_TEST_RUN(test_every_byte);
    TL_TEST_RUN(test_every_byte_unchecked);
    TL_TEST_RUN(test_zeroed_ranges);
    return tl_test_finish();
}
