/* The TSC calibration's per-boot file (clock_cache.h). */
#define _GNU_SOURCE
#include "stream/clock_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char magic[8] = {'t', 'l', 't', 's', 'c', '0', '1', '\n'};

/* The file, in this machine's byte order: it never leaves the machine. */
typedef struct file {
    char magic[8];
    char boot_id[TL_BOOT_ID_SIZE];
    uint64_t mult;
    uint64_t window_ns;
    uint32_t shift;
    uint32_t bound_ppb;
    uint64_t check; /* FNV-1a of the bytes before it */
} file;

_Static_assert(sizeof(file) == 80, "the cache file has no padding");

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3u;
    return h;
}

int tl_tsc_cal_plausible(const tl_tsc_cal *c)
{
    /* mult = 2^32 / GHz: 1 MHz is 2^32 * 1000, 100 GHz is 2^32 / 100 */
    return c->mult >= (1ull << TL_TSC_SHIFT) / 100 && c->mult <= (1ull << TL_TSC_SHIFT) * 1000 &&
           c->window_ns >= TL_TSC_MIN_WINDOW_NS && c->window_ns <= 100ull * 366 * 86400 * 1000000000 &&
           c->bound_ppb <= TL_TSC_MAX_BOUND_PPB;
}

int tl_clock_cache_path(char *out, size_t cap)
{
    int n = snprintf(out, cap, "/dev/shm/tracelog.%u.tsc", (unsigned)geteuid());
    return n > 0 && (size_t)n < cap ? 0 : ENAMETOOLONG;
}

int tl_clock_cache_boot_id(char out[TL_BOOT_ID_SIZE])
{
    memset(out, 0, TL_BOOT_ID_SIZE);
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    ssize_t n = read(fd, out, TL_BOOT_ID_SIZE - 1);
    int e = n < 0 ? errno : 0;
    close(fd);
    if (e)
        return e;
    out[strcspn(out, "\n")] = 0;
    return out[0] ? 0 : EIO;
}

int tl_clock_cache_load(const char *path, const char boot_id[TL_BOOT_ID_SIZE], tl_tsc_cal *out)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return errno == ELOOP ? ENOTSUP : errno;
    struct stat st;
    file f;
    int e = 0;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 07777) != 0600 ||
        st.st_size != (off_t)sizeof f)
        e = ENOTSUP;
    else if (pread(fd, &f, sizeof f, 0) != (ssize_t)sizeof f)
        e = EIO;
    close(fd);
    if (e)
        return e;
    if (memcmp(f.magic, magic, sizeof magic) != 0 || memcmp(f.boot_id, boot_id, TL_BOOT_ID_SIZE) != 0)
        return ESTALE;
    tl_tsc_cal c = {f.mult, f.window_ns, f.bound_ppb};
    if (f.check != fnv1a(&f, offsetof(file, check)) || f.shift != TL_TSC_SHIFT || !tl_tsc_cal_plausible(&c))
        return EINVAL;
    *out = c;
    return 0;
}

/* All of f into a new file at tmp, mode 0600 whatever the umask. */
static int write_new(const char *tmp, const file *f)
{
    unlink(tmp); /* left by a process of ours that died here, its pid now ours */
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return errno;
    int e = fchmod(fd, 0600) ? errno : 0;
    if (!e && write(fd, f, sizeof *f) != (ssize_t)sizeof *f)
        e = errno ? errno : ENOSPC;
    if (close(fd) && !e)
        e = errno;
    return e;
}

int tl_clock_cache_store(const char *path, const char boot_id[TL_BOOT_ID_SIZE], const tl_tsc_cal *c)
{
    if (!tl_tsc_cal_plausible(c))
        return EINVAL;
    file f;
    memset(&f, 0, sizeof f);
    memcpy(f.magic, magic, sizeof magic);
    memcpy(f.boot_id, boot_id, TL_BOOT_ID_SIZE);
    f.mult = c->mult;
    f.window_ns = c->window_ns;
    f.shift = TL_TSC_SHIFT;
    f.bound_ppb = c->bound_ppb;
    f.check = fnv1a(&f, offsetof(file, check));
    char tmp[512];
    int n = snprintf(tmp, sizeof tmp, "%s.new.%d", path, (int)getpid());
    if (n < 0 || (size_t)n >= sizeof tmp)
        return ENAMETOOLONG;
    errno = 0;
    int e = write_new(tmp, &f);
    if (!e && rename(tmp, path) != 0)
        e = errno;
    if (e)
        unlink(tmp);
    return e;
}
