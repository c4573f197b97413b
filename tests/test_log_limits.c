/*
 * Limits symmetric between writer and reader (format-spec 9.1, issue 14
 * "Names can be lost"): a writer never writes more event types, schema text
 * or thread definitions than a reader with its default options accepts, and
 * what it cannot write is never lost silently: define_event says LIMIT to
 * its caller; thread definitions beyond the limit are counted in the status
 * (threads_dropped) and a reader reports THREADS_DROPPED.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "writer/io.h"
#include "posix_helpers.h"

static tracelog_reader *open_default(int fd)
{
    tracelog_reader *r = NULL;
    if (lseek(fd, 0, SEEK_SET) != 0 || !CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK))
        TL_DIE("cannot read the log back");
    return r;
}

/* How many problems of condition cond r reported. */
static size_t problems_named(const tracelog_reader *r, const char *cond)
{
    size_t n = 0;
    for (size_t i = 0; i < tracelog_reader_problem_count(r); i++)
        n += strcmp(tracelog_reader_problem_condition(r, i), cond) == 0;
    return n;
}

/* 65536 event types are written and read by a default reader; the next one is refused at definition. */
static void test_event_types(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = tl_test_new_writer(fd, NULL);
    char name[32];
    tracelog_status st = TRACELOG_OK;
    uint32_t id;
    for (id = 0; id < TL_LOG_EVENT_TYPES_MAX && st == TRACELOG_OK; id++) {
        snprintf(name, sizeof name, "type %u", id);
        st = tracelog_writer_define_event(w, id, name);
    }
    CHECK_STATUS(st, TRACELOG_OK);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_define_event_schema(w, id, "one too many", NULL, &err), TRACELOG_E_LIMIT);
    CHECK_MSG(strstr(err.message, "65536") != NULL, "the error names the limit: %s", err.message);
    CHECK_STATUS(tracelog_writer_define_event(w, 7, "type 7"), TRACELOG_OK); /* known ids still fine */
    tracelog_event ev = {.timestamp_ns = TL_TEST_TS_BASE, .event_id = TL_LOG_EVENT_TYPES_MAX - 1};
    CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);

    tracelog_reader *r = open_default(fd);
    CHECK_EQ(tracelog_reader_event_type_count(r), TL_LOG_EVENT_TYPES_MAX);
    CHECK_EQ(problems_named(r, "TOO_MANY_EVENT_TYPES"), 0);
    CHECK_STR_EQ(tracelog_reader_event_name(r, TL_LOG_EVENT_TYPES_MAX - 1), "type 65535");
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    CHECK(info.clean);
    tracelog_reader_close(r);
    close(fd);
}

/* A schema of 256 u64 fields with 63-byte names: about 18 KB of canonical text. */
static void big_schema(char *out, size_t cap, unsigned salt)
{
    size_t len = 0;
    for (unsigned f = 0; f < 256; f++)
        len += (size_t)snprintf(out + len, cap - len, "u64 f%03u_%04u_%053u; ", f, salt, 0u);
}

/* Schema text is refused beyond the 4 MiB a default reader keeps; what was accepted reads back whole. */
static void test_schema_bytes(void)
{
    static char schema[24000];
    int fd = tl_test_tmpfd();
    tracelog_writer *w = tl_test_new_writer(fd, NULL);
    tracelog_status st = TRACELOG_OK;
    tracelog_error err;
    uint32_t id;
    char name[32];
    for (id = 1; id < 1000 && st == TRACELOG_OK; id++) {
        big_schema(schema, sizeof schema, id);
        snprintf(name, sizeof name, "typed %u", id);
        st = tracelog_writer_define_event_schema(w, id, name, schema, &err);
    }
    uint32_t accepted = id - 2;
    CHECK_STATUS(st, TRACELOG_E_LIMIT);
    CHECK_MSG(accepted > 200 && accepted < 260, "%u schemas of about 18 KB fit in 4 MiB", accepted);
    CHECK_STATUS(tracelog_writer_define_event(w, id + 1, "untyped still fine"), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);

    tracelog_reader *r = open_default(fd);
    CHECK_EQ(problems_named(r, "TOO_MANY_SCHEMA_BYTES"), 0);
    CHECK_EQ(tracelog_reader_problem_count(r), 0);
    size_t typed = 0;
    for (uint32_t i = 1; i <= accepted; i++)
        typed += tracelog_reader_event_schema(r, i) != NULL;
    CHECK_EQ(typed, accepted);
    tracelog_reader_close(r);
    close(fd);
}

/*
 * 2^20 thread definitions are written and kept by a default reader; the
 * next threads are counted (threads_dropped) and reported, not lost silently.
 */
static void test_threads(void)
{
    const uint32_t extra = 3;
    int fd = tl_test_tmpfd();
    tracelog_writer *w = tl_test_new_writer(fd, NULL);
    CHECK_STATUS(tracelog_writer_define_event(w, 1, "tick"), TRACELOG_OK);
    tracelog_status st = TRACELOG_OK;
    for (uint32_t i = 0; i < TL_LOG_THREADS_MAX + extra && st == TRACELOG_OK; i++) {
        tracelog_event ev = {.timestamp_ns = TL_TEST_TS_BASE + i, .event_id = 1, .pid = 1 + i / 1000,
                             .kernel_tid = 1 + i, .tid = 0x7f0000000000ull + i};
        st = tracelog_writer_append(w, &ev);
        if (i == TL_LOG_THREADS_MAX + extra - 1) /* the last one again: not counted twice */
            st = st == TRACELOG_OK ? tracelog_writer_append(w, &ev) : st;
    }
    CHECK_STATUS(st, TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);

    tracelog_reader *r = open_default(fd);
    CHECK_EQ(tracelog_reader_thread_count(r), TL_LOG_THREADS_MAX);
    CHECK_EQ(problems_named(r, "TOO_MANY_THREADS"), 0);
    CHECK_EQ(problems_named(r, "THREADS_DROPPED"), 1);
    tracelog_log_status s;
    tracelog_reader_get_status(r, &s);
    CHECK_EQ(s.threads_dropped, extra);
    tracelog_event ev;
    uint64_t n = 0, named = 0;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        n++;
        named += ev.kernel_tid == (uint32_t)(ev.tid - 0x7f0000000000ull) + 1;
    }
    CHECK_EQ(n, TL_LOG_THREADS_MAX + extra + 1);
    CHECK_EQ(named, TL_LOG_THREADS_MAX);
    tracelog_reader_close(r);
    close(fd);
}

/* Resident memory of this process, in bytes. */
static uint64_t rss_bytes(void)
{
    unsigned long long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f) {
        if (fscanf(f, "%llu %llu", &size, &resident) != 2)
            resident = 0;
        fclose(f);
    }
    return (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE);
}

static unsigned names_asked;

static void count_names(void *ctx, uint32_t pid, uint64_t tid, uint32_t ktid, char *name, size_t size)
{
    (void)ctx, (void)pid, (void)tid, (void)ktid, (void)name, (void)size;
    names_asked++;
}

/*
 * Past the definitions kept, a thread id made up for every event (a traced
 * process writes its events' thread ids into its controller's writer) is
 * counted, and costs the writer no memory: the thread map grew by 24 bytes
 * an event (958 MB in a 30 s recording).
 */
static void test_threads_made_up(void)
{
    const uint32_t extra = 2000000;
    int fd = tl_test_tmpfd();
    tracelog_writer *w = tl_test_new_writer(fd, NULL);
    CHECK_STATUS(tracelog_writer_define_event(w, 1, "tick"), TRACELOG_OK);
    tracelog_status st = TRACELOG_OK;
    uint64_t before = 0;
    for (uint32_t i = 0; i < TL_LOG_THREADS_MAX + extra && st == TRACELOG_OK; i++) {
        if (i == TL_LOG_THREADS_MAX)
            before = rss_bytes();
        tracelog_event ev = {.timestamp_ns = TL_TEST_TS_BASE + i, .event_id = 1, .pid = 7,
                             .kernel_tid = 1 + i, .tid = 0x100000000ull + i};
        st = tracelog_writer_append(w, &ev);
    }
    CHECK_STATUS(st, TRACELOG_OK);
    uint64_t grown = rss_bytes() - before;
    tracelog_log_status s;
    CHECK_STATUS(tracelog_writer_get_status(w, &s), TRACELOG_OK);
    CHECK_EQ(s.threads_dropped, extra);
    /* Two more threads taking turns, whatever slots they hash to: counted once each, never named. */
    tl_writer_set_thread_namer(w, count_names, NULL);
    for (uint32_t i = 0; i < 20000 && st == TRACELOG_OK; i++) {
        tracelog_event ev = {.timestamp_ns = TL_TEST_TS_BASE + TL_LOG_THREADS_MAX + extra + i, .event_id = 1,
                             .pid = 8, .kernel_tid = 1 + i % 2, .tid = 0x200000000ull + i % 2};
        st = tracelog_writer_append(w, &ev);
    }
    CHECK_STATUS(tracelog_writer_get_status(w, &s), TRACELOG_OK);
    CHECK_EQ(s.threads_dropped, extra + 2);
    CHECK_EQ(names_asked, 0);
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);
    close(fd);
    if (!PT_SANITIZED) /* the sanitizers' own memory */
        CHECK(grown < (16u << 20));
    if (grown >= (16u << 20))
        fprintf(stderr, "test_threads_made_up: the writer grew by %llu bytes for %u made-up threads\n",
                (unsigned long long)grown, extra);
}

int main(void)
{
    TL_TEST_RUN(test_event_types);
    TL_TEST_RUN(test_schema_bytes);
    TL_TEST_RUN(test_threads);
    TL_TEST_RUN(test_threads_made_up);
    return tl_test_finish();
}
