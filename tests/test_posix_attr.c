/*
 * POSIX trace stream attributes (posix-trace.md §5, §9.1): defaults, every
 * getter and setter, invalid values, the derived event sizes, and the
 * attributes a created stream reports through posix_trace_get_attr.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "tracelog/posix.h"

static int ts_positive(const struct timespec *ts) { return ts->tv_sec > 0 || ts->tv_nsec > 0; }

/* §5: "posix_trace_attr_init: sets all defaults, including genversion and clockres". */
static void test_defaults(void)
{
    trace_attr_t a;
    CHECK_ERR(posix_trace_attr_init(&a), 0);

    char name[TRACE_NAME_MAX];
    memset(name, 'x', sizeof name);
    CHECK_ERR(posix_trace_attr_getname(&a, name), 0);
    CHECK_MSG(name[0] == 0, "§5 trace-name: default \"\" (null string), got \"%.20s\"", name);

    /* §12: "generation-version: free-form string <= TRACE_NAME_MAX identifying implementation and version". */
    char gen[TRACE_NAME_MAX];
    memset(gen, 'x', sizeof gen);
    CHECK_ERR(posix_trace_attr_getgenversion(&a, gen), 0);
    CHECK_MSG(memchr(gen, 0, sizeof gen) != NULL, "genversion fits in TRACE_NAME_MAX bytes with its NUL");
    CHECK_MSG(strncmp(gen, "tracelog", 8) == 0, "genversion identifies tracelog: \"%.*s\"", TRACE_NAME_MAX, gen);
    CHECK_MSG(strstr(gen, TRACELOG_VERSION_STRING) != NULL, "genversion holds the version: \"%.*s\"",
              TRACE_NAME_MAX, gen);

    /* §12: "clock-resolution attribute = resolution of the timestamp clock". */
    struct timespec res = {-1, -1};
    CHECK_ERR(posix_trace_attr_getclockres(&a, &res), 0);
    CHECK_MSG(ts_positive(&res) && res.tv_nsec >= 0 && res.tv_nsec < 1000000000,
              "clockres > 0: %lld.%09ld", (long long)res.tv_sec, res.tv_nsec);
    /* The rationale exhorts at least microsecond resolution. */
    CHECK_MSG(res.tv_sec == 0 && res.tv_nsec <= 1000, "clockres <= 1 us: %ld ns", res.tv_nsec);

    int v = -1;
    CHECK_ERR(posix_trace_attr_getinherited(&a, &v), 0);
    CHECK_MSG(v == POSIX_TRACE_CLOSE_FOR_CHILD, "§5 inheritance default POSIX_TRACE_CLOSE_FOR_CHILD: %d", v);
    CHECK_ERR(posix_trace_attr_getlogfullpolicy(&a, &v), 0);
    CHECK_MSG(v == POSIX_TRACE_LOOP, "§5 log-full-policy default POSIX_TRACE_LOOP: %d", v);
    /* P18: "getstreamfullpolicy on a fresh attr must still return a valid value (LOOP)". */
    CHECK_ERR(posix_trace_attr_getstreamfullpolicy(&a, &v), 0);
    CHECK_MSG(v == POSIX_TRACE_LOOP, "stream-full-policy of a fresh attr reported LOOP: %d", v);

    size_t sz = 0;
    CHECK_ERR(posix_trace_attr_getmaxdatasize(&a, &sz), 0);
    CHECK_MSG(sz > 0, "max-data-size default (impl-defined) > 0");
    CHECK_ERR(posix_trace_attr_getstreamsize(&a, &sz), 0);
    CHECK_MSG(sz > 0, "stream-min-size default (impl-defined) > 0");
    CHECK_ERR(posix_trace_attr_getlogsize(&a, &sz), 0);
    CHECK_MSG(sz > 0, "log-max-size default (impl-defined) > 0");
    CHECK_ERR(posix_trace_attr_destroy(&a), 0);
}

/* §9.1 setname: "longer than TRACE_NAME_MAX characters ... may be truncated to TRACE_NAME_MAX-1 characters". */
static void test_name(void)
{
    trace_attr_t a;
    posix_trace_attr_init(&a);
    char out[TRACE_NAME_MAX];
    CHECK_ERR(posix_trace_attr_setname(&a, "my trace"), 0);
    CHECK_ERR(posix_trace_attr_getname(&a, out), 0);
    CHECK_STR_EQ(out, "my trace");

    char exact[TRACE_NAME_MAX];
    memset(exact, 'e', TRACE_NAME_MAX - 1);
    exact[TRACE_NAME_MAX - 1] = 0;
    CHECK_ERR(posix_trace_attr_setname(&a, exact), 0);
    CHECK_ERR(posix_trace_attr_getname(&a, out), 0);
    CHECK_MSG(strcmp(out, exact) == 0, "a name of TRACE_NAME_MAX-1 characters is kept whole");

    char longer[3 * TRACE_NAME_MAX];
    for (size_t i = 0; i < sizeof longer - 1; i++)
        longer[i] = (char)('a' + i % 26);
    longer[sizeof longer - 1] = 0;
    char big[4 * TRACE_NAME_MAX]; /* room to see an overflow */
    memset(big, 'Z', sizeof big);
    CHECK_ERR(posix_trace_attr_setname(&a, longer), 0);
    CHECK_ERR(posix_trace_attr_getname(&a, big), 0);
    CHECK_EQ(strlen(big), TRACE_NAME_MAX - 1);
    CHECK_MSG(strncmp(big, longer, TRACE_NAME_MAX - 1) == 0, "the truncated name is a prefix");
    CHECK_MSG(big[TRACE_NAME_MAX] == 'Z', "getname writes at most TRACE_NAME_MAX bytes");

    CHECK_ERR(posix_trace_attr_setname(&a, ""), 0);
    CHECK_ERR(posix_trace_attr_getname(&a, out), 0);
    CHECK_STR_EQ(out, "");
    posix_trace_attr_destroy(&a);
}

/* §9.1: "all six may EINVAL ... e.g. unknown policy value"; a rejected value leaves the attribute unchanged. */
static void test_policies(void)
{
    trace_attr_t a;
    posix_trace_attr_init(&a);
    int v;
    static const int inh[] = {POSIX_TRACE_INHERITED, POSIX_TRACE_CLOSE_FOR_CHILD};
    for (int i = 0; i < 2; i++) {
        CHECK_ERR(posix_trace_attr_setinherited(&a, inh[i]), 0);
        CHECK_ERR(posix_trace_attr_getinherited(&a, &v), 0);
        CHECK_EQ_INT(v, inh[i]);
    }
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    CHECK_ERR(posix_trace_attr_setinherited(&a, 42), EINVAL);
    CHECK_ERR(posix_trace_attr_setinherited(&a, -1), EINVAL);
    posix_trace_attr_getinherited(&a, &v);
    CHECK_EQ_INT(v, POSIX_TRACE_INHERITED);

    /* log-full-policy: LOOP, UNTIL_FULL, APPEND; FLUSH is a stream policy only. */
    static const int logp[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND};
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(posix_trace_attr_setlogfullpolicy(&a, logp[i]), 0);
        CHECK_ERR(posix_trace_attr_getlogfullpolicy(&a, &v), 0);
        CHECK_EQ_INT(v, logp[i]);
    }
    CHECK_ERR(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_FLUSH), EINVAL);
    CHECK_ERR(posix_trace_attr_setlogfullpolicy(&a, 0), EINVAL);
    CHECK_ERR(posix_trace_attr_setlogfullpolicy(&a, 12345), EINVAL);
    posix_trace_attr_getlogfullpolicy(&a, &v);
    CHECK_EQ_INT(v, POSIX_TRACE_APPEND);

    /* stream-full-policy: LOOP, UNTIL_FULL, FLUSH; APPEND is a log policy only. */
    static const int strp[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH};
    for (int i = 0; i < 3; i++) {
        CHECK_ERR(posix_trace_attr_setstreamfullpolicy(&a, strp[i]), 0);
        CHECK_ERR(posix_trace_attr_getstreamfullpolicy(&a, &v), 0);
        CHECK_EQ_INT(v, strp[i]);
    }
    CHECK_ERR(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_APPEND), EINVAL);
    CHECK_ERR(posix_trace_attr_setstreamfullpolicy(&a, 0), EINVAL);
    CHECK_ERR(posix_trace_attr_setstreamfullpolicy(&a, -7), EINVAL);
    posix_trace_attr_getstreamfullpolicy(&a, &v);
    CHECK_EQ_INT(v, POSIX_TRACE_FLUSH);
    posix_trace_attr_destroy(&a);
}

static void test_sizes(void)
{
    trace_attr_t a;
    posix_trace_attr_init(&a);
    size_t sz;
    CHECK_ERR(posix_trace_attr_setstreamsize(&a, 123456), 0);
    CHECK_ERR(posix_trace_attr_getstreamsize(&a, &sz), 0);
    CHECK_EQ(sz, 123456);
    CHECK_ERR(posix_trace_attr_setlogsize(&a, 7u << 20), 0);
    CHECK_ERR(posix_trace_attr_getlogsize(&a, &sz), 0);
    CHECK_EQ(sz, 7u << 20);
    CHECK_ERR(posix_trace_attr_setmaxdatasize(&a, 100), 0);
    CHECK_ERR(posix_trace_attr_getmaxdatasize(&a, &sz), 0);
    CHECK_EQ(sz, 100);
    /* Rationale: "the system must return the limit it used" (may be smaller than asked). */
    CHECK_ERR(posix_trace_attr_setmaxdatasize(&a, (size_t)1 << 40), 0);
    CHECK_ERR(posix_trace_attr_getmaxdatasize(&a, &sz), 0);
    CHECK_MSG(sz > 0 && sz <= ((size_t)1 << 40), "max data size reported as used: %zu", sz);
    posix_trace_attr_destroy(&a);
}

/* §5: getmaxusereventsize(attr, data_len) "bytes a user event with data_len bytes of data needs". */
static void test_event_sizes(void)
{
    trace_attr_t a;
    posix_trace_attr_init(&a);
    posix_trace_attr_setmaxdatasize(&a, 256);
    size_t sys = 0, prev = 0, sz;
    CHECK_ERR(posix_trace_attr_getmaxsystemeventsize(&a, &sys), 0);
    /* P27: "getmaxsystemeventsize must cover the largest system event (FILTER carries two trace_event_set_t)". */
    CHECK_MSG(sys >= 2 * sizeof(trace_event_set_t), "max system event size %zu covers the FILTER data", sys);
    int monotonic = 1, covers = 1;
    for (size_t n = 0; n <= 256; n++) {
        CHECK_ERR(posix_trace_attr_getmaxusereventsize(&a, n, &sz), 0);
        if (sz < prev)
            monotonic = 0;
        if (sz < n)
            covers = 0;
        prev = sz;
    }
    CHECK_MSG(monotonic, "getmaxusereventsize does not decrease with data_len");
    CHECK_MSG(covers, "getmaxusereventsize(data_len) >= data_len");
    size_t s0, s200, s256, s1000;
    posix_trace_attr_getmaxusereventsize(&a, 0, &s0);
    posix_trace_attr_getmaxusereventsize(&a, 200, &s200);
    posix_trace_attr_getmaxusereventsize(&a, 256, &s256);
    posix_trace_attr_getmaxusereventsize(&a, 1000, &s1000);
    CHECK_MSG(s200 > s0, "grows with data_len: %zu vs %zu", s200, s0);
    /* P27: "getmaxusereventsize(data_len) must use min(data_len, max-data-size)". */
    CHECK_EQ(s1000, s256);
    posix_trace_attr_destroy(&a);
}

/* §5: "using a destroyed one (other than re-init) is undefined" - tracelog answers EINVAL, never crashes. */
static void test_invalid_objects(void)
{
    trace_attr_t a;
    posix_trace_attr_init(&a);
    CHECK_ERR(posix_trace_attr_destroy(&a), 0);
    char buf[TRACE_NAME_MAX];
    int v;
    size_t sz;
    struct timespec ts;
    CHECK_ERR(posix_trace_attr_getname(&a, buf), EINVAL);
    CHECK_ERR(posix_trace_attr_setname(&a, "x"), EINVAL);
    CHECK_ERR(posix_trace_attr_getgenversion(&a, buf), EINVAL);
    CHECK_ERR(posix_trace_attr_getclockres(&a, &ts), EINVAL);
    CHECK_ERR(posix_trace_attr_getcreatetime(&a, &ts), EINVAL);
    CHECK_ERR(posix_trace_attr_getinherited(&a, &v), EINVAL);
    CHECK_ERR(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED), EINVAL);
    CHECK_ERR(posix_trace_attr_getlogfullpolicy(&a, &v), EINVAL);
    CHECK_ERR(posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_LOOP), EINVAL);
    CHECK_ERR(posix_trace_attr_getstreamfullpolicy(&a, &v), EINVAL);
    CHECK_ERR(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP), EINVAL);
    CHECK_ERR(posix_trace_attr_getlogsize(&a, &sz), EINVAL);
    CHECK_ERR(posix_trace_attr_setlogsize(&a, 1), EINVAL);
    CHECK_ERR(posix_trace_attr_getmaxdatasize(&a, &sz), EINVAL);
    CHECK_ERR(posix_trace_attr_setmaxdatasize(&a, 1), EINVAL);
    CHECK_ERR(posix_trace_attr_getmaxsystemeventsize(&a, &sz), EINVAL);
    CHECK_ERR(posix_trace_attr_getmaxusereventsize(&a, 1, &sz), EINVAL);
    CHECK_ERR(posix_trace_attr_getstreamsize(&a, &sz), EINVAL);
    CHECK_ERR(posix_trace_attr_setstreamsize(&a, 1), EINVAL);
    CHECK_ERR(posix_trace_attr_destroy(&a), EINVAL);
    /* Re-initialising a destroyed object is allowed. */
    CHECK_ERR(posix_trace_attr_init(&a), 0);
    CHECK_ERR(posix_trace_attr_getname(&a, buf), 0);

    /* NULL arguments: EINVAL ("value specified by at least one argument is invalid"). */
    CHECK_ERR(posix_trace_attr_init(NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_destroy(NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getname(NULL, buf), EINVAL);
    CHECK_ERR(posix_trace_attr_getname(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_setname(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getgenversion(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getclockres(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getcreatetime(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getinherited(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getlogfullpolicy(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getstreamfullpolicy(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getlogsize(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getmaxdatasize(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getmaxsystemeventsize(&a, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getmaxusereventsize(&a, 1, NULL), EINVAL);
    CHECK_ERR(posix_trace_attr_getstreamsize(&a, NULL), EINVAL);

    /* A never-initialised object (all zero): magic 0. */
    trace_attr_t z;
    memset(&z, 0, sizeof z);
    CHECK_ERR(posix_trace_attr_getname(&z, buf), EINVAL);
    CHECK_ERR(posix_trace_attr_setstreamsize(&z, 1), EINVAL);
    posix_trace_attr_destroy(&a);
}

/*
 * §9.2 create: "creation-time := CLOCK_REALTIME now"; "Later changes to attr don't affect the stream";
 * §5: "One attr object may be used for many creates".
 */
static void test_stream_attr(void)
{
    trace_attr_t a, got;
    pt_attr(&a, POSIX_TRACE_UNTIL_FULL, 256u << 10, 200);
    posix_trace_attr_setname(&a, "first");
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    uint64_t before = pt_now_ns();
    trace_id_t t1, t2;
    CHECK_ERR(posix_trace_create(0, &a, &t1), 0);
    uint64_t after = pt_now_ns();
    posix_trace_attr_setname(&a, "second");
    posix_trace_attr_setmaxdatasize(&a, 50);
    CHECK_ERR(posix_trace_create(0, &a, &t2), 0);
    posix_trace_attr_setname(&a, "changed later");

    posix_trace_attr_init(&got);
    CHECK_ERR(posix_trace_get_attr(t1, &got), 0);
    char name[TRACE_NAME_MAX];
    posix_trace_attr_getname(&got, name);
    CHECK_STR_EQ(name, "first");
    struct timespec ct;
    CHECK_ERR(posix_trace_attr_getcreatetime(&got, &ct), 0);
    CHECK_MSG(pt_ns(&ct) >= before && pt_ns(&ct) <= after, "creation time %llu within [%llu, %llu]",
              (unsigned long long)pt_ns(&ct), (unsigned long long)before, (unsigned long long)after);
    int v;
    posix_trace_attr_getstreamfullpolicy(&got, &v);
    CHECK_EQ_INT(v, POSIX_TRACE_UNTIL_FULL);
    posix_trace_attr_getinherited(&got, &v);
    CHECK_EQ_INT(v, POSIX_TRACE_INHERITED);
    size_t sz;
    posix_trace_attr_getmaxdatasize(&got, &sz);
    CHECK_EQ(sz, 200);
    posix_trace_attr_getstreamsize(&got, &sz);
    CHECK_MSG(sz >= (256u << 10), "stream size reported >= requested: %zu", sz);
    char gen[TRACE_NAME_MAX];
    posix_trace_attr_getgenversion(&got, gen);
    CHECK_MSG(strncmp(gen, "tracelog", 8) == 0, "get_attr genversion: %s", gen);
    struct timespec res;
    CHECK_ERR(posix_trace_attr_getclockres(&got, &res), 0);
    CHECK(ts_positive(&res));

    CHECK_ERR(posix_trace_get_attr(t2, &got), 0);
    posix_trace_attr_getname(&got, name);
    CHECK_STR_EQ(name, "second");
    posix_trace_attr_getmaxdatasize(&got, &sz);
    CHECK_EQ(sz, 50);

    /* P38: "They also call posix_trace_get_attr on a trace_attr_t that was never initialised". */
    trace_attr_t garbage;
    memset(&garbage, 0xA5, sizeof garbage);
    CHECK_ERR(posix_trace_get_attr(t1, &garbage), 0);
    CHECK_ERR(posix_trace_attr_getname(&garbage, name), 0);
    CHECK_STR_EQ(name, "first");
    CHECK_ERR(posix_trace_get_attr(t1, NULL), EINVAL);

    pt_shutdown(t1);
    pt_shutdown(t2);
    posix_trace_attr_destroy(&a);
}

/* P18: "create_withlog maps unset -> FLUSH"; without log the default is LOOP. */
static void test_default_stream_policy(void)
{
    trace_id_t t;
    trace_attr_t got;
    int v = 0;
    posix_trace_attr_init(&got);
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_get_attr(t, &got), 0);
    posix_trace_attr_getstreamfullpolicy(&got, &v);
    CHECK_MSG(v == POSIX_TRACE_LOOP, "create (no log, NULL attr): stream policy LOOP, got %d", v);
    posix_trace_attr_getlogfullpolicy(&got, &v);
    CHECK_EQ_INT(v, POSIX_TRACE_LOOP);
    pt_shutdown(t);

    trace_attr_t a;
    posix_trace_attr_init(&a);
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_get_attr(t, &got), 0);
    posix_trace_attr_getstreamfullpolicy(&got, &v);
    CHECK_MSG(v == POSIX_TRACE_LOOP, "create (no log, default attr): stream policy LOOP, got %d", v);
    pt_shutdown(t);

    int fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    CHECK_ERR(posix_trace_get_attr(t, &got), 0);
    posix_trace_attr_getstreamfullpolicy(&got, &v);
    CHECK_MSG(v == POSIX_TRACE_FLUSH, "create_withlog (default attr): stream policy FLUSH, got %d", v);
    pt_shutdown(t);
    close(fd);

    fd = tl_test_tmpfd();
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_get_attr(t, &got), 0);
    posix_trace_attr_getstreamfullpolicy(&got, &v);
    CHECK_MSG(v == POSIX_TRACE_FLUSH, "create_withlog (NULL attr): stream policy FLUSH, got %d", v);
    pt_shutdown(t);
    close(fd);
    posix_trace_attr_destroy(&a);
}

/* tracelog_trace_attr_setflushwait: the default, the environment, the range, and what a stream reports. */
static void test_flush_wait(void)
{
    trace_attr_t a;
    posix_trace_attr_init(&a);
    unsigned us = 1;
    CHECK_ERR(tracelog_trace_attr_getflushwait(&a, &us), 0);
    CHECK_EQ(us, 100000);
    setenv("TRACELOG_FLUSH_WAIT_US", "0", 1);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&a, &us), 0);
    CHECK_EQ(us, 0);
    static const char *const bad_env[] = {"-5", "abc", "12x", "", "1000001", "99999999999999999999"};
    for (size_t i = 0; i < sizeof bad_env / sizeof bad_env[0]; i++) {
        setenv("TRACELOG_FLUSH_WAIT_US", bad_env[i], 1);
        CHECK_ERR(tracelog_trace_attr_getflushwait(&a, &us), 0);
        CHECK_MSG(us == 100000, "TRACELOG_FLUSH_WAIT_US=\"%s\" is ignored (got %u)", bad_env[i], us);
    }
    setenv("TRACELOG_FLUSH_WAIT_US", "250", 1);
    CHECK_ERR(tracelog_trace_attr_setflushwait(&a, 0), 0); /* the attribute beats the environment */
    CHECK_ERR(tracelog_trace_attr_getflushwait(&a, &us), 0);
    CHECK_EQ(us, 0);
    unsetenv("TRACELOG_FLUSH_WAIT_US");
    CHECK_ERR(tracelog_trace_attr_setflushwait(&a, 1000000), 0);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&a, &us), 0);
    CHECK_EQ(us, 1000000);
    CHECK_ERR(tracelog_trace_attr_setflushwait(&a, 1000001), EINVAL);
    CHECK_ERR(tracelog_trace_attr_setflushwait(NULL, 5), EINVAL);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&a, NULL), EINVAL);
    trace_attr_t junk;
    memset(&junk, 0x5a, sizeof junk);
    CHECK_ERR(tracelog_trace_attr_setflushwait(&junk, 5), EINVAL);

    /* A stream reports the wait it uses: a FLUSH stream its own, a LOOP stream none. */
    CHECK_ERR(tracelog_trace_attr_setflushwait(&a, 777), 0);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    trace_attr_t got;
    CHECK_ERR(posix_trace_get_attr(t, &got), 0);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&got, &us), 0);
    CHECK_EQ(us, 777);
    pt_shutdown(t);
    close(fd);
    posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP);
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_get_attr(t, &got), 0);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&got, &us), 0);
    CHECK_EQ(us, 0);
    pt_shutdown(t);
    posix_trace_attr_destroy(&a);
}

int main(void)
{
    pt_watchdog(18);
    PT_RUN(test_defaults);
    PT_RUN(test_name);
    PT_RUN(test_policies);
    PT_RUN(test_sizes);
    PT_RUN(test_event_sizes);
    PT_RUN(test_invalid_objects);
    PT_RUN(test_stream_attr);
    PT_RUN(test_default_stream_policy);
    PT_RUN(test_flush_wait);
    return pt_finish();
}
