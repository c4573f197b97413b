/* The writer's output channel on a file descriptor: pwrite(v) on files, write(v) on pipes. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "writer/io.h"

#define IOV_MAX_PIECES 8

static int fd_writev(void *ctx, const struct iovec *iov, int n, uint64_t off)
{
    int fd = *(int *)ctx;
    if (n < 1 || n > IOV_MAX_PIECES)
        return EINVAL;
    struct iovec left[IOV_MAX_PIECES];
    memcpy(left, iov, (size_t)n * sizeof *iov);
    struct iovec *v = left;
    for (;;) {
        while (n && v->iov_len == 0) {
            v++;
            n--;
        }
        if (!n)
            return 0;
        ssize_t k = off == UINT64_MAX ? writev(fd, v, n) : pwritev(fd, v, n, (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return errno;
        if (k == 0)
            return EIO;
        if (off != UINT64_MAX)
            off += (uint64_t)k;
        for (size_t done = (size_t)k; done;) { /* a short write: go on after what went out */
            size_t d = done < v->iov_len ? done : v->iov_len;
            v->iov_base = (char *)v->iov_base + d;
            v->iov_len -= d;
            done -= d;
            if (v->iov_len == 0 && done) {
                v++;
                n--;
            }
        }
    }
}

static int fd_write(void *ctx, const void *buf, size_t n, uint64_t off)
{
    struct iovec one = {(void *)buf, n};
    return fd_writev(ctx, &one, 1, off);
}

static int fd_sync(void *ctx)
{
    int fd = *(int *)ctx;
    if (fdatasync(fd) == 0)
        return 0;
    /* Pipes and sockets cannot be synced: nothing to do for them. */
    return errno == EINVAL || errno == EROFS ? 0 : errno;
}

static int fd_truncate(void *ctx, uint64_t len)
{
    return ftruncate(*(int *)ctx, (off_t)len) == 0 ? 0 : errno;
}

void tl_io_from_fd(tl_io *io, int *fd_slot)
{
    struct stat st;
    int ok = fstat(*fd_slot, &st) == 0;
    io->write = fd_write;
    io->writev = fd_writev;
    io->sync = fd_sync;
    io->truncate = ok && S_ISREG(st.st_mode) ? fd_truncate : NULL; /* a block device cannot shrink */
    io->ctx = fd_slot;
    io->seekable = ok && (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) && lseek(*fd_slot, 0, SEEK_CUR) >= 0;
}
