/*
 * The paced emitter of the live benchmark (bench_live emit and, for LTTng,
 * lttng_live): RATE events per second for SECONDS seconds, in 1 ms batches,
 * each event's 16-byte payload the CLOCK_REALTIME time (ns) just before it
 * is recorded, then the batch number. record() records one event.
 */
#ifndef BENCH_LIVE_PACE_H
#define BENCH_LIVE_PACE_H

#include <stdint.h>
#include <time.h>

static inline uint64_t live_now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void live_emit(long rate, double seconds, void (*record)(const uint64_t payload[2]))
{
    const uint64_t batch_ns = 1000000; /* 1 ms */
    uint64_t per_batch = (uint64_t)rate / 1000, extra = (uint64_t)rate % 1000;
    uint64_t start = live_now_ns(CLOCK_MONOTONIC), end = start + (uint64_t)(seconds * 1e9);
    uint64_t owed = 0;
    for (uint64_t b = 0; start + b * batch_ns < end; b++) {
        uint64_t due = start + b * batch_ns, t;
        while ((t = live_now_ns(CLOCK_MONOTONIC)) < due) {
            struct timespec nap = {0, (long)(due - t)};
            nanosleep(&nap, NULL);
        }
        owed += extra;
        uint64_t n = per_batch + owed / 1000;
        owed %= 1000;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t payload[2] = {live_now_ns(CLOCK_REALTIME), b};
            record(payload);
        }
    }
}

#endif
