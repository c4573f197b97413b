/*
 * The reader's bytes: pread on a seekable file; otherwise (pipe, socket,
 * the caller's read function) a forward-only window that grows to what a
 * block needs and drops what the reader released, so memory follows the
 * largest block, not the file.
 */
#include "reader/source.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/nocancel.h"

int tl_source_init(tl_source *s, int fd)
{
    memset(s, 0, sizeof *s);
    s->fd = fd;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return errno;
    if (S_ISDIR(st.st_mode))
        return EISDIR;
    s->seekable = S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0;
    s->size = s->seekable ? (uint64_t)st.st_size : 0;
    return 0;
}

int tl_source_init_follow(tl_source *s, int fd)
{
    int e = tl_source_init(s, fd);
    if (e)
        return e;
    if (!s->seekable)
        return ESPIPE;
    /* Read as a stream (blocks handled as they come, nothing indexed), with pread: bytes past
       the current end are read again once written, and nothing is released. */
    s->seekable = 0;
    s->follow = 1;
    s->size = 0;
    return 0;
}

void tl_source_init_read(tl_source *s, tracelog_read_fn fn, void *ctx)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->read_fn = fn;
    s->read_ctx = ctx;
}

void tl_source_free(tl_source *s)
{
    tl_buf_free(&s->win);
    tl_buf_free(&s->near);
}

/* pread; a followed file is read to its current end, which s->size then follows (bytes seen). */
static ssize_t read_file(tl_source *s, uint64_t off, void *buf, size_t n)
{
    size_t got = 0;
    int cancel = tl_nocancel_begin();
    while (got < n && (s->follow || off + got < s->size)) {
        ssize_t k = pread(s->fd, (char *)buf + got, n - got, (off_t)(off + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            tl_nocancel_end(cancel);
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    tl_nocancel_end(cancel);
    if (s->follow && got && off + got > s->size) /* a read past the end saw nothing there: the size stays */
        s->size = off + got;
    return (ssize_t)got;
}

/* One read from the stream: bytes read, 0 at its end, or -1 with errno set (EINTR retried). */
static ssize_t stream_read(tl_source *s, void *buf, size_t n)
{
    for (;;) {
        ssize_t k;
        if (s->read_fn) { /* the caller's function: its cancellation is its own */
            k = (ssize_t)s->read_fn(s->read_ctx, buf, n);
        } else {
            int cancel = tl_nocancel_begin();
            k = read(s->fd, buf, n);
            tl_nocancel_end(cancel);
        }
        if (k < 0 && errno == EINTR)
            continue;
        if (k > (ssize_t)n) { /* a read function that claims more than it was given room for */
            errno = EIO;
            return -1;
        }
        return k;
    }
}

/* Reads from the stream until the window reaches `end` or the stream ends. */
static int fill(tl_source *s, uint64_t end)
{
    char discard[4096];
    while (!s->eof && s->pos < s->base) { /* bytes released before they were read */
        uint64_t gap = s->base - s->pos;
        ssize_t k = stream_read(s, discard, gap < sizeof discard ? (size_t)gap : sizeof discard);
        if (k < 0)
            return -1;
        if (k == 0)
            s->eof = 1;
        s->pos += (uint64_t)k;
        s->size = s->pos;
    }
    while (!s->eof && s->base + s->win.len < end) {
        size_t want = (size_t)(end - s->base - s->win.len);
        if (want < 65536)
            want = 65536;
        if (tl_buf_reserve(&s->win, want)) {
            errno = ENOMEM;
            return -1;
        }
        ssize_t k = stream_read(s, s->win.data + s->win.len, want);
        if (k < 0)
            return -1;
        if (k == 0)
            s->eof = 1;
        s->win.len += (size_t)k;
        s->pos += (uint64_t)k;
        s->size = s->pos;
    }
    return 0;
}

ssize_t tl_source_read(tl_source *s, uint64_t off, void *buf, size_t n)
{
    if (s->seekable || s->follow)
        return read_file(s, off, buf, n);
    if (off < s->base) {
        errno = ESPIPE;
        return -1;
    }
    if (fill(s, off + n))
        return -1;
    uint64_t have_end = s->base + s->win.len;
    if (off >= have_end)
        return 0;
    size_t got = (size_t)(have_end - off < n ? have_end - off : n);
    memcpy(buf, s->win.data + (off - s->base), got);
    return (ssize_t)got;
}

void tl_source_release(tl_source *s, uint64_t off)
{
    if (s->seekable || s->follow || off <= s->base)
        return;
    uint64_t drop = off - s->base;
    if (drop >= s->win.len) {
        /* Skipping ahead of what was read: the gap is consumed by the next fill. */
        s->win.len = 0;
        s->base = off;
        return;
    }
    memmove(s->win.data, s->win.data + drop, s->win.len - (size_t)drop);
    s->win.len -= (size_t)drop;
    s->base = off;
}

#define NEAR_MIN 4096u
#define NEAR_MAX (64u << 10)

void tl_source_near(tl_source *s, int on)
{
    s->near_on = on && s->seekable;
    s->near_size = NEAR_MIN;
    s->near.len = 0;
    if (!s->near_on)
        tl_buf_free(&s->near);
}

ssize_t tl_source_read_near(tl_source *s, uint64_t off, void *buf, size_t n)
{
    if (!s->near_on || n > NEAR_MIN)
        return tl_source_read(s, off, buf, n);
    uint64_t end = s->near_off + s->near.len;
    if (off < s->near_off || off + n > end) {
        /* the read starts in the window or just past it: the blocks are dense, read more at once */
        int dense = off >= s->near_off && off - s->near_off < 2 * (uint64_t)s->near.len;
        s->near_size = dense ? (s->near_size < NEAR_MAX ? 2 * s->near_size : NEAR_MAX) : NEAR_MIN;
        s->near.len = 0;
        if (tl_buf_reserve(&s->near, s->near_size))
            return tl_source_read(s, off, buf, n); /* no memory for a window: as without one */
        ssize_t k = read_file(s, off, s->near.data, s->near_size);
        if (k < 0)
            return -1;
        s->near_off = off;
        s->near.len = (size_t)k;
    }
    size_t have = (size_t)(s->near_off + s->near.len - off);
    size_t got = n < have ? n : have;
    memcpy(buf, s->near.data + (off - s->near_off), got);
    return (ssize_t)got;
}
