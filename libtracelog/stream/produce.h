/*
 * The producer's fast path (the protocol is in stream.h): inline, so that a
 * trace point compiles into one function that takes the clock, reserves,
 * writes and commits, with no call but the clock's and the data copy; the
 * rare paths (LOOP overwriting, losses, waking the drainer) are calls into
 * stream.c. Async-signal-safe, lock-free, allocation-free.
 */
#ifndef TRACELOG_STREAM_PRODUCE_H
#define TRACELOG_STREAM_PRODUCE_H

#include <string.h>

#include "common/bytes.h"
#include "stream/stream.h"
#include "tracelog/common.h"

/* Lane i (at most the lane count: the system lane). */
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

/*
 * Records ev (its ts is ignored: the stream takes the time) into lane
 * `lane`: a user lane (below tl_stream_user_lanes), or the system lane
 * through tl_stream_record_system. ev->payload_len is at most max_data (the caller
 * truncates). Returns 1 if recorded, 0 if lost (counted). Always inline: a
 * call (the compiler makes one when the trace point has two call sites)
 * costs the event path about 2 ns.
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
    uint32_t len = ev->payload_len;
    int recorded = 0, crossed = 0;
    for (;;) {
        uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed);
        uint64_t ts = tl_stream_stamp(s);
        uint64_t lost = policy == TRACELOG_POLICY_FLUSH ? atomic_load(&l->lost) : 0;
        uint32_t size = tl_rec_size(len) + (lost ? TL_REC_HEADER : 0);
        uint64_t rem = cap - (h & (cap - 1));
        uint64_t pad = rem < size ? rem : 0; /* records never wrap; a tail under 16 bytes is skipped implicitly */
        uint64_t need = pad + size;
        if (policy == TRACELOG_POLICY_LOOP && lane != nlanes && !tl_stream_has_room(l, h, need, cap))
            tl_stream_overwrite(s, l, base, h, need, cap);
        if (!tl_stream_has_room(l, h, need, cap)) {
            if (policy == TRACELOG_POLICY_FLUSH && lane != nlanes && tl_stream_wait_room(s, l, need, cap))
                continue; /* room now: reserve again, with a fresh timestamp */
            tl_stream_lose(s, l, ts);
            break;
        }
        if (!atomic_compare_exchange_weak(&l->head, &h, h + need))
            continue; /* another producer or a signal handler got here first: fresh timestamp */
        /* The consumer may have delivered events newer than our clock read
           while we were between it and the reservation (see stream.h). */
        if (ts < atomic_load(&s->watermark))
            ts = tl_stream_stamp(s);
        /* Stopped (or auto-stopped) since we looked: STOP is taken after the state
           changes, so an event of ours could land after it. It becomes a hole. */
        int stopped = lane != nlanes && atomic_load(&s->state) != TL_RUNNING;
        /* Each eighth of the lane (64 KiB at most) crossed: time to see whether the drainer is needed. */
        crossed = (h ^ (h + need)) >= (cap / 8 < (64u << 10) ? cap / 8 : (64u << 10));
        if (pad >= 16) {
            /* Only commit and kind_size: a pad can be as short as 16 bytes, less than a full header, and
               writing a whole header would overwrite the start of the next lane. */
            tl_rec *p = (tl_rec *)(base + (h & (cap - 1)));
            p->kind_size = (uint32_t)pad | (uint32_t)TL_KIND_PAD << 28;
            atomic_store_explicit(&p->commit, h + 1, memory_order_release);
        }
        uint64_t pos = h + pad;
        if (lost) {
            /* Marks the loss where it happened: the consumer turns it into OVERFLOW and RESUME.
               The count travels as the record's tid, the first lost event's time as its addr. */
            tracelog_event mark = {.tid = lost, .address = atomic_load(&l->lost_first_ts)};
            tl_stream_write_rec(base + (pos & (cap - 1)), TL_KIND_LOSS, TL_REC_HEADER, ts, &mark);
            atomic_store_explicit(&((tl_rec *)(base + (pos & (cap - 1))))->commit, pos + 1, memory_order_release);
            atomic_fetch_sub(&l->lost, lost);
            pos += TL_REC_HEADER;
        }
        uint8_t *at = base + (pos & (cap - 1));
        /* The line TL_PREFETCH_AHEAD bytes on in our lane, asked for now: the lane streams through memory
           larger than the caches, and without this each new line's store waits for it (a quarter of the
           event's time at 16 B). Wrapped, so it never touches another lane's lines. */
        __builtin_prefetch(base + ((pos + TL_PREFETCH_AHEAD) & (cap - 1)), 1, 3);
        tl_stream_write_rec(at, stopped ? TL_KIND_SKIP : TL_KIND_EVENT, tl_rec_size(len), ts, ev);
        if (!stopped)
            tl_copy_payload(at + TL_REC_HEADER, ev->payload, len);
        atomic_store_explicit(&((tl_rec *)at)->commit, pos + 1, memory_order_release);
        if (stopped && atomic_load(&s->autostopped))
            atomic_fetch_add(&l->overruns, 1);
        recorded = !stopped;
        break;
    }
    if (crossed && policy == TRACELOG_POLICY_FLUSH)
        tl_stream_wake_drainer_early(s, l, cap);
    if (recorded && atomic_load_explicit(&s->waiters, memory_order_relaxed))
        tl_stream_wake_readers(s); /* sem_post: async-signal-safe; only while a reader sleeps */
    return recorded;
}

#endif
