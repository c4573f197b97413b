/*
 * Typed event names (include/tracelog/posix.h): tracelog_eventid_open_typed
 * and tracelog_trid_eventid_open_typed give the ids posix_trace_eventid_open
 * gives, refuse malformed schemas (the position through tracelog_schema_parse)
 * and conflicting ones, and every log of the process stores each type's schema
 * (the system events' built-in ones included) so that a reader decodes the
 * recorded structs field by field; a child of fork keeps the schemas.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "format/schema.h"
#include "posix_helpers.h"
#include "tracelog.h"

#define RX_SCHEMA "u32 len; u16 port; char[16] iface; f64 latency; enum8 state {IDLE=0, BUSY=1}"
#define RX_CANONICAL "u32 len; u16 port; char[16] iface; f64 latency; enum8 state {IDLE=0, BUSY=1}"

typedef struct rx {
    uint32_t len;
    uint16_t port;
    char iface[16];
    double latency;
    uint8_t state;
} rx;

/* Same id as posix_trace_eventid_open, in either order; an equal schema again gives it again. */
static void test_same_id_as_untyped(void)
{
    trace_event_id_t typed, plain, again;
    CHECK_ERR(tracelog_eventid_open_typed("typed: rx", RX_SCHEMA, &typed), 0);
    CHECK_ERR(posix_trace_eventid_open("typed: rx", &plain), 0);
    CHECK_EQ(typed, plain);
    CHECK(typed > POSIX_TRACE_UNNAMED_USEREVENT);
    /* Another spelling of the same schema (its canonical form is equal). */
    CHECK_ERR(tracelog_eventid_open_typed("typed: rx", "u32 len;u16   port; char[16] iface;f64 latency;"
                                          " enum8 state { IDLE = 0, BUSY = 1 }", &again), 0);
    CHECK_EQ(again, typed);
    trace_event_id_t other;
    CHECK_ERR(tracelog_eventid_open_typed("typed: other", "u8 x", &other), 0);
    CHECK(other != typed);
    /* The empty schema is a schema: an event without payload. */
    CHECK_ERR(tracelog_eventid_open_typed("typed: empty", "", &other), 0);
}

static void test_conflicts(void)
{
    trace_event_id_t id = 12345, first;
    CHECK_ERR(tracelog_eventid_open_typed("typed: conflict", "u32 a", &first), 0);
    CHECK_ERR(tracelog_eventid_open_typed("typed: conflict", "u32 b", &id), EEXIST);
    CHECK_ERR(tracelog_eventid_open_typed("typed: conflict", "u64 a", &id), EEXIST);
    CHECK_EQ(id, 12345);
    /* A name opened without a schema cannot get one later: logs already name it untyped. */
    trace_event_id_t plain;
    CHECK_ERR(posix_trace_eventid_open("typed: plain first", &plain), 0);
    CHECK_ERR(tracelog_eventid_open_typed("typed: plain first", "u32 a", &id), EEXIST);
    CHECK_EQ(id, 12345);
    /* The first schema still stands. */
    CHECK_ERR(tracelog_eventid_open_typed("typed: conflict", "u32 a", &id), 0);
    CHECK_EQ(id, first);
}

static void test_errors(void)
{
    trace_event_id_t id = 777;
    CHECK_ERR(tracelog_eventid_open_typed(NULL, "u8 a", &id), EINVAL);
    CHECK_ERR(tracelog_eventid_open_typed("typed: e", NULL, &id), EINVAL);
    CHECK_ERR(tracelog_eventid_open_typed("typed: e", "u8 a", NULL), EINVAL);
    char longname[TRACE_EVENT_NAME_MAX + 2];
    memset(longname, 'n', sizeof longname - 1);
    longname[TRACE_EVENT_NAME_MAX + 1] = 0;
    CHECK_ERR(tracelog_eventid_open_typed(longname, "u8 a", &id), ENAMETOOLONG);
    longname[TRACE_EVENT_NAME_MAX] = 0; /* TRACE_EVENT_NAME_MAX characters, without the NUL: fits */
    CHECK_ERR(tracelog_eventid_open_typed(longname, "u8 a", &id), 0);

    /* A malformed schema: EINVAL, and tracelog_schema_parse on the same text gives the position. */
    static const struct {
        const char *schema;
        size_t offset;
    } bad[] = {
        {"u32 len; u33 x", 9},
        {"u32 len; u16 len", 13},
        {"char[] rest; u8 after", 13},
        {"enum8 s {A=0, B=", 16},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        id = 777;
        CHECK_ERR(tracelog_eventid_open_typed("typed: bad", bad[i].schema, &id), EINVAL);
        CHECK_EQ(id, 777);
        tracelog_schema *s = NULL;
        tracelog_error err;
        CHECK(tracelog_schema_parse(bad[i].schema, &s, &err) != TRACELOG_OK);
        CHECK(s == NULL);
        if (!CHECK_EQ(err.offset, bad[i].offset))
            fprintf(stderr, "  schema \"%s\": %s\n", bad[i].schema, err.message);
        CHECK(strstr(err.message, "schema byte") != NULL);
    }
    /* Over a limit: EINVAL too. */
    static char huge[TRACELOG_SCHEMA_TEXT_MAX + 16];
    memset(huge, ' ', sizeof huge - 1);
    memcpy(huge, "u8 a", 4);
    CHECK_ERR(tracelog_eventid_open_typed("typed: bad", huge, &id), EINVAL);
    /* Nothing was registered by the failures: the name takes a schema now. */
    CHECK_ERR(tracelog_eventid_open_typed("typed: bad", "u16 good", &id), 0);
    CHECK(id != 777);
}

static void test_trid_variant(void)
{
    trace_event_id_t id = 5, plain;
    CHECK_ERR(tracelog_trid_eventid_open_typed(0, "typed: trid", "u8 a", &id), EINVAL);
    CHECK_ERR(tracelog_trid_eventid_open_typed(0xdead, "typed: trid", "u8 a", &id), EINVAL);
    CHECK_EQ(id, 5);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "typed: trid", "u8 a", &id), 0);
    CHECK_ERR(posix_trace_eventid_open("typed: trid", &plain), 0);
    CHECK_EQ(id, plain);
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "typed: trid", "i8 a", &id), EEXIST);
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "typed: trid 2", "u8 a;", &id), 0);
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "typed: trid 3", "u8 a; x", &id), EINVAL);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t, plain, name), 0);
    CHECK_STR_EQ(name, "typed: trid");
    pt_shutdown(t);
}

/* Checks a log holding `n` rx events recorded by record_rx(rx_id, i). */
static rx rx_value(uint32_t i)
{
    rx r;
    memset(&r, 0, sizeof r); /* padding too: the log holds the bytes as recorded */
    r.len = 1000 + i;
    r.port = (uint16_t)(443 + i % 3);
    snprintf(r.iface, sizeof r.iface, "eth%u", (unsigned)(i % 2));
    r.latency = 0.25 * i;
    r.state = (uint8_t)(i % 2);
    return r;
}

/* The schema of id in the log at fd, and the fields of its events, through the reader API. */
static void check_log(int fd, trace_event_id_t rx_id, trace_event_id_t late_id, uint32_t n)
{
    tracelog_reader *r;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK))
        return;
    const tracelog_schema *s = tracelog_reader_event_schema(r, rx_id);
    if (CHECK(s != NULL))
        CHECK_STR_EQ(tracelog_schema_text(s), RX_CANONICAL);
    const tracelog_schema *late = tracelog_reader_event_schema(r, late_id);
    if (CHECK(late != NULL))
        CHECK_STR_EQ(tracelog_schema_text(late), "i64 value");
    for (trace_event_id_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++) {
        const tracelog_schema *sys = tracelog_reader_event_schema(r, id);
        if (CHECK(sys != NULL))
            CHECK_STR_EQ(tracelog_schema_text(sys), tl_system_event_schema(id));
    }
    CHECK(tracelog_reader_event_schema(r, POSIX_TRACE_UNNAMED_USEREVENT) == NULL);

    size_t f_len = tracelog_schema_find(s, "len"), f_port = tracelog_schema_find(s, "port");
    size_t f_iface = tracelog_schema_find(s, "iface"), f_lat = tracelog_schema_find(s, "latency");
    size_t f_state = tracelog_schema_find(s, "state");
    uint32_t seen = 0, starts = 0, lates = 0;
    tracelog_event ev;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        if (ev.event_id == POSIX_TRACE_START) {
            tracelog_fields f;
            CHECK_STATUS(tracelog_fields_decode(tracelog_reader_event_schema(r, POSIX_TRACE_START),
                                                ev.payload, ev.payload_len, &f), TRACELOG_OK);
            starts++;
        }
        if (ev.event_id == late_id) {
            tracelog_fields f;
            int64_t v = 0;
            CHECK_STATUS(tracelog_fields_decode(late, ev.payload, ev.payload_len, &f), TRACELOG_OK);
            CHECK_STATUS(tracelog_fields_int(&f, 0, &v), TRACELOG_OK);
            CHECK_EQ(v, -42);
            lates++;
        }
        if (ev.event_id != rx_id || !s)
            continue;
        rx want = rx_value(seen++);
        tracelog_fields f;
        if (!CHECK_STATUS(tracelog_fields_decode(s, ev.payload, ev.payload_len, &f), TRACELOG_OK))
            continue;
        uint64_t u = 0;
        double d = 0;
        const char *text = NULL;
        size_t len = 0;
        char buf[32];
        CHECK_STATUS(tracelog_fields_uint(&f, f_len, &u), TRACELOG_OK);
        CHECK_EQ(u, want.len);
        CHECK_STATUS(tracelog_fields_uint(&f, f_port, &u), TRACELOG_OK);
        CHECK_EQ(u, want.port);
        CHECK_STATUS(tracelog_fields_string(&f, f_iface, &text, &len), TRACELOG_OK);
        CHECK(len == strlen(want.iface) && memcmp(text, want.iface, len) == 0);
        CHECK_STATUS(tracelog_fields_double(&f, f_lat, &d), TRACELOG_OK);
        CHECK(d == want.latency);
        CHECK_STATUS(tracelog_fields_format(&f, f_state, buf, sizeof buf, NULL), TRACELOG_OK);
        CHECK_STR_EQ(buf, want.state ? "BUSY" : "IDLE");
    }
    CHECK_EQ(seen, n);
    CHECK_EQ(starts, 1);
    CHECK_EQ(lates, 1);
    CHECK_EQ(tracelog_reader_problem_count(r), 0);
    tracelog_reader_close(r);
}

/* Records typed events into a stream with log: returns 0 on success. */
static void record_typed_log(int fd, trace_event_id_t rx_id, trace_event_id_t *late_id, uint32_t n,
                             const char *late_name)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    for (uint32_t i = 0; i < n; i++) {
        rx r = rx_value(i);
        posix_trace_event(rx_id, &r, sizeof r);
    }
    /* A type registered while the stream runs: the log gets its schema at the next flush. */
    CHECK_ERR(tracelog_eventid_open_typed(late_name, "i64 value", late_id), 0);
    int64_t v = -42;
    posix_trace_event(*late_id, &v, sizeof v);
    CHECK_ERR(posix_trace_stop(t), 0);
    pt_shutdown(t);
}

static void test_log_holds_schemas(void)
{
    trace_event_id_t rx_id, late_id;
    CHECK_ERR(tracelog_eventid_open_typed("typed: net.rx", RX_SCHEMA, &rx_id), 0);
    int fd = tl_test_tmpfd();
    record_typed_log(fd, rx_id, &late_id, 100, "typed: late");
    check_log(fd, rx_id, late_id, 100);
    close(fd);
}

/* A child of fork keeps the schemas: the same conflicts, and its own logs hold them. */
static void test_fork_keeps_schemas(void)
{
    trace_event_id_t rx_id;
    CHECK_ERR(tracelog_eventid_open_typed("typed: fork rx", RX_SCHEMA, &rx_id), 0);
    fflush(NULL);
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        trace_event_id_t id, late_id;
        int ok = tracelog_eventid_open_typed("typed: fork rx", RX_SCHEMA, &id) == 0 && id == rx_id &&
                 tracelog_eventid_open_typed("typed: fork rx", "u8 x", &id) == EEXIST;
        int fd = tl_test_tmpfd();
        record_typed_log(fd, rx_id, &late_id, 10, "typed: fork late");
        check_log(fd, rx_id, late_id, 10);
        _exit(ok && tl_test_failures() == 0 ? 0 : 1);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* Threads registering the same typed names at once agree on every id, and with the untyped ones. */
#define THREADS 4
#define NAMES 40

static trace_event_id_t thread_ids[THREADS][NAMES];
static int thread_errors[THREADS];

static void *register_names(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (int i = 0; i < NAMES; i++) {
        char name[64];
        snprintf(name, sizeof name, "typed: thread %d", (i + k * 7) % NAMES);
        if (tracelog_eventid_open_typed(name, "u32 n; bool b", &thread_ids[k][(i + k * 7) % NAMES]))
            thread_errors[k]++;
    }
    return NULL;
}

static void test_threads_agree(void)
{
    pthread_t th[THREADS];
    for (int k = 0; k < THREADS; k++)
        CHECK(pthread_create(&th[k], NULL, register_names, (void *)(intptr_t)k) == 0);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    for (int i = 0; i < NAMES; i++) {
        char name[64];
        trace_event_id_t plain;
        snprintf(name, sizeof name, "typed: thread %d", i);
        CHECK_ERR(posix_trace_eventid_open(name, &plain), 0);
        for (int k = 0; k < THREADS; k++)
            CHECK_EQ(thread_ids[k][i], plain);
    }
    for (int k = 0; k < THREADS; k++)
        CHECK_EQ(thread_errors[k], 0);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_same_id_as_untyped);
    PT_RUN(test_conflicts);
    PT_RUN(test_errors);
    PT_RUN(test_trid_variant);
    PT_RUN(test_log_holds_schemas);
    PT_RUN(test_fork_keeps_schemas);
    PT_RUN(test_threads_agree);
    return pt_finish();
}
