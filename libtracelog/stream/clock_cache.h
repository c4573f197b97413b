/*
 * The TSC's calibration kept for the rest of the boot (stream/clock.c), so
 * that one process per user and boot measures it and the others start in
 * well under a millisecond: a file of 80 bytes, /dev/shm/tracelog.<euid>.tsc,
 * mode 0600, replaced whole (written under a private name, then renamed).
 *
 * Anything may be in that file (another library version, a planted file, a
 * disk-full cut): it is used only if it is a regular file of ours, mode
 * 0600, of the exact size, with our magic, this boot's id, a matching
 * checksum and values a calibration can have (tl_tsc_cal_plausible); the
 * clock then still checks it against a short measurement of its own.
 */
#ifndef TRACELOG_STREAM_CLOCK_CACHE_H
#define TRACELOG_STREAM_CLOCK_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define TL_TSC_SHIFT 32u                   /* mult's fixed point: ns per tick * 2^32 */
#define TL_TSC_MIN_WINDOW_NS 20000000u     /* a calibration is measured over at least 20 ms */
#define TL_TSC_MAX_BOUND_PPB 2000u         /* and its error bound is at most 2 ppm */
#define TL_BOOT_ID_SIZE 40                 /* /proc/sys/kernel/random/boot_id: 36 characters, NUL-padded */

typedef struct tl_tsc_cal {
    uint64_t mult;      /* ns per tick * 2^TL_TSC_SHIFT */
    uint64_t window_ns; /* CLOCK_MONOTONIC time between its two readings */
    uint32_t bound_ppb; /* the most its rate can differ from CLOCK_MONOTONIC's over the window, in 1e-9 */
} tl_tsc_cal;

/* A counter of 1 MHz to 100 GHz, a window of 20 ms to 100 years, a bound of at most 2 ppm. */
int tl_tsc_cal_plausible(const tl_tsc_cal *c);

/* "/dev/shm/tracelog.<euid>.tsc" into out. 0, or ENAMETOOLONG. */
int tl_clock_cache_path(char *out, size_t cap);

/* This boot's id, NUL-padded. 0 or an errno (no /proc). */
int tl_clock_cache_boot_id(char out[TL_BOOT_ID_SIZE]);

/*
 * The calibration in the file at path, if it is one for boot_id. 0; ENOENT;
 * ENOTSUP (not a regular file of ours with mode 0600 and the right size);
 * ESTALE (another boot's, or another format's); EINVAL (bad checksum or
 * values); or another errno of open/read.
 */
int tl_clock_cache_load(const char *path, const char boot_id[TL_BOOT_ID_SIZE], tl_tsc_cal *out);

/* Replaces the file at path with c, for boot_id (c must be plausible). 0 or an errno. */
int tl_clock_cache_store(const char *path, const char boot_id[TL_BOOT_ID_SIZE], const tl_tsc_cal *c);

#endif
