/*
 * Threads that misuse the API on one stream (posix-trace.md P36: every trace
 * function is thread-safe, and those XSH 2.9.5.2 lists may be cancellation
 * points): two shutdowns or closes of one handle at once, a thread cancelled
 * inside a trace function, a log read through a pipe while another thread
 * asks for its names, status and type lists walked from several threads,
 * many streams made and shut down, exit() while a thread shuts one down.
 * What must hold: one call wins and the other gets EINVAL; a cancelled call
 * leaves no use, lock or half-done work behind (shutdown, close and exit()
 * still finish); no memory is touched after it is freed.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "posix_helpers.h"

static int rounds(int quiet, int sanitized) { return PT_SANITIZED ? sanitized : quiet; }

/* A log of n events of `names` distinct names, flushed every `every` names (so its name blocks are spread). */
static int make_log(int names, int every)
{
    int fd = tl_test_tmpfd();
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND); /* sequential: it can go through a pipe */
    trace_id_t trid;
    if (posix_trace_create_withlog(0, &attr, fd, &trid) || posix_trace_start(trid))
        TL_DIE("create_withlog");
    for (int i = 0; i < names; i++) {
        char name[32];
        trace_event_id_t id;
        snprintf(name, sizeof name, "misuse.%d", i);
        if (posix_trace_trid_eventid_open(trid, name, &id))
            TL_DIE("trid_eventid_open");
        posix_trace_event(id, &i, sizeof i);
        if (every && i % every == every - 1)
            posix_trace_flush(trid);
    }
    if (posix_trace_shutdown(trid))
        TL_DIE("shutdown");
    posix_trace_attr_destroy(&attr);
    return fd;
}

typedef struct {
    trace_id_t trid;
    atomic_int *ready;
    int (*call)(trace_id_t);
    int rc;
} racer;

/* Both threads spin (yielding: a spinner may wait for the other to be scheduled) until both are
   there: they call within nanoseconds of each other (a barrier's wake-up let the first one through
   alone, most rounds). */
static void *race(void *p)
{
    racer *r = p;
    atomic_fetch_add(r->ready, 1);
    while (atomic_load(r->ready) < 2)
        sched_yield();
    r->rc = r->call(r->trid);
    return NULL;
}

/* Two threads call `call` on trid at once: exactly one gets 0, the other EINVAL. */
static void race_two(trace_id_t trid, int (*call)(trace_id_t), const char *what, int round)
{
    atomic_int ready = 0;
    racer r[2] = {{trid, &ready, call, -1}, {trid, &ready, call, -1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, race, &r[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    int won = (r[0].rc == 0) + (r[1].rc == 0), lost = (r[0].rc == EINVAL) + (r[1].rc == EINVAL);
    CHECK_MSG(won == 1 && lost == 1, "%s, round %d: returned %s and %s, want 0 and EINVAL", what, round,
              pt_errname(r[0].rc), pt_errname(r[1].rc));
}

/* Both threads waited for the other's use for ever (the second hung 2 runs of 3 in 20000 rounds). */
static void test_two_shutdowns_at_once(void)
{
    for (int i = 0; i < rounds(2000, 300); i++) {
        trace_id_t trid;
        if (!CHECK_ERR(posix_trace_create(0, NULL, &trid), 0))
            return;
        race_two(trid, posix_trace_shutdown, "two shutdowns", i);
    }
}

static void test_two_closes_at_once(void)
{
    int fd = make_log(4, 0);
    for (int i = 0; i < rounds(2000, 300); i++) {
        trace_id_t trid;
        if (!CHECK_ERR(posix_trace_open(fd, &trid), 0))
            break;
        race_two(trid, posix_trace_close, "two closes", i);
    }
    close(fd);
}

/* ---- a log through a pipe, its names asked for meanwhile -------------------------------- */

typedef struct {
    int from, to; /* copies the log's bytes from `from` into the pipe `to`, a little at a time */
} feed_args;

static void *feed(void *p)
{
    feed_args *a = p;
    char buf[4096];
    ssize_t n;
    while ((n = read(a->from, buf, sizeof buf)) > 0) {
        for (ssize_t at = 0; at < n;) {
            ssize_t w = write(a->to, buf + at, (size_t)(n - at));
            if (w <= 0)
                goto out;
            at += w;
        }
        usleep(50);
    }
out:
    close(a->to);
    return NULL;
}

typedef struct {
    trace_id_t trid;
    atomic_int done;
    int names; /* ids misuse.0 .. misuse.<names - 1> */
} asker_args;

static void *ask_names(void *p)
{
    asker_args *a = p;
    char name[TRACE_EVENT_NAME_MAX + 1];
    while (!atomic_load(&a->done)) {
        for (trace_event_id_t id = POSIX_TRACE_UNNAMED_USEREVENT; id < POSIX_TRACE_UNNAMED_USEREVENT + a->names; id += 7)
            posix_trace_eventid_get_name(a->trid, id, name);
        trace_event_id_t id;
        int unavailable;
        posix_trace_eventtypelist_rewind(a->trid);
        for (int k = 0; k < 50; k++)
            posix_trace_eventtypelist_getnext_id(a->trid, &id, &unavailable);
    }
    return NULL;
}

/*
 * A log read from a pipe grows its type table as getnext meets its name
 * blocks; eventid_get_name and the type list read that table without the
 * handle's lock: a heap-use-after-free under ASan (2 runs of 3), a race
 * under TSan. Every event must still be read, each named.
 */
static void test_names_asked_while_a_pipe_is_read(void)
{
    enum { NAMES = 600 };
    int log = make_log(NAMES, 4), pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        TL_DIE("pipe");
    lseek(log, 0, SEEK_SET);
    feed_args f = {log, pipe_fds[1]};
    pthread_t feeder, asker;
    pthread_create(&feeder, NULL, feed, &f);
    asker_args a = {0, 0, NAMES};
    if (!CHECK_ERR(posix_trace_open(pipe_fds[0], &a.trid), 0))
        TL_DIE("posix_trace_open");
    pthread_create(&asker, NULL, ask_names, &a);
    struct posix_trace_event_info info;
    char data[64], name[TRACE_EVENT_NAME_MAX + 1];
    size_t len;
    int unavailable = 0, user = 0, named = 0;
    while (posix_trace_getnext_event(a.trid, &info, data, sizeof data, &len, &unavailable) == 0 && !unavailable) {
        if (info.posix_event_id <= POSIX_TRACE_UNNAMED_USEREVENT)
            continue;
        user++;
        named += posix_trace_eventid_get_name(a.trid, info.posix_event_id, name) == 0 && strncmp(name, "misuse.", 7) == 0;
    }
    atomic_store(&a.done, 1);
    pthread_join(asker, NULL);
    pthread_join(feeder, NULL);
    CHECK_EQ(user, NAMES);
    CHECK_EQ(named, NAMES);
    CHECK_ERR(posix_trace_close(a.trid), 0);
    close(pipe_fds[0]);
    close(log);
}

/* Two threads walk one handle's type list: each id comes once (a position read and moved without a lock). */
static void *walk_types(void *p)
{
    asker_args *a = p;
    trace_event_id_t id;
    int unavailable = 0;
    while (posix_trace_eventtypelist_getnext_id(a->trid, &id, &unavailable) == 0 && !unavailable)
        atomic_fetch_add(&a->done, 1);
    return NULL;
}

static void test_type_list_walked_by_two_threads(void)
{
    enum { NAMES = 200 };
    int log = make_log(NAMES, 0);
    lseek(log, 0, SEEK_SET);
    trace_id_t trid;
    if (!CHECK_ERR(posix_trace_open(log, &trid), 0))
        return;
    for (int round = 0; round < rounds(200, 50); round++) {
        asker_args a = {trid, 0, NAMES};
        posix_trace_eventtypelist_rewind(trid);
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            pthread_create(&th[i], NULL, walk_types, &a);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        trace_event_id_t id;
        int unavailable = 0, all = 0;
        for (posix_trace_eventtypelist_rewind(trid);
             posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == 0 && !unavailable;)
            all++;
        if (!CHECK_MSG(atomic_load(&a.done) == all, "round %d: two walkers took %d ids of %d", round,
                       atomic_load(&a.done), all))
            break;
    }
    posix_trace_close(trid);
    close(log);
}

/* Two threads ask one stream's status while it records: a race under TSan on the overruns last read. */
static void *ask_status(void *p)
{
    asker_args *a = p;
    struct posix_trace_status_info st;
    for (int i = 0; i < 2000; i++)
        posix_trace_get_status(a->trid, &st);
    return NULL;
}

static void test_status_asked_by_two_threads(void)
{
    asker_args a = {0, 0, 0};
    trace_event_id_t id;
    if (!CHECK_ERR(posix_trace_create(0, NULL, &a.trid), 0) || !CHECK_ERR(posix_trace_start(a.trid), 0) ||
        !CHECK_ERR(posix_trace_eventid_open("misuse.status", &id), 0))
        return;
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, ask_status, &a);
    for (uint32_t i = 0; i < 20000; i++)
        posix_trace_event(id, &i, sizeof i);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    CHECK_ERR(posix_trace_shutdown(a.trid), 0);
}

/* ---- cancellation -------------------------------------------------------------------------- */

static trace_id_t cancel_trid;
static trace_event_id_t cancel_id;

static void *block_in_getnext(void *arg)
{
    (void)arg;
    struct posix_trace_event_info info;
    char data[16];
    size_t len;
    int unavailable;
    posix_trace_getnext_event(cancel_trid, &info, data, sizeof data, &len, &unavailable); /* nothing comes */
    return NULL;
}

static void *read_log_for_ever(void *arg)
{
    (void)arg;
    struct posix_trace_event_info info;
    char data[16];
    size_t len;
    int unavailable;
    for (;;)
        if (posix_trace_getnext_event(cancel_trid, &info, data, sizeof data, &len, &unavailable) || unavailable)
            posix_trace_rewind(cancel_trid);
    return NULL;
}

static void *flush_for_ever(void *arg)
{
    (void)arg;
    for (;;) {
        for (int i = 0; i < 1000; i++)
            posix_trace_event(cancel_id, &i, sizeof i);
        posix_trace_flush(cancel_trid);
    }
    return NULL;
}

/* Starts fn on a thread, lets it run `us`, cancels it: 1 if it was cancelled. */
static int run_and_cancel(void *(*fn)(void *), unsigned us)
{
    pthread_t th;
    pthread_create(&th, NULL, fn, NULL);
    usleep(us);
    pthread_cancel(th);
    void *result = NULL;
    pthread_join(th, &result);
    return result == PTHREAD_CANCELED;
}

/*
 * A thread cancelled in a trace function left its use, or the handle's
 * lock, or the log's, behind: shutdown and close then waited for ever (a
 * reader blocked in getnext; a log's reader cancelled in its pread; a
 * flush cancelled in its write or in opening /proc). Each is cancelled
 * now, where it holds nothing, and the stream closes.
 */
static void test_cancelled_reader_of_a_stream(void)
{
    if (!CHECK_ERR(posix_trace_create(0, NULL, &cancel_trid), 0))
        return;
    CHECK_MSG(run_and_cancel(block_in_getnext, 50000), "the reader blocked in getnext was not cancelled");
    CHECK_ERR(posix_trace_shutdown(cancel_trid), 0);
}

static void test_cancelled_reader_of_a_log(void)
{
    int log = make_log(600, 4);
    for (int round = 0; round < rounds(20, 5); round++) {
        lseek(log, 0, SEEK_SET);
        if (!CHECK_ERR(posix_trace_open(log, &cancel_trid), 0))
            break;
        CHECK_MSG(run_and_cancel(read_log_for_ever, 2000 + 1000 * round), "round %d: not cancelled", round);
        CHECK_ERR(posix_trace_close(cancel_trid), 0);
    }
    close(log);
}

static void test_cancelled_flush(void)
{
    int fd = tl_test_tmpfd();
    if (!CHECK_ERR(posix_trace_eventid_open("misuse.flush", &cancel_id), 0))
        return;
    for (int round = 0; round < rounds(20, 5); round++) {
        if (!CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &cancel_trid), 0) ||
            !CHECK_ERR(posix_trace_start(cancel_trid), 0))
            break;
        CHECK_MSG(run_and_cancel(flush_for_ever, 2000 + 1000 * round), "round %d: not cancelled", round);
        CHECK_ERR(posix_trace_shutdown(cancel_trid), 0);
    }
    close(fd);
}

/*
 * A destroyed stream's address range stays mapped (zero pages, for a
 * producer that may still be inside it). Counted as committed memory, those
 * ranges made fork() fail with ENOMEM after a few thousand create and
 * shutdown rounds; they are mapped without a reservation now.
 */
static void test_fork_after_many_streams(void)
{
    trace_id_t trid;
    for (int i = 0; i < rounds(3000, 1000); i++)
        if (!CHECK_ERR(posix_trace_create(0, NULL, &trid), 0) || !CHECK_ERR(posix_trace_shutdown(trid), 0))
            return;
    pid_t pid = pt_fork(30);
    if (pid == 0)
        _exit(0);
    int status = -1;
    if (CHECK_MSG(pid > 0, "fork: %s", strerror(errno)))
        waitpid(pid, &status, 0);
}

/* exit() on the main thread while another thread shuts a logged stream down: each round's child. */
static atomic_int exit_ready;
static trace_id_t exit_trid;

static void *shut_down_at_exit(void *arg)
{
    (void)arg;
    atomic_fetch_add(&exit_ready, 1);
    while (atomic_load(&exit_ready) < 2)
        ;
    posix_trace_shutdown(exit_trid);
    return NULL;
}

enum { EXIT_EVENTS = 100000 };

static void exit_child(int fd)
{
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
    trace_event_id_t id;
    if (posix_trace_create_withlog(0, &attr, fd, &exit_trid) || posix_trace_eventid_open("misuse.exit", &id) ||
        posix_trace_start(exit_trid))
        _exit(2);
    for (uint32_t i = 0; i < EXIT_EVENTS; i++)
        posix_trace_event(id, &i, sizeof i);
    pthread_t th;
    pthread_create(&th, NULL, shut_down_at_exit, NULL);
    pthread_detach(th); /* it may still run at exit */
    atomic_fetch_add(&exit_ready, 1);
    while (atomic_load(&exit_ready) < 2)
        ;
    exit(0); /* at_exit's shutdown of the stream meets the other thread's */
}

/*
 * The exit hook's shutdown lost to the other thread's (EINVAL) and exit went
 * on while that thread wrote the log out: a log cut short. It waits for it
 * now. (Before the EINVAL, the two hung.)
 */
static void test_exit_while_another_thread_shuts_down(void)
{
    for (int round = 0; round < rounds(20, 5); round++) {
        int fd = tl_test_tmpfd();
        pid_t pid = pt_fork(60);
        if (!CHECK_MSG(pid >= 0, "round %d: fork: %s", round, strerror(errno)))
            break;
        if (pid == 0)
            exit_child(fd);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "round %d: the child's status %#x", round, status);
        tl_test_readout out;
        lseek(fd, 0, SEEK_SET);
        tl_test_read_fd(fd, NULL, &out);
        uint32_t id = UINT32_MAX;
        for (size_t i = 0; i < out.ntypes; i++)
            if (strcmp(out.type_names[i], "misuse.exit") == 0)
                id = out.type_ids[i];
        size_t user = 0;
        for (size_t i = 0; i < out.events.n; i++)
            user += out.events.ev[i].event_id == id;
        CHECK_MSG(out.info.clean && user == EXIT_EVENTS, "round %d: the log holds %zu of %d events, clean %d, "
                  "problems %llu", round, user, EXIT_EVENTS, out.info.clean, (unsigned long long)out.info.problems);
        tl_test_readout_free(&out);
        close(fd);
    }
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 280 : 120);
    PT_RUN(test_two_shutdowns_at_once);
    PT_RUN(test_two_closes_at_once);
    PT_RUN(test_names_asked_while_a_pipe_is_read);
    PT_RUN(test_type_list_walked_by_two_threads);
    PT_RUN(test_status_asked_by_two_threads);
    PT_RUN(test_cancelled_reader_of_a_stream);
    PT_RUN(test_cancelled_reader_of_a_log);
    PT_RUN(test_cancelled_flush);
    PT_RUN(test_fork_after_many_streams);
    PT_RUN(test_exit_while_another_thread_shuts_down);
    return pt_finish();
}
