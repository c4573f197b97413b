/*
 * The errors of a flusher split over groups of lanes (recorder/groups.h): a
 * cycle returns the writer's first error, the set's (a chunk that could not
 * be written) before any group's, and within a group the first of its
 * errors, whatever came after it; a group without error never hides
 * another's. Each group takes its events anyway (the stream must not fill
 * up behind a dead log).
 *
 * The errors are made without timing: an event larger than the writer's
 * chunk (TRACELOG_E_INVAL from the group's append), and a writer whose
 * output went bad before the cycle (its sticky TRACELOG_E_IO, which the
 * group meets when it tells the writer a new thread). A group that met
 * INVAL and then IO must report INVAL; one that kept its last error said IO.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recorder/groups.h"
#include "stream/produce.h"
#include "stream/consumer.h"
#include "stream/layout.h"
#include "tl_test.h"

enum { BIG = 8000, LANES = 2 };

typedef struct rig {
    tl_stream *s;
    tl_consumer *model;
    tracelog_writer *w;
    int fd;
    tl_groups *gs;
    tracelog_status io; /* the writer's error once its output went bad */
} rig;

/* A FLUSH stream of two lanes of stream_size bytes, a writer of chunk_size chunks, and its groups: one per lane. */
static void rig_open_sized(rig *r, uint64_t stream_size, uint32_t chunk_size)
{
    memset(r, 0, sizeof *r);
    tl_stream_params p = {.policy = TRACELOG_POLICY_FLUSH,
                          .stream_size = stream_size,
                          .max_data = 16u << 10,
                          .max_sys_data = 64,
                          .nlanes = LANES,
                          .markers = {4, 5, 3, 2}};
    r->s = tl_stream_create(&p);
    if (!r->s)
        TL_DIE("tl_stream_create");
    tl_stream_start(r->s, NULL);
    if (!(r->model = tl_consumer_new(r->s)))
        TL_DIE("tl_consumer_init");
    r->fd = tl_test_tmpfd();
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.chunk_size = chunk_size;
    r->w = tl_test_new_writer(r->fd, &o);
    int err;
    r->gs = tl_groups_open(r->model, NULL, r->w, &err);
    CHECK_EQ_INT(err, 0);
    if (!r->gs)
        TL_DIE("tl_groups_open gave no groups for a stream of %d lanes", LANES);
}

/* Lanes of 64 KiB, chunks of 4 KiB: the errors' rig. */
static void rig_open(rig *r) { rig_open_sized(r, 1u << 16, 4096); }

/* The writer's output goes bad (/dev/full under its fd): a flush fails, and the error sticks. */
static void break_output(rig *r)
{
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (full < 0 || dup2(full, r->fd) < 0)
        TL_DIE("/dev/full");
    close(full);
    uint32_t v = 1;
    tracelog_event ev = {.timestamp_ns = 1, .event_id = 40, .payload_len = sizeof v, .payload = &v};
    CHECK_STATUS(tracelog_writer_append(r->w, &ev), TRACELOG_OK);
    r->io = tracelog_writer_flush(r->w);
    CHECK(r->io != TRACELOG_OK && r->io != TRACELOG_E_INVAL);
}

/* Closes the groups and the writer: the writer's status. */
static tracelog_status rig_close_writer(rig *r)
{
    tl_groups_close(r->gs);
    tracelog_error err;
    return tracelog_writer_close(r->w, &err);
}

static void rig_free(rig *r)
{
    tl_consumer_free(r->model);
    tl_stream_destroy(r->s, r->s->total_size);
    close(r->fd);
}

static void rig_close(rig *r)
{
    rig_close_writer(r); /* its error is the test's doing */
    rig_free(r);
}

/* Closes the groups and the writer (no error expected), reads the log back (n events, whole), frees the rest. */
static void rig_finish(rig *r, tl_test_readout *out, size_t n)
{
    CHECK_STATUS(rig_close_writer(r), TRACELOG_OK);
    tl_test_read_fd(r->fd, NULL, out);
    CHECK_STATUS(out->next_status, TRACELOG_END);
    CHECK_EQ(out->events.n, n);
    rig_free(r);
}

/* Records into lane `lane` one event of `len` bytes, as thread `ktid`. */
static void record(rig *r, uint32_t lane, uint32_t len, uint64_t ktid)
{
    static uint8_t payload[BIG];
    tracelog_event ev = {.event_id = 40, .pid = 1, .tid = 100 + ktid, .kernel_tid = ktid, .payload_len = len,
                         .payload = payload};
    CHECK(tl_stream_record(r->s, lane, &ev));
}

/* One cycle: the status it returns, with every event recorded taken. */
static tracelog_status cycle(rig *r, uint64_t want_taken)
{
    uint64_t taken, last_ts;
    int more, too_big;
    tracelog_status st = tl_groups_cycle(r->gs, &taken, &last_ts, &more, &too_big);
    CHECK_EQ(taken, want_taken);
    CHECK_EQ_INT(too_big, 0);
    return st;
}

/*
 * One group, two errors: its first event too large for a chunk (INVAL),
 * then, the writer's output gone bad, an event of a new thread (the
 * writer's IO error). The first is kept.
 */
static void test_group_keeps_its_first_error(void)
{
    rig r;
    rig_open(&r);
    break_output(&r);
    record(&r, 0, BIG, 7);
    record(&r, 0, 16, 8);
    record(&r, 0, 16, 9);
    CHECK_STATUS(cycle(&r, 3), TRACELOG_E_INVAL);
    /* The other way round: the IO error first, then INVAL. */
    record(&r, 1, 16, 10);
    record(&r, 1, BIG, 11);
    CHECK_STATUS(cycle(&r, 2), r.io);
    rig_close(&r);
}

/* Two groups, one error: the group without error, before or after it, does not hide it. */
static void test_no_group_hides_another_error(void)
{
    for (uint32_t bad = 0; bad < LANES; bad++) {
        tl_test_context("the error in lane %u's group", bad);
        rig r;
        rig_open(&r);
        record(&r, bad, BIG, 7);
        record(&r, 1 - bad, 16, 8);
        CHECK_STATUS(cycle(&r, 2), TRACELOG_E_INVAL);
        rig_close(&r);
    }
    tl_test_context(NULL);
}

/*
 * A chunk the set could not write (the writer's output gone bad; events of
 * no known kernel thread, so no group meets the error before the write) and
 * a group's own error (an event too large): the cycle reports the set's.
 */
static void test_set_error_first(void)
{
    rig r;
    rig_open(&r);
    break_output(&r);
    record(&r, 0, BIG, 0);
    record(&r, 1, 16, 0);
    CHECK_STATUS(cycle(&r, 2), r.io);
    rig_close(&r);
}

/*
 * A flusher allowed one CPU drains by groups too, a group per lane: two
 * threads' events that alternate in time go out as a merge set of two parts,
 * each one lane's run encoded where it lies, and read back in time order.
 * Merged event by event instead, they cost the flusher 2 to 3 times as much
 * (bench/README.md, issue 27: a group per lane).
 */
static void test_one_cpu_a_group_per_lane(void)
{
    cpu_set_t was, one;
    if (sched_getaffinity(0, sizeof was, &was))
        TL_DIE("sched_getaffinity");
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &was)) {
            CPU_SET(c, &one);
            break;
        }
    if (sched_setaffinity(0, sizeof one, &one))
        TL_DIE("sched_setaffinity");
    enum { N = 200 };
    rig r;
    rig_open(&r);
    for (uint32_t i = 0; i < N; i++)
        record(&r, i % 2, 16, 7 + i % 2);
    CHECK_STATUS(cycle(&r, N), TRACELOG_OK);
    tl_test_readout out;
    rig_finish(&r, &out, N);
    CHECK(out.info.merged_chunks >= 1); /* the two lanes' chunks: one merge set */
    for (size_t i = 0; i < out.events.n; i++) {
        tl_test_context("event %zu", i);
        CHECK_EQ(out.events.ev[i].kernel_tid, 7 + i % 2);
        CHECK(i == 0 || out.events.ev[i].timestamp_ns > out.events.ev[i - 1].timestamp_ns);
    }
    tl_test_context(NULL);
    tl_test_readout_free(&out);
    if (sched_setaffinity(0, sizeof was, &was))
        TL_DIE("sched_setaffinity");
}

/*
 * A cycle takes at most 8 MiB of records, since a reader holds a set decoded
 * whole, and says it was cut short; the next one takes the rest and does not
 * (the flusher's drain goes on after a cycle cut short, however little the
 * lanes then hold: recorder/drain.c). Every event reads back, in order.
 */
static void test_window_cut_short(void)
{
    enum { N = 200000 }; /* 64-byte records: 12.8 MB */
    rig r;
    rig_open_sized(&r, 32u << 20, 128u << 10);
    for (uint32_t i = 0; i < N; i++)
        record(&r, 0, 16, 7);
    uint64_t first, second, last_ts;
    int more, too_big;
    CHECK_STATUS(tl_groups_cycle(r.gs, &first, &last_ts, &more, &too_big), TRACELOG_OK);
    CHECK(first > 0 && first < N);
    CHECK(first * 64 <= (8u << 20) + (64u << 10)); /* the window, give or take records of one stamp */
    CHECK_EQ_INT(tl_groups_cut_short(r.gs), 1);
    CHECK_STATUS(tl_groups_cycle(r.gs, &second, &last_ts, &more, &too_big), TRACELOG_OK);
    CHECK_EQ(first + second, N);
    CHECK_EQ_INT(tl_groups_cut_short(r.gs), 0);
    tl_test_readout out;
    rig_finish(&r, &out, N);
    int ordered = 1;
    for (size_t i = 1; i < out.events.n; i++)
        ordered &= out.events.ev[i].timestamp_ns >= out.events.ev[i - 1].timestamp_ns;
    CHECK(ordered);
    tl_test_readout_free(&out);
}

int main(void)
{
    TL_TEST_RUN(test_group_keeps_its_first_error);
    TL_TEST_RUN(test_no_group_hides_another_error);
    TL_TEST_RUN(test_set_error_first);
    TL_TEST_RUN(test_one_cpu_a_group_per_lane);
    TL_TEST_RUN(test_window_cut_short);
    return tl_test_finish();
}
