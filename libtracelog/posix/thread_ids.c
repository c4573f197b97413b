/* The calling thread's ids for the trace point (thread_ids.h). */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix/thread_ids.h"

__thread tl_thread_ids tl_posix_me __attribute__((tls_model("initial-exec")));
static _Atomic uint32_t next_ticket;

/*
 * Each thread's name as it was at its first event (PR_GET_NAME: the name
 * pthread_setname_np gave it, or its process's), by kernel tid: what a log
 * names a thread by when the thread ended before the log's writer first saw
 * its events, its /proc entry gone with it (a LOOP stream drained at
 * shutdown). Open addressing, lock-free (a signal handler may record a
 * thread's first event); a slot being written has NAME_BUSY in its key; a
 * thread that finds no free slot in NAME_PROBES is not remembered.
 */
#define NAME_SLOTS 4096u
#define NAME_PROBES 8u
#define NAME_BUSY 0x80000000u
typedef struct name_slot {
    _Atomic uint32_t ktid;
    char name[16];
} name_slot;
static name_slot first_names[NAME_SLOTS];

static name_slot *name_slot_of(uint32_t ktid, uint32_t probe)
{
    return &first_names[(ktid * 2654435761u + probe) % NAME_SLOTS];
}

static void remember_name(uint32_t ktid)
{
    char name[16] = "";
    if (prctl(PR_GET_NAME, name) != 0 || ktid == 0 || ktid >= NAME_BUSY)
        return;
    for (uint32_t p = 0; p < NAME_PROBES; p++) {
        name_slot *s = name_slot_of(ktid, p);
        uint32_t k = atomic_load_explicit(&s->ktid, memory_order_relaxed);
        /* A kernel tid found again is a new thread that reuses it: its name replaces the old one's. */
        if ((k != 0 && k != ktid) || !atomic_compare_exchange_strong(&s->ktid, &k, ktid | NAME_BUSY))
            continue;
        memcpy(s->name, name, sizeof s->name);
        atomic_store_explicit(&s->ktid, ktid, memory_order_release);
        return;
    }
}

int tl_posix_thread_first_name(uint32_t ktid, char *buf, size_t cap)
{
    for (uint32_t p = 0; p < NAME_PROBES && cap; p++) {
        const name_slot *s = name_slot_of(ktid, p);
        if (atomic_load_explicit(&s->ktid, memory_order_acquire) != ktid)
            continue;
        size_t len = strnlen(s->name, sizeof s->name);
        len = len < cap - 1 ? len : cap - 1;
        memcpy(buf, s->name, len);
        buf[len] = 0;
        return atomic_load_explicit(&s->ktid, memory_order_acquire) == ktid ? 0 : -1; /* not rewritten meanwhile */
    }
    return -1;
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
