/*
 * The POSIX layer's own interface: trace handles (registry.c), the name map
 * (names.c), logs (log.c, over recorder/), fatal signals (crash.c), the process's fork and
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

#include "recorder/recorder.h"
#include "stream/consumer.h"
#include "stream/stream.h"
#include "xproc/attach.h"
#include "xproc/remote.h"
#include "xproc/traced.h"
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
        tl_consumer *consumer; /* without log: what the getnext functions read with */
        _Atomic uint64_t overruns_reported;
        tl_recorder *log;      /* with log: it drains the stream with a consumer of its own */
        _Atomic uint64_t log_overruns_reported;
        tl_remote *remote;     /* pid != 0: the stream is in a buffer another process records into */
        tl_names *remote_names; /* its process's names (tl_posix_remote_names) */
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
/*
 * The active table (active.c), read by posix_trace_event without locks: the
 * streams this process records into. Entry i is bit i of the event word
 * (xproc/attach.h: one word at a link-time address that a controller can
 * reach): the streams the process created take entries 0 ..
 * TRACE_SYS_MAX - 1, the streams controllers announced take the
 * TL_CTL_SLOTS entries after; bit 63 is TL_CTL_PENDING. Written by
 * registry.c (and remote.c, for announced streams).
 */
extern _Atomic(tl_stream *) tl_posix_active[TL_ACTIVE_SLOTS];
/* The pid events carry: set at load and in a forked child (registry.c). */
extern _Atomic uint32_t tl_posix_current_pid;
/* Publishes a stream a controller announced in a free entry: its index, or -EAGAIN. Async-signal-safe. */
int tl_posix_publish_remote(tl_stream *s);
/* The process's pid for events, kept by the fork handlers, which it installs (once). */
void tl_posix_registry_init(void);
/* What xproc/attach.c hands announced buffers to (remote.c). */
const tl_xproc_ops *tl_posix_remote_ops(void);
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

void tl_posix_process_init(void); /* the fork handlers, installed once (at load, and by the calls that need them) */
/* posix_trace_event's slow path when a controller announced something (process.c). */
void tl_posix_remote_poll(void);

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

/* A system event as the calling thread records it (its pid and ids), from program address caller. */
tracelog_event tl_posix_system_event(trace_event_id_t id, const void *data, size_t len, uint64_t caller);

/* ---- another process's stream: xproc/traced.h; its names (names.c) ---------------- */

/*
 * The traced process's named map, attached once into *cache (made if it
 * has none yet: our child before its exec opens its names there), again if
 * it moved (the process joined its parent's map since): 0, or EAGAIN while
 * there is none we can read. The caller serialises the calls on one cache.
 */
int tl_posix_remote_names(const tl_remote *rm, tl_names **cache);
/* Detaches *cache; removes the map if its process is gone (a killed process cannot). */
void tl_posix_remote_names_release(tl_remote *rm, tl_names **cache);
/* The names a handle's stream uses: 0 with *out (NULL: this process's own), or EAGAIN. */
int tl_posix_trace_names(tl_trace *t, tl_names **out);

/* ---- logs (log.c): the recorder (recorder/recorder.h) as the standard sees it ---------- */

/*
 * t's log, on a duplicate of fd: the recorder, with the FLUSH policy its
 * flusher thread, watched by the fatal-signal handlers. An errno or 0.
 */
int tl_log_open(tl_trace *t, int fd);
/* Closes (the last flush, the trailer) or abandons (writing nothing more) the log of a stream. */
int tl_log_close(tl_recorder *r);
void tl_log_abandon(tl_recorder *r);
/* Fills the flush and log fields of si, resetting what the standard resets when read. */
void tl_log_get_status(tl_trace *t, struct posix_trace_status_info *si);
/* POSIX_TRACE_FULL or NOT_FULL for a log with these counters (a LOOP log that wrapped is full). */
int tl_posix_log_full_status(int log_policy, const tracelog_log_status *ls);

/* ---- fatal signals (crash.c): handlers installed while a log is watched ----------------- */

void tl_posix_crash_watch(tl_recorder *r);
void tl_posix_crash_unwatch(tl_recorder *r);
void tl_posix_crash_after_fork_child(void); /* a child has no log of its own */

/* ---- reading and statistics (read.c, ext.c) ------------------------------------------------- */

/*
 * A controller's stream without log: 1 if its traced process has just been
 * seen to have ended (stopped, the end to be read after its events). Caller holds read_lock.
 */
int tl_posix_notice_end(tl_trace *t);
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
