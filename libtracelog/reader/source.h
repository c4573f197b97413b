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

/* A stream may forget the bytes before off (the reader will not go back). */
void tl_source_release(tl_source *s, uint64_t off);

#endif
