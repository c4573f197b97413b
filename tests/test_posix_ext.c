/*
 * tracelog's extensions to the POSIX interface (include/tracelog/posix.h):
 * tracelog_trace_sync ("flushes every recorded event to the log ... and then
 * fdatasync()s the log") and tracelog_trace_get_stats (counters of an active
 * stream, which only grow).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev;

/* Events of id ev in the log on fd as it is now (read by the native reader, as another process would). */
static size_t events_on_disk(int fd)
{
    tracelog_reader *r = NULL;
    if (tracelog_reader_open(fd, NULL, &r, NULL) != TRACELOG_OK)
        return (size_t)-1;
    size_t n = 0;
    tracelog_event e;
    while (tracelog_reader_next(r, &e) == TRACELOG_OK)
        n += e.event_id == ev;
    tracelog_reader_close(r);
    return n;
}

/* The events are on disk when tracelog_trace_sync returns, while the stream goes on. */
static void test_sync(void)
{
    static const int policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH};
    for (int p = 0; p < 3; p++) {
        tl_test_context("stream policy %d", policies[p]);
        trace_attr_t a;
        pt_attr(&a, policies[p], 1u << 20, 16);
        posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
        int fd = tl_test_tmpfd();
        trace_id_t t;
        CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
        CHECK_ERR(posix_trace_start(t), 0);
        for (uint32_t i = 0; i < 1000; i++)
            posix_trace_event(ev, &i, sizeof i);
        CHECK_ERR(tracelog_trace_sync(t), 0);
        CHECK_EQ(events_on_disk(fd), 1000);
        for (uint32_t i = 0; i < 10; i++)
            posix_trace_event(ev, &i, sizeof i);
        CHECK_ERR(tracelog_trace_sync(t), 0);
        CHECK_EQ(events_on_disk(fd), 1010);
        struct posix_trace_status_info si;
        CHECK_ERR(posix_trace_get_status(t, &si), 0);
        CHECK_EQ_INT(si.posix_stream_flush_error, 0);
        CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
        pt_shutdown(t);
        CHECK_EQ(events_on_disk(fd), 1010);
        close(fd);
    }
    tl_test_context(NULL);
    /* "Errors: EINVAL (not an active stream with log)". */
    trace_id_t plain;
    CHECK_ERR(posix_trace_create(0, NULL, &plain), 0);
    CHECK_ERR(tracelog_trace_sync(plain), EINVAL);
    pt_shutdown(plain);
    CHECK_ERR(tracelog_trace_sync(plain), EINVAL);
}

static tracelog_trace_stats stats(trace_id_t t)
{
    tracelog_trace_stats s;
    memset(&s, 0xAB, sizeof s);
    CHECK_ERR(tracelog_trace_get_stats(t, &s), 0);
    return s;
}

/* Counters of a stream without log: delivered, lost, buffered agree with what was recorded and read. */
static void test_stats_without_log(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 64u << 10, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    tracelog_trace_stats s = stats(t);
    CHECK_EQ(s.events_delivered, 0);
    CHECK_EQ(s.events_lost, 0);
    CHECK_EQ(s.events_buffered, 0);
    CHECK_EQ(s.log_events_written, 0);
    CHECK_EQ(s.log_events_lost, 0);
    CHECK(s.lanes >= 1);

    CHECK_ERR(posix_trace_start(t), 0);
    for (uint32_t i = 0; i < 100; i++)
        posix_trace_event(ev, &i, sizeof i);
    s = stats(t);
    CHECK_MSG(s.events_buffered >= 101, "buffered is an upper bound of what is held: %llu >= 101",
              (unsigned long long)s.events_buffered);
    CHECK_EQ(s.events_lost, 0);
    pt_events e = {0};
    CHECK_ERR(pt_read_all(t, 1, &e), 0);
    s = stats(t);
    CHECK_EQ(s.events_delivered, e.n);
    CHECK_EQ(s.events_buffered, 0);
    pt_events_free(&e);

    /* LOOP overwrites: lost + survivors read == recorded. */
    enum { N = 20000 };
    for (uint32_t i = 0; i < N; i++)
        posix_trace_event(ev, &i, sizeof i);
    tracelog_trace_stats before_read = stats(t);
    CHECK(before_read.events_lost > 0);
    CHECK(before_read.events_buffered > 0);
    /* Every event recorded so far (START + 100 + N) was delivered, lost, or is still held. */
    CHECK_MSG(before_read.events_delivered + before_read.events_lost + before_read.events_buffered >= 101 + N,
              "delivered %llu + lost %llu + buffered %llu >= %d recorded", (unsigned long long)before_read.events_delivered,
              (unsigned long long)before_read.events_lost, (unsigned long long)before_read.events_buffered, 101 + N);
    CHECK_ERR(pt_read_all(t, 1, &e), 0);
    s = stats(t);
    CHECK_EQ(s.events_lost + pt_count(&e, ev), N);
    CHECK_EQ(s.events_lost, before_read.events_lost);
    CHECK_EQ(s.events_delivered, before_read.events_delivered + e.n);
    CHECK_EQ(s.events_buffered, 0);
    /* Nothing is reset: get_status resets the overrun status, not the counters. */
    struct posix_trace_status_info si;
    posix_trace_get_status(t, &si);
    posix_trace_get_status(t, &si);
    CHECK_EQ(stats(t).events_lost, s.events_lost);
    /* posix_trace_clear forgets events, the counters keep growing. */
    for (uint32_t i = 0; i < 10; i++)
        posix_trace_event(ev, &i, sizeof i);
    CHECK_ERR(posix_trace_clear(t), 0);
    tracelog_trace_stats after_clear = stats(t);
    CHECK_EQ(after_clear.events_buffered, 0);
    CHECK(after_clear.events_lost >= s.events_lost && after_clear.events_delivered >= s.events_delivered);
    pt_events_free(&e);
    CHECK_ERR(tracelog_trace_get_stats(t, NULL), EINVAL);
    pt_shutdown(t);
}

/* Counters of a stream with log: every event ends up written (APPEND) or counted lost (UNTIL_FULL log). */
static void test_stats_with_log(void)
{
    static const int log_policies[] = {POSIX_TRACE_APPEND, POSIX_TRACE_UNTIL_FULL};
    for (int p = 0; p < 2; p++) {
        tl_test_context("log policy %d", log_policies[p]);
        trace_attr_t a;
        pt_attr(&a, POSIX_TRACE_UNTIL_FULL, 1u << 20, 16);
        posix_trace_attr_setlogfullpolicy(&a, log_policies[p]);
        posix_trace_attr_setlogsize(&a, 64u << 10);
        int fd = tl_test_tmpfd();
        trace_id_t t;
        CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
        CHECK_ERR(posix_trace_start(t), 0);
        enum { N = 20000 };
        uint64_t x = 1;
        for (uint32_t i = 0; i < N; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull; /* incompressible: fills the log */
            uint32_t v[4] = {i, (uint32_t)x, (uint32_t)(x >> 32), i};
            posix_trace_event(ev, v, sizeof v);
            if (i % 1000 == 999)
                CHECK_ERR(posix_trace_flush(t), 0);
        }
        CHECK_ERR(posix_trace_flush(t), 0);
        tracelog_trace_stats s = stats(t);
        CHECK_EQ(s.events_lost, 0);
        CHECK(s.events_buffered >= 1); /* an upper bound; FLUSH_STOP of the last flush is recorded after it */
        /* Every event taken out of the stream was written to the log or lost by it. */
        CHECK_MSG(s.log_events_written + s.log_events_lost >= s.events_delivered,
                  "written %llu + log lost %llu >= delivered %llu", (unsigned long long)s.log_events_written,
                  (unsigned long long)s.log_events_lost, (unsigned long long)s.events_delivered);
        CHECK(s.events_delivered >= N);
        if (log_policies[p] == POSIX_TRACE_APPEND) {
            CHECK_EQ(s.log_events_lost, 0);
            CHECK(s.log_events_written >= N);
        } else {
            CHECK(s.log_events_lost > 0);
            CHECK(s.log_events_written < N);
        }
        pt_shutdown(t);
        close(fd);
    }
    tl_test_context(NULL);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("ext: event", &ev))
        TL_DIE("eventid_open failed");
    PT_RUN(test_sync);
    PT_RUN(test_stats_without_log);
    PT_RUN(test_stats_with_log);
    return pt_finish();
}
