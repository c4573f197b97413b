/*
 * typed_only: a traced program that opens only typed event ids (no
 * posix_trace_eventid_open), for test_ptlog_record_typed: a controller must
 * be able to find and attach to it (issue 26 item 2) and read its schemas.
 * It records one job.submit and one job.done event about every millisecond
 * from two threads, for SECONDS seconds.
 *
 *   typed_only SECONDS
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <trace.h>
#include <tracelog.h>

#define SUBMIT_SCHEMA "u32 job; enum8 prio {LOW=0, HIGH=1}; f64 cost"
#define DONE_SCHEMA "u32 job; i32 status"

struct submit {
    uint32_t job;
    uint8_t prio;
    uint8_t pad[3];
    double cost;
};
struct done {
    uint32_t job;
    int32_t status;
};

static trace_event_id_t submit_id, done_id;
static double seconds;

static void *worker(void *arg)
{
    uint32_t base = (uint32_t)(uintptr_t)arg * 1000000u;
    struct timespec t0, now, ms = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (uint32_t i = 0;; i++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if ((double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
            return NULL;
        struct submit s = {.job = base + i, .prio = (uint8_t)(i % 2), .cost = i / 8.0};
        struct done d = {.job = base + i, .status = (int32_t)(i % 3) - 1};
        posix_trace_event(submit_id, &s, sizeof s);
        posix_trace_event(done_id, &d, sizeof d);
        nanosleep(&ms, NULL);
    }
}

int main(int argc, char **argv)
{
    seconds = argc == 2 ? atof(argv[1]) : 0;
    if (seconds <= 0) {
        fprintf(stderr, "usage: typed_only SECONDS\n");
        return 2;
    }
    if (tracelog_eventid_open_typed("job.submit", SUBMIT_SCHEMA, &submit_id) != 0 ||
        tracelog_eventid_open_typed("job.done", DONE_SCHEMA, &done_id) != 0) {
        fprintf(stderr, "typed_only: tracelog_eventid_open_typed failed\n");
        return 1;
    }
    pthread_t t[2];
    for (uintptr_t i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return 0;
}
