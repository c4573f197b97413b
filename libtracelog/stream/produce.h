/*
 * The producer's fast path (the protocol is in stream.h): inline, so that a
 * trace point compiles into one function that takes the clock, reserves,
 * writes and commits, with no call but the data copy's (and clock_gettime's
 * where the TSC is not the clock); the
 * rare paths (a pad, a loss to mark, no room, a lost CAS: the reservation
 * of tl_stream_reserve_slow; waking the drainer or a reader) are calls into
 * stream.c. Async-signal-safe, lock-free, allocation-free.
 */
#ifndef TRACELOG_STREAM_PRODUCE_H
#define TRACELOG_STREAM_PRODUCE_H

#include <string.h>

#include "common/bytes.h"
#include "stream/layout.h"
#include "tracelog/common.h"

/* Lane i (at most the lane count: the system lane). */
static inline uint32_t tl_stream_max_data(const tl_stream *s) { return s->max_data; }

/* The user lanes, a power of two; read it once per event: a stream destroyed under a producer reads 0. */
static inline uint32_t tl_stream_user_lanes(const tl_stream *s) { return s->nlanes; }

typedef enum tl_admit { TL_ADMIT_RECORD, TL_ADMIT_IGNORE, TL_ADMIT_LOSE } tl_admit;

/*
 * Whether a user event with this id (below TL_FILTER_IDS) is to be recorded
 * now: ignored while the stream is stopped or filters it out; lost (to be
 * counted with tl_stream_count_lost) while an UNTIL_FULL stream is stopped
 * because it is full.
 */
/* As tl_stream_admit, for a system event the library records itself: never filtered out (<trace.h> P19). */
static inline tl_admit tl_stream_admit_system(tl_stream *s)
{
    if (atomic_load_explicit(&s->state, memory_order_relaxed) != TL_RUNNING)
        return atomic_load_explicit(&s->autostopped, memory_order_relaxed) ? TL_ADMIT_LOSE : TL_ADMIT_IGNORE;
    return TL_ADMIT_RECORD;
}

static inline tl_admit tl_stream_admit(tl_stream *s, uint32_t event_id)
{
    tl_admit a = tl_stream_admit_system(s);
    if (a != TL_ADMIT_RECORD)
        return a;
    uint64_t word = atomic_load_explicit(&s->filter[event_id / 64], memory_order_relaxed);
    return (word >> (event_id % 64)) & 1 ? TL_ADMIT_IGNORE : TL_ADMIT_RECORD;
}

static inline tl_lane *tl_stream_lane(tl_stream *s, uint32_t i) { return (tl_lane *)((char *)s + TL_LANES_OFFSET) + i; }

#define TL_PREFETCH_AHEAD 512 /* bytes: 256 to 2048 measured alike, 512 best by a little */

/* A field another thread may zero under us (tl_stream_destroy), read exactly once. */
#define TL_READ_ONCE(field) (*(const volatile __typeof__(field) *)&(field))

/* LOOP, no room: discards the oldest records until `need` bytes after h fit (stream.c). */
void tl_stream_overwrite(tl_stream *s, tl_lane *l, uint8_t *base, uint64_t h, uint64_t need, uint64_t cap);
/* No room: counts the loss, marks it or stops an UNTIL_FULL stream (stream.c). */
void tl_stream_lose(tl_stream *s, tl_lane *l, uint64_t ts);
/* FLUSH: wakes the drainer when the lane is a quarter full and it sleeps (stream.c). Called when the
   head crosses an eighth of the lane, so a small lane is looked at as often as a large one. */
void tl_stream_wake_drainer_early(tl_stream *s, tl_lane *l, uint64_t cap);

/*
 * Room for need more bytes after h? The tail lives on the consumer's cache
 * line: producers read it only when the value they saw last says no room,
 * so a busy consumer does not slow every event down.
 */
static inline int tl_stream_has_room(tl_lane *l, uint64_t h, uint64_t need, uint64_t cap)
{
    if (h + need - atomic_load_explicit(&l->tail_seen, memory_order_relaxed) <= cap)
        return 1;
    uint64_t t = atomic_load(&l->tail);
    atomic_store_explicit(&l->tail_seen, t, memory_order_relaxed);
    return h + need - t <= cap;
}

/* The stream's stamp, inline (stream.h's tl_stream_stamp is the same for callers outside stream/): a call
   here cost the trace point the call itself and the registers saved around it (8 of its
   241 instructions, issue 27). */
static inline uint64_t tl_stream_stamp_inline(const tl_stream *s) { return tl_clock_stamp(&s->clock); }

/*
 * A stamp read after every earlier load of this thread and before any later
 * one starts: rdtsc alone may run ahead of the watermark it is compared with
 * or behind the state that decides the record's kind (tl_stream_record, and
 * why STOP needs it: stream.c, tl_stream_stop). Only for a fresh stamp after
 * the reservation, which is rare: two lfences cost the common path nothing.
 */
static inline uint64_t tl_stream_stamp_fresh(const tl_stream *s)
{
#if TL_HAVE_TSC
    _mm_lfence();
    uint64_t ts = tl_stream_stamp_inline(s);
    _mm_lfence();
    return ts;
#else
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t ts = tl_stream_stamp_inline(s);
    atomic_thread_fence(memory_order_seq_cst);
    return ts;
#endif
}

/* Writes a record header (all but the commit word). */
static inline void tl_stream_write_rec(uint8_t *at, uint32_t kind, uint32_t size, uint64_t ts, const tracelog_event *ev)
{
    tl_rec *r = (tl_rec *)at;
    r->kind_size = size | (ev->payload_len & 7) | kind << 28;
    r->id_trunc = ev->event_id | ev->truncation << 30;
    r->ts = ts;
    r->tid = ev->tid;
    r->addr = ev->address;
    r->pid = ev->pid;
    r->ktid = ev->kernel_tid;
}

/* A lane as the producer saw its geometry, once (see tl_stream_record). */
typedef struct tl_lane_view {
    tl_lane *l;
    uint8_t *base; /* the lane's first byte */
    uint64_t cap;  /* its bytes, a power of two */
    uint32_t lane, nlanes, policy;
} tl_lane_view;

/* Where a reservation put the event (what the fast path found, or tl_stream_reserve_slow). */
typedef struct tl_reserved {
    uint64_t pos;  /* the event's record starts here */
    uint64_t ts;   /* read before the reservation */
    int crossed;   /* the reservation crossed an eighth of the lane */
} tl_reserved;

/*
 * The reservation of every case the fast path leaves (stream.c): a pad to
 * the lane's end, a loss to mark first, no room by the tail last seen (LOOP
 * overwrites, FLUSH waits, others lose), another producer first. Writes the
 * pad and loss records. 1 with *out set, or 0: the event is lost (counted).
 */
int tl_stream_reserve_slow(tl_stream *s, const tl_lane_view *v, uint32_t len, tl_reserved *out);

/* An eighth of the lane (64 KiB at most): crossing one is the time to see whether the drainer is needed. */
static inline int tl_stream_crossed(uint64_t from, uint64_t to, uint64_t cap)
{
    return (from ^ to) >= (cap / 8 < (64u << 10) ? cap / 8 : (64u << 10));
}

/*
 * Records ev (its ts is ignored: the stream takes the time) into lane
 * `lane`: a user lane (below tl_stream_user_lanes), or the system lane
 * through tl_stream_record_system. ev->payload_len is at most max_data (the caller
 * truncates). Returns 1 if recorded, 0 if lost (counted). Always inline: a
 * call (the compiler makes one when the trace point has two call sites)
 * costs the event path about 2 ns. The common case is one straight line
 * (room by the tail last seen, no pad, no loss to mark, the CAS won): its
 * retries and rare cases are out of line, so that the trace point keeps its
 * values in registers.
 */
__attribute__((always_inline)) static inline int tl_stream_record(tl_stream *s, uint32_t lane,
                                                                  const tracelog_event *ev)
{
    /* The geometry, once: if the stream was destroyed meanwhile, a field reads 0 and the event is dropped;
       otherwise every address below lies in the lanes and data the stream had (see TL_LANES_OFFSET). */
    uint32_t nlanes = TL_READ_ONCE(s->nlanes), policy = TL_READ_ONCE(s->policy);
    uint64_t lane_size = TL_READ_ONCE(s->lane_size);
    if (nlanes == 0 || lane_size == 0 || policy == 0 || lane > nlanes)
        return 0;
    tl_lane *l = tl_stream_lane(s, lane);
    uint8_t *base = (uint8_t *)s + tl_stream_data_offset(nlanes) + (uint64_t)lane * lane_size;
    uint64_t cap = lane == nlanes ? TL_SYS_LANE_SIZE : lane_size;
    uint64_t bit = 1ull << lane;
    if (!(atomic_load_explicit(&s->used_lanes, memory_order_relaxed) & bit))
        atomic_fetch_or(&s->used_lanes, bit);
    uint32_t len = ev->payload_len, size = tl_rec_size(len);
    uint64_t pos = atomic_load_explicit(&l->head, memory_order_relaxed), ts = tl_stream_stamp_inline(s);
    int crossed;
    if (__builtin_expect(!(policy == TRACELOG_POLICY_FLUSH && atomic_load(&l->lost)) &&
                             cap - (pos & (cap - 1)) >= size &&
                             pos + size - atomic_load_explicit(&l->tail_seen, memory_order_relaxed) <= cap &&
                             atomic_compare_exchange_weak(&l->head, &pos, pos + size),
                         1)) {
        crossed = tl_stream_crossed(pos, pos + size, cap);
    } else {
        /* Scalars above, a struct only here: what has its address taken stays out of registers. */
        tl_lane_view v = {l, base, cap, lane, nlanes, policy};
        tl_reserved r;
        if (!tl_stream_reserve_slow(s, &v, len, &r))
            return 0;
        pos = r.pos, ts = r.ts, crossed = r.crossed;
    }
    /* The consumer may have delivered events newer than our clock read
       while we were between it and the reservation (see stream.h). */
    if (ts < atomic_load(&s->watermark))
        ts = tl_stream_stamp_fresh(s);
    /* Stopped (or auto-stopped) since we looked: STOP is taken after the state
       changes, so an event of ours could land after it. It becomes a hole.
       Still RUNNING: our stamp was read before this load (before the locked
       reservation, or by tl_stream_stamp_fresh), so before the state changes,
       and STOP's after it (stream.c, tl_stream_stop): the event comes first. */
    int stopped = lane != nlanes && atomic_load(&s->state) != TL_RUNNING;
    uint8_t *at = base + (pos & (cap - 1));
    /* The line TL_PREFETCH_AHEAD bytes on in our lane, asked for now: the lane streams through memory
       larger than the caches, and without this each new line's store waits for it (a quarter of the
       event's time at 16 B). Wrapped, so it never touches another lane's lines. */
    __builtin_prefetch(base + ((pos + TL_PREFETCH_AHEAD) & (cap - 1)), 1, 3);
    tl_stream_write_rec(at, stopped ? TL_KIND_SKIP : TL_KIND_EVENT, size, ts, ev);
    if (!stopped)
        tl_copy_payload(at + TL_REC_HEADER, ev->payload, len);
    atomic_store_explicit(&((tl_rec *)at)->commit, pos + 1, memory_order_release);
    if (stopped && atomic_load(&s->autostopped))
        atomic_fetch_add(&l->overruns, 1);
    if (crossed && policy == TRACELOG_POLICY_FLUSH)
        tl_stream_wake_drainer_early(s, l, cap);
    if (!stopped && atomic_load_explicit(&s->waiters, memory_order_relaxed))
        tl_stream_wake_readers(s); /* a futex wake: async-signal-safe; only while a reader sleeps */
    return !stopped;
}

#endif
