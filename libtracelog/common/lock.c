/* The contended paths of tl_lock (lock.h): the three-state futex mutex ("Futexes Are Tricky", mutex 3). */
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/lock.h"

void tl_lock_take_slow(tl_lock *l)
{
    /* From here on the word says 2 while we hold it: whoever gives it back wakes a sleeper,
       which may be none (a wake-up too many costs one system call, never a sleeper left asleep). */
    while (atomic_exchange_explicit(&l->state, 2, memory_order_acquire) != 0)
        syscall(SYS_futex, &l->state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

void tl_lock_wake(tl_lock *l) { syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0); }
