/*
 * bench_live: the two ends of the live-reading benchmark (bench/live/run-live.sh).
 *
 *   bench_live emit RATE SECONDS
 *       A traced program: records RATE events per second for SECONDS seconds
 *       (event type "live", paced in 1 ms batches), each carrying in its
 *       payload's first 8 bytes the CLOCK_REALTIME time, in nanoseconds, at
 *       which posix_trace_event was called (live/live_pace.h). Run it under
 *       `ptlog record -o -` (a pipe) or `ptlog record -o FILE` (--follow).
 *
 *   bench_live lat [--json FILE] [--label TEXT] [--from babeltrace2]
 *       Reads `ptlog dump` lines (or babeltrace2's text of bench:event,
 *       lttng_live's) on standard input and, for every "live" line, takes
 *       its arrival time minus the time in its payload: the
 *       event-to-line latency. Prints lines, p50, p99 and max (ms), and the
 *       number of lines, and appends them as one JSON object to FILE.
 *       Exit 1 when no line was seen (the pipeline is broken).
 *
 * The payload is the time the program took just before the call, so a
 * latency also counts the call itself (tens of nanoseconds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "live/live_pace.h"

#define LAT_SAMPLES_MAX (64u << 20) /* latencies kept (512 MiB at most); more are only counted */

static trace_event_id_t live_id;

static void record(const uint64_t payload[2]) { posix_trace_event(live_id, payload, 16); }

static int emit(long rate, double seconds)
{
    if (posix_trace_eventid_open("live", &live_id) != 0) {
        perror("bench_live: posix_trace_eventid_open");
        return 1;
    }
    live_emit(rate, seconds, record);
    return 0;
}

/* The payload of a dump line of "live": 32 hex digits, the first 16 the time, little-endian. */
static int line_time(const char *line, size_t len, uint64_t *t)
{
    const char *p = memmem(line, len, " live ", 6);
    if (!p || (size_t)(line + len - (p + 6)) < 16)
        return 0;
    p += 6;
    uint64_t v = 0;
    for (int byte = 0; byte < 8; byte++) {
        unsigned b = 0;
        for (int k = 0; k < 2; k++) {
            char c = p[2 * byte + k];
            unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0') : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
            if (d == 16)
                return 0;
            b = b << 4 | d;
        }
        v |= (uint64_t)b << (8 * byte);
    }
    *t = v;
    return 1;
}

/* The payload of a babeltrace2 text line of bench:event: "data = [ [0] = 0x65, [1] = 0xB2, ...". */
static int bt2_line_time(const char *line, size_t len, uint64_t *t)
{
    const char *end = line + len, *p = memmem(line, len, " bench:event: ", 14);
    if (!p || !(p = memmem(p, (size_t)(end - p), "data = [", 8)))
        return 0;
    uint64_t v = 0;
    for (int byte = 0; byte < 8; byte++) {
        p = memmem(p, (size_t)(end - p), "= 0x", 4);
        if (!p)
            return 0;
        char *after;
        unsigned long b = strtoul(p + 4, &after, 16);
        if (after == p + 4 || b > 255)
            return 0;
        v |= (uint64_t)b << (8 * byte);
        p = after;
    }
    *t = v;
    return 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int lat(const char *json, const char *label, int bt2)
{
    static char buf[1 << 20];
    size_t have = 0, cap = 1 << 16, n = 0;
    uint64_t total = 0;
    uint64_t *v = malloc(cap * sizeof *v);
    if (!v)
        return 2;
    for (;;) {
        ssize_t k = read(STDIN_FILENO, buf + have, sizeof buf - have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        uint64_t arrived = live_now_ns(CLOCK_REALTIME); /* every line of this read arrived by now */
        have += (size_t)k;
        char *start = buf, *nl;
        while ((nl = memchr(start, '\n', (size_t)(buf + have - start)))) {
            uint64_t t;
            if ((bt2 ? bt2_line_time : line_time)(start, (size_t)(nl - start), &t)) {
                total++;
                if (n == cap && cap < LAT_SAMPLES_MAX) {
                    uint64_t *w = realloc(v, 2 * cap * sizeof *v);
                    if (w) {
                        v = w;
                        cap *= 2;
                    }
                }
                if (n < cap)
                    v[n++] = arrived > t ? arrived - t : 0;
            }
            start = nl + 1;
        }
        have -= (size_t)(start - buf);
        memmove(buf, start, have);
        if (have == sizeof buf) /* a line longer than the buffer: not ours */
            have = 0;
    }
    if (n == 0) {
        fprintf(stderr, "bench_live lat: no \"live\" line on standard input\n");
        free(v);
        return 1;
    }
    qsort(v, n, sizeof *v, cmp_u64);
    double p50 = v[n / 2] / 1e6, p99 = v[(size_t)((double)n * 0.99)] / 1e6, max = v[n - 1] / 1e6;
    printf("%-34s lines %10llu  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n", label, (unsigned long long)total, p50,
           p99, max);
    if (json) {
        FILE *f = fopen(json, "a");
        if (f) {
            fprintf(f, "{\"label\": \"%s\", \"lines\": %llu, \"p50_ms\": %.3f, \"p99_ms\": %.3f, \"max_ms\": %.3f}\n",
                    label, (unsigned long long)total, p50, p99, max);
            fclose(f);
        }
    }
    free(v);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "emit") == 0) {
        long rate = atol(argv[2]);
        double seconds = atof(argv[3]);
        if (rate <= 0 || seconds <= 0) {
            fprintf(stderr, "bench_live emit: RATE and SECONDS must be positive\n");
            return 2;
        }
        return emit(rate, seconds);
    }
    if (argc >= 2 && strcmp(argv[1], "lat") == 0) {
        const char *json = NULL, *label = "latency";
        int bt2 = 0;
        for (int i = 2; i + 1 < argc; i += 2) {
            if (strcmp(argv[i], "--json") == 0)
                json = argv[i + 1];
            else if (strcmp(argv[i], "--label") == 0)
                label = argv[i + 1];
            else if (strcmp(argv[i], "--from") == 0)
                bt2 = strcmp(argv[i + 1], "babeltrace2") == 0;
        }
        return lat(json, label, bt2);
    }
    fprintf(stderr, "usage: bench_live emit RATE SECONDS | bench_live lat [--json FILE] [--label TEXT] [--from babeltrace2]\n");
    return 2;
}
