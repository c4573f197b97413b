/* The calling thread's ids for the trace point (thread_ids.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix/thread_ids.h"

__thread tl_thread_ids tl_posix_me __attribute__((tls_model("initial-exec")));
static _Atomic uint32_t next_ticket;

/* A signal handler that gets here first fills it too: the ticket, which tells that the rest is there, is stored last. */
__attribute__((noinline, cold)) void tl_posix_ask_thread_ids(void)
{
    tl_posix_me.pthread = (uint64_t)pthread_self();
    tl_posix_me.kernel_tid = (uint32_t)syscall(SYS_gettid);
    uint32_t t = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed) + 1;
    atomic_signal_fence(memory_order_seq_cst);
    tl_posix_me.ticket = t;
}

void tl_posix_thread_ids_after_fork_child(void) { tl_posix_me = (tl_thread_ids){0, 0, 0}; }
