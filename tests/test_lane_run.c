/*
 * A lane's events encoded where they lie (recorder/lane.h, the flusher's
 * common case) make the log the takes and the writer's append make: the
 * same events with the same fields, stamps and payloads, cut into the
 * same chunks. Two copies of one FLUSH buffer (laid out in caller memory)
 * are drained into two logs, one as before (each take and its run appended
 * event by event), one as the recorder drains (after each take, the lane's
 * run in place, else a run); the logs are read back and compared event by
 * event, and their sizes compared (the same chunks). The buffers hold: one
 * key for long (chunks fill mid-run), keys that change (ids, addresses,
 * payload lengths 0 to 300, truncation), two threads that share a lane,
 * runs that differ in one header field alone, gaps that widen the chunk's timestamps, 2 and 4 lanes interleaved, and a
 * log that fills up (UNTIL_FULL) mid-run. And the runs happened: a check
 * that the path in place was never taken would pass here too.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tl_test.h"
#include "recorder/lane.h"
#include "stream/consumer_internal.h"
#include "stream/layout.h"
#include "stream/produce.h"
#include "tracelog/reader.h"
#include "tracelog/writer.h"
#include "writer/io.h"

static char dir[] = "/tmp/test_lane_run.XXXXXX";

static tl_stream *made(uint32_t nlanes, uint64_t lane_bytes, uint64_t *size)
{
    tl_stream_params p = {.policy = TRACELOG_POLICY_FLUSH,
                          .stream_size = lane_bytes * nlanes,
                          .max_data = 512,
                          .max_sys_data = 64,
                          .nlanes = nlanes,
                          .markers = {4, 5, 3, 2}};
    *size = tl_stream_bytes(&p);
    tl_stream *s = tl_stream_create_in(tl_test_zeroed_shared(*size), *size, &p);
    if (CHECK(s != NULL))
        tl_stream_start(s, NULL);
    return s;
}

typedef struct shape {
    uint32_t nlanes;
    int mixed;        /* keys change: ids, addresses, payload lengths, truncation */
    int shared;       /* two threads share each lane, in turns of random length */
    int gaps;         /* now and then a pause of 2 ms: wider timestamp deltas */
    uint32_t hole;    /* > 0: lane 0's record number `hole` left uncommitted (its producer died in it) */
    int empty;        /* every payload empty: a chunk with no payload bytes at all */
    int one_field;    /* now and then one field alone changes (id, truncation, a length of the same record size,
                         pid, thread, kernel tid, address): runs of records alike but in one header field */
} shape;

/* The one field that changes in a one_field shape: each in turn, at random. */
static void change_one_field(tracelog_event *ev, uint64_t r)
{
    switch (r % 7) {
    case 0: ev->event_id ^= 1; break;
    case 1: ev->truncation ^= 1; break;
    case 2: ev->payload_len = ev->payload_len == 16 ? 13 : 16; break; /* both make 64-byte records */
    case 3: ev->pid ^= 1; break;
    case 4: ev->tid ^= 0x10000; break;
    case 5: ev->kernel_tid ^= 1; break;
    default: ev->address ^= 0x40; break;
    }
}

/* n events; each lane's payload starts with (lane, seq); a system event now and then. */
static void fill(tl_stream *s, const shape *sh, uint32_t n, uint64_t seed)
{
    uint64_t x = seed;
    uint32_t seq[8] = {0}, thread[8] = {0};
    uint8_t payload[300];
    tracelog_event alike = {.event_id = 100, .pid = 4242, .kernel_tid = 4242, .tid = 0x7f0000001000ull,
                            .address = 0x55d0c4a01234ull, .payload_len = 16};
    for (uint32_t k = 0; k < n; k++) {
        uint32_t lane = (uint32_t)(tl_test_rng_next(&x) % sh->nlanes);
        if (sh->shared && tl_test_rng_next(&x) % 50 == 0)
            thread[lane] ^= 1;
        uint32_t t = lane * 2 + thread[lane];
        uint32_t len = sh->empty ? 0 : 16, id = 100, trunc = 0;
        if (sh->mixed) {
            uint64_t r = tl_test_rng_next(&x);
            static const uint32_t lens[] = {8, 16, 16, 16, 0, 1, 7, 33, 255, 256, 300};
            len = lens[r % 11];
            id = 100 + (uint32_t)(r >> 8) % 3;
            trunc = (r >> 16) % 7 == 0;
        }
        for (uint32_t i = 0; i < len; i++)
            payload[i] = (uint8_t)(i * 7 + seq[lane]);
        if (len >= 8) {
            memcpy(payload, &lane, 4);
            memcpy(payload + 4, &seq[lane], 4);
        }
        seq[lane]++;
        tracelog_event ev = {.event_id = id,
                             .pid = 4242,
                             .kernel_tid = 4242 + t,
                             .tid = 0x7f0000001000ull + t * 0x10000,
                             .address = 0x55d0c4a01234ull + (sh->mixed ? k % 2 : 0),
                             .truncation = trunc,
                             .payload_len = len,
                             .payload = payload};
        if (sh->one_field) {
            if (tl_test_rng_next(&x) % 40 == 0)
                change_one_field(&alike, tl_test_rng_next(&x));
            alike.payload = payload;
            ev = alike;
        }
        CHECK(tl_stream_record(s, lane, &ev));
        if (tl_test_rng_next(&x) % 499 == 0) {
            tracelog_event sys = {.event_id = 6, .pid = 4242, .payload_len = sizeof k, .payload = &k};
            CHECK(tl_stream_record_system(s, &sys));
        }
        if (sh->gaps && k % 4000 == 3999)
            nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
    if (sh->hole) { /* its commit word back to 0: the runs must stop there as the takes do */
        uint8_t *lane0 = (uint8_t *)s + tl_stream_data_offset(tl_stream_lanes(s));
        uint64_t pos = 0;
        for (uint32_t k = 0; k < sh->hole; k++)
            pos += tl_rec_bytes(((tl_rec *)(lane0 + pos))->kind_size);
        atomic_store(&((tl_rec *)(lane0 + pos))->commit, 0);
    }
}

enum how { BEFORE, IN_PLACE, COPIED };

/*
 * Drains a copy of the buffer into the log at path: as before (each take and
 * its run appended one by one), in place as the recorder drains its own
 * stream, or copied out first as it drains another process's (in pieces of
 * at most 4 KiB, so that records are cut at a copy's end). The events that
 * went in place.
 */
static uint64_t drain(const void *buffer, uint64_t size, const tracelog_writer_options *opt, enum how how,
                      const char *path)
{
    static uint8_t piece[4096];
    void *copy = tl_test_zeroed_shared(size);
    memcpy(copy, buffer, size);
    tl_consumer *c = NULL;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    tracelog_writer *w = NULL;
    tracelog_error err;
    uint64_t placed = 0;
    if (!CHECK(fd >= 0) || !CHECK_EQ(tl_consumer_new_shared(copy, size, &c), 0) ||
        !CHECK_EQ(tracelog_writer_create(fd, NULL, opt, &w, &err), TRACELOG_OK))
        goto out;
    tracelog_event ev[64];
    while (tl_consumer_take(c, &ev[0], 1) == TL_TAKE_EVENT) {
        tracelog_status st = tracelog_writer_append(w, &ev[0]);
        CHECK(st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL);
        tracelog_event last;
        size_t limit = 0;
        tl_chunk_builder *b = how != BEFORE ? tl_writer_lane_target(w, &limit, &last) : NULL;
        int fault = 0;
        uint32_t n = how == COPIED ? tl_rec_append_lane_copied(c, NULL, b, limit, &last, piece, sizeof piece, &fault)
                                   : tl_rec_append_lane(c, b, limit, &last);
        CHECK_EQ(fault, 0);
        /* A run reads at most what a take releases at once: the room read but not given back stays bounded. */
        for (uint32_t i = 0; n && i < c->nlanes; i++)
            CHECK(c->pos[i] - c->pub[i] <= 2 * TL_CONSUMER_RELEASE + tl_rec_size(512));
        placed += n;
        if (n)
            continue;
        uint32_t got = tl_consumer_take_run(c, ev, 63);
        for (uint32_t k = 0; k < got; k++) {
            st = tracelog_writer_append(w, &ev[k]);
            CHECK(st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL);
        }
    }
    tracelog_status st = tracelog_writer_flush(w);
    CHECK(st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL);
out:
    if (w)
        tracelog_writer_close(w, NULL);
    if (fd >= 0)
        close(fd);
    tl_consumer_free(c);
    munmap(copy, size);
    return placed;
}

/* The two logs hold the same events and are the same size; the number of events. */
static uint64_t same_logs(const char *what, const char *a, const char *b)
{
    tracelog_reader *ra = NULL, *rb = NULL;
    tracelog_error err;
    uint64_t n = 0;
    if (!CHECK_EQ(tracelog_reader_open_path(a, NULL, &ra, &err), TRACELOG_OK) ||
        !CHECK_EQ(tracelog_reader_open_path(b, NULL, &rb, &err), TRACELOG_OK))
        goto out;
    for (;;) {
        tracelog_event ea, eb;
        tracelog_status sa = tracelog_reader_next(ra, &ea), sb = tracelog_reader_next(rb, &eb);
        if (!CHECK_EQ(sa, sb))
            break;
        if (sa != TRACELOG_OK)
            break;
        if (!CHECK_EVENT_EQ(&ea, &eb)) {
            fprintf(stderr, "  %s: event %llu differs (id %u/%u, ts %llu/%llu, len %u/%u)\n", what,
                    (unsigned long long)n, ea.event_id, eb.event_id, (unsigned long long)ea.timestamp_ns,
                    (unsigned long long)eb.timestamp_ns, ea.payload_len, eb.payload_len);
            break;
        }
        n++;
    }
    CHECK_EQ(tracelog_reader_problem_count(ra), 0);
    CHECK_EQ(tracelog_reader_problem_count(rb), 0);
    struct stat sa, sb;
    if (CHECK_EQ(stat(a, &sa), 0) && CHECK_EQ(stat(b, &sb), 0) && !CHECK_EQ(sa.st_size, sb.st_size))
        fprintf(stderr, "  %s: %lld bytes against %lld: not the same chunks\n", what, (long long)sb.st_size,
                (long long)sa.st_size);
out:
    tracelog_reader_close(ra);
    tracelog_reader_close(rb);
    return n;
}

/*
 * Fills a buffer of this shape with n events, drains three copies (before, in place, copied out) and compares;
 * returns the fewer events placed of the two ways.
 */
static uint64_t check_shape(const char *what, const shape *sh, uint32_t n, const tracelog_writer_options *opt,
                            uint64_t *events)
{
    uint64_t size;
    tl_stream *s = made(sh->nlanes, 8u << 20, &size);
    if (!s)
        return 0;
    fill(s, sh, n, 7 + sh->nlanes);
    char a[64], b[64], d[64];
    snprintf(a, sizeof a, "%s/before.ptl", dir);
    snprintf(b, sizeof b, "%s/in_place.ptl", dir);
    snprintf(d, sizeof d, "%s/copied.ptl", dir);
    CHECK_EQ(drain(s, size, opt, BEFORE, a), 0);
    uint64_t placed = drain(s, size, opt, IN_PLACE, b), copied = drain(s, size, opt, COPIED, d);
    *events = same_logs(what, a, b);
    CHECK_EQ(same_logs(what, a, d), *events);
    if (getenv("TL_TEST_VERBOSE"))
        fprintf(stderr, "  %s: %llu events, %llu in place, %llu copied out\n", what, (unsigned long long)*events,
                (unsigned long long)placed, (unsigned long long)copied);
    munmap(s, size);
    unlink(a);
    unlink(b);
    unlink(d);
    return placed < copied ? placed : copied;
}

static tracelog_writer_options small_chunks(void)
{
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.chunk_size = 4096; /* many chunk ends, most of them mid-run */
    return opt;
}

static void test_one_key(void)
{
    tracelog_writer_options opt = small_chunks();
    uint64_t events, placed = check_shape("one key", &(shape){.nlanes = 1}, 50000, &opt, &events);
    CHECK(events >= 50000);
    CHECK(placed >= events * 9 / 10); /* all but each chunk's first events */
    opt.compression_level = 0;
    placed = check_shape("one key, raw chunks", &(shape){.nlanes = 1}, 20000, &opt, &events);
    CHECK(events >= 20000 && placed >= events * 9 / 10);
}

/* Events without payloads: the chunk's payload buffer is never allocated (UBSan saw NULL + 0 in the copied path). */
static void test_empty_payloads(void)
{
    tracelog_writer_options opt = small_chunks();
    uint64_t events, placed = check_shape("empty payloads", &(shape){.nlanes = 1, .empty = 1}, 20000, &opt, &events);
    CHECK(events >= 20000 && placed >= events * 9 / 10);
}

static void test_mixed_keys(void)
{
    tracelog_writer_options opt = small_chunks();
    uint64_t events, placed = check_shape("keys that change", &(shape){.nlanes = 1, .mixed = 1}, 30000, &opt, &events);
    CHECK(events >= 30000 && placed >= events / 2);
}

static void test_shared_lane(void)
{
    tracelog_writer_options opt = small_chunks();
    uint64_t events,
        placed = check_shape("two threads in a lane", &(shape){.nlanes = 1, .shared = 1}, 30000, &opt, &events);
    CHECK(events >= 30000 && placed >= events / 2);
}

/* Runs that differ from the last in one header field only: the runs in place compare every field. */
static void test_one_field(void)
{
    tracelog_writer_options opt = small_chunks();
    uint64_t events, placed = check_shape("one field changes", &(shape){.nlanes = 1, .one_field = 1}, 30000, &opt, &events);
    CHECK(events >= 30000 && placed >= events / 2);
}

static void test_gaps(void)
{
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt); /* chunks of 128 KiB: a gap mid-chunk widens its stamps */
    uint64_t events, placed = check_shape("gaps", &(shape){.nlanes = 1, .gaps = 1}, 40000, &opt, &events);
    CHECK(events >= 40000 && placed >= events / 2);
}

static void test_lanes(void)
{
    tracelog_writer_options opt = small_chunks();
    for (uint32_t nlanes = 2; nlanes <= 4; nlanes *= 2) {
        uint64_t events;
        check_shape("lanes interleaved", &(shape){.nlanes = nlanes, .mixed = 1, .shared = 1}, 30000, &opt, &events);
        CHECK(events >= 30000);
    }
}

/* A producer that died mid-record: every way stops at it alike, and what follows (taken or skipped) is the same. */
static void test_uncommitted(void)
{
    tracelog_writer_options opt = small_chunks();
    uint64_t events;
    check_shape("a record never committed", &(shape){.nlanes = 1, .hole = 5000}, 20000, &opt, &events);
    CHECK(events >= 5000);
    check_shape("a record never committed, 2 lanes", &(shape){.nlanes = 2, .hole = 3000}, 20000, &opt, &events);
    CHECK(events >= 3000);
}

static void test_log_fills(void)
{
    tracelog_writer_options opt = small_chunks();
    opt.log_policy = TRACELOG_POLICY_UNTIL_FULL;
    opt.log_max_size = 64u << 10;
    uint64_t events;
    check_shape("a log that fills up", &(shape){.nlanes = 1}, 50000, &opt, &events);
    CHECK(events > 0 && events < 50000);
}

int main(void)
{
    if (!mkdtemp(dir))
        TL_DIE("mkdtemp");
    TL_TEST_RUN(test_one_key);
    TL_TEST_RUN(test_empty_payloads);
    TL_TEST_RUN(test_mixed_keys);
    TL_TEST_RUN(test_shared_lane);
    TL_TEST_RUN(test_one_field);
    TL_TEST_RUN(test_gaps);
    TL_TEST_RUN(test_lanes);
    TL_TEST_RUN(test_uncommitted);
    TL_TEST_RUN(test_log_fills);
    rmdir(dir);
    return tl_test_finish();
}
