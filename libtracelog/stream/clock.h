/*
 * Where event timestamps come from: nanoseconds on the CLOCK_REALTIME scale,
 * made either from CLOCK_MONOTONIC plus an offset (clock_gettime through the
 * vDSO), or from the CPU's time-stamp counter with a fixed linear
 * conversion (rdtsc costs a fraction of clock_gettime). A stream carries its
 * clock in its mapping, so every process that records into it or drains it
 * converts the same way (the watermark protocol of stream.h compares
 * producers' and consumer's times).
 *
 * The TSC is used when the kernel says it is stable: its current
 * clocksource is "tsc", or it offers "tsc" and the CPU has constant_tsc and
 * nonstop_tsc. TRACELOG_CLOCK=tsc forces it (on x86 only), and
 * TRACELOG_CLOCK=clock_gettime forbids it; read once per process.
 *
 * TSC conversion, exact and deterministic (format-spec 5.2, clock_calibration):
 *   ns = ns_base + floor((int64)(tsc - tsc_base) * mult / 2^shift)
 * with the rate measured against CLOCK_MONOTONIC over at least 20 ms to
 * within 2 ppm, once per boot and user (cached: clock_cache.h; clock.c says
 * how a process gets it in well under a millisecond), and the base taken
 * against CLOCK_REALTIME when the stream is created. It does not follow
 * later NTP slewing or steps of the system clock.
 */
#ifndef TRACELOG_STREAM_CLOCK_H
#define TRACELOG_STREAM_CLOCK_H

#include <stdint.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TL_HAVE_TSC 1
#else
#define TL_HAVE_TSC 0
#endif

#define TL_CLOCK_ENV "TRACELOG_CLOCK"

#include "stream/clock_cache.h"

enum tl_clock_kind { TL_CLOCK_GETTIME = 0, TL_CLOCK_TSC = 1 };

/* Lives in shared memory: a scribbled value must only make wrong times, never undefined behaviour. */
typedef struct tl_clock {
    uint32_t kind;     /* enum tl_clock_kind; any other value reads as TL_CLOCK_GETTIME */
    uint32_t shift;    /* TSC: used modulo 64 */
    uint64_t mult;     /* TSC: ns per tick * 2^shift */
    uint64_t tsc_base; /* TSC: the counter at ns_base */
    int64_t ns_base;   /* TSC: CLOCK_REALTIME ns at tsc_base; clock_gettime: CLOCK_REALTIME - CLOCK_MONOTONIC */
} tl_clock;

/* Nanoseconds of CLOCK_MONOTONIC. Async-signal-safe (vDSO). */
uint64_t tl_clock_mono_ns(void);

/* A TSC value in ns on the REALTIME scale (c is TSC). */
static inline uint64_t tl_clock_from_tsc(const tl_clock *c, uint64_t tsc)
{
    uint64_t ticks = tsc - c->tsc_base;
    if ((int64_t)ticks >= 0) { /* every stamp after calibration: one unsigned multiplication (same result) */
        unsigned __int128 u = (unsigned __int128)ticks * c->mult;
        return (uint64_t)c->ns_base + (uint64_t)(u >> (c->shift & 63));
    }
    __int128 d = (__int128)(int64_t)ticks * (__int128)c->mult;
    return (uint64_t)c->ns_base + (uint64_t)(int64_t)(d >> (c->shift & 63));
}

/*
 * Stamps: the clock's raw count, what producers store in a record. A TSC
 * clock's stamp is the counter itself: the conversion to nanoseconds (a
 * 128-bit multiplication, 1.5-2 ns of a 24 ns event) is left to the consumer,
 * once per event it hands out (tl_clock_ns). A clock_gettime clock's stamp
 * is already the time in ns. Stamps of one clock order like the times they
 * convert to (the conversion is monotonic).
 */
static inline uint64_t tl_clock_stamp(const tl_clock *c)
{
#if TL_HAVE_TSC
    if (c->kind == TL_CLOCK_TSC)
        return __rdtsc();
#endif
    return tl_clock_mono_ns() + (uint64_t)c->ns_base;
}

/*
 * The stamp now, read after every earlier load and store of this thread has
 * completed (rdtsc alone may run ahead of them): what the consumer's
 * watermark needs, since it must not predate the records it saw complete.
 */
static inline uint64_t tl_clock_stamp_ordered(const tl_clock *c)
{
#if TL_HAVE_TSC
    if (c->kind == TL_CLOCK_TSC) {
        _mm_mfence();
        _mm_lfence();
        return __rdtsc();
    }
#endif
    return tl_clock_mono_ns() + (uint64_t)c->ns_base;
}

/* A stamp of c in ns on the REALTIME scale. */
static inline uint64_t tl_clock_ns(const tl_clock *c, uint64_t stamp)
{
#if TL_HAVE_TSC
    if (c->kind == TL_CLOCK_TSC)
        return tl_clock_from_tsc(c, stamp);
#endif
    return stamp;
}

/* How many stamps of c make ns nanoseconds, at least 1 (a scribbled clock: any value, no undefined behaviour). */
static inline uint64_t tl_clock_stamps_in(const tl_clock *c, uint64_t ns)
{
#if TL_HAVE_TSC
    if (c->kind == TL_CLOCK_TSC && c->mult) {
        unsigned __int128 t = ((unsigned __int128)ns << (c->shift & 63)) / c->mult;
        return t > UINT64_MAX ? UINT64_MAX : t ? (uint64_t)t : 1;
    }
#endif
    return ns ? ns : 1;
}

/* The time now on c's scale, in ns, ordered as tl_clock_stamp_ordered. Async-signal-safe, no system call. */
static inline uint64_t tl_clock_now_ordered(const tl_clock *c) { return tl_clock_ns(c, tl_clock_stamp_ordered(c)); }

/* A clock for a new stream: the process's choice of source, its base taken now. */
void tl_clock_init(tl_clock *c);

#if TL_HAVE_TSC
enum { TL_CAL_NONE, TL_CAL_CACHED, TL_CAL_MEASURED };
/*
 * The TSC's calibration, taken from the cache file at path if it holds one
 * this process's own quick measurement agrees with (TL_CAL_CACHED), else
 * measured over this process's life since the library was loaded, if that
 * is long enough, and offered to the cache (TL_CAL_MEASURED); with wait,
 * sleeps until it is long enough, else TL_CAL_NONE.
 */
int tl_clock_tsc_calibrate(const char *path, int wait, tl_tsc_cal *out);
#endif

/* The name of c's source, as METADATA's clock_source says it: "tsc" or "clock_gettime". */
const char *tl_clock_source(const tl_clock *c);

#endif
