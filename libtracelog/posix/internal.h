/*
 * The POSIX layer's trace handles (registry.c, active.c: what every file
 * of the layer shares) and attributes (attr.c). The rest of the layer's
 * interface is in a header per concern: names.h, log.h, process.h,
 * wanted.h, event.h, read.h. The standard's functions are spread over the
 * files by concern: attr.c, control.c, event.c, eventset.c, log.c, read.c,
 * prerecorded.c, ext.c, exec.c, types.c, typed.c, spawn.c.
 */
#ifndef TRACELOG_POSIX_INTERNAL_H
#define TRACELOG_POSIX_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <trace.h>

#include "common/lock.h"
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
    /* Active: start, stop, filter and clear, and the reader's consumer. Pre-recorded: the reader.
       Its handle's slot's (registry.c), set by tl_posix_register: a slot outlives its handles. */
    tl_lock *read_lock;

    struct {
        tl_stream *stream;
        uint64_t stream_bytes; /* pid 0: its mapping's size (forked children share the header's copy) */
        tl_consumer *consumer; /* without log: what the getnext functions read with */
        _Atomic uint64_t overruns_reported;
        tl_recorder *log;      /* with log: it drains the stream with a consumer of its own */
        _Atomic uint64_t log_overruns_reported;
        tl_remote *remote;     /* pid != 0: the stream is in a buffer another process records into */
        tl_names *remote_names; /* its process's names (tl_posix_remote_names), under names_lock */
        tl_lock names_lock;     /* remote_names: taken by tl_posix_trace_names, given by ..._done */
        _Atomic uint64_t names_refused; /* with log: malformed thread names of other processes (log.c) */
        _Atomic int names_error;        /* with log: why the traced process's name map was refused, or 0 (log.c) */
        tl_xproc_buffer named; /* pid 0, INHERITED: the stream's buffer has a name that spawned children open */
        int end_seen;          /* remote, without log: 1 once its process ended, 2 once the end was read,
                                  3 its buffer was lost (the OVERFLOW to be read first: read.c) */
        int faulted;           /* remote, without log: its buffer was lost (read.c) */
        _Atomic uint64_t overruns_seen; /* remote, without log: the overruns last read from its buffer */
        int32_t end_data[2];   /* the end event's data: how, code */
    } active;

    struct {
        tracelog_reader *reader;
        tracelog_log_status status;
    } pre;
} tl_trace;
/* ---- handles (registry.c) ---------------------------------------------------- */

/*
 * acquire acts on a pending cancellation (outside other trace calls),
 * checks the handle, the owner process and the kind mask (1 << tl_kind),
 * takes a use and disables cancellation until release (nested calls
 * counted). use and unuse take and give back the use alone (getnext,
 * whose wait is a cancellation point). cancel_off and cancel_on disable
 * cancellation for a function that takes no use (create, open).
 */
int tl_posix_acquire(trace_id_t trid, unsigned kinds, tl_trace **out);
void tl_posix_release(tl_trace *t);
int tl_posix_use(trace_id_t trid, unsigned kinds, tl_trace **out);
void tl_posix_unuse(tl_trace *t);
void tl_posix_cancel_off(void);
void tl_posix_cancel_on(void);
/* Shutdowns under way on this process's threads (exit() waits for them); a forked child has none. */
void tl_posix_shutdown_begins(void);
void tl_posix_shutdown_ends(void);
int tl_posix_shutdowns_under_way(void);
/* Pre-recorded streams a process holds open at once, besides its TRACE_SYS_MAX active ones. */
#define TL_PRERECORDED_MAX 207
/*
 * EAGAIN when the slots of t's kind are all in use: TRACE_SYS_MAX active
 * streams in this process or, for an active stream, by this user's
 * processes; TL_PRERECORDED_MAX pre-recorded ones.
 */
int tl_posix_register(tl_trace *t, trace_id_t *trid);
/*
 * Marks t dying, waits for other users to leave, frees the slot: 0, and the
 * caller (holding one use, from tl_posix_acquire) frees t, then calls
 * tl_posix_cancel_on. EINVAL when another thread unregistered it first (two
 * shutdowns at once): the caller's use is released, and t is that thread's
 * to free.
 */
int tl_posix_unregister(tl_trace *t);
/*
 * A pre-recorded stream's handle checked and its read lock taken, without
 * a use: the one lock pair of posix_trace_getnext_event on a log. 0, EINVAL
 * (not a handle of this process, or closed), or ENOENT when trid is a
 * live handle of another kind (the caller takes the common way).
 */
int tl_posix_lock_prerecorded(trace_id_t trid, tl_trace **out);
/* Makes slot's stream the one posix_trace_event records into once the user starts it (or none). */
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
/*
 * Applies the filters controllers asked for by name (tracelog_trace_filter_name)
 * that wait for user id (the process just opened it; 0: any) in stream (a
 * controller's buffer id; 0: any). Async-signal-safe, lock-free (remote.c).
 */
void tl_posix_remote_filters(trace_event_id_t id, uint64_t stream, uint64_t caller);
/* A running inherited stream of this process with a named buffer: 1 with its name and id (spawn.c). */
int tl_posix_inherited_buffer(char name[TL_SHM_NAME_MAX], uint64_t *id);
/* Handles of this process's traces of the given kinds (at most max). */
size_t tl_posix_own_trids(trace_id_t *out, size_t max, unsigned kinds);
/* The pid events carry, read inline: a pre-recorded stream's handle is checked against it on every getnext. */
static inline pid_t tl_posix_pid(void) { return (pid_t)atomic_load_explicit(&tl_posix_current_pid, memory_order_relaxed); }
/* Fork handlers' parts (process.c calls them): before fork, 1 if an inherited stream is alive. */
int tl_posix_registry_before_fork(void);
void tl_posix_registry_after_fork_parent(void);
void tl_posix_registry_after_fork_child(void);

/* ---- attributes (attr.c) ---------------------------------------------------------------- */

/* The environment variable `name` if it holds a decimal number in [min, max], else `fallback`. */
unsigned tl_posix_env_number(const char *name, unsigned min, unsigned max, unsigned fallback);
unsigned tl_posix_flush_interval_ms(const trace_attr_t *attr); /* the attribute or the default */
unsigned tl_posix_flush_wait_us(const trace_attr_t *attr);     /* the attribute or the default */

/* Converts a time in ns since the epoch. */
static inline struct timespec tl_timespec(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    return ts;
}

#endif
