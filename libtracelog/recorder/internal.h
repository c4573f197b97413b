/*
 * The recorder's insides, shared by its files (only recorder/ includes
 * this): recorder.c (open, close, the writer, flushes, status), drain.c
 * (moving events from the stream to the writer: by one consumer, by groups
 * of lanes, from another process's buffer; losses and the traced process's
 * end) and flusher.c (the background flusher and the end watcher).
 */
#ifndef TRACELOG_RECORDER_INTERNAL_H
#define TRACELOG_RECORDER_INTERNAL_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>

#include "recorder/groups.h"
#include "recorder/recorder.h"

/*
 * The flusher sleeps until its next timed write, woken sooner by a producer
 * whose lane is a quarter full, one waiting for room, or a loss: it drains
 * between a program's bursts rather than during them, on a CPU a producer
 * may need (bench/README.md, "the flusher's sleep"). A controller's flusher
 * also looks at least this often for the traced process's end, which it
 * learns of by looking, and drains only then.
 */
#define REMOTE_LOOK_NS 2000000
/*
 * While a controller's log waits for its child to exec (writer_ready), it
 * looks this often at first, then twice as long each time up to
 * REMOTE_LOOK_NS: a program that ends within a millisecond of its exec is
 * still seen running (its executable can be read), and a fork that never
 * execs costs one look per REMOTE_LOOK_NS.
 */
#define EXEC_LOOK_FIRST_NS 100000
/*
 * A drain that finds a lane more than BEHIND/256 full stores its chunks
 * uncompressed until the fullest lane is under CAUGHT_UP/256: zstd is a
 * quarter of the flusher's time per event, and a bigger log beats lost
 * events (issue 11, "zero loss first"; measured in bench/README.md). Twice
 * the fill at which producers wake the flusher, so that a flusher woken on
 * time compresses.
 */
#define BEHIND (2 * 256 / TL_DRAINER_WAKE_PART)
#define CAUGHT_UP 16
#define BACKLOG_EVERY 1024 /* events between two looks at the backlog */

typedef struct batch batch; /* a controller's drain step (drain_remote) */

struct tl_recorder {
    tl_stream *stream;
    tl_consumer *consumer;
    tl_recorder_params params;  /* as opened (params.fd: our duplicate of the caller's descriptor) */
    tracelog_writer *writer;    /* NULL until made (writer_ready) */
    int start_error;            /* the writer could not be made: what every write reports */
    int groups_tried;           /* the flusher opened its groups (once the writer exists) */
    pthread_mutex_t lock;       /* the writer, the consumer and the fields below it */
    _Atomic uintptr_t owner;    /* pthread_self() of the lock's holder, 0 if none (the crash handler's check) */
    uint64_t written_at;        /* recorded() when the log was last written */
    int stop_written;           /* UNTIL_FULL log: the final STOP is in */
    int behind;                 /* chunks go out uncompressed (see BEHIND) */
    int error;                  /* the write error that stopped the log (the writer's errors are sticky) */
    pthread_t flusher;
    int flusher_running;
    _Atomic int flusher_stop;
    _Atomic int flushing;
    pthread_mutex_t status_lock; /* the fields below: never held during I/O */
    int flush_error;             /* first error, reset when read */
    tracelog_log_status snapshot; /* the writer's status after the last flush */
    int end_logged;              /* its end is in the log */
    int end_checkpointed;        /* and a trailer after it */
    pthread_t end_watcher;       /* a controller's log without flusher: logs the end when it comes */
    int end_wake_fd;             /* eventfd that stops the end watcher; -1 without one */
    /* A controller's log: the drain step's events and their payloads' copies (the buffer may vanish
       under a write); in the heap, not on a stack: the crash handler may drain on a small one. */
    batch *batch;
    uint8_t *arena;
    size_t arena_cap;
    uint64_t batches;
    uint64_t drained;            /* events taken from the stream */
    /* Atomic: read without the recorder's lock (tl_recorder_overruns). */
    _Atomic uint64_t delivered_seen; /* the stream's counters as last read (they are in the buffer) */
    _Atomic uint64_t overruns_seen;
    _Atomic uint64_t logged_itself;  /* events the log has that the stream never held (the end, a fault's marks): recorded too */
    int lost;                    /* the buffer was found shrunk, and the loss logged (log_fault) */
    _Atomic uint32_t lock_waiters; /* threads waiting in lock(): the flusher lets them in first */
    tl_groups *groups;           /* the flusher's groups of lanes (groups.h), or NULL */
    int grouped;                 /* their consumers took last: `consumer` must adopt the lanes' tails */
};


/* ---- recorder.c ---------------------------------------------------------------------- */

/* The lock's holder drains the stream: it must not wait for room in it (tl_stream_thread_drains). */
void tl_rec_lock(tl_recorder *r);
void tl_rec_unlock(tl_recorder *r);
/*
 * Every write to the log happens with SIGXFSZ blocked in the writing thread,
 * so exceeding RLIMIT_FSIZE gives EFBIG instead of killing the process; the
 * SIGXFSZ our own write raised is then discarded. Calls nest.
 */
void tl_rec_xfsz_block(sigset_t *old);
void tl_rec_xfsz_restore(const sigset_t *old);
/* fn(arg), under the buffer's SIGBUS guard for another process's stream: EFAULT (fn not run) once it is gone. */
int tl_rec_guarded(tl_recorder *r, int (*fn)(void *), void *arg);
/* Events recorded, as last read: the stream's, and those the log wrote itself. */
uint64_t tl_rec_recorded(const tl_recorder *r);
/* The stream's counters; once the buffer is gone, as last read (the fault's loss added). */
void tl_rec_counters(tl_recorder *r, uint64_t *delivered, uint64_t *overruns);
/* The errno behind a writer status (0 for success and for a full log, which the log status reports). */
int tl_rec_writer_errno(tl_recorder *r, tracelog_status st);
/* A write error stops the log for good: reported once (see recorder.c). */
void tl_rec_note_error(tl_recorder *r, int e);
/* 0 (the writer exists), EAGAIN (not yet: the traced child has not exec'd), or why it could not be made. */
int tl_rec_writer_ready(tl_recorder *r, int force);
/* The status into the writer (the next block it writes carries it). */
void tl_rec_update_status(tl_recorder *r);
/* Lets tl_recorder_get_status answer without waiting for a flush in progress. */
void tl_rec_publish_status(tl_recorder *r);
/* The status and the partial chunk out (rename_threads: their names read again first); after the traced process's end, a trailer. */
int tl_rec_write_out(tl_recorder *r, int rename_threads);
int tl_rec_flush_locked(tl_recorder *r, const tracelog_event *before, const tracelog_event *after);

/* ---- drain.c (caller holds the lock) ------------------------------------------------- */

/* The stream's events to the writer, up to the first one recorded after `until` (UINT64_MAX: all). */
int tl_rec_drain(tl_recorder *r, uint64_t until);
/* The flusher's drain, by its groups of lanes, in cycles. */
int tl_rec_drain_by_groups(tl_recorder *r);
/* The traced process has ended: its events, then one process-end event. */
int tl_rec_log_process_end(tl_recorder *r);
/* The losses no later event marked (the producer stopped): an OVERFLOW each. */
void tl_rec_mark_unfinished_losses(tl_recorder *r);

/* The batch a drain of another process's buffer copies into. ENOMEM or 0. */
int tl_rec_batch_alloc(tl_recorder *r);

/* ---- flusher.c ------------------------------------------------------------------------ */

int tl_rec_start_flusher(tl_recorder *r);
void tl_rec_stop_flusher(tl_recorder *r);
/* Another process's stream without flusher: a thread that logs the process's end when it comes. */
int tl_rec_start_end_watcher(tl_recorder *r);
void tl_rec_stop_end_watcher(tl_recorder *r);

#endif
