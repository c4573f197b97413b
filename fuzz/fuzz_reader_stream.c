/*
 * fuzz_reader_stream: the reader fed through a pipe in random-sized slices
 * gives what the seekable reader gives (promise 1, and "a log piped to the
 * reader reads the same as the file").
 *
 * The input is the file, byte for byte (the same corpus as fuzz_reader
 * works here). A thread writes it into a pipe whose buffer is one page, in
 * slices whose sizes come from the input's last 16 bytes (read, not
 * consumed), while this thread reads the pipe with the stream reader.
 *
 * Properties, against the same bytes read from a memfd:
 *  - open fails with the same status (NOT_SEEKABLE for a ring (LOOP) log:
 *    rings can only be read from seekable files - the one legitimate
 *    difference in what can be read);
 *  - the same events, in the same order, with the same payloads;
 *  - once the stream is read to its end: the same metadata, event types,
 *    status and clean flag;
 *  - rewind and seek_time return TRACELOG_E_NOT_SEEKABLE.
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

static void *feed(void *arg)
{
    feeder *f = arg;
    size_t pos = 0, i = 0;
    while (pos < f->size) {
        size_t n = f->nsizes ? slice_size(f->sizes[i++ % f->nsizes]) : f->size;
        if (n > f->size - pos)
            n = f->size - pos;
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

static void collect(tracelog_reader *r, outcome *o)
{
    fuzz_hash_init(&o->events);
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

static void read_seekable(const uint8_t *data, size_t size, outcome *o)
{
    int fd = fuzz_memfd("fuzz_reader_stream", data, size);
    tracelog_reader_options opt = fuzz_reader_options(1);
    tracelog_reader *r = NULL;
    tracelog_error err;
    o->open_status = tracelog_reader_open(fd, &opt, &r, &err);
    if (o->open_status == TRACELOG_OK) {
        collect(r, o);
        tracelog_reader_close(r);
    }
    close(fd);
}

static void read_stream(const uint8_t *data, size_t size, outcome *o)
{
    int p[2];
    FUZZ_CHECK_SYS(pipe2(p, O_CLOEXEC) == 0);
    (void)fcntl(p[1], F_SETPIPE_SZ, 4096); /* best effort: more, smaller reads */
    size_t nsizes = size < 16 ? size : 16;
    feeder f = {p[1], data, size, data + size - nsizes, nsizes};
    pthread_t t;
    FUZZ_CHECK_SYS(pthread_create(&t, NULL, feed, &f) == 0);

    tracelog_reader_options opt = fuzz_reader_options(1);
    tracelog_reader *r = NULL;
    tracelog_error err;
    memset(&err, 0, sizeof err);
    o->open_status = tracelog_reader_open(p[0], &opt, &r, &err);
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
    close(p[0]); /* unblocks the feeder if the reader stopped early */
    FUZZ_CHECK_SYS(pthread_join(t, NULL) == 0);
}

static void run(const uint8_t *data, size_t size)
{
    outcome file, pipe_;
    memset(&file, 0, sizeof file);
    memset(&pipe_, 0, sizeof pipe_);
    read_seekable(data, size, &file);
    read_stream(data, size, &pipe_);
    int ring = file.open_status == TRACELOG_OK && data[40] == 1; /* header: layout byte */
    if (ring) {
        FUZZ_ASSERT(pipe_.open_status == TRACELOG_E_NOT_SEEKABLE, "ring log on a pipe: open returned %s",
                    tracelog_status_name(pipe_.open_status));
        return;
    }
    FUZZ_ASSERT(pipe_.open_status == file.open_status, "open: %s from a pipe, %s from a file",
                tracelog_status_name(pipe_.open_status), tracelog_status_name(file.open_status));
    if (file.open_status != TRACELOG_OK)
        return;
    FUZZ_ASSERT(pipe_.events.count == file.events.count, "%llu events from a pipe, %llu from a file",
                (unsigned long long)pipe_.events.count, (unsigned long long)file.events.count);
    FUZZ_ASSERT(pipe_.events.h == file.events.h, "different events from a pipe and from a file");
    FUZZ_ASSERT(fuzz_meta_equal(&pipe_.meta, &file.meta), "different metadata");
    FUZZ_ASSERT(memcmp(&pipe_.status, &file.status, sizeof file.status) == 0, "different status");
    FUZZ_ASSERT(pipe_.clean == file.clean, "clean: %d from a pipe, %d from a file", pipe_.clean, file.clean);
    FUZZ_ASSERT(pipe_.types.count == file.types.count && pipe_.types.h == file.types.h,
                "different event types (%llu from a pipe, %llu from a file)",
                (unsigned long long)pipe_.types.count, (unsigned long long)file.types.count);
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
