/* tracelog's extensions to the POSIX interface (include/tracelog/posix.h). */
#include <errno.h>

#include "posix/internal.h"
#include "posix/read.h"

int tracelog_trace_sync(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_ACTIVE_LOG, &t);
    if (e)
        return e;
    e = tl_recorder_sync(t->active.log);
    tl_posix_release(t);
    return e;
}

static void consumer_stats(const tl_consumer *c, tracelog_trace_stats *st)
{
    st->events_lost = tl_consumer_overruns(c);
    st->events_buffered = tl_consumer_buffered(c);
    st->lanes = tl_consumer_lanes(c);
}

/* The recorder's figures: the lanes as its consumer saw them, then the log's. */
static void log_stats(tl_recorder *r, tracelog_trace_stats *st)
{
    tl_recorder_stats rs;
    tl_recorder_get_stats(r, &rs);
    st->events_lost = rs.events_lost;
    st->events_buffered = rs.events_buffered;
    st->lanes = rs.lanes;
    st->log_events_written = rs.log_events_written;
    st->log_events_lost = rs.log_events_lost;
}

typedef struct stats_args {
    tl_trace *t;
    tracelog_trace_stats *st;
} stats_args;

static int read_stats(void *arg)
{
    stats_args *a = arg;
    a->st->events_delivered = tl_stream_delivered(a->t->active.stream);
    if (!a->t->active.log)
        consumer_stats(a->t->active.consumer, a->st);
    return 0;
}

int tracelog_trace_get_stats(trace_id_t trid, tracelog_trace_stats *stats)
{
    tl_trace *t;
    if (!stats)
        return EINVAL;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    *stats = (tracelog_trace_stats){0};
    stats_args a = {t, stats};
    if (tl_remote_guard(t->active.remote, read_stats, &a) == EFAULT && !t->active.log) {
        /* Its buffer is lost: nothing buffered, the loss counted (how many it held is unknown). */
        *stats = (tracelog_trace_stats){0};
        stats->events_lost = tl_posix_overruns(t);
        stats->lanes = tl_consumer_lanes(t->active.consumer);
    }
    if (t->active.log) {
        log_stats(t->active.log, stats);
        stats->names_refused = atomic_load(&t->active.names_refused);
        stats->names_error = atomic_load(&t->active.names_error);
    }
    if (t->active.remote && tl_remote_joined(t->active.remote))
        stats->flags |= TRACELOG_STATS_JOINED;
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
