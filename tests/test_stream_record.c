/*
 * tl_stream_record (stream/produce.h) on each of its paths, read back by a
 * consumer: the straight line (room by the tail last seen, no pad, no loss
 * to mark, the CAS won) and the reservation out of line
 * (tl_stream_reserve_slow): a pad at the lane's end (one long enough to be
 * a record, and one under 16 bytes, skipped without one), a loss marked
 * before the next event, producers that lose the CAS to each other, and a
 * LOOP lane overwriting its oldest records. Every event must come back
 * once, in its thread's order, with its payload, and timestamps never go
 * back.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "stream/produce.h"
#include "stream/consumer_internal.h"
#include "stream/layout.h"
#include "tl_test.h"

enum { OVERFLOW_ID = 4, RESUME_ID = 5, EVENT_ID = 9 };

static tl_stream *started(uint32_t policy, uint64_t lane_bytes)
{
    tl_stream_params p = {.policy = policy,
                          .stream_size = lane_bytes,
                          .max_data = 64,
                          .max_sys_data = 64,
                          .nlanes = 1,
                          .markers = {OVERFLOW_ID, RESUME_ID, 3, 2}};
    tl_stream *s = tl_stream_create(&p);
    if (!s)
        TL_DIE("tl_stream_create");
    tl_stream_start(s, NULL);
    return s;
}

/* The payload of event `seq` of thread `thread`: both numbers first, then bytes derived from seq. */
static void payload_of(uint8_t *p, uint32_t thread, uint32_t seq, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++)
        p[i] = (uint8_t)(seq * 7 + i);
    memcpy(p, &thread, len < 4 ? len : 4);
    if (len >= 8)
        memcpy(p + 4, &seq, 4);
}

static int record(tl_stream *s, uint32_t thread, uint32_t seq, uint32_t len)
{
    uint8_t payload[64];
    payload_of(payload, thread, seq, len);
    tracelog_event ev = {.event_id = EVENT_ID, .tid = thread, .payload_len = len, .payload = payload};
    return tl_stream_record(s, 0, &ev);
}

static int payload_ok(const tracelog_event *ev, uint32_t thread, uint32_t seq, uint32_t len)
{
    uint8_t want[64];
    payload_of(want, thread, seq, len);
    return ev->payload_len == len && ev->tid == thread && memcmp(ev->payload, want, len) == 0;
}

/* What a drain saw: the events (in delivery order) and the markers. */
typedef struct drained {
    uint32_t thread[16384], seq[16384];
    size_t n, overflow, resume;
    size_t overflow_after; /* events delivered before the first OVERFLOW */
    int bad_ts, bad_payload;
} drained;

static tl_consumer *consume(tl_stream *s)
{
    tl_consumer *c = tl_consumer_new(s);
    if (!c)
        TL_DIE("tl_consumer_new");
    return c;
}

/* Takes everything the stream holds; len_of(seq) gives event seq's payload length, which carries seq. */
static void drain(tl_consumer *c, drained *d, uint32_t (*len_of)(uint32_t))
{
    tracelog_event ev;
    uint64_t last_ts = 0;
    while (tl_consumer_take_wait(c, &ev) == TL_TAKE_EVENT) {
        if (ev.event_id == OVERFLOW_ID) {
            if (!d->overflow++)
                d->overflow_after = d->n;
            continue;
        }
        if (ev.event_id == RESUME_ID) {
            d->resume++;
            continue;
        }
        if (ev.timestamp_ns < last_ts)
            d->bad_ts++;
        last_ts = ev.timestamp_ns;
        uint32_t thread = 0, seq = 0;
        memcpy(&thread, ev.payload, ev.payload_len < 4 ? ev.payload_len : 4);
        if (ev.payload_len >= 8)
            memcpy(&seq, (const uint8_t *)ev.payload + 4, 4);
        if (ev.event_id != EVENT_ID || (len_of && !payload_ok(&ev, thread, seq, len_of(seq))))
            d->bad_payload++;
        if (d->n < 16384) {
            d->thread[d->n] = thread;
            d->seq[d->n] = seq;
        }
        d->n++;
    }
}

/* Records of 56, 72 and 88 bytes (48-byte header + data) in an order that does not repeat with a 4 KiB
   lane: its end is left with remainders under 16 bytes (no pad record) and over (a pad record). */
static uint32_t varied_len(uint32_t seq) { return (uint32_t[]){8, 24, 40, 8, 24, 8, 40}[seq % 7]; }

static void test_pads_at_the_lane_end(void)
{
    tl_stream *s = started(TRACELOG_POLICY_FLUSH, 4096);
    tl_consumer *c = NULL;
    c = consume(s);
    static drained d;
    memset(&d, 0, sizeof d);
    uint32_t seq = 0, recorded = 0;
    for (int round = 0; round < 60; round++) { /* about 40 laps of the lane */
        for (int i = 0; i < 40; i++, seq++)
            recorded += (uint32_t)record(s, 0, seq, varied_len(seq));
        drain(c, &d, varied_len);
    }
    CHECK_EQ(recorded, seq);
    CHECK_EQ(d.n, seq);
    CHECK_EQ(d.overflow, 0);
    CHECK_EQ(d.bad_ts, 0);
    CHECK_EQ(d.bad_payload, 0);
    size_t out_of_order = 0;
    for (size_t i = 0; i < d.n && i < 16384; i++)
        out_of_order += d.seq[i] != i;
    CHECK_EQ(out_of_order, 0);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
}

static uint32_t len16(uint32_t seq)
{
    (void)seq;
    return 16;
}

static void test_loss_marked_before_the_next_event(void)
{
    tl_stream *s = started(TRACELOG_POLICY_FLUSH, 4096); /* 64 records of 16 data bytes */
    tl_consumer *c = NULL;
    c = consume(s);
    uint32_t kept = 0;
    for (uint32_t seq = 0; seq < 100; seq++)
        kept += (uint32_t)record(s, 0, seq, 16);
    CHECK_EQ(kept, 64);
    static drained d;
    memset(&d, 0, sizeof d);
    drain(c, &d, len16);
    for (uint32_t seq = 100; seq < 105; seq++)
        CHECK(record(s, 0, seq, 16));
    drain(c, &d, len16);
    CHECK_EQ(d.n, 69);
    CHECK_EQ(d.overflow, 1);
    CHECK_EQ(d.resume, 1);
    CHECK_EQ(d.overflow_after, 64); /* after what was kept, before the next event */
    CHECK_EQ(d.seq[63], 63);
    CHECK_EQ(d.seq[64], 100);
    CHECK_EQ(d.seq[68], 104);
    CHECK_EQ(d.bad_payload, 0);
    CHECK_EQ(d.bad_ts, 0);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
}

#define THREADS 4
#define PER_THREAD 3000

typedef struct racer {
    pthread_t th;
    tl_stream *s;
    uint32_t index, recorded;
    pthread_barrier_t *go;
} racer;

static void *race(void *arg)
{
    racer *r = arg;
    pthread_barrier_wait(r->go);
    for (uint32_t seq = 0; seq < PER_THREAD; seq++)
        r->recorded += (uint32_t)record(r->s, r->index, seq, 16);
    return NULL;
}

static void test_producers_racing_for_one_lane(void)
{
    tl_stream *s = started(TRACELOG_POLICY_FLUSH, 1u << 20); /* room for all: 12000 records of 64 bytes */
    pthread_barrier_t go;
    pthread_barrier_init(&go, NULL, THREADS);
    racer r[THREADS];
    for (uint32_t i = 0; i < THREADS; i++) {
        r[i] = (racer){.s = s, .index = i + 1, .go = &go};
        if (pthread_create(&r[i].th, NULL, race, &r[i]))
            TL_DIE("pthread_create");
    }
    uint32_t recorded = 0;
    for (uint32_t i = 0; i < THREADS; i++) {
        pthread_join(r[i].th, NULL);
        recorded += r[i].recorded;
    }
    pthread_barrier_destroy(&go);
    CHECK_EQ(recorded, THREADS * PER_THREAD);
    tl_consumer *c = NULL;
    c = consume(s);
    static drained d;
    memset(&d, 0, sizeof d);
    drain(c, &d, len16);
    CHECK_EQ(d.n, THREADS * PER_THREAD);
    CHECK_EQ(d.overflow, 0);
    CHECK_EQ(d.bad_payload, 0);
    CHECK_EQ(d.bad_ts, 0);
    uint32_t next[THREADS + 1] = {0};
    size_t misplaced = 0;
    for (size_t i = 0; i < d.n; i++) {
        uint32_t t = d.thread[i];
        if (t < 1 || t > THREADS || d.seq[i] != next[t]++)
            misplaced++;
    }
    CHECK_EQ(misplaced, 0);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
}

static void test_loop_overwrites_the_oldest(void)
{
    tl_stream *s = started(TRACELOG_POLICY_LOOP, 4096);
    for (uint32_t seq = 0; seq < 1000; seq++)
        CHECK(record(s, 0, seq, 16));
    tl_consumer *c = NULL;
    c = consume(s);
    static drained d;
    memset(&d, 0, sizeof d);
    drain(c, &d, len16);
    CHECK_MSG(d.n >= 60 && d.n <= 64, "%zu events kept of a lane of 64 records", d.n);
    size_t not_newest = 0;
    for (size_t i = 0; i < d.n; i++)
        not_newest += d.seq[i] != 1000 - d.n + i;
    CHECK_EQ(not_newest, 0);
    CHECK_EQ(d.bad_payload, 0);
    CHECK_EQ(d.bad_ts, 0);
    CHECK_EQ(tl_consumer_overruns(c), 1000 - d.n);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
}

/* The stream's clock now, in ns, as the consumer converts the events' stamps. */
static uint64_t now_ns(const tl_consumer *c, const tl_stream *s) { return tl_clock_ns(tl_consumer_clock(c), tl_stream_stamp(s)); }

/* 2 ms: time passes between two records, so their timestamps differ (only ever by more, under load). */
static void pause_2ms(void)
{
    struct timespec ms = {0, 2000000};
    nanosleep(&ms, NULL);
}

/* What a take gave: the id, the time, the event's seq (events only). */
typedef struct taken {
    uint32_t id, seq;
    uint64_t ts;
} taken;

/* Takes up to max events and markers, in order; returns how many. */
static size_t take_all(tl_consumer *c, taken *out, size_t max)
{
    size_t n = 0;
    tracelog_event ev;
    while (n < max && tl_consumer_take_wait(c, &ev) == TL_TAKE_EVENT) {
        out[n] = (taken){.id = ev.event_id, .ts = ev.timestamp_ns};
        if (ev.event_id == EVENT_ID && ev.payload_len >= 8)
            memcpy(&out[n].seq, (const uint8_t *)ev.payload + 4, 4);
        n++;
    }
    return n;
}

/*
 * OVERFLOW carries the time of the first event lost (where the loss
 * starts), RESUME that of the next event kept: three events lost 2 ms
 * apart, the first bracketed by the clock read just before and after it,
 * and the next event recorded 2 ms after the last loss. A FLUSH lane that
 * found no room (the loss record's time), the same loss with no event
 * after it (tl_consumer_take_unmarked_loss), and a LOOP lane that
 * overwrote its oldest events. Stamped with the next event's time, or with
 * the last lost one's, OVERFLOW is later than the bracket.
 */
static void test_overflow_stamped_with_the_first_loss(void)
{
    static taken t[200];
    for (int marked = 1; marked >= 0; marked--) {
        tl_test_context("FLUSH, %s", marked ? "an event after the loss" : "nothing after the loss");
        tl_stream *s = started(TRACELOG_POLICY_FLUSH, 4096); /* 64 records of 16 data bytes */
        tl_consumer *c = NULL;
        c = consume(s);
        for (uint32_t seq = 0; seq < 64; seq++)
            CHECK(record(s, 0, seq, 16));
        uint64_t before = now_ns(c, s);
        CHECK(!record(s, 0, 64, 16)); /* the first lost */
        uint64_t after = now_ns(c, s);
        for (uint32_t seq = 65; seq < 67; seq++) {
            pause_2ms();
            CHECK(!record(s, 0, seq, 16));
        }
        CHECK_EQ(take_all(c, t, 200), 64);
        pause_2ms();
        if (marked) {
            CHECK(record(s, 0, 67, 16));
            size_t n = take_all(c, t, 200);
            if (CHECK_EQ(n, 3) && CHECK_EQ(t[0].id, OVERFLOW_ID) && CHECK_EQ(t[1].id, RESUME_ID) &&
                CHECK_EQ(t[2].id, EVENT_ID) && CHECK_EQ(t[2].seq, 67)) {
                CHECK_MSG(t[0].ts >= before && t[0].ts <= after, "OVERFLOW at %llu, the first loss in %llu..%llu",
                          (unsigned long long)t[0].ts, (unsigned long long)before, (unsigned long long)after);
                CHECK_EQ(t[1].ts, t[2].ts);
                CHECK(t[2].ts > after);
            }
        } else {
            tracelog_event ev;
            if (CHECK(tl_consumer_take_unmarked_loss(c, &ev)) && CHECK_EQ(ev.event_id, OVERFLOW_ID))
                CHECK_MSG(ev.timestamp_ns >= before && ev.timestamp_ns <= after,
                          "OVERFLOW at %llu, the first loss in %llu..%llu", (unsigned long long)ev.timestamp_ns,
                          (unsigned long long)before, (unsigned long long)after);
            CHECK(!tl_consumer_take_unmarked_loss(c, &ev));
        }
        tl_consumer_free(c);
        tl_stream_destroy(s, s->total_size);
    }

    tl_test_context("LOOP");
    tl_stream *s = started(TRACELOG_POLICY_LOOP, 4096);
    tl_consumer *c = NULL;
    c = consume(s);
    uint64_t before = now_ns(c, s);
    CHECK(record(s, 0, 0, 16)); /* the first overwritten */
    uint64_t after = now_ns(c, s);
    pause_2ms();
    for (uint32_t seq = 1; seq < 64; seq++)
        CHECK(record(s, 0, seq, 16));
    for (uint32_t seq = 64; seq < 67; seq++) { /* each overwrites the oldest */
        pause_2ms();
        CHECK(record(s, 0, seq, 16));
    }
    size_t n = take_all(c, t, 200);
    if (CHECK(n >= 4) && CHECK_EQ(t[0].id, OVERFLOW_ID) && CHECK_EQ(t[1].id, RESUME_ID) &&
        CHECK_EQ(t[2].id, EVENT_ID)) {
        CHECK_MSG(t[0].ts >= before && t[0].ts <= after, "OVERFLOW at %llu, the first loss in %llu..%llu",
                  (unsigned long long)t[0].ts, (unsigned long long)before, (unsigned long long)after);
        CHECK_EQ(t[1].ts, t[2].ts);
        CHECK(t[2].ts > after);
        CHECK_EQ(t[n - 1].seq, 66);
    }
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
    tl_test_context(NULL);
}

int main(void)
{
    TL_TEST_RUN(test_pads_at_the_lane_end);
    TL_TEST_RUN(test_loss_marked_before_the_next_event);
    TL_TEST_RUN(test_producers_racing_for_one_lane);
    TL_TEST_RUN(test_loop_overwrites_the_oldest);
    TL_TEST_RUN(test_overflow_stamped_with_the_first_loss);
    return tl_test_finish();
}
