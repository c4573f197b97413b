/*
 * The consumer: takes the stream's events out in generation order (the
 * batches and watermark of stream.h), copies each event's data out before
 * releasing its room, and turns the lanes' loss counters into the client's
 * OVERFLOW and RESUME markers. An UNTIL_FULL stream that stopped itself is
 * started again here, once every lane is empty.
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "stream/stream.h"

int tl_consumer_init(tl_consumer *c, tl_stream *s)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->nlanes = s->nlanes;
    c->lanes = (tl_lane *)((char *)s + s->lanes_offset);
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        c->data[i] = (uint8_t *)s + s->data_offset + (uint64_t)i * s->lane_size;
        c->cap[i] = i == c->nlanes ? TL_SYS_LANE_SIZE : s->lane_size;
    }
    c->markers = s->markers;
    c->clock = s->clock;
    c->buf_cap = s->max_data > s->max_sys_data ? s->max_data : s->max_sys_data;
    c->buf = malloc(c->buf_cap ? c->buf_cap : 1);
    return c->buf ? 0 : -1;
}

int tl_consumer_init_shared(tl_consumer *c, void *map, uint64_t size)
{
    int e = tl_stream_check(map, size);
    if (e)
        return e;
    return tl_consumer_init(c, map) ? ENOMEM : 0;
}

void tl_consumer_free(tl_consumer *c)
{
    free(c->buf);
    c->buf = NULL;
}

/*
 * Is the record header h, found rem bytes before the end of its ring, one a
 * producer could have written? The ring may be shared with another process
 * that scribbled over it or died mid-write (issue 12, item 6): nothing read
 * from it is used before it passes this check.
 */
static int rec_sane(const tl_consumer *c, const tl_rec *h, uint64_t rem)
{
    uint32_t kind = h->kind_size >> 28, size = h->kind_size & 0x0fffffff;
    uint32_t len = h->len_trunc & 0x3fffffff;
    if (kind != TL_KIND_EVENT && kind != TL_KIND_LOSS && kind != TL_KIND_SKIP)
        return 0;
    if (rem < TL_REC_HEADER || size % 8 || size < tl_rec_size(0) || size > rem)
        return 0;
    return kind == TL_KIND_SKIP || (len <= size - TL_REC_HEADER && len <= c->buf_cap);
}

/*
 * Lane i holds garbage at tail t: the tail moves to `next` and the loss is
 * counted, marked by OVERFLOW and RESUME before the lane's next event.
 */
static void drop_garbage(tl_consumer *c, uint32_t i, uint64_t t, uint64_t next)
{
    tl_lane *l = &c->lanes[i];
    if (!atomic_compare_exchange_strong(&l->tail, &t, next))
        return; /* someone else moved the tail: look again */
    atomic_fetch_add(&l->overruns, 1);
    c->garbage++;
    if (!(c->garbage_lanes >> i & 1))
        c->garbage_ts[i] = c->last_ts;
    c->garbage_lanes |= 1ull << i;
}

/*
 * The oldest complete record of lane i (skipping padding), or 0; *pos gets
 * its position and *h a checked copy of its header (what the caller uses:
 * the ring itself may change under it).
 */
/* What follows garbage at t cannot be parsed: the rest of the lane, up to its head, goes. */
static void drop_rest(tl_consumer *c, uint32_t i, uint64_t t)
{
    uint64_t h = atomic_load(&c->lanes[i].head);
    drop_garbage(c, i, t, h > t ? h : t + 8);
}

static int peek(tl_consumer *c, uint32_t i, uint64_t *pos, tl_rec *h)
{
    tl_lane *l = &c->lanes[i];
    uint8_t *base = c->data[i];
    uint64_t cap = c->cap[i];
    for (;;) {
        uint64_t t = atomic_load(&l->tail);
        if (t % 8) { /* producers keep records 8-aligned: the tail was scribbled over */
            drop_rest(c, i, t);
            return 0;
        }
        uint64_t rem = cap - (t & (cap - 1));
        if (rem < 16) { /* too short for a record: the producers skipped it */
            if (atomic_load(&l->head) <= t)
                return 0;
            atomic_compare_exchange_strong(&l->tail, &t, t + rem);
            continue;
        }
        tl_rec *r = (tl_rec *)(base + (t & (cap - 1)));
        if (atomic_load_explicit(&r->commit, memory_order_acquire) != t + 1)
            return 0;
        uint32_t kind = r->kind_size >> 28;
        if (kind == TL_KIND_PAD) {
            atomic_compare_exchange_strong(&l->tail, &t, t + rem);
            continue;
        }
        if (rem >= TL_REC_HEADER)
            memcpy(h, r, sizeof *h);
        /* A LOOP producer overwriting it moves the tail first: if the tail did not move, the copy is whole. */
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load(&l->tail) != t)
            continue;
        if (rem < TL_REC_HEADER || !rec_sane(c, h, rem)) {
            drop_rest(c, i, t);
            return 0;
        }
        if (kind == TL_KIND_SKIP) {
            atomic_compare_exchange_strong(&l->tail, &t, t + (h->kind_size & 0x0fffffff));
            continue;
        }
        *pos = t;
        return 1;
    }
}

static void queue_marker(tl_consumer *c, uint32_t id, uint64_t ts)
{
    if (c->qlen == sizeof c->queue / sizeof c->queue[0] - 1)
        return; /* the event's place: only a caller that left markers queued gets here */
    c->queue[c->qlen++] = (tl_event){.ts = ts, .event_id = id};
}

/* Copies the record at pos (header h, checked by peek) out of lane i; 0, or -1 if a LOOP producer overwrote it meanwhile. */
static int copy_out(tl_consumer *c, uint32_t i, const tl_rec *h, uint64_t pos)
{
    tl_lane *l = &c->lanes[i];
    uint32_t size = h->kind_size & 0x0fffffff, kind = h->kind_size >> 28;
    uint32_t len = h->len_trunc & 0x3fffffff;
    memcpy(c->buf, c->data[i] + (pos & (c->cap[i] - 1)) + TL_REC_HEADER, len);
    uint64_t expect = pos;
    if (!atomic_compare_exchange_strong(&l->tail, &expect, pos + size))
        return -1;
    /* Rare: a preempted producer sharing the lane, or a signal handler, took
       a fresh timestamp after a newer event was reserved. Order is kept;
       the timestamp is raised to stay monotonic. */
    uint64_t ts = h->ts;
    if (ts < c->last_ts) {
        ts = c->last_ts;
        c->clamped++;
    }
    c->last_ts = ts;
    if (c->garbage_lanes >> i & 1) { /* garbage was dropped before this record */
        queue_marker(c, c->markers.overflow, c->garbage_ts[i]);
        queue_marker(c, c->markers.resume, ts);
        c->garbage_lanes &= ~(1ull << i);
    }
    uint64_t d = atomic_load(&l->dropped);
    if (d != atomic_load(&l->dropped_acked)) { /* LOOP overwrote events before this one */
        queue_marker(c, c->markers.overflow, atomic_load(&l->dropped_first_ts));
        queue_marker(c, c->markers.resume, ts);
        atomic_store(&l->dropped_acked, d);
    }
    if (kind == TL_KIND_LOSS) { /* FLUSH dropped events here; addr holds the first one's time */
        queue_marker(c, c->markers.overflow, h->addr);
        queue_marker(c, c->markers.resume, ts);
        return 0;
    }
    c->queue[c->qlen++] = (tl_event){.ts = ts, /* queue_marker kept this place */
                                     .event_id = h->event_id,
                                     .pid = h->pid,
                                     .ktid = h->ktid,
                                     .truncation = h->len_trunc >> 30,
                                     .tid = h->tid,
                                     .addr = h->addr,
                                     .len = len,
                                     .data = c->buf};
    return 0;
}

/*
 * A record reserved before the batch began but stamped after its
 * watermark: a producer that took a fresh timestamp after reserving, which
 * a later batch delivers. Deferred again by a later batch, it cannot be
 * (that batch's watermark was taken after the record was seen complete):
 * its timestamp is garbage, and waiting for it would never end. Seen again
 * in the same batch (the batch goes on after each event it delivers, and
 * across calls that returned TL_TAKE_WAIT) it is only deferred: dropping
 * it then lost good events, with an OVERFLOW marker but no loss counted.
 */
static void defer(tl_consumer *c, uint32_t i, uint64_t pos, const tl_rec *h)
{
    if (c->deferred[i] != pos + 1) {
        c->deferred[i] = pos + 1;
        c->deferred_in[i] = c->batch_seq;
    }
    c->batch_later = 1; /* a later batch takes it, or what follows it once it is dropped */
    if (c->deferred_in[i] != c->batch_seq)
        drop_garbage(c, i, pos, pos + (h->kind_size & 0x0fffffff));
}

/* All lanes empty: an UNTIL_FULL stream that stopped itself starts again (START before the next event). */
static void restart_if_drained(tl_consumer *c)
{
    tl_stream *s = c->s;
    atomic_store(&s->full, 0); /* read to the end: there is room again, whatever the policy */
    if (atomic_load(&c->lanes[c->nlanes].head) % 8)
        return; /* a scribbled system lane takes no START marker: the stream stays stopped */
    uint32_t one = 1;
    if (!atomic_compare_exchange_strong(&s->autostopped, &one, 0))
        return;
    uint64_t filter[TL_FILTER_WORDS];
    tl_stream_get_filter(s, filter);
    tl_event start = {.event_id = c->markers.start, .len = sizeof filter, .data = filter};
    tl_stream_record_system(s, &start);
    uint32_t suspended = TL_SUSPENDED;
    atomic_compare_exchange_strong(&s->state, &suspended, TL_RUNNING);
}

/* Opens a batch: publish the watermark, then read every lane's head (see stream.h). */
static void start_batch(tl_consumer *c)
{
    tl_stream *s = c->s;
    c->batch_w = tl_consumer_now(c);
    atomic_store(&s->watermark, c->batch_w);
    atomic_thread_fence(memory_order_seq_cst);
    c->batch_used = atomic_load(&s->used_lanes);
    for (uint32_t i = 0; i <= c->nlanes; i++)
        if (c->batch_used >> i & 1)
            c->batch_head[i] = atomic_load(&c->lanes[i].head);
    c->batch = 1;
    c->batch_seq++;
    c->batch_later = 0;
}

static int all_lanes_empty(tl_consumer *c)
{
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        tl_lane *l = &c->lanes[i];
        if (atomic_load(&l->tail) != atomic_load(&l->head))
            return 0;
    }
    return 1;
}

/* Hands out the next queued event; 0 if the queue is empty. */
static int dequeue(tl_consumer *c, tl_event *ev)
{
    if (c->qhead == c->qlen) {
        c->qhead = c->qlen = 0;
        return 0;
    }
    *ev = c->queue[c->qhead++];
    /* The only writer: a plain store, on a line of its own (producers never read it). */
    atomic_store_explicit(&c->s->delivered, atomic_load_explicit(&c->s->delivered, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    return 1;
}

tl_take tl_consumer_take(tl_consumer *c, tl_event *ev, int force)
{
    int fresh = 0; /* the batch was opened by this call */
    for (;;) {
        if (dequeue(c, ev))
            return TL_TAKE_EVENT;
        if (!c->batch) {
            start_batch(c);
            fresh = 1;
        }
        tl_rec best = {0};
        uint64_t best_pos = 0;
        uint32_t best_lane = 0;
        int found = 0, waiting = 0;
        for (uint32_t i = 0; i <= c->nlanes; i++) {
            if (!(c->batch_used >> i & 1) || atomic_load(&c->lanes[i].tail) >= c->batch_head[i])
                continue;
            uint64_t pos;
            tl_rec h;
            if (!peek(c, i, &pos, &h)) {
                /* Reserved before the batch began and not committed yet: it may be the oldest. */
                waiting |= atomic_load(&c->lanes[i].tail) < c->batch_head[i];
                continue;
            }
            if (pos >= c->batch_head[i])
                continue;
            if (h.ts > c->batch_w) {
                defer(c, i, pos, &h);
                continue;
            }
            if (!found || h.ts < best.ts) {
                found = 1;
                best = h;
                best_pos = pos;
                best_lane = i;
            }
        }
        if (waiting && !force)
            return TL_TAKE_WAIT;
        if (found) {
            copy_out(c, best_lane, &best, best_pos); /* on a lost race with an overwrite: look again */
            continue;
        }
        c->batch = 0; /* everything up to the watermark is out */
        if (c->batch_later || !fresh)
            continue; /* newer records are there, or may be: a new batch takes them */
        if (all_lanes_empty(c))
            restart_if_drained(c);
        return TL_TAKE_EMPTY;
    }
}

tl_take tl_consumer_take_wait(tl_consumer *c, tl_event *ev)
{
    uint64_t started = 0;
    for (unsigned spins = 0;; spins++) {
        int force = 0;
        if (spins >= 64) {
            uint64_t now = tl_clock_mono_ns();
            if (!started)
                started = now;
            force = now - started > TL_PRODUCER_STALL_NS;
        }
        tl_take r = tl_consumer_take(c, ev, force);
        if (r != TL_TAKE_WAIT)
            return r;
        if (spins >= 64)
            sched_yield();
    }
}

int tl_consumer_take_unmarked_loss(tl_consumer *c, tl_event *ev)
{
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        tl_lane *l = &c->lanes[i];
        if (c->garbage_lanes >> i & 1) {
            c->garbage_lanes &= ~(1ull << i);
            queue_marker(c, c->markers.overflow, c->garbage_ts[i]);
            return dequeue(c, ev);
        }
        if (!atomic_exchange(&l->lost, 0))
            continue;
        queue_marker(c, c->markers.overflow, atomic_load(&l->lost_first_ts));
        return dequeue(c, ev);
    }
    return 0;
}

void tl_consumer_clear(tl_consumer *c)
{
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        tl_lane *l = &c->lanes[i];
        atomic_store(&l->tail, atomic_load(&l->head));
        atomic_store(&l->dropped_acked, atomic_load(&l->dropped));
        atomic_store(&l->lost, 0);
    }
    atomic_store(&c->s->full, 0);
    c->qhead = c->qlen = 0;
    c->batch = 0;
    c->garbage_lanes = 0;
}
