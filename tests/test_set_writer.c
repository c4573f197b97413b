/*
 * Merge sets written by several parts at once (writer/set.h, format-spec
 * 6.10): every chunk of a set but the last carries MERGE_NEXT, a set of one
 * part is written as plain chunks, a set that would outgrow what readers
 * merge whole ends early, and the reader gives back every event of every
 * part, merged in timestamp order.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/chunk.h"
#include "format/format.h"
#include "tl_test.h"
#include "writer/set.h"

/* Event i of part p: parts interleave in time (part p's events at 10 * i + p). */
static tracelog_event event_of(uint32_t p, uint32_t i, uint8_t *payload, uint32_t len)
{
    memset(payload, 0, len);
    memcpy(payload, &i, sizeof i < len ? sizeof i : len);
    payload[len - 1] = (uint8_t)p;
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.timestamp_ns = 1000000 + 10ull * i + p;
    ev.event_id = 7;
    ev.pid = 1;
    ev.tid = 100 + p;
    ev.kernel_tid = 200 + p;
    ev.payload = payload;
    ev.payload_len = len;
    return ev;
}

typedef struct part_job {
    tl_set_part part;
    uint32_t index, first, count, len;
} part_job;

static void *append_part(void *arg)
{
    part_job *j = arg;
    uint8_t payload[256];
    for (uint32_t i = j->first; i < j->first + j->count; i++) {
        tracelog_event ev = event_of(j->index, i, payload, j->len);
        if (tl_set_append(&j->part, &ev) != TRACELOG_OK)
            return (void *)1;
    }
    return tl_set_part_finish(&j->part) == TRACELOG_OK ? NULL : (void *)1;
}

/* Runs one set: nparts threads append `count` events each from `first` on; then ends it. */
static void run_set(tl_set *s, part_job *jobs, uint32_t nparts, uint32_t first, uint32_t count)
{
    pthread_t th[4];
    tl_set_begin(s, nparts > 1);
    for (uint32_t p = 0; p < nparts; p++) {
        jobs[p].first = first;
        jobs[p].count = count;
        pthread_create(&th[p], NULL, append_part, &jobs[p]);
    }
    for (uint32_t p = 0; p < nparts; p++) {
        void *r;
        pthread_join(th[p], &r);
        CHECK_MSG(r == NULL, "part %u appended and finished", p);
    }
    CHECK_STATUS(tl_set_end(s), TRACELOG_OK);
}

/* The chunks of the log in fd: how many, how many carry MERGE_NEXT; whether the last one does. */
static int scan_flags(int fd, size_t *chunks, size_t *flagged)
{
    size_t len;
    uint8_t *file = tl_test_fd_slurp(fd, &len);
    tl_test_block *b;
    size_t nb = tl_test_scan_blocks(file, len, &b, NULL, NULL);
    *chunks = *flagged = 0;
    int last_flag = 0;
    for (size_t i = 0; i < nb; i++)
        if (b[i].type == TL_BLOCK_CHUNK) {
            ++*chunks;
            last_flag = b[i].chunk_flags & TL_CHUNK_MERGE_NEXT;
            *flagged += last_flag != 0;
        }
    free(b);
    free(file);
    return last_flag;
}

/* The same, of a log whose last chunk must end its set. */
static void count_flags(int fd, size_t *chunks, size_t *flagged)
{
    int open = scan_flags(fd, chunks, flagged);
    CHECK_MSG(!open, "the log's last chunk ends its set");
}

/* Every event of every part, once, each part's in order; timestamps go back at most max_back times. */
static void check_read_back_cut(int fd, uint32_t nparts, uint32_t total, uint32_t len, size_t max_back)
{
    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.nproblems, 0);
    CHECK_EQ(r.events.n, (uint64_t)nparts * total);
    uint32_t next[4] = {0};
    size_t back = 0, bad = 0;
    for (size_t k = 0; k < r.events.n; k++) {
        const tracelog_event *ev = &r.events.ev[k];
        back += k && ev->timestamp_ns < r.events.ev[k - 1].timestamp_ns;
        uint32_t p = (uint32_t)(ev->tid - 100), i = 0;
        memcpy(&i, ev->payload, sizeof i);
        if (p >= nparts || ev->payload_len != len || i != next[p] || ev->kernel_tid != 200 + p)
            bad++;
        else
            next[p]++;
    }
    CHECK_MSG(back <= max_back, "timestamps went back %zu times", back);
    CHECK_EQ(bad, 0);
    tl_test_readout_free(&r);
}

/* Every event of every part, once, in timestamp order. */
static void check_read_back(int fd, uint32_t nparts, uint32_t total, uint32_t len)
{
    check_read_back_cut(fd, nparts, total, len, 0);
}

static void setup_with(int fd, const tracelog_writer_options *o, tracelog_writer **w, tl_set *s, part_job *jobs,
                       uint32_t nparts, uint32_t len)
{
    *w = tl_test_new_writer(fd, o);
    if (tl_set_init(s, *w))
        TL_DIE("tl_set_init");
    for (uint32_t p = 0; p < nparts; p++) {
        if (tl_set_part_init(&jobs[p].part, s))
            TL_DIE("tl_set_part_init");
        jobs[p].index = p;
        jobs[p].len = len;
    }
}

static void setup(int fd, tracelog_writer **w, tl_set *s, part_job *jobs, uint32_t nparts, uint32_t len)
{
    setup_with(fd, NULL, w, s, jobs, nparts, len);
}

static void teardown(tracelog_writer *w, tl_set *s, part_job *jobs, uint32_t nparts)
{
    for (uint32_t p = 0; p < nparts; p++)
        tl_set_part_free(&jobs[p].part);
    tl_set_free(s);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
}

/* Three sets of three parts, each part several chunks long: every chunk but each set's last is flagged. */
static void test_sets_flagged_and_merged(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tl_set s;
    part_job jobs[3];
    setup(fd, &w, &s, jobs, 3, 16);
    for (uint32_t k = 0; k < 3; k++)
        run_set(&s, jobs, 3, k * 30000, 30000);
    teardown(w, &s, jobs, 3);
    size_t chunks, flagged;
    count_flags(fd, &chunks, &flagged);
    CHECK_MSG(chunks > 9, "several chunks per part (%zu)", chunks);
    CHECK_EQ(flagged, chunks - 3);
    check_read_back(fd, 3, 90000, 16);
    close(fd);
}

/* A set of one part: plain chunks, nothing for a reader to hold together. */
static void test_one_part_plain(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tl_set s;
    part_job jobs[1];
    setup(fd, &w, &s, jobs, 1, 16);
    run_set(&s, jobs, 1, 0, 50000);
    teardown(w, &s, jobs, 1);
    size_t chunks, flagged;
    count_flags(fd, &chunks, &flagged);
    CHECK_MSG(chunks > 1, "several chunks (%zu)", chunks);
    CHECK_EQ(flagged, 0);
    check_read_back(fd, 1, 50000, 16);
    close(fd);
}

/*
 * A set whose chunks decode to more than TL_SET_MAX_DECODED (255-byte
 * payloads stored as planes: each chunk decodes to about twice its body)
 * ends early, so that a reader with the default limits never cuts it
 * (MERGE_SET_TOO_LARGE), and the cut is counted.
 */
static void test_set_limit(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tl_set s;
    part_job jobs[2];
    setup(fd, &w, &s, jobs, 2, 255);
    run_set(&s, jobs, 2, 0, 160000); /* 2 x 160,000 x 255 bytes rebuilt: about 78 MiB */
    CHECK_MSG(s.ended_early >= 1, "the set was ended early %llu times", (unsigned long long)s.ended_early);
    teardown(w, &s, jobs, 2);
    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.nproblems, 0); /* no MERGE_SET_TOO_LARGE */
    CHECK_EQ(r.events.n, 320000);
    tl_test_readout_free(&r);
    close(fd);
}

/*
 * A window of more chunks than a set may hold (format-spec 6.10: 1024):
 * 4 KiB chunks of 200-byte events, two parts, about 2,600 chunks in one
 * window. The writer ends the set after exactly 1024 chunks, again after
 * the next 1024, then the rest: the file's MERGE_NEXT runs say so, and a
 * reader with the default limits reports nothing (a set of 1025 chunks is
 * MERGE_SET_TOO_LARGE) and gives back every event of each part, in order
 * (the window cut in three sets is merged set by set: the time may go back
 * where a set ends, no more than twice).
 */
static void test_set_chunk_limit(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tl_set s;
    part_job jobs[2];
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.chunk_size = 4096;
    setup_with(fd, &o, &w, &s, jobs, 2, 200);
    run_set(&s, jobs, 2, 0, 25000);
    CHECK_EQ(s.ended_early, 2);
    teardown(w, &s, jobs, 2);
    size_t len;
    uint8_t *file = tl_test_fd_slurp(fd, &len);
    tl_test_block *b;
    size_t nb = tl_test_scan_blocks(file, len, &b, NULL, NULL);
    size_t sets = 0, in_set = 0, largest = 0, chunks = 0, full = 0;
    for (size_t i = 0; i < nb; i++) {
        if (b[i].type != TL_BLOCK_CHUNK)
            continue;
        chunks++;
        in_set++;
        if (!(b[i].chunk_flags & TL_CHUNK_MERGE_NEXT)) {
            sets++;
            largest = in_set > largest ? in_set : largest;
            full += in_set == TL_SET_MAX_CHUNKS;
            in_set = 0;
        }
    }
    free(b);
    free(file);
    CHECK_MSG(chunks > 2 * TL_SET_MAX_CHUNKS, "%zu chunks: more than two sets' worth", chunks);
    CHECK_EQ(in_set, 0);
    CHECK_EQ(largest, TL_SET_MAX_CHUNKS);
    CHECK_EQ(full, 2);
    CHECK_EQ(sets, 3);
    check_read_back_cut(fd, 2, 25000, 200, 2);
    close(fd);
}

/* Events a reader of fd delivers, with tracelog_reader_hold_open_set(hold); -1 if it cannot open. */
static long events_read(int fd, int hold)
{
    tracelog_reader *r;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK))
        return -1;
    CHECK_STATUS(tracelog_reader_hold_open_set(r, hold), TRACELOG_OK);
    long n = 0;
    tracelog_event ev;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
        n++;
    tracelog_reader_close(r);
    return n;
}

/*
 * A log read while a set is written in part (its last chunk written has
 * MERGE_NEXT): by default the part written is delivered, as format-spec 6.10
 * says; held (ptlog's --follow of a LOOP log), reading ends before the set,
 * whose other chunks may hold earlier events. Once the set ends, both
 * deliver every event.
 */
static void test_open_set_held(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tl_set s;
    part_job jobs[2];
    setup(fd, &w, &s, jobs, 2, 16);
    run_set(&s, jobs, 2, 0, 1000); /* a whole set */
    CHECK_STATUS(tracelog_writer_flush(w), TRACELOG_OK);
    tl_set_begin(&s, 1); /* then a set of several chunks, its last one kept back */
    for (uint32_t p = 0; p < 2; p++) {
        jobs[p].first = 1000;
        jobs[p].count = 30000;
        CHECK(append_part(&jobs[p]) == NULL);
    }
    size_t chunks, flagged;
    int open = scan_flags(fd, &chunks, &flagged);
    CHECK_MSG(open, "the open set's last chunk written so far carries MERGE_NEXT (%zu of %zu)", flagged, chunks);
    CHECK_EQ(events_read(fd, 1), 2000);
    CHECK(events_read(fd, 0) > 2000);
    CHECK_STATUS(tl_set_end(&s), TRACELOG_OK);
    CHECK_EQ(events_read(fd, 1), 62000);
    CHECK_EQ(events_read(fd, 0), 62000);
    teardown(w, &s, jobs, 2);
    check_read_back(fd, 2, 31000, 16);
    close(fd);
}

/*
 * A reused pthread_t within a set: part 0 appends 100 events of kernel thread
 * 300, then 100 of kernel thread 301 with the same (pid, tid), while part 1
 * appends another thread's. A definition applies to a set's events as a whole
 * (format-spec 6.10), so the set must end between the two threads: every event
 * reads back with the kernel tid it was appended with. The former writer gave
 * all 200 the later one.
 */
static void test_reused_thread(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w;
    tl_set s;
    part_job jobs[2];
    setup(fd, &w, &s, jobs, 2, 8);
    tl_set_begin(&s, 1);
    uint8_t payload[8] = {0};
    for (uint32_t i = 0; i < 300; i++) {
        tracelog_event ev = {.timestamp_ns = 1000 + 10ull * i, .event_id = 7, .pid = 1, .tid = 100,
                             .kernel_tid = i < 100 ? 300 : i < 200 ? 301 : 302, .payload = payload, .payload_len = 8};
        tracelog_event other = ev;
        other.tid = 101;
        other.kernel_tid = 400;
        other.timestamp_ns += 5;
        CHECK_STATUS(tl_set_append(&jobs[0].part, &ev), TRACELOG_OK);
        CHECK_STATUS(tl_set_append(&jobs[1].part, &other), TRACELOG_OK);
    }
    CHECK_STATUS(tl_set_part_finish(&jobs[0].part), TRACELOG_OK);
    CHECK_STATUS(tl_set_part_finish(&jobs[1].part), TRACELOG_OK);
    CHECK_STATUS(tl_set_end(&s), TRACELOG_OK);
    teardown(w, &s, jobs, 2);
    tracelog_reader *r;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK))
        return;
    tracelog_event ev;
    uint32_t n = 0, wrong = 0;
    uint64_t seen[3] = {0};
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        uint32_t i = (uint32_t)((ev.timestamp_ns - 1000) / 10);
        uint32_t want = ev.tid == 101 ? 400 : i < 100 ? 300 : i < 200 ? 301 : 302;
        wrong += ev.kernel_tid != want;
        if (ev.tid == 100 && i < 300)
            seen[i / 100]++;
        n++;
    }
    CHECK_EQ(n, 600);
    CHECK_MSG(wrong == 0, "%u of 600 events read back with another kernel tid", wrong);
    CHECK(seen[0] == 100 && seen[1] == 100 && seen[2] == 100);
    tracelog_reader_close(r);
    close(fd);
}

int main(void)
{
    TL_TEST_RUN(test_sets_flagged_and_merged);
    TL_TEST_RUN(test_one_part_plain);
    TL_TEST_RUN(test_set_limit);
    TL_TEST_RUN(test_set_chunk_limit);
    TL_TEST_RUN(test_open_set_held);
    TL_TEST_RUN(test_reused_thread);
    return tl_test_finish();
}
