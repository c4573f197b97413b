/*
 * posix_trace_create / posix_trace_create_withlog / posix_trace_shutdown:
 * the errors of posix-trace.md §9.2, the TRACE_SYS_MAX limit, and what a
 * created stream looks like (SUSPENDED, empty filter, NO_OVERRUN).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

/* "EINVAL — some attribute in attr is invalid"; a NULL trid is an invalid argument. */
static void test_invalid_arguments(void)
{
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, NULL), EINVAL);
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, NULL), EINVAL);

    /* "EINVAL ... (e.g. stream policy FLUSH on a stream without log)". */
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 0, 0);
    CHECK_ERR(posix_trace_create(0, &a, &t), EINVAL);
    /* The same attributes are fine with a log. */
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    pt_shutdown(t);

    /* An attribute object that was never initialised (magic 0) or was destroyed. */
    trace_attr_t zero;
    memset(&zero, 0, sizeof zero);
    CHECK_ERR(posix_trace_create(0, &zero, &t), EINVAL);
    CHECK_ERR(posix_trace_create_withlog(0, &zero, fd, &t), EINVAL);
    trace_attr_t gone;
    posix_trace_attr_init(&gone);
    posix_trace_attr_destroy(&gone);
    CHECK_ERR(posix_trace_create(0, &gone, &t), EINVAL);
    close(fd);
}

/* create_withlog: "EBADF — file_desc not a valid descriptor open for writing". */
static void test_bad_descriptors(void)
{
    trace_id_t t;
    int fd = tl_test_tmpfd();
    close(fd);
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), EBADF);
    CHECK_ERR(posix_trace_create_withlog(0, NULL, -1, &t), EBADF);

    int rw = tl_test_tmpfd();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", rw);
    int ro = open(path, O_RDONLY);
    CHECK(ro >= 0);
    static const int policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND};
    for (int i = 0; i < 3; i++) {
        trace_attr_t a;
        posix_trace_attr_init(&a);
        posix_trace_attr_setlogfullpolicy(&a, policies[i]);
        tl_test_context("log policy %d", policies[i]);
        CHECK_ERR(posix_trace_create_withlog(0, &a, ro, &t), EBADF);
    }
    tl_test_context(NULL);
    close(ro);
    close(rw);
}

/*
 * create_withlog: "EINVAL — file type does not support the log policy"; P14: LOOP "requires a seekable
 * regular file (reject others with EINVAL)"; P29: "O_APPEND is incompatible with LOOP/UNTIL_FULL overwrite".
 */
static void test_log_file_type(void)
{
    trace_id_t t;
    int p[2];
    CHECK(pipe(p) == 0);
    trace_attr_t a;
    posix_trace_attr_init(&a);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_LOOP);
    CHECK_ERR(posix_trace_create_withlog(0, &a, p[1], &t), EINVAL);
    /* The default log policy is LOOP: a pipe is refused with default attributes too. */
    CHECK_ERR(posix_trace_create_withlog(0, NULL, p[1], &t), EINVAL);

    int rw = tl_test_tmpfd();
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", rw);
    int app = open(path, O_WRONLY | O_APPEND);
    CHECK(app >= 0);
    CHECK_ERR(posix_trace_create_withlog(0, &a, app, &t), EINVAL);

    /* APPEND logs are written sequentially: a pipe or an O_APPEND file is accepted. */
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    int e = posix_trace_create_withlog(0, &a, app, &t);
    CHECK_ERR(e, 0);
    if (!e)
        pt_shutdown(t);
    close(app);
    close(rw);
    close(p[0]);
    close(p[1]);
}

/* "ESRCH — pid does not exist"; "EPERM — no privilege to trace pid". */
static void test_target_pid(void)
{
    trace_id_t t;
    pid_t child = pt_fork(10);
    if (child == 0)
        _exit(0);
    CHECK(child > 0);
    waitpid(child, NULL, 0); /* reaped: the pid no longer exists */
    CHECK_ERR(posix_trace_create(child, NULL, &t), ESRCH);
    int fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(child, NULL, fd, &t), ESRCH);
    CHECK_ERR(posix_trace_create(0x3ffffff0, NULL, &t), ESRCH);

    /* The caller's own pid is "the calling process", like 0. */
    CHECK_ERR(posix_trace_create(getpid(), NULL, &t), 0);
    pt_shutdown(t);

    /* Another process that runs no libtracelog (ctest, or the shell): ENOTSUP, never a stream that records
       nothing (test_posix_controller covers tracing another process). */
    CHECK_ERR(posix_trace_create(getppid(), NULL, &t), ENOTSUP);
    close(fd);
}

/* "ENOMEM — not enough memory for these parameters": a huge stream size is refused, not wrapped around. */
static void test_huge_stream(void)
{
    static const size_t sizes[] = {(size_t)1 << 46, SIZE_MAX / 2, SIZE_MAX - 4095, SIZE_MAX};
    for (size_t i = 0; i < 2 * sizeof sizes / sizeof sizes[0]; i++) { /* each size not inherited, then inherited */
        trace_attr_t a;
        pt_attr(&a, POSIX_TRACE_LOOP, 0, 16);
        posix_trace_attr_setstreamsize(&a, sizes[i / 2]);
        posix_trace_attr_setinherited(&a, i % 2 ? POSIX_TRACE_INHERITED : POSIX_TRACE_CLOSE_FOR_CHILD);
        trace_id_t t;
        tl_test_context("stream size %zu, inherited %d", sizes[i / 2], (int)(i % 2));
        int e = posix_trace_create(0, &a, &t);
        CHECK_ERR(e, ENOMEM);
        if (e == 0) {
            /* If it was accepted anyway, it must work: record into every lane would be the real proof. */
            posix_trace_start(t);
            posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "x", 1);
            pt_shutdown(t);
        }
    }
    tl_test_context(NULL);
}

/* "EAGAIN — {TRACE_SYS_MAX} exceeded" (tracelog counts per process); a freed slot can be reused. */
static void test_sys_max(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 64u << 10, 16);
    trace_id_t t[TRACE_SYS_MAX + 1];
    int made = 0;
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        if (posix_trace_create(0, &a, &t[i]) != 0)
            break;
        made++;
    }
    CHECK_EQ_INT(made, TRACE_SYS_MAX);
    /* Distinct identifiers. */
    int distinct = 1;
    for (int i = 0; i < made; i++)
        for (int j = i + 1; j < made; j++)
            distinct &= t[i] != t[j];
    CHECK(distinct);
    trace_id_t extra;
    CHECK_ERR(posix_trace_create(0, &a, &extra), EAGAIN);
    int fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &extra), EAGAIN);
    /* The FLUSH policy's flusher thread, started before the slot was refused, is stopped before the
       stream is freed (it ran on freed memory before; AddressSanitizer saw it). */
    trace_attr_t flush;
    pt_attr(&flush, POSIX_TRACE_FLUSH, 64u << 10, 16);
    CHECK_ERR(posix_trace_create_withlog(0, &flush, fd, &extra), EAGAIN);
    usleep(20000);
    /* Pre-recorded streams are not counted (P23): open works while all TRACE_SYS_MAX are in use
       (test_posix_trid: and the other way round). */
    CHECK_ERR(posix_trace_shutdown(t[made - 1]), 0);
    made--;
    int logfd = tl_test_tmpfd();
    trace_id_t lt;
    CHECK_ERR(posix_trace_create_withlog(0, &a, logfd, &lt), 0);
    pt_shutdown(lt);
    CHECK_ERR(posix_trace_create(0, &a, &t[made]), 0);
    made++;
    trace_id_t pre;
    CHECK_ERR(posix_trace_open(logfd, &pre), 0);
    CHECK_ERR(posix_trace_close(pre), 0);
    for (int i = 0; i < made; i++)
        CHECK_ERR(posix_trace_shutdown(t[i]), 0);
    /* Everything is free again. */
    CHECK_ERR(posix_trace_create(0, &a, &extra), 0);
    pt_shutdown(extra);
    close(fd);
    close(logfd);
}

/* create: "Stream starts SUSPENDED; with TEF the filter is empty"; §4.2 "NO_OVERRUN at creation". */
static void test_initial_state(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    struct posix_trace_status_info si;
    memset(&si, 0x5a, sizeof si);
    CHECK_ERR(posix_trace_get_status(t, &si), 0);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    /* §4.2: "For a stream without log: posix_log_overrun_status = NO_OVERRUN and posix_log_full_status = NOT_FULL". */
    CHECK_EQ_INT(si.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
    CHECK_EQ_INT(si.posix_log_full_status, POSIX_TRACE_NOT_FULL);
    CHECK_EQ_INT(si.posix_stream_flush_status, POSIX_TRACE_NOT_FLUSHING);
    CHECK_EQ_INT(si.posix_stream_flush_error, 0);
    trace_event_set_t f, empty;
    memset(&f, 0xff, sizeof f);
    posix_trace_eventset_empty(&empty);
    CHECK_ERR(posix_trace_get_filter(t, &f), 0);
    CHECK_MEM_EQ(&f, &empty, sizeof f);
    /* Nothing is recorded while SUSPENDED. */
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "x", 1);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 0);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_get_status(t, NULL), EINVAL);
    pt_shutdown(t);
    /* shutdown: "trid becomes invalid". */
    CHECK_ERR(posix_trace_shutdown(t), EINVAL);
    CHECK_ERR(posix_trace_get_status(t, &si), EINVAL);
}

/* shutdown of a stream without log is allowed (P10: "EINVAL only if trid is not an active stream"). */
static void test_shutdown_without_log(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "unread", 6);
    /* "frees all resources unconditionally (whether or not events were read)". */
    CHECK_ERR(posix_trace_shutdown(t), 0);
    /* Recording after shutdown is a no-op, not a crash. */
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "late", 4);
}

int main(void)
{
    pt_watchdog(18);
    PT_RUN(test_invalid_arguments);
    PT_RUN(test_bad_descriptors);
    PT_RUN(test_log_file_type);
    PT_RUN(test_target_pid);
    PT_RUN(test_huge_stream);
    PT_RUN(test_sys_max);
    PT_RUN(test_initial_state);
    PT_RUN(test_shutdown_without_log);
    return pt_finish();
}
