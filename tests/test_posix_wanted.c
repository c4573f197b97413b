/*
 * The trace point's per-process summary of wanted ids (libtracelog/posix/
 * wanted.c): whatever the summary says, an event is recorded exactly when
 * some stream of the process would record it. Each transition through the
 * public API: filter set -> filtered, filter removed -> recorded, stop ->
 * nothing, start -> recorded; several streams; an inherited stream whose
 * filter the parent changes after fork (the child cannot see the change).
 */
#define _GNU_SOURCE

#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_a, ev_b;

static trace_id_t running_stream(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    trace_id_t t = 0;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    return t;
}

/* Events of type id in the stream now (read and gone). */
static size_t count_read(trace_id_t t, trace_event_id_t id)
{
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    size_t n = pt_count(&ev, id);
    pt_events_free(&ev);
    return n;
}

static void set_filter(trace_id_t t, trace_event_id_t id, int how)
{
    trace_event_set_t set = pt_set_of(id);
    CHECK_ERR(posix_trace_set_filter(t, &set, how), 0);
}

static void test_filter_transitions(void)
{
    trace_id_t t = running_stream();
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t, ev_a), 1);

    set_filter(t, ev_a, POSIX_TRACE_SET_EVENTSET);
    posix_trace_event(ev_a, "a", 1);
    posix_trace_event(ev_b, "b", 1);
    CHECK_EQ(count_read(t, ev_a), 0); /* filtered out */
    set_filter(t, ev_b, POSIX_TRACE_ADD_EVENTSET);
    posix_trace_event(ev_b, "b", 1);
    CHECK_EQ(count_read(t, ev_b), 0);

    set_filter(t, ev_a, POSIX_TRACE_SUB_EVENTSET);
    posix_trace_event(ev_a, "a", 1);
    posix_trace_event(ev_b, "b", 1);
    CHECK_EQ(count_read(t, ev_a), 1); /* let through again at once */

    trace_event_set_t none;
    posix_trace_eventset_empty(&none);
    CHECK_ERR(posix_trace_set_filter(t, &none, POSIX_TRACE_SET_EVENTSET), 0);
    posix_trace_event(ev_b, "b", 1);
    CHECK_EQ(count_read(t, ev_b), 1);
    pt_shutdown(t);
}

static void test_stop_start(void)
{
    trace_id_t t = running_stream();
    CHECK_ERR(posix_trace_stop(t), 0);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t, ev_a), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t, ev_a), 1);
    /* A stopped stream filtering nothing, then a filter set while stopped and started again. */
    CHECK_ERR(posix_trace_stop(t), 0);
    set_filter(t, ev_a, POSIX_TRACE_SET_EVENTSET);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_a, "a", 1);
    posix_trace_event(ev_b, "b", 1);
    CHECK_EQ(count_read(t, ev_a), 0);
    pt_shutdown(t);
}

/* Two streams: an id one filters out still reaches the other; stopping one leaves the other recording. */
static void test_two_streams(void)
{
    trace_id_t t1 = running_stream(), t2 = running_stream();
    set_filter(t1, ev_a, POSIX_TRACE_SET_EVENTSET);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t1, ev_a), 0);
    CHECK_EQ(count_read(t2, ev_a), 1);

    set_filter(t2, ev_a, POSIX_TRACE_SET_EVENTSET);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t1, ev_a) + count_read(t2, ev_a), 0);

    CHECK_ERR(posix_trace_stop(t2), 0);
    set_filter(t1, ev_a, POSIX_TRACE_SUB_EVENTSET);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t1, ev_a), 1);
    CHECK_EQ(count_read(t2, ev_a), 0);

    /* The stream that let it through goes away: the stopped one still takes nothing. */
    pt_shutdown(t1);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t2, ev_a), 0);
    CHECK_ERR(posix_trace_start(t2), 0);
    set_filter(t2, ev_a, POSIX_TRACE_SUB_EVENTSET);
    posix_trace_event(ev_a, "a", 1);
    CHECK_EQ(count_read(t2, ev_a), 1);
    pt_shutdown(t2);
}

/*
 * A child records into an inherited stream whose filter its parent changes after the fork: the
 * child's copy of the summary says "filtered" but the parent let the id through.
 */
static void test_inherited_filter_changed_by_parent(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    set_filter(t, ev_a, POSIX_TRACE_SET_EVENTSET);
    CHECK_ERR(posix_trace_start(t), 0);
    int go[2];
    if (pipe(go))
        TL_DIE("pipe");
    pid_t pid = pt_fork(10);
    if (pid == 0) {
        char c;
        posix_trace_event(ev_a, "x", 1); /* filtered out */
        if (read(go[0], &c, 1) != 1)
            _exit(3);
        posix_trace_event(ev_a, "y", 1); /* let through by the parent meanwhile */
        _exit(0);
    }
    usleep(20000); /* let the child record its filtered event first (the test holds either way) */
    set_filter(t, ev_a, POSIX_TRACE_SUB_EVENTSET);
    if (write(go[1], "g", 1) != 1)
        TL_DIE("write");
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    long at = pt_find(&ev, ev_a, 0);
    CHECK_EQ(pt_count(&ev, ev_a), 1);
    CHECK(at >= 0 && ev.ev[at].len == 1 && ev.ev[at].data[0] == 'y');
    pt_events_free(&ev);
    close(go[0]);
    close(go[1]);
    pt_shutdown(t);
}

/* The child's own stream after fork: the summary is the child's own again (a new stream, started). */
static void test_child_own_stream(void)
{
    trace_id_t parent = running_stream();
    CHECK_ERR(posix_trace_stop(parent), 0);
    pid_t pid = pt_fork(10);
    if (pid == 0) {
        trace_attr_t a;
        pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
        trace_id_t t;
        if (posix_trace_create(0, &a, &t) || posix_trace_start(t))
            _exit(2);
        posix_trace_event(ev_a, "a", 1);
        pt_events ev = {0};
        if (pt_read_all(t, 1, &ev) || pt_count(&ev, ev_a) != 1)
            _exit(1);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's stream recorded its event (0x%x)", status);
    pt_shutdown(parent);
}

int main(void)
{
    pt_watchdog(30);
    if (posix_trace_eventid_open("wanted: a", &ev_a) || posix_trace_eventid_open("wanted: b", &ev_b))
        TL_DIE("eventid_open failed");
    PT_RUN(test_filter_transitions);
    PT_RUN(test_stop_start);
    PT_RUN(test_two_streams);
    PT_RUN(test_inherited_filter_changed_by_parent);
    PT_RUN(test_child_own_stream);
    return pt_finish();
}
