/* Shared state of the POSIX layer: trace handles, the process's name map. */
#ifndef TRACELOG_POSIX_INTERNAL_H
#define TRACELOG_POSIX_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <trace.h>

#include "stream/stream.h"
#include "tracelog/reader.h"
#include "tracelog/writer.h"

#define TL_ATTR_MAGIC 0x54524154u /* "TATR" */
#define TL_ID_LIMIT __TRACELOG_EVENT_ID_LIMIT
#define TL_SYSTEM_EVENTS 8        /* POSIX_TRACE_ERROR .. POSIX_TRACE_FLUSH_STOP */
#define TL_DEFAULT_STREAM_SIZE (8u << 20)
#define TL_DEFAULT_MAX_DATA 1024u
#define TL_DEFAULT_LOG_SIZE (64u << 20)
#define TL_DEFAULT_FLUSH_INTERVAL_MS 100u
#define TL_MAX_FLUSH_INTERVAL_MS 86400000u /* a day */

typedef enum tl_kind { TL_ACTIVE, TL_ACTIVE_LOG, TL_PRERECORDED } tl_kind;

typedef struct tl_trace {
    tl_kind kind;
    pid_t owner;             /* only this process may use the handle */
    trace_attr_t attr;       /* as resolved at creation (or read from the log) */
    int slot;
    int users;               /* calls in progress on this handle */
    int dying;               /* shutdown/close started: new calls get EINVAL */
    pthread_cond_t idle;     /* signalled when users drops to 0 while dying */
    size_t typelist_pos;

    /* Active streams. */
    tl_shm *shm;
    pthread_mutex_t read_lock; /* one consumer at a time */
    tl_consumer consumer;
    uint64_t overruns_reported;

    /* Streams with log. */
    int log_fd;                /* our dup of the caller's descriptor */
    tracelog_writer *writer;
    pthread_mutex_t log_lock;  /* writer, counters below: taken with tl_posix_log_lock */
    _Atomic uintptr_t log_owner; /* pthread_self() of log_lock's holder, 0 if none (the crash handler's check) */
    uint64_t flush_interval_ns; /* FLUSH policy: the flusher writes a partial chunk this often */
    uint64_t written_at;       /* consumer.delivered when the log was last written */
    pthread_t flusher;
    int flusher_running;
    _Atomic int flusher_stop;
    _Atomic int flushing;
    pthread_mutex_t status_lock; /* flush_error and log_snapshot: never held during I/O */
    int flush_error;           /* first error, reset when read */
    tracelog_log_status log_snapshot; /* the writer's status after the last flush */
    int log_error;             /* the write error that stopped the log (the writer's errors are sticky) */
    uint64_t log_overruns_reported;
    uint32_t names_logged;     /* user names already given to the writer */
    int log_stop_written;      /* UNTIL_FULL log: the final STOP is in */
    uint64_t events_flushed;

    /* Pre-recorded streams. */
    tracelog_reader *reader;
    tracelog_log_status log_status;
} tl_trace;

/* Handles. acquire checks the handle, the owner process and the kind mask (1 << tl_kind). */
int tl_posix_acquire(trace_id_t trid, unsigned kinds, tl_trace **out);
void tl_posix_release(tl_trace *t);
int tl_posix_register(tl_trace *t, trace_id_t *trid); /* EAGAIN when TRACE_SYS_MAX are in use */
/* Marks t dying, waits for other users to leave, frees the slot. Caller holds one use. */
void tl_posix_unregister(tl_trace *t);
/* Makes posix_trace_event record into (or stop recording into) the stream of slot. */
void tl_posix_publish(int slot, tl_shm *s);
void tl_posix_init_once(void);
/* Fork handlers' parts (process.c calls them): before fork, 1 if an inherited stream is alive. */
int tl_posix_registry_before_fork(void);
void tl_posix_registry_after_fork_parent(void);
void tl_posix_registry_after_fork_child(void);
/* Handles of this process's traces of the given kinds (at most max). */
size_t tl_posix_own_trids(trace_id_t *out, size_t max, unsigned kinds);
pid_t tl_posix_pid(void);

/* Names. Ids below TL_SYSTEM_EVENTS + 1 are system events. */
const char *tl_posix_system_name(trace_event_id_t id); /* NULL if not a system id */
int tl_posix_name_of(trace_event_id_t id, char *out, size_t cap); /* 0 or EINVAL */
int tl_posix_name_open(const char *name, trace_event_id_t *id);
uint32_t tl_posix_name_count(void);
/* Fork: shared, the child keeps its parent's map (an inherited stream is alive); else it gets a copy. */
void tl_posix_names_before_fork(int shared);
void tl_posix_names_after_fork_parent(void);
void tl_posix_names_after_fork_child(int shared);

/* The process: fork handlers installed once (process.c). */
void tl_posix_process_init(void);
void tl_posix_event_after_fork_child(void); /* event.c: the child's threads get lanes of their own */
uint32_t tl_posix_kernel_tid(void);         /* the calling thread's gettid(), cached (async-signal-safe) */

/* Logs. */
int tl_posix_log_start(tl_trace *t, int fd);
int tl_posix_log_flush(tl_trace *t, int explicit_call);
int tl_posix_log_finish(tl_trace *t);
/* Undoes tl_posix_log_start when the stream cannot be created after all: nothing more is written. */
void tl_posix_log_abandon(tl_trace *t);
void tl_posix_log_lock(tl_trace *t);
void tl_posix_log_unlock(tl_trace *t);
/* The fatal-signal handler's flush (crash.c): the events recorded until now, then the partial chunk. */
void tl_posix_log_crash_flush(tl_trace *t);
/* Fatal-signal handlers (crash.c): installed while a log is watched. */
void tl_posix_crash_watch(tl_trace *t);
void tl_posix_crash_unwatch(tl_trace *t);
void tl_posix_crash_after_fork_child(void); /* a child has no log of its own */
unsigned tl_posix_flush_interval_ms(const trace_attr_t *attr); /* attr.c: the attribute or the default */
void tl_posix_set_from_shm(const tl_shm *s, trace_event_set_t *set);

/* Converts a time in ns since the epoch. */
static inline struct timespec tl_timespec(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

#endif
