/*
 * exec(): POSIX shuts a process's streams down when it calls exec. A library
 * cannot see exec happen, so <trace.h> routes the exec functions called from
 * code that includes it through tracelog_prepare_exec() first, which writes
 * everything recorded so far and a trailer to every log of the process. If
 * exec fails, tracing simply goes on (the trailer was only a checkpoint).
 * After a successful exec the kernel closes the log (our descriptor is
 * close-on-exec) and the log reads back complete and clean.
 */
#include "posix/internal.h"

void tracelog_prepare_exec(void)
{
    trace_id_t trids[TRACE_SYS_MAX];
    size_t n = tracelog_posix_own_trids(trids, TRACE_SYS_MAX, 1u << TL_ACTIVE_LOG);
    for (size_t i = 0; i < n; i++) {
        tl_trace *t;
        if (tracelog_posix_acquire(trids[i], 1u << TL_ACTIVE_LOG, &t))
            continue;
        tracelog_posix_log_flush(t, 0);
        pthread_mutex_lock(&t->log_lock);
        tracelog_writer_checkpoint(t->writer);
        pthread_mutex_unlock(&t->log_lock);
        tracelog_posix_release(t);
    }
}
