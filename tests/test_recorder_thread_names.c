/*
 * Thread names in a log the program writes itself (issue 26, format 1.2):
 * the recorder names each thread by its comm when the writer first defines
 * it, and again at each write, so that a name set before a thread's first
 * event is on all its events, and a rename (pthread_setname_np after the
 * first event) is in the log from the next write on. Along every stream
 * policy with a log the flusher or the shutdown writes.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

#include "posix_helpers.h"

#define EVENTS 50

typedef struct worker {
    trace_event_id_t id;
    const char *name_before; /* set before the first event (NULL: none) */
    const char *name_after;  /* set after the first half, then a flush (NULL: none) */
    trace_id_t trid;
    pthread_barrier_t *half;
} worker;

static void *worker_main(void *arg)
{
    worker *w = arg;
    if (w->name_before)
        pthread_setname_np(pthread_self(), w->name_before);
    for (int i = 0; i < EVENTS; i++) {
        if (i == EVENTS / 2) {
            pthread_barrier_wait(w->half); /* the main thread flushes the first half */
            pthread_barrier_wait(w->half);
            if (w->name_after)
                pthread_setname_np(pthread_self(), w->name_after);
        }
        posix_trace_event(w->id, &i, sizeof i);
    }
    pthread_barrier_wait(w->half); /* alive while the main thread flushes again: a gone thread's name cannot be read */
    pthread_barrier_wait(w->half);
    return NULL;
}

/* The name the log gives the thread of each of id's events: first and last. */
static void names_of(const char *path, trace_event_id_t id, const char *want_first, const char *want_last)
{
    int fd = open(path, O_RDONLY);
    tracelog_reader *r;
    if (!CHECK(fd >= 0) || !CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK))
        return;
    tracelog_event ev;
    char first[80] = "", last[80] = "";
    int n = 0;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        if (ev.event_id != (uint32_t)id)
            continue;
        const char *name = tracelog_reader_event_thread_name(r, &ev);
        snprintf(n++ ? last : first, sizeof first, "%s", name ? name : "(none)");
    }
    CHECK_EQ_INT(n, EVENTS);
    CHECK_MSG(strcmp(first, want_first) == 0, "first event's thread: %s, want %s", first, want_first);
    CHECK_MSG(strcmp(last, want_last) == 0, "last event's thread: %s, want %s", last, want_last);
    tracelog_reader_close(r);
    close(fd);
}

/* A stream of this process with a log in a new file at path (a mkstemp template): its descriptor, or -1. */
static int create_logged(char *path, int stream_policy, int log_policy, trace_id_t *trid)
{
    int fd = mkstemp(path);
    if (fd < 0)
        TL_DIE("mkstemp");
    trace_attr_t attr;
    pt_attr(&attr, stream_policy, 1u << 20, 64);
    posix_trace_attr_setlogfullpolicy(&attr, log_policy);
    if (CHECK_ERR(posix_trace_create_withlog(0, &attr, fd, trid), 0))
        return fd;
    close(fd);
    unlink(path);
    return -1;
}

static void run(int stream_policy, int log_policy)
{
    char path[] = "/tmp/tl_tnames_XXXXXX";
    trace_id_t trid;
    int fd = create_logged(path, stream_policy, log_policy, &trid);
    if (fd < 0)
        return;
    trace_event_id_t ids[3];
    const char *names[3] = {"tn:named", "tn:renamed", "tn:plain"};
    for (int i = 0; i < 3; i++)
        CHECK_ERR(posix_trace_eventid_open(names[i], &ids[i]), 0);
    CHECK_ERR(posix_trace_start(trid), 0);
    pthread_barrier_t half;
    pthread_barrier_init(&half, NULL, 4);
    worker w[3] = {{ids[0], "named-before", NULL, trid, &half},
                   {ids[1], NULL, "renamed-later", trid, &half},
                   {ids[2], NULL, NULL, trid, &half}};
    pthread_t th[3];
    for (int i = 0; i < 3; i++)
        pthread_create(&th[i], NULL, worker_main, &w[i]);
    pthread_barrier_wait(&half);
    CHECK_ERR(posix_trace_flush(trid), 0); /* the first half out, before the rename */
    pthread_barrier_wait(&half);
    pthread_barrier_wait(&half);
    CHECK_ERR(posix_trace_flush(trid), 0);
    pthread_barrier_wait(&half);
    for (int i = 0; i < 3; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&half);
    CHECK_ERR(posix_trace_shutdown(trid), 0);
    close(fd);
    /* A thread is named as its comm is when the writer first defines it, the name the program gave
       it or, for one it never named, the process's own (a new thread inherits its creator's comm). */
    char comm[32] = "";
    pthread_getname_np(pthread_self(), comm, sizeof comm);
    names_of(path, ids[0], "named-before", "named-before");
    names_of(path, ids[2], comm, comm);
    /* Renamed after the first half was written: that keeps the first name, the rest has the new one. */
    names_of(path, ids[1], comm, "renamed-later");
    unlink(path);
}

static void *ended_early_main(void *arg)
{
    const trace_event_id_t *id = arg;
    pthread_setname_np(pthread_self(), "ended-early");
    for (int i = 0; i < EVENTS; i++)
        posix_trace_event(*id, &i, sizeof i);
    return NULL;
}

/*
 * A LOOP stream is drained at shutdown, when a thread that recorded and
 * ended has no /proc entry left: the log names it by its name at its first
 * event, which the process remembers (thread_ids.c).
 */
static void test_thread_ended_before_the_drain(void)
{
    char path[] = "/tmp/tl_tnames_XXXXXX";
    trace_id_t trid;
    trace_event_id_t id;
    int fd = create_logged(path, POSIX_TRACE_LOOP, POSIX_TRACE_LOOP, &trid);
    if (fd < 0)
        return;
    CHECK_ERR(posix_trace_eventid_open("tn:early", &id), 0);
    CHECK_ERR(posix_trace_start(trid), 0);
    pthread_t th;
    pthread_create(&th, NULL, ended_early_main, &id);
    pthread_join(th, NULL);
    CHECK_ERR(posix_trace_shutdown(trid), 0);
    close(fd);
    names_of(path, id, "ended-early", "ended-early");
    unlink(path);
}

typedef struct rename_then_end {
    trace_event_id_t id;
    pthread_barrier_t *step;
    uint32_t ktid;
} rename_then_end;

static void *rename_then_end_main(void *arg)
{
    rename_then_end *r = arg;
    r->ktid = (uint32_t)gettid();
    pthread_setname_np(pthread_self(), "first-name");
    int i = 0;
    posix_trace_event(r->id, &i, sizeof i);
    pthread_barrier_wait(r->step); /* the main thread writes it out: defined as first-name */
    pthread_barrier_wait(r->step);
    pthread_setname_np(pthread_self(), "second-name");
    pthread_barrier_wait(r->step); /* the main thread writes again: renamed second-name */
    pthread_barrier_wait(r->step);
    return NULL;
}

/* The last name the log's definitions give kernel thread ktid ("" if none). */
static void last_name_of(const char *path, uint32_t ktid, char *out, size_t cap)
{
    int fd = open(path, O_RDONLY);
    tracelog_reader *r;
    out[0] = 0;
    if (!CHECK(fd >= 0) || !CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK))
        return;
    for (size_t i = 0; i < tracelog_reader_thread_count(r); i++) {
        uint32_t pid, k;
        uint64_t tid;
        const char *name = tracelog_reader_thread_name(r, i);
        if (tracelog_reader_thread(r, i, &pid, &tid, &k) == TRACELOG_OK && k == ktid)
            snprintf(out, cap, "%s", name ? name : "");
    }
    tracelog_reader_close(r);
    close(fd);
}

/*
 * A thread renamed after its first event, the rename written, then gone:
 * a later write keeps the name it had last. Its name at its first event
 * (which names a thread gone before the writer first saw it) is not a
 * rename back: that undid pthread_setname_np in the log's last definition.
 */
static void test_rename_kept_after_the_thread_ended(void)
{
    char path[] = "/tmp/tl_tnames_XXXXXX";
    trace_id_t trid;
    trace_event_id_t id;
    int fd = create_logged(path, POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND, &trid);
    if (fd < 0)
        return;
    CHECK_ERR(posix_trace_eventid_open("tn:gone", &id), 0);
    CHECK_ERR(posix_trace_start(trid), 0);
    pthread_barrier_t step;
    pthread_barrier_init(&step, NULL, 2);
    rename_then_end r = {id, &step, 0};
    pthread_t th;
    pthread_create(&th, NULL, rename_then_end_main, &r);
    pthread_barrier_wait(&step);
    CHECK_ERR(posix_trace_flush(trid), 0);
    pthread_barrier_wait(&step);
    pthread_barrier_wait(&step);
    CHECK_ERR(posix_trace_flush(trid), 0);
    pthread_barrier_wait(&step);
    pthread_join(th, NULL);
    int i = 1;
    posix_trace_event(id, &i, sizeof i); /* something to write after the thread is gone */
    CHECK_ERR(posix_trace_flush(trid), 0);
    CHECK_ERR(posix_trace_shutdown(trid), 0);
    close(fd);
    char last[80];
    last_name_of(path, r.ktid, last, sizeof last);
    CHECK_MSG(strcmp(last, "second-name") == 0, "the ended thread's last name: %s, want second-name", last);
    pthread_barrier_destroy(&step);
    unlink(path);
}

static void test_flush_append(void) { run(POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND); }
static void test_until_full_append(void) { run(POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND); }
static void test_loop_loop(void) { run(POSIX_TRACE_LOOP, POSIX_TRACE_LOOP); }

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_flush_append);
    PT_RUN(test_until_full_append);
    PT_RUN(test_loop_loop);
    PT_RUN(test_thread_ended_before_the_drain);
    PT_RUN(test_rename_kept_after_the_thread_ended);
    return pt_finish();
}
