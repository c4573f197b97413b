/*
 * Trace stream identifiers: every function that takes a trid answers EINVAL,
 * never crashes, for a shut-down, closed, garbage or wrong-kind identifier
 * (posix-trace.md §2.1, P21, and issue 3: "no function crashes on a shut-down,
 * closed or foreign trid ... or on a stream of the wrong kind (EINVAL)").
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

/* Which calls to make on a trid. */
enum {
    F_CLEAR, F_GET_NAME, F_TYPELIST_NEXT, F_TYPELIST_REWIND, F_GET_ATTR, F_GET_STATUS, F_GETNEXT,
    F_TIMEDGETNEXT, F_TRYGETNEXT, F_START, F_STOP, F_SHUTDOWN, F_TRID_EVENTID_OPEN, F_GET_FILTER,
    F_SET_FILTER, F_FLUSH, F_REWIND, F_CLOSE, F_SYNC, F_STATS, F_COUNT
};

static const char *const fname[F_COUNT] = {
    "posix_trace_clear", "posix_trace_eventid_get_name", "posix_trace_eventtypelist_getnext_id",
    "posix_trace_eventtypelist_rewind", "posix_trace_get_attr", "posix_trace_get_status",
    "posix_trace_getnext_event", "posix_trace_timedgetnext_event", "posix_trace_trygetnext_event",
    "posix_trace_start", "posix_trace_stop", "posix_trace_shutdown", "posix_trace_trid_eventid_open",
    "posix_trace_get_filter", "posix_trace_set_filter", "posix_trace_flush", "posix_trace_rewind",
    "posix_trace_close", "tracelog_trace_sync", "tracelog_trace_get_stats",
};

static int call(int f, trace_id_t trid)
{
    struct posix_trace_event_info info;
    char buf[256];
    size_t len;
    int unavailable;
    trace_event_id_t id;
    trace_attr_t attr;
    struct posix_trace_status_info si;
    trace_event_set_t set;
    tracelog_trace_stats stats;
    /* A deadline in the past: a valid stream with nothing to read would answer ETIMEDOUT, not block. */
    struct timespec past = {1, 0};
    posix_trace_attr_init(&attr);
    posix_trace_eventset_empty(&set);
    switch (f) {
    case F_CLEAR: return posix_trace_clear(trid);
    case F_GET_NAME: return posix_trace_eventid_get_name(trid, POSIX_TRACE_START, buf);
    case F_TYPELIST_NEXT: return posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable);
    case F_TYPELIST_REWIND: return posix_trace_eventtypelist_rewind(trid);
    case F_GET_ATTR: return posix_trace_get_attr(trid, &attr);
    case F_GET_STATUS: return posix_trace_get_status(trid, &si);
    case F_GETNEXT: return posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable);
    case F_TIMEDGETNEXT:
        return posix_trace_timedgetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable, &past);
    case F_TRYGETNEXT: return posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable);
    case F_START: return posix_trace_start(trid);
    case F_STOP: return posix_trace_stop(trid);
    case F_SHUTDOWN: return posix_trace_shutdown(trid);
    case F_TRID_EVENTID_OPEN: return posix_trace_trid_eventid_open(trid, "trid test", &id);
    case F_GET_FILTER: return posix_trace_get_filter(trid, &set);
    case F_SET_FILTER: return posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET);
    case F_FLUSH: return posix_trace_flush(trid);
    case F_REWIND: return posix_trace_rewind(trid);
    case F_CLOSE: return posix_trace_close(trid);
    case F_SYNC: return tracelog_trace_sync(trid);
    case F_STATS: return tracelog_trace_get_stats(trid, &stats);
    }
    return -1;
}

static void check_all_einval(trace_id_t trid, const char *what)
{
    for (int f = 0; f < F_COUNT; f++) {
        tl_test_context("%s on %s (trid 0x%x)", fname[f], what, trid);
        CHECK_ERR(call(f, trid), EINVAL);
    }
    tl_test_context(NULL);
}

/* §9.x errors: "EINVAL — trid invalid" for every function; P21 "stale/garbage ids get EINVAL". */
static void test_garbage(void)
{
    static const trace_id_t garbage[] = {0, 1, 2, 0xff, 0x100, 0x101, 0xdeadbeef, 0xffffffff, 0x7fffffff};
    char what[64];
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        snprintf(what, sizeof what, "garbage id 0x%x", garbage[i]);
        check_all_einval(garbage[i], what);
    }
    /* The same with streams in use, so that slots exist. */
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    for (size_t i = 0; i < sizeof garbage / sizeof garbage[0]; i++) {
        if (garbage[i] == t)
            continue;
        snprintf(what, sizeof what, "garbage id 0x%x next to a live stream", garbage[i]);
        check_all_einval(garbage[i], what);
    }
    /* A live id with another generation. */
    check_all_einval(t + 0x100, "a live slot with a wrong generation");
    check_all_einval(t ^ 0x80000000u, "a live slot with a wrong generation (high bit)");
    pt_shutdown(t);
}

/* shutdown: "trid becomes invalid"; close: "frees the trid and all its resources". */
static void test_stale(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    pt_shutdown(t);
    check_all_einval(t, "a shut-down stream without log");

    int fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    pt_shutdown(t);
    check_all_einval(t, "a shut-down stream with log");

    trace_id_t pre;
    CHECK_ERR(posix_trace_open(fd, &pre), 0);
    CHECK_ERR(posix_trace_close(pre), 0);
    check_all_einval(pre, "a closed pre-recorded stream");
    trace_id_t pre2; /* the same slot, open again: the old id's reads see the generation */
    CHECK_ERR(posix_trace_open(fd, &pre2), 0);
    CHECK((pre2 & 0xff) == (pre & 0xff) && pre2 != pre);
    check_all_einval(pre, "a closed pre-recorded stream whose slot holds another");
    CHECK_ERR(posix_trace_close(pre2), 0);

    /* A slot reused by a new stream does not revive the old id. */
    trace_id_t t2;
    CHECK_ERR(posix_trace_create(0, NULL, &t2), 0);
    CHECK(t2 != t && t2 != pre);
    check_all_einval(t, "a stale id whose slot was reused");
    pt_shutdown(t2);
    close(fd);
}

/*
 * §2.1: controller ops "cannot be invoked" on posix_trace_open ids, analyzer ops on create ids;
 * "the error to use is EINVAL". trygetnext: "must return an error for a pre-recorded stream".
 */
static void test_wrong_kind(void)
{
    int fd = tl_test_tmpfd();
    trace_id_t log_t;
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &log_t), 0);
    CHECK_ERR(posix_trace_start(log_t), 0);
    pt_shutdown(log_t);
    trace_id_t pre;
    CHECK_ERR(posix_trace_open(fd, &pre), 0);
    static const int not_on_pre[] = {F_CLEAR, F_TRYGETNEXT, F_START, F_STOP, F_SHUTDOWN, F_TRID_EVENTID_OPEN,
                                     F_GET_FILTER, F_SET_FILTER, F_FLUSH, F_SYNC, F_STATS};
    for (size_t i = 0; i < sizeof not_on_pre / sizeof not_on_pre[0]; i++) {
        tl_test_context("%s on a pre-recorded stream", fname[not_on_pre[i]]);
        CHECK_ERR(call(not_on_pre[i], pre), EINVAL);
    }
    tl_test_context(NULL);
    /* Still usable afterwards. */
    struct posix_trace_status_info si;
    CHECK_ERR(posix_trace_get_status(pre, &si), 0);
    CHECK_ERR(posix_trace_rewind(pre), 0);

    trace_id_t plain;
    CHECK_ERR(posix_trace_create(0, NULL, &plain), 0);
    /* "posix_trace_flush: no (EINVAL)" on a stream without log; rewind/close only on pre-recorded. */
    static const int not_on_plain[] = {F_FLUSH, F_REWIND, F_CLOSE, F_SYNC};
    for (size_t i = 0; i < sizeof not_on_plain / sizeof not_on_plain[0]; i++) {
        tl_test_context("%s on an active stream without log", fname[not_on_plain[i]]);
        CHECK_ERR(call(not_on_plain[i], plain), EINVAL);
    }

    int fd2 = tl_test_tmpfd();
    trace_id_t with_log;
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd2, &with_log), 0);
    CHECK_ERR(posix_trace_start(with_log), 0);
    /*
     * trygetnext: removed from the with-log list (SD5-XSH-ERN-154); getnext/timedgetnext on an active
     * stream with log: unspecified (P9), tracelog returns EINVAL (documented in <trace.h>).
     */
    static const int not_on_log[] = {F_REWIND, F_CLOSE, F_TRYGETNEXT, F_GETNEXT, F_TIMEDGETNEXT};
    for (size_t i = 0; i < sizeof not_on_log / sizeof not_on_log[0]; i++) {
        tl_test_context("%s on an active stream with log", fname[not_on_log[i]]);
        CHECK_ERR(call(not_on_log[i], with_log), EINVAL);
    }
    tl_test_context(NULL);

    /* The streams survived all of this. */
    CHECK_ERR(posix_trace_get_status(plain, &si), 0);
    CHECK_ERR(posix_trace_get_status(with_log, &si), 0);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    pt_shutdown(plain);
    pt_shutdown(with_log);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
    close(fd2);
}

/* Functions that accept every kind (§2.1) do accept them. */
static void test_right_kind(void)
{
    int fd = tl_test_tmpfd();
    trace_id_t t[3];
    CHECK_ERR(posix_trace_create(0, NULL, &t[0]), 0);
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t[1]), 0);
    int fd2 = tl_test_tmpfd();
    trace_id_t tmp;
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd2, &tmp), 0);
    pt_shutdown(tmp);
    CHECK_ERR(posix_trace_open(fd2, &t[2]), 0);
    static const int any[] = {F_GET_NAME, F_TYPELIST_NEXT, F_TYPELIST_REWIND, F_GET_ATTR, F_GET_STATUS};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < sizeof any / sizeof any[0]; i++) {
            tl_test_context("%s on stream kind %d", fname[any[i]], k);
            CHECK_ERR(call(any[i], t[k]), 0);
        }
    static const int active[] = {F_CLEAR, F_START, F_STOP, F_TRID_EVENTID_OPEN, F_GET_FILTER, F_SET_FILTER,
                                 F_STATS};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < sizeof active / sizeof active[0]; i++) {
            tl_test_context("%s on active stream kind %d", fname[active[i]], k);
            CHECK_ERR(call(active[i], t[k]), 0);
        }
    tl_test_context(NULL);
    CHECK_ERR(call(F_TRYGETNEXT, t[0]), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t[0], 1, &ev), 0); /* the START and STOP recorded above */
    pt_events_free(&ev);
    CHECK_ERR(call(F_TIMEDGETNEXT, t[0]), ETIMEDOUT);
    CHECK_ERR(call(F_FLUSH, t[1]), 0);
    CHECK_ERR(call(F_SYNC, t[1]), 0);
    CHECK_ERR(call(F_GETNEXT, t[2]), 0);
    CHECK_ERR(call(F_REWIND, t[2]), 0);
    /* posix_trace_eventid_equal: "non-zero if equal, 0 otherwise"; defined for all three kinds. */
    for (int k = 0; k < 3; k++) {
        CHECK(posix_trace_eventid_equal(t[k], POSIX_TRACE_START, POSIX_TRACE_START) != 0);
        CHECK(posix_trace_eventid_equal(t[k], POSIX_TRACE_START, POSIX_TRACE_STOP) == 0);
    }
    CHECK_ERR(call(F_SHUTDOWN, t[0]), 0);
    CHECK_ERR(call(F_SHUTDOWN, t[1]), 0);
    CHECK_ERR(call(F_CLOSE, t[2]), 0);
    close(fd);
    close(fd2);
}

/*
 * Logs open for reading do not count against TRACE_SYS_MAX (P23): 207 of
 * them leave every active slot free, and the 208th is EAGAIN. Before, the
 * 49th open failed, and a process holding 48 logs could create no stream.
 */
static void test_prerecorded_slots(void)
{
    enum { LOGS = 207 };
    int fd = tl_test_tmpfd();
    trace_id_t t, pre[LOGS + 1];
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    pt_shutdown(t);
    int fds[LOGS + 1], opened = 0, e = 0;
    for (; opened <= LOGS; opened++) {
        fds[opened] = dup(fd);
        lseek(fds[opened], 0, SEEK_SET);
        e = posix_trace_open(fds[opened], &pre[opened]);
        if (e) {
            close(fds[opened]);
            break;
        }
    }
    CHECK_EQ_INT(opened, LOGS);
    CHECK_ERR(e, EAGAIN);
    trace_id_t active[TRACE_SYS_MAX];
    int created = 0;
    while (created < TRACE_SYS_MAX && posix_trace_create(0, NULL, &active[created]) == 0)
        created++;
    CHECK_EQ_INT(created, TRACE_SYS_MAX);
    for (int i = 0; i < created; i++)
        pt_shutdown(active[i]);
    for (int i = 0; i < opened; i++) { /* each is still the log it was */
        struct posix_trace_event_info info;
        size_t len;
        int unavailable;
        char buf[64];
        CHECK_ERR(posix_trace_getnext_event(pre[i], &info, buf, sizeof buf, &len, &unavailable), 0);
        CHECK(!unavailable && info.posix_event_id == POSIX_TRACE_START);
        CHECK_ERR(posix_trace_close(pre[i]), 0);
        close(fds[i]);
    }
    close(fd);
}

int main(void)
{
    pt_watchdog(18);
    PT_RUN(test_garbage);
    PT_RUN(test_stale);
    PT_RUN(test_wrong_kind);
    PT_RUN(test_right_kind);
    PT_RUN(test_prerecorded_slots);
    return pt_finish();
}
