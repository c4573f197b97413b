/*
 * Merge sets (format-spec/ptl-format.md 6.10) where the conformance vectors
 * cannot reach: many chunks per set (the reader's heap against a stable
 * sort), rewind and time seek inside sets, a pipe fed a few bytes at a
 * time, and the two limits of a set (decoded bytes, 1024 chunks) with the
 * problems they report, once each.
 *
 * The logs are written by tracelog's writer, one flush per chunk, then the
 * MERGE_NEXT bit of chunk headers is set and their blocks sealed again.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/chunk.h"
#include "format/format.h"
#include "tl_test.h"

#define T 1700000000000000000ull

typedef struct built {
    uint8_t *bytes;
    size_t len;
    tl_test_block *blocks;
    size_t nblocks;
    tl_test_events want; /* the events in the order the merge rule gives */
} built;

/* One event of chunk j: its place i in the chunk, its timestamp. */
typedef struct planned {
    uint64_t ts;
    uint32_t chunk, i;
} planned;

static int by_ts_then_chunk(const void *a, const void *b)
{
    const planned *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    if (x->chunk != y->chunk)
        return x->chunk < y->chunk ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static tracelog_event event_of(const planned *p)
{
    return (tracelog_event){.timestamp_ns = p->ts, .event_id = 1, .pid = 42, .tid = 1000 + p->chunk,
                            .address = 0x401000 + p->i, .payload_len = 0};
}

/*
 * Writes `nchunks` chunks of `per` events each, chunk j's event i at
 * ts(j, i) (nondecreasing in i), one flush per chunk, and marks chunk j
 * with MERGE_NEXT when flagged(j). want: the events merged per set, which
 * for each set is a stable sort on (timestamp, chunk): what the rule gives
 * when each chunk's events are in order.
 */
static void build(built *b, uint32_t nchunks, uint32_t per, uint64_t (*ts)(uint32_t, uint32_t),
                  int (*flagged)(uint32_t), int level)
{
    memset(b, 0, sizeof *b);
    int fd = tl_test_tmpfd();
    tracelog_metadata m;
    tl_test_metadata(&m, TRACELOG_POLICY_APPEND, 0);
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.compression_level = level;
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(fd, &m, &o, &w, &err) != TRACELOG_OK ||
        tracelog_writer_define_event(w, 1, "tick") != TRACELOG_OK)
        TL_DIE("writer: %s", err.message);
    planned *plan = malloc(sizeof *plan * nchunks * per);
    size_t n = 0, set_from = 0;
    for (uint32_t j = 0; j < nchunks; j++) {
        for (uint32_t i = 0; i < per; i++) {
            plan[n] = (planned){ts(j, i), j, i};
            tracelog_event ev = event_of(&plan[n++]);
            if (tracelog_writer_append(w, &ev) != TRACELOG_OK)
                TL_DIE("append");
        }
        if (tracelog_writer_flush(w) != TRACELOG_OK)
            TL_DIE("flush");
        if (!flagged(j) || j == nchunks - 1) { /* the set ends: its events in merged order */
            qsort(plan + set_from, n - set_from, sizeof *plan, by_ts_then_chunk);
            for (size_t k = set_from; k < n; k++) {
                tracelog_event ev = event_of(&plan[k]);
                tl_test_events_push(&b->want, &ev);
            }
            set_from = n;
        }
    }
    free(plan);
    if (tracelog_writer_close(w, &err) != TRACELOG_OK)
        TL_DIE("close: %s", err.message);
    b->bytes = tl_test_fd_slurp(fd, &b->len);
    close(fd);
    uint32_t salt32;
    b->nblocks = tl_test_scan_blocks(b->bytes, b->len, &b->blocks, &salt32, NULL);
    uint32_t j = 0;
    for (size_t k = 0; k < b->nblocks; k++) {
        tl_test_block *blk = &b->blocks[k];
        if (blk->type != TL_BLOCK_CHUNK)
            continue;
        uint8_t *payload = b->bytes + blk->offset + TL_BLOCK_HEADER_SIZE;
        payload[TL_CHUNK_FLAGS_OFFSET] = flagged(j++) ? TL_CHUNK_MERGE_NEXT : 0;
        tl_block_header h = {blk->type, blk->flags, blk->seq, blk->payload_len,
                             tl_block_payload_crc(salt32, payload, blk->payload_len)};
        tl_block_header_encode(&h, salt32, b->bytes + blk->offset);
    }
    if (j != nchunks)
        TL_DIE("%u chunks written, %u planned", j, nchunks);
}

static void built_free(built *b)
{
    free(b->bytes);
    free(b->blocks);
    tl_test_events_free(&b->want);
}

/* Offset of chunk j's block. */
static uint64_t chunk_offset(const built *b, uint32_t j)
{
    for (size_t k = 0; k < b->nblocks; k++)
        if (b->blocks[k].type == TL_BLOCK_CHUNK && j-- == 0)
            return b->blocks[k].offset;
    TL_DIE("no chunk %u", j);
}

/* Decoded bytes of the smallest and the largest chunk (stored chunks: the payload after the chunk header). */
static void chunk_sizes(const built *b, uint32_t *least, uint32_t *most)
{
    *least = UINT32_MAX, *most = 0;
    for (size_t k = 0; k < b->nblocks; k++)
        if (b->blocks[k].type == TL_BLOCK_CHUNK) {
            uint32_t size = b->blocks[k].payload_len - TL_CHUNK_HEADER_SIZE;
            *least = size < *least ? size : *least;
            *most = size > *most ? size : *most;
        }
}

/* A limit on decoded bytes that holds `k` of the chunks of b, never k + 1. */
static uint32_t limit_for(const built *b, uint32_t k)
{
    uint32_t least, most;
    chunk_sizes(b, &least, &most);
    uint32_t limit = k * most + least / 2;
    if (!CHECK((uint64_t)(k + 1) * least > limit))
        TL_DIE("chunks of too different sizes: %u .. %u", least, most);
    return limit;
}

/* A read function that hands out at most 3 bytes at a time (1, 2, 3, 1, ...). */
typedef struct dribble {
    const uint8_t *p;
    size_t len, pos, calls;
} dribble;

static long dribble_read(void *ctx, void *buf, size_t n)
{
    dribble *d = ctx;
    size_t k = 1 + d->calls++ % 3;
    if (k > n)
        k = n;
    if (k > d->len - d->pos)
        k = d->len - d->pos;
    memcpy(buf, d->p + d->pos, k);
    d->pos += k;
    return (long)k;
}

/* The log read from memory (seekable), through a pipe, and a few bytes at a time: the same reading. */
static void check_all_ways(const built *b, const tracelog_reader_options *opt, size_t problems)
{
    tl_test_readout file, pipe, drib;
    tl_test_read_bytes(b->bytes, b->len, opt, &file);
    tl_test_read_bytes_pipe(b->bytes, b->len, opt, &pipe);
    dribble d = {b->bytes, b->len, 0, 0};
    tl_test_read_fn(dribble_read, &d, opt, &drib);
    const tl_test_readout *outs[] = {&file, &pipe, &drib};
    for (int k = 0; k < 3; k++) {
        tl_test_context("reading %d (file, pipe, 3 bytes at a time)", k);
        CHECK_STATUS(outs[k]->next_status, TRACELOG_END);
        CHECK_EQ(outs[k]->nproblems, problems);
        CHECK_EVENTS_EQ(outs[k]->events.ev, outs[k]->events.n, b->want.ev, b->want.n);
    }
    tl_test_context(NULL);
    tl_test_readout_free(&file);
    tl_test_readout_free(&pipe);
    tl_test_readout_free(&drib);
}

/* 40 chunks of one set, their events dealt round-robin in time, some timestamps equal across chunks. */
static uint64_t dealt(uint32_t j, uint32_t i) { return T + (uint64_t)i * 40 + (j % 7) * 5; }
static int all_but_last_of_40(uint32_t j) { return j != 39; }

static void test_many_chunks_one_set(void)
{
    for (int level = 0; level <= 1; level++) { /* stored and zstd chunks */
        built b;
        build(&b, 40, 6, dealt, all_but_last_of_40, level);
        check_all_ways(&b, NULL, 0);
        built_free(&b);
    }
}

/* Rewind: the same events, and damage and cuts reported once. */
static void test_rewind(void)
{
    built b;
    build(&b, 40, 6, dealt, all_but_last_of_40, 0);
    /* Chunk 5's second event: its key index out of range (a keyed body of one key, index width 1). */
    uint8_t *p = b.bytes + chunk_offset(&b, 5) + TL_BLOCK_HEADER_SIZE;
    uint32_t keys_len = (uint32_t)p[32 + 4] | (uint32_t)p[32 + 5] << 8;
    p[32 + 16 + keys_len + 1] = 9;
    tracelog_reader_options opt;
    tracelog_reader_options_init(&opt);
    opt.ignore_checksums = 1; /* the damage is in the body, not in a checksum */
    opt.max_chunk_size = limit_for(&b, 3); /* the set ends after every third chunk */
    int fd = tl_test_tmpfd();
    tl_test_fd_set(fd, b.bytes, b.len);
    tracelog_reader *r;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, &opt, &r, &err), TRACELOG_OK))
        return;
    tl_test_events first = {0}, again = {0};
    tracelog_event ev;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
        tl_test_events_push(&first, &ev);
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    uint64_t problems = info.problems;
    size_t cuts = 0, bad = 0;
    for (size_t i = 0; i < tracelog_reader_problem_count(r); i++) {
        cuts += strcmp(tracelog_reader_problem_condition(r, i), "MERGE_SET_TOO_LARGE") == 0;
        bad += strcmp(tracelog_reader_problem_condition(r, i), "BAD_EVENT") == 0;
    }
    CHECK_EQ(cuts, 13);
    CHECK_EQ(bad, 1);
    CHECK_EQ(cuts + bad, problems);
    CHECK_EQ(first.n, 40 * 6 - 5); /* chunk 5 delivers its first event */
    CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
        tl_test_events_push(&again, &ev);
    CHECK_EVENTS_EQ(again.ev, again.n, first.ev, first.n);
    tracelog_reader_get_info(r, &info);
    CHECK_EQ(info.problems, problems);
    /* The pipe reads the same, with the same problems. */
    tl_test_readout pipe;
    tl_test_read_bytes_pipe(b.bytes, b.len, &opt, &pipe);
    CHECK_EVENTS_EQ(pipe.events.ev, pipe.events.n, first.ev, first.n);
    CHECK_EQ(pipe.nproblems, problems);
    tl_test_readout_free(&pipe);
    tracelog_reader_close(r);
    close(fd);
    tl_test_events_free(&first);
    tl_test_events_free(&again);
    built_free(&b);
}

/* Four sets of 10 chunks, each a time window; within one, the chunks interleave. */
static uint64_t windows(uint32_t j, uint32_t i) { return T + (uint64_t)(j / 10) * 1000 + i * 40 + (j % 10) * 3; }
static int sets_of_10(uint32_t j) { return j % 10 != 9; }

/* Time seek into every place of the sets: exactly the events at or after the target follow. */
static void test_seek_into_sets(void)
{
    built b;
    build(&b, 40, 6, windows, sets_of_10, 0);
    check_all_ways(&b, NULL, 0);
    for (int limited = 0; limited <= 1; limited++) {
        tracelog_reader_options opt;
        tracelog_reader_options_init(&opt);
        if (limited) /* sets cut: a seek must start where a whole read's set starts, to cut them alike */
            opt.max_chunk_size = limit_for(&b, 3);
        int fd = tl_test_tmpfd();
        tl_test_fd_set(fd, b.bytes, b.len);
        tracelog_reader *r;
        tracelog_error err;
        if (!CHECK_STATUS(tracelog_reader_open(fd, &opt, &r, &err), TRACELOG_OK))
            return;
        tl_test_events all = {0};
        tracelog_event ev;
        while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
            tl_test_events_push(&all, &ev);
        CHECK_EQ(all.n, 240);
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        CHECK_EQ(info.problems, limited ? 12 : 0); /* sets of 10 cut after 3, 6 and 9 chunks */
        for (size_t k = 0; k < all.n; k += 7) {
            uint64_t target = all.ev[k].timestamp_ns - (k % 2); /* at an event, and just before one */
            tl_test_context("limited %d, target %zu", limited, k);
            if (!CHECK_STATUS(tracelog_reader_seek_time(r, target), TRACELOG_OK))
                break;
            size_t from = 0;
            while (from < all.n && all.ev[from].timestamp_ns < target)
                from++;
            size_t got = 0;
            for (; tracelog_reader_next(r, &ev) == TRACELOG_OK; got++)
                if (from + got >= all.n || !tl_test_event_equal(&ev, &all.ev[from + got]))
                    break;
            CHECK_EQ(from + got, all.n);
        }
        tl_test_context(NULL);
        tracelog_reader_close(r);
        close(fd);
        tl_test_events_free(&all);
    }
    built_free(&b);
}

/* A set of 1100 chunks, every one flagged: it ends after 1024, once, at chunk 1024's block. */
static uint64_t one_each(uint32_t j, uint32_t i) { return T + (uint64_t)j * 10 + i; }
static int every(uint32_t j)
{
    (void)j;
    return 1;
}

static void test_chunk_count_limit(void)
{
    built b;
    build(&b, 1100, 1, one_each, every, 0);
    check_all_ways(&b, NULL, 1);
    tl_test_readout out;
    tl_test_read_bytes(b.bytes, b.len, NULL, &out);
    if (CHECK_EQ(out.nproblems, 1)) {
        CHECK_EQ(out.problems[0].code, TRACELOG_E_LIMIT);
        CHECK_EQ(out.problems[0].offset, chunk_offset(&b, 1024));
        CHECK_EQ(out.problems[0].length, 0);
    }
    tl_test_readout_free(&out);
    built_free(&b);
}

/* The decoded-bytes limit: every event delivered, in each part's merged order; one cut per part. */
static uint64_t reversed_pairs(uint32_t j, uint32_t i) { return T + (uint64_t)i * 100 + (j % 2 ? 0 : 50); }

static void test_byte_limit(void)
{
    built b;
    build(&b, 6, 4, reversed_pairs, every, 0);
    /* Each chunk is a set of its own under a limit below two chunks: the order is the file's. */
    tl_test_events_free(&b.want);
    memset(&b.want, 0, sizeof b.want);
    for (uint32_t j = 0; j < 6; j++)
        for (uint32_t i = 0; i < 4; i++) {
            planned p = {reversed_pairs(j, i), j, i};
            tracelog_event ev = event_of(&p);
            tl_test_events_push(&b.want, &ev);
        }
    tracelog_reader_options opt;
    tracelog_reader_options_init(&opt);
    opt.max_chunk_size = limit_for(&b, 1);
    check_all_ways(&b, &opt, 5);
    built_free(&b);
}

int main(void)
{
    TL_TEST_RUN(test_many_chunks_one_set);
    TL_TEST_RUN(test_rewind);
    TL_TEST_RUN(test_seek_into_sets);
    TL_TEST_RUN(test_chunk_count_limit);
    TL_TEST_RUN(test_byte_limit);
    return tl_test_finish();
}
