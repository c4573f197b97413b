/*
 * The choice of the timestamp source and the TSC's calibration (clock.h).
 *
 * Calibration: the TSC's rate against CLOCK_MONOTONIC, from two readings of
 * both (the TSC read around the clock: the clock's own read of the counter
 * lies in that window) at least 20 ms apart, kept only if its error bound
 * (rate_between) is at most 2 ppm. Measuring it costs 20 ms of waiting, so it
 * is measured once per boot and user, and kept in a file (clock_cache.h):
 *
 * - at a stream's creation, a cached calibration is used if a quick
 *   measurement of this process (from library load to now, at least 0.2 ms)
 *   agrees with it to within both bounds plus 20 ppm (what NTP may have
 *   changed since): a file that passed every other check but holds a wrong
 *   rate is ignored;
 * - else, if the process has lived 20 ms since load, its own window gives
 *   the calibration, and it goes into the cache;
 * - else the stream takes clock_gettime timestamps (exact, ~5 ns more per
 *   event), and the process tries again at its next stream; with
 *   TRACELOG_CLOCK=tsc it waits for the rest of the 20 ms instead (up to
 *   1 s if the readings are slow, then takes clock_gettime);
 * - at exit, a process that lived long enough leaves its own calibration in
 *   the cache if none is there, or if its bound is at most half the cached
 *   one's: the cache gets better over the boot.
 *
 * Rejected (bench/README.md, "the TSC clock's start-up"): the kernel's own
 * conversion through perf_event_open's mmap page (cap_user_time is 0 in this
 * KVM guest, whose sched_clock is kvm-clock's, and perf_event_paranoid or a
 * seccomp filter may forbid the call); CPUID leaf 0x15 (zeros here) and the
 * hypervisor leaf 0x40000010 (not offered by KVM); a short calibration
 * alone (0.5 ms gives 100 ppm); refining a stream's rate while it records
 * (the log's one clock_calibration could not describe it).
 *
 * A suspend between two readings (CLOCK_BOOTTIME moved away from
 * CLOCK_MONOTONIC: the counter may have run on or stopped) starts the
 * window again.
 */
#define _GNU_SOURCE
#include "stream/clock.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "stream/clock_cache.h"

#define CHECK_NS 200000u          /* a cached calibration is checked over at least this window */
#define CHECK_MAX_PPB 1000000u    /* whose own bound must be under 1000 ppm */
#define CHECK_SLACK_PPB 20000u    /* and agree to within both bounds plus 20 ppm */
#define MAX_WAIT_NS 1000000000u   /* TRACELOG_CLOCK=tsc waits at most 1 s for a calibration */

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
    uint64_t width; /* ticks between the two TSC reads around the clock's */
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
    pair best = {0, 0, 0, 0};
    uint64_t best_width = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t t0 = __rdtsc();
        uint64_t m = tl_clock_mono_ns();
        uint64_t t1 = __rdtsc();
        if (t1 - t0 < best_width) {
            best_width = t1 - t0;
            best = (pair){t0 + (t1 - t0) / 2, m, t1 - t0, 0};
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

/* ---- calibration: the TSC's rate against CLOCK_MONOTONIC ---- */

/*
 * The rate between two readings, with its error bound: where the vDSO read
 * the counter inside each reading's window is unknown (half the window
 * either way), plus 1 ns for its truncation. -1 if the readings are unusable.
 */
static int rate_between(const pair *a, const pair *b, tl_tsc_cal *out)
{
    if (b->tsc <= a->tsc || b->mono <= a->mono)
        return -1;
    uint64_t ticks = b->tsc - a->tsc, ns = b->mono - a->mono;
    uint64_t err_ns = (uint64_t)(((unsigned __int128)(a->width + b->width) / 2 * ns) / ticks) + 2;
    unsigned __int128 ppb = (unsigned __int128)err_ns * 1000000000u / ns;
    *out = (tl_tsc_cal){.mult = (uint64_t)(((unsigned __int128)ns << TL_TSC_SHIFT) / ticks),
                        .window_ns = ns,
                        .bound_ppb = ppb > UINT32_MAX ? UINT32_MAX : (uint32_t)ppb};
    return 0;
}

/* Do a and b differ by less than their bounds plus CHECK_SLACK_PPB? */
static int agree(const tl_tsc_cal *a, const tl_tsc_cal *b)
{
    uint64_t d = a->mult > b->mult ? a->mult - b->mult : b->mult - a->mult;
    unsigned __int128 ppb = (unsigned __int128)d * 1000000000u / a->mult;
    return ppb <= (unsigned __int128)a->bound_ppb + b->bound_ppb + CHECK_SLACK_PPB;
}

/* A reading now, at_load's restarted if the machine was suspended since (the counter may have stopped). */
static pair reading_now(void)
{
    if (at_load.mono == 0) /* a stream made by a constructor that ran before ours */
        at_load = read_pair();
    pair now = read_pair();
    if (suspended_between(&at_load, &now))
        at_load = now;
    return now;
}

/* The cached calibration, if this process's own short measurement agrees with it. */
static int from_cache(const char *path, const char *boot, tl_tsc_cal *out)
{
    tl_tsc_cal cached, quick;
    if (tl_clock_cache_load(path, boot, &cached))
        return -1;
    pair now = reading_now();
    while (now.mono - at_load.mono < CHECK_NS)
        now = reading_now();
    if (rate_between(&at_load, &now, &quick) || quick.bound_ppb > CHECK_MAX_PPB)
        return -1;
    if (!agree(&cached, &quick))
        return -1;
    *out = cached;
    return 0;
}

/*
 * Leaves c in the cache unless the calibration there is as good (its bound
 * at most twice c's) and agrees with c. Errors are ignored: the cache only
 * saves time.
 */
static void offer(const char *path, const char *boot, const tl_tsc_cal *c)
{
    tl_tsc_cal there;
    if (tl_clock_cache_load(path, boot, &there) == 0 && there.bound_ppb <= 2 * (uint64_t)c->bound_ppb &&
        agree(&there, c))
        return;
    tl_clock_cache_store(path, boot, c);
}

/* This process's own calibration, from load until now, if the window is long enough. */
static int from_own_window(tl_tsc_cal *out)
{
    pair now = reading_now();
    return rate_between(&at_load, &now, out) == 0 && tl_tsc_cal_plausible(out) ? 0 : -1;
}

int tl_clock_tsc_calibrate(const char *path, int wait, tl_tsc_cal *out)
{
    char boot[TL_BOOT_ID_SIZE];
    int have_boot = tl_clock_cache_boot_id(boot) == 0;
    if (have_boot && from_cache(path, boot, out) == 0)
        return TL_CAL_CACHED;
    uint64_t start = tl_clock_mono_ns();
    while (from_own_window(out) != 0) {
        /* Readings slower than the vDSO's (a bound over 2 ppm at 20 ms) need a longer window: up to MAX_WAIT_NS. */
        uint64_t now = tl_clock_mono_ns(), age = now - at_load.mono;
        if (!wait || now - start > MAX_WAIT_NS)
            return TL_CAL_NONE;
        struct timespec nap = {0, age < TL_TSC_MIN_WINDOW_NS ? (long)(TL_TSC_MIN_WINDOW_NS - age) : 1000000};
        nanosleep(&nap, NULL);
    }
    if (have_boot)
        offer(path, boot, out);
    return TL_CAL_MEASURED;
}

/* At exit: a process that lived longer than the cache's window leaves a better calibration. */
static void refine_cache(void)
{
    char path[128], boot[TL_BOOT_ID_SIZE];
    tl_tsc_cal mine;
    if (tl_clock_cache_path(path, sizeof path) || tl_clock_cache_boot_id(boot) || from_own_window(&mine))
        return;
    offer(path, boot, &mine);
}
#endif

enum { UNDECIDED, WANTED, CALIBRATED, NEVER };

/* The process's choice, decided at its first stream and calibrated at the first one that can be. */
static struct {
    pthread_mutex_t lock;
    int state;
    int forced; /* TRACELOG_CLOCK=tsc: wait for a calibration rather than take clock_gettime */
    uint64_t mult;
} chosen = {PTHREAD_MUTEX_INITIALIZER, UNDECIDED, 0, 0};

/* fork() waits for a calibration in progress: a child must not inherit the lock taken. */
static void lock_chosen(void) { pthread_mutex_lock(&chosen.lock); }
static void unlock_chosen(void) { pthread_mutex_unlock(&chosen.lock); }
__attribute__((constructor)) static void clock_fork_handlers(void)
{
    pthread_atfork(lock_chosen, unlock_chosen, unlock_chosen);
}

#if TL_HAVE_TSC
static int wants_tsc(int *forced)
{
    const char *env = getenv(TL_CLOCK_ENV);
    *forced = env && strcmp(env, "tsc") == 0;
    if (env && strcmp(env, "clock_gettime") == 0)
        return 0;
    return *forced || kernel_trusts_tsc();
}
#endif

/* The mult of the process's TSC calibration, or 0: this stream takes clock_gettime. */
static uint64_t process_mult(void)
{
    pthread_mutex_lock(&chosen.lock);
#if TL_HAVE_TSC
    if (chosen.state == UNDECIDED)
        chosen.state = wants_tsc(&chosen.forced) ? WANTED : NEVER;
    char path[128];
    tl_tsc_cal cal;
    if (chosen.state == WANTED && tl_clock_cache_path(path, sizeof path) == 0 &&
        tl_clock_tsc_calibrate(path, chosen.forced, &cal) != TL_CAL_NONE) {
        chosen.mult = cal.mult;
        chosen.state = CALIBRATED;
    }
#endif
    uint64_t mult = chosen.state == CALIBRATED ? chosen.mult : 0;
    pthread_mutex_unlock(&chosen.lock);
    return mult;
}

#if TL_HAVE_TSC
__attribute__((destructor)) static void clock_at_exit(void)
{
    pthread_mutex_lock(&chosen.lock);
    if (chosen.state == WANTED || chosen.state == CALIBRATED)
        refine_cache();
    pthread_mutex_unlock(&chosen.lock);
}
#endif

void tl_clock_init(tl_clock *c)
{
    uint64_t mult = process_mult();
    *c = (tl_clock){.kind = TL_CLOCK_GETTIME, .ns_base = realtime_offset()};
#if TL_HAVE_TSC
    if (mult == 0)
        return;
    pair p = read_pair();
    *c = (tl_clock){.kind = TL_CLOCK_TSC,
                    .shift = TL_TSC_SHIFT,
                    .mult = mult,
                    .tsc_base = p.tsc,
                    .ns_base = (int64_t)p.mono + c->ns_base};
#endif
}

const char *tl_clock_source(const tl_clock *c) { return c->kind == TL_CLOCK_TSC ? "tsc" : "clock_gettime"; }
