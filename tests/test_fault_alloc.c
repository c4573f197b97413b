/*
 * Allocation failures (promise 4, native API part): the N-th allocation
 * fails, for N = 1, 2, ... until a run completes without reaching it, in two
 * modes: only the N-th allocation fails (a transient shortage), or every
 * allocation from the N-th on fails (memory exhausted).
 *
 * This program defines malloc, calloc, realloc and free itself (forwarding
 * to glibc's __libc_* functions), so every allocation of the library and of
 * libzstd goes through the injector, which also counts live blocks.
 *
 * Scenarios, each under every failure point:
 *  - writer: create, define_event (one type with a payload schema), append (several chunks), flush, sync,
 *    close, for APPEND (stored and zstd), UNTIL_FULL and LOOP logs;
 *  - reader: open, next to the end, rewind, next again, on an APPEND and a
 *    LOOP log.
 * Checked:
 *  - every call returns OK or TRACELOG_E_NOMEM (or its normal status:
 *    LOG_FULL, END), with the error record saying NOMEM where there is one;
 *  - nothing leaks: the live-block count is back where it was once the
 *    handles are closed, whatever failed;
 *  - writer: the log written still reads back with the events whose append
 *    returned OK, in order and exact (APPEND: a prefix of them that holds
 *    every event covered by a successful flush, sync or close);
 *  - reader: when the iteration reaches TRACELOG_END, every event was
 *    returned, exactly; an allocation failure is reported, not turned into
 *    a silently shorter log.
 *
 * Under AddressSanitizer the allocator belongs to ASan and cannot be
 * replaced: the injection is skipped (said on stdout) and the scenarios run
 * once without failures, so that LeakSanitizer still checks the normal
 * paths; the gcc build of the test covers the failure paths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracelog.h"

#if defined(__SANITIZE_ADDRESS__)
#define TL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || __has_feature(thread_sanitizer)
#define TL_ASAN 1
#endif
#endif
#ifndef TL_ASAN
#define TL_ASAN 0
#endif

/* ---- the injector ------------------------------------------------------------ */

static long fail_at = -1;   /* allocation number that fails (-1: disarmed) */
static int fail_onward;     /* 1: every allocation from fail_at on fails */
static long alloc_count;    /* allocations since arming */
static long live_blocks;    /* blocks allocated and not freed */
static long failed_allocs;

static void arm(long n, int onward)
{
    alloc_count = 0;
    failed_allocs = 0;
    fail_at = n;
    fail_onward = onward;
}

static void disarm(void) { fail_at = -1; }

#if !TL_ASAN
void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t n);
void __libc_free(void *p);

static int should_fail(void)
{
    if (fail_at < 0)
        return 0;
    alloc_count++;
    if (alloc_count == fail_at || (fail_onward && alloc_count > fail_at)) {
        failed_allocs++;
        errno = ENOMEM;
        return 1;
    }
    return 0;
}

void *malloc(size_t n)
{
    if (should_fail())
        return NULL;
    void *p = __libc_malloc(n);
    if (p)
        live_blocks++;
    return p;
}

void *calloc(size_t n, size_t size)
{
    if (should_fail())
        return NULL;
    void *p = __libc_calloc(n, size);
    if (p)
        live_blocks++;
    return p;
}

void *realloc(void *p, size_t n)
{
    if (p && n == 0) { /* glibc: frees p */
        live_blocks--;
        return __libc_realloc(p, 0);
    }
    if (should_fail())
        return NULL;
    void *q = __libc_realloc(p, n);
    if (q && !p)
        live_blocks++;
    return q;
}

void free(void *p)
{
    if (p)
        live_blocks--;
    __libc_free(p);
}
#endif

/* ---- helpers ---------------------------------------------------------------- */

#define NEVENTS 300
#define T0 1700000000000000000ull
#define MAX_PAYLOAD 300

static int failures;

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            disarm();                                                                \
            if (failures++ < 10) {                                                   \
                fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);      \
                fprintf(stderr, __VA_ARGS__);                                        \
                fputc('\n', stderr);                                                 \
            }                                                                        \
            return -1;                                                               \
        }                                                                            \
    } while (0)

static uint8_t payload_buf[MAX_PAYLOAD];

static tracelog_event make_event(unsigned i, uint8_t *payload)
{
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.timestamp_ns = T0 + (uint64_t)i * 1000;
    ev.event_id = 1 + i % 3;
    ev.pid = 100 + i / 50;
    ev.tid = 7000 + i % 2;
    ev.address = 0x400000 + (uint64_t)(i % 13) * 8;
    ev.payload_len = (i * 37) % (MAX_PAYLOAD + 1);
    for (uint32_t k = 0; k < ev.payload_len; k++)
        payload[k] = (uint8_t)(i ^ (k * 13));
    ev.payload = payload;
    return ev;
}

static int same_event(const tracelog_event *a, unsigned i)
{
    uint8_t p[MAX_PAYLOAD];
    tracelog_event b = make_event(i, p);
    return a->timestamp_ns == b.timestamp_ns && a->event_id == b.event_id && a->pid == b.pid && a->tid == b.tid &&
           a->address == b.address && a->truncation == b.truncation && a->payload_len == b.payload_len &&
           memcmp(a->payload, b.payload, b.payload_len) == 0;
}

static int ok_or_nomem(tracelog_status st) { return st == TRACELOG_OK || st == TRACELOG_E_NOMEM; }

typedef struct wconfig {
    const char *name;
    tracelog_policy policy;
    int level;
} wconfig;

static void options(const wconfig *c, tracelog_writer_options *opt)
{
    tracelog_writer_options_init(opt);
    opt->log_policy = c->policy;
    opt->compression_level = c->level;
    opt->chunk_size = 4096;
    if (c->policy == TRACELOG_POLICY_UNTIL_FULL)
        opt->log_max_size = 20 * 1024;
    if (c->policy == TRACELOG_POLICY_LOOP) {
        opt->log_max_size = 16 * 1024;
        opt->segment_size = 4096;
    }
}

/* ---- writer scenario ---------------------------------------------------------- */

static int writer_run(const wconfig *c, int fd, const tracelog_metadata *meta, unsigned *ok_idx, unsigned *nok,
                      unsigned *covered)
{
    tracelog_writer_options opt;
    options(c, &opt);
    tracelog_writer *w = NULL;
    tracelog_error err;
    *nok = *covered = 0;
    tracelog_status st = tracelog_writer_create(fd, meta, &opt, &w, &err);
    if (st != TRACELOG_OK) {
        CHECK(st == TRACELOG_E_NOMEM && err.code == TRACELOG_E_NOMEM, "create: %s, record %s",
              tracelog_status_name(st), tracelog_status_name(err.code));
        CHECK(w == NULL, "create failed but returned a writer");
        return 1;
    }
    static const char *const names[] = {"one", "two", "three"};
    for (uint32_t id = 1; id <= 3; id++) {
        st = tracelog_writer_define_event(w, id, names[id - 1]);
        CHECK(ok_or_nomem(st), "define_event: %s", tracelog_status_name(st));
    }
    /* A typed type: the schema is parsed here, and again by the reader of the log. */
    st = tracelog_writer_define_event_schema(w, 4, "four", "u32 a; char[8] b; enum8 e {X=1, Y=2}", &err);
    CHECK(ok_or_nomem(st) && (st == TRACELOG_OK || err.code == TRACELOG_E_NOMEM), "define_event_schema: %s",
          tracelog_status_name(st));
    for (unsigned i = 0; i < NEVENTS; i++) {
        tracelog_event ev = make_event(i, payload_buf);
        st = tracelog_writer_append(w, &ev);
        CHECK(ok_or_nomem(st) || (st == TRACELOG_E_LOG_FULL && c->policy == TRACELOG_POLICY_UNTIL_FULL),
              "append: %s", tracelog_status_name(st));
        if (st == TRACELOG_OK)
            ok_idx[(*nok)++] = i;
        if (i % 40 == 39 || i % 97 == 96) {
            st = i % 97 == 96 ? tracelog_writer_sync(w) : tracelog_writer_flush(w);
            CHECK(ok_or_nomem(st) || (st == TRACELOG_E_LOG_FULL && c->policy == TRACELOG_POLICY_UNTIL_FULL),
                  "flush/sync: %s", tracelog_status_name(st));
            if (st == TRACELOG_OK)
                *covered = *nok;
        }
    }
    st = tracelog_writer_close(w, &err);
    CHECK(st == TRACELOG_OK || st == TRACELOG_E_NOMEM, "close: %s", tracelog_status_name(st));
    if (st == TRACELOG_OK)
        *covered = *nok;
    else
        CHECK(err.code == TRACELOG_E_NOMEM, "close: error record %s", tracelog_status_name(err.code));
    return 0;
}

/* Reads the log back (injection off): events in order, exact, appended OK. */
static int writer_check(const wconfig *c, int fd, const unsigned *ok_idx, unsigned nok, unsigned covered)
{
    tracelog_reader *r;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open(fd, NULL, &r, &err);
    CHECK(st == TRACELOG_OK, "reading back: open: %s (%s)", tracelog_status_name(st), err.message);
    unsigned j = 0; /* position in ok_idx */
    unsigned read = 0;
    int rc = 0;
    tracelog_event ev;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        unsigned idx = (unsigned)((ev.timestamp_ns - T0) / 1000);
        while (j < nok && ok_idx[j] < idx)
            j++;
        if (j == nok || ok_idx[j] != idx || !same_event(&ev, idx)) {
            rc = -1;
            break;
        }
        if (c->policy == TRACELOG_POLICY_APPEND && read != j) {
            rc = -2;
            break;
        }
        j++;
        read++;
    }
    tracelog_reader_close(r);
    CHECK(rc != -1, "reading back: an event that was not appended, or altered, after %u events", read);
    CHECK(rc != -2, "reading back: events missing before event %u", read);
    CHECK(st == TRACELOG_END, "reading back: %s", tracelog_status_name(st));
    if (c->policy == TRACELOG_POLICY_APPEND)
        CHECK(read >= covered, "reading back: %u events, %u were covered by a successful flush", read, covered);
    return 0;
}

static int writer_scenario(const wconfig *c, long n, int onward, int *reached)
{
    static unsigned ok_idx[NEVENTS];
    tracelog_metadata meta;
    tracelog_metadata_init(&meta);
    strcpy(meta.trace_name, "fault-alloc");
    int fd = memfd_create("fault-alloc", MFD_CLOEXEC);
    if (fd < 0) {
        perror("memfd_create");
        exit(1);
    }
    long live_before = live_blocks;
    unsigned nok, covered;
    arm(n, onward);
    int r = writer_run(c, fd, &meta, ok_idx, &nok, &covered);
    *reached = failed_allocs > 0;
    disarm();
    int rc = 0;
    if (r < 0) {
        rc = -1;
    } else if (live_blocks != live_before) {
        fprintf(stderr, "FAIL writer %s, allocation %ld%s: %ld blocks leaked\n", c->name, n, onward ? "+" : "",
                live_blocks - live_before);
        failures++;
        rc = -1;
    } else if (r == 0 && writer_check(c, fd, ok_idx, nok, covered) != 0) {
        rc = -1;
    }
    if (rc)
        fprintf(stderr, "  (writer %s, failing allocation %ld%s)\n", c->name, n, onward ? " and later" : "");
    close(fd);
    return rc;
}

/* ---- reader scenario ---------------------------------------------------------- */

static int make_log(const wconfig *c)
{
    int fd = memfd_create("fault-alloc-log", MFD_CLOEXEC);
    tracelog_writer_options opt;
    options(c, &opt);
    tracelog_writer *w;
    tracelog_error err;
    if (fd < 0 || tracelog_writer_create(fd, NULL, &opt, &w, &err) != TRACELOG_OK)
        exit(1);
    tracelog_writer_define_event(w, 1, "one");
    tracelog_writer_define_event_schema(w, 2, "typed", "u32 a; char[8] b; flags8 f {R=1, W=2}", NULL);
    for (unsigned i = 0; i < NEVENTS; i++) {
        tracelog_event ev = make_event(i, payload_buf);
        tracelog_writer_append(w, &ev);
    }
    if (tracelog_writer_close(w, &err) != TRACELOG_OK)
        exit(1);
    return fd;
}

/* Events the log holds, read without injection: [first, first + count). */
static void log_extent(int fd, unsigned *first, unsigned *count)
{
    tracelog_reader *r;
    tracelog_error err;
    tracelog_event ev;
    *count = 0;
    if (tracelog_reader_open(fd, NULL, &r, &err) != TRACELOG_OK)
        exit(1);
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        if ((*count)++ == 0)
            *first = (unsigned)((ev.timestamp_ns - T0) / 1000);
    }
    tracelog_reader_close(r);
}

/* One pass: next until END, retrying after NOMEM. All events, exactly, in order. */
static int read_all(tracelog_reader *r, unsigned first, unsigned count)
{
    unsigned got = 0, retries = 0;
    tracelog_event ev;
    tracelog_status st;
    while ((st = tracelog_reader_next(r, &ev)) != TRACELOG_END) {
        CHECK(ok_or_nomem(st), "next: %s", tracelog_status_name(st));
        if (st == TRACELOG_E_NOMEM) {
            CHECK(++retries < 1000, "next keeps failing");
            if (fail_onward)
                return 1; /* memory is gone for good: stopping is all a caller can do */
            continue;
        }
        CHECK(got < count && same_event(&ev, first + got), "event %u of %u: wrong event", got, count);
        got++;
    }
    CHECK(got == count, "iteration ended after %u of %u events without reporting an error", got, count);
    return 0;
}

static int reader_scenario(const char *name, int fd, unsigned first, unsigned count, long n, int onward,
                           int *reached)
{
    long live_before = live_blocks;
    tracelog_reader *r = NULL;
    tracelog_error err;
    int rc = 0;
    arm(n, onward);
    tracelog_status st = tracelog_reader_open(fd, NULL, &r, &err);
    if (st != TRACELOG_OK) {
        if (st != TRACELOG_E_NOMEM || err.code != TRACELOG_E_NOMEM) {
            fprintf(stderr, "FAIL reader %s: open: %s, record %s\n", name, tracelog_status_name(st),
                    tracelog_status_name(err.code));
            failures++;
            rc = -1;
        }
    } else {
        rc = read_all(r, first, count);
        if (rc == 0) {
            st = tracelog_reader_rewind(r);
            if (st != TRACELOG_OK) {
                fprintf(stderr, "FAIL reader %s: rewind: %s\n", name, tracelog_status_name(st));
                failures++;
                rc = -1;
            } else {
                rc = read_all(r, first, count);
            }
        }
        tracelog_reader_close(r);
    }
    *reached = failed_allocs > 0;
    disarm();
    if (live_blocks != live_before) {
        fprintf(stderr, "FAIL reader %s: %ld blocks leaked\n", name, live_blocks - live_before);
        failures++;
        rc = -1;
    }
    if (rc < 0)
        fprintf(stderr, "  (reader %s, failing allocation %ld%s)\n", name, n, onward ? " and later" : "");
    return rc < 0 ? -1 : 0;
}

/* ---- driver ------------------------------------------------------------------------ */

int main(void)
{
    static const wconfig writers[] = {
        {"APPEND/stored", TRACELOG_POLICY_APPEND, 0},
        {"APPEND/zstd", TRACELOG_POLICY_APPEND, 1},
        {"UNTIL_FULL", TRACELOG_POLICY_UNTIL_FULL, 1},
        {"LOOP", TRACELOG_POLICY_LOOP, 1},
    };
    printf("allocation failure injection: %s\n",
           TL_ASAN ? "SKIPPED (built with a sanitizer that owns malloc); normal paths only, leaks checked by "
                     "LeakSanitizer"
                   : "on (malloc/calloc/realloc replaced in this program)");
    fflush(stdout); /* stdio's buffer is allocated now, not inside a measured scenario */
    long max_n = TL_ASAN ? 0 : 100000;
    unsigned long points = 0;

    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++)
        for (int onward = 0; onward < 2; onward++) {
            long n;
            int reached = 1;
            unsigned bad = 0;
            for (n = 1; n <= max_n && reached; n++) {
                if (writer_scenario(&writers[i], n, onward, &reached) != 0)
                    bad++;
                if (bad > 3)
                    break;
            }
            if (TL_ASAN)
                writer_scenario(&writers[i], -1, 0, &reached);
            points += (unsigned long)(n - 1);
            printf("writer %-14s %-22s allocation points 1..%ld, %u failed\n", writers[i].name,
                   onward ? "failing from N on" : "failing the N-th only", n - 1, bad);
        }

    static const wconfig logs[] = {
        {"APPEND/zstd", TRACELOG_POLICY_APPEND, 1},
        {"LOOP", TRACELOG_POLICY_LOOP, 1},
    };
    for (size_t i = 0; i < sizeof logs / sizeof logs[0]; i++) {
        int fd = make_log(&logs[i]);
        unsigned first = 0, count = 0;
        log_extent(fd, &first, &count);
        for (int onward = 0; onward < 2; onward++) {
            long n;
            int reached = 1;
            unsigned bad = 0;
            for (n = 1; n <= max_n && reached; n++) {
                if (reader_scenario(logs[i].name, fd, first, count, n, onward, &reached) != 0)
                    bad++;
                if (bad > 3)
                    break;
            }
            if (TL_ASAN)
                reader_scenario(logs[i].name, fd, first, count, -1, 0, &reached);
            points += (unsigned long)(n - 1);
            printf("reader %-14s %-22s allocation points 1..%ld, %u failed (%u events)\n", logs[i].name,
                   onward ? "failing from N on" : "failing the N-th only", n - 1, bad, count);
        }
        close(fd);
    }
    printf("allocation failures: %lu failure points, %d failures\n", points, failures);
    return failures ? 1 : 0;
}
