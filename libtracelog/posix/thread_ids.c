/* The calling thread's ids for the trace point (thread_ids.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix/names.h"
#include "posix/thread_ids.h"
#include "posix/thread_names.h"

__thread tl_thread_ids tl_posix_me __attribute__((tls_model("initial-exec")));
static _Atomic uint32_t next_ticket;

/*
 * Each thread's name as it was at its first event (PR_GET_NAME: the name
 * pthread_setname_np gave it, or its process's): what a log names a thread
 * by when the thread ended before the log's writer first saw its events,
 * its /proc entry gone with it (a LOOP stream drained at shutdown). Kept
 * in the process's own table (tl_tname_own) for its own logs, and published in its event-name map
 * (names.c) for the logs of other processes: its controller's, its
 * parent's when it records into an inherited stream.
 */
static void remember_name(uint32_t ktid)
{
    char name[TL_TNAME_BYTES] = "";
    if (prctl(PR_GET_NAME, name) != 0)
        return;
    uint32_t pid = (uint32_t)getpid();
    tl_tname_put(tl_tname_own(), pid, ktid, name, 0);
    tl_posix_names_thread_started(pid, ktid, name);
}

int tl_posix_thread_first_name(uint32_t ktid, char *buf, size_t cap)
{
    return tl_tname_get(tl_tname_own(), (uint32_t)getpid(), ktid, buf, cap) ? -1 : 0;
}

/* A signal handler that gets here first fills it too: the ticket, which tells that the rest is there, is stored last. */
__attribute__((noinline, cold)) void tl_posix_ask_thread_ids(void)
{
    tl_posix_me.pthread = (uint64_t)pthread_self();
    tl_posix_me.kernel_tid = (uint32_t)syscall(SYS_gettid);
    remember_name(tl_posix_me.kernel_tid);
    uint32_t t = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed) + 1;
    atomic_signal_fence(memory_order_seq_cst);
    tl_posix_me.ticket = t;
}

void tl_posix_thread_ids_after_fork_child(void) { tl_posix_me = (tl_thread_ids){0, 0, 0}; }
