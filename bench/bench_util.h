/*
 * bench_util.h - helpers shared by the recording benchmarks: bench_event.c
 * (tracelog) and lttng/lttng_event.c (LTTng-UST), so that both time, pin,
 * pace and generate their events the same way. Header-only (static
 * functions): bench/CMakeLists.txt builds each bench .c file on its own, and the
 * LTTng program is built by bench/lttng/run-lttng.sh.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- time ----------------------------------------------------------------- */

static inline uint64_t bu_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time of the calling thread: with wall time, tells whether another process took our CPU. */
static inline uint64_t bu_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- CPUs ----------------------------------------------------------------- */

/* Pins the calling thread to one CPU. 0, or an errno. */
static inline int bu_pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) ? errno : 0;
}

/* Lets the calling thread run on either of two CPUs (the scheduler places it). 0, or an errno. */
static inline int bu_pin_either(int a, int b)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(a, &set);
    CPU_SET(b, &set);
    return sched_setaffinity(0, sizeof set, &set) ? errno : 0;
}

/*
 * The two CPUs the benchmark uses: the last two the process may run on
 * (*a: the producer; *b: the second producer, and the flusher or the
 * consumer daemon). Returns how many CPUs are allowed.
 */
static inline int bu_two_cpus(int *a, int *b)
{
    cpu_set_t set;
    int n = 0, last = -1, prev = -1;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &set)) {
                prev = last;
                last = c;
                n++;
            }
        }
    }
    *a = last >= 0 ? last : 0;
    *b = prev >= 0 ? prev : *a;
    return n;
}

/* ---- statistics ------------------------------------------------------------ */

typedef struct bu_summary {
    double median, min, max;
} bu_summary;

static int bu_cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static inline bu_summary bu_summarize(const double *v, int n)
{
    bu_summary s = {0, 0, 0};
    if (n <= 0)
        return s;
    double sorted[64];
    if (n > 64)
        n = 64;
    memcpy(sorted, v, sizeof *v * (size_t)n);
    qsort(sorted, (size_t)n, sizeof *sorted, bu_cmp_double);
    s.min = sorted[0];
    s.max = sorted[n - 1];
    s.median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    return s;
}

/* ---- the events ----------------------------------------------------------- */

/*
 * Payloads: what instrumentation usually records, 16 bytes at a time (a
 * 32-bit sequence number, a 32-bit small value, a 64-bit pointer among a
 * few thousand objects), from a per-thread xorshift generator. Constant
 * payloads would flatter compressing formats, random ones would be
 * unrealistic; the same generator feeds tracelog and LTTng, so both record
 * the same bytes. Costs about a nanosecond per event, in both.
 */
typedef struct bu_gen {
    uint64_t x;
    uint32_t seq;
    unsigned char buf[256];
} bu_gen;

static inline void bu_gen_init(bu_gen *g, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->x = seed * 0x9E3779B97F4A7C15ull + 1;
}

/* Fills the first len (<= 256) bytes of g->buf for the next event and returns it. */
static inline const unsigned char *bu_gen_next(bu_gen *g, size_t len)
{
    uint64_t x = g->x;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    g->x = x;
    uint32_t seq = g->seq++;
    uint32_t small = (uint32_t)(x >> 54);                           /* 0..1023 */
    uint64_t ptr = 0x55d0c4a00000ull + ((x >> 20) & 0xfff) * 64; /* one of 4096 objects */
    for (size_t off = 0; off < len; off += 16) {
        uint32_t g32 = (uint32_t)(off / 16);
        uint32_t a = seq + g32, b = small ^ g32;
        uint64_t p = ptr + off / 2;
        memcpy(g->buf + off, &a, 4);
        memcpy(g->buf + off + 4, &b, 4);
        memcpy(g->buf + off + 8, &p, 8);
    }
    return g->buf;
}

/*
 * The timed cost loops take their payloads from a table of BU_TABLE_SIZE
 * generated payloads (cycled), so that the loop itself costs about a
 * nanosecond; the runs whose bytes go to disk (sustained rates, generated
 * logs) call bu_gen_next() for every event instead, so that no payload
 * repeats.
 */
#define BU_TABLE_SIZE 4096
typedef unsigned char bu_payload[256];

static inline bu_payload *bu_table_new(uint64_t seed)
{
    bu_payload *t = malloc(sizeof(bu_payload) * BU_TABLE_SIZE);
    if (!t)
        return NULL;
    bu_gen g;
    bu_gen_init(&g, seed);
    for (int i = 0; i < BU_TABLE_SIZE; i++)
        memcpy(t[i], bu_gen_next(&g, 256), 256);
    return t;
}

/* ---- pacing ---------------------------------------------------------------- */

/*
 * Paced recording: events go out in groups of BU_PACE_GROUP, then the
 * thread spins on CLOCK_MONOTONIC until the group's due time (t0 + i/rate).
 * Reading the clock once per group keeps the pacing cost under 2 ns per
 * event; a producer slower than the rate never spins (it is then reported
 * below the target rate).
 */
#define BU_PACE_GROUP 16

static inline void bu_pace(uint64_t t0, uint64_t done, double rate_per_ns)
{
    uint64_t due = t0 + (uint64_t)((double)done / rate_per_ns);
    while (bu_now_ns() < due)
        __asm__ __volatile__("pause");
}

/* ---- arguments -------------------------------------------------------------- */

/* "10M", "100k", "2500": a count; -1 if invalid. */
static inline long long bu_parse_count(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || v < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v *= 1e3, end++;
    else if (*end == 'M' || *end == 'm')
        v *= 1e6, end++;
    else if (*end == 'G' || *end == 'g')
        v *= 1e9, end++;
    if (*end || v > 1e15)
        return -1;
    return (long long)v;
}

#endif
