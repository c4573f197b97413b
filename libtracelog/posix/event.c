/*
 * posix_trace_event: the trace point. Lock-free, allocation-free, no system
 * call (but a thread's first gettid), async-signal-safe (see stream/stream.h
 * for the recording protocol). A process with no stream pays one load; an
 * event no stream wants (filtered out, streams stopped) one more and a
 * branch (wanted.c). Also who the calling thread is, for the system events the
 * library records itself.
 */
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix/internal.h"
#include "stream/produce.h"

extern _Atomic(tl_stream *) tl_posix_active[TL_ACTIVE_SLOTS];
extern _Atomic uint32_t tl_posix_current_pid;
extern _Atomic uint64_t tl_posix_wanted[TL_FILTER_WORDS];

/* Event word bits that make the summary of wanted ids (wanted.c) useless: a controller's
   request, and the streams controllers announced, which they start, stop and filter. */
#define SKIP_SUMMARY (TL_CTL_PENDING | ((1ull << TL_CTL_SLOTS) - 1) << TRACE_SYS_MAX)
_Static_assert(TRACE_SYS_MAX + TL_CTL_SLOTS == TL_ACTIVE_SLOTS, "announced streams take the last slots");

/* initial-exec TLS: no lazy allocation, so it is safe in a signal handler. */
static __thread uint32_t lane_ticket __attribute__((tls_model("initial-exec")));
static __thread uint32_t kernel_tid __attribute__((tls_model("initial-exec")));
static __thread uint64_t pthread_id __attribute__((tls_model("initial-exec")));
static _Atomic uint32_t next_ticket;

/* pthread_self(), kept like the kernel tid: a TLS load instead of a call into libc on every event. */
static uint64_t my_pthread(void)
{
    uint64_t p = pthread_id;
    if (p == 0) {
        p = (uint64_t)pthread_self();
        pthread_id = p;
    }
    return p;
}

/* gettid(), asked once per thread (async-signal-safe: a signal handler that gets here first asks too). */
uint32_t tl_posix_kernel_tid(void)
{
    uint32_t tid = kernel_tid;
    if (tid == 0) {
        tid = (uint32_t)syscall(SYS_gettid);
        kernel_tid = tid;
    }
    return tid;
}

static uint32_t my_ticket(void)
{
    uint32_t t = lane_ticket;
    if (t == 0) {
        t = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed) + 1;
        lane_ticket = t;
    }
    return t - 1;
}

/* A forked child starts with its own lane rather than the forking thread's, and its own thread id. */
void tl_posix_event_after_fork_child(void)
{
    lane_ticket = 0;
    kernel_tid = 0;
    pthread_id = 0;
}

tracelog_event tl_posix_system_event(trace_event_id_t id, const void *data, size_t len, uint64_t caller)
{
    return (tracelog_event){.event_id = id,
                      .pid = atomic_load_explicit(&tl_posix_current_pid, memory_order_relaxed),
                      .kernel_tid = tl_posix_kernel_tid(),
                      .truncation = POSIX_TRACE_NOT_TRUNCATED,
                      .tid = my_pthread(),
                      .address = caller,
                      .payload_len = (uint32_t)len,
                      .payload = data};
}

void posix_trace_event(trace_event_id_t event_id, const void *restrict data_ptr, size_t data_len)
{
    uint64_t mask = atomic_load_explicit(&tl_xproc_event_page.word, memory_order_acquire);
    if (!mask || event_id >= TL_ID_LIMIT)
        return;
    /* Nobody wants this id: filtered out by every stream, or every stream stopped. */
    if (!(mask & SKIP_SUMMARY) &&
        !(atomic_load_explicit(&tl_posix_wanted[event_id / 64], memory_order_relaxed) >> (event_id % 64) & 1))
        return;
    if (mask & TL_CTL_PENDING) { /* a controller announced a stream: map it before recording */
        tl_posix_remote_poll();
        mask = atomic_load_explicit(&tl_xproc_event_page.word, memory_order_relaxed) & ~TL_CTL_PENDING;
        if (!mask)
            return;
    }
    do {
        int slot = __builtin_ctzll(mask);
        mask &= mask - 1;
        tl_stream *s = atomic_load_explicit(&tl_posix_active[slot], memory_order_acquire);
        if (!s)
            continue;
        /* Read once: a stream shut down meanwhile has had its pages replaced by zero pages (0 lanes). */
        uint32_t nlanes = tl_stream_user_lanes(s); /* a power of two */
        if (nlanes == 0)
            continue;
        tl_admit admit = tl_stream_admit(s, event_id);
        if (admit != TL_ADMIT_RECORD) {
            if (admit == TL_ADMIT_LOSE) /* UNTIL_FULL stopped itself: the event is lost */
                tl_stream_count_lost(s, my_ticket() & (nlanes - 1));
            continue;
        }
        size_t len = data_ptr ? data_len : 0;
        uint32_t trunc = POSIX_TRACE_NOT_TRUNCATED;
        if (len > tl_stream_max_data(s)) {
            len = tl_stream_max_data(s);
            trunc = POSIX_TRACE_TRUNCATED_RECORD;
        }
        tracelog_event ev = {.event_id = event_id,
                       .pid = atomic_load_explicit(&tl_posix_current_pid, memory_order_relaxed),
                       .kernel_tid = tl_posix_kernel_tid(),
                       .truncation = trunc,
                       .tid = my_pthread(),
                       .address = (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)),
                       .payload_len = (uint32_t)len,
                       .payload = data_ptr};
        tl_stream_record(s, my_ticket() & (nlanes - 1), &ev); /* inline: the fast path of produce.h */
    } while (mask);
}
