/*
 * Log write errors (posix-trace.md §9.2): create_withlog "ENOSPC — device
 * lacks the space required to create this log"; flush and shutdown "EFBIG —
 * log file would exceed an implementation-defined maximum file size",
 * "ENOSPC — no space left on device"; §4.2 posix_stream_flush_error "0 if no
 * error; else the first error of a previous flush (later ones discarded);
 * reset to 0 after read"; §7.1 POSIX_TRACE_ERROR; P29 "Writes beyond
 * RLIMIT_FSIZE raise SIGXFSZ (default: terminate) before EFBIG".
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev;

/* /dev/full: every write fails with ENOSPC. */
static void test_enospc_at_create(void)
{
    int fd = open("/dev/full", O_WRONLY);
    if (fd < 0) {
        printf("   /dev/full not available: skipped\n");
        return;
    }
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 0, 0);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), ENOSPC);
    /* Nothing leaked: all TRACE_SYS_MAX slots are still free. */
    trace_id_t ids[TRACE_SYS_MAX];
    int made = 0;
    for (int i = 0; i < TRACE_SYS_MAX; i++)
        made += posix_trace_create(0, NULL, &ids[i]) == 0;
    CHECK_EQ_INT(made, TRACE_SYS_MAX);
    for (int i = 0; i < made; i++)
        posix_trace_shutdown(ids[i]);
    close(fd);
}

static void record_many(uint32_t n)
{
    uint64_t x = 12345;
    for (uint32_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1;
        uint64_t v[2] = {x, i};
        posix_trace_event(ev, v, sizeof v); /* incompressible */
    }
}

/*
 * EFBIG through RLIMIT_FSIZE, in a child (the limit is per process). The child reports what it saw through its
 * exit status: 0 if everything was as expected, else the number of the first failed expectation.
 */
static int efbig_child(void)
{
    int fd = tl_test_tmpfd();
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_UNTIL_FULL, 4u << 20, 16);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    trace_id_t t;
    if (posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))
        return 1;
    rl.rlim_cur = 256u << 10; /* the log may not grow beyond 256 KiB */
    if (setrlimit(RLIMIT_FSIZE, &rl))
        return 2;
    int first = 0;
    for (int round = 0; round < 20 && !first; round++) {
        record_many(10000);
        first = posix_trace_flush(t);
    }
    if (first != EFBIG) /* and the process was not killed by SIGXFSZ */
        return 3;
    struct posix_trace_status_info si;
    if (posix_trace_get_status(t, &si) || si.posix_stream_flush_error != EFBIG)
        return 4;
    /* "reset to 0 after read". */
    if (posix_trace_get_status(t, &si) || si.posix_stream_flush_error != 0)
        return 5;
    /* A second failure; the status shows it again (a new first error since the reset). */
    record_many(1000);
    int again = posix_trace_flush(t);
    if (again != EFBIG)
        return 6;
    /* §4.2: what a dead log drops is "lost in the log", reported again after each read of the status
       (the events of the failed write, the 1,000 after it, then 1,000 more) */
    tracelog_trace_stats stats;
    if (posix_trace_get_status(t, &si) || si.posix_log_overrun_status != POSIX_TRACE_OVERRUN ||
        posix_trace_get_status(t, &si) || si.posix_log_overrun_status != POSIX_TRACE_NO_OVERRUN)
        return 11;
    record_many(1000);
    posix_trace_flush(t);
    if (posix_trace_get_status(t, &si) || si.posix_log_overrun_status != POSIX_TRACE_OVERRUN ||
        tracelog_trace_get_stats(t, &stats) || stats.log_events_lost < 2000)
        return 12;
    /* shutdown: still frees the stream, and reports the error of its final flush (P10, documented). */
    int e = posix_trace_shutdown(t);
    if (e != EFBIG)
        return 7;
    if (posix_trace_get_status(t, &si) != EINVAL)
        return 8;
    /* What reached the disk is still a readable log. */
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_FSIZE, &rl);
    trace_id_t pre;
    if (posix_trace_open(fd, &pre))
        return 9;
    pt_events l = {0};
    if (pt_read_all(pre, 0, &l) || pt_count(&l, ev) == 0)
        return 10;
    pt_events_free(&l);
    posix_trace_close(pre);
    return 0;
}

static void test_efbig(void)
{
    pid_t pid = pt_fork(10);
    if (pid == 0)
        _exit(efbig_child());
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(!WIFSIGNALED(status), "P29: no SIGXFSZ death (signal %d)", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    static const char *const what[] = {
        "all as expected",
        "create_withlog/start",
        "setrlimit",
        "posix_trace_flush returns EFBIG",
        "posix_stream_flush_error is EFBIG",
        "posix_stream_flush_error reset to 0 after read",
        "a later flush returns EFBIG again",
        "shutdown returns the final flush's EFBIG",
        "the trid is invalid after a failed shutdown",
        "posix_trace_open of what was written",
        "events in what was written",
        "the events lost after the error are log overruns",
        "... and reported again after the status was read",
    };
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    CHECK_MSG(code == 0, "EFBIG child: failed at step %d (%s)", code,
              code > 0 && code < (int)(sizeof what / sizeof *what) ? what[code] : "?");
}

/* The FLUSH policy's background flusher meets the error: it is kept as flush_error and marked by an ERROR event. */
static int flusher_error_child(void)
{
    int fd = tl_test_tmpfd();
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 4u << 20, 16);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    trace_id_t t;
    if (posix_trace_create_withlog(0, &a, fd, &t) || posix_trace_start(t))
        return 1;
    struct rlimit rl;
    getrlimit(RLIMIT_FSIZE, &rl);
    rl.rlim_cur = 128u << 10;
    if (setrlimit(RLIMIT_FSIZE, &rl))
        return 2;
    /* Let the flusher write (and fail) by itself: poll the status for up to ~5 s. */
    struct posix_trace_status_info si = {0};
    for (int i = 0; i < 500 && si.posix_stream_flush_error == 0; i++) {
        record_many(5000);
        usleep(10000);
        if (posix_trace_get_status(t, &si))
            return 3;
    }
    if (si.posix_stream_flush_error != EFBIG)
        return 4;
    posix_trace_shutdown(t);
    return 0;
}

static void test_flusher_error(void)
{
    pid_t pid = pt_fork(10);
    if (pid == 0)
        _exit(flusher_error_child());
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(!WIFSIGNALED(status), "P29: no SIGXFSZ death in the flusher (signal %d)",
              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    CHECK_MSG(code == 0, "background flusher error child: failed at step %d (4: flush_error is not EFBIG)", code);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("errors: event", &ev))
        TL_DIE("eventid_open failed");
    PT_RUN(test_enospc_at_create);
    PT_RUN(test_efbig);
    PT_RUN(test_flusher_error);
    return pt_finish();
}
