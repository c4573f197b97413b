/*
 * A log cut short (a crash, a full disk, a copy in progress) at EVERY byte
 * length: the reader returns exactly the events of the chunks complete within
 * the cut, never an altered one, reports a torn tail as TRACELOG_E_TRUNCATED,
 * and a forward-only (pipe) reader agrees with the seekable one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "tl_test.h"

typedef struct small_log {
    tl_test_log_spec spec;
    tl_test_log_result res;
    tl_test_events all;   /* every event of the log, in order */
    tl_test_block *blocks;
    size_t nblocks;
} small_log;

/* A multi-chunk APPEND log of a few KiB, with status blocks between chunks. */
static int make_log(small_log *l)
{
    memset(l, 0, sizeof *l);
    tl_test_log_spec_init(&l->spec, TRACELOG_POLICY_APPEND, 100);
    l->spec.seed = 77;
    l->spec.flush_every = 40;
    if (tl_test_write_log_mem(&l->spec, &l->res))
        return -1;
    tl_test_gen_events(l->spec.seed, 0, l->spec.n_events, l->spec.payload_max, &l->all);
    l->nblocks = tl_test_scan_blocks(l->res.bytes, l->res.len, &l->blocks, NULL, NULL);
    size_t chunks = 0;
    for (size_t i = 0; i < l->nblocks; i++)
        chunks += l->blocks[i].type == TL_BLOCK_CHUNK;
    /* The sweeps below need several chunks and must stay fast. */
    if (!CHECK(chunks >= 5) || !CHECK(l->res.len <= 10000))
        return -1;
    return 0;
}

static void free_log(small_log *l)
{
    tl_test_log_result_free(&l->res);
    tl_test_events_free(&l->all);
    free(l->blocks);
}

/* What a reader must return for the first len bytes. */
typedef struct expectation {
    tracelog_status open_status;
    size_t events;        /* the first `events` events of the log */
    int cut;              /* len ends inside a block (or the header) */
    int have_meta;        /* the metadata block is complete */
    int clean;
} expectation;

static expectation expect_for(const small_log *l, size_t len)
{
    expectation x = {TRACELOG_OK, 0, 0, 0, len == l->res.len};
    if (len < TL_HEADER_SIZE) {
        x.open_status = TRACELOG_E_TRUNCATED;
        return x;
    }
    x.cut = len != TL_HEADER_SIZE;
    for (size_t i = 0; i < l->nblocks; i++) {
        const tl_test_block *b = &l->blocks[i];
        uint64_t end = b->offset + b->span;
        if (end == len)
            x.cut = 0;
        if (end > len)
            break;
        if (b->type == TL_BLOCK_CHUNK)
            x.events = b->first_event + b->event_count;
        if (b->type == TL_BLOCK_METADATA)
            x.have_meta = 1;
    }
    return x;
}

static void check_readout(const small_log *l, const expectation *x, const tl_test_readout *out)
{
    if (!CHECK_STATUS(out->open_status, x->open_status) || x->open_status != TRACELOG_OK)
        return;
    CHECK_STATUS(out->next_status, TRACELOG_END);
    CHECK_EVENTS_EQ(out->events.ev, out->events.n, l->all.ev, x->events);
    CHECK_KERNEL_TIDS_EQ(out->events.ev, out->events.n, l->all.ev, x->events);
    CHECK_EQ(out->info.clean, x->clean);
    if (x->cut)
        CHECK(tl_test_readout_problems(out, TRACELOG_E_TRUNCATED) >= 1);
    else if (x->have_meta)
        CHECK_EQ(out->nproblems, 0); /* a log that ends between blocks is not damaged */
    if (x->have_meta)
        CHECK_METADATA_EQ(&out->meta, &l->res.meta);
    /* The status never claims more written events than the log holds. */
    CHECK(out->status.events_written <= x->events);
    if (x->clean)
        CHECK_LOG_STATUS_EQ(&out->status, &l->res.status);
}

static void test_every_length(void)
{
    small_log l;
    if (make_log(&l) == 0) {
        int fd = tl_test_tmpfd();
        unsigned long failures_before = tl_test_failures();
        for (size_t len = 0; len <= l.res.len; len++) {
            tl_test_context("file cut to %zu of %zu bytes", len, l.res.len);
            expectation x = expect_for(&l, len);
            tl_test_fd_set(fd, l.res.bytes, len);
            tl_test_readout out;
            tl_test_read_fd(fd, NULL, &out);
            check_readout(&l, &x, &out);
            if (tl_test_failures() != failures_before) {
                tl_test_readout_dump(&out);
                tl_test_readout_free(&out);
                break; /* the first failing length tells the story */
            }
            tl_test_readout_free(&out);
        }
        printf("   swept %zu lengths (%zu blocks)\n", l.res.len + 1, l.nblocks);
        close(fd);
    }
    free_log(&l);
}

static int same_problems(const tl_test_readout *a, const tl_test_readout *b)
{
    if (a->nproblems != b->nproblems)
        return 0;
    for (size_t i = 0; i < a->nproblems; i++)
        if (a->problems[i].code != b->problems[i].code || a->problems[i].offset != b->problems[i].offset)
            return 0;
    return 1;
}

static void test_pipe_lengths(void)
{
    small_log l;
    if (make_log(&l) == 0) {
        int fd = tl_test_tmpfd();
        unsigned long failures_before = tl_test_failures();
        size_t swept = 0;
        /* Every 7th length, and the whole log. */
        for (size_t len = 0;; len = len + 7 < l.res.len ? len + 7 : l.res.len) {
            tl_test_context("pipe, cut to %zu of %zu bytes", len, l.res.len);
            expectation x = expect_for(&l, len);
            tl_test_readout piped, file;
            tl_test_read_bytes_pipe(l.res.bytes, len, NULL, &piped);
            check_readout(&l, &x, &piped);
            /* The same as what the seekable reader finds. */
            tl_test_fd_set(fd, l.res.bytes, len);
            tl_test_read_fd(fd, NULL, &file);
            CHECK_STATUS(piped.open_status, file.open_status);
            CHECK_EVENTS_EQ(piped.events.ev, piped.events.n, file.events.ev, file.events.n);
            CHECK_KERNEL_TIDS_EQ(piped.events.ev, piped.events.n, file.events.ev, file.events.n);
            CHECK_EQ(piped.info.clean, file.info.clean);
            CHECK_LOG_STATUS_EQ(&piped.status, &file.status);
            CHECK_MSG(same_problems(&piped, &file), "pipe and file readers report different problems");
            if (tl_test_failures() != failures_before) {
                printf("   pipe:\n");
                tl_test_readout_dump(&piped);
                printf("   file:\n");
                tl_test_readout_dump(&file);
            }
            tl_test_readout_free(&piped);
            tl_test_readout_free(&file);
            swept++;
            if (tl_test_failures() != failures_before || len == l.res.len)
                break;
        }
        printf("   swept %zu lengths through a pipe\n", swept);
        close(fd);
    }
    free_log(&l);
}

int main(void)
{
    TL_TEST_RUN(test_every_length);
    TL_TEST_RUN(test_pipe_lengths);
    return tl_test_finish();
}
