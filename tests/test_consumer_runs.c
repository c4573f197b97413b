/*
 * tl_consumer_take_run hands out exactly what the takes it replaces would:
 * the same events, in the same order, with the same fields, payloads,
 * loss markers and counts. Two copies of one shared buffer (a FLUSH stream
 * laid out in caller memory, as a controller's) are drained, one by
 * tl_consumer_take_wait alone, the other by takes each followed by a run of
 * up to 1, 2, 7 or 63 events, and the sequences compared event by event.
 * The buffers hold: one lane only (long runs), 2 and 4 lanes filled in a
 * random order (runs cut by other lanes' events), system events, a FLUSH
 * lane that lost events (its loss record ends a run, OVERFLOW and RESUME
 * come out where they did), and records scribbled over (garbage, dropped
 * and counted). A run that did not stop at another lane's earlier event,
 * or at a loss, fails here.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "posix_helpers.h"
#include "stream/consumer_internal.h"
#include "stream/layout.h"
#include "stream/produce.h"

#define MAX_EVENTS 20000

typedef struct taken {
    tracelog_event ev[MAX_EVENTS];
    uint8_t data[MAX_EVENTS][64];
    uint32_t n, first_part; /* events, those taken before the drain recorded more */
    uint64_t garbage, overruns;
} taken;

static taken by_takes, by_runs;

static void keep(taken *t, const tracelog_event *ev)
{
    if (!CHECK(t->n < MAX_EVENTS) || !CHECK(ev->payload_len <= 64))
        return;
    t->ev[t->n] = *ev;
    if (ev->payload_len)
        memcpy(t->data[t->n], ev->payload, ev->payload_len);
    t->ev[t->n].payload = t->data[t->n];
    t->n++;
}

static void fill(tl_stream *s, uint32_t nlanes, uint32_t n, uint64_t seed);

/*
 * Drains a copy of the buffer: takes alone (run 0) or each take and a run
 * of up to `run`; then, when more > 0, records `more` events into the copy
 * (2 lanes) and drains again: a lane that lost events or held garbage in the
 * first part marks it before its next event.
 */
static void drain(const void *buffer, uint64_t size, uint32_t run, uint32_t more, taken *t)
{
    void *copy = tl_test_zeroed_shared(size);
    memcpy(copy, buffer, size);
    tl_consumer *c = NULL;
    memset(t, 0, sizeof *t);
    if (!CHECK_ERR(tl_consumer_new_shared(copy, size, &c), 0)) {
        munmap(copy, size);
        return;
    }
    tracelog_event ev[64];
    for (int part = 0; part < 2; part++) {
        for (int calls = 0; calls < 4 * MAX_EVENTS && tl_consumer_take(c, &ev[0], 1) == TL_TAKE_EVENT; calls++) {
            uint32_t got = 1 + (run ? tl_consumer_take_run(c, ev + 1, run) : 0);
            CHECK(got <= run + 1);
            for (uint32_t k = 0; k < got; k++)
                keep(t, &ev[k]);
        }
        if (!part)
            t->first_part = t->n;
        if (!more)
            break;
        fill(copy, 2, more, 99);
    }
    while (tl_consumer_take_unmarked_loss(c, &ev[0]))
        keep(t, &ev[0]);
    t->garbage = c->garbage;
    t->overruns = tl_consumer_overruns(c);
    tl_consumer_free(c);
    munmap(copy, size);
}

/* The same event; their timestamps too when both were recorded before the drains began (the first part). */
static int same_event(const tracelog_event *a, const tracelog_event *b, int stamps)
{
    return a->event_id == b->event_id && (!stamps || a->timestamp_ns == b->timestamp_ns) && a->pid == b->pid &&
           a->kernel_tid == b->kernel_tid && a->tid == b->tid && a->address == b->address &&
           a->truncation == b->truncation && a->payload_len == b->payload_len &&
           !memcmp(a->payload, b->payload, a->payload_len);
}

/* Every run bound gives what the takes gave; returns how many events the takes gave. */
static uint32_t check_runs_match(const char *what, const void *buffer, uint64_t size, uint32_t more)
{
    static const uint32_t runs[] = {1, 2, 7, 63};
    drain(buffer, size, 0, more, &by_takes);
    for (size_t r = 0; r < sizeof runs / sizeof runs[0]; r++) {
        drain(buffer, size, runs[r], more, &by_runs);
        uint32_t first_diff = by_takes.n;
        for (uint32_t k = 0; k < by_takes.n && k < by_runs.n && first_diff == by_takes.n; k++)
            if (!same_event(&by_takes.ev[k], &by_runs.ev[k], k < by_takes.first_part)) 
                first_diff = k;
        if (!CHECK(by_runs.n == by_takes.n && first_diff == by_takes.n))
            fprintf(stderr, "  %s, runs of %u: %u events against %u, first difference at %u\n", what, runs[r],
                    by_runs.n, by_takes.n, first_diff);
        CHECK_EQ(by_runs.garbage, by_takes.garbage);
        CHECK_EQ(by_runs.overruns, by_takes.overruns);
    }
    return by_takes.n;
}

static tl_stream *made(uint32_t nlanes, uint64_t lane_bytes, uint64_t *size)
{
    tl_stream_params p = {.policy = TRACELOG_POLICY_FLUSH,
                          .stream_size = lane_bytes * nlanes,
                          .max_data = 64,
                          .max_sys_data = 64,
                          .nlanes = nlanes,
                          .markers = {4, 5, 3, 2}};
    *size = tl_stream_bytes(&p);
    tl_stream *s = tl_stream_create_in(tl_test_zeroed_shared(*size), *size, &p);
    if (CHECK(s != NULL))
        tl_stream_start(s, NULL);
    return s;
}

/* n events in lanes chosen at random (or lane 0 alone), payload (lane, seq, filler); a system event now and then. */
static void fill(tl_stream *s, uint32_t nlanes, uint32_t n, uint64_t seed)
{
    uint64_t x = seed;
    uint32_t seq[64] = {0};
    for (uint32_t k = 0; k < n; k++) {
        uint32_t lane = (uint32_t)(tl_test_rng_next(&x) % nlanes);
        uint32_t v[3] = {lane, seq[lane]++, (uint32_t)tl_test_rng_next(&x)};
        tracelog_event ev = {.event_id = 100 + lane,
                             .pid = 4242,
                             .kernel_tid = 4242 + lane,
                             .tid = 0x7f0000001000ull + lane * 0x10000,
                             .address = 0x55d0c4a01234ull + k % 3,
                             .payload_len = 4 + (uint32_t)(tl_test_rng_next(&x) % 9),
                             .payload = v};
        tl_stream_record(s, lane, &ev); /* a full FLUSH lane drops it: a loss the consumer marks */
        if (tl_test_rng_next(&x) % 97 == 0) {
            tracelog_event sys = {.event_id = 6, .pid = 4242, .payload_len = sizeof k, .payload = &k};
            CHECK(tl_stream_record_system(s, &sys));
        }
    }
}

static void test_one_lane(void)
{
    uint64_t size;
    tl_stream *s = made(1, 1u << 20, &size);
    if (!s)
        return;
    fill(s, 1, 5000, 1);
    CHECK(check_runs_match("one lane", s, size, 0) >= 5000);
    munmap(s, size);
}

static void test_lanes_interleaved(void)
{
    for (uint32_t nlanes = 2; nlanes <= 4; nlanes += 2) {
        uint64_t size;
        tl_stream *s = made(nlanes, 1u << 20, &size);
        if (!s)
            return;
        fill(s, nlanes, 8000, nlanes);
        CHECK(check_runs_match("lanes interleaved", s, size, 0) >= 8000);
        munmap(s, size);
    }
}

/*
 * Lanes of 4 KiB that fill up, then, drained, take more: each lane's loss
 * record, OVERFLOW and RESUME in the runs' output as in the takes'.
 */
static void test_lost_events(void)
{
    uint64_t size;
    tl_stream *s = made(2, 4096, &size);
    if (!s)
        return;
    fill(s, 2, 400, 7);
    uint32_t n = check_runs_match("lost events", s, size, 40); /* 40 fit in the lanes drained */
    uint32_t overflows = 0, resumes = 0;
    for (uint32_t k = by_takes.first_part; k < by_takes.n; k++) {
        overflows += by_takes.ev[k].event_id == 4;
        resumes += by_takes.ev[k].event_id == 5;
    }
    CHECK(n > by_takes.first_part && by_takes.first_part < 400);
    CHECK_EQ(overflows, 2); /* both lanes lost events before the second part's first */
    CHECK_EQ(resumes, 2);
    CHECK(by_takes.overruns > 0);
    munmap(s, size);
}

/*
 * A record of each lane scribbled over: the rest of what the lane held is
 * dropped and counted, and its next event, recorded after, comes with
 * OVERFLOW and RESUME, in runs as in takes.
 */
static void test_garbage(void)
{
    uint64_t size;
    tl_stream *s = made(2, 1u << 20, &size);
    if (!s)
        return;
    fill(s, 2, 3000, 11);
    tl_consumer *c = NULL;
    if (CHECK_ERR(tl_consumer_new_shared(s, size, &c), 0)) {
        uint64_t pos = 0;
        for (int k = 0; k < 40; k++) /* past lane 0's first 40 records */
            pos += tl_rec_bytes(((tl_rec *)(c->data[0] + pos))->kind_size);
        ((tl_rec *)(c->data[0] + pos))->kind_size = 16 | TL_KIND_EVENT << 28; /* shorter than a header */
        pos = 0;
        for (int k = 0; k < 100; k++)
            pos += tl_rec_bytes(((tl_rec *)(c->data[1] + pos))->kind_size);
        ((tl_rec *)(c->data[1] + pos))->kind_size = tl_rec_size(0) | 1 | TL_KIND_EVENT << 28; /* data its size cannot hold */
        tl_consumer_free(c);
    }
    check_runs_match("garbage", s, size, 300);
    uint32_t overflows = 0;
    for (uint32_t k = by_takes.first_part; k < by_takes.n; k++)
        overflows += by_takes.ev[k].event_id == 4;
    CHECK_EQ(by_takes.garbage, 2);
    CHECK_EQ(overflows, 2);
    munmap(s, size);
}

/*
 * Every lane a run read from gives its room back at the next take, as the
 * lane of the last event does: two lanes strictly alternating, taken one
 * event a take and one a run, so that every run ends in lane 1. Lane 0's
 * room waited for the batch's end (its producers, in a FLUSH stream, for
 * the flusher: test_posix_log's merge-set drain under ASan lost events).
 */
static void test_runs_release_every_lane(void)
{
    uint64_t size;
    tl_stream *s = made(2, 1u << 16, &size);
    if (!s)
        return;
    for (uint32_t k = 0; k < 1600; k++) {
        uint32_t v = k;
        tracelog_event ev = {.event_id = 100, .payload_len = sizeof v, .payload = &v};
        CHECK(tl_stream_record(s, k & 1, &ev));
    }
    tl_consumer *c = NULL;
    if (!CHECK_ERR(tl_consumer_new_shared(s, size, &c), 0))
        return;
    uint64_t bound = TL_CONSUMER_RELEASE < c->cap[0] / 8 ? TL_CONSUMER_RELEASE : c->cap[0] / 8;
    bound += 2 * tl_rec_size(sizeof(uint32_t)); /* what the last take and its run read after the release */
    uint64_t most = 0, events = 0;
    tracelog_event ev[2];
    while (tl_consumer_take(c, &ev[0], 1) == TL_TAKE_EVENT) {
        events += 1 + tl_consumer_take_run(c, ev + 1, 1);
        for (uint32_t i = 0; i < 2; i++)
            most = c->pos[i] - c->pub[i] > most ? c->pos[i] - c->pub[i] : most;
    }
    CHECK_EQ(events, 1600);
    CHECK_MSG(most <= bound, "a lane held %llu bytes read and not given back (at most %llu)", (unsigned long long)most,
              (unsigned long long)bound);
    tl_consumer_free(c);
    munmap(s, size);
}

int main(void)
{
    PT_RUN(test_runs_release_every_lane);
    PT_RUN(test_one_lane);
    PT_RUN(test_lanes_interleaved);
    PT_RUN(test_lost_events);
    PT_RUN(test_garbage);
    return pt_finish();
}
