/*
 * Event sets (posix-trace.md §9.4): posix_trace_eventset_empty, _fill, _add,
 * _del, _ismember. They operate on application memory only.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <string.h>
#include <trace.h>

#include "posix_helpers.h"

static const trace_event_id_t sys_ids[] = {POSIX_TRACE_ERROR,    POSIX_TRACE_START,  POSIX_TRACE_STOP,
                                           POSIX_TRACE_OVERFLOW, POSIX_TRACE_RESUME, POSIX_TRACE_FILTER,
                                           POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP};
#define NSYS (sizeof sys_ids / sizeof sys_ids[0])

static int member(trace_event_id_t id, const trace_event_set_t *s)
{
    int m = -1;
    if (posix_trace_eventset_ismember(id, s, &m) != 0)
        return -1;
    return m != 0;
}

static trace_event_id_t user1, user2, user_last;

/* "empty: no system or user types". */
static void test_empty(void)
{
    trace_event_set_t s;
    memset(&s, 0xff, sizeof s);
    CHECK_ERR(posix_trace_eventset_empty(&s), 0);
    for (size_t i = 0; i < NSYS; i++)
        CHECK_EQ_INT(member(sys_ids[i], &s), 0);
    CHECK_EQ_INT(member(POSIX_TRACE_UNNAMED_USEREVENT, &s), 0);
    CHECK_EQ_INT(member(user1, &s), 0);
    CHECK_EQ_INT(member(user_last, &s), 0);
    CHECK_ERR(posix_trace_eventset_empty(NULL), EINVAL);
}

/*
 * fill: "POSIX_TRACE_WOPID_EVENTS = all process-independent implementation-defined system types;
 * POSIX_TRACE_SYSTEM_EVENTS = all implementation-defined system types plus the POSIX-defined ones;
 * POSIX_TRACE_ALL_EVENTS = all system and user types. fill initialises (ignores prior content)."
 */
static void test_fill(void)
{
    trace_event_set_t s;
    /* P20 (documented): WOPID is empty - tracelog has no process-independent system events. */
    memset(&s, 0xff, sizeof s);
    CHECK_ERR(posix_trace_eventset_fill(&s, POSIX_TRACE_WOPID_EVENTS), 0);
    for (size_t i = 0; i < NSYS; i++)
        CHECK_EQ_INT(member(sys_ids[i], &s), 0);
    CHECK_EQ_INT(member(user1, &s), 0);

    memset(&s, 0xff, sizeof s);
    CHECK_ERR(posix_trace_eventset_fill(&s, POSIX_TRACE_SYSTEM_EVENTS), 0);
    for (size_t i = 0; i < NSYS; i++)
        CHECK_EQ_INT(member(sys_ids[i], &s), 1);
    CHECK_EQ_INT(member(POSIX_TRACE_UNNAMED_USEREVENT, &s), 0);
    CHECK_EQ_INT(member(user1, &s), 0);
    CHECK_EQ_INT(member(user_last, &s), 0);

    posix_trace_eventset_empty(&s);
    CHECK_ERR(posix_trace_eventset_fill(&s, POSIX_TRACE_ALL_EVENTS), 0);
    for (size_t i = 0; i < NSYS; i++)
        CHECK_EQ_INT(member(sys_ids[i], &s), 1);
    CHECK_EQ_INT(member(POSIX_TRACE_UNNAMED_USEREVENT, &s), 1);
    CHECK_EQ_INT(member(user1, &s), 1);
    /* P20: "ALL_EVENTS should include user ids not yet allocated". */
    CHECK_EQ_INT(member(user_last, &s), 1);

    /* "may EINVAL (bad argument, e.g. unknown what)". */
    CHECK_ERR(posix_trace_eventset_fill(&s, 0), EINVAL);
    CHECK_ERR(posix_trace_eventset_fill(&s, 42), EINVAL);
    CHECK_ERR(posix_trace_eventset_fill(&s, -1), EINVAL);
    CHECK_ERR(posix_trace_eventset_fill(NULL, POSIX_TRACE_ALL_EVENTS), EINVAL);
}

/* "add of a member / del of a non-member is not an error"; ismember: "0 if not member, non-zero if member". */
static void test_add_del(void)
{
    trace_event_set_t s;
    posix_trace_eventset_empty(&s);
    CHECK_ERR(posix_trace_eventset_add(user1, &s), 0);
    CHECK_EQ_INT(member(user1, &s), 1);
    CHECK_EQ_INT(member(user2, &s), 0);
    CHECK_ERR(posix_trace_eventset_add(user1, &s), 0);
    CHECK_EQ_INT(member(user1, &s), 1);
    CHECK_ERR(posix_trace_eventset_add(POSIX_TRACE_STOP, &s), 0);
    CHECK_EQ_INT(member(POSIX_TRACE_STOP, &s), 1);
    CHECK_EQ_INT(member(POSIX_TRACE_START, &s), 0);
    CHECK_ERR(posix_trace_eventset_add(user_last, &s), 0);
    CHECK_EQ_INT(member(user_last, &s), 1);
    CHECK_ERR(posix_trace_eventset_del(user1, &s), 0);
    CHECK_EQ_INT(member(user1, &s), 0);
    CHECK_ERR(posix_trace_eventset_del(user1, &s), 0);
    CHECK_EQ_INT(member(user1, &s), 0);
    CHECK_EQ_INT(member(POSIX_TRACE_STOP, &s), 1);
    CHECK_EQ_INT(member(user_last, &s), 1);

    trace_event_set_t all;
    posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS);
    CHECK_ERR(posix_trace_eventset_del(POSIX_TRACE_START, &all), 0);
    CHECK_EQ_INT(member(POSIX_TRACE_START, &all), 0);
    CHECK_EQ_INT(member(POSIX_TRACE_STOP, &all), 1);
    CHECK_EQ_INT(member(user2, &all), 1);
}

/* "may EINVAL (bad argument, e.g. ... out-of-range id)"; the set is not changed. */
static void test_invalid_ids(void)
{
    trace_event_set_t s, before;
    posix_trace_eventset_fill(&s, POSIX_TRACE_SYSTEM_EVENTS);
    before = s;
    static const trace_event_id_t bad[] = {POSIX_TRACE_UNNAMED_USEREVENT + TRACE_USER_EVENT_MAX, 0x10000,
                                           0x7fffffffu, 0xffffffffu};
    int m = 5;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_test_context("id %u", bad[i]);
        CHECK_ERR(posix_trace_eventset_add(bad[i], &s), EINVAL);
        CHECK_ERR(posix_trace_eventset_del(bad[i], &s), EINVAL);
        CHECK_ERR(posix_trace_eventset_ismember(bad[i], &s, &m), EINVAL);
    }
    tl_test_context(NULL);
    CHECK_MEM_EQ(&s, &before, sizeof s);
    CHECK_ERR(posix_trace_eventset_add(user1, NULL), EINVAL);
    CHECK_ERR(posix_trace_eventset_del(user1, NULL), EINVAL);
    CHECK_ERR(posix_trace_eventset_ismember(user1, NULL, &m), EINVAL);
    CHECK_ERR(posix_trace_eventset_ismember(user1, &s, NULL), EINVAL);
    /* The set passed to set_filter: an id set in it beyond the id space cannot exist, the set is a value. */
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_set_filter(t, &s, POSIX_TRACE_SET_EVENTSET), 0);
    trace_event_set_t got;
    CHECK_ERR(posix_trace_get_filter(t, &got), 0);
    CHECK_MEM_EQ(&got, &s, sizeof s);
    pt_shutdown(t);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("eventset 1", &user1) || posix_trace_eventid_open("eventset 2", &user2))
        TL_DIE("eventid_open failed");
    user_last = POSIX_TRACE_UNNAMED_USEREVENT + TRACE_USER_EVENT_MAX - 1; /* the largest user id possible */
    PT_RUN(test_empty);
    PT_RUN(test_fill);
    PT_RUN(test_add_del);
    PT_RUN(test_invalid_ids);
    return pt_finish();
}
