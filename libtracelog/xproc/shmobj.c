/* Safe creation and opening of named shared-memory objects (see shmobj.h). */
#include "xproc/shmobj.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"

/*
 * "/dev/shm" + name, or EINVAL for a name that is not one plain component.
 * No snprintf: the traced process opens buffers from posix_trace_event,
 * maybe in a signal handler.
 */
static int shm_path(const char *name, char *out, size_t cap)
{
    size_t n = name ? strnlen(name, TL_SHM_NAME_MAX) : TL_SHM_NAME_MAX;
    if (n >= TL_SHM_NAME_MAX || name[0] != '/' || memchr(name + 1, '/', n - 1) || sizeof SHM_DIR + n > cap)
        return EINVAL;
    memcpy(out, SHM_DIR, sizeof SHM_DIR - 1);
    memcpy(out + sizeof SHM_DIR - 1, name, n + 1);
    return 0;
}

/*
 * ftruncate with SIGXFSZ blocked: a size over RLIMIT_FSIZE (tmpfs counts it)
 * is EFBIG, never the death of the process; the signal it raised is discarded.
 */
static int truncate_to(int fd, uint64_t size)
{
    sigset_t xfsz, old;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    sigset_t pending;
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &old);
    int e = ftruncate(fd, (off_t)size) ? errno : 0;
    struct timespec zero = {0, 0};
    if (e == EFBIG && !was_pending)
        sigtimedwait(&xfsz, NULL, &zero);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return e;
}

int tl_shmobj_create(const char *name, uint64_t size, uint32_t owner_uid, uint32_t owner_gid, int *fd)
{
    char path[sizeof SHM_DIR + TL_SHM_NAME_MAX];
    int e = shm_path(name, path, sizeof path);
    if (e)
        return e;
    if (size > (uint64_t)INT64_MAX)
        return ENOMEM;
    int f = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (f < 0)
        return errno;
    /* The umask can only have taken bits away; say exactly what we mean. */
    e = fchmod(f, 0600) ? errno : 0;
    if (!e && (owner_uid != (uint32_t)geteuid() || owner_gid != (uint32_t)getegid()))
        e = fchown(f, owner_uid, owner_gid) ? errno : 0;
    if (!e)
        e = truncate_to(f, size);
    if (e) {
        unlink(path);
        close(f);
        return e == EFBIG || e == ENOSPC ? ENOMEM : e;
    }
    *fd = f;
    return 0;
}

int tl_shmobj_open(const char *name, uint32_t owner_uid, uint64_t size, int *fd, uint64_t *size_out)
{
    char path[sizeof SHM_DIR + TL_SHM_NAME_MAX];
    int e = shm_path(name, path, sizeof path);
    if (e)
        return e;
    int f = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (f < 0)
        return errno == ELOOP ? ENOTSUP : errno; /* ELOOP: a symbolic link, never ours */
    struct stat st;
    if (fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != owner_uid || (st.st_mode & 07777) != 0600 ||
        st.st_size < 0 || (size && (uint64_t)st.st_size != size)) {
        close(f);
        return ENOTSUP;
    }
    if (size_out)
        *size_out = (uint64_t)st.st_size;
    *fd = f;
    return 0;
}

int tl_shmobj_create_staged(const char *name, uint64_t size, char tmp[TL_SHM_NAME_MAX], int *fd)
{
    snprintf(tmp, TL_SHM_NAME_MAX, "%.40s.new.%d", name, (int)getpid());
    tl_shmobj_unlink(tmp); /* left by a process of ours that died here, pid reused */
    return tl_shmobj_create(tmp, size, (uint32_t)geteuid(), (uint32_t)getegid(), fd); /* ours while built */
}

int tl_shmobj_publish(const char *tmp, const char *name, int fd, uint32_t owner_uid, uint32_t owner_gid, int built)
{
    char from[sizeof SHM_DIR + TL_SHM_NAME_MAX], to[sizeof SHM_DIR + TL_SHM_NAME_MAX];
    int e = built;
    if (!e && (owner_uid != (uint32_t)geteuid() || owner_gid != (uint32_t)getegid()))
        e = fchown(fd, owner_uid, owner_gid) ? errno : 0;
    close(fd);
    if (!e)
        e = shm_path(tmp, from, sizeof from);
    if (!e)
        e = shm_path(name, to, sizeof to);
    if (!e)
        e = link(from, to) ? errno : 0;
    tl_shmobj_unlink(tmp);
    return e;
}

int tl_shmobj_unlink(const char *name)
{
    char path[sizeof SHM_DIR + TL_SHM_NAME_MAX];
    int e = shm_path(name, path, sizeof path);
    if (e)
        return e;
    return unlink(path) ? errno : 0;
}
