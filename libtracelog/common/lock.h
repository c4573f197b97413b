/*
 * A private mutex of one word, for a lock taken once per event: a
 * pre-recorded stream's read lock, which posix_trace_getnext_event takes
 * and gives back on every call. Uncontended, taking and giving back are
 * one atomic instruction each, inline; pthread_mutex_lock and unlock cost
 * two calls and about 55 instructions (issue 27: a ninth of an analyzer's
 * event). A contended taker sleeps on the word (a private futex), so a
 * holder that takes long (a filter change loading the log's types) costs
 * its waiters nothing.
 *
 * Only in this process's own memory (never in a buffer another process can
 * write: a corrupt word could make a taker sleep for ever). Not recursive,
 * not robust, not a cancellation point (neither is pthread_mutex_lock).
 */
#ifndef TRACELOG_COMMON_LOCK_H
#define TRACELOG_COMMON_LOCK_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct tl_lock {
    _Atomic uint32_t state; /* 0 free, 1 held, 2 held and a taker may sleep */
} tl_lock;

#define TL_LOCK_INIT {0}

/* The contended paths (lock.c). */
void tl_lock_take_slow(tl_lock *l);
void tl_lock_wake(tl_lock *l);

static inline void tl_lock_init(tl_lock *l) { atomic_init(&l->state, 0); }

static inline void tl_lock_take(tl_lock *l)
{
    uint32_t free_state = 0;
    if (!atomic_compare_exchange_strong_explicit(&l->state, &free_state, 1, memory_order_acquire,
                                                 memory_order_relaxed))
        tl_lock_take_slow(l);
}

static inline void tl_lock_give(tl_lock *l)
{
    if (atomic_exchange_explicit(&l->state, 0, memory_order_release) == 2)
        tl_lock_wake(l);
}

#endif
