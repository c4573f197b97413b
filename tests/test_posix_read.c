/*
 * Reading an active stream without log (posix-trace.md §4.1, §9.5, §12):
 * the fields of a recorded event, truncation at record and at read time,
 * posix_trace_trygetnext_event, posix_trace_timedgetnext_event deadlines,
 * posix_trace_getnext_event blocking, EINTR, and shutdown waking readers.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_a, ev_b;

static trace_id_t new_stream(size_t max_data)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, max_data);
    trace_id_t t = 0;
    if (posix_trace_create(0, &a, &t) != 0 || posix_trace_start(t) != 0)
        TL_DIE("cannot create and start a stream");
    return t;
}

/* Reads one event with trygetnext; returns 1 if one was there. */
static int try_one(trace_id_t t, struct posix_trace_event_info *info, void *data, size_t num, size_t *len)
{
    int unavailable = -1;
    int e = posix_trace_trygetnext_event(t, info, data, num, len, &unavailable);
    CHECK_ERR(e, 0);
    return e == 0 && unavailable == 0;
}

/* Reads the next event that is not START/STOP. */
static int next_user(trace_id_t t, struct posix_trace_event_info *info, void *data, size_t num, size_t *len)
{
    while (try_one(t, info, data, num, len))
        if (info->posix_event_id != POSIX_TRACE_START && info->posix_event_id != POSIX_TRACE_STOP)
            return 1;
    return 0;
}

__attribute__((noinline)) static void record_here(const void *data, size_t len)
{
    posix_trace_event(ev_a, data, len);
    __asm__ volatile("" ::: "memory"); /* keeps the call from becoming a tail call */
}

typedef struct {
    trace_id_t t;
    pthread_t self;
} thread_arg;

static void *record_in_thread(void *p)
{
    thread_arg *a = p;
    a->self = pthread_self();
    posix_trace_event(ev_b, "thread", 6);
    return NULL;
}

/*
 * §4.1: posix_event_id, posix_pid ("pid of the traced process that generated it"), posix_prog_address
 * ("address in the process where posix_trace_event was called"), posix_thread_id ("thread that generated
 * it"), posix_timestamp ("generation time"), posix_truncation_status.
 */
static void test_event_fields(void)
{
    trace_id_t t = new_stream(64);
    const char payload[] = "hello, trace";
    uint64_t before = pt_now_ns();
    record_here(payload, sizeof payload);
    uint64_t after = pt_now_ns();
    thread_arg ta = {t, 0};
    pthread_t th;
    pthread_create(&th, NULL, record_in_thread, &ta);
    pthread_join(th, NULL);

    struct posix_trace_event_info info;
    char data[128];
    size_t len = 999;
    CHECK(next_user(t, &info, data, sizeof data, &len));
    CHECK_EQ(info.posix_event_id, ev_a);
    CHECK_EQ_INT(info.posix_pid, getpid());
    CHECK(pthread_equal(info.posix_thread_id, pthread_self()));
    uint64_t ts = pt_ns(&info.posix_timestamp);
    CHECK_MSG(ts >= before && ts <= after, "timestamp %llu within [%llu, %llu] (CLOCK_REALTIME)",
              (unsigned long long)ts, (unsigned long long)before, (unsigned long long)after);
    CHECK(info.posix_timestamp.tv_nsec >= 0 && info.posix_timestamp.tv_nsec < 1000000000);
    CHECK_EQ(len, sizeof payload);
    CHECK(memcmp(data, payload, sizeof payload) == 0);
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
    /* The call site lies inside record_here (a small function). */
    const char *pc = info.posix_prog_address, *fn = (const char *)(uintptr_t)record_here;
    CHECK_MSG(pc > fn && pc < fn + 4096, "prog address %p inside record_here (%p)", (const void *)pc,
              (const void *)fn);

    CHECK(next_user(t, &info, data, sizeof data, &len));
    CHECK_EQ(info.posix_event_id, ev_b);
    CHECK(pthread_equal(info.posix_thread_id, ta.self));
    CHECK(!pthread_equal(info.posix_thread_id, pthread_self()));
    CHECK_EQ_INT(info.posix_pid, getpid());
    CHECK(pt_ns(&info.posix_timestamp) >= ts);
    CHECK(len == 6 && memcmp(data, "thread", 6) == 0);

    /* "On an active stream an event is reported only once". */
    int unavailable = 0;
    CHECK_ERR(posix_trace_trygetnext_event(t, &info, data, sizeof data, &len, &unavailable), 0);
    CHECK(unavailable != 0);
    pt_shutdown(t);
}

/* Two call sites give two addresses; successive events have non-decreasing timestamps. */
static void test_addresses_and_order(void)
{
    trace_id_t t = new_stream(64);
    for (int i = 0; i < 100; i++) {
        posix_trace_event(ev_a, &i, sizeof i);
        posix_trace_event(ev_b, &i, sizeof i);
    }
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 201);
    int order = 1, sites = 1, seq = 1;
    for (size_t i = 2; i < ev.n; i++) {
        order &= pt_ns(&ev.ev[i].info.posix_timestamp) >= pt_ns(&ev.ev[i - 1].info.posix_timestamp);
        if (i >= 3)
            sites &= ev.ev[i].info.posix_prog_address == ev.ev[i - 2].info.posix_prog_address;
        int v;
        memcpy(&v, ev.ev[i].data, sizeof v);
        seq &= v == (int)(i - 1) / 2 && ev.ev[i].info.posix_event_id == ((i - 1) % 2 == 0 ? ev_a : ev_b);
    }
    CHECK_MSG(order, "timestamps never decrease (events of one thread, in order)");
    CHECK_MSG(seq, "events read back in the order recorded");
    CHECK_MSG(sites, "the same call site gives the same address");
    if (ev.n > 2)
        CHECK(ev.ev[1].info.posix_prog_address != ev.ev[2].info.posix_prog_address);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/*
 * §9.3: "data_len <= declared max => NOT_TRUNCATED, else truncated to the max and TRUNCATED_RECORD".
 * §9.5: "otherwise data is cut to num_bytes, *data_len = num_bytes, status TRUNCATED_READ";
 * §4.1: TRUNCATED_READ "overrides TRUNCATED_RECORD"; P38: data NULL, num_bytes 0.
 */
static void test_truncation(void)
{
    trace_id_t t = new_stream(16);
    unsigned char big[40];
    for (int i = 0; i < 40; i++)
        big[i] = (unsigned char)(i + 1);
    posix_trace_event(ev_a, big, 40); /* 1: cut at record time */
    posix_trace_event(ev_a, big, 16); /* 2: exactly the max */
    posix_trace_event(ev_a, big, 40); /* 3: cut at record and at read time */
    posix_trace_event(ev_a, big, 12); /* 4: cut at read time */
    posix_trace_event(ev_a, big, 12); /* 5: read with data NULL, num_bytes 0 */
    posix_trace_event(ev_a, big, 12); /* 6: read with data NULL, num_bytes 100 */
    posix_trace_event(ev_a, NULL, 0); /* 7: no data */
    posix_trace_event(ev_a, big, 12); /* 8: read into a buffer of exactly its size */
    posix_trace_event(ev_a, NULL, 100); /* 9: no data pointer: nothing to record (and no crash) */

    struct posix_trace_event_info info;
    unsigned char out[256];
    size_t len;
    CHECK(try_one(t, &info, out, sizeof out, &len)); /* START */
    CHECK_EQ(info.posix_event_id, POSIX_TRACE_START);
    memset(out, 0xEE, sizeof out);
    CHECK(next_user(t, &info, out, sizeof out, &len));
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);
    CHECK_EQ(len, 16);
    CHECK(memcmp(out, big, 16) == 0 && out[16] == 0xEE);

    CHECK(next_user(t, &info, out, sizeof out, &len));
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
    CHECK_EQ(len, 16);

    memset(out, 0xEE, sizeof out);
    CHECK(next_user(t, &info, out, 8, &len));
    CHECK_MSG(info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ, "TRUNCATED_READ overrides RECORD: %d",
              info.posix_truncation_status);
    CHECK_EQ(len, 8);
    CHECK(memcmp(out, big, 8) == 0 && out[8] == 0xEE);

    memset(out, 0xEE, sizeof out);
    CHECK(next_user(t, &info, out, 5, &len));
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
    CHECK_EQ(len, 5);
    CHECK(memcmp(out, big, 5) == 0 && out[5] == 0xEE);

    len = 77;
    CHECK(next_user(t, &info, NULL, 0, &len));
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
    CHECK_EQ(len, 0);

    len = 77;
    CHECK(next_user(t, &info, NULL, 100, &len));
    CHECK_MSG(info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ && len == 0,
              "P38: a NULL buffer is never written: TRUNCATED_READ and length 0 (got %d, %zu)",
              info.posix_truncation_status, len);

    len = 77;
    CHECK(next_user(t, &info, out, sizeof out, &len));
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
    CHECK_EQ(len, 0);

    CHECK(next_user(t, &info, out, 12, &len));
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
    CHECK_EQ(len, 12);

    len = 77;
    CHECK(next_user(t, &info, out, sizeof out, &len));
    CHECK_EQ(len, 0);
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
    pt_shutdown(t);

    /* max data size 0: every payload is cut to nothing. */
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 0);
    CHECK_ERR(posix_trace_attr_setmaxdatasize(&a, 0), 0);
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    trace_attr_t got;
    posix_trace_attr_init(&got);
    posix_trace_get_attr(t, &got);
    size_t md = 99;
    posix_trace_attr_getmaxdatasize(&got, &md);
    CHECK_EQ(md, 0);
    posix_trace_event(ev_a, big, 4);
    posix_trace_event(ev_a, NULL, 0);
    CHECK(next_user(t, &info, out, sizeof out, &len));
    CHECK_EQ(len, 0);
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);
    CHECK(next_user(t, &info, out, sizeof out, &len));
    CHECK_EQ(len, 0);
    CHECK_EQ_INT(info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
    pt_shutdown(t);
}

/* P7: "trygetnext 'no event' is success (0) with *unavailable != 0". Events stay readable after stop. */
static void test_trygetnext(void)
{
    trace_id_t t = new_stream(64);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0); /* START */
    pt_events_free(&ev);
    struct posix_trace_event_info info;
    char data[8];
    size_t len = 5;
    int unavailable = 0;
    CHECK_ERR(posix_trace_trygetnext_event(t, &info, data, sizeof data, &len, &unavailable), 0);
    CHECK(unavailable != 0);
    /* NULL event or unavailable: invalid arguments. */
    CHECK_ERR(posix_trace_trygetnext_event(t, NULL, data, sizeof data, &len, &unavailable), EINVAL);
    CHECK_ERR(posix_trace_trygetnext_event(t, &info, data, sizeof data, &len, NULL), EINVAL);
    /* "Events can still be read while STOPPED." */
    posix_trace_event(ev_a, "x", 1);
    CHECK_ERR(posix_trace_stop(t), 0);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 2);
    CHECK_EQ(pt_count(&ev, ev_a), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_STOP), 1);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/*
 * timedgetnext: "the wait ends when absolute time abstime (CLOCK_REALTIME) is reached or already passed =>
 * ETIMEDOUT"; "EINVAL — no event immediately available and abstime invalid"; "Never times out if an event is
 * immediately available, and then need not validate abstime".
 */
static void test_timedgetnext(void)
{
    trace_id_t t = new_stream(64);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    pt_events_free(&ev);
    struct posix_trace_event_info info;
    char data[8];
    size_t len;
    int unavailable;
    struct timespec past = {1, 0};
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &past), ETIMEDOUT);
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &now), ETIMEDOUT);

    struct timespec bad1 = {now.tv_sec + 100, -1}, bad2 = {now.tv_sec + 100, 1000000000};
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &bad1), EINVAL);
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &bad2), EINVAL);
    struct timespec bad3 = {0, -5};
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &bad3), EINVAL);
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, NULL), EINVAL);

    /* A deadline 50 ms ahead: ETIMEDOUT, and not before the deadline. */
    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    uint64_t deadline = pt_ns(&soon) + 50000000u;
    soon.tv_sec = (time_t)(deadline / 1000000000u);
    soon.tv_nsec = (long)(deadline % 1000000000u);
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &soon), ETIMEDOUT);
    CHECK_MSG(pt_now_ns() >= deadline, "ETIMEDOUT only once the deadline is reached");

    /* An event available: returned whatever abstime says. */
    posix_trace_event(ev_a, "e1", 2);
    posix_trace_event(ev_a, "e2", 2);
    posix_trace_event(ev_a, "e3", 2);
    unavailable = -1;
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &bad2), 0);
    CHECK(unavailable == 0 && info.posix_event_id == ev_a && len == 2 && memcmp(data, "e1", 2) == 0);
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &past), 0);
    CHECK(unavailable == 0 && len == 2 && memcmp(data, "e2", 2) == 0);
    struct timespec later = {now.tv_sec + 100, 0};
    CHECK_ERR(posix_trace_timedgetnext_event(t, &info, data, sizeof data, &len, &unavailable, &later), 0);
    CHECK(unavailable == 0 && len == 2 && memcmp(data, "e3", 2) == 0);
    pt_shutdown(t);
}

/* ---- blocking readers ------------------------------------------------------- */

enum { READ_GETNEXT, READ_TIMED };

typedef struct reader {
    trace_id_t t;
    int how;
    pthread_t thread;
    atomic_int started, done;
    int err, unavailable;
    struct posix_trace_event_info info;
    char data[32];
    size_t len;
} reader;

static void *reader_main(void *p)
{
    reader *r = p;
    atomic_store(&r->started, 1);
    struct timespec far;
    clock_gettime(CLOCK_REALTIME, &far);
    far.tv_sec += 60;
    r->unavailable = -1;
    if (r->how == READ_GETNEXT)
        r->err = posix_trace_getnext_event(r->t, &r->info, r->data, sizeof r->data, &r->len, &r->unavailable);
    else
        r->err = posix_trace_timedgetnext_event(r->t, &r->info, r->data, sizeof r->data, &r->len,
                                                &r->unavailable, &far);
    atomic_store(&r->done, 1);
    return NULL;
}

static void start_reader(reader *r, trace_id_t t, int how)
{
    memset(r, 0, sizeof *r);
    r->t = t;
    r->how = how;
    if (pthread_create(&r->thread, NULL, reader_main, r) != 0)
        TL_DIE("pthread_create");
    while (!atomic_load(&r->started))
        usleep(100);
    /* Give it time to block: only a convenience, the outcome is the same if it has not blocked yet. */
    usleep(20000);
}

/* Waits for the reader to finish (at most ~5 s); 1 if it did. */
static int wait_reader(reader *r)
{
    for (int i = 0; i < 5000 && !atomic_load(&r->done); i++)
        usleep(1000);
    if (!atomic_load(&r->done))
        return 0;
    pthread_join(r->thread, NULL);
    return 1;
}

/* getnext: "blocks on an active stream when nothing is ready"; returns the event once one is recorded. */
static void test_getnext_blocks(void)
{
    for (int how = READ_GETNEXT; how <= READ_TIMED; how++) {
        tl_test_context("%s", how == READ_GETNEXT ? "getnext" : "timedgetnext");
        trace_id_t t = new_stream(64);
        pt_events ev = {0};
        CHECK_ERR(pt_read_all(t, 1, &ev), 0);
        pt_events_free(&ev);
        reader r;
        start_reader(&r, t, how);
        CHECK_MSG(!atomic_load(&r.done), "the reader waits while the stream is empty");
        posix_trace_event(ev_b, "wake up", 7);
        if (!CHECK_MSG(wait_reader(&r), "the reader returned after an event was recorded"))
            TL_DIE("reader thread stuck");
        CHECK_ERR(r.err, 0);
        CHECK_EQ_INT(r.unavailable, 0);
        CHECK_EQ(r.info.posix_event_id, ev_b);
        CHECK(r.len == 7 && memcmp(r.data, "wake up", 7) == 0);
        CHECK(pthread_equal(r.info.posix_thread_id, pthread_self()));
        pt_shutdown(t);
    }
    tl_test_context(NULL);
}

static atomic_int handled;
static void on_usr1(int sig)
{
    (void)sig;
    atomic_fetch_add(&handled, 1);
}

/*
 * §9.5: getnext and timedgetnext "shall: EINTR — interrupted by a signal, call had no effect";
 * P8: "sem_wait is never restarted after a handler on Linux, regardless of SA_RESTART".
 */
static void test_eintr(void)
{
    for (int restart = 0; restart <= 1; restart++)
        for (int how = READ_GETNEXT; how <= READ_TIMED; how++) {
            tl_test_context("%s, handler %s SA_RESTART", how == READ_GETNEXT ? "getnext" : "timedgetnext",
                            restart ? "with" : "without");
            struct sigaction sa, old;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_usr1;
            sa.sa_flags = restart ? SA_RESTART : 0;
            sigaction(SIGUSR1, &sa, &old);
            trace_id_t t = new_stream(64);
            pt_events ev = {0};
            CHECK_ERR(pt_read_all(t, 1, &ev), 0);
            pt_events_free(&ev);
            reader r;
            start_reader(&r, t, how);
            /* A signal that arrives before the reader sleeps is simply handled: send until it returns. */
            for (int i = 0; i < 500 && !atomic_load(&r.done); i++) {
                pthread_kill(r.thread, SIGUSR1);
                usleep(10000);
            }
            if (!CHECK_MSG(wait_reader(&r), "the signal ended the wait"))
                TL_DIE("reader thread stuck in spite of signals");
            CHECK_ERR(r.err, EINTR);
            /* "call had no effect": the event recorded now is still there. */
            posix_trace_event(ev_a, "after", 5);
            CHECK_ERR(pt_read_all(t, 1, &ev), 0);
            CHECK_EQ(ev.n, 1);
            pt_events_free(&ev);
            pt_shutdown(t);
            sigaction(SIGUSR1, &old, NULL);
        }
    tl_test_context(NULL);
}

/*
 * shutdown: "threads blocked in any getnext function on this trid are woken with EINVAL" and P37: "must not
 * touch freed memory" (this test runs under AddressSanitizer too).
 */
static void test_shutdown_wakes_readers(void)
{
    trace_id_t t = new_stream(64);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    pt_events_free(&ev);
    reader r[4];
    for (int i = 0; i < 4; i++)
        start_reader(&r[i], t, i % 2 ? READ_TIMED : READ_GETNEXT);
    CHECK_ERR(posix_trace_shutdown(t), 0);
    for (int i = 0; i < 4; i++) {
        tl_test_context("reader %d", i);
        if (!CHECK_MSG(wait_reader(&r[i]), "a blocked reader is woken by shutdown"))
            TL_DIE("reader thread stuck after shutdown");
        CHECK_ERR(r[i].err, EINVAL);
    }
    tl_test_context(NULL);
    /* The memory of the stream may be reused by the next one: nothing of the old stream leaks into it. */
    trace_id_t t2 = new_stream(64);
    CHECK(t2 != t);
    CHECK_ERR(pt_read_all(t2, 1, &ev), 0);
    CHECK_EQ(ev.n, 1); /* its own START */
    pt_events_free(&ev);
    pt_shutdown(t2);
}

/*
 * Calls racing shutdown and the reuse of the handle's slot (registry.c takes
 * a call's use without a lock): a call on a handle being shut down either
 * runs on the live stream (0) or gets EINVAL, never reaches a freed or a
 * newer stream (runs under AddressSanitizer too), and the old handle stays
 * EINVAL once a new stream has its slot.
 */
typedef struct {
    _Atomic trace_id_t trid;
    _Atomic int stop;
    int bad; /* an answer other than 0 and EINVAL */
    unsigned long calls;
} hammer_arg;

static void *hammer_main(void *p)
{
    hammer_arg *h = p;
    while (!atomic_load(&h->stop)) {
        struct posix_trace_event_info info;
        char buf[16];
        size_t len;
        int unavailable;
        int e = posix_trace_trygetnext_event(atomic_load(&h->trid), &info, buf, sizeof buf, &len, &unavailable);
        h->bad += e != 0 && e != EINVAL;
        h->calls++;
    }
    return NULL;
}

static void test_calls_race_shutdown(void)
{
    hammer_arg h[2] = {0};
    pthread_t th[2];
    trace_id_t t = new_stream(64);
    for (int i = 0; i < 2; i++) {
        atomic_store(&h[i].trid, t);
        pthread_create(&th[i], NULL, hammer_main, &h[i]);
    }
    for (int round = 0; round < (PT_SANITIZED ? 50 : 200); round++) {
        usleep(200);
        CHECK_ERR(posix_trace_shutdown(t), 0);
        trace_id_t old = t;
        t = new_stream(64);
        CHECK(t != old);
        struct posix_trace_event_info info;
        int unavailable;
        CHECK_ERR(posix_trace_trygetnext_event(old, &info, NULL, 0, NULL, &unavailable), EINVAL);
        for (int i = 0; i < 2; i++)
            atomic_store(&h[i].trid, round % 2 ? t : old); /* half the rounds on a dead handle */
    }
    for (int i = 0; i < 2; i++) {
        atomic_store(&h[i].stop, 1);
        pthread_join(th[i], NULL);
        CHECK_MSG(h[i].bad == 0, "thread %d: %d answers other than 0 and EINVAL", i, h[i].bad);
        CHECK(h[i].calls > 0);
    }
    pt_shutdown(t);
}

/* A blocked reader and a producer thread: every event arrives, nothing is lost or duplicated. */
typedef struct {
    int n;
} producer_arg;

static void *producer_main(void *p)
{
    producer_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        posix_trace_event(ev_a, &i, sizeof i);
        if (i % 64 == 0)
            usleep(100); /* let the reader catch up and block now and then */
    }
    return NULL;
}

static void test_reader_and_producer(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 8u << 20, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    producer_arg pa = {PT_SANITIZED ? 5000 : 20000};
    pthread_t th;
    pthread_create(&th, NULL, producer_main, &pa);
    int next = 0, ok = 1;
    while (next < pa.n) {
        struct posix_trace_event_info info;
        int v = -1, unavailable = 1;
        size_t len = 0;
        int e = posix_trace_getnext_event(t, &info, &v, sizeof v, &len, &unavailable);
        if (e || unavailable) {
            CHECK_ERR(e, 0);
            break;
        }
        if (info.posix_event_id != ev_a)
            continue;
        if (v != next || len != sizeof v) {
            ok = 0;
            break;
        }
        next++;
    }
    pthread_join(th, NULL);
    CHECK_MSG(ok && next == pa.n, "every event read once, in order: %d of %d", next, pa.n);
    struct posix_trace_status_info si;
    CHECK_ERR(posix_trace_get_status(t, &si), 0);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    pt_shutdown(t);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("read a", &ev_a) || posix_trace_eventid_open("read b", &ev_b))
        TL_DIE("eventid_open failed");
    PT_RUN(test_event_fields);
    PT_RUN(test_addresses_and_order);
    PT_RUN(test_truncation);
    PT_RUN(test_trygetnext);
    PT_RUN(test_timedgetnext);
    PT_RUN(test_getnext_blocks);
    PT_RUN(test_eintr);
    PT_RUN(test_shutdown_wakes_readers);
    PT_RUN(test_calls_race_shutdown);
    PT_RUN(test_reader_and_producer);
    return pt_finish();
}
