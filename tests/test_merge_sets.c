/*
 * Merge sets (format-spec/ptl-format.md 6.10) where the conformance vectors
 * cannot reach: many chunks per set (the reader's heap against a stable
 * sort), rewind and time seek inside sets, a pipe fed a few bytes at a
 * time, and the two limits of a set (decoded bytes, 1024 chunks) with the
 * problems they report, once each. Chunks that start in another order than
 * the file's, late starters tying with the chunk being delivered, chunks
 * whose events are not in order, and random sets: against the rule of 6.10
 * applied literally (merge_by_rule).
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
                            .address = 0x401000 + p->i, .payload_len = 0, .kernel_tid = 5000 + p->chunk};
}

/*
 * The rule of 6.10, literally: each time, the next event of the chunk whose
 * next event has the least timestamp, the first such chunk on ties. p holds
 * one set's events chunk after chunk, each chunk's in its order; they are
 * put in the merged order.
 */
static void merge_by_rule(planned *p, size_t n)
{
    planned *out = malloc(sizeof *out * (n ? n : 1));
    size_t *pos = malloc(sizeof *pos * (n ? n : 1)); /* next event of each chunk (by first index) */
    for (size_t k = 0; k < n; k++)
        pos[k] = k;
    for (size_t o = 0; o < n; o++) {
        size_t best = n;
        for (size_t k = 0; k < n; k++) {
            if (k > 0 && p[k].chunk == p[k - 1].chunk)
                continue; /* k is not the first event of its chunk */
            size_t at = pos[k];
            if (at >= n || p[at].chunk != p[k].chunk)
                continue; /* the chunk is done */
            if (best == n || p[at].ts < p[best].ts)
                best = at;
        }
        size_t first = best; /* the chunk's first event: where its position is kept */
        while (first > 0 && p[first - 1].chunk == p[best].chunk)
            first--;
        out[o] = p[best];
        pos[first]++;
    }
    memcpy(p, out, sizeof *out * n);
    free(out);
    free(pos);
}

/* When each chunk's events are in order, the rule is a stable sort on (timestamp, chunk): a check of merge_by_rule. */
static void check_rule_is_sort(const planned *p, size_t n)
{
    for (size_t k = 1; k < n; k++)
        if (p[k].chunk == p[k - 1].chunk && p[k].ts < p[k - 1].ts)
            return;
    planned *a = malloc(sizeof *a * (n ? n : 1)), *b = malloc(sizeof *b * (n ? n : 1));
    memcpy(a, p, sizeof *a * n);
    memcpy(b, p, sizeof *b * n);
    qsort(a, n, sizeof *a, by_ts_then_chunk);
    merge_by_rule(b, n);
    for (size_t k = 0; k < n; k++)
        if (!CHECK(a[k].chunk == b[k].chunk && a[k].i == b[k].i))
            break;
    free(a);
    free(b);
}

/*
 * Writes `nchunks` chunks of `per` events each, chunk j's event i at
 * ts(j, i), one flush per chunk, and marks chunk j with MERGE_NEXT when
 * flagged(j). want: the events merged per set by the rule of 6.10, without
 * those lost(j, i) says a reader drops (damage made by the caller; NULL:
 * none).
 */
static void build_lossy(built *b, uint32_t nchunks, uint32_t per, uint64_t (*ts)(uint32_t, uint32_t),
                        int (*flagged)(uint32_t), int level, int (*lost)(uint32_t, uint32_t))
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
            planned p = {ts(j, i), j, i};
            tracelog_event ev = event_of(&p);
            if (tracelog_writer_append(w, &ev) != TRACELOG_OK)
                TL_DIE("append");
            if (!lost || !lost(j, i))
                plan[n++] = p;
        }
        if (tracelog_writer_flush(w) != TRACELOG_OK)
            TL_DIE("flush");
        if (!flagged(j) || j == nchunks - 1) { /* the set ends: its events in merged order */
            check_rule_is_sort(plan + set_from, n - set_from);
            merge_by_rule(plan + set_from, n - set_from);
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

static void build(built *b, uint32_t nchunks, uint32_t per, uint64_t (*ts)(uint32_t, uint32_t),
                  int (*flagged)(uint32_t), int level)
{
    build_lossy(b, nchunks, per, ts, flagged, level, NULL);
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
        for (size_t e = 0; e < outs[k]->events.n; e++) /* each chunk's thread: the kernel tids of merged threads */
            if (!CHECK_EQ(outs[k]->events.ev[e].kernel_tid, 5000 + (outs[k]->events.ev[e].tid - 1000)))
                break;
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
    tl_test_read_ahead_from_env(r);
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

/* Time seek into every place of the sets: exactly the events at or after the target follow; ended there,
   exactly those before it come out, and what follows the target's set is not read. */
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
        tl_test_read_ahead_from_env(r);
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
            /* Ended at the target: the events before it, as the whole read gives them, and fewer read
               when sets are left (a set is read whole). */
            if (!CHECK_STATUS(tracelog_reader_set_end_time(r, target), TRACELOG_OK) ||
                !CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK))
                break;
            size_t before = 0, read = 0; /* all.ev[before] is the whole read's next event before the target */
            int prefix = 1;              /* a set is read whole: what comes out begins the whole read */
            while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
                prefix &= read < all.n && tl_test_event_equal(&ev, &all.ev[read]);
                read++;
                if (ev.timestamp_ns >= target)
                    continue;
                while (before < all.n && all.ev[before].timestamp_ns >= target)
                    before++;
                if (!CHECK(before < all.n && tl_test_event_equal(&ev, &all.ev[before])))
                    break;
                before++;
            }
            while (before < all.n && all.ev[before].timestamp_ns >= target)
                before++;
            CHECK_EQ(before, all.n); /* none left out */
            CHECK(limited || prefix);
            CHECK(target >= all.ev[all.n - 1].timestamp_ns - 1000 || read < all.n);
            CHECK_STATUS(tracelog_reader_set_end_time(r, UINT64_MAX), TRACELOG_OK);
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

/*
 * The writer's sets (a flusher per group of lanes): two groups whose chunks
 * follow each other in time, interleaved with the other group's, in the file
 * by completion (a1 a2 b1 a3 b2 b3 a4 b4 a5 b5), events of A and B tying
 * every fifth time. Then a set of five chunks in the file in reverse time
 * order, and one where they alternate between early and late.
 */
static const uint32_t group_of[10] = {0, 0, 1, 0, 1, 1, 0, 1, 0, 1}; /* a1 a2 b1 a3 b2 b3 a4 b4 a5 b5 */
static const uint32_t part_of[10] = {0, 1, 0, 2, 1, 2, 3, 3, 4, 4};
static uint64_t groups(uint32_t j, uint32_t i)
{
    if (j < 10) {
        uint64_t base = T + (uint64_t)part_of[j] * 1000 + i * 20;
        return base + (group_of[j] && i % 5 ? 10 : 0);
    }
    if (j < 15) /* reverse */
        return T + 100000 + (uint64_t)(14 - j) * 1000 + i * 20;
    return T + 200000 + (uint64_t)((j - 15) % 2 ? 4 - (j - 15) / 2 : (j - 15) / 2) * 1000 + i * 20; /* 0 4 1 3 2 */
}
static int sets_10_5_5(uint32_t j) { return j != 9 && j != 14 && j != 19; }

static void test_start_order_differs(void)
{
    for (int level = 0; level <= 1; level++) {
        built b;
        build(&b, 20, 50, groups, sets_10_5_5, level);
        for (size_t k = 1; k < b.want.n; k++) /* each chunk's events in order: the merge is in time order */
            if (!CHECK(b.want.ev[k - 1].timestamp_ns <= b.want.ev[k].timestamp_ns))
                break;
        check_all_ways(&b, NULL, 0);
        built_free(&b);
    }
}

/*
 * Chunks that start late, at a timestamp equal to the next event of the
 * chunk being delivered: one earlier in delivery order goes first (set 1),
 * one later goes after (set 2); chunks whose first event is not their
 * min_ts (set 3); a late starter whose first event is bad: it delivers
 * nothing and the set goes on (set 4, chunk 11), reported once.
 */
static const uint64_t late_ts[12][4] = {
    {200, 200, 210, 220}, {100, 110, 200, 200},                        /* set 1 */
    {300, 310, 320, 330}, {310, 310, 400, 400},                        /* set 2 */
    {550, 500, 520, 600}, {510, 550, 560, 580}, {505, 505, 700, 500},  /* set 3 */
    {800, 810, 820, 830}, {830, 830, 840, 850}, {790, 800, 900, 900},  /* set 4 */
    {820, 860, 870, 880}, {805, 806, 807, 808},
};
static uint64_t late(uint32_t j, uint32_t i) { return T + late_ts[j][i]; }
static int sets_of_late(uint32_t j) { return j != 1 && j != 3 && j != 6 && j != 11; }
static int first_of_11_bad(uint32_t j, uint32_t i)
{
    (void)i;
    return j == 11;
}

static void test_late_starts(void)
{
    built b;
    build(&b, 7, 4, late, sets_of_late, 0); /* sets 1 to 3 */
    static const uint32_t chunk_want[] = {1, 1, 0, 0, 1, 1, 0, 0, /* set 1 */
                                          2, 2, 3, 3, 2, 2, 3, 3, /* set 2 */
                                          6, 6, 5, 4, 4, 4, 5, 5, 5, 4, 6, 6}; /* set 3 */
    static const uint64_t ts_want[] = {100, 110, 200, 200, 200, 200, 210, 220, 300, 310, 310, 310, 320, 330, 400, 400,
                                       505, 505, 510, 550, 500, 520, 550, 560, 580, 600, 700, 500};
    CHECK_EQ(b.want.n, 28); /* merge_by_rule against the rule worked out by hand */
    for (size_t k = 0; k < b.want.n && k < 28; k++) {
        tl_test_context("event %zu", k);
        CHECK_EQ(b.want.ev[k].timestamp_ns, T + ts_want[k]);
        CHECK_EQ(b.want.ev[k].tid, 1000 + chunk_want[k]);
    }
    tl_test_context(NULL);
    check_all_ways(&b, NULL, 0);
    built_free(&b);

    build_lossy(&b, 12, 4, late, sets_of_late, 0, first_of_11_bad);
    uint8_t *p = b.bytes + chunk_offset(&b, 11) + TL_BLOCK_HEADER_SIZE;
    uint32_t keys_len = (uint32_t)p[32 + 4] | (uint32_t)p[32 + 5] << 8;
    p[32 + 16 + keys_len] = 9; /* its first event's key index out of range */
    tracelog_reader_options opt;
    tracelog_reader_options_init(&opt);
    opt.ignore_checksums = 1;
    check_all_ways(&b, &opt, 1);
    tl_test_readout out;
    tl_test_read_bytes(b.bytes, b.len, &opt, &out);
    if (CHECK_EQ(out.nproblems, 1))
        CHECK_EQ(out.problems[0].offset, chunk_offset(&b, 11));
    tl_test_readout_free(&out);
    int fd = tl_test_tmpfd(); /* rewind: the same events, the problem not reported again */
    tl_test_fd_set(fd, b.bytes, b.len);
    tracelog_reader *r;
    tracelog_error err;
    if (CHECK_STATUS(tracelog_reader_open(fd, &opt, &r, &err), TRACELOG_OK)) {
        tl_test_read_ahead_from_env(r);
        for (int pass = 0; pass < 2; pass++) {
            tl_test_events got = {0};
            tracelog_event ev;
            while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
                tl_test_events_push(&got, &ev);
            CHECK_EVENTS_EQ(got.ev, got.n, b.want.ev, b.want.n);
            CHECK_EQ(tracelog_reader_problem_count(r), 1);
            tl_test_events_free(&got);
            CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
        }
        tracelog_reader_close(r);
    }
    close(fd);
    built_free(&b);
}

/*
 * Read in ranges of chunk indexes (tracelog_reader_read_range), one after
 * the other on one reader: the whole read's events, in order, for any cut
 * points (inside sets too: a range reads the sets that start in it), and
 * rewind goes back to the range's first set.
 */
static uint64_t rnd(void);

static void check_ranges(const built *b)
{
    int fd = tl_test_tmpfd();
    tl_test_fd_set(fd, b->bytes, b->len);
    tracelog_reader *r;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK))
        return;
    tl_test_read_ahead_from_env(r);
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    CHECK_STATUS(tracelog_reader_read_range(r, 1, 0), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_reader_read_range(r, 0, info.chunks + 1), TRACELOG_E_INVAL);
    for (int cuts = 0; cuts < 4; cuts++) {
        tl_test_context("ranges, cut %d", cuts);
        tl_test_events got = {0};
        uint64_t from = 0;
        while (from < info.chunks) {
            uint64_t to = cuts == 0 ? from + 1 : from + rnd() % (info.chunks - from + 1); /* empty ranges too */
            if (!CHECK_STATUS(tracelog_reader_read_range(r, from, to), TRACELOG_OK))
                break;
            size_t at = got.n;
            tracelog_event ev;
            while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
                tl_test_events_push(&got, &ev);
            size_t n = got.n - at; /* read again from the range's start: the same events */
            if (n && CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK) &&
                CHECK_STATUS(tracelog_reader_next(r, &ev), TRACELOG_OK))
                CHECK(tl_test_event_equal(&ev, &got.ev[at]));
            from = to;
        }
        CHECK_EVENTS_EQ(got.ev, got.n, b->want.ev, b->want.n);
        for (size_t e = 0; e < got.n; e++)
            if (!CHECK_EQ(got.ev[e].kernel_tid, 5000 + (got.ev[e].tid - 1000)))
                break;
        tl_test_events_free(&got);
    }
    tracelog_reader_info after;
    tracelog_reader_get_info(r, &after);
    CHECK_EQ(after.problems, 0);
    tracelog_reader_close(r);
    close(fd);
    dribble d = {b->bytes, b->len, 0, 0}; /* a stream cannot */
    if (CHECK_STATUS(tracelog_reader_open_read(dribble_read, &d, NULL, &r, &err), TRACELOG_OK)) {
        CHECK_STATUS(tracelog_reader_read_range(r, 0, 0), TRACELOG_E_NOT_SEEKABLE);
        tracelog_reader_close(r);
    }
}

/* Random sets against the rule: chunks in order or not, many ties, sets of 1 to 30 chunks. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}
static uint64_t rnd_ts[60][8];
static int rnd_flag[60];
static uint64_t from_rnd(uint32_t j, uint32_t i) { return rnd_ts[j][i]; }
static int rnd_flagged(uint32_t j) { return rnd_flag[j]; }

static void test_random_sets(void)
{
    for (int round = 0; round < 60; round++) {
        uint32_t nchunks = 1 + (uint32_t)(rnd() % 60), per = 1 + (uint32_t)(rnd() % 8);
        int mode = round % 3, join = (int)(rnd() % 10);
        uint64_t span = 1 + rnd() % 200; /* small: ties */
        for (uint32_t j = 0; j < nchunks; j++) {
            uint64_t start = T + rnd() % (span * 4);
            for (uint32_t i = 0; i < per; i++) {
                if (mode == 0) /* each chunk in order */
                    rnd_ts[j][i] = (i ? rnd_ts[j][i - 1] : start) + rnd() % (span / 8 + 1);
                else if (mode == 1) /* anything */
                    rnd_ts[j][i] = T + rnd() % span;
                else /* in order but for one event now and then */
                    rnd_ts[j][i] = rnd() % 4 ? (i ? rnd_ts[j][i - 1] : start) + rnd() % 3 : start + rnd() % span;
            }
            rnd_flag[j] = (int)(rnd() % 10) < join;
        }
        tl_test_context("round %d: %u chunks of %u, mode %d", round, nchunks, per, mode);
        built b;
        build(&b, nchunks, per, from_rnd, rnd_flagged, round % 2);
        check_all_ways(&b, NULL, 0);
        check_ranges(&b);
        built_free(&b);
    }
    tl_test_context(NULL);
}

int main(void)
{
    TL_TEST_RUN(test_many_chunks_one_set);
    TL_TEST_RUN(test_rewind);
    TL_TEST_RUN(test_seek_into_sets);
    TL_TEST_RUN(test_chunk_count_limit);
    TL_TEST_RUN(test_byte_limit);
    TL_TEST_RUN(test_start_order_differs);
    TL_TEST_RUN(test_late_starts);
    TL_TEST_RUN(test_random_sets);
    return tl_test_finish();
}
