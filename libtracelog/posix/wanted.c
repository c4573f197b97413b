/*
 * Which event ids some stream of this process may record: the trace
 * point's test right after the event word (event.c), so that an event that
 * every stream filters out, or that only stopped streams could take, costs
 * two loads and a branch instead of a walk over the streams.
 *
 * The summary is the union, over the streams this process created and
 * controls, of the ids each would record: nothing while the user has it
 * stopped, else the complement of its filter. It is recomputed under one
 * lock after every change that can make an id wanted or unwanted
 * (publication, posix_trace_start/stop, posix_trace_set_filter), always
 * after the stream itself changed, so it is never narrower than the truth
 * once the call that changed it returns. It may be wider for a moment
 * (a stream stopped, not yet recomputed): the per-stream test after it
 * decides then.
 *
 * It follows the user's start and stop, not the stream's state: an
 * UNTIL_FULL stream that stopped itself (full) starts again on its own
 * when drained, and its events are counted as lost meanwhile, so it stays
 * in the summary.
 *
 * Streams whose changes this process does not see are outside it and make
 * the trace point skip it: those a controller announced (their slots in
 * the event word, see event.c) and those a forked child inherited (its
 * parent starts, stops and filters them: they count as wanting every id).
 */
#include <string.h>

#include "posix/internal.h"
#include "posix/wanted.h"
#include "posix/wanted.h"


_Alignas(64) _Atomic uint64_t tl_posix_wanted[TL_WANTED_WORDS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t started; /* own slots the user started and has not stopped since */
static uint64_t blind;   /* own slots of streams this process only inherited (forked child) */

/* Caller holds the lock. */
static void recompute(void)
{
    uint64_t sum[TL_FILTER_WORDS] = {0};
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        tl_stream *s = atomic_load(&tl_posix_active[i]);
        if (!s)
            continue;
        if (blind >> i & 1) {
            memset(sum, 0xff, sizeof sum);
            break;
        }
        if (!(started >> i & 1))
            continue;
        uint64_t filter[TL_FILTER_WORDS];
        tl_stream_get_filter(s, filter);
        for (int w = 0; w < TL_FILTER_WORDS; w++)
            sum[w] |= ~filter[w];
    }
    for (int w = 0; w < TL_FILTER_WORDS; w++)
        atomic_store_explicit(&tl_posix_wanted[w], sum[w], memory_order_release);
}

void tl_posix_wanted_set(int slot, int running)
{
    pthread_mutex_lock(&lock);
    uint64_t bit = 1ull << slot;
    started = running ? started | bit : started & ~bit;
    if (!running)
        blind &= ~bit; /* a slot given up: its next stream is one this process controls */
    recompute();
    pthread_mutex_unlock(&lock);
}

void tl_posix_wanted_refresh(void)
{
    pthread_mutex_lock(&lock);
    recompute();
    pthread_mutex_unlock(&lock);
}

void tl_posix_wanted_before_fork(void) { pthread_mutex_lock(&lock); }
void tl_posix_wanted_after_fork_parent(void) { pthread_mutex_unlock(&lock); }

void tl_posix_wanted_after_fork_child(uint64_t inherited)
{
    blind = inherited;
    started &= inherited;
    recompute();
    pthread_mutex_unlock(&lock);
}
