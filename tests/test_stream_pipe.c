/*
 * Streaming through a pipe: a writer thread writes a log into one end while
 * tracelog_reader_open reads the other. Everything comes back; the reader
 * delivers flushed events without waiting for the end of the stream; seeking
 * is refused; a LOOP log cannot be written or read through a pipe; a writer
 * that dies mid-way leaves exactly what it flushed. tracelog_reader_open_read
 * reads the same from a function: bytes in small pieces and interrupted calls
 * give every event back; a failing or lying function ends in TRACELOG_E_IO.
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tl_test.h"

static void make_pipe(int p[2])
{
    if (pipe2(p, O_CLOEXEC))
        TL_DIE("pipe2: %s", strerror(errno));
}

/* A writer thread running tl_test_write_log_fd on the pipe's write end. */
typedef struct writer_job {
    int fd;
    tl_test_log_spec spec;
    tl_test_log_result res;
    int rc;
    pthread_t thread;
} writer_job;

static void *run_writer(void *arg)
{
    writer_job *j = arg;
    j->rc = tl_test_write_log_fd(j->fd, &j->spec, &j->res);
    close(j->fd); /* the reader sees the end of the stream */
    return NULL;
}

static void start_writer(writer_job *j, int fd)
{
    j->fd = fd;
    if (pthread_create(&j->thread, NULL, run_writer, j))
        TL_DIE("pthread_create failed");
}

/* Joins the writer once the reader is done (closing the read end unblocks it if need be). */
static void finish_writer(writer_job *j, int read_fd)
{
    close(read_fd);
    pthread_join(j->thread, NULL);
    CHECK_EQ_INT(j->rc, 0);
}

static void test_append_through_pipe(void)
{
    int p[2];
    make_pipe(p);
    writer_job j;
    memset(&j, 0, sizeof j);
    /* About 450 KB: many times the pipe's buffer, so both sides really wait on each other. */
    tl_test_log_spec_init(&j.spec, TRACELOG_POLICY_APPEND, 3000);
    j.spec.seed = 31;
    j.spec.flush_every = 500;
    start_writer(&j, p[1]);

    tl_test_readout out;
    tl_test_read_fd(p[0], NULL, &out);
    finish_writer(&j, p[0]);

    CHECK_STATUS(out.open_status, TRACELOG_OK);
    CHECK_STATUS(out.next_status, TRACELOG_END);
    tl_test_events want = {0};
    tl_test_gen_events(j.spec.seed, 0, j.spec.n_events, 0, &want);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_METADATA_EQ(&out.meta, &j.res.meta);
    if (CHECK_EQ(out.ntypes, TL_TEST_NTYPES))
        for (size_t i = 0; i < TL_TEST_NTYPES; i++) {
            CHECK_EQ(out.type_ids[i], tl_test_type_ids[i]);
            CHECK_STR_EQ(out.type_names[i], tl_test_type_names[i]);
        }
    CHECK_LOG_STATUS_EQ(&out.status, &j.res.status);
    CHECK_EQ(out.info.clean, 1);
    CHECK_EQ(out.info.seekable, 0);
    CHECK_EQ(out.nproblems, 0);
    CHECK(out.info.chunks > 50);
    tl_test_events_free(&want);
    tl_test_readout_free(&out);
    tl_test_log_result_free(&j.res);
}

static void test_until_full_through_pipe(void)
{
    int p[2];
    make_pipe(p);
    writer_job j;
    memset(&j, 0, sizeof j);
    tl_test_log_spec_init(&j.spec, TRACELOG_POLICY_UNTIL_FULL, 2000);
    j.spec.seed = 32;
    j.spec.log_max_size = 32u << 10;
    start_writer(&j, p[1]);
    tl_test_readout out;
    tl_test_read_fd(p[0], NULL, &out);
    finish_writer(&j, p[0]);

    size_t k = out.events.n;
    CHECK(k > 0 && k < j.spec.n_events);
    tl_test_events want = {0};
    tl_test_gen_events(j.spec.seed, 0, k, 0, &want);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_LOG_STATUS_EQ(&out.status, &j.res.status);
    CHECK_EQ(out.status.events_written, k);
    CHECK_EQ(out.status.log_full, 1);
    CHECK_EQ(out.info.clean, 1);
    tl_test_events_free(&want);
    tl_test_readout_free(&out);
    tl_test_log_result_free(&j.res);
}

static void test_seek_refused(void)
{
    int p[2];
    make_pipe(p);
    writer_job j;
    memset(&j, 0, sizeof j);
    tl_test_log_spec_init(&j.spec, TRACELOG_POLICY_APPEND, 300);
    j.spec.seed = 33;
    start_writer(&j, p[1]);

    tracelog_reader *r;
    tracelog_error err;
    tl_test_events got = {0};
    if (CHECK_STATUS(tracelog_reader_open(p[0], NULL, &r, &err), TRACELOG_OK)) {
        tracelog_event ev;
        CHECK_STATUS(tracelog_reader_next(r, &ev), TRACELOG_OK);
        tl_test_events_push(&got, &ev);
        CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_E_NOT_SEEKABLE);
        CHECK_STATUS(tracelog_reader_seek_time(r, TL_TEST_TS_BASE), TRACELOG_E_NOT_SEEKABLE);
        /* The refusals change nothing: reading goes on where it was. */
        tracelog_status st;
        while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK)
            tl_test_events_push(&got, &ev);
        CHECK_STATUS(st, TRACELOG_END);
        tracelog_reader_close(r);
    }
    finish_writer(&j, p[0]);
    tl_test_events want = {0};
    tl_test_gen_events(j.spec.seed, 0, j.spec.n_events, 0, &want);
    CHECK_EVENTS_EQ(got.ev, got.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(got.ev, got.n, want.ev, want.n);
    tl_test_events_free(&want);
    tl_test_events_free(&got);
    tl_test_log_result_free(&j.res);
}

static void test_loop_needs_a_file(void)
{
    /* Writing: refused before anything is written. */
    int p[2];
    make_pipe(p);
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.log_policy = TRACELOG_POLICY_LOOP;
    o.log_max_size = 1u << 20;
    static char sentinel;
    tracelog_writer *w = (tracelog_writer *)(void *)&sentinel; /* create must reset it to NULL */
    tracelog_error err;
    memset(&err, 0, sizeof err);
    CHECK_STATUS(tracelog_writer_create(p[1], NULL, &o, &w, &err), TRACELOG_E_NOT_SEEKABLE);
    CHECK(w == NULL);
    CHECK_EQ(err.code, TRACELOG_E_NOT_SEEKABLE);
    CHECK(err.message[0] != 0);
    if (fcntl(p[0], F_SETFL, O_NONBLOCK))
        TL_DIE("fcntl: %s", strerror(errno));
    char c;
    errno = 0;
    CHECK_MSG(read(p[0], &c, 1) < 0 && errno == EAGAIN, "something was written to the pipe");
    close(p[0]);
    close(p[1]);

    /* Reading: a LOOP (ring) log cannot be read forward-only. */
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_LOOP, 200);
    tl_test_log_result res;
    if (tl_test_write_log_mem(&spec, &res) == 0) {
        tl_test_readout out;
        tl_test_read_bytes_pipe(res.bytes, res.len, NULL, &out);
        CHECK_STATUS(out.open_status, TRACELOG_E_NOT_SEEKABLE);
        CHECK_EQ(out.open_err.code, TRACELOG_E_NOT_SEEKABLE);
        tl_test_readout_free(&out);
        /* ... while the same bytes in a file read fine. */
        tl_test_read_bytes(res.bytes, res.len, NULL, &out);
        CHECK_STATUS(out.open_status, TRACELOG_OK);
        CHECK_EQ(out.events.n, spec.n_events);
        tl_test_readout_free(&out);
    }
    tl_test_log_result_free(&res);
}

static void test_abandoned_writer(void)
{
    int p[2];
    make_pipe(p);
    writer_job j;
    memset(&j, 0, sizeof j);
    /* Flushes after 100, 200 and 300 events, then 10 more events (less than
       a chunk, so none is written) and the writer dies. */
    tl_test_log_spec_init(&j.spec, TRACELOG_POLICY_APPEND, 310);
    j.spec.seed = 34;
    j.spec.flush_every = 100;
    j.spec.abandon = 1;
    start_writer(&j, p[1]);
    tl_test_readout out;
    tl_test_read_fd(p[0], NULL, &out);
    finish_writer(&j, p[0]);

    CHECK_EQ(j.res.flushed_events, 300);
    tl_test_events want = {0};
    tl_test_gen_events(j.spec.seed, 0, j.res.flushed_events, 0, &want);
    CHECK_STATUS(out.open_status, TRACELOG_OK);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_EQ(out.info.clean, 0);
    CHECK_EQ(out.status.events_written, 300); /* from the last STATUS block */
    CHECK_EQ(out.nproblems, 0);               /* it ends between blocks: nothing is damaged */
    CHECK_METADATA_EQ(&out.meta, &j.res.meta);
    CHECK_EQ(out.ntypes, TL_TEST_NTYPES);
    tl_test_events_free(&want);
    tl_test_readout_free(&out);
    tl_test_log_result_free(&j.res);
}

/*
 * Live reading: the writer waits until the reader has every flushed event
 * before writing more. A reader that needed more than the flushed bytes (or
 * the end of the stream) to deliver them would make the writer give up
 * waiting (the timeout only matters when the test fails).
 */
typedef struct lockstep {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t read;     /* events the reader has */
    int gave_up;     /* the writer stopped waiting */
    int fd;
    tracelog_status write_status;
} lockstep;

#define LOCKSTEP_ROUNDS 4
#define LOCKSTEP_EVENTS 100 /* per round */

static void *lockstep_writer(void *arg)
{
    lockstep *ls = arg;
    tracelog_writer *w;
    tracelog_error err;
    ls->write_status = tracelog_writer_create(ls->fd, NULL, NULL, &w, &err);
    if (ls->write_status == TRACELOG_OK) {
        uint8_t payload[TL_TEST_PAYLOAD_MAX];
        for (size_t round = 0; round < LOCKSTEP_ROUNDS; round++) {
            for (size_t i = 0; i < LOCKSTEP_EVENTS; i++) {
                tracelog_event ev;
                tl_test_gen_event(35, round * LOCKSTEP_EVENTS + i, 0, &ev, payload);
                tracelog_writer_append(w, &ev);
            }
            tracelog_writer_flush(w);
            struct timespec deadline;
            clock_gettime(CLOCK_REALTIME, &deadline);
            deadline.tv_sec += 20;
            pthread_mutex_lock(&ls->mu);
            while (ls->read < (round + 1) * LOCKSTEP_EVENTS && !ls->gave_up)
                if (pthread_cond_timedwait(&ls->cv, &ls->mu, &deadline) == ETIMEDOUT)
                    ls->gave_up = 1;
            pthread_mutex_unlock(&ls->mu);
        }
        ls->write_status = tracelog_writer_close(w, &err);
    }
    close(ls->fd);
    return NULL;
}

static void test_live_reading(void)
{
    int p[2];
    make_pipe(p);
    lockstep ls;
    memset(&ls, 0, sizeof ls);
    pthread_mutex_init(&ls.mu, NULL);
    pthread_cond_init(&ls.cv, NULL);
    ls.fd = p[1];
    pthread_t t;
    if (pthread_create(&t, NULL, lockstep_writer, &ls))
        TL_DIE("pthread_create failed");

    tl_test_events got = {0};
    tracelog_reader *r;
    tracelog_error err;
    if (CHECK_STATUS(tracelog_reader_open(p[0], NULL, &r, &err), TRACELOG_OK)) {
        tracelog_event ev;
        tracelog_status st;
        while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
            tl_test_events_push(&got, &ev);
            pthread_mutex_lock(&ls.mu);
            ls.read = got.n;
            pthread_cond_signal(&ls.cv);
            pthread_mutex_unlock(&ls.mu);
        }
        CHECK_STATUS(st, TRACELOG_END);
        tracelog_reader_close(r);
    }
    close(p[0]);
    pthread_join(t, NULL);
    CHECK_MSG(!ls.gave_up, "the reader did not deliver the flushed events before more were written");
    CHECK_STATUS(ls.write_status, TRACELOG_OK);
    tl_test_events want = {0};
    tl_test_gen_events(35, 0, LOCKSTEP_ROUNDS * LOCKSTEP_EVENTS, 0, &want);
    CHECK_EVENTS_EQ(got.ev, got.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(got.ev, got.n, want.ev, want.n);
    tl_test_events_free(&want);
    tl_test_events_free(&got);
    pthread_cond_destroy(&ls.cv);
    pthread_mutex_destroy(&ls.mu);
}

/* A read function over bytes in memory: at most `piece` bytes per call, EINTR every third
   call, and from byte `fail_at` on, an error (or, with `lie`, a count larger than asked). */
typedef struct byte_feed {
    const uint8_t *buf;
    size_t len, pos, piece, fail_at;
    int lie;
    unsigned calls;
} byte_feed;

static long feed_read(void *ctx, void *buf, size_t n)
{
    byte_feed *f = ctx;
    if (++f->calls % 3 == 0) {
        errno = EINTR;
        return -1;
    }
    if (f->pos >= f->fail_at) {
        if (f->lie)
            return (long)n + 1;
        errno = EIO;
        return -1;
    }
    size_t k = f->len - f->pos;
    if (k > n)
        k = n;
    if (k > f->piece)
        k = f->piece;
    memcpy(buf, f->buf + f->pos, k);
    f->pos += k;
    return (long)k;
}

static void test_read_function(void)
{
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_APPEND, 3000);
    spec.seed = 35;
    spec.flush_every = 700;
    tl_test_log_result res;
    CHECK_EQ_INT(tl_test_write_log_mem(&spec, &res), 0);
    tl_test_events want = {0};
    tl_test_gen_events(spec.seed, 0, spec.n_events, 0, &want);

    byte_feed f = {res.bytes, res.len, 0, 7, SIZE_MAX, 0, 0};
    tl_test_readout out;
    tl_test_read_fn(feed_read, &f, NULL, &out);
    CHECK_STATUS(out.open_status, TRACELOG_OK);
    CHECK_STATUS(out.next_status, TRACELOG_END);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_LOG_STATUS_EQ(&out.status, &res.status);
    CHECK_EQ(out.info.clean, 1);
    CHECK_EQ(out.info.seekable, 0);
    CHECK(f.calls > res.len / 7); /* it really came in pieces */
    tl_test_readout_free(&out);

    /* The function fails half-way: the events before are delivered, then the error. */
    for (int lie = 0; lie <= 1; lie++) {
        byte_feed bad = {res.bytes, res.len, 0, 4096, res.len / 2, lie, 0};
        tl_test_read_fn(feed_read, &bad, NULL, &out);
        CHECK_STATUS(out.open_status, TRACELOG_OK);
        CHECK_STATUS(out.next_status, TRACELOG_E_IO);
        CHECK(out.events.n > 0 && out.events.n < want.n);
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, out.events.n);
        tl_test_readout_free(&out);
    }

    tracelog_reader *r = (tracelog_reader *)1;
    CHECK_STATUS(tracelog_reader_open_read(NULL, &f, NULL, &r, NULL), TRACELOG_E_INVAL);
    tl_test_events_free(&want);
    tl_test_log_result_free(&res);

    /* A LOOP log needs a file. */
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_LOOP, 200);
    CHECK_EQ_INT(tl_test_write_log_mem(&spec, &res), 0);
    byte_feed loop = {res.bytes, res.len, 0, 1 << 20, SIZE_MAX, 0, 0};
    tl_test_read_fn(feed_read, &loop, NULL, &out);
    CHECK_STATUS(out.open_status, TRACELOG_E_NOT_SEEKABLE);
    tl_test_readout_free(&out);
    tl_test_log_result_free(&res);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN); /* a failing reader closes its end early: the writer gets EPIPE */
    TL_TEST_RUN(test_append_through_pipe);
    TL_TEST_RUN(test_until_full_through_pipe);
    TL_TEST_RUN(test_seek_refused);
    TL_TEST_RUN(test_loop_needs_a_file);
    TL_TEST_RUN(test_abandoned_writer);
    TL_TEST_RUN(test_live_reading);
    TL_TEST_RUN(test_read_function);
    return tl_test_finish();
}
