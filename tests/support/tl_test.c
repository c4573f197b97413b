#define _GNU_SOURCE /* pipe2 */

#include "tl_test.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/chunk.h"
#include "format/format.h"
#include "writer/io.h"

/* ---- checks ------------------------------------------------------------ */

/* Sweeps can fail thousands of times for one cause: only the first failures are printed. */
#define MAX_PRINTED_FAILURES 100

/* Atomic: helpers may check from a writer thread while the main thread reads. */
static _Atomic unsigned long passed, failed;
static char context[256];

void tl_test_context(const char *fmt, ...)
{
    if (!fmt) {
        context[0] = 0;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(context, sizeof context, fmt, ap);
    va_end(ap);
}

unsigned long tl_test_failures(void) { return failed; }

static void report_failure(const char *file, int line, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

static void report_failure(const char *file, int line, const char *fmt, va_list ap)
{
    unsigned long n = ++failed;
    if (n > MAX_PRINTED_FAILURES) {
        if (n == MAX_PRINTED_FAILURES + 1)
            printf("(further failures are counted, not printed)\n");
        return;
    }
    printf("%s:%d: FAILED: ", file, line);
    vprintf(fmt, ap);
    if (context[0])
        printf("  [%s]", context);
    printf("\n");
    fflush(stdout);
}

static int verdict(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int verdict(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return 1;
    }
    va_list ap;
    va_start(ap, fmt);
    report_failure(file, line, fmt, ap);
    va_end(ap);
    return 0;
}

int tl_test_check(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok) {
        passed++;
        return 1;
    }
    va_list ap;
    va_start(ap, fmt);
    report_failure(file, line, fmt, ap);
    va_end(ap);
    return 0;
}

int tl_test_check_eq_u64(uint64_t a, uint64_t b, const char *ea, const char *eb, const char *file,
                         int line)
{
    return verdict(a == b, file, line, "%s == %s: %" PRIu64 " (0x%" PRIx64 ") vs %" PRIu64 " (0x%" PRIx64 ")",
                   ea, eb, a, a, b, b);
}

int tl_test_check_eq_i64(int64_t a, int64_t b, const char *ea, const char *eb, const char *file,
                         int line)
{
    return verdict(a == b, file, line, "%s == %s: %" PRId64 " vs %" PRId64, ea, eb, a, b);
}

int tl_test_check_status(tracelog_status got, tracelog_status want, const char *expr,
                         const char *file, int line)
{
    return verdict(got == want, file, line, "%s: got %s (%d), want %s (%d)", expr,
                   tracelog_status_name(got), (int)got, tracelog_status_name(want), (int)want);
}

int tl_test_check_str_eq(const char *a, const char *b, const char *ea, const char *eb,
                         const char *file, int line)
{
    int ok = a && b && strcmp(a, b) == 0;
    return verdict(ok, file, line, "%s == %s: \"%s\" vs \"%s\"", ea, eb, a ? a : "(null)",
                   b ? b : "(null)");
}

int tl_test_check_mem_eq(const void *a, const void *b, size_t n, const char *ea, const char *eb,
                         const char *file, int line)
{
    size_t i = 0;
    const uint8_t *x = a, *y = b;
    while (i < n && x[i] == y[i])
        i++;
    if (i == n)
        return verdict(1, file, line, "%s", "");
    return verdict(0, file, line, "%s and %s differ at byte %zu of %zu: 0x%02x vs 0x%02x", ea, eb, i,
                   n, x[i], y[i]);
}

static const char *current_test;

void tl_test_run(const char *name, void (*fn)(void))
{
    unsigned long before = failed;
    current_test = name;
    printf("-- %s\n", name);
    fflush(stdout);
    tl_test_context(NULL);
    fn();
    tl_test_context(NULL);
    unsigned long after = failed;
    if (after != before)
        printf("-- %s: %lu failed checks\n", name, after - before);
    fflush(stdout);
    current_test = NULL;
}

int tl_test_finish(void)
{
    unsigned long p = passed, f = failed;
    printf("%lu passed, %lu failed\n", p, f);
    fflush(stdout);
    return f || p == 0 ? 1 : 0;
}

void tl_test_die(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%s:%d: FATAL%s%s: ", file, line, current_test ? " in " : "",
           current_test ? current_test : "");
    vprintf(fmt, ap);
    va_end(ap);
    unsigned long p = passed, f = failed;
    printf("\n%lu passed, %lu failed\n", p, f + 1);
    fflush(stdout);
    exit(1);
}

/* ---- event lists --------------------------------------------------------- */

void tl_test_events_push(tl_test_events *l, const tracelog_event *ev)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        tracelog_event *p = realloc(l->ev, cap * sizeof *p);
        size_t *o = p ? realloc(l->offset, cap * sizeof *o) : NULL;
        if (!p || !o)
            TL_DIE("out of memory");
        l->ev = p;
        l->offset = o;
        l->cap = cap;
    }
    if (ev->payload_len > l->data_cap - l->data_len) {
        size_t cap = l->data_cap ? l->data_cap : 65536;
        while (cap - l->data_len < ev->payload_len)
            cap *= 2;
        uint8_t *d = realloc(l->data, cap);
        if (!d)
            TL_DIE("out of memory");
        for (size_t i = 0; i < l->n; i++) /* the buffer may have moved */
            l->ev[i].payload = d + l->offset[i];
        l->data = d;
        l->data_cap = cap;
    }
    tracelog_event e = *ev;
    if (e.payload_len)
        memcpy(l->data + l->data_len, ev->payload, e.payload_len);
    e.payload = l->data ? l->data + l->data_len : NULL;
    l->offset[l->n] = l->data_len;
    l->data_len += e.payload_len;
    l->ev[l->n++] = e;
}

void tl_test_events_free(tl_test_events *l)
{
    free(l->ev);
    free(l->offset);
    free(l->data);
    memset(l, 0, sizeof *l);
}

int tl_test_event_equal(const tracelog_event *a, const tracelog_event *b)
{
    return a->timestamp_ns == b->timestamp_ns && a->event_id == b->event_id && a->pid == b->pid &&
           a->tid == b->tid && a->address == b->address && a->truncation == b->truncation &&
           a->payload_len == b->payload_len &&
           (a->payload_len == 0 || memcmp(a->payload, b->payload, a->payload_len) == 0);
}

/* Names the first field where a and b differ ("" if none). */
static const char *first_difference(const tracelog_event *a, const tracelog_event *b)
{
    if (a->timestamp_ns != b->timestamp_ns)
        return "timestamp_ns";
    if (a->event_id != b->event_id)
        return "event_id";
    if (a->pid != b->pid)
        return "pid";
    if (a->tid != b->tid)
        return "tid";
    if (a->address != b->address)
        return "address";
    if (a->truncation != b->truncation)
        return "truncation";
    if (a->payload_len != b->payload_len)
        return "payload_len";
    if (a->payload_len && memcmp(a->payload, b->payload, a->payload_len))
        return "payload bytes";
    return "";
}

int tl_test_check_event_eq(const tracelog_event *a, const tracelog_event *b, const char *file,
                           int line)
{
    return verdict(tl_test_event_equal(a, b), file, line,
                   "events differ in %s (ts %" PRIu64 " id %u len %u vs ts %" PRIu64 " id %u len %u)",
                   first_difference(a, b), a->timestamp_ns, a->event_id, a->payload_len,
                   b->timestamp_ns, b->event_id, b->payload_len);
}

int tl_test_check_events_eq(const tracelog_event *got, size_t ngot, const tracelog_event *want,
                            size_t nwant, const char *file, int line)
{
    size_t i = 0;
    while (i < ngot && i < nwant && tl_test_event_equal(&got[i], &want[i]))
        i++;
    if (i == ngot && i == nwant)
        return verdict(1, file, line, "%s", "");
    if (i < ngot && i < nwant)
        return verdict(0, file, line, "event lists differ at index %zu (of %zu and %zu) in %s", i,
                       ngot, nwant, first_difference(&got[i], &want[i]));
    return verdict(0, file, line, "event lists: %zu events, want %zu (equal up to the shorter)",
                   ngot, nwant);
}

int tl_test_check_kernel_tids_eq(const tracelog_event *got, size_t ngot, const tracelog_event *want,
                                 size_t nwant, const char *file, int line)
{
    if (ngot != nwant)
        return verdict(0, file, line, "kernel tids: %zu events, want %zu", ngot, nwant);
    for (size_t i = 0; i < ngot; i++)
        if (got[i].kernel_tid != want[i].kernel_tid)
            return verdict(0, file, line, "event %zu (of %zu): kernel tid %u, want %u", i, ngot, got[i].kernel_tid,
                           want[i].kernel_tid);
    return verdict(1, file, line, "%s", "");
}

/* ---- deterministic logs ------------------------------------------------------ */

const uint32_t tl_test_type_ids[TL_TEST_NTYPES] = {1, 2, 3, 42, 100000};
const char *const tl_test_type_names[TL_TEST_NTYPES] = {
    "app.start", "app.request", "app.reply", "db.query", "late.defined.type"};

static uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

void tl_test_gen_event(uint64_t seed, uint64_t i, uint32_t payload_max, tracelog_event *ev,
                       uint8_t payload[TL_TEST_PAYLOAD_MAX])
{
    if (payload_max == 0 || payload_max > TL_TEST_PAYLOAD_MAX)
        payload_max = TL_TEST_PAYLOAD_MAX;
    uint64_t h = splitmix64(splitmix64(seed) ^ i);
    uint64_t h2 = splitmix64(h);
    memset(ev, 0, sizeof *ev);
    /* Never decreasing (seek_time relies on it), every fifth equal to the one
       before, and a one-second jump every 500 events. */
    ev->timestamp_ns = TL_TEST_TS_BASE + i * 1000 - (i % 5 == 4 ? 1000 : 0) + (i / 500) * 1000000000ull;
    ev->event_id = tl_test_type_ids[h % TL_TEST_NTYPES];
    ev->pid = (h >> 8) % 16 == 0 ? 0 : 1000 + (uint32_t)((i / 37) % 3);
    switch ((i / 11) % 4) {
    case 0: ev->tid = 0; break;
    case 1: ev->tid = 0x7f0000001000ull + (i / 44) * 0x100; break;
    case 2: ev->tid = 0x7f0000801000ull; break;
    default: ev->tid = UINT64_MAX; break;
    }
    /* Two long-lived thread handles have kernel tids, renewed every 1000
       events as if a new thread had reused the handle; the others none. */
    if ((i / 11) % 4 >= 2)
        ev->kernel_tid = 1 + (uint32_t)(splitmix64(ev->tid ^ ((uint64_t)ev->pid << 40) ^ (i / 1000)) % 4000000);
    uint64_t a = (h >> 16) % 32;
    ev->address = a == 0 ? 0 : a == 1 ? UINT64_MAX : 0x400000 + ((h >> 24) % 64) * 16;
    uint64_t t = (h >> 32) % 9;
    ev->truncation = t < 7 ? TRACELOG_TRUNC_NONE : t == 7 ? TRACELOG_TRUNC_RECORD : TRACELOG_TRUNC_READ;
    ev->payload_len = (uint32_t)(h2 % (payload_max + 1));
    /* Compressible, but different from event to event. */
    for (uint32_t j = 0; j < ev->payload_len; j++)
        payload[j] = (uint8_t)((i + j / 4) ^ (j % 17 == 0 ? (uint8_t)(h2 >> (8 * (j % 8))) : 0));
    ev->payload = payload;
}

void tl_test_gen_events(uint64_t seed, uint64_t first, size_t n, uint32_t payload_max,
                        tl_test_events *l)
{
    uint8_t payload[TL_TEST_PAYLOAD_MAX];
    tracelog_event ev;
    for (size_t k = 0; k < n; k++) {
        tl_test_gen_event(seed, first + k, payload_max, &ev, payload);
        tl_test_events_push(l, &ev);
    }
}

static void set_text(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src);
}

void tl_test_metadata(tracelog_metadata *m, tracelog_policy log_policy, uint64_t log_max_size)
{
    memset(m, 0, sizeof *m);
    set_text(m->trace_name, sizeof m->trace_name, "test trace \xc3\xa9t\xc3\xa9");
    set_text(m->generation_version, sizeof m->generation_version, "tl_test 1.2.3");
    m->creation_time_ns = TL_TEST_TS_BASE - 123456789;
    set_text(m->clock_id, sizeof m->clock_id, "CLOCK_MONOTONIC");
    set_text(m->clock_source, sizeof m->clock_source, "tsc");
    m->clock_resolution_ns = 7;
    m->max_data_size = TL_TEST_PAYLOAD_MAX;
    m->stream_min_size = 123456;
    m->log_max_size = log_policy == TRACELOG_POLICY_APPEND ? 0 : log_max_size;
    m->stream_full_policy = TRACELOG_POLICY_FLUSH;
    m->log_full_policy = log_policy;
    m->inherited = 1;
    set_text(m->hostname, sizeof m->hostname, "host.example");
    set_text(m->os_name, sizeof m->os_name, "TestOS");
    set_text(m->os_release, sizeof m->os_release, "9.8.7-test");
    set_text(m->machine, sizeof m->machine, "test64");
    m->pid = 4242;
    set_text(m->program, sizeof m->program, "/usr/bin/tl-test-program");
}

int tl_test_check_metadata_eq(const tracelog_metadata *a, const tracelog_metadata *b,
                              const char *file, int line)
{
    int ok = 1;
#define TEXT_(f) ok &= tl_test_check_str_eq(a->f, b->f, "a->" #f, "b->" #f, file, line)
#define NUM_(f) ok &= tl_test_check_eq_u64((uint64_t)a->f, (uint64_t)b->f, "a->" #f, "b->" #f, file, line)
    TEXT_(trace_name);
    TEXT_(generation_version);
    NUM_(creation_time_ns);
    TEXT_(clock_id);
    TEXT_(clock_source);
    NUM_(clock_resolution_ns);
    NUM_(max_data_size);
    NUM_(stream_min_size);
    NUM_(log_max_size);
    NUM_(stream_full_policy);
    NUM_(log_full_policy);
    NUM_(inherited);
    TEXT_(hostname);
    TEXT_(os_name);
    TEXT_(os_release);
    TEXT_(machine);
    NUM_(pid);
    TEXT_(program);
#undef TEXT_
#undef NUM_
    return ok;
}

int tl_test_check_status_eq(const tracelog_log_status *a, const tracelog_log_status *b,
                            const char *file, int line)
{
    int ok = 1;
#define NUM_(f) ok &= tl_test_check_eq_u64((uint64_t)a->f, (uint64_t)b->f, "a->" #f, "b->" #f, file, line)
    NUM_(events_recorded);
    NUM_(events_written);
    NUM_(stream_overruns);
    NUM_(log_overruns);
    NUM_(flush_error);
    NUM_(log_full);
    NUM_(types_dropped);
    NUM_(threads_dropped);
#undef NUM_
    return ok;
}

tracelog_writer *tl_test_new_writer(int fd, const tracelog_writer_options *o)
{
    tracelog_writer *w = NULL;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, o, &w, &err), TRACELOG_OK))
        TL_DIE("cannot create a writer: %s", err.message);
    return w;
}

void tl_test_log_spec_init(tl_test_log_spec *s, tracelog_policy policy, size_t n_events)
{
    memset(s, 0, sizeof *s);
    s->policy = policy;
    s->compression_level = 1;
    s->chunk_size = 4096;
    s->log_max_size = 64u << 10;
    s->n_events = n_events;
    s->seed = 1;
}

/* A seekable in-memory output for the writer. */
typedef struct mem_out {
    uint8_t *data;
    size_t len, cap;
} mem_out;

static int mem_grow(mem_out *m, size_t len)
{
    if (len > m->cap) {
        size_t cap = m->cap ? m->cap : 4096;
        while (cap < len)
            cap *= 2;
        uint8_t *p = realloc(m->data, cap);
        if (!p)
            return ENOMEM;
        m->data = p;
        m->cap = cap;
    }
    if (len > m->len) {
        memset(m->data + m->len, 0, len - m->len); /* like the hole of a sparse file */
        m->len = len;
    }
    return 0;
}

static int mem_write(void *ctx, const void *buf, size_t n, uint64_t off)
{
    mem_out *m = ctx;
    if (off == UINT64_MAX)
        off = m->len;
    int e = mem_grow(m, (size_t)off + n);
    if (e)
        return e;
    memcpy(m->data + off, buf, n);
    return 0;
}

static int mem_sync(void *ctx)
{
    (void)ctx;
    return 0;
}

static int mem_truncate(void *ctx, uint64_t len)
{
    mem_out *m = ctx;
    if (len <= m->len) {
        m->len = (size_t)len;
        return 0;
    }
    return mem_grow(m, (size_t)len);
}

static void options_from(const tl_test_log_spec *s, tracelog_writer_options *o)
{
    tracelog_writer_options_init(o);
    o->log_policy = s->policy;
    o->compression_level = s->compression_level;
    if (s->chunk_size)
        o->chunk_size = s->chunk_size;
    o->log_max_size = s->log_max_size;
    o->segment_size = s->segment_size;
    o->durable_size = s->durable_size;
}

static int expect_ok(tracelog_status st, const char *what, int full_ok)
{
    if (st == TRACELOG_OK || (full_ok && st == TRACELOG_E_LOG_FULL))
        return 1;
    return CHECK_MSG(0, "%s returned %s", what, tracelog_status_name(st));
}

/* Everything after create: types, events, flushes, status, close or abandon. */
static int fill_log(tracelog_writer *w, const tl_test_log_spec *s, tl_test_log_result *res)
{
    for (int t = 0; t < TL_TEST_NTYPES - 1; t++)
        if (!expect_ok(tracelog_writer_define_event(w, tl_test_type_ids[t], tl_test_type_names[t]),
                       "define_event", 0))
            goto fail;
    uint8_t payload[TL_TEST_PAYLOAD_MAX];
    for (size_t i = 0; i < s->n_events; i++) {
        if (i == s->n_events / 2 &&
            !expect_ok(tracelog_writer_define_event(w, tl_test_type_ids[TL_TEST_NTYPES - 1],
                                                    tl_test_type_names[TL_TEST_NTYPES - 1]),
                       "define_event", 0))
            goto fail;
        tracelog_event ev;
        tl_test_gen_event(s->seed, i, s->payload_max, &ev, payload);
        tracelog_status st = tracelog_writer_append(w, &ev);
        if (st == TRACELOG_OK)
            res->appended_ok++;
        else if (st == TRACELOG_E_LOG_FULL && s->policy == TRACELOG_POLICY_UNTIL_FULL)
            res->appended_full++;
        else if (!expect_ok(st, "append", 0))
            goto fail;
        if (s->flush_every && (i + 1) % s->flush_every == 0) {
            if (!expect_ok(tracelog_writer_flush(w), "flush", s->policy == TRACELOG_POLICY_UNTIL_FULL))
                goto fail;
            res->flushed_events = i + 1;
        }
    }
    tracelog_log_status st = {0};
    st.events_recorded = s->n_events;
    st.stream_overruns = 3;
    if (!expect_ok(tracelog_writer_set_status(w, &st), "set_status", 0))
        goto fail;
    if (s->abandon) {
        tracelog_writer_get_status(w, &res->status);
        tracelog_writer_abandon(w);
        return 0;
    }
    if (!expect_ok(tracelog_writer_flush(w), "flush", s->policy == TRACELOG_POLICY_UNTIL_FULL))
        goto fail;
    res->flushed_events = s->n_events;
    tracelog_writer_get_status(w, &res->status);
    tracelog_error err;
    res->close_status = tracelog_writer_close(w, &err);
    if (!expect_ok(res->close_status, "close", 0))
        return -1;
    return 0;
fail:
    tracelog_writer_abandon(w);
    return -1;
}

static void start_result(const tl_test_log_spec *s, tl_test_log_result *res)
{
    memset(res, 0, sizeof *res);
    tl_test_metadata(&res->meta, s->policy, s->log_max_size);
}

int tl_test_write_log_fd(int fd, const tl_test_log_spec *s, tl_test_log_result *res)
{
    start_result(s, res);
    tracelog_writer_options o;
    options_from(s, &o);
    tracelog_writer *w;
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(fd, &res->meta, &o, &w, &err);
    if (!CHECK_MSG(st == TRACELOG_OK, "writer_create: %s: %s", tracelog_status_name(st), err.message))
        return -1;
    return fill_log(w, s, res);
}

int tl_test_write_log_mem(const tl_test_log_spec *s, tl_test_log_result *res)
{
    start_result(s, res);
    tracelog_writer_options o;
    options_from(s, &o);
    mem_out *m = calloc(1, sizeof *m);
    if (!m)
        TL_DIE("out of memory");
    tl_io io = {mem_write, mem_sync, mem_truncate, m, 1, NULL};
    tracelog_writer *w;
    tracelog_error err;
    tracelog_status st = tl_writer_create_io(&io, &res->meta, &o, &w, &err);
    int rc = -1;
    if (CHECK_MSG(st == TRACELOG_OK, "writer_create_io: %s: %s", tracelog_status_name(st), err.message))
        rc = fill_log(w, s, res);
    res->bytes = m->data;
    res->len = m->len;
    free(m);
    return rc;
}

void tl_test_log_result_free(tl_test_log_result *res)
{
    free(res->bytes);
    res->bytes = NULL;
    res->len = 0;
}

/* ---- reading ---------------------------------------------------------------- */

/* More events than any test writes: a reader that loops forever is a failure, not a hang. */
#define MAX_EVENTS_READ 10000000u

/* Reads everything from r (opened with out->open_status), then closes it. */
static void read_all(tracelog_reader *r, tl_test_readout *out)
{
    if (out->open_status != TRACELOG_OK) {
        CHECK(r == NULL);
        return;
    }
    tracelog_event ev;
    for (;;) {
        out->next_status = tracelog_reader_next(r, &ev);
        if (out->next_status != TRACELOG_OK)
            break;
        tl_test_events_push(&out->events, &ev);
        if (out->events.n >= MAX_EVENTS_READ) {
            CHECK_MSG(0, "the reader returns more than %u events", MAX_EVENTS_READ);
            break;
        }
    }
    tracelog_reader_get_info(r, &out->info);
    tracelog_reader_get_status(r, &out->status);
    out->meta = *tracelog_reader_metadata(r);
    out->ntypes = tracelog_reader_event_type_count(r);
    out->type_ids = calloc(out->ntypes + 1, sizeof *out->type_ids);
    out->type_names = calloc(out->ntypes + 1, sizeof *out->type_names);
    if (!out->type_ids || !out->type_names)
        TL_DIE("out of memory");
    for (size_t i = 0; i < out->ntypes; i++) {
        const char *name = NULL;
        CHECK_STATUS(tracelog_reader_event_type(r, i, &out->type_ids[i], &name), TRACELOG_OK);
        out->type_names[i] = strdup(name ? name : "(null)");
        if (!out->type_names[i])
            TL_DIE("out of memory");
    }
    out->nproblems = tracelog_reader_problem_count(r);
    out->problems = calloc(out->nproblems + 1, sizeof *out->problems);
    if (!out->problems)
        TL_DIE("out of memory");
    for (size_t i = 0; i < out->nproblems; i++)
        CHECK_STATUS(tracelog_reader_problem(r, i, &out->problems[i]), TRACELOG_OK);
    tracelog_reader_close(r);
}

void tl_test_read_ahead_from_env(tracelog_reader *r)
{
    const char *ahead = getenv("TL_TEST_READ_AHEAD");
    if (!ahead || !*ahead)
        return;
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    CHECK_STATUS(tracelog_reader_set_read_ahead(r, atoi(ahead)), info.seekable ? TRACELOG_OK : TRACELOG_E_NOT_SEEKABLE);
}

void tl_test_read_fd(int fd, const tracelog_reader_options *opt, tl_test_readout *out)
{
    memset(out, 0, sizeof *out);
    tracelog_reader *r = NULL;
    out->open_status = tracelog_reader_open(fd, opt, &r, &out->open_err);
    if (r)
        tl_test_read_ahead_from_env(r);
    read_all(r, out);
}

void tl_test_read_fn(tracelog_read_fn fn, void *ctx, const tracelog_reader_options *opt, tl_test_readout *out)
{
    memset(out, 0, sizeof *out);
    tracelog_reader *r = NULL;
    out->open_status = tracelog_reader_open_read(fn, ctx, opt, &r, &out->open_err);
    read_all(r, out);
}

void tl_test_read_bytes(const void *buf, size_t len, const tracelog_reader_options *opt,
                        tl_test_readout *out)
{
    int fd = tl_test_tmpfd();
    tl_test_fd_set(fd, buf, len);
    tl_test_read_fd(fd, opt, out);
    close(fd);
}

typedef struct pipe_feed {
    int fd;
    const uint8_t *buf;
    size_t len;
} pipe_feed;

static void *feed_pipe(void *arg)
{
    pipe_feed *f = arg;
    size_t done = 0;
    while (done < f->len) {
        ssize_t k = write(f->fd, f->buf + done, f->len - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break; /* the reader stopped reading (EPIPE): nothing more to do */
        done += (size_t)k;
    }
    close(f->fd);
    return NULL;
}

void tl_test_read_bytes_pipe(const void *buf, size_t len, const tracelog_reader_options *opt,
                             tl_test_readout *out)
{
    int p[2];
    signal(SIGPIPE, SIG_IGN);
    if (pipe2(p, O_CLOEXEC))
        TL_DIE("pipe2: %s", strerror(errno));
    pipe_feed f = {p[1], buf, len};
    pthread_t t;
    if (pthread_create(&t, NULL, feed_pipe, &f))
        TL_DIE("pthread_create failed");
    tl_test_read_fd(p[0], opt, out);
    close(p[0]); /* unblocks the feeder if the reader stopped early */
    pthread_join(t, NULL);
}

void tl_test_readout_free(tl_test_readout *out)
{
    tl_test_events_free(&out->events);
    for (size_t i = 0; i < out->ntypes; i++)
        free(out->type_names[i]);
    free(out->type_names);
    free(out->type_ids);
    free(out->problems);
    memset(out, 0, sizeof *out);
}

size_t tl_test_readout_problems(const tl_test_readout *out, int code)
{
    size_t n = 0;
    for (size_t i = 0; i < out->nproblems; i++)
        if (code < 0 || (int)out->problems[i].code == code)
            n++;
    return n;
}

void tl_test_read_thread_seqs(tracelog_reader *r, uint32_t id, uint32_t nthreads, uint32_t len, int suffix,
                              tl_test_thread_seqs *out)
{
    memset(out, 0, sizeof *out);
    if (nthreads > TL_TEST_THREADS_MAX)
        TL_DIE("read_thread_seqs: %u threads, at most %d", nthreads, TL_TEST_THREADS_MAX);
    uint64_t prev = 0;
    tracelog_event ev;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        if (ev.event_id != id)
            continue;
        out->back += ev.timestamp_ns < prev;
        prev = ev.timestamp_ns;
        uint32_t d[2];
        if (ev.payload_len != len || len < sizeof d) {
            out->bad++;
            continue;
        }
        memcpy(d, ev.payload, sizeof d);
        if (d[0] >= nthreads) {
            out->bad++;
            continue;
        }
        if (!out->seen[d[0]] && suffix)
            out->next[d[0]] = d[1];
        out->seen[d[0]] = 1;
        if (d[1] != out->next[d[0]])
            out->bad++;
        else
            out->next[d[0]]++;
    }
}

void tl_test_readout_dump(const tl_test_readout *out)
{
    printf("   open: %s (%s); %zu events, next: %s; %zu problems (info: %" PRIu64 ")\n",
           tracelog_status_name(out->open_status),
           out->open_status == TRACELOG_OK ? "" : out->open_err.message, out->events.n,
           tracelog_status_name(out->next_status), out->nproblems, out->info.problems);
    for (size_t i = 0; i < out->nproblems; i++)
        printf("   problem %s at %" PRIu64 " (+%" PRIu64 "): %s\n",
               tracelog_status_name(out->problems[i].code), out->problems[i].offset,
               out->problems[i].length, out->problems[i].message);
}

/* ---- memory ------------------------------------------------------------------ */

void *tl_test_zeroed_shared(uint64_t size)
{
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        TL_DIE("mmap: %s", strerror(errno));
    return m;
}

/* ---- files ------------------------------------------------------------------- */

int tl_test_tmpfd(void)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/tl_test_XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0)
        TL_DIE("mkstemp(%s): %s", path, strerror(errno));
    unlink(path);
    return fd;
}

void tl_test_fd_set(int fd, const void *buf, size_t len)
{
    if (ftruncate(fd, 0))
        TL_DIE("ftruncate: %s", strerror(errno));
    size_t done = 0;
    while (done < len) {
        ssize_t k = pwrite(fd, (const uint8_t *)buf + done, len - done, (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            TL_DIE("pwrite: %s", strerror(errno));
        done += (size_t)k;
    }
}

uint8_t *tl_test_fd_slurp(int fd, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st))
        TL_DIE("fstat: %s", strerror(errno));
    size_t n = (size_t)st.st_size;
    uint8_t *buf = malloc(n ? n : 1);
    if (!buf)
        TL_DIE("out of memory");
    size_t done = 0;
    while (done < n) {
        ssize_t k = pread(fd, buf + done, n - done, (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            TL_DIE("pread: %s", k < 0 ? strerror(errno) : "short file");
        done += (size_t)k;
    }
    *len = n;
    return buf;
}

/* ---- format walking ---------------------------------------------------------- */

size_t tl_test_scan_blocks(const uint8_t *file, size_t len, tl_test_block **blocks,
                           uint32_t *salt32_out, uint32_t *header_size_out)
{
    tl_file_header h;
    size_t need;
    tracelog_error err;
    if (tl_header_decode(file, len, &h, &need, &err) != TRACELOG_OK)
        TL_DIE("scan_blocks: bad file header: %s", err.message);
    if (h.layout != TL_LAYOUT_SEQUENTIAL)
        TL_DIE("scan_blocks: not a sequential log");
    uint32_t salt32 = tl_salt32(h.salt);
    size_t n = 0, cap = 16;
    tl_test_block *b = malloc(cap * sizeof *b);
    if (!b)
        TL_DIE("out of memory");
    uint64_t pos = h.header_size, events = 0;
    while (pos < len) {
        tl_block_header bh;
        if (len - pos < TL_BLOCK_HEADER_SIZE ||
            tl_block_header_decode(file + pos, salt32, 0, &bh) != TL_BLOCK_OK)
            TL_DIE("scan_blocks: no valid block header at %" PRIu64, pos);
        uint64_t span = tl_block_span(bh.payload_len);
        if (pos + span > len)
            TL_DIE("scan_blocks: block at %" PRIu64 " passes the end", pos);
        const uint8_t *payload = file + pos + TL_BLOCK_HEADER_SIZE;
        if (tl_block_payload_crc(salt32, payload, bh.payload_len) != bh.payload_crc)
            TL_DIE("scan_blocks: bad payload checksum at %" PRIu64, pos);
        if (n == cap) {
            cap *= 2;
            tl_test_block *p = realloc(b, cap * sizeof *p);
            if (!p)
                TL_DIE("out of memory");
            b = p;
        }
        tl_test_block *blk = &b[n++];
        *blk = (tl_test_block){.offset = pos, .type = bh.type, .flags = bh.flags, .seq = bh.seq,
                               .payload_len = bh.payload_len, .span = span, .first_event = events};
        if (bh.type == TL_BLOCK_CHUNK) {
            tl_chunk_header ch;
            if (tl_chunk_header_decode(payload, bh.payload_len, &ch))
                TL_DIE("scan_blocks: bad chunk header at %" PRIu64, pos);
            blk->event_count = ch.event_count;
            blk->codec = ch.codec;
            blk->body_format = ch.body_format;
            blk->chunk_flags = payload[TL_CHUNK_FLAGS_OFFSET];
            events += ch.event_count;
        }
        pos += span;
    }
    if (salt32_out)
        *salt32_out = salt32;
    if (header_size_out)
        *header_size_out = h.header_size;
    *blocks = b;
    return n;
}
