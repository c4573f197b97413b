/*
 * The recorder: the engine that drains a stream into a log writer, for a
 * stream of this process (the POSIX layer's FLUSH, LOOP and UNTIL_FULL logs)
 * and for another process's (a controller's: `ptlog record`/`attach`),
 * with no POSIX in it. It owns the writer, a consumer of the stream, the
 * flusher thread of a background recorder (and its groups of lanes,
 * groups.h), and for another process's stream a thread that logs the
 * process's end when it comes.
 *
 * What the log says beyond the stream's events (its metadata and the names
 * of its event types) comes from its client (tl_recorder_client), which
 * the recorder asks under its lock when the writer is made and before each
 * drain. The system events it writes itself (an error, an UNTIL_FULL log's
 * automatic stop, a traced process's end) have the ids its params give.
 *
 * Every function is thread-safe: one lock per recorder, never held by
 * another recorder's call. Errors are error numbers (errno values).
 */
#ifndef TRACELOG_RECORDER_H
#define TRACELOG_RECORDER_H

#include <stdint.h>

#include "stream/consumer.h"
#include "stream/stream.h"
#include "tracelog/writer.h"
#include "xproc/traced.h"

typedef struct tl_recorder tl_recorder;

typedef struct tl_recorder_client {
    void *ctx;
    /* The log's metadata (its first block): made once the traced process is its program. The
       recorder then sets the clock's fields from the stream's clock. */
    void (*describe)(void *ctx, tracelog_metadata *m);
    /* Defines in w the event types registered since the last call; first: also those every log starts with. */
    void (*define_types)(void *ctx, tracelog_writer *w, int first);
    /* The name of a thread whose /proc entry is gone (it ended before its events were written), into
       name (cap bytes); "" if unknown. May be NULL. Called as the writer defines the thread. */
    void (*thread_name)(void *ctx, uint32_t pid, uint32_t kernel_tid, char *name, size_t cap);
    /* Frees ctx, when the recorder is closed or abandoned (may be NULL). */
    void (*release)(void *ctx);
} tl_recorder_client;

/* The ids of the system events the recorder writes itself. */
typedef struct tl_recorder_ids {
    uint32_t error;       /* a write error stopped the log; data: the errno (int) */
    uint32_t stop;        /* an UNTIL_FULL log filled up; data: 1 (int, automatic) */
    uint32_t overflow;    /* the stream's buffer was lost under a drain (with error, data EFAULT) */
    uint32_t process_end; /* the traced process ended; data: how, code (int32_t each) */
} tl_recorder_ids;

typedef struct tl_recorder_params {
    int fd;                          /* the log's file: duplicated, the caller's is never closed */
    tracelog_writer_options writer;  /* its log policy and size */
    int background;                  /* a flusher thread drains and writes (FLUSH streams) */
    uint64_t flush_interval_ns;      /* background: it writes a partial chunk this often */
    int inherited;                   /* other processes (forked children) may record into the stream */
    tl_remote *remote;               /* the traced process, for another process's stream; else NULL */
    tl_recorder_ids ids;
    tl_recorder_client client;       /* released by the recorder, also when open fails */
} tl_recorder_params;

int tl_recorder_open(tl_recorder **out, tl_stream *s, const tl_recorder_params *p);
/*
 * Drains the stream and writes the log out (status, partial chunk). An
 * explicit flush (a program's call, not the flusher's) passes markers to record into the
 * stream before the drain (before) and after it (after, written by the next
 * flush); NULL for none.
 */
int tl_recorder_flush(tl_recorder *r, const tracelog_event *before, const tracelog_event *after);
/* A flush, then fdatasync. */
int tl_recorder_sync(tl_recorder *r);
/* A flush and a trailer, the writer kept open: the log reads back complete (exec). */
int tl_recorder_checkpoint(tl_recorder *r);
/* The last flush, the losses no later event marked, the trailer; frees r. */
int tl_recorder_close(tl_recorder *r);
/* Frees r, writing nothing more (the stream could not be created after all). */
void tl_recorder_abandon(tl_recorder *r);
/* The fatal-signal handler's flush: the events recorded until now, then the partial chunk. */
void tl_recorder_crash_flush(tl_recorder *r);

/* The stream stopped under the recorder's lock (a STOP never follows a traced process's end): tl_stream_stop, or tl_consumer_stop for another process's. */
int tl_recorder_stop(tl_recorder *r, const tracelog_event *marker);
/* Forgets the stream's events (the log keeps what it has). */
void tl_recorder_clear(tl_recorder *r);
/* What system events recorded into another process's stream go through (tl_consumer_start); NULL for ours. */
tl_consumer *tl_recorder_consumer(tl_recorder *r);

typedef struct tl_recorder_status {
    int flushing;             /* a drain is in progress */
    int error;                /* the first write error since the last call (reset when read) */
    tracelog_log_status log;  /* the writer's, after the last write */
} tl_recorder_status;
/* Never waits for a flush in progress. */
void tl_recorder_get_status(tl_recorder *r, tl_recorder_status *st);

typedef struct tl_recorder_stats {
    uint64_t events_lost;     /* the stream's overruns, over the consumer's checked lane count */
    uint64_t events_buffered; /* in the stream, not yet drained */
    uint32_t lanes;
    uint64_t log_events_written; /* as of the last write */
    uint64_t log_events_lost;
} tl_recorder_stats;
void tl_recorder_get_stats(tl_recorder *r, tl_recorder_stats *st);
/* The stream's overruns; once another process's buffer is lost, as last read plus the loss. */
uint64_t tl_recorder_overruns(tl_recorder *r);

#endif
