/* tracelog's extensions to the POSIX interface (include/tracelog/posix.h). */
#include <errno.h>

#include "posix/internal.h"
#include "tracelog/posix.h"

int tracelog_trace_sync(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_ACTIVE_LOG, &t);
    if (e)
        return e;
    e = tl_posix_log_flush(t, 0);
    if (!e) {
        tl_posix_log_lock(t);
        tracelog_status st = tracelog_writer_sync(t->writer);
        if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL) {
            tracelog_error err;
            tracelog_writer_last_error(t->writer, &err);
            e = err.sys_errno ? err.sys_errno : EIO;
            pthread_mutex_lock(&t->status_lock);
            if (!t->flush_error)
                t->flush_error = e;
            pthread_mutex_unlock(&t->status_lock);
        }
        tl_posix_log_unlock(t);
    }
    tl_posix_release(t);
    return e;
}

int tracelog_trace_get_stats(trace_id_t trid, tracelog_trace_stats *stats)
{
    tl_trace *t;
    if (!stats)
        return EINVAL;
    int e = tl_posix_acquire(trid, 1u << TL_ACTIVE | 1u << TL_ACTIVE_LOG, &t);
    if (e)
        return e;
    *stats = (tracelog_trace_stats){0};
    tl_posix_log_lock(t);
    stats->events_delivered = t->consumer.delivered;
    stats->events_lost = tl_stream_overruns(t->shm);
    stats->events_buffered = tl_stream_buffered(t->shm);
    stats->lanes = t->shm->nlanes;
    tl_posix_log_unlock(t);
    if (t->kind == TL_ACTIVE_LOG) {
        pthread_mutex_lock(&t->status_lock);
        stats->log_events_written = t->log_snapshot.events_written;
        stats->log_events_lost = t->log_snapshot.log_overruns;
        pthread_mutex_unlock(&t->status_lock);
    }
    tl_posix_release(t);
    return 0;
}

long tracelog_sysconf(int name)
{
    switch (name) {
    case _SC_TRACE:
    case _SC_TRACE_EVENT_FILTER:
    case _SC_TRACE_LOG:
    case _SC_TRACE_INHERIT:
        return 200809L;
    case _SC_TRACE_EVENT_NAME_MAX: return TRACE_EVENT_NAME_MAX;
    case _SC_TRACE_NAME_MAX: return TRACE_NAME_MAX;
    case _SC_TRACE_SYS_MAX: return TRACE_SYS_MAX;
    case _SC_TRACE_USER_EVENT_MAX: return TRACE_USER_EVENT_MAX;
    }
    return sysconf(name);
}
