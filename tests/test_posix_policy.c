/*
 * Stream full policies (posix-trace.md §4.2, §9.1, §10): LOOP without log
 * (overwrite, OVERFLOW/RESUME, overrun status read-and-reset), UNTIL_FULL
 * (automatic stop, STOP with non-zero data, restart once emptied), FLUSH
 * with log (losses only when the producer outruns the log, counted and
 * marked), and the §5 size guarantee.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_seq;

/* The payload of every test event: who recorded it and its number. 16 bytes = the max data size used. */
typedef struct {
    uint32_t thread, seq;
    uint64_t noise;
} payload;

static int get_payload(const pt_event *e, payload *p)
{
    if (e->info.posix_event_id != ev_seq || e->len != sizeof *p)
        return 0;
    memcpy(p, e->data, sizeof *p);
    return 1;
}

static void status(trace_id_t t, struct posix_trace_status_info *si)
{
    memset(si, 0x77, sizeof *si);
    CHECK_ERR(posix_trace_get_status(t, si), 0);
}

/* The events of one recording thread, as indices into l. */
static size_t of_thread(const pt_events *l, uint32_t thread, size_t *idx, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < l->n; i++) {
        payload p;
        if (get_payload(&l->ev[i], &p) && p.thread == thread && n < cap)
            idx[n++] = i;
    }
    return n;
}

/*
 * Checks the LOOP markers before the first surviving event of a thread whose first events were overwritten:
 * "OVERFLOW (timestamp = first overwritten event) marks where loss began; RESUME (timestamp = first valid event
 * after, placed immediately before it) marks the end".
 */
static void check_markers_before(const pt_events *l, size_t first, uint64_t not_before)
{
    if (!CHECK_MSG(first >= 2, "room for OVERFLOW and RESUME before event %zu", first))
        return;
    const pt_event *ov = &l->ev[first - 2], *re = &l->ev[first - 1], *e = &l->ev[first];
    CHECK_MSG(re->info.posix_event_id == POSIX_TRACE_RESUME, "RESUME immediately before the first survivor (got %u)",
              re->info.posix_event_id);
    CHECK_MSG(ov->info.posix_event_id == POSIX_TRACE_OVERFLOW, "OVERFLOW right before RESUME (got %u)",
              ov->info.posix_event_id);
    CHECK_MSG(pt_ns(&re->info.posix_timestamp) == pt_ns(&e->info.posix_timestamp),
              "RESUME's timestamp is the first valid event's");
    CHECK_MSG(pt_ns(&ov->info.posix_timestamp) <= pt_ns(&re->info.posix_timestamp), "OVERFLOW's timestamp <= RESUME's");
    CHECK_MSG(pt_ns(&ov->info.posix_timestamp) >= not_before, "OVERFLOW's timestamp is a recorded event's (after start)");
}

/* LOOP without log: "overwrite oldest"; status "RUNNING + FULL — only possible with stream policy LOOP". */
static void test_loop(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 64u << 10, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    uint64_t start_ns = pt_now_ns();
    CHECK_ERR(posix_trace_start(t), 0);
    enum { N = 20000 };
    for (uint32_t i = 0; i < N; i++) {
        payload p = {0, i, 0};
        posix_trace_event(ev_seq, &p, sizeof p);
    }
    struct posix_trace_status_info si;
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_FULL);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
    /* "reset after it is read". */
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);

    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    static size_t idx[N];
    size_t n = of_thread(&ev, 0, idx, N);
    CHECK_MSG(n > 0 && n < N, "some events survived, some were overwritten: %zu of %d", n, N);
    int suffix = 1;
    for (size_t i = 0; i < n; i++) {
        payload p;
        get_payload(&ev.ev[idx[i]], &p);
        suffix &= p.seq == N - n + i;
        if (i > 0)
            suffix &= idx[i] == idx[i - 1] + 1; /* nothing between them */
    }
    CHECK_MSG(suffix, "the surviving events are the most recent ones, in order, without gaps");
    if (n > 0)
        check_markers_before(&ev, idx[0], start_ns);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_OVERFLOW), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_RESUME), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_START), 1);
    if (tl_test_failures())
        pt_events_dump(&ev, 8);
    pt_events_free(&ev);
    /* Everything was read: the stream is empty, its space no longer exhausted (§4.2 full status). */
    status(t, &si);
    CHECK_MSG(si.posix_stream_full_status == POSIX_TRACE_NOT_FULL, "a LOOP stream read empty is not full");

    /* A second overflow after reading: a second pair of markers, before the next survivor. */
    for (uint32_t i = N; i < 2 * N; i++) {
        payload p = {0, i, 0};
        posix_trace_event(ev_seq, &p, sizeof p);
    }
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    n = of_thread(&ev, 0, idx, N);
    CHECK(n > 0);
    if (n > 0) {
        payload p;
        get_payload(&ev.ev[idx[n - 1]], &p);
        CHECK_EQ(p.seq, 2 * N - 1);
        check_markers_before(&ev, idx[0], start_ns);
    }
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_OVERFLOW), 1);
    pt_events_free(&ev);

    /* No loss, no markers. */
    for (uint32_t i = 0; i < 10; i++) {
        payload p = {0, i, 0};
        posix_trace_event(ev_seq, &p, sizeof p);
    }
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 10);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_OVERFLOW), 0);
    pt_events_free(&ev);
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_OVERRUN); /* the second overflow */
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    /* P11: "for LOOP always honour stop". */
    CHECK_ERR(posix_trace_stop(t), 0);
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
    pt_shutdown(t);
}

typedef struct {
    uint32_t thread, n;
} loop_arg;

static void *loop_thread(void *p)
{
    loop_arg *a = p;
    for (uint32_t i = 0; i < a->n; i++) {
        payload pl = {a->thread, i, 0};
        posix_trace_event(ev_seq, &pl, sizeof pl);
    }
    return NULL;
}

/* LOOP with several threads: each thread's surviving events are its most recent ones, each loss is marked. */
static void test_loop_threads(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 64u << 10, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    uint64_t start_ns = pt_now_ns();
    CHECK_ERR(posix_trace_start(t), 0);
    enum { T = 3, N = 20000 };
    pthread_t th[T];
    loop_arg args[T];
    for (uint32_t i = 0; i < T; i++) {
        args[i] = (loop_arg){i + 1, N};
        pthread_create(&th[i], NULL, loop_thread, &args[i]);
    }
    for (int i = 0; i < T; i++)
        pthread_join(th[i], NULL);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    static size_t idx[N];
    for (uint32_t k = 1; k <= T; k++) {
        tl_test_context("thread %u", k);
        size_t n = of_thread(&ev, k, idx, N);
        CHECK(n > 0 && n < N);
        int suffix = 1;
        for (size_t i = 0; i < n; i++) {
            payload p;
            get_payload(&ev.ev[idx[i]], &p);
            suffix &= p.seq == N - n + i;
        }
        CHECK_MSG(suffix, "the most recent events of this thread, in order");
        if (n > 0)
            check_markers_before(&ev, idx[0], start_ns);
    }
    tl_test_context(NULL);
    /* OVERFLOW carries an older timestamp by definition (the first overwritten event's): skip it. */
    int order = 1;
    uint64_t prev = 0;
    for (size_t i = 0; i < ev.n; i++) {
        if (ev.ev[i].info.posix_event_id == POSIX_TRACE_OVERFLOW)
            continue;
        uint64_t ts = pt_ns(&ev.ev[i].info.posix_timestamp);
        if (ts < prev && order) {
            printf("   event %zu (id %u) older than the one before\n", i, ev.ev[i].info.posix_event_id);
            order = 0;
        }
        prev = ts;
    }
    CHECK_MSG(order, "merged output in timestamp order (OVERFLOW aside)");
    pt_events_free(&ev);
    pt_shutdown(t);
}

/*
 * LOOP with records whose size does not divide the lane size: every lane wraps around with a short padding at
 * its end. Two threads on two lanes (consecutive threads get neighbouring lanes): wrapping one lane must not
 * damage its neighbour. Each thread's most recent events must survive (§10 LOOP "overwrite oldest").
 */
typedef struct {
    uint32_t thread, n;
    sem_t go, first_done;
} pad_arg;

static void *pad_thread(void *p)
{
    pad_arg *a = p;
    uint32_t v[2] = {a->thread, 0}; /* 8 bytes: 56-byte records, which do not divide the lane size */
    posix_trace_event(ev_seq, v, sizeof v);
    sem_post(&a->first_done);
    sem_wait(&a->go);
    for (uint32_t i = 1; i < a->n; i++) {
        v[1] = i;
        posix_trace_event(ev_seq, v, sizeof v);
    }
    return NULL;
}

static void test_loop_wrap_padding(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 64u << 10, 8);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    enum { N = 5000 };
    /* Every thread records its first event (each lane holds a record at its start), then one thread after the
       other records the rest and wraps its lane: the outcome does not depend on scheduling. */
    uint32_t threads = st.lanes < 8 ? st.lanes : 8;
    pad_arg args[8];
    pthread_t th[8];
    for (uint32_t k = 0; k < threads; k++) {
        args[k].thread = k;
        args[k].n = N;
        sem_init(&args[k].go, 0, 0);
        sem_init(&args[k].first_done, 0, 0);
        pthread_create(&th[k], NULL, pad_thread, &args[k]);
        sem_wait(&args[k].first_done);
    }
    for (uint32_t k = 0; k < threads; k++) {
        sem_post(&args[k].go);
        pthread_join(th[k], NULL);
        sem_destroy(&args[k].go);
        sem_destroy(&args[k].first_done);
    }
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_MSG(pt_count(&ev, POSIX_TRACE_START) == 1, "the START event (in the system buffer) is intact");
    uint32_t last[8], count[8];
    memset(last, 0xff, sizeof last);
    memset(count, 0, sizeof count);
    for (size_t i = 0; i < ev.n; i++) {
        uint32_t v[2];
        if (ev.ev[i].info.posix_event_id != ev_seq || ev.ev[i].len != sizeof v)
            continue;
        memcpy(v, ev.ev[i].data, sizeof v);
        if (v[0] < 8) {
            last[v[0]] = v[1];
            count[v[0]]++;
        }
    }
    for (uint32_t k = 0; k < threads; k++) {
        tl_test_context("thread %u of %u", k, threads);
        CHECK_MSG(count[k] > 0 && last[k] == N - 1, "its most recent events survive: %u read, last %d", count[k],
                  (int)last[k]);
    }
    tl_test_context(NULL);
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    size_t read = 0;
    for (uint32_t k = 0; k < threads; k++)
        read += count[k];
    CHECK_MSG(read + st.events_lost == (size_t)threads * N, "read %zu + lost %llu == recorded %u", read,
              (unsigned long long)st.events_lost, threads * N);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/*
 * UNTIL_FULL: "runs until resources are exhausted, then the stream stops (SUSPENDED+FULL). When the stream is
 * read, a STOP event is reported after the last recorded event"; §7.1 STOP "≠0 = automatic stop"; "The system
 * shall restart the stream when it is empty ... a START event is reported before the next recorded event".
 */
static void test_until_full(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_UNTIL_FULL, 64u << 10, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    enum { N = 5000 };
    for (uint32_t i = 0; i < N; i++) {
        payload p = {0, i, 0};
        posix_trace_event(ev_seq, &p, sizeof p);
    }
    struct posix_trace_status_info si;
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_FULL);
    /* §4.2: overrun when "policy UNTIL_FULL and the stream is full when an event is generated". */
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);

    /* P11: "Stream full => no START recorded and status unchanged"; the same for STOP. */
    CHECK_ERR(posix_trace_start(t), 0);
    CHECK_ERR(posix_trace_stop(t), 0);
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_FULL);

    /* Still full and stopped: events generated now are lost (and counted). */
    payload extra = {0, 999999, 0};
    posix_trace_event(ev_seq, &extra, sizeof extra);
    tracelog_trace_stats st2;
    CHECK_ERR(tracelog_trace_get_stats(t, &st2), 0);
    CHECK_EQ(st2.events_lost, st.events_lost + 1);
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);

    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    static size_t idx[N];
    size_t n = of_thread(&ev, 0, idx, N);
    CHECK_MSG(n > 0 && n < N, "the first events were recorded, then the stream stopped: %zu of %d", n, N);
    int prefix = 1;
    for (size_t i = 0; i < n; i++) {
        payload p;
        get_payload(&ev.ev[idx[i]], &p);
        prefix &= p.seq == i;
    }
    CHECK_MSG(prefix, "the recorded events are the first ones, in order");
    CHECK_EQ(st.events_lost, N - n);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_START), 1);
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_STOP), 1);
    long stop = pt_find(&ev, POSIX_TRACE_STOP, 0);
    CHECK_MSG(n > 0 && stop == (long)idx[n - 1] + 1 && stop == (long)ev.n - 1,
              "STOP right after the last recorded event, and last");
    if (stop >= 0) {
        int data = 0;
        CHECK_EQ(ev.ev[stop].len, sizeof data);
        memcpy(&data, ev.ev[stop].data, sizeof data);
        CHECK_MSG(data != 0, "STOP data non-zero: automatic stop");
        CHECK(pt_ns(&ev.ev[stop].info.posix_timestamp) >= pt_ns(&ev.ev[idx[n - 1]].info.posix_timestamp));
    }
    /* P12 (documented): UNTIL_FULL marks its loss with STOP/START, not OVERFLOW/RESUME. */
    CHECK_EQ(pt_count(&ev, POSIX_TRACE_OVERFLOW), 0);
    pt_events_free(&ev);

    /* Emptied: restarted, START before the next recorded event. */
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    CHECK_EQ_INT(si.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
    payload next = {0, 4242, 0};
    posix_trace_event(ev_seq, &next, sizeof next);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 2);
    if (ev.n == 2) {
        CHECK_EQ(ev.ev[0].info.posix_event_id, POSIX_TRACE_START);
        payload p;
        CHECK(get_payload(&ev.ev[1], &p) && p.seq == 4242);
    }
    pt_events_free(&ev);

    /* An explicit stop of a restarted stream records STOP with data 0. */
    CHECK_ERR(posix_trace_stop(t), 0);
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(ev.n, 1);
    if (ev.n == 1) {
        int data = -1;
        memcpy(&data, ev.ev[0].data, sizeof data);
        CHECK(ev.ev[0].info.posix_event_id == POSIX_TRACE_STOP && data == 0);
    }
    pt_events_free(&ev);
    /* An explicitly stopped stream is not restarted by being empty. */
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_SUSPENDED);
    pt_shutdown(t);
}

/*
 * §5: "Guarantee: if the sum of these maxima over a set of events is <= stream-min-size, all of them can be
 * recorded without loss" (getmaxusereventsize, getmaxsystemeventsize).
 */
static void test_size_guarantee(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_UNTIL_FULL, 64u << 10, 100);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    trace_attr_t got;
    posix_trace_attr_init(&got);
    posix_trace_get_attr(t, &got);
    size_t stream, user, sys;
    posix_trace_attr_getstreamsize(&got, &stream);
    posix_trace_attr_getmaxusereventsize(&got, 100, &user);
    posix_trace_attr_getmaxsystemeventsize(&got, &sys);
    size_t n = (stream - sys) / user; /* START plus n events of 100 bytes */
    CHECK_ERR(posix_trace_start(t), 0);
    char data[100] = {0};
    for (size_t i = 0; i < n; i++)
        posix_trace_event(ev_seq, data, sizeof data);
    struct posix_trace_status_info si;
    status(t, &si);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_MSG(si.posix_stream_overrun_status == POSIX_TRACE_NO_OVERRUN && pt_count(&ev, ev_seq) == n,
              "§5 size guarantee: %zu events of %zu bytes (+ START) fit in a stream of %zu bytes; %zu recorded",
              n, user, stream, pt_count(&ev, ev_seq));
    pt_events_free(&ev);
    pt_shutdown(t);
}

/* Waits until the stream holds nothing (the flusher took it all). 0 on timeout (5 s). */
static int wait_drained(trace_id_t t)
{
    for (int i = 0; i < 5000; i++) {
        tracelog_trace_stats st;
        if (tracelog_trace_get_stats(t, &st) != 0)
            return 0;
        if (st.events_buffered == 0)
            return 1;
        usleep(1000);
    }
    return 0;
}

/* Checks a log's events from one thread: returns the user events, verifies gaps are marked by OVERFLOW/RESUME. */
static size_t check_marked_gaps(const pt_events *ev, size_t *gaps)
{
    size_t users = 0;
    uint32_t expect = 0;
    int marked = 1, order = 1, unmarked_markers = 0;
    *gaps = 0;
    for (size_t i = 0; i < ev->n; i++) {
        payload p;
        if (!get_payload(&ev->ev[i], &p))
            continue;
        users++;
        if (p.seq < expect)
            order = 0;
        if (p.seq > expect) {
            (*gaps)++;
            int ok = i >= 2 && ev->ev[i - 1].info.posix_event_id == POSIX_TRACE_RESUME &&
                     ev->ev[i - 2].info.posix_event_id == POSIX_TRACE_OVERFLOW &&
                     pt_ns(&ev->ev[i - 1].info.posix_timestamp) == pt_ns(&ev->ev[i].info.posix_timestamp) &&
                     pt_ns(&ev->ev[i - 2].info.posix_timestamp) <= pt_ns(&ev->ev[i].info.posix_timestamp);
            if (!ok && marked)
                printf("   unmarked gap before seq %u (expected %u) at event %zu\n", p.seq, expect, i);
            marked &= ok;
        } else if (i >= 1 && ev->ev[i - 1].info.posix_event_id == POSIX_TRACE_RESUME) {
            unmarked_markers++;
        }
        expect = p.seq + 1;
    }
    CHECK_MSG(order, "events in order, none twice");
    CHECK_MSG(marked, "every loss is marked by OVERFLOW then RESUME right before the next event");
    CHECK_MSG(unmarked_markers == 0, "no RESUME without a loss before it (%d)", unmarked_markers);
    /* A loss after the last event is marked by an OVERFLOW alone, at the end of the log. */
    size_t trailing = 0;
    for (size_t i = ev->n; i-- > 0 && !get_payload(&ev->ev[i], &(payload){0, 0, 0});)
        trailing += ev->ev[i].info.posix_event_id == POSIX_TRACE_OVERFLOW;
    CHECK(trailing <= 1);
    CHECK_EQ(pt_count(ev, POSIX_TRACE_OVERFLOW), *gaps + trailing);
    CHECK_EQ(pt_count(ev, POSIX_TRACE_RESUME), *gaps);
    return users;
}

/* FLUSH: "loss happens only when the producer outruns the disk": a producer that waits for the flusher loses nothing. */
static void test_flush_slow_producer(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 256u << 10, 16);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    enum { N = 20000, BATCH = 200 }; /* a batch is far less than one lane holds */
    int drained = 1;
    for (uint32_t i = 0; i < N; i++) {
        payload p = {0, i, i * 0x9e3779b97f4a7c15ull};
        posix_trace_event(ev_seq, &p, sizeof p);
        if (i % BATCH == BATCH - 1)
            drained &= wait_drained(t);
    }
    CHECK_MSG(drained, "the flusher empties the stream by itself (FLUSH policy)");
    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    CHECK_EQ(st.events_lost, 0);
    struct posix_trace_status_info si;
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    size_t gaps;
    CHECK_EQ(check_marked_gaps(&ev, &gaps), N);
    CHECK_EQ(gaps, 0);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
}

/* Copies a pipe into a file until EOF. */
typedef struct {
    int in, out;
} pump_arg;

static void *pump(void *p)
{
    pump_arg *a = p;
    char buf[1 << 16];
    for (;;) {
        ssize_t n = read(a->in, buf, sizeof buf);
        if (n <= 0)
            break;
        if (write(a->out, buf, (size_t)n) != n)
            break;
    }
    return NULL;
}

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/*
 * FLUSH: "if flushing is slower than recording, events are lost -> overrun + OVERFLOW/RESUME". The log is a
 * pipe nobody reads for a while, so the flusher is stuck in write() while the producer goes on: losses are
 * certain. Then the pipe is drained into a file, which is opened as a pre-recorded stream.
 */
static void test_flush_fast_producer(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 64u << 10, 16);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    int p[2];
    CHECK(pipe(p) == 0);
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, p[1], &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    /* Incompressible payloads: a few MiB of log, far more than the pipe holds. */
    uint32_t n = PT_SANITIZED ? 200000 : 400000;
    uint64_t rnd = 88172645463325252ull;
    for (uint32_t i = 0; i < n; i++) {
        payload pl = {0, i, xorshift(&rnd)};
        posix_trace_event(ev_seq, &pl, sizeof pl);
    }
    /* Start reading the pipe, let the flusher catch up, then one last event carries the last loss marker. */
    int file = tl_test_tmpfd();
    pump_arg pa = {p[0], file};
    pthread_t th;
    pthread_create(&th, NULL, pump, &pa);
    CHECK(wait_drained(t));
    payload last = {0, n, 0};
    posix_trace_event(ev_seq, &last, sizeof last);
    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    CHECK_MSG(st.events_lost > 0, "a producer that outruns the log loses events: %llu lost",
              (unsigned long long)st.events_lost);
    struct posix_trace_status_info si;
    status(t, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
    /* FLUSH keeps running: "loss happens only when the producer outruns the disk" (no automatic stop). */
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    CHECK_ERR(posix_trace_shutdown(t), 0);
    close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);

    trace_id_t pre;
    CHECK_ERR(posix_trace_open(file, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    size_t gaps;
    size_t users = check_marked_gaps(&ev, &gaps);
    CHECK_MSG(users + st.events_lost == n + 1, "events in the log (%zu) + events lost (%llu) == recorded (%u)",
              users, (unsigned long long)st.events_lost, n + 1);
    CHECK(gaps > 0);
    long lastidx = pt_find_last(&ev, ev_seq);
    payload lp;
    CHECK(lastidx >= 0 && get_payload(&ev.ev[lastidx], &lp) && lp.seq == n);
    /* The completed log's status says events were lost. */
    status(pre, &si);
    CHECK_EQ_INT(si.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(file);
}

/*
 * FLUSH, loss at the very end: the events lost just before shutdown have no "first valid event after" them, but
 * the loss is still an overflow: §7.1 OVERFLOW "start of an overflow (events lost)" should be in the log.
 */
static void test_flush_trailing_loss(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 64u << 10, 16);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    int p[2];
    CHECK(pipe(p) == 0);
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, p[1], &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    uint32_t n = PT_SANITIZED ? 200000 : 400000;
    uint64_t rnd = 88172645463325252ull;
    for (uint32_t i = 0; i < n; i++) {
        payload pl = {0, i, xorshift(&rnd)};
        posix_trace_event(ev_seq, &pl, sizeof pl);
    }
    tracelog_trace_stats st;
    int file = tl_test_tmpfd();
    pump_arg pa = {p[0], file};
    pthread_t th;
    pthread_create(&th, NULL, pump, &pa);
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    CHECK(st.events_lost > 0);
    CHECK_ERR(posix_trace_shutdown(t), 0);
    close(p[1]);
    pthread_join(th, NULL);
    close(p[0]);
    trace_id_t pre;
    CHECK_ERR(posix_trace_open(file, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    long last_user = pt_find_last(&ev, ev_seq);
    payload lp = {0, 0, 0};
    if (last_user >= 0)
        get_payload(&ev.ev[last_user], &lp);
    size_t gaps;
    size_t users = check_marked_gaps(&ev, &gaps);
    CHECK_MSG(users + st.events_lost == n, "events in the log (%zu) + events lost (%llu) == recorded (%u)", users,
              (unsigned long long)st.events_lost, n);
    if (lp.seq != n - 1) { /* the last events were lost */
        long ov = pt_find(&ev, POSIX_TRACE_OVERFLOW, (size_t)last_user + 1);
        CHECK_MSG(ov >= 0, "FLUSH: events lost after the last recorded one (seq %u..%u) are marked by an OVERFLOW",
                  lp.seq + 1, n - 1);
    }
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(file);
}

int main(void)
{
    pt_watchdog(18);
    if (posix_trace_eventid_open("policy seq", &ev_seq))
        TL_DIE("eventid_open failed");
    PT_RUN(test_loop);
    PT_RUN(test_loop_threads);
    PT_RUN(test_loop_wrap_padding);
    PT_RUN(test_until_full);
    PT_RUN(test_size_guarantee);
    PT_RUN(test_flush_slow_producer);
    PT_RUN(test_flush_fast_producer);
    PT_RUN(test_flush_trailing_loss);
    return pt_finish();
}
