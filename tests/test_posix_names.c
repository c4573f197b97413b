/*
 * Event type names and ids (posix-trace.md §7, §9.3): posix_trace_eventid_open,
 * posix_trace_trid_eventid_open, posix_trace_eventid_get_name,
 * posix_trace_eventid_equal, posix_trace_eventtypelist_getnext_id / _rewind.
 * The TRACE_USER_EVENT_MAX limit is in test_posix_names_limit.c (the name map
 * is process-wide and persistent).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static const struct {
    trace_event_id_t id;
    const char *name;
} system_events[] = {
    {POSIX_TRACE_ERROR, "posix_trace_error"},
    {POSIX_TRACE_START, "posix_trace_start"},
    {POSIX_TRACE_STOP, "posix_trace_stop"},
    {POSIX_TRACE_OVERFLOW, "posix_trace_overflow"},
    {POSIX_TRACE_RESUME, "posix_trace_resume"},
    {POSIX_TRACE_FILTER, "posix_trace_filter"},
    {POSIX_TRACE_FLUSH_START, "posix_trace_flush_start"},
    {POSIX_TRACE_FLUSH_STOP, "posix_trace_flush_stop"},
};
#define NSYS (sizeof system_events / sizeof system_events[0])

static trace_event_id_t early_id;

/* eventid_open: "no stream yet => remembered for future streams" - done in main() before any stream. */
static void test_open_before_stream(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t, early_id, name), 0);
    CHECK_STR_EQ(name, "opened before any stream");
    /* The same name still maps to the same id once streams exist. */
    trace_event_id_t again;
    CHECK_ERR(posix_trace_eventid_open("opened before any stream", &again), 0);
    CHECK(posix_trace_eventid_equal(t, again, early_id));
    pt_shutdown(t);

    /* And a log names it (§11: the log holds "the event type name<->id list"). */
    int fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(early_id, "x", 1);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    CHECK_ERR(posix_trace_eventid_get_name(pre, early_id, name), 0);
    CHECK_STR_EQ(name, "opened before any stream");
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    CHECK_EQ(pt_count(&ev, early_id), 1);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
}

/* eventid_open: "existing name => same id"; distinct names get distinct ids, none of them system ids. */
static void test_same_name_same_id(void)
{
    trace_event_id_t a1, a2, b, c;
    CHECK_ERR(posix_trace_eventid_open("names: a", &a1), 0);
    CHECK_ERR(posix_trace_eventid_open("names: b", &b), 0);
    CHECK_ERR(posix_trace_eventid_open("names: a", &a2), 0);
    CHECK_ERR(posix_trace_eventid_open("names: c", &c), 0);
    CHECK_EQ(a1, a2);
    CHECK(a1 != b && b != c && a1 != c);
    for (size_t i = 0; i < NSYS; i++)
        CHECK(a1 != system_events[i].id && b != system_events[i].id);
    CHECK(a1 != POSIX_TRACE_UNNAMED_USEREVENT && b != POSIX_TRACE_UNNAMED_USEREVENT);

    /* §7.3: trid_eventid_open and eventid_open populate the same map: "the same name yields the same id". */
    trace_id_t t1, t2;
    CHECK_ERR(posix_trace_create(0, NULL, &t1), 0);
    CHECK_ERR(posix_trace_create(0, NULL, &t2), 0);
    trace_event_id_t x;
    CHECK_ERR(posix_trace_trid_eventid_open(t1, "names: a", &x), 0);
    CHECK_EQ(x, a1);
    trace_event_id_t d1, d2, d3;
    CHECK_ERR(posix_trace_trid_eventid_open(t1, "names: d", &d1), 0);
    /* Rationale: "posix_trace_trid_eventid_open is expected to return the same id for the same name across streams". */
    CHECK_ERR(posix_trace_trid_eventid_open(t2, "names: d", &d2), 0);
    CHECK_ERR(posix_trace_eventid_open("names: d", &d3), 0);
    CHECK(d1 == d2 && d2 == d3);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t2, d1, name), 0);
    CHECK_STR_EQ(name, "names: d");
    /* "posix_trace_clear keeps the mapping". */
    CHECK_ERR(posix_trace_clear(t1), 0);
    CHECK_ERR(posix_trace_eventid_get_name(t1, d1, name), 0);
    CHECK_STR_EQ(name, "names: d");
    /* "repeated calls give the same name". */
    CHECK_ERR(posix_trace_eventid_get_name(t1, a1, name), 0);
    CHECK_STR_EQ(name, "names: a");
    CHECK_ERR(posix_trace_eventid_get_name(t1, a1, name), 0);
    CHECK_STR_EQ(name, "names: a");
    /* The empty name is a name like any other. */
    trace_event_id_t e1, e2;
    CHECK_ERR(posix_trace_eventid_open("", &e1), 0);
    CHECK_ERR(posix_trace_eventid_open("", &e2), 0);
    CHECK_EQ(e1, e2);
    pt_shutdown(t1);
    pt_shutdown(t2);
}

/*
 * eventid_open: "ENAMETOOLONG (name longer than TRACE_EVENT_NAME_MAX)", a
 * limit that counts characters without the NUL (<limits.h>, Issue 7; P5 in
 * <trace.h>): TRACE_EVENT_NAME_MAX characters are accepted, one more is
 * not. get_name then writes TRACE_EVENT_NAME_MAX + 1 bytes, and nothing past
 * them; a shorter name still fits the rationale's char[TRACE_EVENT_NAME_MAX].
 * The longest name survives the log (the format allows 255 bytes).
 */
static void test_name_length(void)
{
    char name[TRACE_EVENT_NAME_MAX + 2];
    memset(name, 'n', sizeof name);
    name[TRACE_EVENT_NAME_MAX + 1] = 0; /* TRACE_EVENT_NAME_MAX + 1 characters */
    trace_event_id_t id = 12345;
    CHECK_ERR(posix_trace_eventid_open(name, &id), ENAMETOOLONG);
    CHECK_EQ(id, 12345);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_trid_eventid_open(t, name, &id), ENAMETOOLONG);
    CHECK_ERR(tracelog_eventid_open_typed(name, "u8 a", &id), ENAMETOOLONG);

    name[TRACE_EVENT_NAME_MAX] = 0; /* TRACE_EVENT_NAME_MAX characters: accepted */
    name[0] = 'L';
    CHECK_ERR(posix_trace_eventid_open(name, &id), 0);
    char out[TRACE_EVENT_NAME_MAX + 16];
    memset(out, 'Z', sizeof out);
    CHECK_ERR(posix_trace_eventid_get_name(t, id, out), 0);
    CHECK_STR_EQ(out, name);
    CHECK(out[TRACE_EVENT_NAME_MAX + 1] == 'Z');
    trace_event_id_t id2;
    CHECK_ERR(posix_trace_trid_eventid_open(t, name, &id2), 0);
    CHECK_EQ(id, id2);
    name[0] = 'T';
    CHECK_ERR(tracelog_eventid_open_typed(name, "u8 a", &id2), 0);

    char shorter[TRACE_EVENT_NAME_MAX];
    memset(shorter, 's', sizeof shorter);
    shorter[TRACE_EVENT_NAME_MAX - 1] = 0; /* fits the rationale's buffer, and nothing past it is written */
    trace_event_id_t sid;
    CHECK_ERR(posix_trace_eventid_open(shorter, &sid), 0);
    memset(out, 'Z', sizeof out);
    CHECK_ERR(posix_trace_eventid_get_name(t, sid, out), 0);
    CHECK_STR_EQ(out, shorter);
    CHECK(out[TRACE_EVENT_NAME_MAX] == 'Z');

    /* A log names it whole, and a pre-recorded stream gives it back whole. */
    int fd = tl_test_tmpfd();
    trace_id_t lt, pre;
    name[0] = 'L';
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &lt), 0);
    CHECK_ERR(posix_trace_start(lt), 0);
    posix_trace_event(id, "x", 1);
    CHECK_ERR(pt_shutdown_and_open(lt, fd, &pre), 0);
    memset(out, 'Z', sizeof out);
    CHECK_ERR(posix_trace_eventid_get_name(pre, id, out), 0);
    CHECK_STR_EQ(out, name);
    CHECK(out[TRACE_EVENT_NAME_MAX + 1] == 'Z');
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);

    /* NULL arguments are invalid. */
    CHECK_ERR(posix_trace_eventid_open(NULL, &id), EINVAL);
    CHECK_ERR(posix_trace_eventid_open("x", NULL), EINVAL);
    CHECK_ERR(posix_trace_trid_eventid_open(t, NULL, &id), EINVAL);
    CHECK_ERR(posix_trace_eventid_get_name(t, POSIX_TRACE_START, NULL), EINVAL);
    pt_shutdown(t);
}

/* §7.1: "the strings above are what posix_trace_eventid_get_name should return for them". */
static void test_system_names(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    char name[TRACE_EVENT_NAME_MAX];
    for (size_t i = 0; i < NSYS; i++) {
        tl_test_context("%s", system_events[i].name);
        CHECK_ERR(posix_trace_eventid_get_name(t, system_events[i].id, name), 0);
        CHECK_STR_EQ(name, system_events[i].name);
    }
    tl_test_context(NULL);
    /* §7.2: "posix_trace_unnamed_userevent". */
    CHECK_ERR(posix_trace_eventid_get_name(t, POSIX_TRACE_UNNAMED_USEREVENT, name), 0);
    CHECK_STR_EQ(name, "posix_trace_unnamed_userevent");
    /* "EINVAL (id has no name)". */
    CHECK_ERR(posix_trace_eventid_get_name(t, 0, name), EINVAL);
    CHECK_ERR(posix_trace_eventid_get_name(t, POSIX_TRACE_UNNAMED_USEREVENT + TRACE_USER_EVENT_MAX - 1, name),
              EINVAL);
    CHECK_ERR(posix_trace_eventid_get_name(t, 0xffffffffu, name), EINVAL);
    CHECK_ERR(posix_trace_eventid_get_name(t, 0x7fffffffu, name), EINVAL);

    /* The system names survive into a log. */
    int fd = tl_test_tmpfd();
    trace_id_t lt, pre;
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &lt), 0);
    CHECK_ERR(pt_shutdown_and_open(lt, fd, &pre), 0);
    for (size_t i = 0; i < NSYS; i++) {
        tl_test_context("%s in a log", system_events[i].name);
        CHECK_ERR(posix_trace_eventid_get_name(pre, system_events[i].id, name), 0);
        CHECK_STR_EQ(name, system_events[i].name);
    }
    tl_test_context(NULL);
    CHECK_ERR(posix_trace_eventid_get_name(pre, POSIX_TRACE_UNNAMED_USEREVENT, name), 0);
    CHECK_STR_EQ(name, "posix_trace_unnamed_userevent");
    CHECK_ERR(posix_trace_eventid_get_name(pre, 0xffffffffu, name), EINVAL);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
    pt_shutdown(t);
}

/* Collects the whole type list of a stream; returns its length (ids in out[], at most cap). */
static size_t type_list(trace_id_t t, trace_event_id_t *out, size_t cap, int *err)
{
    size_t n = 0;
    *err = 0;
    for (;;) {
        trace_event_id_t id;
        int unavailable = -1;
        int e = posix_trace_eventtypelist_getnext_id(t, &id, &unavailable);
        if (e) {
            *err = e;
            return n;
        }
        if (unavailable)
            return n;
        if (n < cap)
            out[n] = id;
        n++;
        if (n > 100000)
            return n; /* never ends: reported by the caller */
    }
}

static int list_has(const trace_event_id_t *l, size_t n, trace_event_id_t id)
{
    for (size_t i = 0; i < n; i++)
        if (l[i] == id)
            return 1;
    return 0;
}

/*
 * §9.3: "each successful call stores the next id and sets *unavailable = 0; at the end stores nothing and sets
 * *unavailable != 0 (return value still 0). rewind resets the iterator to the first id." P34: "eventtypelist
 * iteration includes the predefined system ids as well as user ids".
 */
static void check_type_list(trace_id_t t, trace_event_id_t user1, trace_event_id_t user2, const char *what)
{
    enum { CAP = 4096 };
    static trace_event_id_t first[CAP], second[CAP];
    int err;
    tl_test_context("%s", what);
    size_t n1 = type_list(t, first, CAP, &err);
    CHECK_ERR(err, 0);
    CHECK(n1 > 0 && n1 < CAP);
    for (size_t i = 0; i < NSYS; i++)
        CHECK_MSG(list_has(first, n1, system_events[i].id), "system id %u listed", system_events[i].id);
    CHECK(list_has(first, n1, user1));
    CHECK(list_has(first, n1, user2));
    int dup = 0;
    for (size_t i = 0; i < n1 && i < CAP; i++)
        for (size_t j = i + 1; j < n1 && j < CAP; j++)
            dup |= first[i] == first[j];
    CHECK_MSG(!dup, "no id listed twice");
    /* At the end it stays at the end. */
    trace_event_id_t id = 777;
    int unavailable = 0;
    CHECK_ERR(posix_trace_eventtypelist_getnext_id(t, &id, &unavailable), 0);
    CHECK(unavailable != 0);
    /* Every listed id has a name. */
    char name[TRACE_EVENT_NAME_MAX + 1]; /* test_name_length opened one of TRACE_EVENT_NAME_MAX characters */
    int named = 1;
    for (size_t i = 0; i < n1 && i < CAP; i++)
        named &= posix_trace_eventid_get_name(t, first[i], name) == 0;
    CHECK_MSG(named, "every listed id has a name");
    CHECK_ERR(posix_trace_eventtypelist_rewind(t), 0);
    size_t n2 = type_list(t, second, CAP, &err);
    CHECK_EQ(n2, n1);
    CHECK_MSG(n1 == n2 && memcmp(first, second, n1 * sizeof first[0]) == 0, "rewind restarts the same list");
    /* Rewind in the middle. */
    CHECK_ERR(posix_trace_eventtypelist_rewind(t), 0);
    posix_trace_eventtypelist_getnext_id(t, &id, &unavailable);
    posix_trace_eventtypelist_getnext_id(t, &id, &unavailable);
    CHECK_ERR(posix_trace_eventtypelist_rewind(t), 0);
    CHECK_ERR(posix_trace_eventtypelist_getnext_id(t, &id, &unavailable), 0);
    CHECK(unavailable == 0 && id == first[0]);
    CHECK_ERR(posix_trace_eventtypelist_getnext_id(t, NULL, &unavailable), EINVAL);
    CHECK_ERR(posix_trace_eventtypelist_getnext_id(t, &id, NULL), EINVAL);
    tl_test_context(NULL);
}

static void test_type_list(void)
{
    trace_event_id_t u1, u2;
    CHECK_ERR(posix_trace_eventid_open("types: one", &u1), 0);
    trace_id_t t, t2;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_trid_eventid_open(t, "types: two", &u2), 0);
    check_type_list(t, u1, u2, "active stream");

    /* The iterator belongs to the trid: another stream's iteration does not move it. */
    CHECK_ERR(posix_trace_create(0, NULL, &t2), 0);
    CHECK_ERR(posix_trace_eventtypelist_rewind(t), 0);
    trace_event_id_t a, b;
    int un;
    posix_trace_eventtypelist_getnext_id(t, &a, &un);
    posix_trace_eventtypelist_getnext_id(t2, &b, &un);
    posix_trace_eventtypelist_getnext_id(t2, &b, &un);
    posix_trace_eventtypelist_getnext_id(t, &b, &un);
    CHECK_ERR(posix_trace_eventtypelist_rewind(t2), 0);
    trace_event_id_t l[2];
    posix_trace_eventtypelist_getnext_id(t2, &l[0], &un);
    posix_trace_eventtypelist_getnext_id(t2, &l[1], &un);
    CHECK(l[0] == a && l[1] == b);
    pt_shutdown(t2);

    /* A name opened after the stream was created joins its list (P34: the list "may not be exhaustive"
       on an active stream, but tracelog's is). */
    trace_event_id_t u3;
    CHECK_ERR(posix_trace_eventid_open("types: three", &u3), 0);
    CHECK_ERR(posix_trace_eventtypelist_rewind(t), 0);
    check_type_list(t, u1, u3, "active stream, later name");
    pt_shutdown(t);

    /* A pre-recorded stream lists what its log names. */
    int fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    trace_event_id_t u4;
    CHECK_ERR(posix_trace_eventid_open("types: four, after create_withlog", &u4), 0);
    posix_trace_event(u4, NULL, 0);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    check_type_list(pre, u1, u4, "pre-recorded stream");
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(pre, u4, name), 0);
    CHECK_STR_EQ(name, "types: four, after create_withlog");
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
}

/* eventid_equal: "returns non-zero if equal, 0 otherwise; no errors". */
static void test_equal(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    trace_event_id_t a, b;
    posix_trace_eventid_open("equal a", &a);
    posix_trace_eventid_open("equal b", &b);
    CHECK(posix_trace_eventid_equal(t, a, a) != 0);
    CHECK(posix_trace_eventid_equal(t, a, b) == 0);
    CHECK(posix_trace_eventid_equal(t, POSIX_TRACE_UNNAMED_USEREVENT, POSIX_TRACE_UNNAMED_USER_EVENT) != 0);
    CHECK(posix_trace_eventid_equal(t, POSIX_TRACE_START, POSIX_TRACE_STOP) == 0);
    pt_shutdown(t);
}

/* posix_trace_event: ids that were never opened or are out of range are harmless. */
static void test_unknown_ids(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(0xffffffffu, "x", 1);
    posix_trace_event(0x80000000u, "x", 1);
    posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "u", 1);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_UNNAMED_USEREVENT), 1);
    CHECK_EQ(pt_count(&ev, 0xffffffffu), 0);
    pt_events_free(&ev);
    pt_shutdown(t);
}

int main(void)
{
    pt_watchdog(18);
    /* Before any stream exists. */
    if (posix_trace_eventid_open("opened before any stream", &early_id) != 0)
        TL_DIE("posix_trace_eventid_open before any stream failed");
    PT_RUN(test_open_before_stream);
    PT_RUN(test_same_name_same_id);
    PT_RUN(test_name_length);
    PT_RUN(test_system_names);
    PT_RUN(test_type_list);
    PT_RUN(test_equal);
    PT_RUN(test_unknown_ids);
    return pt_finish();
}
