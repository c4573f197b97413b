/*
 * tracelog/posix.h - tracelog's extensions to the POSIX tracing interface,
 * for what <trace.h> lacks. Include after <trace.h>.
 *
 * Thread safety: every function may be called from any thread of the
 * process that created the stream, concurrently with the POSIX functions.
 * Errors are returned as error numbers, like the POSIX functions.
 *
 * Timestamps (posix_timestamp) are CLOCK_REALTIME nanoseconds. A stream takes
 * them from the CPU's time-stamp counter when the kernel says it is stable
 * (its clocksource is "tsc", or it offers "tsc" and the CPU has constant_tsc
 * and nonstop_tsc), else from clock_gettime. The environment variable
 * TRACELOG_CLOCK=tsc forces the counter (x86 only), TRACELOG_CLOCK=clock_gettime
 * forbids it; it is read once, when the process creates its first stream.
 * The counter's rate is measured against CLOCK_MONOTONIC over at least
 * 20 ms, to within 2 ppm, once per boot and user, and kept for the other
 * processes in /dev/shm/tracelog.<euid>.tsc (mode 0600; checked, never
 * trusted: a wrong one is measured again and replaced). A process that
 * finds none and has run less than 20 ms gives its stream clock_gettime
 * timestamps instead of waiting (with TRACELOG_CLOCK=tsc it waits, at most
 * 1 s), and leaves its measurement at exit. So no stream creation waits,
 * and one with a cached rate costs about 0.2 ms more. A stream's conversion,
 * fixed for its life, is stored in the log's METADATA (format-spec 5.2); it
 * does not follow later NTP adjustments of the system clock.
 */
#ifndef TRACELOG_POSIX_H
#define TRACELOG_POSIX_H

#include <stdint.h>
#include <trace.h>

#include "tracelog/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Durable sync of a stream with log: flushes every recorded event to the log
 * (as posix_trace_flush, synchronously) and then fdatasync()s the log, so the
 * events survive a crash of the machine, not only of the process.
 * Errors: EINVAL (not an active stream with log), EIO/ENOSPC/EFBIG (write or
 * sync failed; also reported in posix_stream_flush_error).
 */
TRACELOG_API int tracelog_trace_sync(trace_id_t trid);

/*
 * How often the background flusher of a stream with the FLUSH policy writes
 * what it has taken from the stream to the log as a partial chunk, in
 * milliseconds (1 .. 86,400,000). This bounds what a process that ends
 * without running any handler (_exit, SIGKILL, a power cut aside) loses:
 * events recorded more than about one interval before the end are in the
 * log. The flusher takes events from the stream at each of these writes,
 * and sooner when a thread has filled a quarter of its part of the stream
 * (or waits for room in it): a program's bursts are drained after them, not
 * while its threads record. A timer write happens only
 * when events were taken since the last one, so an idle stream writes
 * nothing. Shorter intervals mean smaller chunks (less compression, more
 * blocks); streams with other policies write only when flushed.
 * The default, used while the attribute is not set, is 100 ms, or the value
 * of the environment variable TRACELOG_FLUSH_INTERVAL_MS when it holds a
 * decimal number in that range (read when the stream is created; anything
 * else is ignored). posix_trace_get_attr reports the interval in use.
 * Errors: EINVAL (attr not initialised, ms out of range, or a NULL pointer).
 */
TRACELOG_API int tracelog_trace_attr_setflushinterval(trace_attr_t *attr, unsigned ms);
TRACELOG_API int tracelog_trace_attr_getflushinterval(const trace_attr_t *attr, unsigned *ms);

/*
 * How long posix_trace_event() waits, in microseconds (0 .. 1,000,000), for
 * the flusher of a FLUSH stream to make room when the calling thread's
 * buffer is full, before the event is lost (counted, and marked in the log
 * by OVERFLOW and RESUME). The standard lets FLUSH lose events when
 * flushing is slower than recording; waiting instead keeps every event of
 * a burst, or of a tight loop, at the price of slowing the recording thread
 * down to the flusher's pace (issue 11, "zero loss first"; LTTng's channels
 * call this a blocking timeout). The wait is a sleep, not a lock: no other
 * thread is stopped, and signal handlers that record events may interrupt
 * it. A wait that times out turns waiting off for that thread's buffer until
 * the flusher frees room again, so a flusher that cannot write (a full
 * disk, a controller that died) costs one wait, not one per event.
 * 0 never waits (every event of a full buffer is lost at once, the plain
 * POSIX behaviour). Streams with other policies never wait.
 * The default, used while the attribute is not set, is 100,000 µs (100 ms, the
 * default flush interval: a full buffer waits at most about one interval),
 * or the value of the environment variable TRACELOG_FLUSH_WAIT_US when it
 * holds a decimal number in that range (read when the stream is created).
 * posix_trace_get_attr reports the wait in use.
 * Errors: EINVAL (attr not initialised, us out of range, or a NULL pointer).
 */
TRACELOG_API int tracelog_trace_attr_setflushwait(trace_attr_t *attr, unsigned us);
TRACELOG_API int tracelog_trace_attr_getflushwait(const trace_attr_t *attr, unsigned *us);

/*
 * Fatal signals. While a stream with log exists, the library handles
 * SIGSEGV, SIGBUS, SIGABRT, SIGFPE and SIGILL (sigaction, SA_SIGINFO |
 * SA_ONSTACK, so a stack overflow is handled on the program's alternate
 * signal stack if it has one): before anything else it writes to each log
 * what the stream still holds, up to the moment of the crash, as a partial
 * chunk (not a trailer: the log reads back as recovered). Then it chains to
 * the handler installed before it (called with its own mask and flags as
 * far as they apply), or, if that was the default action, restores it and
 * re-raises the signal, so the process dies by the same signal with its
 * core dump. Handlers installed before the first stream with log are given
 * back after the last one is shut down; a handler installed over the
 * library's is left in place (and may keep chaining to it).
 *
 * This is best effort, and not async-signal-safe in the strict sense: the
 * log writer may allocate memory and compress. So that it never deadlocks:
 * a log whose lock another thread holds is waited for at most 500 ms and a
 * log the crashing thread itself was writing is skipped; a second fatal
 * signal in the writing thread ends the process at once with that signal;
 * other crashing threads wait for the first; and an alarm (SIGALRM, armed
 * for 2 s while the handler writes, the program's own disposition and alarm
 * restored afterwards) ends the process with the original signal if the
 * writing hangs, for instance on a malloc lock the crash left held. A crash
 * in a forked child never writes its parent's log.
 */

/* Counters of an active stream (a snapshot; they only grow, nothing is reset). */
typedef struct tracelog_trace_stats {
    uint64_t events_delivered; /* taken out of the stream: read, or flushed to the log */
    uint64_t events_lost;      /* overruns: overwritten (LOOP) or dropped (UNTIL_FULL, FLUSH) */
    uint64_t events_buffered;  /* an upper bound of the events still in memory */
    uint64_t log_events_written;
    uint64_t log_events_lost;  /* overwritten by a LOOP log or discarded by an UNTIL_FULL log */
    uint32_t lanes;            /* per-thread buffers of the stream */
    uint32_t flags;            /* TRACELOG_STATS_* bits */
    uint64_t names_refused;    /* with log, of another process (a controller's, or children recording into an
                                  inherited stream): thread names it published that the log refused as
                                  malformed (no NUL within 16 bytes, or empty), each thread once (of
                                  the first 256 such threads; beyond, each time the log asks again);
                                  those threads are named from /proc while they live, else not at all */
    int32_t names_error;       /* with log of another process: 0, or why the library refused that process's
                                  name map the first time (an errno): ENOTSUP (a map of another
                                  version of libtracelog, not a name map, or another owner's), ESTALE
                                  (left by a dead process with its pid), EACCES (not readable by us).
                                  The log then has the process's events under their ids, without
                                  their names, payload schemas, or the names of threads gone before
                                  they were written. A failure a later try may not meet (a lock,
                                  memory, descriptors) is tried again and not reported here */
} tracelog_trace_stats;

/*
 * flags: a stream created for another process (posix_trace_create with its
 * pid) that the process has taken up: its libtracelog acted on the
 * controller's announcement (at its next trace call, or at load after an
 * exec; docs/design/cross-process.md, section 4), or it recorded into the
 * stream (should it have overwritten its answer since). A process that never does
 * runs no libtracelog (a child the controller made the rendezvous for, then
 * exec'd into a program without it) or makes no trace call. Never set for a
 * stream of the caller's own.
 */
#define TRACELOG_STATS_JOINED 0x1u

/* Errors: EINVAL (trid is not an active stream of this process, or stats is NULL). */
TRACELOG_API int tracelog_trace_get_stats(trace_id_t trid, tracelog_trace_stats *stats);

/*
 * A pre-recorded stream (posix_trace_open) loads the log's next chunks on
 * `threads` threads of its own (reads them, verifies their checksums,
 * decompresses them) while posix_trace_getnext_event() and its variants
 * return the current chunk's events: tracelog_reader_set_read_ahead()
 * (tracelog/reader.h) says what it costs. The events and their order are
 * the same either way; it pays when CPUs are free. 0, the default, loads
 * each chunk on the calling thread. The environment variable
 * TRACELOG_READ_AHEAD=N (0..64, reader.h's TRACELOG_READ_AHEAD_MAX) sets
 * it at every posix_trace_open of the process, for programs that do not
 * call this (a value out of that range is ignored, and so is the variable
 * for a log read from a pipe). The threads end at posix_trace_close().
 * Thread-safe: a call waits for a read of the stream in progress on
 * another thread.
 * Errors: EINVAL (trid is not a pre-recorded stream of this process,
 * threads outside 0..TRACELOG_READ_AHEAD_MAX, or the log is read from a
 * pipe: it is read as its bytes come), EAGAIN (a thread or its memory
 * could not be had; reading goes on without).
 */
TRACELOG_API int tracelog_trace_set_read_ahead(trace_id_t trid, int threads);

/*
 * Filters the event type `name` out of stream trid (how
 * POSIX_TRACE_ADD_EVENTSET) or lets it through (POSIX_TRACE_SUB_EVENTSET),
 * by name. For a stream of this process, and for a name the traced process
 * of a controller's stream has opened, it is posix_trace_set_filter with
 * the name's id. A name the traced process has not opened yet gets no id
 * here (posix_trace_trid_eventid_open would give it the next one now, and
 * the process's own names would then get other ids than in its own logs):
 * the process applies the filter when it opens the name (or maps the
 * stream, if later), records POSIX_TRACE_FILTER (old and new filter) then,
 * and the name has the id of the process's own order. So a filter set with
 * it before posix_trace_start may show in the start event's filter only as
 * that later FILTER event. A later posix_trace_set_filter with
 * POSIX_TRACE_SET_EVENTSET replaces what was applied. ptlog record --event
 * and --exclude use it. A process's name map holds 64 such names over its
 * life (their streams may be gone): beyond, the name gets the next id at
 * once, as posix_trace_trid_eventid_open gives it. Thread-safe. Errors:
 * EINVAL (trid, name or how), ENAMETOOLONG, EAGAIN (the traced process's
 * name map cannot be locked or read).
 */
TRACELOG_API int tracelog_trace_filter_name(trace_id_t trid, const char *name, int how);

/*
 * Typed events: posix_trace_eventid_open() with the layout of the event's
 * payload, so that logs show named fields instead of bytes. schema is text
 * in the language of <tracelog/schema.h> ("u32 len; u16 port; char[16]
 * iface; f64 latency"), describing the C struct the program passes to
 * posix_trace_event() with C's alignment and padding:
 *
 *     struct rx { uint32_t len; uint16_t port; char iface[16]; double latency; } rx;
 *     tracelog_eventid_open_typed("net.rx", "u32 len; u16 port; char[16] iface; f64 latency", &id);
 *     posix_trace_event(id, &rx, sizeof rx);
 *
 * *id is the id posix_trace_eventid_open() gives name (both calls may be
 * mixed; an untyped open of a typed name gives the same id and keeps the
 * schema). The schema is parsed here; every log of the process stores it
 * (canonical form) with the event type, and readers decode payloads through
 * it (tracelog_reader_event_schema, tracelog_fields_decode). Recording a
 * typed event costs exactly what an untyped one does: posix_trace_event()
 * never looks at the schema, which is only used when reading.
 *
 * Schemas are kept per process, like the name map: a child of fork keeps
 * those registered before the fork. Registering the same name again with an
 * equal schema (same canonical form) gives the same id. A name's schema must
 * come with its first open, and a child traced into its parent's inherited
 * stream (which shares the parent's name map) should register its typed
 * names before fork: the parent's log knows only the schemas registered in
 * the parent. When the process's TRACE_USER_EVENT_MAX names are used up,
 * *id is POSIX_TRACE_UNNAMED_USEREVENT, as posix_trace_eventid_open() gives,
 * and the schema is not kept.
 *
 * Errors: EINVAL (a NULL argument, or a malformed or over-limit schema: for
 * the byte position and a message, call tracelog_schema_parse() on the same
 * text, which is the parser used here and fails the same way),
 * ENAMETOOLONG (name of more than TRACE_EVENT_NAME_MAX characters), EEXIST (name
 * was registered with another schema, or opened without one before),
 * ENOMEM. On error *id is unchanged.
 * Thread-safe; not async-signal-safe (it allocates).
 */
TRACELOG_API int tracelog_eventid_open_typed(const char *name, const char *schema,
                                             trace_event_id_t *id);

/*
 * The controller's variant, as posix_trace_trid_eventid_open(): the same as
 * tracelog_eventid_open_typed() (names and schemas are per process) once
 * trid is checked. Errors: EINVAL also when trid is not an active stream of
 * this process (a pre-recorded stream included); otherwise as above.
 */
TRACELOG_API int tracelog_trid_eventid_open_typed(trace_id_t trid, const char *name,
                                                  const char *schema, trace_event_id_t *id);

/*
 * sysconf() for the tracing options and limits, which glibc's sysconf()
 * reports as -1 (unsupported): _SC_TRACE, _SC_TRACE_EVENT_FILTER,
 * _SC_TRACE_LOG, _SC_TRACE_INHERIT give 200809L; _SC_TRACE_EVENT_NAME_MAX,
 * _SC_TRACE_NAME_MAX, _SC_TRACE_SYS_MAX, _SC_TRACE_USER_EVENT_MAX give the
 * limits of <trace.h>. Any other name is passed to sysconf().
 */
TRACELOG_API long tracelog_sysconf(int name);

#ifdef __cplusplus
}
#endif
#endif
