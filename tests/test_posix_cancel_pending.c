/*
 * A thread that calls a trace function with a cancellation pending
 * (pthread_cancel(pthread_self()) first: deterministic) must leave no lock
 * behind, and exit() must stay the process's end; a forked child's exit()
 * waits for none of its parent's shutdowns. Each of these hung or misbehaved
 * in a review of the cancellation change (7fd4938). The first test opens the
 * process's first name: it runs first.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "tracelog/posix.h"

static void *open_typed_cancelled(void *arg)
{
    (void)arg;
    trace_event_id_t id;
    pthread_cancel(pthread_self());
    tracelog_eventid_open_typed("pending.first", "u32 n", &id);
    pthread_testcancel();
    return NULL;
}

/* The typed open made the control object under its lock and was cancelled there: the next open hung. */
static void test_typed_open_with_a_cancel_pending(void)
{
    pthread_t th;
    pthread_create(&th, NULL, open_typed_cancelled, NULL);
    void *result = NULL;
    pthread_join(th, &result);
    CHECK(result == PTHREAD_CANCELED);
    trace_event_id_t id;
    CHECK_ERR(posix_trace_eventid_open("pending.second", &id), 0);
}

static void *exit_cancelled(void *arg)
{
    (void)arg;
    pthread_cancel(pthread_self());
    exit(3);
}

/* exit() from a thread with a cancellation pending ran the exit hook's shutdown, which acted on it: the
   thread ended, not the process, which went on and exited 0. */
static void test_exit_with_a_cancel_pending(void)
{
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        trace_id_t trid;
        if (posix_trace_create(0, NULL, &trid))
            _exit(2);
        pthread_t th;
        pthread_create(&th, NULL, exit_cancelled, NULL);
        pthread_join(th, NULL);
        _exit(0); /* the worker's exit(3) did not end the process */
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 3, "the child's status %#x, want exit 3", status);
}

static trace_id_t blocked_trid;

static void *shut_down(void *arg)
{
    (void)arg;
    posix_trace_shutdown(blocked_trid);
    return NULL;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A child forked while a thread of its parent shuts a stream down (its log going into a full pipe) copied
   the count of shutdowns under way, and its exit() waited 10 s for one it does not run. */
static void test_fork_during_a_shutdown(void)
{
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0)
        TL_DIE("pipe");
    fcntl(pipe_fds[1], F_SETPIPE_SZ, 4096);
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
    trace_event_id_t id;
    if (!CHECK_ERR(posix_trace_create_withlog(0, &attr, pipe_fds[1], &blocked_trid), 0) ||
        !CHECK_ERR(posix_trace_eventid_open("pending.fill", &id), 0) || !CHECK_ERR(posix_trace_start(blocked_trid), 0))
        return;
    for (uint32_t i = 0; i < 20000; i++) /* more than the pipe holds: the shutdown's writes block */
        posix_trace_event(id, &i, sizeof i);
    pthread_t th;
    pthread_create(&th, NULL, shut_down, NULL);
    usleep(200000);
    double start = now_s();
    pid_t pid = pt_fork(30);
    if (pid == 0)
        exit(0);
    int status = 0;
    waitpid(pid, &status, 0);
    double took = now_s() - start;
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0 && took < 3, "the child's exit took %.2f s, status %#x",
              took, status);
    char buf[65536]; /* the log read away: the shutdown ends */
    close(pipe_fds[1]);
    while (read(pipe_fds[0], buf, sizeof buf) > 0)
        ;
    pthread_join(th, NULL);
    close(pipe_fds[0]);
    posix_trace_attr_destroy(&attr);
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 120 : 60);
    PT_RUN(test_typed_open_with_a_cancel_pending);
    PT_RUN(test_exit_with_a_cancel_pending);
    PT_RUN(test_fork_during_a_shutdown);
    return pt_finish();
}
