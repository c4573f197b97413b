/*
 * The TSC calibration's per-boot cache (libtracelog/stream/clock_cache.h,
 * clock.c): what a process finds in /dev/shm/tracelog.<euid>.tsc is used
 * only when it is a regular file of ours, mode 0600, of the right size,
 * magic, boot id and checksum, with plausible values; a file that passes
 * all that but holds a wrong rate is caught by the process's own quick
 * measurement and replaced. Runs on a file in a private directory, never on
 * the user's real cache.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stream/clock.h"
#include "stream/clock_cache.h"
#include "tl_test.h"

#define FILE_SIZE 80
#define CHECK_OFFSET 72 /* the checksum: FNV-1a of the bytes before it */
#define MULT_OFFSET 48

static char dir[] = "/tmp/tl_clock_cache.XXXXXX";
static char path[256];
static char boot[TL_BOOT_ID_SIZE];
static const tl_tsc_cal good = {.mult = 1651910400u, .window_ns = 25000000u, .bound_ppb = 1200};

static void read_file(unsigned char out[FILE_SIZE])
{
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, out, FILE_SIZE) != FILE_SIZE)
        TL_DIE("read %s", path);
    close(fd);
}

/* Writes bytes as the file, mode 0600 (unless chmod'ed after). */
static void write_file(const unsigned char *bytes, size_t n)
{
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || write(fd, bytes, n) != (ssize_t)n)
        TL_DIE("write %s", path);
    close(fd);
}

static void fix_checksum(unsigned char f[FILE_SIZE])
{
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < CHECK_OFFSET; i++)
        h = (h ^ f[i]) * 0x100000001b3u;
    memcpy(f + CHECK_OFFSET, &h, sizeof h);
}

static int load(tl_tsc_cal *out) { return tl_clock_cache_load(path, boot, out); }

static void test_round_trip(void)
{
    tl_tsc_cal got = {0, 0, 0};
    CHECK_EQ_INT(load(&got), ENOENT);
    CHECK_EQ_INT(tl_clock_cache_store(path, boot, &good), 0);
    CHECK_EQ_INT(load(&got), 0);
    CHECK_EQ(got.mult, good.mult);
    CHECK_EQ(got.window_ns, good.window_ns);
    CHECK_EQ(got.bound_ppb, good.bound_ppb);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == FILE_SIZE);
    /* Replaced whole: nothing left under the private name. */
    char tmp[300];
    snprintf(tmp, sizeof tmp, "%s.new.%d", path, (int)getpid());
    CHECK(access(tmp, F_OK) != 0);
}

/* Each way a file can be wrong, and the error that names it. */
static void test_refused(void)
{
    unsigned char f[FILE_SIZE], bad[FILE_SIZE + 1];
    tl_tsc_cal got;
    CHECK_EQ_INT(tl_clock_cache_store(path, boot, &good), 0);
    read_file(f);

    write_file(f, FILE_SIZE - 1);
    CHECK_EQ_INT(load(&got), ENOTSUP);
    memcpy(bad, f, FILE_SIZE);
    bad[FILE_SIZE] = 0;
    write_file(bad, FILE_SIZE + 1);
    CHECK_EQ_INT(load(&got), ENOTSUP);

    write_file(f, FILE_SIZE);
    chmod(path, 0644);
    CHECK_EQ_INT(load(&got), ENOTSUP);

    char target[300];
    snprintf(target, sizeof target, "%s/real", dir);
    write_file(f, FILE_SIZE);
    rename(path, target);
    CHECK(symlink(target, path) == 0);
    CHECK_EQ_INT(load(&got), ENOTSUP);
    unlink(path);
    unlink(target);
    CHECK(mkdir(path, 0700) == 0);
    CHECK_EQ_INT(load(&got), ENOTSUP);
    rmdir(path);

    memcpy(bad, f, FILE_SIZE);
    bad[8] ^= 1; /* another boot's, checksum and all */
    fix_checksum(bad);
    write_file(bad, FILE_SIZE);
    CHECK_EQ_INT(load(&got), ESTALE);
    memcpy(bad, f, FILE_SIZE);
    bad[0] = 'X'; /* another format's */
    fix_checksum(bad);
    write_file(bad, FILE_SIZE);
    CHECK_EQ_INT(load(&got), ESTALE);

    memcpy(bad, f, FILE_SIZE);
    bad[MULT_OFFSET] ^= 0x10; /* a bit flipped: the checksum says so */
    write_file(bad, FILE_SIZE);
    CHECK_EQ_INT(load(&got), EINVAL);
    memset(bad + MULT_OFFSET, 0, 8); /* mult 0, checksum right */
    fix_checksum(bad);
    write_file(bad, FILE_SIZE);
    CHECK_EQ_INT(load(&got), EINVAL);

    write_file(f, FILE_SIZE);
    CHECK_EQ_INT(load(&got), 0);

    /* Nothing implausible is ever written. */
    tl_tsc_cal c = good;
    c.bound_ppb = TL_TSC_MAX_BOUND_PPB + 1;
    CHECK_EQ_INT(tl_clock_cache_store(path, boot, &c), EINVAL);
    c = good;
    c.window_ns = TL_TSC_MIN_WINDOW_NS - 1;
    CHECK_EQ_INT(tl_clock_cache_store(path, boot, &c), EINVAL);
    c = good;
    c.mult = 0;
    CHECK_EQ_INT(tl_clock_cache_store(path, boot, &c), EINVAL);
    CHECK_EQ_INT(load(&got), 0);
    CHECK_EQ(got.mult, good.mult);
}

#if TL_HAVE_TSC
static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The TSC and CLOCK_MONOTONIC together: the narrowest of 20 tries (a preempted one is microseconds off). */
static void read_both(uint64_t *tsc, uint64_t *mono)
{
    uint64_t best = UINT64_MAX;
    *tsc = *mono = 0; /* set by the first try; gcc -O3 cannot tell */
    for (int i = 0; i < 20; i++) {
        uint64_t t0 = __rdtsc(), m = mono_ns(), t1 = __rdtsc();
        if (t1 - t0 < best) {
            best = t1 - t0;
            *tsc = t0 + best / 2;
            *mono = m;
        }
    }
}

/* The TSC's rate in ns per tick * 2^32, measured here over 100 ms (to within 1 ppm). */
static uint64_t true_mult(void)
{
    uint64_t t0, m0, t1, m1;
    read_both(&t0, &m0);
    struct timespec nap = {0, 100000000};
    nanosleep(&nap, NULL);
    read_both(&t1, &m1);
    return (uint64_t)(((unsigned __int128)(m1 - m0) << TL_TSC_SHIFT) / (t1 - t0));
}

static double ppm(uint64_t a, uint64_t b) { return ((double)a - (double)b) / (double)b * 1e6; }

/* Within the documented 2 ppm, plus 1 for the truth's own error. */
static int close_to(uint64_t mult, uint64_t truth)
{
    double limit = TL_TSC_MAX_BOUND_PPB / 1000.0 + 1;
    return ppm(mult, truth) <= limit && ppm(mult, truth) >= -limit;
}

/* A well-formed file of this boot holding a wrong rate is not used, and is replaced. */
static void test_wrong_rate_ignored(void)
{
    uint64_t truth = true_mult();
    tl_tsc_cal wrong = {.mult = truth + truth / 1000, .window_ns = 30000000u, .bound_ppb = 500}; /* 1000 ppm off */
    CHECK_EQ_INT(tl_clock_cache_store(path, boot, &wrong), 0);
    tl_tsc_cal cal;
    CHECK_EQ_INT(tl_clock_tsc_calibrate(path, 1, &cal), TL_CAL_MEASURED);
    CHECK_MSG(close_to(cal.mult, truth), "measured %.2f ppm from the truth",
              ppm(cal.mult, truth));
    CHECK(cal.bound_ppb <= TL_TSC_MAX_BOUND_PPB && cal.window_ns >= TL_TSC_MIN_WINDOW_NS);
    tl_tsc_cal now;
    CHECK_EQ_INT(load(&now), 0);
    CHECK_EQ(now.mult, cal.mult);

    /* Now the file is right: the next process takes it as it is, without waiting. */
    tl_tsc_cal again;
    CHECK_EQ_INT(tl_clock_tsc_calibrate(path, 1, &again), TL_CAL_CACHED);
    CHECK_EQ(again.mult, cal.mult);

    /* Garbage of any other kind: measured again, the file replaced by a good one. */
    unsigned char junk[FILE_SIZE];
    memset(junk, 0xa5, sizeof junk);
    write_file(junk, sizeof junk);
    CHECK_EQ_INT(tl_clock_tsc_calibrate(path, 1, &again), TL_CAL_MEASURED);
    CHECK_MSG(close_to(again.mult, truth), "measured %.2f ppm from the truth",
              ppm(again.mult, truth));
    CHECK_EQ_INT(load(&now), 0);
}
#endif

int main(void)
{
    if (!mkdtemp(dir))
        TL_DIE("mkdtemp");
    snprintf(path, sizeof path, "%s/tracelog.tsc", dir);
    if (tl_clock_cache_boot_id(boot) != 0) {
        printf("no /proc/sys/kernel/random/boot_id: skipped\n");
        return 77;
    }
    TL_TEST_RUN(test_round_trip);
    TL_TEST_RUN(test_refused);
#if TL_HAVE_TSC
    TL_TEST_RUN(test_wrong_rate_ignored);
#endif
    unlink(path);
    rmdir(dir);
    return tl_test_finish();
}
