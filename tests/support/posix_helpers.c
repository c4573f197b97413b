#define _GNU_SOURCE

#include "posix_helpers.h"

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- watchdog --------------------------------------------------------------- */

static const char *volatile running_test = "(none)";
static unsigned watchdog_seconds;

static void put(const char *s) { (void)!write(1, s, strlen(s)); }

static void on_alarm(int sig)
{
    (void)sig;
    char num[16];
    int n = 0;
    char rev[16];
    unsigned v = watchdog_seconds;
    do
        rev[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 15);
    for (int i = 0; i < n; i++)
        num[i] = rev[n - 1 - i];
    num[n] = 0;
    put("FAILED: watchdog: still running after ");
    put(num);
    put(" s, in test ");
    put(running_test);
    put("\n0 passed, 1 failed\n");
    _exit(1);
}

void pt_watchdog(unsigned seconds)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    watchdog_seconds = seconds;
    alarm(seconds);
}

static volatile int in_forked_child;

/* LeakSanitizer asks the program whether to run (sanitizer/lsan_interface.h); ignored without it. */
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_forked_child; }

int pt_fork(unsigned child_watchdog_seconds)
{
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        in_forked_child = 1;
        running_test = "(forked child)";
        pt_watchdog(child_watchdog_seconds);
    }
    return (int)pid;
}

void pt_run(const char *name, void (*fn)(void))
{
    running_test = name;
    tl_test_run(name, fn);
    running_test = "(between tests)";
}

/* ---- checks ------------------------------------------------------------------ */

const char *pt_errname(int e)
{
    static const struct {
        int e;
        const char *name;
    } names[] = {
        {0, "0"},           {EINVAL, "EINVAL"}, {EBADF, "EBADF"},   {ESRCH, "ESRCH"},
        {EPERM, "EPERM"},   {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"}, {EINTR, "EINTR"},
        {ETIMEDOUT, "ETIMEDOUT"}, {ENAMETOOLONG, "ENAMETOOLONG"}, {ENOSPC, "ENOSPC"},
        {EFBIG, "EFBIG"},   {EIO, "EIO"},       {EMFILE, "EMFILE"}, {ENOTSUP, "ENOTSUP"},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].e == e)
            return names[i].name;
    static char buf[4][24];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "error %d", e);
    return b;
}

int pt_check_err(int got, int want, const char *expr, const char *file, int line)
{
    return tl_test_check(got == want, file, line, "%s: got %s, want %s", expr, pt_errname(got),
                         pt_errname(want));
}

static unsigned long known;

int pt_known_fail(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        tl_test_check(1, file, line, "%s", "");
        printf("%s:%d: note: a check marked KNOWN-FAIL passed (defect fixed? remove the mark)\n", file,
               line);
        return 1;
    }
    known++;
    printf("KNOWN-FAIL: %s:%d: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
    return 0;
}

unsigned long pt_known_failures(void) { return known; }

int pt_finish(void)
{
    if (known)
        printf("%lu known failures (KNOWN-FAIL lines above, not counted)\n", known);
    return tl_test_finish();
}

/* ---- events ------------------------------------------------------------------ */

void pt_events_push(pt_events *l, const struct posix_trace_event_info *info, const void *data,
                    size_t len)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        pt_event *p = realloc(l->ev, cap * sizeof *p);
        if (!p)
            TL_DIE("out of memory");
        l->ev = p;
        l->cap = cap;
    }
    pt_event *e = &l->ev[l->n++];
    e->info = *info;
    e->len = len;
    e->data = malloc(len ? len : 1);
    if (!e->data)
        TL_DIE("out of memory");
    if (len)
        memcpy(e->data, data, len);
}

void pt_events_free(pt_events *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->ev[i].data);
    free(l->ev);
    memset(l, 0, sizeof *l);
}

int pt_read_all(trace_id_t trid, int try, pt_events *out)
{
    unsigned char *buf = malloc(PT_DATA_MAX);
    if (!buf)
        TL_DIE("out of memory");
    int e;
    for (;;) {
        struct posix_trace_event_info info;
        size_t len = 0;
        int unavailable = 0;
        e = try ? posix_trace_trygetnext_event(trid, &info, buf, PT_DATA_MAX, &len, &unavailable)
                : posix_trace_getnext_event(trid, &info, buf, PT_DATA_MAX, &len, &unavailable);
        if (e || unavailable)
            break;
        pt_events_push(out, &info, buf, len);
    }
    free(buf);
    return e;
}

long pt_find(const pt_events *l, trace_event_id_t id, size_t from)
{
    for (size_t i = from; i < l->n; i++)
        if (l->ev[i].info.posix_event_id == id)
            return (long)i;
    return -1;
}

long pt_find_last(const pt_events *l, trace_event_id_t id)
{
    for (size_t i = l->n; i-- > 0;)
        if (l->ev[i].info.posix_event_id == id)
            return (long)i;
    return -1;
}

size_t pt_count(const pt_events *l, trace_event_id_t id)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++)
        n += l->ev[i].info.posix_event_id == id;
    return n;
}

void pt_events_dump(const pt_events *l, size_t max)
{
    printf("   %zu events:\n", l->n);
    for (size_t i = 0; i < l->n && i < max; i++) {
        const pt_event *e = &l->ev[i];
        printf("   [%zu] id %u pid %d ts %llu len %zu trunc %d\n", i, e->info.posix_event_id,
               (int)e->info.posix_pid, (unsigned long long)pt_ns(&e->info.posix_timestamp), e->len,
               e->info.posix_truncation_status);
    }
    if (l->n > max)
        printf("   ...\n");
}

/* ---- misc ------------------------------------------------------------------------ */

uint64_t pt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return pt_ns(&ts);
}

void pt_attr(trace_attr_t *a, int stream_policy, size_t stream_size, size_t max_data)
{
    if (posix_trace_attr_init(a) != 0)
        TL_DIE("posix_trace_attr_init failed");
    if (stream_policy && posix_trace_attr_setstreamfullpolicy(a, stream_policy) != 0)
        TL_DIE("setstreamfullpolicy(%d) failed", stream_policy);
    if (stream_size && posix_trace_attr_setstreamsize(a, stream_size) != 0)
        TL_DIE("setstreamsize failed");
    if (max_data && posix_trace_attr_setmaxdatasize(a, max_data) != 0)
        TL_DIE("setmaxdatasize failed");
}

int pt_create_started(pid_t pid, int policy, int log_fd, trace_id_t *trid)
{
    trace_attr_t attr;
    pt_attr(&attr, policy, 1u << 20, 16);
    int e = log_fd < 0 ? posix_trace_create(pid, &attr, trid) : posix_trace_create_withlog(pid, &attr, log_fd, trid);
    if (!CHECK_ERR(e, 0))
        return -1;
    return CHECK_ERR(posix_trace_start(*trid), 0) ? 0 : -1;
}

void pt_shutdown(trace_id_t trid) { CHECK_ERR(posix_trace_shutdown(trid), 0); }

int pt_shutdown_and_open(trace_id_t trid, int fd, trace_id_t *pre)
{
    CHECK_ERR(posix_trace_shutdown(trid), 0);
    return posix_trace_open(fd, pre);
}

trace_event_set_t pt_set_of(trace_event_id_t id)
{
    trace_event_set_t s;
    posix_trace_eventset_empty(&s);
    posix_trace_eventset_add(id, &s);
    return s;
}

/* ---- option tests --------------------------------------------------------------- */

void pt_check_options(long trace, long filter, long log, long inherit)
{
    /* §1: "if defined, each macro is -1, 0 or 200809L (Issue 7)". */
    CHECK_MSG(trace == 200809L, "_POSIX_TRACE == 200809L: %ld", trace);
    CHECK_MSG(filter == 200809L, "_POSIX_TRACE_EVENT_FILTER == 200809L: %ld", filter);
    CHECK_MSG(log == 200809L, "_POSIX_TRACE_LOG == 200809L: %ld", log);
    CHECK_MSG(inherit == 200809L, "_POSIX_TRACE_INHERIT == 200809L: %ld", inherit);
}

void pt_test_options_runtime(void)
{
    /* §1: "sysconf must report -1 or 200809L"; P1: a documented run-time query (tracelog_sysconf). */
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE), 200809L);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_EVENT_FILTER), 200809L);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_LOG), 200809L);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_INHERIT), 200809L);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_EVENT_NAME_MAX), TRACE_EVENT_NAME_MAX);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_NAME_MAX), TRACE_NAME_MAX);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_SYS_MAX), TRACE_SYS_MAX);
    CHECK_EQ_INT(tracelog_sysconf(_SC_TRACE_USER_EVENT_MAX), TRACE_USER_EVENT_MAX);
    /* Other names are sysconf()'s. */
    CHECK_EQ_INT(tracelog_sysconf(_SC_PAGESIZE), sysconf(_SC_PAGESIZE));
    CHECK_EQ_INT(tracelog_sysconf(_SC_OPEN_MAX), sysconf(_SC_OPEN_MAX));

    /* §8: the _POSIX_ minima and "minimum acceptable" values. */
    CHECK_EQ_INT(_POSIX_TRACE_EVENT_NAME_MAX, 30);
    CHECK_EQ_INT(_POSIX_TRACE_NAME_MAX, 8);
    CHECK_EQ_INT(_POSIX_TRACE_SYS_MAX, 8);
    CHECK_EQ_INT(_POSIX_TRACE_USER_EVENT_MAX, 32);
    CHECK(TRACE_EVENT_NAME_MAX >= _POSIX_TRACE_EVENT_NAME_MAX);
    CHECK(TRACE_NAME_MAX >= _POSIX_TRACE_NAME_MAX);
    CHECK(TRACE_SYS_MAX >= _POSIX_TRACE_SYS_MAX);
    CHECK(TRACE_USER_EVENT_MAX >= _POSIX_TRACE_USER_EVENT_MAX);

    /* P3: "UNNAMED user event spelling ... Define both", same value. */
    CHECK(POSIX_TRACE_UNNAMED_USEREVENT == POSIX_TRACE_UNNAMED_USER_EVENT);

    /* §6: "the overrun status is reset to zero after its value is read, so make POSIX_TRACE_NO_OVERRUN == 0". */
    CHECK_EQ_INT(POSIX_TRACE_NO_OVERRUN, 0);
    CHECK(POSIX_TRACE_OVERRUN != POSIX_TRACE_NO_OVERRUN);
    CHECK(POSIX_TRACE_RUNNING != POSIX_TRACE_SUSPENDED);
    CHECK(POSIX_TRACE_FULL != POSIX_TRACE_NOT_FULL);
    CHECK(POSIX_TRACE_FLUSHING != POSIX_TRACE_NOT_FLUSHING);
    CHECK(POSIX_TRACE_INHERITED != POSIX_TRACE_CLOSE_FOR_CHILD);
    /* §6: "POSIX_TRACE_LOOP/POSIX_TRACE_UNTIL_FULL are shared by both policy attributes": values distinct. */
    const int pol[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND};
    const int trunc[] = {POSIX_TRACE_NOT_TRUNCATED, POSIX_TRACE_TRUNCATED_RECORD, POSIX_TRACE_TRUNCATED_READ};
    const int what[] = {POSIX_TRACE_WOPID_EVENTS, POSIX_TRACE_SYSTEM_EVENTS, POSIX_TRACE_ALL_EVENTS};
    const int how[] = {POSIX_TRACE_SET_EVENTSET, POSIX_TRACE_ADD_EVENTSET, POSIX_TRACE_SUB_EVENTSET};
    int distinct = 1;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            distinct &= pol[i] != pol[j];
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            distinct &= trunc[i] != trunc[j] && what[i] != what[j] && how[i] != how[j];
    CHECK_MSG(distinct, "the values of each family of constants are distinct");

    /* §7.1 + P2: the system event types (POSIX_TRACE_ERROR included) and the unnamed user event are distinct ids. */
    const trace_event_id_t ids[] = {POSIX_TRACE_ERROR,       POSIX_TRACE_START,      POSIX_TRACE_STOP,
                                    POSIX_TRACE_OVERFLOW,    POSIX_TRACE_RESUME,     POSIX_TRACE_FILTER,
                                    POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP, POSIX_TRACE_UNNAMED_USEREVENT};
    distinct = 1;
    for (int i = 0; i < 9; i++)
        for (int j = i + 1; j < 9; j++)
            distinct &= ids[i] != ids[j];
    CHECK_MSG(distinct, "system event ids are distinct");

    /* §3: trace_event_set_t "must be assignable, address-takable, passable by value". */
    trace_event_set_t a, b;
    posix_trace_eventset_empty(&a);
    posix_trace_eventset_add(POSIX_TRACE_STOP, &a);
    b = a;
    int member = 0;
    posix_trace_eventset_ismember(POSIX_TRACE_STOP, &b, &member);
    CHECK_MSG(member, "a copied event set keeps its members");

    /* §4: the members with the standard's types (a wrong type is a compile-time warning, -Werror). */
    struct posix_trace_event_info ei;
    trace_event_id_t *p_id = &ei.posix_event_id;
    pid_t *p_pid = &ei.posix_pid;
    void **p_addr = &ei.posix_prog_address;
    pthread_t *p_tid = &ei.posix_thread_id;
    struct timespec *p_ts = &ei.posix_timestamp;
    int *p_tr = &ei.posix_truncation_status;
    struct posix_trace_status_info si;
    int *st[] = {&si.posix_stream_status,      &si.posix_stream_full_status, &si.posix_stream_overrun_status,
                 &si.posix_stream_flush_status, &si.posix_stream_flush_error, &si.posix_log_overrun_status,
                 &si.posix_log_full_status};
    CHECK(p_id && p_pid && p_addr && p_tid && p_ts && p_tr && st[6]);
}
