/*
 * A FLUSH producer that finds its lane full waits for room before it loses
 * the event (tl_stream_wait_room, stream.h; issue 11, "zero loss first"):
 * woken by the consumer when it gives room back, the event is recorded
 * after the ones before it; a wait that times out loses the event and turns
 * waiting off for the lane until the consumer moves its tail, so a consumer
 * that is gone costs one wait, not one per event; a stopped stream is not
 * waited for; a thread that drains streams never waits; other policies and
 * wait 0 never wait.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "posix_helpers.h"
#include "stream/clock.h"
#include "stream/produce.h"
#include "stream/consumer.h"
#include "stream/layout.h"

enum { OVERFLOW_ID = 4, RESUME_ID = 5, STOP_ID = 3, START_ID = 2, EVENT_ID = 100 };

static tl_stream *make(uint32_t policy, uint32_t wait_us)
{
    tl_stream_params p = {.policy = policy,
                          .stream_size = 4096,
                          .max_data = 64,
                          .max_sys_data = 64,
                          .nlanes = 1,
                          .wait_us = wait_us,
                          .markers = {OVERFLOW_ID, RESUME_ID, STOP_ID, START_ID}};
    tl_stream *s = tl_stream_create(&p);
    if (!s)
        TL_DIE("tl_stream_create");
    tl_stream_start(s, NULL);
    return s;
}

static int record(tl_stream *s, uint64_t seq)
{
    tracelog_event ev = {.event_id = EVENT_ID, .payload_len = sizeof seq, .payload = &seq};
    return tl_stream_record(s, 0, &ev);
}

/* Records until the lane is full without waiting (the wait is off for the fill): the events recorded. */
static uint64_t fill(tl_stream *s)
{
    uint64_t n = 0;
    tl_lane *l = tl_stream_lane(s, 0);
    uint64_t cap = tl_stream_lane_size(s);
    while (atomic_load(&l->head) - atomic_load(&l->tail) + tl_rec_size(8) <= cap)
        n += (uint64_t)record(s, n);
    return n;
}

/* Takes every event; checks their sequence numbers run from *next on, without a gap. */
static void drain_all(tl_consumer *c, uint64_t *next)
{
    tracelog_event ev;
    while (tl_consumer_take_wait(c, &ev) == TL_TAKE_EVENT) {
        if (ev.event_id != EVENT_ID)
            continue;
        uint64_t seq;
        memcpy(&seq, ev.payload, sizeof seq);
        if (!CHECK_EQ(seq, *next))
            break;
        (*next)++;
    }
}

static double ms_since(uint64_t t0) { return (double)(tl_clock_mono_ns() - t0) / 1e6; }

static void test_times_out_then_off_until_room(void)
{
    tl_stream *s = make(TRACELOG_POLICY_FLUSH, 300000);
    uint64_t n = fill(s);
    CHECK(n > 10);
    uint64_t t0 = tl_clock_mono_ns();
    CHECK_EQ(record(s, n), 0); /* nobody consumes: lost after the wait */
    double waited = ms_since(t0);
    CHECK_MSG(waited >= 250, "waited %.1f ms for room (wait 300 ms)", waited);
    CHECK_EQ(tl_stream_overruns(s), 1);
    t0 = tl_clock_mono_ns();
    CHECK_EQ(record(s, n), 0); /* waiting is off now: lost at once */
    waited = ms_since(t0);
    CHECK_MSG(waited < 100, "the second loss waited %.1f ms", waited);
    CHECK_EQ(tl_stream_overruns(s), 2);

    tl_consumer *c = NULL;
    CHECK_ERR(!(c = tl_consumer_new(s)), 0);
    uint64_t next = 0;
    drain_all(c, &next); /* the tail moves: waiting is on again */
    CHECK_EQ(next, n);
    uint64_t m = fill(s);
    t0 = tl_clock_mono_ns();
    CHECK_EQ(record(s, n + m), 0);
    waited = ms_since(t0);
    CHECK_MSG(waited >= 250, "after the consumer made room, a full lane waited %.1f ms again", waited);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
}

typedef struct waiter {
    tl_stream *s;
    uint64_t seq;
    int recorded;
    double ms;
} waiter;

static void *wait_and_record(void *arg)
{
    waiter *w = arg;
    uint64_t t0 = tl_clock_mono_ns();
    w->recorded = record(w->s, w->seq);
    w->ms = ms_since(t0);
    return NULL;
}

/* Fills s's lane, then starts a producer that records into it (and waits), and gives it ms to start waiting. */
static pthread_t start_waiter(tl_stream *s, waiter *w, long ms)
{
    *w = (waiter){.s = s, .seq = fill(s)};
    pthread_t th;
    pthread_create(&th, NULL, wait_and_record, w);
    struct timespec pause = {0, ms * 1000000};
    nanosleep(&pause, NULL);
    return th;
}

static void test_woken_when_room_is_made(void)
{
    tl_stream *s = make(TRACELOG_POLICY_FLUSH, 1000000);
    waiter w;
    pthread_t th = start_waiter(s, &w, 30);
    tl_consumer *c = NULL;
    CHECK_ERR(!(c = tl_consumer_new(s)), 0);
    uint64_t next = 0;
    drain_all(c, &next);
    pthread_join(th, NULL);
    CHECK_EQ(w.recorded, 1);
    CHECK_MSG(w.ms >= 20 && w.ms < 900, "the waiting producer was woken after %.1f ms (room made after 30 ms)", w.ms);
    CHECK_EQ(tl_stream_overruns(s), 0);
    drain_all(c, &next); /* its event comes after every earlier one: the sequence has no gap */
    CHECK_EQ(next, w.seq + 1);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
}

static void test_stop_ends_the_wait(void)
{
    tl_stream *s = make(TRACELOG_POLICY_FLUSH, 1000000);
    waiter w;
    pthread_t th = start_waiter(s, &w, 20);
    tl_stream_stop(s, NULL);
    pthread_join(th, NULL);
    CHECK_EQ(w.recorded, 0);
    CHECK_MSG(w.ms < 500, "a producer waited %.1f ms on a stream stopped after 20 ms", w.ms);
    tl_stream_destroy(s, s->total_size);
}

/* A thread that drains streams (a log's lock holder) never waits: a signal handler of its own recording into a full lane would wait for itself. */
static void test_draining_thread_never_waits(void)
{
    tl_stream *s = make(TRACELOG_POLICY_FLUSH, 300000);
    uint64_t n = fill(s);
    tl_stream_thread_drains(1);
    tl_stream_thread_drains(1); /* nested: a second log's lock */
    tl_stream_thread_drains(0);
    uint64_t t0 = tl_clock_mono_ns();
    CHECK_EQ(record(s, n), 0);
    double waited = ms_since(t0);
    CHECK_MSG(waited < 100, "a draining thread waited %.1f ms for room (wait 300 ms)", waited);
    tl_stream_thread_drains(0);
    t0 = tl_clock_mono_ns();
    CHECK_EQ(record(s, n), 0);
    waited = ms_since(t0);
    CHECK_MSG(waited >= 250, "once it no longer drains, it waits again: %.1f ms", waited);
    tl_stream_destroy(s, s->total_size);
}

static void test_no_wait(void)
{
    static const struct {
        uint32_t policy, wait_us;
        const char *what;
    } cases[] = {{TRACELOG_POLICY_FLUSH, 0, "FLUSH, wait 0"},
                 {TRACELOG_POLICY_UNTIL_FULL, 1000000, "UNTIL_FULL"},
                 {TRACELOG_POLICY_LOOP, 1000000, "LOOP"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_test_context("%s", cases[i].what);
        tl_stream *s = make(cases[i].policy, cases[i].wait_us);
        uint64_t n = fill(s);
        uint64_t t0 = tl_clock_mono_ns();
        record(s, n);
        double waited = ms_since(t0);
        CHECK_MSG(waited < 100, "a full lane waited %.1f ms", waited);
        tl_stream_destroy(s, s->total_size);
    }
}

static void test_limits(void)
{
    tl_stream_params p = {.policy = TRACELOG_POLICY_FLUSH, .stream_size = 4096, .max_data = 64, .max_sys_data = 64,
                          .wait_us = TL_MAX_WAIT_US + 1};
    CHECK(tl_stream_create(&p) == NULL);
    tl_stream *s = make(TRACELOG_POLICY_FLUSH, TL_MAX_WAIT_US);
    uint64_t size = tl_stream_bytes(&(tl_stream_params){.policy = TRACELOG_POLICY_FLUSH, .stream_size = 4096,
                                                        .max_data = 64, .max_sys_data = 64, .nlanes = 1});
    CHECK_ERR(tl_stream_check(s, size), 0);
    s->wait_us = TL_MAX_WAIT_US + 1; /* what a process sharing the buffer could write there */
    CHECK_ERR(tl_stream_check(s, size), EINVAL);
    tl_stream_destroy(s, s->total_size);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_times_out_then_off_until_room);
    PT_RUN(test_woken_when_room_is_made);
    PT_RUN(test_stop_ends_the_wait);
    PT_RUN(test_draining_thread_never_waits);
    PT_RUN(test_no_wait);
    PT_RUN(test_limits);
    return pt_finish();
}
