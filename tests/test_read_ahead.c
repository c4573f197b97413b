/*
 * Read ahead (tracelog_reader_set_read_ahead): a reader that loads the next
 * chunks on threads of its own (and, while it would wait, one itself)
 * delivers the same events and records the same problems, at the same
 * offsets and in the same order, as one that loads each chunk when it is
 * due: on a clean log of many chunks, on damaged chunks, on a file changed
 * or cut after it was opened, across rewind, time seek and read ahead
 * switched on and off part way, with one thread and several. It must also
 * actually read ahead: every chunk but the first was loaded ahead, but for
 * chunks of a few events, which the caller's thread loads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "reader/internal.h"
#include "tl_test.h"

typedef struct readout {
    tl_test_events events;
    size_t nproblems;
    tracelog_problem problems[64];
    tracelog_status end;
    unsigned long ahead_hits, ahead_helped;
} readout;

static void readout_free(readout *o) { tl_test_events_free(&o->events); }

/* Reads n events (all when n is 0) with read ahead on or off; what was read goes into o. */
static void read_some(tracelog_reader *r, size_t n, readout *o)
{
    tracelog_event ev;
    size_t got = 0;
    while ((o->end = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        tl_test_events_push(&o->events, &ev);
        if (++got == n)
            break;
    }
}

static void finish(tracelog_reader *r, readout *o)
{
    o->nproblems = tracelog_reader_problem_count(r);
    for (size_t i = 0; i < o->nproblems && i < 64; i++)
        CHECK_STATUS(tracelog_reader_problem(r, i, &o->problems[i]), TRACELOG_OK);
    o->ahead_hits = r->ahead ? tl_read_ahead_hits(r->ahead) : 0;
    o->ahead_helped = r->ahead ? tl_read_ahead_helped(r->ahead) : 0;
}

static tracelog_reader *open_fd(int fd, const tracelog_reader_options *opt)
{
    tracelog_reader *r = NULL;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, opt, &r, &err), TRACELOG_OK))
        TL_DIE("cannot open the log: %s", err.message);
    return r;
}

static void read_all(int fd, const tracelog_reader_options *opt, int ahead, readout *o)
{
    memset(o, 0, sizeof *o);
    tracelog_reader *r = open_fd(fd, opt);
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, ahead), TRACELOG_OK);
    read_some(r, 0, o);
    finish(r, o);
    tracelog_reader_close(r);
}

static void check_same(const readout *got, const readout *want)
{
    CHECK_STATUS(got->end, want->end);
    CHECK_EVENTS_EQ(got->events.ev, got->events.n, want->events.ev, want->events.n);
    if (!CHECK_EQ(got->nproblems, want->nproblems))
        return;
    for (size_t i = 0; i < got->nproblems && i < 64; i++) {
        const tracelog_problem *a = &got->problems[i], *b = &want->problems[i];
        CHECK_STATUS(a->code, b->code);
        CHECK_EQ(a->offset, b->offset);
        CHECK_EQ(a->length, b->length);
        CHECK_STR_EQ(a->message, b->message);
    }
}

/* A log of many small chunks (4 KiB), most compressed. Merge sets: test_merge_sets_read_ahead. */
static int write_log(int fd, size_t n)
{
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_APPEND, n);
    spec.seed = 77;
    spec.payload_max = 64;
    tl_test_log_result res;
    int rc = tl_test_write_log_fd(fd, &spec, &res);
    tl_test_log_result_free(&res);
    return rc;
}

static size_t chunks_of(int fd, tl_test_block **blocks)
{
    size_t len;
    uint8_t *bytes = tl_test_fd_slurp(fd, &len);
    size_t n = tl_test_scan_blocks(bytes, len, blocks, NULL, NULL);
    free(bytes);
    return n;
}

static void test_clean_log(void)
{
    int fd = tl_test_tmpfd();
    if (write_log(fd, 20000))
        return;
    tl_test_block *b;
    size_t nb = chunks_of(fd, &b), nchunks = 0, small = 0;
    for (size_t i = 0; i < nb; i++) {
        nchunks += b[i].type == TL_BLOCK_CHUNK;
        small += b[i].type == TL_BLOCK_CHUNK && nchunks > 1 && b[i].event_count < 16; /* read_ahead.c's AHEAD_MIN_EVENTS */
    }
    free(b);
    CHECK(nchunks >= 20);
    readout plain;
    read_all(fd, NULL, 0, &plain);
    CHECK_EQ(plain.events.n, 20000);
    static const int threads[] = {1, 2, 3, 8, TRACELOG_READ_AHEAD_MAX};
    for (size_t k = 0; k < sizeof threads / sizeof threads[0]; k++) {
        tl_test_context("%d threads", threads[k]);
        readout ahead;
        read_all(fd, NULL, threads[k], &ahead);
        check_same(&ahead, &plain);
        /* Every chunk but the first is loaded ahead when nothing seeks (by a thread, or by the
           caller while it waited for one), but for chunks of a few events, which a handover costs more than. */
        CHECK_EQ(ahead.ahead_hits, nchunks - 1 - small);
        printf("   %d threads: %zu chunks, %lu loaded by the caller while it waited\n", threads[k], nchunks,
               ahead.ahead_helped);
        readout_free(&ahead);
    }
    readout_free(&plain);
    close(fd);
}

static void flip(int fd, uint64_t off)
{
    uint8_t v;
    if (pread(fd, &v, 1, (off_t)off) != 1)
        TL_DIE("pread: %s", strerror(errno));
    v ^= 0x5a;
    if (pwrite(fd, &v, 1, (off_t)off) != 1)
        TL_DIE("pwrite: %s", strerror(errno));
}

/* Damage in chunks (payload checksums; body garbage read with checksums ignored). */
static void test_damaged_chunks(void)
{
    int fd = tl_test_tmpfd();
    if (write_log(fd, 20000))
        return;
    tl_test_block *b;
    size_t nb = chunks_of(fd, &b), hit = 0;
    for (size_t i = 0; i < nb; i++)
        if (b[i].type == TL_BLOCK_CHUNK && i % 3 == 1 && hit++ < 6)
            flip(fd, b[i].offset + TL_BLOCK_HEADER_SIZE + TL_CHUNK_HEADER_SIZE + b[i].payload_len / 3);
    free(b);
    CHECK(hit >= 6);
    tracelog_reader_options unchecked;
    tracelog_reader_options_init(&unchecked);
    unchecked.ignore_checksums = 1;
    const tracelog_reader_options *opts[] = {NULL, &unchecked};
    for (size_t k = 0; k < 4; k++) {
        tl_test_context("%s, %zu threads", k % 2 ? "checksums ignored" : "checksums verified", 1 + k / 2 * 2);
        readout plain, ahead;
        read_all(fd, opts[k % 2], 0, &plain);
        read_all(fd, opts[k % 2], (int)(1 + k / 2 * 2), &ahead);
        CHECK(plain.nproblems >= (k % 2 ? 1u : 6u));
        check_same(&ahead, &plain);
        readout_free(&plain);
        readout_free(&ahead);
    }
    close(fd);
}

/* The file changed after it was opened: a chunk header rewritten, then the file cut short. */
static void test_changed_after_open(void)
{
    int fd = tl_test_tmpfd();
    if (write_log(fd, 20000))
        return;
    tl_test_block *b;
    size_t nb = chunks_of(fd, &b);
    size_t len;
    uint8_t *orig = tl_test_fd_slurp(fd, &len);
    uint64_t header_at = 0, cut_at = 0;
    for (size_t i = 0, c = 0; i < nb; i++)
        if (b[i].type == TL_BLOCK_CHUNK && ++c == 5)
            header_at = b[i].offset;
        else if (b[i].type == TL_BLOCK_CHUNK && c == 12)
            cut_at = b[i].offset + TL_BLOCK_HEADER_SIZE + 10;
    free(b);
    if (!CHECK(header_at && cut_at))
        return;
    readout out[3];
    for (int ahead = 0; ahead < 3; ahead++) {
        tl_test_fd_set(fd, orig, len);
        memset(&out[ahead], 0, sizeof out[ahead]);
        tracelog_reader *r = open_fd(fd, NULL);
        CHECK_STATUS(tracelog_reader_set_read_ahead(r, ahead), TRACELOG_OK);
        flip(fd, header_at + 20); /* in the header: its checksum fails */
        if (ftruncate(fd, (off_t)cut_at))
            TL_DIE("ftruncate: %s", strerror(errno));
        read_some(r, 0, &out[ahead]);
        finish(r, &out[ahead]);
        tracelog_reader_close(r);
    }
    CHECK(out[0].nproblems >= 2);
    check_same(&out[1], &out[0]);
    check_same(&out[2], &out[0]);
    for (int i = 0; i < 3; i++)
        readout_free(&out[i]);
    free(orig);
    close(fd);
}

/* Rewind, time seek and read ahead switched part way: the same events as a plain reader's. */
static void test_rewind_seek_switch(void)
{
    int fd = tl_test_tmpfd();
    if (write_log(fd, 20000))
        return;
    readout all;
    read_all(fd, NULL, 0, &all);
    const tl_test_events *e = &all.events;
    if (!CHECK_EQ(e->n, 20000)) {
        readout_free(&all);
        return;
    }
    tracelog_reader *r = open_fd(fd, NULL);
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, 1), TRACELOG_OK);
    readout o = {0};
    read_some(r, 7000, &o);
    CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    read_some(r, 3000, &o); /* events 0..2999 again */
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, 0), TRACELOG_OK);
    read_some(r, 2000, &o); /* 3000..4999 on the caller's thread */
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, 3), TRACELOG_OK);
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, 3), TRACELOG_OK); /* twice: harmless */
    uint64_t ts = e->ev[15000].timestamp_ns;
    size_t first = 15000;
    while (first > 0 && e->ev[first - 1].timestamp_ns >= ts)
        first--;
    CHECK_STATUS(tracelog_reader_seek_time(r, ts), TRACELOG_OK);
    read_some(r, 0, &o); /* from the first event at ts to the end */
    finish(r, &o);
    tracelog_reader_close(r);

    tl_test_events want = {0};
    for (size_t i = 0; i < 7000; i++)
        tl_test_events_push(&want, &e->ev[i]);
    for (size_t i = 0; i < 5000; i++)
        tl_test_events_push(&want, &e->ev[i]);
    for (size_t i = first; i < e->n; i++)
        tl_test_events_push(&want, &e->ev[i]);
    CHECK_STATUS(o.end, TRACELOG_END);
    CHECK_EVENTS_EQ(o.events.ev, o.events.n, want.ev, want.n);
    CHECK_EQ(o.nproblems, 0);
    tl_test_events_free(&want);
    readout_free(&o);
    readout_free(&all);
    close(fd);
}

/* Only a seekable file reads ahead; bad arguments. */
static void test_refused(void)
{
    CHECK_STATUS(tracelog_reader_set_read_ahead(NULL, 1), TRACELOG_E_INVAL);
    int fd = tl_test_tmpfd();
    if (write_log(fd, 100))
        return;
    tracelog_reader *f = open_fd(fd, NULL);
    CHECK_STATUS(tracelog_reader_set_read_ahead(f, -1), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_reader_set_read_ahead(f, TRACELOG_READ_AHEAD_MAX + 1), TRACELOG_E_INVAL);
    tracelog_reader_close(f);
    size_t len;
    uint8_t *bytes = tl_test_fd_slurp(fd, &len);
    int p[2];
    if (pipe(p))
        TL_DIE("pipe: %s", strerror(errno));
    if (len > 60000)
        TL_DIE("log too large for a pipe's buffer");
    if (write(p[1], bytes, len) != (ssize_t)len)
        TL_DIE("write: %s", strerror(errno));
    close(p[1]);
    tracelog_reader *r = open_fd(p[0], NULL);
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, 1), TRACELOG_E_NOT_SEEKABLE);
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, 0), TRACELOG_E_NOT_SEEKABLE);
    readout o = {0};
    read_some(r, 0, &o);
    CHECK_EQ(o.events.n, 100);
    tracelog_reader_close(r);
    readout_free(&o);
    close(p[0]);
    free(bytes);
    close(fd);
}

/* Closing a reader whose thread is loading a chunk: no leak, no wait beyond that load. */
static void test_close_while_loading(void)
{
    int fd = tl_test_tmpfd();
    if (write_log(fd, 20000))
        return;
    for (int i = 0; i < 50; i++) {
        tracelog_reader *r = open_fd(fd, NULL);
        CHECK_STATUS(tracelog_reader_set_read_ahead(r, 1 + i % 4), TRACELOG_OK);
        readout o = {0};
        read_some(r, (size_t)(1 + i * 37), &o);
        tracelog_reader_close(r);
        readout_free(&o);
    }
    close(fd);
}

/* Read system calls this process made so far (/proc/self/io's syscr; pread counts), or -1 without it. */
static long read_calls(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long n = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "syscr: %ld", &n) == 1)
            break;
    if (f)
        fclose(f);
    return n;
}

/*
 * A log of small flushes (a program recording a few events per flush
 * interval): 5,000 chunks of one event, each followed by a status block.
 * The open scan reads its blocks through a window, not 2-3 preads each
 * (24,000 before: `ptlog info` of 100,000 such chunks took 3.2 s, 0.23 s
 * now), a chunk loads with one pread (its header with its payload: two
 * before), and no chunk of a few events is handed to a thread (a handover
 * cost more than the load). The events are those of a reader without
 * threads.
 */
static void test_small_flushes(void)
{
    enum { N = 5000 };
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, NULL, &w, NULL), TRACELOG_OK))
        return;
    CHECK_STATUS(tracelog_writer_define_event(w, 40, "tick"), TRACELOG_OK);
    for (uint64_t i = 0; i < N; i++) {
        tracelog_event ev = {.timestamp_ns = 1000000000 + i * 1000, .event_id = 40, .pid = 7, .tid = 0x1000,
                             .kernel_tid = 8, .payload = &i, .payload_len = sizeof i};
        CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
        CHECK_STATUS(tracelog_writer_flush(w), TRACELOG_OK);
    }
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);
    long before = read_calls();
    tracelog_reader *r = open_fd(fd, NULL);
    long opened = read_calls();
    readout plain = {0};
    read_some(r, 0, &plain);
    long read = read_calls();
    tracelog_reader_close(r);
    CHECK_EQ(plain.events.n, N);
    if (before >= 0) {
        printf("   open: %ld reads for %d chunks; reading them: %ld\n", opened - before, N, read - opened);
        CHECK_MSG(opened - before < N / 10, "the open scan made %ld reads for %d small blocks", opened - before, 2 * N);
        CHECK_MSG(read - opened <= N + 8, "reading %d chunks made %ld reads", N, read - opened);
    }
    readout ahead;
    read_all(fd, NULL, 2, &ahead);
    check_same(&ahead, &plain);
    CHECK_EQ(ahead.ahead_hits, 0);
    readout_free(&ahead);
    readout_free(&plain);
    close(fd);
}

int main(void)
{
    tl_test_run("test_clean_log", test_clean_log);
    tl_test_run("test_damaged_chunks", test_damaged_chunks);
    tl_test_run("test_changed_after_open", test_changed_after_open);
    tl_test_run("test_rewind_seek_switch", test_rewind_seek_switch);
    tl_test_run("test_refused", test_refused);
    tl_test_run("test_close_while_loading", test_close_while_loading);
    tl_test_run("test_small_flushes", test_small_flushes);
    return tl_test_finish();
}
