/*
 * exec(): POSIX shuts a process's streams down when it calls exec. A library
 * cannot see exec happen, so <trace.h> routes the exec functions called from
 * code that includes it through tracelog_prepare_exec() first: every running
 * stream with a log is stopped (POSIX_TRACE_STOP, as shutdown would record)
 * and its log written out with a trailer. After a successful exec the kernel
 * closes the log (our descriptor is close-on-exec) and the log reads back
 * complete and clean. If exec fails, tracelog_exec_returned() starts those
 * streams again (POSIX_TRACE_START) and tracing goes on.
 */
#include "posix/internal.h"
#include "posix/read.h"

static pthread_mutex_t exec_lock = PTHREAD_MUTEX_INITIALIZER;
static trace_id_t stopped[TRACE_SYS_MAX];
static size_t nstopped;

int tracelog_prepare_exec(void)
{
    trace_id_t trids[TRACE_SYS_MAX];
    size_t n = tl_posix_own_trids(trids, TRACE_SYS_MAX, 1u << TL_ACTIVE_LOG);
    tl_posix_cancel_off(); /* before the lock: a cancellation acted upon inside left it held (the next exec hung) */
    pthread_mutex_lock(&exec_lock);
    nstopped = 0;
    for (size_t i = 0; i < n; i++) {
        tl_trace *t;
        if (tl_posix_acquire(trids[i], 1u << TL_ACTIVE_LOG, &t))
            continue;
        if (tl_posix_running(t) && posix_trace_stop(trids[i]) == 0)
            stopped[nstopped++] = trids[i];
        tl_recorder_checkpoint(t->active.log);
        tl_posix_release(t);
    }
    pthread_mutex_unlock(&exec_lock);
    tl_posix_cancel_on();
    return 0;
}

int tracelog_exec_returned(int result)
{
    tl_posix_cancel_off();
    pthread_mutex_lock(&exec_lock);
    for (size_t i = 0; i < nstopped; i++)
        posix_trace_start(stopped[i]); /* EINVAL if shut down meanwhile: nothing to restart */
    nstopped = 0;
    pthread_mutex_unlock(&exec_lock);
    tl_posix_cancel_on();
    return result;
}
