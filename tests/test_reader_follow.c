/*
 * tracelog_reader_open_follow (issue 28): a log read while it is written.
 * The log is written out a few bytes at a time, cut at every length: the
 * follower delivers the events of complete chunks only, in order, never
 * reports the block being written as damage, and once stopped reads the
 * whole log as a finished one (closed, clean); stopped on a cut block it
 * reports TORN_TAIL. Damage in a complete block is reported while
 * following. follow_wait: more data, timeout, a file that shrank. A LOOP
 * log and a pipe are refused.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "tl_test.h"

static tl_test_log_result log_bytes(tracelog_policy policy)
{
    tl_test_log_spec spec;
    tl_test_log_result res;
    tl_test_log_spec_init(&spec, policy, 100);
    spec.seed = 28;
    spec.flush_every = 30;
    if (policy == TRACELOG_POLICY_LOOP) {
        spec.log_max_size = 64 * 1024;
        spec.segment_size = 16 * 1024;
    }
    memset(&res, 0, sizeof res);
    if (tl_test_write_log_mem(&spec, &res))
        tl_test_die(__FILE__, __LINE__, "cannot write the log");
    return res;
}

/* Reads what r has now (until TRACELOG_END) into got; the status that ended it. */
static tracelog_status drain(tracelog_reader *r, tl_test_events *got)
{
    tracelog_event ev;
    tracelog_status st;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK)
        tl_test_events_push(got, &ev);
    return st;
}

static void append(int fd, const uint8_t *p, size_t from, size_t to)
{
    if (to > from && pwrite(fd, p + from, to - from, (off_t)from) != (ssize_t)(to - from))
        tl_test_die(__FILE__, __LINE__, "pwrite");
}

/* Every length from the header on, a few bytes at a time: events only from complete chunks, no problem. */
static void test_growing(void)
{
    tl_test_log_result res = log_bytes(TRACELOG_POLICY_APPEND);
    tl_test_readout whole;
    tl_test_read_bytes(res.bytes, res.len, NULL, &whole); /* what a reader of the finished log gets */
    const tl_test_events *all = &whole.events;
    int fd = tl_test_tmpfd();
    tracelog_reader *r = NULL;
    tracelog_error err;
    CHECK_STATUS(tracelog_reader_open_follow(fd, NULL, &r, &err), TRACELOG_E_TRUNCATED); /* empty: not yet */
    append(fd, res.bytes, 0, TL_HEADER_SIZE);
    if (!CHECK_STATUS(tracelog_reader_open_follow(fd, NULL, &r, &err), TRACELOG_OK))
        return;
    tl_test_events got = {0};
    size_t prev = 0, written = TL_HEADER_SIZE;
    for (size_t len = TL_HEADER_SIZE + 5; len <= res.len; len += 5) { /* 5: every offset mod 8 */
        append(fd, res.bytes, written, len);
        written = len;
        tl_test_context("length %zu of %zu", len, res.len);
        CHECK_STATUS(drain(r, &got), TRACELOG_END);
        CHECK(got.n >= prev && got.n <= all->n);
        prev = got.n;
        if (tracelog_reader_problem_count(r) != 0) {
            CHECK(!"a problem while following");
            break;
        }
    }
    append(fd, res.bytes, written, res.len);
    tl_test_context("whole log");
    CHECK_STATUS(drain(r, &got), TRACELOG_END);
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    CHECK_EQ(info.closed, 1); /* the trailer is the newest block read */
    CHECK_STATUS(tracelog_reader_follow_wait(r, 0), TRACELOG_END); /* nothing more */
    CHECK_STATUS(tracelog_reader_follow_stop(r), TRACELOG_OK);
    CHECK_STATUS(drain(r, &got), TRACELOG_END);
    CHECK_EVENTS_EQ(got.ev, got.n, all->ev, all->n);
    tracelog_reader_get_info(r, &info);
    CHECK_EQ(info.clean, 1);
    CHECK_STATUS(tracelog_reader_follow_wait(r, 0), TRACELOG_E_STATE); /* stopped */
    tracelog_reader_close(r);
    tl_test_events_free(&got);
    tl_test_readout_free(&whole);
    close(fd);
    tl_test_log_result_free(&res);
}

/* A follower opened on the first `len` bytes of an APPEND log (res.bytes, possibly altered first). */
typedef struct follower {
    tl_test_log_result res;
    int fd;
    tracelog_reader *r;
    tl_test_events got;
} follower;

static int follower_open(follower *f, size_t len)
{
    f->fd = tl_test_tmpfd();
    append(f->fd, f->res.bytes, 0, len);
    tracelog_error err;
    return CHECK_STATUS(tracelog_reader_open_follow(f->fd, NULL, &f->r, &err), TRACELOG_OK);
}

static void follower_close(follower *f)
{
    tracelog_reader_close(f->r);
    tl_test_events_free(&f->got);
    close(f->fd);
    tl_test_log_result_free(&f->res);
}

/* The writer stopped inside a block (a crash): stopped there, the reader reports TORN_TAIL. */
static void test_torn_then_stopped(void)
{
    follower f = {.res = log_bytes(TRACELOG_POLICY_APPEND)};
    if (!follower_open(&f, f.res.len - 20)) { /* inside the trailer */
        follower_close(&f);
        return;
    }
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    CHECK_EQ(tracelog_reader_problem_count(f.r), 0); /* not yet */
    CHECK_STATUS(tracelog_reader_follow_wait(f.r, 30), TRACELOG_END); /* no growth: timeout */
    CHECK_STATUS(tracelog_reader_follow_stop(f.r), TRACELOG_OK);
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    CHECK_EQ(tracelog_reader_problem_count(f.r), 1);
    CHECK_STR_EQ(tracelog_reader_problem_condition(f.r, 0), "TORN_TAIL");
    /* The bytes skipped are those in the file, up to its end (they were the block's claimed size). */
    tracelog_problem p;
    if (CHECK_STATUS(tracelog_reader_problem(f.r, 0, &p), TRACELOG_OK))
        CHECK_EQ(p.offset + p.length, f.res.len - 20);
    follower_close(&f);
}

/* A complete chunk that is damaged is damage while following too; the shrunk file is FILE_CHANGED. */
static void test_damage_and_shrink(void)
{
    follower f = {.res = log_bytes(TRACELOG_POLICY_APPEND)};
    tl_test_block *blocks = NULL;
    size_t n = tl_test_scan_blocks(f.res.bytes, f.res.len, &blocks, NULL, NULL), chunk = 0;
    while (chunk < n && blocks[chunk].type != TL_BLOCK_CHUNK)
        chunk++;
    if (CHECK(chunk < n)) /* its payload's last byte */
        f.res.bytes[blocks[chunk].offset + TL_BLOCK_HEADER_SIZE + blocks[chunk].payload_len - 1] ^= 0x40;
    free(blocks);
    if (!follower_open(&f, f.res.len)) {
        follower_close(&f);
        return;
    }
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    CHECK(tracelog_reader_problem_count(f.r) >= 1);
    CHECK_STR_EQ(tracelog_reader_problem_condition(f.r, 0), "PAYLOAD_CRC_MISMATCH");
    if (CHECK(ftruncate(f.fd, TL_HEADER_SIZE) == 0))
        CHECK_STATUS(tracelog_reader_follow_wait(f.r, 0), TRACELOG_E_CORRUPT);
    follower_close(&f);
}

/* Whether r has recorded a problem of this condition. */
static int has_problem(tracelog_reader *r, const char *condition)
{
    for (size_t i = 0; i < tracelog_reader_problem_count(r); i++)
        if (strcmp(tracelog_reader_problem_condition(r, i), condition) == 0)
            return 1;
    return 0;
}

/*
 * A complete block header (checksum and all: a hostile writer can compute it) claiming far more bytes than
 * will ever come: a block not written yet, read as a torn tail once stopped. The follower took the offset
 * past that block for what it had read, and reported every later wait as a file that shrank
 * (fuzz_reader_stream found it).
 */
static void test_block_claims_too_much(void)
{
    follower f = {.res = log_bytes(TRACELOG_POLICY_APPEND)};
    tl_test_block *blocks = NULL;
    uint32_t salt32;
    size_t n = tl_test_scan_blocks(f.res.bytes, f.res.len, &blocks, &salt32, NULL), last = n;
    for (size_t i = 0; i < n; i++)
        if (blocks[i].type == TL_BLOCK_CHUNK)
            last = i;
    if (!CHECK(last < n)) {
        free(blocks);
        follower_close(&f);
        return;
    }
    size_t at = blocks[last].offset, cut = at + TL_BLOCK_HEADER_SIZE + 100;
    tl_block_header h = {blocks[last].type, blocks[last].flags, blocks[last].seq, UINT32_MAX - 7, 0};
    tl_block_header_encode(&h, salt32, f.res.bytes + at);
    free(blocks);
    if (!follower_open(&f, cut)) {
        follower_close(&f);
        return;
    }
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    size_t before = f.got.n;
    CHECK(before > 0);
    CHECK_STATUS(tracelog_reader_follow_wait(f.r, 0), TRACELOG_END); /* nothing new: no shrink either */
    append(f.fd, f.res.bytes, cut, f.res.len);
    CHECK_STATUS(tracelog_reader_follow_wait(f.r, 0), TRACELOG_OK);
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    CHECK_STATUS(tracelog_reader_follow_wait(f.r, 0), TRACELOG_END);
    CHECK(!has_problem(f.r, "FILE_CHANGED"));
    CHECK_STATUS(tracelog_reader_follow_stop(f.r), TRACELOG_OK);
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    CHECK(f.got.n == before);
    CHECK(!has_problem(f.r, "FILE_CHANGED"));
    CHECK(has_problem(f.r, "BLOCK_TOO_LARGE"));
    follower_close(&f);
}

/* The file grows during a wait: it returns at once with TRACELOG_OK. */
static void test_wait_wakes(void)
{
    follower f = {.res = log_bytes(TRACELOG_POLICY_APPEND)};
    if (!follower_open(&f, f.res.len / 2)) {
        follower_close(&f);
        return;
    }
    CHECK_STATUS(drain(f.r, &f.got), TRACELOG_END);
    append(f.fd, f.res.bytes, f.res.len / 2, f.res.len);
    CHECK_STATUS(tracelog_reader_follow_wait(f.r, 10000), TRACELOG_OK); /* no 10 s: it has grown already */
    follower_close(&f);
}

/* What cannot be followed: a ring, a pipe; and the calls on a reader not following. */
static void test_refused(void)
{
    tl_test_log_result res = log_bytes(TRACELOG_POLICY_LOOP);
    int fd = tl_test_tmpfd();
    append(fd, res.bytes, 0, res.len);
    tracelog_reader *r;
    tracelog_error err;
    CHECK_STATUS(tracelog_reader_open_follow(fd, NULL, &r, &err), TRACELOG_E_NOT_SEEKABLE);
    CHECK(strstr(err.message, "LOOP") != NULL);
    int p[2];
    if (!CHECK(pipe(p) == 0))
        return;
    CHECK_STATUS(tracelog_reader_open_follow(p[0], NULL, &r, &err), TRACELOG_E_NOT_SEEKABLE);
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        CHECK_STATUS(tracelog_reader_follow_wait(r, 0), TRACELOG_E_STATE);
        CHECK_STATUS(tracelog_reader_follow_stop(r), TRACELOG_E_STATE);
        tracelog_reader_close(r);
    }
    CHECK_STATUS(tracelog_reader_follow_wait(NULL, 0), TRACELOG_E_INVAL);
    close(p[0]);
    close(p[1]);
    close(fd);
    tl_test_log_result_free(&res);
}

int main(void)
{
    TL_TEST_RUN(test_growing);
    TL_TEST_RUN(test_torn_then_stopped);
    TL_TEST_RUN(test_damage_and_shrink);
    TL_TEST_RUN(test_block_claims_too_much);
    TL_TEST_RUN(test_wait_wakes);
    TL_TEST_RUN(test_refused);
    return tl_test_finish();
}
