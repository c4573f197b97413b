/*
 * posix_trace_event: the trace point. Lock-free, allocation-free, no system
 * call (but a thread's first gettid), async-signal-safe (see stream/stream.h
 * for the recording protocol). Code built with <trace.h> tests the event
 * word and the summary of wanted ids (wanted.c) inline, through
 * tracelog_event_gate, and calls here only when some stream may take the
 * event; a caller built without that test (an older header, a pointer to
 * the function, TRACELOG_NO_INLINE_EVENT) gets the same test here first:
 * with no stream it pays two loads (the second: is a thread mapping a
 * stream, record_after_poll), for an event no stream wants one more and a
 * branch. Also who the calling thread is, for the system events the
 * library records itself.
 */
#include "posix/internal.h"
#include "posix/event.h"
#include "posix/process.h"
#include "posix/record.h"
#include "posix/thread_ids.h"
#include "posix/wanted.h"
#include "stream/produce.h"

/* Event word bits that make the summary of wanted ids (wanted.c) useless: a controller's
   request, a poll under way, and the streams controllers announced, which they start, stop and filter. */
#define SKIP_SUMMARY (TL_CTL_PENDING | TL_XPROC_POLLING | ((1ull << TL_CTL_SLOTS) - 1) << TRACE_SYS_MAX)
/* The event word's stream bits: one per slot of tl_posix_active. */
#define SLOT_BITS ((1ull << TL_ACTIVE_SLOTS) - 1)
_Static_assert(TRACE_SYS_MAX + TL_CTL_SLOTS == TL_ACTIVE_SLOTS, "announced streams take the last slots");
_Static_assert((SLOT_BITS & (TL_CTL_PENDING | TL_XPROC_POLLING)) == 0, "the word's flags are above its slots");

/*
 * What <trace.h>'s inline test reads (see there): the same word and summary
 * as posix_trace_event below, which decides the same way when it is called
 * (ids beyond the summary are never recorded).
 */
_Static_assert(sizeof(unsigned long long) == sizeof(uint64_t), "the gate's words are the library's");
const struct __tracelog_event_gate tracelog_event_gate = {
    .__word = (const unsigned long long *)&tl_xproc_event_page.word,
    .__wanted = (const unsigned long long *)tl_posix_wanted,
    .__skip = SKIP_SUMMARY,
    .__mask = TL_WANTED_WORDS - 1,
};

tracelog_event tl_posix_system_event(trace_event_id_t id, const void *data, size_t len, uint64_t caller)
{
    return tl_posix_event_of(tl_posix_my_ids(), id, data, len, POSIX_TRACE_NOT_TRUNCATED, caller);
}

static void record_after_poll(uint64_t recorded, trace_event_id_t event_id, const void *restrict data_ptr,
                              size_t data_len, uint64_t caller);

/*
 * Records the event into the streams of mask; returns the bits of those that
 * did not take it. One stream, the common case, is a straight line: the loop
 * kept its state (mask, missed) live across the recording, which made the
 * compiler spill the event's values to the stack (issue 27: 21 instructions of 233).
 */
__attribute__((always_inline)) static inline uint64_t record_into(uint64_t mask, trace_event_id_t event_id,
                                                                  const void *restrict data_ptr, size_t data_len,
                                                                  uint64_t caller)
{
    if (__builtin_expect((mask & (mask - 1)) == 0, 1))
        return tl_posix_record_slot(__builtin_ctzll(mask), event_id, data_ptr, data_len, caller) ? mask : 0;
    uint64_t missed = 0;
    do {
        int slot = __builtin_ctzll(mask);
        mask &= mask - 1;
        if (tl_posix_record_slot(slot, event_id, data_ptr, data_len, caller))
            missed |= 1ull << slot;
    } while (mask);
    return missed;
}

/*
 * While a thread maps a stream a controller announced, the event word shows
 * neither the request (cleared first) nor the new stream (published last),
 * and may still show the stream it replaces, in the slot the new one takes:
 * an event recorded meanwhile by another thread would be dropped without a
 * count. When a poll was seen under way, waits for it (or polls: it may
 * have ended), then records into every stream that has not taken the
 * event: those not tried, and those that missed it. Out of line: only the paths that record nothing get here.
 */
__attribute__((noinline, cold)) static void record_after_poll(uint64_t recorded, trace_event_id_t event_id,
                                                              const void *restrict data_ptr, size_t data_len,
                                                              uint64_t caller)
{
    /* Not "return if no poll is busy now": the poll seen busy may have ended since, its stream
       published after our word was read (an event lost without a count, seen under ASan). */
    tl_posix_remote_poll(); /* waits for another thread's; returns at once inside our own */
    uint64_t rest = atomic_load_explicit(&tl_xproc_event_page.word, memory_order_acquire) & SLOT_BITS & ~recorded;
    if (rest)
        record_into(rest, event_id, data_ptr, data_len, caller);
}

#define CALLER() ((uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

#undef posix_trace_event /* <trace.h>'s inline test: this is the function it calls */
void posix_trace_event(trace_event_id_t event_id, const void *restrict data_ptr, size_t data_len)
{
    uint64_t mask = atomic_load_explicit(&tl_xproc_event_page.word, memory_order_acquire);
    if (event_id >= TL_ID_LIMIT)
        return;
    /* No stream that runs (none, or every one stopped), or nobody wants this id: filtered out by every stream. */
    if (!mask || (!(mask & SKIP_SUMMARY) &&
                  !(atomic_load_explicit(&tl_posix_wanted[event_id / 64], memory_order_relaxed) >> (event_id % 64) & 1))) {
        if (atomic_load_explicit(&tl_xproc_polling, memory_order_relaxed))
            record_after_poll(0, event_id, data_ptr, data_len, CALLER());
        return;
    }
    if (mask & (TL_CTL_PENDING | TL_XPROC_POLLING)) {
        /* A controller announced a stream: map it before recording. Another thread maps one: wait
           for it, without polling again (two threads recording would take turns polling forever). */
        if (mask & TL_CTL_PENDING)
            tl_posix_remote_poll();
        else
            tl_xproc_wait_poll();
        mask = atomic_load_explicit(&tl_xproc_event_page.word, memory_order_acquire) & SLOT_BITS;
        if (!mask)
            return;
    }
    uint64_t missed = record_into(mask, event_id, data_ptr, data_len, CALLER());
    if (missed && atomic_load_explicit(&tl_xproc_polling, memory_order_relaxed))
        record_after_poll(mask & ~missed, event_id, data_ptr, data_len, CALLER());
}
