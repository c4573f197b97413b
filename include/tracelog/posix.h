/*
 * tracelog/posix.h - tracelog's extensions to the POSIX tracing interface,
 * for what <trace.h> lacks. Include after <trace.h>.
 *
 * Thread safety: every function may be called from any thread of the
 * process that created the stream, concurrently with the POSIX functions.
 * Errors are returned as error numbers, like the POSIX functions.
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

/* Counters of an active stream (a snapshot; they only grow, nothing is reset). */
typedef struct tracelog_trace_stats {
    uint64_t events_delivered; /* taken out of the stream: read, or flushed to the log */
    uint64_t events_lost;      /* overruns: overwritten (LOOP) or dropped (UNTIL_FULL, FLUSH) */
    uint64_t events_buffered;  /* an upper bound of the events still in memory */
    uint64_t log_events_written;
    uint64_t log_events_lost;  /* overwritten by a LOOP log or discarded by an UNTIL_FULL log */
    uint32_t lanes;            /* per-thread buffers of the stream */
    uint32_t reserved;
} tracelog_trace_stats;

/* Errors: EINVAL (trid is not an active stream of this process, or stats is NULL). */
TRACELOG_API int tracelog_trace_get_stats(trace_id_t trid, tracelog_trace_stats *stats);

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
