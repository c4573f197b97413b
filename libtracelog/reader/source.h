/*
 * Where the reader's bytes come from: a seekable file read with pread, or a
 * forward-only stream (pipe, socket, terminal, or the caller's read
 * function) read through a bounded window.
 */
#ifndef TRACELOG_READER_SOURCE_H
#define TRACELOG_READER_SOURCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "tracelog/reader.h"

typedef struct tl_source {
    int fd;           /* -1 with a read function */
    tracelog_read_fn read_fn; /* stream: reads instead of read(fd), with read_ctx */
    void *read_ctx;
    int seekable;
    int follow;       /* a regular file still being written, read forward with pread (follow.c):
                         the end of the data is "not yet", never the end of the stream */
    uint64_t size;    /* file size (seekable), or bytes seen so far (stream) */
    int eof;          /* stream: read() returned 0 */
    /* Stream window: bytes [base, base + win.len) of the stream. */
    uint64_t base;
    tl_buf win;
    uint64_t pos;     /* stream: bytes read from fd so far (> base + win.len after a skip) */
    /* Seekable, while the open scan runs (tl_source_near): bytes [near_off, near_off + near.len)
       read at once, which the scan's small reads come from. */
    tl_buf near;
    uint64_t near_off;
    size_t near_size; /* the next window's size: it grows while the reads go forward densely */
    int near_on;
} tl_source;

/* 0, or an errno value. */
int tl_source_init(tl_source *s, int fd);
/* A regular file read forward as it grows (tracelog_reader_open_follow): 0, EISDIR, ESPIPE or an errno value. */
int tl_source_init_follow(tl_source *s, int fd);
/* A forward-only stream whose bytes come from fn(ctx, ...). */
void tl_source_init_read(tl_source *s, tracelog_read_fn fn, void *ctx);
void tl_source_free(tl_source *s);

/*
 * Copies up to n bytes at offset off into buf and returns how many were
 * available (fewer only at the end of the data), or -1 with errno set.
 * A stream can only be read at or after the last released offset.
 */
ssize_t tl_source_read(tl_source *s, uint64_t off, void *buf, size_t n);

/*
 * Reading block after block (the open scan of a seekable file): small reads
 * are served from a window read ahead of them, 4 KiB at first and up to
 * 64 KiB while the reads go forward densely, so that a log of small blocks
 * (one flush of a few events each) costs a pread per window, not three per
 * block; a log of large chunks costs a page per block, as it did. Not for
 * reads other threads make meanwhile (the read-ahead's): one thread's only.
 * on 0 drops the window. As tl_source_read otherwise.
 */
void tl_source_near(tl_source *s, int on);
ssize_t tl_source_read_near(tl_source *s, uint64_t off, void *buf, size_t n);

/* A stream may forget the bytes before off (the reader will not go back). */
void tl_source_release(tl_source *s, uint64_t off);

#endif
