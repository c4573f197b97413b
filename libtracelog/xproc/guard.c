/* Guarded reads of shared memory that may be truncated under us (see guard.h). */
#define _GNU_SOURCE
#include "xproc/guard.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

typedef struct range {
    _Atomic uintptr_t start, end; /* end 0: free; CLAIMED: being filled in */
} range;
#define CLAIMED ((uintptr_t)1)

static range ranges[TL_GUARD_RANGES];
static struct sigaction previous;
static pthread_once_t install_once = PTHREAD_ONCE_INIT;
static int install_error;
static __thread sigjmp_buf *jump_point __attribute__((tls_model("initial-exec")));

static int in_ranges(uintptr_t a)
{
    for (int i = 0; i < TL_GUARD_RANGES; i++) {
        uintptr_t e = atomic_load_explicit(&ranges[i].end, memory_order_acquire);
        if (e > CLAIMED && a >= atomic_load_explicit(&ranges[i].start, memory_order_relaxed) && a < e)
            return 1;
    }
    return 0;
}

/* Not ours: what would have happened without us. */
static void pass_on(int sig, siginfo_t *si, void *uc)
{
    if (previous.sa_flags & SA_SIGINFO) {
        previous.sa_sigaction(sig, si, uc);
        return;
    }
    if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
        previous.sa_handler(sig);
        return;
    }
    /* Default action: for a fault, returning re-runs the access and the kernel kills the process
       with SIGBUS; a signal sent by kill() is raised again. */
    signal(sig, SIG_DFL);
    if (si->si_code <= 0)
        raise(sig);
}

int tl_guard_claims(const siginfo_t *si) { return si->si_code > 0 && in_ranges((uintptr_t)si->si_addr); }

static _Atomic int filling; /* handlers in zero_fill: tl_guard_unregister waits for them */

/*
 * Replaces the registered mapping holding a with private zero pages: an
 * access re-run there reads zeros, as if the other process had written
 * them, which every reader of shared memory already takes as it takes any
 * value. 1 if a lies in a registered mapping and it was replaced.
 */
static int zero_fill(uintptr_t a)
{
    /* Counted before the table is read: a range unregistered meanwhile (then unmapped, its
       addresses given to another mapping) is not filled after its owner went on. */
    atomic_fetch_add(&filling, 1);
    int done = 0;
    for (int i = 0; i < TL_GUARD_RANGES && !done; i++) {
        uintptr_t e = atomic_load(&ranges[i].end); /* seq_cst: ordered after the count, as unregister's clear */
        uintptr_t s = atomic_load_explicit(&ranges[i].start, memory_order_relaxed);
        if (e > CLAIMED && a >= s && a < e)
            done = mmap((void *)s, e - s, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
                        -1, 0) != MAP_FAILED ? 1 : -1;
    }
    atomic_fetch_sub(&filling, 1);
    return done == 1;
}

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    sigjmp_buf *jp = jump_point;
    if (jp && tl_guard_claims(si)) {
        jump_point = NULL;
        siglongjmp(*jp, 1);
    }
    /* An access outside a guarded read (the name map's and the control object's are all such):
       the mapping becomes zeros and the access runs again. */
    if (si->si_code > 0 && zero_fill((uintptr_t)si->si_addr))
        return;
    pass_on(sig, si, uc);
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    install_error = sigaction(SIGBUS, &sa, &previous) ? errno : 0;
}

int tl_guard_register(const void *base, size_t len)
{
    pthread_once(&install_once, install);
    if (install_error)
        return install_error;
    uintptr_t s = (uintptr_t)base;
    for (int i = 0; i < TL_GUARD_RANGES; i++) {
        uintptr_t free_end = 0;
        if (!atomic_compare_exchange_strong(&ranges[i].end, &free_end, CLAIMED))
            continue;
        atomic_store_explicit(&ranges[i].start, s, memory_order_relaxed);
        atomic_store_explicit(&ranges[i].end, s + len, memory_order_release);
        return 0;
    }
    return EAGAIN;
}

void tl_guard_unregister(const void *base)
{
    for (int i = 0; i < TL_GUARD_RANGES; i++)
        if (atomic_load(&ranges[i].end) > CLAIMED && atomic_load(&ranges[i].start) == (uintptr_t)base) {
            atomic_store(&ranges[i].end, 0);
            /* A handler filling it: one mmap, then it is done. Bounded: a fork in the middle leaves the
               child a count no handler of its own will take back. */
            for (int spins = 0; atomic_load(&filling) && spins < 100000; spins++)
                sched_yield();
            return;
        }
}

int tl_guard_run(int (*fn)(void *), void *arg)
{
    sigjmp_buf here;
    sigjmp_buf *outer = jump_point;
    /* savemask 0: no system call; the handler runs with SA_NODEFER, so nothing is left blocked. */
    if (sigsetjmp(here, 0)) {
        jump_point = outer;
        return EFAULT;
    }
    /* Compiler barriers: once fn is inlined (-O3 inlines do_copy's memcpy), the store of jump_point
       looked dead to the compiler, which removed it, and a fault then killed the process. */
    jump_point = &here;
    atomic_signal_fence(memory_order_seq_cst);
    int r = fn(arg);
    atomic_signal_fence(memory_order_seq_cst);
    jump_point = outer;
    return r;
}

typedef struct copy_args {
    void *dst;
    const void *src;
    size_t n;
} copy_args;

static int do_copy(void *p)
{
    copy_args *a = p;
    memcpy(a->dst, a->src, a->n);
    return 0;
}

int tl_guard_copy(void *dst, const void *src, size_t n)
{
    copy_args a = {dst, src, n};
    return tl_guard_run(do_copy, &a);
}
