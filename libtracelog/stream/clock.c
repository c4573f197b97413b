/*
 * The choice of the timestamp source and the TSC's calibration (clock.h).
 * Calibration: the TSC and CLOCK_MONOTONIC are read together (the TSC
 * around the clock, taking the middle) at load, and again at the first
 * stream that needs them, at least CALIBRATION_NS later (the first stream
 * of a young process waits for the rest of it): over 20 ms, a read
 * uncertainty of about 50 ns makes an error of a few parts per million in
 * the frequency, over the longer time an older process has run, less. A
 * suspend in between (CLOCK_BOOTTIME moved away from CLOCK_MONOTONIC: the
 * counter may have run on or stopped) starts the window again.
 */
#define _GNU_SOURCE
#include "stream/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CALIBRATION_NS 20000000u
#define SHIFT 32u

uint64_t tl_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t realtime_offset(void)
{
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    return ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
}

#if TL_HAVE_TSC
typedef struct pair {
    uint64_t tsc, mono;
    int64_t asleep; /* CLOCK_BOOTTIME - CLOCK_MONOTONIC: the time suspended since boot */
} pair;

static uint64_t boot_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_BOOTTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC and CLOCK_MONOTONIC at the same moment: the best of a few reads (the shortest TSC window). */
static pair read_pair(void)
{
    pair best = {0, 0, 0};
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        uint64_t m = tl_clock_mono_ns();
        uint64_t t1 = __rdtsc();
        if (t1 - t0 < best_width) {
            best_width = t1 - t0;
            best = (pair){t0 + (t1 - t0) / 2, m, 0};
        }
    }
    best.asleep = (int64_t)(boot_ns() - best.mono);
    return best;
}

/* Was the machine suspended between a and b (more than a millisecond)? */
static int suspended_between(const pair *a, const pair *b)
{
    int64_t d = b->asleep - a->asleep;
    return d > 1000000 || d < -1000000;
}

static pair at_load;
__attribute__((constructor)) static void clock_at_load(void) { at_load = read_pair(); }

/* One line of a small text file, without its newline, into buf. 0, or -1. */
static int read_line(const char *path, char *buf, size_t cap)
{
    FILE *f = fopen(path, "re");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)cap, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = 0;
    return 0;
}

static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = strstr(list, word); p; p = strstr(p + 1, word))
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

/* Does the CPU have both flags (the first "flags" line of /proc/cpuinfo)? */
static int cpu_has_stable_tsc(void)
{
    FILE *f = fopen("/proc/cpuinfo", "re");
    if (!f)
        return 0;
    char line[8192];
    int ok = 0;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "flags", 5) == 0) {
            line[strcspn(line, "\n")] = 0;
            ok = has_word(line, "constant_tsc") && has_word(line, "nonstop_tsc");
            break;
        }
    fclose(f);
    return ok;
}

static int kernel_trusts_tsc(void)
{
    char buf[512];
    const char *dir = "/sys/devices/system/clocksource/clocksource0/";
    char path[128];
    snprintf(path, sizeof path, "%scurrent_clocksource", dir);
    if (read_line(path, buf, sizeof buf) == 0 && strcmp(buf, "tsc") == 0)
        return 1;
    snprintf(path, sizeof path, "%savailable_clocksource", dir);
    return read_line(path, buf, sizeof buf) == 0 && has_word(buf, "tsc") && cpu_has_stable_tsc();
}
#endif

static struct {
    int tsc;       /* the process's streams take TSC timestamps */
    uint64_t mult; /* and its calibration */
} chosen;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void choose(void)
{
#if TL_HAVE_TSC
    const char *env = getenv(TL_CLOCK_ENV);
    if (env && strcmp(env, "clock_gettime") == 0)
        return;
    if (!(env && strcmp(env, "tsc") == 0) && !kernel_trusts_tsc())
        return;
    if (at_load.mono == 0) /* a stream made by a constructor that ran before ours */
        at_load = read_pair();
    pair end;
    for (;;) {
        end = read_pair();
        if (suspended_between(&at_load, &end))
            at_load = end;
        if (end.mono - at_load.mono >= CALIBRATION_NS)
            break;
        struct timespec nap = {0, (long)(CALIBRATION_NS - (end.mono - at_load.mono))};
        nanosleep(&nap, NULL);
    }
    uint64_t ticks = end.tsc - at_load.tsc, ns = end.mono - at_load.mono;
    if (ticks == 0)
        return;
    chosen.mult = (uint64_t)(((unsigned __int128)ns << SHIFT) / ticks);
    chosen.tsc = chosen.mult != 0;
#endif
}

void tl_clock_init(tl_clock *c)
{
    pthread_once(&once, choose);
    *c = (tl_clock){.kind = TL_CLOCK_GETTIME, .ns_base = realtime_offset()};
#if TL_HAVE_TSC
    if (!chosen.tsc)
        return;
    pair p = read_pair();
    *c = (tl_clock){.kind = TL_CLOCK_TSC,
                    .shift = SHIFT,
                    .mult = chosen.mult,
                    .tsc_base = p.tsc,
                    .ns_base = (int64_t)p.mono + c->ns_base};
#endif
}

const char *tl_clock_source(const tl_clock *c) { return c->kind == TL_CLOCK_TSC ? "tsc" : "clock_gettime"; }
