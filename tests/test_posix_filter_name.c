/*
 * tracelog_trace_filter_name (issue 26: ids under `ptlog record --exclude`):
 * a controller filters a name the traced process has not opened yet
 * without giving it an id, so the process's names keep the ids of its own
 * order (posix_trace_trid_eventid_open gave the name the next id at once,
 * which shifted the process's); the process applies the filter when it has
 * the name and the stream both, and records POSIX_TRACE_FILTER then. Here
 * the child opens its names after the controller's filter, before it maps
 * the stream (its first event does), so the stream's publication applies
 * it. Also: a stream of the process's own (the filter at once, by id), the
 * argument errors, and the bound on names waiting in a process's map (64:
 * beyond, a name gets its id at once, as before).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

/* The child: ready (no trace call yet), 'g' from the parent, then its own names and events; it sends back the ids it got. */
static void child_main(int up, int down)
{
    trace_event_id_t first, late;
    xp_send_id(up, 0);
    if (xp_recv(down, 10000) != 'g')
        _exit(2);
    if (posix_trace_eventid_open("child.first", &first) || posix_trace_eventid_open("late.x", &late))
        _exit(3);
    for (int i = 0; i < 5; i++)
        posix_trace_event(late, &i, sizeof i); /* the first event maps the stream, which applies the filter */
    posix_trace_event(first, "x", 1);
    xp_send_id(up, (uint32_t)first);
    xp_send_id(up, (uint32_t)late);
    _exit(0);
}

static void test_filtered_before_the_process_opens_the_name(void)
{
    xp_child c;
    if (!CHECK_EQ_INT(xp_child_start(&c, child_main), 0))
        return;
    pid_t pid = c.pid;
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(pid, NULL, fd, &t), 0);
    CHECK_ERR(tracelog_trace_filter_name(t, "late.x", POSIX_TRACE_ADD_EVENTSET), 0);
    CHECK_ERR(tracelog_trace_filter_name(t, "never.opened", POSIX_TRACE_ADD_EVENTSET), 0);
    trace_event_set_t set;
    CHECK_ERR(posix_trace_get_filter(t, &set), 0);
    int none = 1;
    for (trace_event_id_t id = 0; id < 1088; id++) {
        int in = 0;
        posix_trace_eventset_ismember(id, &set, &in);
        none &= !in;
    }
    CHECK_MSG(none, "a name the process has not opened has no id in the filter yet");
    CHECK_ERR(posix_trace_start(t), 0);
    xp_send(c.down[1], 'g');
    uint32_t first = 0, late = 0;
    CHECK_EQ(xp_recv_id(c.up[0], &first), 0);
    CHECK_EQ(xp_recv_id(c.up[0], &late), 0);
    /* The child's own order: the first name it opened has the first user id. */
    CHECK_EQ(first, (uint32_t)POSIX_TRACE_UNNAMED_USEREVENT + 1);
    CHECK_EQ(late, first + 1);
    CHECK_EQ_INT(xp_wait(pid), 0);
    CHECK_ERR(posix_trace_get_filter(t, &set), 0);
    int in = 0;
    posix_trace_eventset_ismember((trace_event_id_t)late, &set, &in);
    CHECK_MSG(in, "late.x (%u) in the stream's filter once the child opened it", late);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    CHECK_EQ(pt_count(&ev, (trace_event_id_t)late), 0);
    CHECK_EQ(pt_count(&ev, (trace_event_id_t)first), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_FILTER), 1);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
    xp_child_close(&c);
}

static void idle_child(int up, int down)
{
    trace_event_id_t id;
    posix_trace_eventid_open("idle.first", &id); /* traceable; its map named */
    xp_send_id(up, (uint32_t)id);
    xp_recv(down, 20000);
    _exit(0);
}

/* 64 names wait in a process's map at most: beyond, a name gets its id at once (the next one). */
static void test_waiting_names_bounded(void)
{
    xp_child c;
    if (!CHECK_EQ_INT(xp_child_start(&c, idle_child), 0))
        return;
    trace_id_t t;
    if (!CHECK_ERR(posix_trace_create(c.pid, NULL, &t), 0)) {
        xp_child_end(&c);
        return;
    }
    int e = 0;
    for (int i = 0; i < 64 && !e; i++) {
        char name[32];
        snprintf(name, sizeof name, "pending.%d", i);
        e = tracelog_trace_filter_name(t, name, POSIX_TRACE_ADD_EVENTSET);
    }
    CHECK_ERR(e, 0);
    trace_event_set_t set;
    CHECK_ERR(posix_trace_get_filter(t, &set), 0);
    CHECK_EQ_INT(set.__bits[0] | set.__bits[1], 0); /* none has an id yet */
    CHECK_ERR(tracelog_trace_filter_name(t, "one.too.many", POSIX_TRACE_ADD_EVENTSET), 0);
    trace_event_id_t id;
    CHECK_ERR(posix_trace_trid_eventid_open(t, "one.too.many", &id), 0);
    CHECK_EQ(id, c.id + 1); /* the next id after the child's one name */
    int in = 0;
    CHECK_ERR(posix_trace_get_filter(t, &set), 0);
    posix_trace_eventset_ismember(id, &set, &in);
    CHECK_EQ_INT(in, 1);
    CHECK_ERR(posix_trace_shutdown(t), 0);
    xp_child_end(&c);
}

static int in_filter(trace_id_t t, trace_event_id_t id)
{
    trace_event_set_t set;
    int in = -1;
    if (posix_trace_get_filter(t, &set) == 0)
        posix_trace_eventset_ismember(id, &set, &in);
    return in;
}

static void test_own_stream_and_errors(void)
{
    trace_attr_t attr;
    trace_id_t t;
    pt_attr(&attr, POSIX_TRACE_LOOP, 1u << 16, 64);
    if (!CHECK_ERR(posix_trace_create(0, &attr, &t), 0))
        return;
    trace_event_id_t id;
    CHECK_ERR(tracelog_trace_filter_name(t, "own.x", POSIX_TRACE_ADD_EVENTSET), 0);
    CHECK_ERR(posix_trace_eventid_open("own.x", &id), 0);
    CHECK_EQ_INT(in_filter(t, id), 1);
    CHECK_ERR(tracelog_trace_filter_name(t, "own.x", POSIX_TRACE_SUB_EVENTSET), 0);
    CHECK_EQ_INT(in_filter(t, id), 0);
    CHECK_ERR(tracelog_trace_filter_name(t, "own.x", POSIX_TRACE_SET_EVENTSET), EINVAL);
    CHECK_ERR(tracelog_trace_filter_name(t, NULL, POSIX_TRACE_ADD_EVENTSET), EINVAL);
    char longname[TRACE_EVENT_NAME_MAX + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CHECK_ERR(tracelog_trace_filter_name(t, longname, POSIX_TRACE_ADD_EVENTSET), ENAMETOOLONG);
    CHECK_ERR(posix_trace_shutdown(t), 0);
    CHECK_ERR(tracelog_trace_filter_name(t, "own.x", POSIX_TRACE_ADD_EVENTSET), EINVAL);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_filtered_before_the_process_opens_the_name);
    PT_RUN(test_own_stream_and_errors);
    PT_RUN(test_waiting_names_bounded);
    return pt_finish();
}
