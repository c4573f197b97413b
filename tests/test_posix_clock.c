/*
 * Event timestamps from the TSC (libtracelog/stream/clock.h), forced with
 * TRACELOG_CLOCK=tsc since a machine's kernel may not offer it: what users
 * see stays CLOCK_REALTIME (within a few ms of clock_gettime around the
 * calls), each thread's events come in non-decreasing time, the log's
 * METADATA holds the calibration (format 1.1, clock_calibration), and the
 * conversion is the documented formula. TRACELOG_CLOCK=clock_gettime is
 * checked in a second run of this program (the choice is made once per
 * process).
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "stream/clock.h"
#include "tracelog/reader.h"
#include "tracelog/writer.h"

#define SLACK_NS 5000000u /* "within a few ms" */
#define PER_THREAD 2000
#define THREADS 3

static trace_event_id_t ev_t;
static const char *expected_source = "tsc";

typedef struct mark {
    uint32_t thread, seq;
} mark;

static uint64_t window[THREADS][PER_THREAD][2]; /* clock_gettime(REALTIME) before and after each call */

static void *producer(void *arg)
{
    uint32_t th = (uint32_t)(uintptr_t)arg;
    for (uint32_t i = 0; i < PER_THREAD; i++) {
        mark m = {th, i};
        window[th][i][0] = pt_now_ns();
        posix_trace_event(ev_t, &m, sizeof m);
        window[th][i][1] = pt_now_ns();
    }
    return NULL;
}

/* Events of several threads: each within its window, each thread's in order and non-decreasing. */
static void test_timestamps_realtime(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 4u << 20, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    pthread_t th[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&th[i], NULL, producer, (void *)i);
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    uint64_t last[THREADS] = {0};
    uint32_t next[THREADS] = {0};
    size_t outside = 0, backwards = 0, n = 0;
    for (size_t i = 0; i < ev.n; i++) {
        if (ev.ev[i].info.posix_event_id != ev_t || ev.ev[i].len != sizeof(mark))
            continue;
        mark m;
        memcpy(&m, ev.ev[i].data, sizeof m);
        if (m.thread >= THREADS || m.seq != next[m.thread]) {
            CHECK_MSG(0, "event %zu: thread %u seq %u out of order", i, m.thread, m.seq);
            break;
        }
        next[m.thread]++;
        n++;
        uint64_t ts = pt_ns(&ev.ev[i].info.posix_timestamp);
        outside += ts + SLACK_NS < window[m.thread][m.seq][0] || ts > window[m.thread][m.seq][1] + SLACK_NS;
        backwards += ts < last[m.thread];
        last[m.thread] = ts;
    }
    CHECK_EQ(n, (size_t)THREADS * PER_THREAD);
    CHECK_EQ(outside, 0);
    CHECK_EQ(backwards, 0);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/* A stream with log: METADATA names the source, and with the TSC holds the calibration. */
static void test_metadata(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 1u << 20, 16);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    uint64_t before = pt_now_ns();
    if (CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0) == 0)
        return;
    uint64_t after = pt_now_ns();
    CHECK_ERR(posix_trace_start(t), 0);
    mark m = {0, 0};
    posix_trace_event(ev_t, &m, sizeof m);
    pt_shutdown(t);
    tracelog_reader *r;
    tracelog_error err;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK) == 0)
        return;
    const tracelog_metadata *md = tracelog_reader_metadata(r);
    CHECK_STR_EQ(md->clock_source, expected_source);
    if (strcmp(expected_source, "tsc") == 0) {
        CHECK(md->clock_mult != 0 && md->clock_shift == 32);
        /* The base is the stream's creation, on the REALTIME scale. */
        CHECK(md->clock_ns_base + SLACK_NS >= before && md->clock_ns_base <= after + SLACK_NS);
        /* The event's timestamp is the formula applied to some TSC value after the base. */
        tracelog_event e;
        int found = 0;
        while (tracelog_reader_next(r, &e) == TRACELOG_OK)
            found |= e.event_id == ev_t && e.timestamp_ns >= md->clock_ns_base;
        CHECK(found);
        /* ptlog info shows it (when the tool is built). */
        const char *ptlog = getenv("PTLOG");
        if (ptlog && *ptlog) {
            char cmd[4200];
            snprintf(cmd, sizeof cmd, "'%s' info /proc/%d/fd/%d | grep -q 'calibration: *ns = .*ns per tick'", ptlog,
                     (int)getpid(), fd);
            CHECK_MSG(system(cmd) == 0, "ptlog info shows the clock calibration");
            /* And a conversion to JSON Lines and back keeps it, number for number. */
            snprintf(cmd, sizeof cmd,
                     "p='%s'; f=/proc/%d/fd/%d; t=$(mktemp -d) && \"$p\" convert \"$f\" --to jsonl -o $t/a.jsonl && "
                     "\"$p\" convert $t/a.jsonl --to ptl -o $t/b.ptl && "
                     "[ \"$(\"$p\" info \"$f\" | grep calibration:)\" = \"$(\"$p\" info $t/b.ptl | grep calibration:)\" ]; "
                     "r=$?; rm -rf \"$t\"; exit $r",
                     ptlog, (int)getpid(), fd);
            CHECK_MSG(system(cmd) == 0, "ptlog convert to JSON Lines and back keeps the clock calibration");
        }
    } else {
        CHECK_EQ(md->clock_mult, 0);
    }
    tracelog_reader_close(r);
    close(fd);
}

/* The conversion is the formula of format-spec 5.2, also for a counter read before the base. */
static void test_conversion_formula(void)
{
    tl_clock c = {.kind = TL_CLOCK_TSC, .shift = 32, .mult = 1ull << 31, .tsc_base = 1000, .ns_base = 5000000000};
    CHECK_EQ(tl_clock_from_tsc(&c, 1000), 5000000000u);
    CHECK_EQ(tl_clock_from_tsc(&c, 3000), 5000001000u);
    CHECK_EQ(tl_clock_from_tsc(&c, 3001), 5000001000u); /* floor */
    CHECK_EQ(tl_clock_from_tsc(&c, 0), 5000000000u - 500);
    CHECK_EQ(tl_clock_from_tsc(&c, 999), 5000000000u - 1); /* floor of -0.5 */
    c.shift = 64 + 32; /* scribbled in shared memory: taken modulo 64, no undefined shift */
    CHECK_EQ(tl_clock_from_tsc(&c, 3000), 5000001000u);
    /* A product over 64 bits, after the base (the unsigned path) and before it (the signed one). */
    c = (tl_clock){.kind = TL_CLOCK_TSC, .shift = 32, .mult = 1ull << 40, .tsc_base = 1ull << 41, .ns_base = 1ull << 50};
    CHECK_EQ(tl_clock_from_tsc(&c, 3ull << 40), (1ull << 50) + (1ull << 48));
    CHECK_EQ(tl_clock_from_tsc(&c, 1ull << 40), (1ull << 50) - (1ull << 48));
}

/* The writer stores the calibration and the reader gives it back; an impossible one is refused. */
static void test_metadata_round_trip(void)
{
    tracelog_metadata m;
    tracelog_metadata_init(&m);
    m.clock_tsc_base = 123456789012345ull;
    m.clock_ns_base = 1790000000123456789ull;
    m.clock_mult = 1651910039ull;
    m.clock_shift = 32;
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tracelog_error err;
    if (CHECK_EQ_INT(tracelog_writer_create(fd, &m, NULL, &w, &err), TRACELOG_OK) == 0)
        return;
    CHECK_EQ_INT(tracelog_writer_close(w, &err), TRACELOG_OK);
    tracelog_reader *r;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        const tracelog_metadata *md = tracelog_reader_metadata(r);
        CHECK_EQ(md->clock_tsc_base, m.clock_tsc_base);
        CHECK_EQ(md->clock_ns_base, m.clock_ns_base);
        CHECK_EQ(md->clock_mult, m.clock_mult);
        CHECK_EQ(md->clock_shift, 32);
        tracelog_reader_close(r);
    }
    close(fd);
    m.clock_shift = 64;
    fd = tl_test_tmpfd();
    CHECK_EQ_INT(tracelog_writer_create(fd, &m, NULL, &w, &err), TRACELOG_E_INVAL);
    close(fd);
}

int main(int argc, char **argv)
{
    pt_watchdog(60);
    int gettime = argc == 2 && strcmp(argv[1], "--clock-gettime") == 0;
    /* Before the first stream: the process chooses its source once. */
    setenv(TL_CLOCK_ENV, gettime ? "clock_gettime" : "tsc", 1);
    if (gettime || !TL_HAVE_TSC)
        expected_source = "clock_gettime";
    if (posix_trace_eventid_open("clock: mark", &ev_t))
        TL_DIE("eventid_open failed");
    PT_RUN(test_timestamps_realtime);
    PT_RUN(test_metadata);
    if (!gettime) {
        PT_RUN(test_conversion_formula);
        PT_RUN(test_metadata_round_trip);
        char self[4096];
        ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
        if (len > 0) {
            self[len] = 0;
            char cmd[4200];
            snprintf(cmd, sizeof cmd, "'%s' --clock-gettime", self);
            CHECK_MSG(system(cmd) == 0, "the same checks with TRACELOG_CLOCK=clock_gettime");
        }
    }
    return pt_finish();
}
