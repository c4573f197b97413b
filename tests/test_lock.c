/*
 * tl_lock (libtracelog/common/lock.h), the read lock every getnext on a
 * pre-recorded stream takes: mutual exclusion under contention (a plain
 * counter that threads increment under it ends exact), and a taker that
 * sleeps while the holder keeps it is woken when it is given back.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "common/lock.h"
#include "tl_test.h"

#define THREADS 4
#define ROUNDS 200000

static tl_lock lock = TL_LOCK_INIT;
static uint64_t counter; /* only under the lock */
static uint64_t in_section; /* takers inside at once: 0 or 1 */
static int overlapped;

static void *increment(void *arg)
{
    (void)arg;
    for (int i = 0; i < ROUNDS; i++) {
        tl_lock_take(&lock);
        if (++in_section != 1)
            overlapped = 1;
        counter++;
        if (i % 1024 == 0)
            sched_yield(); /* given up while held: the others find it taken and sleep */
        in_section--;
        tl_lock_give(&lock);
    }
    return NULL;
}

static void test_exclusion(void)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&t[i], NULL, increment, NULL))
            TL_DIE("pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    CHECK_EQ(counter, (uint64_t)THREADS * ROUNDS);
    CHECK(!overlapped);
    CHECK_EQ(atomic_load(&lock.state), 0);
}

static _Atomic int taken_by_waiter;

static void *wait_for_lock(void *arg)
{
    (void)arg;
    tl_lock_take(&lock);
    atomic_store(&taken_by_waiter, 1);
    tl_lock_give(&lock);
    return NULL;
}

static void test_sleeper_woken(void)
{
    tl_lock_take(&lock);
    pthread_t t;
    if (pthread_create(&t, NULL, wait_for_lock, NULL))
        TL_DIE("pthread_create");
    /* The waiter marks the word (2) before it sleeps: wait for that, bounded. */
    for (int i = 0; i < 2000 && atomic_load(&lock.state) != 2; i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    CHECK_EQ(atomic_load(&lock.state), 2);
    CHECK(!atomic_load(&taken_by_waiter));
    tl_lock_give(&lock);
    pthread_join(t, NULL); /* hangs (the test's timeout) if the give-back did not wake it */
    CHECK(atomic_load(&taken_by_waiter));
    CHECK_EQ(atomic_load(&lock.state), 0);
}

int main(void)
{
    TL_TEST_RUN(test_exclusion);
    TL_TEST_RUN(test_sleeper_woken);
    return tl_test_finish();
}
