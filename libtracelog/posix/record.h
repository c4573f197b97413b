/*
 * Recording one event of the calling thread into one active stream, inline:
 * the trace point (event.c) and the filters a traced process applies for
 * its controller (remote.c) record the same way.
 */
#ifndef TRACELOG_POSIX_RECORD_H
#define TRACELOG_POSIX_RECORD_H

#include "posix/internal.h"
#include "posix/thread_ids.h"
#include "stream/produce.h"

/* The event as the calling thread records it (len already truncated to the stream's max_data). */
static inline tracelog_event tl_posix_event_of(const tl_thread_ids *ids, trace_event_id_t id, const void *data,
                                               size_t len, uint32_t truncation, uint64_t caller)
{
    return (tracelog_event){.event_id = id,
                            .pid = atomic_load_explicit(&tl_posix_current_pid, memory_order_relaxed),
                            .kernel_tid = ids->kernel_tid,
                            .truncation = truncation,
                            .tid = ids->pthread,
                            .address = caller,
                            .payload_len = (uint32_t)len,
                            .payload = data};
}

/*
 * Records the event into the stream of slot; returns 1 if it did not take it
 * (see below). Always inline, like tl_stream_record: the trace point must not
 * pay a call. `system`: an event the library records itself, which the
 * filter never drops (P19; a constant 0 on the trace point's path).
 */
__attribute__((always_inline)) static inline int tl_posix_record_slot_as(int slot, trace_event_id_t event_id,
                                                                        const void *restrict data_ptr,
                                                                        size_t data_len, uint64_t caller, int system)
{
    tl_stream *s = atomic_load_explicit(&tl_posix_active[slot], memory_order_acquire);
    if (!s)
        return 1;
    /* Read once: a stream shut down meanwhile has had its pages replaced by zero pages (0 lanes). */
    uint32_t nlanes = tl_stream_user_lanes(s); /* a power of two */
    if (nlanes == 0)
        return 1;
    tl_admit admit = system ? tl_stream_admit_system(s) : tl_stream_admit(s, event_id);
    if (admit != TL_ADMIT_RECORD) {
        if (admit != TL_ADMIT_LOSE)
            return 1;
        /* UNTIL_FULL stopped itself: the event is lost */
        tl_stream_count_lost(s, (tl_posix_my_ids()->ticket - 1) & (nlanes - 1));
        return 0;
    }
    size_t len = data_ptr ? data_len : 0;
    uint32_t trunc = POSIX_TRACE_NOT_TRUNCATED;
    if (len > tl_stream_max_data(s)) {
        len = tl_stream_max_data(s);
        trunc = POSIX_TRACE_TRUNCATED_RECORD;
    }
    const tl_thread_ids *ids = tl_posix_my_ids();
    tracelog_event ev = tl_posix_event_of(ids, event_id, data_ptr, len, trunc, caller);
    tl_stream_record(s, (ids->ticket - 1) & (nlanes - 1), &ev); /* inline: the fast path of produce.h */
    return 0;
}

__attribute__((always_inline)) static inline int tl_posix_record_slot(int slot, trace_event_id_t event_id,
                                                                     const void *restrict data_ptr, size_t data_len,
                                                                     uint64_t caller)
{
    return tl_posix_record_slot_as(slot, event_id, data_ptr, data_len, caller, 0);
}

#endif
