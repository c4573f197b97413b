/*
 * Automatic shutdown (posix-trace.md §2.1): "Streams a process created and
 * has not shut down are shut down automatically (as if by
 * posix_trace_shutdown) when the process exits, calls any exec function, or
 * is terminated." A child records into a log and leaves without
 * posix_trace_shutdown; the parent then reads the log: every event is there
 * and the log was completed (it has its trailer: tracelog_reader_info.clean).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_seq;

enum { N = 5000 };

typedef enum { BY_EXIT, BY_RETURN, BY_THREAD_EXIT, BY_EXEC } how_t;

static const char *how_name(how_t h)
{
    switch (h) {
    case BY_EXIT: return "exit(0) in the main thread";
    case BY_RETURN: return "return from main (this program run again)";
    case BY_THREAD_EXIT: return "exit(0) from another thread";
    case BY_EXEC: return "execl() of /bin/true";
    }
    return "?";
}

static void record_all(void)
{
    for (uint32_t i = 0; i < N; i++)
        posix_trace_event(ev_seq, &i, sizeof i);
}

static void *exiting_thread(void *p)
{
    (void)p;
    record_all();
    exit(0);
}

/* Creates a stream with log on fd (policy sp) and a second stream without log, both started. */
static void make_streams(int fd, int sp)
{
    trace_attr_t a;
    pt_attr(&a, sp, 8u << 20, 16); /* one thread's lane holds all N events */
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    posix_trace_attr_setname(&a, "exit test");
    trace_id_t t, plain;
    if (posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))
        _exit(10);
    if (posix_trace_create(0, NULL, &plain) || posix_trace_start(plain))
        _exit(11);
}

/* The child: makes the streams, records, and leaves as told (never by posix_trace_shutdown). */
static void child_main(int fd, int sp, how_t how)
{
    char arg_fd[16], arg_sp[16];
    switch (how) {
    case BY_EXIT:
        make_streams(fd, sp);
        record_all();
        exit(0);
    case BY_RETURN:
        /* A fresh process image, whose main() returns (see main below). */
        snprintf(arg_fd, sizeof arg_fd, "%d", fd);
        snprintf(arg_sp, sizeof arg_sp, "%d", sp);
        execl("/proc/self/exe", "test_posix_exit", "--return-from-main", arg_fd, arg_sp, (char *)NULL);
        _exit(15);
    case BY_THREAD_EXIT: {
        make_streams(fd, sp);
        pthread_t th;
        pthread_create(&th, NULL, exiting_thread, NULL);
        pthread_join(th, NULL);
        _exit(12); /* not reached */
    }
    case BY_EXEC:
        make_streams(fd, sp);
        record_all();
        execl("/bin/true", "true", (char *)NULL);
        _exit(13);
    }
    _exit(14);
}

static void run(int sp, how_t how)
{
    tl_test_context("stream policy %d, %s", sp, how_name(how));
    int fd = tl_test_tmpfd();
    pid_t pid = pt_fork(10);
    if (pid < 0)
        TL_DIE("fork");
    if (pid == 0)
        child_main(fd, sp, how);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);

    /* Native reader: the log was completed (trailer written at exit). */
    tracelog_reader *r = NULL;
    CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK);
    if (r) {
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        CHECK_MSG(info.clean == 1, "the log is complete (clean trailer)");
        CHECK_EQ(info.problems, 0);
        tracelog_reader_close(r);
    }
    /* POSIX reader: every event, then the STOP of the implicit shutdown. */
    trace_id_t pre;
    if (CHECK_ERR(posix_trace_open(fd, &pre), 0)) {
        pt_events ev = {0};
        CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
        uint32_t next = 0;
        int ok = 1;
        for (size_t i = 0; i < ev.n; i++) {
            if (ev.ev[i].info.posix_event_id != ev_seq)
                continue;
            uint32_t v;
            memcpy(&v, ev.ev[i].data, sizeof v);
            ok &= v == next++ && ev.ev[i].info.posix_pid == pid;
        }
        CHECK_MSG(ok && next == N, "all %d events of the child, in order: %u", N, next);
        /* shutdown "stops tracing as if posix_trace_stop": the log ends with STOP. */
        int stop_last = ev.n > 0 && ev.ev[ev.n - 1].info.posix_event_id == POSIX_TRACE_STOP;
        CHECK_MSG(stop_last, "the last event is the STOP of the implicit shutdown");
        trace_attr_t got;
        posix_trace_attr_init(&got);
        posix_trace_get_attr(pre, &got);
        char name[TRACE_NAME_MAX];
        posix_trace_attr_getname(&got, name);
        CHECK_STR_EQ(name, "exit test");
        pt_events_free(&ev);
        CHECK_ERR(posix_trace_close(pre), 0);
    }
    close(fd);
}

static void test_exit(void)
{
    static const int policies[] = {POSIX_TRACE_FLUSH, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_LOOP};
    for (int i = 0; i < 3; i++)
        run(policies[i], BY_EXIT);
    tl_test_context(NULL);
}

static void test_return_from_main(void)
{
    run(POSIX_TRACE_FLUSH, BY_RETURN);
    run(POSIX_TRACE_UNTIL_FULL, BY_RETURN);
    tl_test_context(NULL);
}

static void test_exit_from_thread(void)
{
    run(POSIX_TRACE_FLUSH, BY_THREAD_EXIT);
    run(POSIX_TRACE_UNTIL_FULL, BY_THREAD_EXIT);
    tl_test_context(NULL);
}

/* P22 (documented): exec functions called from code that includes <trace.h> write every log out first. */
static void test_exec(void)
{
    if (access("/bin/true", X_OK) != 0) {
        printf("   /bin/true not available: exec case skipped\n");
        return;
    }
    run(POSIX_TRACE_FLUSH, BY_EXEC);
    run(POSIX_TRACE_UNTIL_FULL, BY_EXEC);
    tl_test_context(NULL);
}

int main(int argc, char **argv)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("exit: seq", &ev_seq))
        TL_DIE("eventid_open failed");
    if (argc == 4 && strcmp(argv[1], "--return-from-main") == 0) {
        make_streams(atoi(argv[2]), atoi(argv[3]));
        record_all();
        return 0; /* no posix_trace_shutdown: returning from main must complete the log */
    }
    PT_RUN(test_exit);
    PT_RUN(test_return_from_main);
    PT_RUN(test_exit_from_thread);
    PT_RUN(test_exec);
    return pt_finish();
}
