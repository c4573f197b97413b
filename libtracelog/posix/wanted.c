/*
 * Which event ids some stream of this process may record: the trace
 * point's test right after the event word (event.c), so that an event that
 * every stream filters out costs two loads and a branch instead of a walk
 * over the streams. The event word itself leaves out the own streams the
 * user stopped (recompute), so that with every stream stopped an event
 * costs one load, as with none.
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


_Alignas(64) _Atomic uint64_t tl_posix_wanted[TL_WANTED_WORDS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t started; /* own slots the user started and has not stopped since */
static uint64_t blind;   /* own slots of streams this process only inherited (forked child) */

/*
 * Caller holds the lock. Also sets the event word's bits of the own slots
 * to the streams that may record (published, and started or inherited):
 * with every own stream stopped the word is 0, and the trace point returns
 * after one load, as with no stream at all. A stream started again gets its
 * bit back before the summary wants its ids, so the word is never narrower
 * than the truth once posix_trace_start returns either.
 */
static void recompute(void)
{
    uint64_t sum[TL_FILTER_WORDS] = {0};
    uint64_t live = 0;
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        tl_stream *s = atomic_load(&tl_posix_active[i]);
        if (!s || !((started | blind) >> i & 1))
            continue;
        live |= 1ull << i;
        if (blind >> i & 1) {
            memset(sum, 0xff, sizeof sum);
            continue;
        }
        uint64_t filter[TL_FILTER_WORDS];
        tl_stream_get_filter(s, filter);
        for (int w = 0; w < TL_FILTER_WORDS; w++)
            sum[w] |= ~filter[w];
    }
    uint64_t own = (1ull << TRACE_SYS_MAX) - 1;
    if (live)
        tl_xproc_word_set(live);
    for (int w = 0; w < TL_FILTER_WORDS; w++)
        atomic_store_explicit(&tl_posix_wanted[w], sum[w], memory_order_release);
    if (own & ~live)
        tl_xproc_word_clear(own & ~live);
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
