/*
 * posix_helpers.h - helpers of the POSIX tracing tests (tests/test_posix_*.c),
 * on top of tl_test.h (CHECK macros, final "N passed, N failed" line).
 *
 * - pt_watchdog(s): alarm() watchdog; when it fires the test prints which
 *   test was running, a failed final line, and exits 1 (no test can hang).
 * - CHECK_ERR(expr, want): an int error number returned by a POSIX trace
 *   function (printed by name).
 * - KNOWN_FAIL_UNLESS(cond, ...): a check of a known, reported defect: when
 *   cond is false it prints "KNOWN-FAIL: ..." and is not counted as failed;
 *   when it holds it counts as passed (and says the defect looks fixed).
 * - pt_events: events read back with the getnext family, data copied.
 */
#ifndef POSIX_HELPERS_H
#define POSIX_HELPERS_H

#include <stddef.h>
#include <stdint.h>
#include <trace.h>

#include "tl_test.h"
#include "tracelog/posix.h"

/* Under AddressSanitizer/ThreadSanitizer everything is several times slower. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PT_SANITIZED 1
#endif
#endif
#ifndef PT_SANITIZED
#define PT_SANITIZED 0
#endif

/* Arms alarm(seconds): on expiry prints a failure line and _exit(1). */
void pt_watchdog(unsigned seconds);

/*
 * fork() for tests: flushes stdout first; in the child, arms a watchdog of
 * its own (alarms are not inherited) and turns LeakSanitizer off (a child's
 * heap is a copy of its parent's, and LSan's exit-time check can deadlock in
 * a child of a multi-threaded parent). Returns fork()'s result.
 */
int pt_fork(unsigned child_watchdog_seconds);

/* TL_TEST_RUN that also tells the watchdog which test is running. */
void pt_run(const char *name, void (*fn)(void));
#define PT_RUN(fn) pt_run(#fn, fn)

/* Name of an error number ("EINVAL"), or its number as text. */
const char *pt_errname(int e);

int pt_check_err(int got, int want, const char *expr, const char *file, int line);
#define CHECK_ERR(expr, want) pt_check_err((expr), (want), #expr, __FILE__, __LINE__)

int pt_known_fail(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define KNOWN_FAIL_UNLESS(cond, ...) pt_known_fail(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
/* Known failures seen so far (they are listed again by pt_finish). */
unsigned long pt_known_failures(void);
/* tl_test_finish(), after a line counting the known failures if any. */
int pt_finish(void);

/* ---- events ------------------------------------------------------------- */

#define PT_DATA_MAX (64u << 10) /* the library's largest max-data-size */

typedef struct pt_event {
    struct posix_trace_event_info info;
    size_t len;          /* *data_len as returned */
    unsigned char *data; /* malloc'd copy (len bytes, at least 1 allocated) */
} pt_event;

typedef struct pt_events {
    pt_event *ev;
    size_t n, cap;
} pt_events;

void pt_events_push(pt_events *l, const struct posix_trace_event_info *info, const void *data,
                    size_t len);
void pt_events_free(pt_events *l);

/*
 * Reads events until *unavailable: with posix_trace_trygetnext_event (try=1,
 * active stream without log) or posix_trace_getnext_event (try=0,
 * pre-recorded stream). Returns 0 or the first error returned.
 */
int pt_read_all(trace_id_t trid, int try, pt_events *out);

/* Index of the first event with id at or after from, or -1. */
long pt_find(const pt_events *l, trace_event_id_t id, size_t from);
/* Events with this id. */
size_t pt_count(const pt_events *l, trace_event_id_t id);
/* Index of the last event with this id, or -1. */
long pt_find_last(const pt_events *l, trace_event_id_t id);
/* Prints the events (id, ts, data length) to help diagnose a failure. */
void pt_events_dump(const pt_events *l, size_t max);

/* ---- misc ------------------------------------------------------------------ */

static inline uint64_t pt_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}
uint64_t pt_now_ns(void); /* CLOCK_REALTIME */

/* A stream attribute object with the given policy, stream size and max data size (0: default). */
void pt_attr(trace_attr_t *a, int stream_policy, size_t stream_size, size_t max_data);

/* posix_trace_create(_withlog when log_fd >= 0) for pid with a 1 MiB stream of `policy` and 16-byte data, started: 0, or -1 (checked). */
int pt_create_started(pid_t pid, int policy, int log_fd, trace_id_t *trid);

/* Shuts down and checks the result (0). */
void pt_shutdown(trace_id_t trid);

/*
 * Shuts down a stream with log and opens its log on the same descriptor
 * (a pre-recorded stream). Returns the posix_trace_open error.
 */
int pt_shutdown_and_open(trace_id_t trid, int fd, trace_id_t *pre);

/* ---- shared by the two option tests ---------------------------------------- */

/* Checks the four option values seen by a translation unit (each must be 200809L). */
void pt_check_options(long trace, long filter, long log, long inherit);
/* Run-time checks: tracelog_sysconf, limits, constants, types (posix-trace.md §1, §3, §4, §6, §8). */
void pt_test_options_runtime(void);

/* A filter set holding exactly one id. */
trace_event_set_t pt_set_of(trace_event_id_t id);

#endif
