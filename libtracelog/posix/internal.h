/*
 * The POSIX layer's own interface: trace handles (registry.c), the name map
 * (names.c), logs (log.c), fatal signals (crash.c), the process's fork and
 * exit hooks (process.c), and the trace point's helpers (event.c). The
 * standard's functions are spread over the files by concern: attr.c,
 * control.c, event.c, eventset.c, log.c, read.c, prerecorded.c, ext.c,
 * exec.c.
 */
#ifndef TRACELOG_POSIX_INTERNAL_H
#define TRACELOG_POSIX_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <trace.h>

#include "stream/stream.h"
#include "xproc/attach.h"
#include "xproc/remote.h"
#include "xproc/watch.h"
#include "tracelog/posix.h"
#include "tracelog/reader.h"

#define TL_ATTR_MAGIC 0x54524154u /* "TATR" */
#define TL_ID_LIMIT __TRACELOG_EVENT_ID_LIMIT
#define TL_SYSTEM_EVENTS 8        /* POSIX_TRACE_ERROR .. POSIX_TRACE_FLUSH_STOP */
#define TL_DEFAULT_STREAM_SIZE (8u << 20)
#define TL_DEFAULT_MAX_DATA 1024u
#define TL_DEFAULT_LOG_SIZE (64u << 20)
#define TL_DEFAULT_FLUSH_INTERVAL_MS 100u
#define TL_MAX_FLUSH_INTERVAL_MS 86400000u /* a day */
#define TL_DEFAULT_FLUSH_WAIT_US 100000u     /* 100 ms (tracelog_trace_attr_setflushwait) */

_Static_assert(sizeof(trace_event_set_t) == TL_FILTER_WORDS * 8, "the stream's filter is a trace_event_set_t");
_Static_assert(TL_ID_LIMIT <= TL_FILTER_IDS, "every event id can be filtered");

typedef enum tl_kind { TL_ACTIVE, TL_ACTIVE_LOG, TL_PRERECORDED } tl_kind;
#define TL_ACTIVE_KINDS (1u << TL_ACTIVE | 1u << TL_ACTIVE_LOG)
#define TL_ANY_KIND (TL_ACTIVE_KINDS | 1u << TL_PRERECORDED)

typedef struct tl_log tl_log;       /* a stream's log: log.c */
typedef struct tl_remote tl_remote; /* another process's stream, as its controller holds it: controller.c */
typedef struct tl_names tl_names;   /* an event-name map: names.c */

/* The system event a controller's log ends with when the traced process ended (design note, section 7). */
#define TL_PROCESS_END_EVENT ((trace_event_id_t)9)
#define TL_PROCESS_END_NAME "tracelog_process_end"

typedef struct tl_trace {
    tl_kind kind;
    pid_t owner;             /* only this process may use the handle */
    trace_attr_t attr;       /* as resolved at creation (or read from the log) */
    int slot;
    uint32_t quota_entry;    /* active: its entry in the per-user table + 1; 0 none (registry.c) */
    int dying;               /* shutdown/close started: new calls get EINVAL (the slot counts the calls in progress) */
    size_t typelist_pos;
    /* Active: start, stop, filter and clear, and the reader's consumer. Pre-recorded: the reader. */
    pthread_mutex_t read_lock;

    struct {
        tl_stream *stream;
        tl_consumer consumer;  /* without log: what the getnext functions read with */
        _Atomic uint64_t overruns_reported;
        tl_log *log;           /* with log: it drains the stream with a consumer of its own */
        tl_remote *remote;     /* pid != 0: the stream is in a buffer another process records into */
        tl_xproc_buffer named; /* pid 0, INHERITED: the stream's buffer has a name that spawned children open */
        int end_seen;          /* remote, without log: 1 once its process ended, 2 once the end was read,
                                  3 its buffer was lost (the OVERFLOW to be read first: read.c) */
        int faulted;           /* remote, without log: its buffer was lost (read.c) */
        uint64_t overruns_seen; /* remote, without log: the overruns last read from its buffer */
        int32_t end_data[2];   /* the end event's data: how, code */
    } active;

    struct {
        tracelog_reader *reader;
        tracelog_log_status status;
    } pre;
} tl_trace;

/* ---- handles (registry.c) ---------------------------------------------------- */

/* acquire checks the handle, the owner process and the kind mask (1 << tl_kind). */
int tl_posix_acquire(trace_id_t trid, unsigned kinds, tl_trace **out);
void tl_posix_release(tl_trace *t);
/* EAGAIN when TRACE_SYS_MAX are in use: in this process, or for an active stream, by this user's processes. */
int tl_posix_register(tl_trace *t, trace_id_t *trid);
/* Marks t dying, waits for other users to leave, frees the slot. Caller holds one use. */
void tl_posix_unregister(tl_trace *t);
/* Makes posix_trace_event record into (or stop recording into) the stream of slot. */
void tl_posix_publish(int slot, tl_stream *s);
/* Entries of the active table: the process's own streams, then those controllers announced. */
#define TL_ACTIVE_SLOTS (TRACE_SYS_MAX + (int)TL_CTL_SLOTS)
/* Publishes a stream a controller announced in a free entry: its index, or -EAGAIN. Async-signal-safe. */
int tl_posix_publish_remote(tl_stream *s);
/* The process's pid for events, kept by the fork handlers, which it installs (once). */
void tl_posix_registry_init(void);
/* posix_trace_event's slow path when a controller announced something (remote.c). */
void tl_posix_remote_poll(void);
/* A running inherited stream of this process with a named buffer: 1 with its name and id (spawn.c). */
int tl_posix_inherited_buffer(char name[TL_SHM_NAME_MAX], uint64_t *id);
/* Handles of this process's traces of the given kinds (at most max). */
size_t tl_posix_own_trids(trace_id_t *out, size_t max, unsigned kinds);
pid_t tl_posix_pid(void);
/* Fork handlers' parts (process.c calls them): before fork, 1 if an inherited stream is alive. */
int tl_posix_registry_before_fork(void);
void tl_posix_registry_after_fork_parent(void);
void tl_posix_registry_after_fork_child(void);

/* ---- ids some stream may record (wanted.c): the trace point's first filter ---------- */

/* The user started (1) or stopped (0) the stream of own slot; also 0 when a slot is (re)published. */
void tl_posix_wanted_set(int slot, int running);
/* After a change of an own stream's filter. */
void tl_posix_wanted_refresh(void);
void tl_posix_wanted_before_fork(void);
void tl_posix_wanted_after_fork_parent(void);
/* In the child, first: inherited: the own slots it keeps recording into (its parent controls them). */
void tl_posix_wanted_after_fork_child(uint64_t inherited);

/* ---- the process (process.c) ------------------------------------------------------ */

void tl_posix_process_init(void); /* the fork handlers, installed once */
void tl_posix_exit_hook(void);    /* streams shut down at exit (POSIX), installed once */

/* ---- names (names.c). Ids below TL_SYSTEM_EVENTS + 1 are system events. ------------- */

const char *tl_posix_system_name(trace_event_id_t id); /* NULL if not a system id */
int tl_posix_name_of(trace_event_id_t id, char *out, size_t cap); /* 0 or EINVAL */
int tl_posix_name_open(const char *name, trace_event_id_t *id);
/* Opens name with its payload schema (canonical text, or NULL), which a controller reading the map sees with it. */
int tl_posix_name_open_schema(const char *name, const char *schema, trace_event_id_t *id);
uint32_t tl_posix_name_count(void);
/*
 * Moves the map to the named object a controller reads
 * (/tracelog.<euid>.<pid>.names), adopting one a controller made for us. 0
 * or an errno (the map then stays private: a controller sees no names).
 */
int tl_posix_names_share(void);
/* "TRACELOG_NAMES=<pid>.<start>": where a spawned child finds this process's named map; 0 or an errno. */
int tl_posix_names_env(char *out, size_t cap);
/* At load in a spawned child: uses the map TRACELOG_NAMES names (never moved, never removed by us). */
int tl_posix_names_join_env(void);
/*
 * Another process's named map (made if it has none; for a process sharing
 * its parent's map, the parent's): 0, ENOENT, ENOTSUP, ESTALE (a dead
 * process's), EAGAIN.
 */
int tl_names_attach(uint32_t euid, uint32_t egid, uint32_t pid, uint64_t start, uint64_t nonce, tl_names **out);
/* 1 once m became a redirect (its process joined its parent's map after we attached): attach again. */
int tl_names_moved(const tl_names *m);
void tl_names_detach(tl_names *m); /* unmaps m; accepts NULL */
/* A killed process cannot remove its named map: its controller does (if the process is gone). */
void tl_names_sweep(uint32_t euid, uint32_t pid, uint64_t start, uint64_t nonce);
/* The functions above on map m, or on the process's own map when m is NULL. */
uint32_t tl_names_count(const tl_names *m);
int tl_names_name_of(const tl_names *m, trace_event_id_t id, char *out, size_t cap);
int tl_names_open(tl_names *m, const char *name, trace_event_id_t *id);
/*
 * Opens name with its schema (canonical text) in another process's map m:
 * the id it has there, or a new one; EEXIST if the name is there untyped or
 * with another schema; EAGAIN (its lock), ENAMETOOLONG.
 */
int tl_names_open_typed(tl_names *m, const char *name, const char *schema, trace_event_id_t *id);
/*
 * The schema text the map holds for user id (m NULL: the process's own), a
 * new string the caller frees and must parse as untrusted input: 0, ENOENT
 * (none), EINVAL (its place in the map is out of bounds), ENOMEM.
 */
int tl_names_schema_of(const tl_names *m, trace_event_id_t id, char **out);
/* Fork: shared, the child keeps its parent's map (an inherited stream is alive); else it gets a copy. */
void tl_posix_names_before_fork(int shared);
void tl_posix_names_after_fork_parent(void);
void tl_posix_names_after_fork_child(int shared);
/* typed.c: a name's payload schema (canonical text, NULL if none; never freed), read without a lock. */
const char *tl_posix_schema_of(const char *name);
/* The schema event id (named name) is logged with: a system event's built-in one, or its name's; NULL if none. */
const char *tl_posix_event_schema(trace_event_id_t id, const char *name);

/* ---- the trace point (event.c) ------------------------------------------------------ */

void tl_posix_event_after_fork_child(void); /* the child's threads get lanes and ids of their own */
/* A system event as the calling thread records it (its pid and ids), from program address caller. */
tracelog_event tl_posix_system_event(trace_event_id_t id, const void *data, size_t len, uint64_t caller);

/* ---- another process's stream (controller.c) ------------------------------------------ */

/* ESRCH, EPERM, ENOTSUP (no libtracelog there), ENOSYS (no pidfd), ENOMEM, or 0. */
int tl_remote_open(pid_t pid, tl_remote **out);
/* Lays the stream out in a named buffer made for the traced process. */
int tl_remote_make_stream(tl_remote *rm, const tl_stream_params *p, tl_stream **s);
/* Tells the traced process to record into it (at its next trace call). 0, EAGAIN or ESRCH. */
int tl_remote_announce(tl_remote *rm, int inherited);
/*
 * Runs fn(arg) under the SIGBUS guard of the stream's buffer (design note,
 * section 9, item 11): fn's result, or EFAULT once the traced process has
 * shrunk the object (then, and for every later call without running fn: the
 * buffer is replaced by zero-filled private memory, so that nothing reading
 * it afterwards can fault). fn must take no lock and allocate nothing.
 * rm NULL (a stream of our own): fn(arg), unguarded.
 */
int tl_remote_guard(tl_remote *rm, int (*fn)(void *), void *arg);
/* tl_consumer_free (it gives the lanes' room back in the buffer) under the guard; rm may be NULL. */
void tl_remote_consumer_free(tl_remote *rm, tl_consumer *c);
/*
 * A consumer of rm's stream (NULL: a stream of our own, nothing to do),
 * made before the stream is announced: it raises events stamped before its
 * birth (tl_consumer_set_floor), and stops waiting for records in flight
 * once the traced process has ended, unless the stream is inherited (its
 * children may still record).
 */
void tl_remote_watch_consumer(tl_remote *rm, tl_consumer *c, const trace_attr_t *attr);
/* 1 once tl_remote_guard saw the buffer shrunk (rm may be NULL: 0). */
int tl_remote_faulted(const tl_remote *rm);
pid_t tl_remote_pid(const tl_remote *rm);
/* The traced process's names (0), or EAGAIN while it has no named map we can read. */
int tl_remote_names(tl_remote *rm, tl_names **out);
/* 1 once the traced process has ended, with how (never waits, never reaps). */
int tl_remote_ended(tl_remote *rm, tl_proc_end *end);
/* Sleeps until the traced process ends (1) or wake_fd is readable (0). */
int tl_remote_wait_end(tl_remote *rm, int wake_fd);
/*
 * 1 once the traced process has taken the stream up: its libtracelog acted
 * on the announcement (at its next trace call, or at load after an exec).
 * A process that never does runs no libtracelog, or makes no trace call.
 */
int tl_remote_joined(tl_remote *rm);
/* The traced process as a log describes it (format-spec 5.2, `process`), and its name. */
typedef struct tl_remote_identity {
    uint32_t pid;
    char program[TRACELOG_TEXT_MAX + 1]; /* its executable (/proc/<pid>/exe); "" unknown */
    char name[TRACELOG_TEXT_MAX + 1];    /* basename of its argv[0], else its command name; "" unknown */
} tl_remote_identity;
/*
 * Whether the traced process is what it will be traced as: 0 while it is
 * our child still running our own image (a fork that has not exec'd its
 * program yet: ptlog record, the standard's fork-exec-create examples), 1
 * once it has exec'd, joined the stream or ended, and for every other
 * process. Cheap enough to ask every few milliseconds (a readlink while 0).
 * *id gets the identity as last seen (once 1: as it is).
 */
int tl_remote_identity_known(tl_remote *rm, tl_remote_identity *id);
/* Marks the stream dead, tells the process to let it go, removes the buffer. Accepts NULL. */
void tl_remote_close(tl_remote *rm);
/*
 * The traced process of stream s has ended: s is stopped, and c (the
 * stream's consumer) counts a record it died in the middle of as lost at
 * once (unless the stream is inherited: a child may still be recording).
 */
void tl_posix_end_seen(tl_stream *s, tl_consumer *c, const trace_attr_t *attr);
/* The names a handle's stream uses: 0 with *out (NULL: this process's own), or EAGAIN. */
int tl_posix_trace_names(tl_trace *t, tl_names **out);

/* ---- logs (log.c) ---------------------------------------------------------------------- */

/*
 * A stream's log: its writer on a duplicate of fd, a consumer of the stream,
 * with the FLUSH policy the flusher thread, and for a controller's log of
 * another policy a thread that logs the traced process's end when it
 * comes. Every function is thread-safe (one lock, never held by another
 * log's call). Errors are error numbers.
 */
int tl_log_open(tl_log **out, tl_stream *s, const trace_attr_t *attr, int fd, tl_remote *remote);
/* posix_trace_flush (explicit_call: FLUSH_START and FLUSH_STOP are recorded) and the other full flushes. */
int tl_log_flush(tl_log *l, int explicit_call);
/* A flush, then fdatasync (tracelog_trace_sync). */
int tl_log_sync(tl_log *l);
/* A flush and a trailer, the writer kept open: the log reads back complete (exec). */
int tl_log_checkpoint(tl_log *l);
/* The last flush, the losses no later event marked, the trailer; frees l. */
int tl_log_close(tl_log *l);
/* Frees l, writing nothing more (the stream could not be created after all). */
void tl_log_abandon(tl_log *l);
/* posix_trace_stop and shutdown: the stream stopped under the log's lock (a STOP never follows the traced process's end).
   1 if it was running (tl_stream_stop). */
int tl_log_stop(tl_log *l, const tracelog_event *marker);
/* posix_trace_clear: forgets the stream's events (the log keeps what it has). */
void tl_log_clear(tl_log *l);
/* Fills the flush and log fields of si, resetting what the standard resets when read. */
void tl_log_get_status(tl_log *l, struct posix_trace_status_info *si);
/* The lane statistics by the log's consumer (its checked geometry), then the log's. */
void tl_log_get_stats(tl_log *l, tracelog_trace_stats *st);
/* Sum of the lanes' overrun counters, over the log consumer's lane count. */
uint64_t tl_log_overruns(tl_log *l);
/* What a controller's system events go through (tl_stream_start): the log's consumer; NULL for a log of our own. */
tl_consumer *tl_log_recorder(tl_log *l);
/* The fatal-signal handler's flush (crash.c): the events recorded until now, then the partial chunk. */
void tl_log_crash_flush(tl_log *l);
/* POSIX_TRACE_FULL or NOT_FULL for a log with these counters (a LOOP log that wrapped is full). */
int tl_posix_log_full_status(int log_policy, const tracelog_log_status *ls);

/* ---- fatal signals (crash.c): handlers installed while a log is watched ----------------- */

void tl_posix_crash_watch(tl_log *l);
void tl_posix_crash_unwatch(tl_log *l);
void tl_posix_crash_after_fork_child(void); /* a child has no log of its own */

/* ---- reading and statistics (read.c, ext.c) ------------------------------------------------- */

/*
 * A controller's stream without log: 1 if its traced process has just been
 * seen to have ended (stopped, the end to be read after its events). Caller holds read_lock.
 */
int tl_posix_notice_end(tl_trace *t);
/*
 * events_lost, events_buffered and lanes by consumer c: over its own copy
 * of the geometry, never the mapping's, which a traced process can change.
 */
void tl_posix_consumer_stats(const tl_consumer *c, tracelog_trace_stats *st);
/* The stream's overruns (log or consumer), and whether it runs: read under the buffer's guard (control.c). */
uint64_t tl_posix_overruns(tl_trace *t);
int tl_posix_running(tl_trace *t);

/* ---- attributes (attr.c) ---------------------------------------------------------------- */

unsigned tl_posix_flush_interval_ms(const trace_attr_t *attr); /* the attribute or the default */
unsigned tl_posix_flush_wait_us(const trace_attr_t *attr);     /* the attribute or the default */

/* Converts a time in ns since the epoch. */
static inline struct timespec tl_timespec(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

#endif
