/*
 * demo: the Quick start's program (README.md). A small order service: three
 * worker threads serve requests, each a slice (request:begin ... request:end)
 * around a database query, all with typed payloads, while the main thread
 * records the queue's depth. Then `ptlog dump` shows named fields per thread,
 * `ptlog info --threads` the summary, and `ptlog convert --to perfetto` draws
 * it in Perfetto UI.
 *
 *   demo [FILE.ptl]     (default demo.ptl; created or truncated)
 *
 * Runs for about 50 ms.
 */
#define _GNU_SOURCE /* pthread_setname_np: the threads' names, where the log keeps them */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include <tracelog.h>

#define WORKERS 3
#define REQUESTS 6 /* per worker */

/* The payloads, and their schemas: the same fields in the same order. */
typedef struct request_begin {
    uint32_t id;
    uint8_t method; /* GET, POST, DELETE */
    char path[23];
} request_begin;
#define REQUEST_BEGIN_SCHEMA "u32 id; enum8 method {GET=0, POST=1, DELETE=2}; char[23] path"

typedef struct request_end {
    uint32_t id;
    uint16_t status;
    uint32_t bytes;
} request_end;
#define REQUEST_END_SCHEMA "u32 id; u16 status; u32 bytes"

typedef struct db_query {
    uint32_t rows;
    uint8_t cached; /* bool */
    double ms;
} db_query;
#define DB_QUERY_SCHEMA "u32 rows; bool cached; f64 ms"

#define QUEUE_SCHEMA "u32 depth"

static trace_event_id_t begin_id, end_id, query_id, queue_id;

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}

static void serve(uint32_t worker, uint32_t n)
{
    static const char *const paths[] = {"/orders", "/orders/42", "/cart", "/login", "/search?q=socks"};
    uint32_t id = worker * 100 + n;
    request_begin b;
    memset(&b, 0, sizeof b); /* the padding too: the log holds the bytes as given */
    b.id = id;
    b.method = (uint8_t)((id * 7) % 3);
    snprintf(b.path, sizeof b.path, "%s", paths[(worker + 2 * n) % 5]);
    posix_trace_event(begin_id, &b, sizeof b);

    db_query q;
    memset(&q, 0, sizeof q);
    q.rows = (id * 13) % 40;
    q.cached = id % 3 == 0;
    pause_us(q.cached ? 100 : 600 + 100 * (long)(id % 5));
    q.ms = q.cached ? 0.1 : 0.6 + 0.1 * (id % 5);
    posix_trace_event(query_id, &q, sizeof q);

    request_end e;
    memset(&e, 0, sizeof e);
    e.id = id;
    e.status = (uint16_t)(id % 11 == 0 ? 500 : b.method == 1 ? 201 : 200);
    e.bytes = 120 + 64 * q.rows;
    pause_us(200);
    posix_trace_event(end_id, &e, sizeof e);
}

static void *worker(void *arg)
{
    uint32_t w = (uint32_t)(uintptr_t)arg;
    char name[16];
    snprintf(name, sizeof name, "worker-%u", w);
    pthread_setname_np(pthread_self(), name);
    for (uint32_t n = 0; n < REQUESTS; n++)
        serve(w, n);
    return NULL;
}

static int run(void)
{
    int e;
    if ((e = tracelog_eventid_open_typed("request:begin", REQUEST_BEGIN_SCHEMA, &begin_id)) ||
        (e = tracelog_eventid_open_typed("request:end", REQUEST_END_SCHEMA, &end_id)) ||
        (e = tracelog_eventid_open_typed("db.query", DB_QUERY_SCHEMA, &query_id)) ||
        (e = tracelog_eventid_open_typed("queue.depth", QUEUE_SCHEMA, &queue_id)))
        return e;
    pthread_t threads[WORKERS];
    uint32_t started = 0;
    for (; started < WORKERS && !e; started++)
        e = pthread_create(&threads[started], NULL, worker, (void *)(uintptr_t)(started + 1));
    if (e)
        started--;
    for (uint32_t depth = 3 * REQUESTS; depth > 0 && !e; depth -= 3) {
        posix_trace_event(queue_id, &depth, sizeof depth);
        pause_us(2000);
    }
    for (uint32_t i = 0; i < started; i++)
        pthread_join(threads[i], NULL);
    return e;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "demo.ptl";
    if (argc > 2) {
        fprintf(stderr, "usage: demo [FILE.ptl]\n");
        return 2;
    }
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "demo: %s: %s\n", path, strerror(errno));
        return 3;
    }
    trace_attr_t attr;
    trace_id_t trid;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "order service demo");
    int e = posix_trace_create_withlog(0, &attr, fd, &trid);
    posix_trace_attr_destroy(&attr);
    if (!e)
        e = posix_trace_start(trid);
    if (!e)
        e = run();
    if (!e)
        e = posix_trace_stop(trid);
    int e2 = posix_trace_shutdown(trid);
    close(fd);
    if (e || e2) {
        fprintf(stderr, "demo: %s: %s\n", path, strerror(e ? e : e2));
        return 3;
    }
    printf("demo: wrote %s: 3 worker threads, %d requests\n", path, WORKERS * REQUESTS);
    return 0;
}
