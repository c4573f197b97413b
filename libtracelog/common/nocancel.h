/*
 * A system call the library makes while it holds a lock or is halfway
 * through changing its state, run as no cancellation point: a thread
 * cancelled in a read, a write or a wait there would leave the lock held
 * (posix_trace_close and shutdown then waited for ever) or the reader's
 * window half filled. Cheap enough for a call per chunk, not per event.
 */
#ifndef TL_COMMON_NOCANCEL_H
#define TL_COMMON_NOCANCEL_H

#include <pthread.h>

/* Returns the state to give back to tl_nocancel_end. */
static inline int tl_nocancel_begin(void)
{
    int old = PTHREAD_CANCEL_ENABLE;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
    return old;
}

static inline void tl_nocancel_end(int old) { pthread_setcancelstate(old, NULL); }

#endif
