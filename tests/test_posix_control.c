/*
 * Controller operations on an active stream: posix_trace_start, _stop,
 * _clear, _get_status, _set_filter, _get_filter (posix-trace.md §9.2, §9.4,
 * §7.1), checked through the system events they record.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_a, ev_b;

static trace_id_t new_stream(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 64);
    trace_id_t t = 0;
    if (posix_trace_create(0, &a, &t) != 0)
        TL_DIE("posix_trace_create failed");
    return t;
}

static int status_of(trace_id_t t) /* posix_stream_status */
{
    struct posix_trace_status_info si;
    if (posix_trace_get_status(t, &si) != 0)
        return -1;
    return si.posix_stream_status;
}

/* A system event was recorded by this process and thread, from an explicit call (non-NULL call site). */
static void check_sys_origin(const pt_event *e, const char *what)
{
    CHECK_MSG(e->info.posix_pid == getpid(), "%s: pid %d, want %d", what, (int)e->info.posix_pid, (int)getpid());
    CHECK_MSG(pthread_equal(e->info.posix_thread_id, pthread_self()), "%s: thread id of the caller", what);
    /* §4.1: "system event caused by an explicit call (e.g. posix_trace_start): address of that call site". */
    CHECK_MSG(e->info.posix_prog_address != NULL, "%s: prog address set", what);
    CHECK_EQ_INT(e->info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
}

/*
 * start: "records POSIX_TRACE_START and status -> RUNNING. Already running => no START recorded".
 * §7.1 START data "with TEF: trace_event_set_t event_filter (the filter in force)".
 * stop: "records POSIX_TRACE_STOP (data 0) and status -> SUSPENDED. Already suspended => nothing recorded".
 */
static void test_start_stop(void)
{
    trace_id_t t = new_stream();
    CHECK_EQ_INT(status_of(t), POSIX_TRACE_SUSPENDED);
    trace_event_set_t filter;
    posix_trace_eventset_empty(&filter);
    posix_trace_eventset_add(ev_b, &filter);
    CHECK_ERR(posix_trace_set_filter(t, &filter, POSIX_TRACE_SET_EVENTSET), 0);

    posix_trace_event(ev_a, "before start", 12); /* not recorded: not running */
    CHECK_ERR(posix_trace_start(t), 0);
    CHECK_EQ_INT(status_of(t), POSIX_TRACE_RUNNING);
    CHECK_ERR(posix_trace_start(t), 0); /* already running: no second START */
    posix_trace_event(ev_a, "one", 3);
    CHECK_ERR(posix_trace_stop(t), 0);
    CHECK_EQ_INT(status_of(t), POSIX_TRACE_SUSPENDED);
    CHECK_ERR(posix_trace_stop(t), 0); /* already suspended: nothing recorded */
    posix_trace_event(ev_a, "after stop", 10);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_a, "two", 3);

    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    /* START, ev_a "one", STOP, START, ev_a "two". */
    CHECK_EQ(ev.n, 5);
    if (ev.n == 5) {
        CHECK_EQ(ev.ev[0].info.posix_event_id, POSIX_TRACE_START);
        CHECK_EQ(ev.ev[0].len, sizeof(trace_event_set_t));
        if (ev.ev[0].len == sizeof filter)
            CHECK_MSG(memcmp(ev.ev[0].data, &filter, sizeof filter) == 0, "START data is the filter in force");
        check_sys_origin(&ev.ev[0], "START");
        CHECK_EQ(ev.ev[1].info.posix_event_id, ev_a);
        CHECK(ev.ev[1].len == 3 && memcmp(ev.ev[1].data, "one", 3) == 0);
        CHECK_EQ(ev.ev[2].info.posix_event_id, POSIX_TRACE_STOP);
        int stop_data = -1;
        CHECK_EQ(ev.ev[2].len, sizeof(int));
        if (ev.ev[2].len == sizeof(int))
            memcpy(&stop_data, ev.ev[2].data, sizeof stop_data);
        CHECK_MSG(stop_data == 0, "§7.1 STOP data: 0 = posix_trace_stop() was called, got %d", stop_data);
        check_sys_origin(&ev.ev[2], "STOP");
        CHECK_EQ(ev.ev[3].info.posix_event_id, POSIX_TRACE_START);
        CHECK_EQ(ev.ev[4].info.posix_event_id, ev_a);
        CHECK(ev.ev[4].len == 3 && memcmp(ev.ev[4].data, "two", 3) == 0);
        /* START's call site is not STOP's call site (two different calls in this function). */
        CHECK(ev.ev[0].info.posix_prog_address != ev.ev[2].info.posix_prog_address);
    } else {
        pt_events_dump(&ev, 20);
    }
    pt_events_free(&ev);
    pt_shutdown(t);
}

/* P19 (documented): "the system events the library records itself are never filtered out". */
static void test_system_events_not_filtered(void)
{
    trace_id_t t = new_stream();
    trace_event_set_t all;
    posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS);
    CHECK_ERR(posix_trace_set_filter(t, &all, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_a, NULL, 0);
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, NULL, 0);
    CHECK_ERR(posix_trace_stop(t), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 2);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_START), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_STOP), 1);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/*
 * clear: "All previously recorded events are lost; posix_stream_full_status := NOT_FULL"; "running/suspended
 * status kept"; "name<->id map kept".
 */
static void test_clear(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 64u << 10, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    for (int i = 0; i < 20000; i++)
        posix_trace_event(ev_a, &i, sizeof i);
    struct posix_trace_status_info si;
    CHECK_ERR(posix_trace_get_status(t, &si), 0);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_FULL);
    CHECK_ERR(posix_trace_clear(t), 0);
    CHECK_ERR(posix_trace_get_status(t, &si), 0);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_MSG(ev.n == 0, "nothing left after clear: %zu events", ev.n);
    pt_events_free(&ev);
    /* Still recording, names still known. */
    int x = 7;
    posix_trace_event(ev_b, &x, sizeof x);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 1);
    if (ev.n == 1) {
        CHECK_EQ(ev.ev[0].info.posix_event_id, ev_b);
        CHECK(ev.ev[0].len == sizeof x && memcmp(ev.ev[0].data, &x, sizeof x) == 0);
    }
    pt_events_free(&ev);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t, ev_b, name), 0);
    CHECK_STR_EQ(name, "control b");

    /* A suspended stream stays suspended. */
    CHECK_ERR(posix_trace_stop(t), 0);
    CHECK_ERR(posix_trace_clear(t), 0);
    CHECK_EQ_INT(status_of(t), POSIX_TRACE_SUSPENDED);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_MSG(ev.n == 0, "the STOP before the clear is gone too: %zu events", ev.n);
    pt_events_free(&ev);
    pt_shutdown(t);
}

static int filter_has(trace_id_t t, trace_event_id_t id);

/*
 * clear reinitialises the stream "as if it were returning from the posix_trace_create() function", but
 * for its resources, names and status: the filter is empty again (P16). Running, the change is recorded
 * as set_filter records one: FILTER with the old set and the empty one; an empty filter records nothing.
 */
static void test_clear_empties_filter(void)
{
    trace_id_t t = new_stream();
    trace_event_set_t sa = pt_set_of(ev_a);
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_clear(t), 0); /* suspended */
    CHECK_EQ_INT(filter_has(t, ev_a), 0);
    CHECK_EQ_INT(status_of(t), POSIX_TRACE_SUSPENDED);
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_a, NULL, 0); /* filtered out */
    CHECK_ERR(posix_trace_clear(t), 0);
    CHECK_EQ_INT(filter_has(t, ev_a), 0);
    posix_trace_event(ev_a, NULL, 0); /* recorded */
    CHECK_ERR(posix_trace_clear(t), 0); /* the filter is empty: no FILTER event */
    posix_trace_event(ev_b, NULL, 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_MSG(ev.n == 1 && ev.ev[0].info.posix_event_id == ev_b, "after a clear of an empty filter: ev_b alone (%zu)",
              ev.n);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0); /* the FILTER of set_filter */
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_clear(t), 0);
    posix_trace_event(ev_a, NULL, 0);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    int ok = ev.n == 2 && ev.ev[0].info.posix_event_id == POSIX_TRACE_FILTER &&
             ev.ev[0].len == 2 * sizeof(trace_event_set_t) && ev.ev[1].info.posix_event_id == ev_a;
    if (ok) {
        trace_event_set_t both[2], none;
        memcpy(both, ev.ev[0].data, sizeof both);
        posix_trace_eventset_empty(&none);
        ok = memcmp(&both[0], &sa, sizeof sa) == 0 && memcmp(&both[1], &none, sizeof none) == 0;
    }
    CHECK_MSG(ok, "clear of a running stream: FILTER (old set, empty set), then ev_a recorded (%zu events)", ev.n);
    pt_events_free(&ev);
    pt_shutdown(t);
}

static int filter_has(trace_id_t t, trace_event_id_t id)
{
    trace_event_set_t f;
    int m = -1;
    if (posix_trace_get_filter(t, &f) != 0 || posix_trace_eventset_ismember(id, &f, &m) != 0)
        return -1;
    return m != 0;
}

/*
 * §9.4: "POSIX_TRACE_SET_EVENTSET (filter := set), POSIX_TRACE_ADD_EVENTSET (filter := filter ∪ set),
 * POSIX_TRACE_SUB_EVENTSET (filter := filter − set)". "Default (no set_filter call) = nothing filtered."
 */
static void test_filter_semantics(void)
{
    trace_id_t t = new_stream();
    CHECK_EQ_INT(filter_has(t, ev_a), 0);
    CHECK_EQ_INT(filter_has(t, POSIX_TRACE_START), 0);
    trace_event_set_t sa = pt_set_of(ev_a), sb = pt_set_of(ev_b);
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_EQ_INT(filter_has(t, ev_a), 1);
    CHECK_EQ_INT(filter_has(t, ev_b), 0);
    CHECK_ERR(posix_trace_set_filter(t, &sb, POSIX_TRACE_ADD_EVENTSET), 0);
    CHECK_EQ_INT(filter_has(t, ev_a), 1);
    CHECK_EQ_INT(filter_has(t, ev_b), 1);
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SUB_EVENTSET), 0);
    CHECK_EQ_INT(filter_has(t, ev_a), 0);
    CHECK_EQ_INT(filter_has(t, ev_b), 1);
    /* SUB of a non-member and ADD of a member change nothing. */
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SUB_EVENTSET), 0);
    CHECK_ERR(posix_trace_set_filter(t, &sb, POSIX_TRACE_ADD_EVENTSET), 0);
    CHECK_EQ_INT(filter_has(t, ev_a), 0);
    CHECK_EQ_INT(filter_has(t, ev_b), 1);
    /* SET replaces. */
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_EQ_INT(filter_has(t, ev_a), 1);
    CHECK_EQ_INT(filter_has(t, ev_b), 0);
    trace_event_set_t got;
    CHECK_ERR(posix_trace_get_filter(t, &got), 0);
    CHECK_MEM_EQ(&got, &sa, sizeof got);

    /* "EINVAL (trid not an active stream, or *set invalid)"; an unknown how is an invalid argument. */
    CHECK_ERR(posix_trace_set_filter(t, &sb, 0), EINVAL);
    CHECK_ERR(posix_trace_set_filter(t, &sb, 99), EINVAL);
    CHECK_ERR(posix_trace_set_filter(t, NULL, POSIX_TRACE_SET_EVENTSET), EINVAL);
    CHECK_ERR(posix_trace_get_filter(t, NULL), EINVAL);
    /* A failed call changed nothing. */
    CHECK_EQ_INT(filter_has(t, ev_a), 1);
    CHECK_EQ_INT(filter_has(t, ev_b), 0);
    pt_shutdown(t);
}

/*
 * §9.4: "The filter is the set of types filtered out (not recorded)"; "if called while the trace is in
 * progress, a POSIX_TRACE_FILTER event with old and new sets is recorded". §7.1 FILTER data:
 * "trace_event_set_t old_event_filter, trace_event_set_t new_event_filter".
 */
static void test_filtering(void)
{
    trace_id_t t = new_stream();
    trace_event_set_t sa = pt_set_of(ev_a), empty;
    posix_trace_eventset_empty(&empty);
    /* Suspended: no FILTER event. */
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_a, "a1", 2); /* filtered out */
    posix_trace_event(ev_b, "b1", 2);
    /* Running: FILTER(old = {a}, new = {}). */
    CHECK_ERR(posix_trace_set_filter(t, &sa, POSIX_TRACE_SUB_EVENTSET), 0);
    posix_trace_event(ev_a, "a2", 2);
    posix_trace_event(ev_b, "b2", 2);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    /* START, b1, FILTER, a2, b2 */
    CHECK_EQ(ev.n, 5);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_FILTER), 1);
    if (ev.n == 5) {
        CHECK_EQ(ev.ev[0].info.posix_event_id, POSIX_TRACE_START);
        CHECK_EQ(ev.ev[1].info.posix_event_id, ev_b);
        CHECK(ev.ev[1].len == 2 && memcmp(ev.ev[1].data, "b1", 2) == 0);
        const pt_event *f = &ev.ev[2];
        CHECK_EQ(f->info.posix_event_id, POSIX_TRACE_FILTER);
        CHECK_EQ(f->len, 2 * sizeof(trace_event_set_t));
        if (f->len == 2 * sizeof(trace_event_set_t)) {
            CHECK_MSG(memcmp(f->data, &sa, sizeof sa) == 0, "FILTER data: old_event_filter first");
            CHECK_MSG(memcmp(f->data + sizeof sa, &empty, sizeof empty) == 0, "FILTER data: then new_event_filter");
        }
        check_sys_origin(f, "FILTER");
        CHECK_EQ(ev.ev[3].info.posix_event_id, ev_a);
        CHECK(ev.ev[3].len == 2 && memcmp(ev.ev[3].data, "a2", 2) == 0);
        CHECK_EQ(ev.ev[4].info.posix_event_id, ev_b);
    } else {
        pt_events_dump(&ev, 20);
    }
    pt_events_free(&ev);

    /* Filtering all user events leaves nothing but the system events. */
    trace_event_set_t all;
    posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS);
    CHECK_ERR(posix_trace_set_filter(t, &all, POSIX_TRACE_SET_EVENTSET), 0);
    for (int i = 0; i < 100; i++) {
        posix_trace_event(ev_a, &i, sizeof i);
        posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, &i, sizeof i);
    }
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_FILTER), 1);
    pt_events_free(&ev);
    /* Stopped streams are suspended: set_filter records nothing. */
    CHECK_ERR(posix_trace_stop(t), 0);
    CHECK_ERR(posix_trace_set_filter(t, &empty, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_STOP), 1);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/* The filter is per stream: an event filtered out of one stream is still recorded in another. */
static void test_filter_per_stream(void)
{
    trace_id_t t1 = new_stream(), t2 = new_stream();
    trace_event_set_t sa = pt_set_of(ev_a);
    CHECK_ERR(posix_trace_set_filter(t1, &sa, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_start(t1), 0);
    CHECK_ERR(posix_trace_start(t2), 0);
    posix_trace_event(ev_a, "x", 1);
    pt_events e1 = {0}, e2 = {0};
    CHECK_ERR(pt_read_all(t1, 1, &e1), 0);
    CHECK_ERR(pt_read_all(t2, 1, &e2), 0);
    CHECK_EQ(pt_count(&e1, ev_a), 0);
    CHECK_EQ(pt_count(&e2, ev_a), 1);
    pt_events_free(&e1);
    pt_events_free(&e2);
    pt_shutdown(t1);
    pt_shutdown(t2);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("control a", &ev_a) || posix_trace_eventid_open("control b", &ev_b))
        TL_DIE("posix_trace_eventid_open failed");
    PT_RUN(test_start_stop);
    PT_RUN(test_system_events_not_filtered);
    PT_RUN(test_clear);
    PT_RUN(test_clear_empties_filter);
    PT_RUN(test_filter_semantics);
    PT_RUN(test_filtering);
    PT_RUN(test_filter_per_stream);
    return pt_finish();
}
