/*
 * The per-process limit of user event names (posix-trace.md §7.2, §8):
 * "TRACE_USER_EVENT_MAX: max number of user event type ids simultaneously
 * existing in a traced process, including the predefined unnamed user event";
 * eventid_open: "limit reached => POSIX_TRACE_UNNAMED_USEREVENT".
 * A program of its own: the name map of a process only grows.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ids[TRACE_USER_EVENT_MAX];

static void test_limit(void)
{
    char name[64];
    int ok = 1, distinct = 1;
    /* TRACE_USER_EVENT_MAX - 1 names: the unnamed user event takes the last id. */
    for (int i = 0; i < TRACE_USER_EVENT_MAX - 1; i++) {
        snprintf(name, sizeof name, "limit %d", i);
        ok &= posix_trace_eventid_open(name, &ids[i]) == 0;
        ok &= ids[i] != POSIX_TRACE_UNNAMED_USEREVENT;
    }
    CHECK_MSG(ok, "the first TRACE_USER_EVENT_MAX-1 names get ids of their own");
    for (int i = 0; i < TRACE_USER_EVENT_MAX - 1 && distinct; i++)
        for (int j = i + 1; j < TRACE_USER_EVENT_MAX - 1; j++)
            if (ids[i] == ids[j]) {
                distinct = 0;
                break;
            }
    CHECK_MSG(distinct, "all distinct");

    trace_event_id_t over;
    CHECK_ERR(posix_trace_eventid_open("one too many", &over), 0);
    CHECK_MSG(over == POSIX_TRACE_UNNAMED_USEREVENT, "past the limit: POSIX_TRACE_UNNAMED_USEREVENT, got %u", over);
    CHECK_ERR(posix_trace_eventid_open("two too many", &over), 0);
    CHECK_EQ(over, POSIX_TRACE_UNNAMED_USEREVENT);
    /* Names already opened keep their ids. */
    trace_event_id_t again;
    CHECK_ERR(posix_trace_eventid_open("limit 17", &again), 0);
    CHECK_EQ(again, ids[17]);
    /* ENAMETOOLONG is still checked at the limit. */
    char longname[TRACE_EVENT_NAME_MAX + 2];
    memset(longname, 'l', TRACE_EVENT_NAME_MAX + 1);
    longname[TRACE_EVENT_NAME_MAX + 1] = 0;
    CHECK_ERR(posix_trace_eventid_open(longname, &over), ENAMETOOLONG);

    /* trid_eventid_open: "Same limit / UNNAMED rules". */
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_trid_eventid_open(t, "three too many", &over), 0);
    CHECK_EQ(over, POSIX_TRACE_UNNAMED_USEREVENT);
    CHECK_ERR(posix_trace_trid_eventid_open(t, "limit 1000", &again), 0);
    CHECK_EQ(again, ids[1000 % (TRACE_USER_EVENT_MAX - 1)]);

    /* The stream's type list holds the system ids, the unnamed event and every name. */
    size_t n = 0;
    int unavailable = 0, user = 0, unnamed = 0;
    while (n < 100000) {
        trace_event_id_t id;
        if (posix_trace_eventtypelist_getnext_id(t, &id, &unavailable) != 0 || unavailable)
            break;
        n++;
        unnamed += id == POSIX_TRACE_UNNAMED_USEREVENT;
        for (int i = 0; i < TRACE_USER_EVENT_MAX - 1; i++)
            if (ids[i] == id) {
                user++;
                break;
            }
    }
    CHECK_EQ_INT(user, TRACE_USER_EVENT_MAX - 1);
    CHECK_EQ_INT(unnamed, 1);
    CHECK_EQ(n, TRACE_USER_EVENT_MAX + 8);

    /* Every id records, the last one included, and names are right. */
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ids[TRACE_USER_EVENT_MAX - 2], "last", 4);
    posix_trace_event(over, "unnamed", 7);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(pt_count(&ev, ids[TRACE_USER_EVENT_MAX - 2]), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_UNNAMED_USEREVENT), 1);
    pt_events_free(&ev);
    char got[TRACE_EVENT_NAME_MAX];
    snprintf(name, sizeof name, "limit %d", TRACE_USER_EVENT_MAX - 2);
    CHECK_ERR(posix_trace_eventid_get_name(t, ids[TRACE_USER_EVENT_MAX - 2], got), 0);
    CHECK_STR_EQ(got, name);
    pt_shutdown(t);

    /* A log made now names all of them. */
    int fd = tl_test_tmpfd();
    trace_id_t lt, pre;
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &lt), 0);
    CHECK_ERR(pt_shutdown_and_open(lt, fd, &pre), 0);
    int named = 1;
    for (int i = 0; i < TRACE_USER_EVENT_MAX - 1; i++) {
        snprintf(name, sizeof name, "limit %d", i);
        named &= posix_trace_eventid_get_name(pre, ids[i], got) == 0 && strcmp(got, name) == 0;
    }
    CHECK_MSG(named, "the log names all TRACE_USER_EVENT_MAX-1 user events");
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
}

int main(void)
{
    pt_watchdog(18);
    PT_RUN(test_limit);
    return pt_finish();
}
