/*
 * <trace.h>'s inline posix_trace_event (issue 27): a program built with the
 * header records, filters and stops as the function does; each argument is
 * evaluated exactly once whether or not the library is called; the function
 * is still there (its address, (posix_trace_event)(...), #undef); the test
 * reads the event word, so a controller attaching to a program whose only
 * trace calls are the inline ones is taken up at its next event. (That no
 * event of one thread is lost while another maps a controller's stream,
 * which the inline test sees as TL_XPROC_POLLING in the word, is
 * test_posix_controller's test_no_event_lost_while_a_stream_is_mapped: its
 * threads record through this header too.)
 */
#define _GNU_SOURCE

#include <stdint.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

#ifndef posix_trace_event
#error "<trace.h> defines posix_trace_event as its inline test with GCC and clang"
#endif

/* ---- arguments with side effects ---------------------------------------- */

static int id_calls, data_calls, len_calls;
static trace_event_id_t the_id;
static uint32_t the_payload;

static trace_event_id_t next_id(void) { return id_calls++, the_id; }
static const void *next_data(void) { return data_calls++, &the_payload; }
static size_t next_len(void) { return len_calls++, sizeof the_payload; }

/* One event through the macro with arguments that count their evaluations: each exactly once. */
static void event_counting(trace_event_id_t id, uint32_t payload)
{
    int i0 = id_calls, d0 = data_calls, l0 = len_calls;
    the_id = id;
    the_payload = payload;
    posix_trace_event(next_id(), next_data(), next_len());
    CHECK_EQ_INT(id_calls - i0, 1);
    CHECK_EQ_INT(data_calls - d0, 1);
    CHECK_EQ_INT(len_calls - l0, 1);
}

/* The payloads of the events of id in the stream (read to the end: without log, read once). */
static size_t payloads_of(trace_id_t trid, trace_event_id_t id, uint32_t *out, size_t max)
{
    pt_events evs = {0};
    CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
    size_t n = 0;
    for (size_t i = 0; i < evs.n; i++) {
        if (evs.ev[i].info.posix_event_id != id)
            continue;
        CHECK_EQ(evs.ev[i].len, sizeof(uint32_t));
        CHECK(evs.ev[i].info.posix_prog_address != NULL);
        if (n < max)
            memcpy(&out[n], evs.ev[i].data, sizeof(uint32_t));
        n++;
    }
    pt_events_free(&evs);
    return n;
}

static void call_after_undef(trace_event_id_t id, uint32_t payload);

static void test_records_filters_stops(void)
{
    trace_event_id_t id, other;
    CHECK_ERR(posix_trace_eventid_open("inline:a", &id), 0);
    CHECK_ERR(posix_trace_eventid_open("inline:b", &other), 0);

    /* No stream: nothing to record, the arguments are still evaluated. */
    event_counting(id, 1);

    trace_id_t trid;
    if (pt_create_started(0, POSIX_TRACE_LOOP, -1, &trid))
        return;
    /* Every way of calling it records: the macro, the function by name, by address, after #undef. */
    void (*by_address)(trace_event_id_t, const void *, size_t) = &posix_trace_event;
    uint32_t v = 10;
    posix_trace_event(id, &v, sizeof v);
    event_counting(id, 11);
    v = 12;
    (posix_trace_event)(id, &v, sizeof v);
    v = 13;
    by_address(id, &v, sizeof v);
    call_after_undef(id, 14);
    uint32_t got[8];
    if (CHECK_EQ(payloads_of(trid, id, got, 8), 5))
        for (uint32_t i = 0; i < 5; i++)
            CHECK_EQ(got[i], 10 + i);

    /* Filtered out: not recorded (and the arguments evaluated once); another id still is. */
    trace_event_set_t set = pt_set_of(id);
    CHECK_ERR(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET), 0);
    event_counting(id, 20);
    v = 21;
    posix_trace_event(other, &v, sizeof v);
    pt_events evs = {0};
    CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
    CHECK_EQ(pt_count(&evs, id), 0);
    CHECK_EQ(pt_count(&evs, other), 1);
    pt_events_free(&evs);
    posix_trace_eventset_empty(&set);
    CHECK_ERR(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET), 0);

    /* Stopped: not recorded, and the event word the inline test reads first is 0, as with no
       stream (the summary is not even read); started again: recorded. */
    CHECK_ERR(posix_trace_stop(trid), 0);
    CHECK_EQ(__atomic_load_n(tracelog_event_gate.__word, __ATOMIC_RELAXED), 0);
    event_counting(id, 30);
    CHECK_ERR(posix_trace_start(trid), 0);
    CHECK(__atomic_load_n(tracelog_event_gate.__word, __ATOMIC_RELAXED) != 0);
    event_counting(id, 31);
    if (CHECK_EQ(payloads_of(trid, id, got, 8), 1))
        CHECK_EQ(got[0], 31);
    pt_shutdown(trid);

    /* No stream again: the event word the inline test reads is 0 (the call is skipped). */
    CHECK_EQ(__atomic_load_n(tracelog_event_gate.__word, __ATOMIC_RELAXED), 0);
    event_counting(id, 40);
}

/* ---- a controller attaching to a program that only makes inline calls ------ */

/* Opens its name, says its id, then records (inline) until its parent sends 'q'. */
static void traced_main(int up, int down) __attribute__((noreturn));
static void traced_main(int up, int down)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("inline:traced", &id))
        _exit(2);
    xp_send_id(up, id);
    for (uint32_t seq = 0;; seq++) {
        posix_trace_event(id, &seq, sizeof seq);
        if (seq % 1024 == 0 && xp_recv(down, 0) == 'q')
            _exit(0);
    }
}

/* The payloads of the first two events of id the stream holds, within 10 s: the child never stops
   recording, so reading to the end (payloads_of) could take as long as the child keeps ahead. */
static size_t first_two(trace_id_t trid, trace_event_id_t id, uint32_t got[2])
{
    size_t n = 0;
    uint64_t deadline = xp_now_ns() + 10000000000ull;
    while (n < 2 && xp_now_ns() < deadline) {
        struct posix_trace_event_info info;
        uint32_t data = 0;
        size_t len = 0;
        int unavailable = 0;
        if (!CHECK_ERR(posix_trace_trygetnext_event(trid, &info, &data, sizeof data, &len, &unavailable), 0))
            break;
        if (unavailable)
            usleep(1000);
        else if (info.posix_event_id == id && CHECK_EQ(len, sizeof data))
            got[n++] = data;
    }
    return n;
}

static void test_controller_attaches(void)
{
    xp_child c;
    CHECK_ERR(xp_child_start(&c, traced_main), 0);
    trace_id_t trid;
    if (pt_create_started(c.pid, POSIX_TRACE_LOOP, -1, &trid) == 0) {
        /* The announcement reaches the traced process through its event word: its next events are ours. */
        uint32_t got[2];
        size_t n = first_two(trid, c.id, got);
        CHECK_MSG(n == 2, "the traced process's events reached the controller's stream (%zu)", n);
        if (n == 2)
            CHECK(got[1] > got[0]);
        pt_shutdown(trid);
    }
    xp_send(c.down[1], 'q');
    CHECK_EQ_INT(xp_wait(c.pid), 0);
    xp_child_close(&c);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_records_filters_stops);
    PT_RUN(test_controller_attaches);
    return pt_finish();
}

/* Last in the file: from here on the name is the function's. */
#undef posix_trace_event
static void call_after_undef(trace_event_id_t id, uint32_t payload) { posix_trace_event(id, &payload, sizeof payload); }
