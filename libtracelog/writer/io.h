/*
 * The writer's output channel. Production code writes to a file descriptor;
 * tests substitute implementations that fail, tear or drop writes to prove
 * crash safety (format-spec: durability).
 */
#ifndef TRACELOG_WRITER_IO_H
#define TRACELOG_WRITER_IO_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "format/chunk.h"
#include "tracelog/writer.h"

typedef struct tl_io {
    /* Write all n bytes at off (seekable outputs) or at the end (streams).
       Return 0, or an errno value. */
    int (*write)(void *ctx, const void *buf, size_t n, uint64_t off);
    int (*sync)(void *ctx);                 /* 0 or errno */
    int (*truncate)(void *ctx, uint64_t len); /* 0 or errno; NULL for streams */
    void *ctx;
    int seekable;
    /* Optional (NULL: the writer frames each block into one buffer for write):
       writes the n pieces as one, like write. Blocks go out without a copy. */
    int (*writev)(void *ctx, const struct iovec *iov, int n, uint64_t off);
} tl_io;

/* The descriptor-backed channel (pwrite/pwritev, write/writev, fdatasync, ftruncate). */
void tl_io_from_fd(tl_io *io, int *fd_slot);

/* Like tracelog_writer_create, on any channel. */
tracelog_status tl_writer_create_io(const tl_io *io, const tracelog_metadata *meta,
                                          const tracelog_writer_options *opt,
                                          tracelog_writer **out, tracelog_error *err);

/*
 * raw != 0: the chunks written from now on are stored uncompressed (as with
 * compression level 0), until called again with 0. For a flusher that falls
 * behind its producers (recorder/drain.c): bigger chunks rather than lost events.
 */
void tl_writer_set_raw(tracelog_writer *w, int raw);

/*
 * For writer/set.c, whose chunks are built by other threads (each call made
 * under the set's lock): the chunk size limit and compression level the
 * writer's own chunks use now; a finished chunk payload of `count` events
 * written as the next CHUNK block, after the pending definitions; and a
 * thread's kernel tid learnt (a definition written before the next chunk).
 */
void tl_writer_chunk_params(const tracelog_writer *w, uint32_t *limit, int *level);
tracelog_status tl_writer_put_chunk(tracelog_writer *w, const uint8_t *payload, size_t len, uint32_t count);
/* Counts n events as lost from the log (log_overruns): a caller dropped them after a write error. */
void tl_writer_count_lost(tracelog_writer *w, uint64_t n);
tracelog_status tl_writer_learn_thread(tracelog_writer *w, const tracelog_event *ev);
/* 1 when ev's (pid, tid) has a current definition with another kernel tid (a reused pthread_t). */
int tl_writer_thread_reused(const tracelog_writer *w, const tracelog_event *ev);

/*
 * The chunk being built (and *limit, its size limit in body bytes), into
 * which events of the thread append noted last (its kernel tid, pid and
 * tid into *thread) may go straight, as append would put them, as long as
 * each fits (tl_chunk_fits). NULL when append must take the next event (an
 * error, a full log, no thread noted). The drain's runs of a lane
 * (recorder/lane.h); valid until the next call on w.
 */
tl_chunk_builder *tl_writer_lane_target(tracelog_writer *w, size_t *limit, tracelog_event *thread);
/*
 * Names each thread as the writer first defines it (format 1.2): namer
 * writes its name into name (cap bytes, NUL-terminated; "" for none), from
 * within tracelog_writer_append (or tl_writer_learn_thread), so that the
 * thread's first chunk already reads back with it. NULL: no namer. name
 * comes holding the name the writer has for the thread: "" for a new
 * thread (or one it has no name for), its name in a rename pass.
 */
typedef void (*tl_thread_namer)(void *ctx, uint32_t pid, uint64_t tid, uint32_t kernel_tid, char *name, size_t cap);
void tl_writer_set_thread_namer(tracelog_writer *w, tl_thread_namer namer, void *ctx);
/*
 * Defines the event types registered since its last call (with
 * tracelog_writer_define_event_schema), called before each chunk goes out:
 * a program may register a name and record its event while its events are
 * drained, and a reader of the log as a stream (a pipe) names an event
 * from the types written before its chunk. NULL: none.
 */
typedef void (*tl_type_definer)(void *ctx, tracelog_writer *w);
void tl_writer_set_type_definer(tracelog_writer *w, tl_type_definer definer, void *ctx);
/* Asks the namer again for every thread the writer knows: a new name is a rename (written before the next chunk). */
tracelog_status tl_writer_rename_threads(tracelog_writer *w);
/* Writes the writer's own chunk in progress: before chunks built elsewhere, which hold newer events. */
tracelog_status tl_writer_end_chunk(tracelog_writer *w);

#endif
