/*
 * fuzz_reader_stream: the reader fed through a pipe in random-sized slices,
 * and through a read function (tracelog_reader_open_read) in the same
 * slices, gives what the seekable reader gives (promise 1, and "a log piped
 * to the reader reads the same as the file").
 *
 * The input is the file, byte for byte (the same corpus as fuzz_reader
 * works here). A thread writes it into a pipe whose buffer is one page, in
 * slices whose sizes come from the input's last 16 bytes (read, not
 * consumed), while this thread reads the pipe with the stream reader; then
 * a read function returns the same slices, every other call first failing
 * with EINTR; then the file is followed (tracelog_reader_open_follow, issue
 * 28) as a writer appends the same slices to it: opened once it holds the
 * header (TRACELOG_E_TRUNCATED before: append, open again), read until
 * "not yet", a slice appended, tracelog_reader_follow_wait, and so on, then
 * tracelog_reader_follow_stop and the rest read.
 *
 * Properties, against the same bytes read from a memfd:
 *  - open fails with the same status (NOT_SEEKABLE for a ring (LOOP) log:
 *    rings can only be read from seekable files - the one legitimate
 *    difference in what can be read);
 *  - the same events, in the same order, with the same payloads;
 *  - once the stream is read to its end: the same metadata, event types,
 *    status and clean flag;
 *  - rewind and seek_time return TRACELOG_E_NOT_SEEKABLE;
 *  - following: the wait sees each slice appended, and reading "not yet"
 *    ends with TRACELOG_END, never an error: a block cut where the writer
 *    is not done yet is no damage until the follower stops.
 * Legitimate differences not compared: info.blocks/chunks/problems (a
 * stream cannot know that a block runs past the end of the data before it
 * tries to read it, so it counts and reports a truncated tail differently),
 * info.events/first_ts/last_ts (not known for a stream).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>

#include "fuzz_helpers.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The reader may stop reading early (bad header): the feeder then gets
       EPIPE, which must not kill the process. */
    signal(SIGPIPE, SIG_IGN);
    return 0;
}

typedef struct feeder {
    int fd;
    const uint8_t *data;
    size_t size;
    const uint8_t *sizes; /* slice size seeds */
    size_t nsizes;
} feeder;

static size_t slice_size(uint8_t b)
{
    return b < 192 ? (size_t)b + 1 : (size_t)(b - 191) * 1024;
}

/* The next slice of f at pos: its size seed i, at most the rest of the data. */
static size_t next_slice(const feeder *f, size_t pos, size_t i)
{
    size_t n = f->nsizes ? slice_size(f->sizes[i % f->nsizes]) : f->size;
    return n > f->size - pos ? f->size - pos : n;
}

static void *feed(void *arg)
{
    feeder *f = arg;
    size_t pos = 0, i = 0;
    while (pos < f->size) {
        size_t n = next_slice(f, pos, i++);
        ssize_t k = write(f->fd, f->data + pos, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            break; /* EPIPE: the reader stopped */
        pos += (size_t)k;
    }
    close(f->fd);
    return NULL;
}

typedef struct outcome {
    tracelog_status open_status;
    fuzz_hash events;
    tracelog_metadata meta;
    tracelog_log_status status;
    int clean;
    fuzz_hash types;
} outcome;

/* The rest of r's events into o->events, then what is known once r is read to its end. */
static void collect_rest(tracelog_reader *r, outcome *o)
{
    tracelog_status st = fuzz_drain(r, &o->events);
    FUZZ_ASSERT(st == TRACELOG_END, "iteration ended with %s", tracelog_status_name(st));
    o->meta = *tracelog_reader_metadata(r);
    tracelog_reader_get_status(r, &o->status);
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    o->clean = info.clean;
    fuzz_hash_init(&o->types);
    size_t n = tracelog_reader_event_type_count(r);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *name;
        FUZZ_ASSERT(tracelog_reader_event_type(r, i, &id, &name) == TRACELOG_OK);
        fuzz_hash_u64(&o->types, id);
        fuzz_hash_bytes(&o->types, name, strlen(name) + 1);
        o->types.count++;
    }
}

static void collect(tracelog_reader *r, outcome *o)
{
    fuzz_hash_init(&o->events);
    collect_rest(r, o);
}

static void read_seekable(const uint8_t *data, size_t size, outcome *o)
{
    int fd = fuzz_memfd("fuzz_reader_stream", data, size);
    tracelog_reader_options opt = fuzz_reader_options(1);
    tracelog_reader *r = NULL;
    tracelog_error err;
    o->open_status = tracelog_reader_open(fd, &opt, &r, &err);
    if (o->open_status == TRACELOG_OK) {
        FUZZ_DEEP();
        collect(r, o);
        tracelog_reader_close(r);
    }
    close(fd);
}

/* The read function's state: the data in f's slices, and the calls so far. */
typedef struct slicer {
    feeder f;
    size_t pos, i;
    unsigned calls;
} slicer;

static long read_slices(void *ctx, void *buf, size_t n)
{
    slicer *s = ctx;
    if (++s->calls % 2 == 0) {
        errno = EINTR;
        return -1;
    }
    size_t k = next_slice(&s->f, s->pos, s->i++);
    if (k > n)
        k = n;
    memcpy(buf, s->f.data + s->pos, k);
    s->pos += k;
    return (long)k;
}

/* Reads data forward only: through a pipe, or (fn) through a read function. */
static void read_stream(const uint8_t *data, size_t size, int fn, outcome *o)
{
    size_t nsizes = size < 16 ? size : 16;
    feeder f = {-1, data, size, data + size - nsizes, nsizes};
    slicer sl = {f, 0, 0, 0};
    int p[2] = {-1, -1};
    pthread_t t;
    if (!fn) {
        FUZZ_CHECK_SYS(pipe2(p, O_CLOEXEC) == 0);
        (void)fcntl(p[1], F_SETPIPE_SZ, 4096); /* best effort: more, smaller reads */
        f.fd = p[1];
        FUZZ_CHECK_SYS(pthread_create(&t, NULL, feed, &f) == 0);
    }
    tracelog_reader_options opt = fuzz_reader_options(1);
    tracelog_reader *r = NULL;
    tracelog_error err;
    memset(&err, 0, sizeof err);
    o->open_status = fn ? tracelog_reader_open_read(read_slices, &sl, &opt, &r, &err)
                        : tracelog_reader_open(p[0], &opt, &r, &err);
    if (o->open_status == TRACELOG_OK) {
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        FUZZ_ASSERT(info.seekable == 0);
        FUZZ_ASSERT(tracelog_reader_rewind(r) == TRACELOG_E_NOT_SEEKABLE);
        FUZZ_ASSERT(tracelog_reader_seek_time(r, 0) == TRACELOG_E_NOT_SEEKABLE);
        collect(r, o);
        tracelog_reader_close(r);
    } else {
        FUZZ_ASSERT(r == NULL);
        fuzz_check_error(&err, o->open_status);
    }
    if (fn)
        return;
    close(p[0]); /* unblocks the feeder if the reader stopped early */
    FUZZ_CHECK_SYS(pthread_join(t, NULL) == 0);
}

/* Appends f's slice i at pos to fd; its size. */
static size_t append_slice(int fd, const feeder *f, size_t pos, size_t i)
{
    size_t n = next_slice(f, pos, i);
    FUZZ_CHECK_SYS(pwrite(fd, f->data + pos, n, (off_t)pos) == (ssize_t)n);
    return n;
}

/* Reads data as a follower does while a writer appends it to a file in f's slices. */
static void read_follow(const uint8_t *data, size_t size, outcome *o)
{
    size_t nsizes = size < 16 ? size : 16, pos = 0, i = 0;
    feeder f = {-1, data, size, data + size - nsizes, nsizes};
    int fd = memfd_create("fuzz_reader_follow", MFD_CLOEXEC);
    FUZZ_CHECK_SYS(fd >= 0);
    tracelog_reader_options opt = fuzz_reader_options(1);
    tracelog_reader *r = NULL;
    tracelog_error err;
    for (;;) { /* the header must be there first */
        memset(&err, 0, sizeof err);
        o->open_status = tracelog_reader_open_follow(fd, &opt, &r, &err);
        if (o->open_status != TRACELOG_E_TRUNCATED || pos == size)
            break;
        pos += append_slice(fd, &f, pos, i++);
    }
    if (o->open_status != TRACELOG_OK) {
        FUZZ_ASSERT(r == NULL);
        fuzz_check_error(&err, o->open_status);
        close(fd);
        return;
    }
    FUZZ_ASSERT(tracelog_reader_rewind(r) == TRACELOG_E_NOT_SEEKABLE);
    fuzz_hash_init(&o->events);
    for (;;) {
        tracelog_status st = fuzz_drain(r, &o->events);
        FUZZ_ASSERT(st == TRACELOG_END, "following %zu of %zu bytes: %s", pos, size, tracelog_status_name(st));
        if (pos == size)
            break;
        pos += append_slice(fd, &f, pos, i++);
        st = tracelog_reader_follow_wait(r, 0);
        FUZZ_ASSERT(st == TRACELOG_OK, "the file grew to %zu bytes, the wait says %s", pos, tracelog_status_name(st));
    }
    FUZZ_ASSERT(tracelog_reader_follow_stop(r) == TRACELOG_OK);
    collect_rest(r, o);
    tracelog_reader_close(r);
    close(fd);
}

/* What a forward-only reader gave (stream, read from `how`) against the seekable one (file). */
static void compare(const uint8_t *data, const outcome *file, const outcome *stream, const char *how)
{
    int ring = file->open_status == TRACELOG_OK && data[40] == 1; /* header: layout byte */
    if (ring) {
        FUZZ_ASSERT(stream->open_status == TRACELOG_E_NOT_SEEKABLE, "ring log from %s: open returned %s", how,
                    tracelog_status_name(stream->open_status));
        return;
    }
    FUZZ_ASSERT(stream->open_status == file->open_status, "open: %s from %s, %s from a file",
                tracelog_status_name(stream->open_status), how, tracelog_status_name(file->open_status));
    if (file->open_status != TRACELOG_OK)
        return;
    FUZZ_ASSERT(stream->events.count == file->events.count, "%llu events from %s, %llu from a file",
                (unsigned long long)stream->events.count, how, (unsigned long long)file->events.count);
    FUZZ_ASSERT(stream->events.h == file->events.h, "different events from %s and from a file", how);
    FUZZ_ASSERT(fuzz_meta_equal(&stream->meta, &file->meta), "different metadata from %s", how);
    FUZZ_ASSERT(memcmp(&stream->status, &file->status, sizeof file->status) == 0, "different status from %s", how);
    FUZZ_ASSERT(stream->clean == file->clean, "clean: %d from %s, %d from a file", stream->clean, how, file->clean);
    FUZZ_ASSERT(stream->types.count == file->types.count && stream->types.h == file->types.h,
                "different event types (%llu from %s, %llu from a file)",
                (unsigned long long)stream->types.count, how, (unsigned long long)file->types.count);
}

static void run(const uint8_t *data, size_t size)
{
    outcome file, stream;
    memset(&file, 0, sizeof file);
    read_seekable(data, size, &file);
    for (int fn = 0; fn <= 1; fn++) {
        memset(&stream, 0, sizeof stream);
        read_stream(data, size, fn, &stream);
        compare(data, &file, &stream, fn ? "a read function" : "a pipe");
    }
    memset(&stream, 0, sizeof stream);
    read_follow(data, size, &stream);
    compare(data, &file, &stream, "a followed file");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size);
    uint8_t *repaired = fuzz_repair_header(data, size);
    if (repaired) {
        run(repaired, size);
        free(repaired);
    }
    return 0;
}
