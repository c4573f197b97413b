/*
 * online_analyzer: analysis while tracing. Worker threads record events
 * into a stream without log; an analyzer thread reads them as they come with
 * posix_trace_timedgetnext_event and keeps a running latency statistic of
 * "work:begin"/"work:end" pairs per thread.
 *
 *   online_analyzer [ITEMS_PER_THREAD]   (default 20000)
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>

#define WORKERS 4

static trace_event_id_t ev_begin, ev_end;
static trace_id_t trid;
static long items;
static volatile int workers_done;

static void *worker(void *arg)
{
    (void)arg;
    for (long i = 0; i < items; i++) {
        posix_trace_event(ev_begin, &i, sizeof i);
        struct timespec work = {0, 1000}; /* a short piece of work between begin and end */
        nanosleep(&work, NULL);
        posix_trace_event(ev_end, &i, sizeof i);
    }
    return NULL;
}

typedef struct pending {
    pthread_t thread;
    struct timespec begin;
} pending;

static void *analyzer(void *arg)
{
    (void)arg;
    pending open[WORKERS] = {0};
    double total_ns = 0, max_ns = 0;
    unsigned long pairs = 0, events = 0, lost_marks = 0;
    for (;;) {
        struct posix_trace_event_info info;
        long value;
        size_t len;
        int unavailable;
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_nsec += 50000000; /* 50 ms */
        if (deadline.tv_nsec >= 1000000000) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000;
        }
        int e = posix_trace_timedgetnext_event(trid, &info, &value, sizeof value, &len, &unavailable, &deadline);
        if (e == ETIMEDOUT && workers_done)
            break;
        if (e || unavailable)
            continue;
        events++;
        if (info.posix_event_id == POSIX_TRACE_OVERFLOW)
            lost_marks++;
        for (int w = 0; w < WORKERS; w++) {
            pending *p = &open[w];
            if (info.posix_event_id == ev_begin && (p->thread == 0 || pthread_equal(p->thread, info.posix_thread_id))) {
                p->thread = info.posix_thread_id;
                p->begin = info.posix_timestamp;
                break;
            }
            if (info.posix_event_id == ev_end && pthread_equal(p->thread, info.posix_thread_id)) {
                double ns = (double)(info.posix_timestamp.tv_sec - p->begin.tv_sec) * 1e9 +
                            (double)(info.posix_timestamp.tv_nsec - p->begin.tv_nsec);
                total_ns += ns;
                max_ns = ns > max_ns ? ns : max_ns;
                pairs++;
                break;
            }
        }
    }
    printf("analyzed %lu events online: %lu work items, mean %.0f ns, max %.0f ns, %lu overflow marks\n",
           events, pairs, pairs ? total_ns / (double)pairs : 0.0, max_ns, lost_marks);
    return NULL;
}

int main(int argc, char **argv)
{
    items = argc > 1 ? atol(argv[1]) : 20000;
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setstreamsize(&attr, 16u << 20);
    posix_trace_eventid_open("work:begin", &ev_begin);
    posix_trace_eventid_open("work:end", &ev_end);
    int e = posix_trace_create(0, &attr, &trid);
    if (e) {
        fprintf(stderr, "online_analyzer: posix_trace_create: %s\n", strerror(e));
        return 1;
    }
    posix_trace_start(trid);
    pthread_t reader, workers[WORKERS];
    pthread_create(&reader, NULL, analyzer, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_create(&workers[i], NULL, worker, NULL);
    for (int i = 0; i < WORKERS; i++)
        pthread_join(workers[i], NULL);
    workers_done = 1;
    pthread_join(reader, NULL);
    struct posix_trace_status_info st;
    posix_trace_get_status(trid, &st);
    printf("stream overrun: %s\n", st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "yes" : "no");
    posix_trace_shutdown(trid);
    return 0;
}
