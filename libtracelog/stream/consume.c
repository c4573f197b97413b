/*
 * The consumer: takes the stream's events out in generation order (the
 * batches and watermark of stream.h, the lanes of a batch merged with a
 * heap), releases the room it read in steps (stream.h: TL_CONSUMER_RELEASE),
 * and turns the lanes' loss counters into the client's OVERFLOW and RESUME
 * markers. An UNTIL_FULL stream that stopped itself is started again here,
 * once every lane is empty. Everything read from the lanes is checked before
 * use: the mapping may be shared with a process that scribbles over it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "stream/consumer_internal.h"
#include "stream/lane_run.h"
#include "stream/produce.h"

/* The consumer on stream s whose geometry g (s itself, or a checked copy of its header) gives. */
static int init_from(tl_consumer *c, tl_stream *s, const tl_stream *g)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->nlanes = g->nlanes;
    c->max_sys_data = g->max_sys_data;
    c->shared_tail = g->policy == TRACELOG_POLICY_LOOP;
    c->lanes = tl_stream_lane(s, 0);
    uint64_t data = tl_stream_data_offset(g->nlanes);
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        c->data[i] = (uint8_t *)s + data + (uint64_t)i * g->lane_size;
        c->cap[i] = i == c->nlanes ? TL_SYS_LANE_SIZE : g->lane_size;
        c->pos[i] = c->pub[i] = atomic_load(&c->lanes[i].tail);
    }
    c->own = (2ull << c->nlanes) - 1;
    c->markers = g->markers;
    c->clock = g->clock;
    c->skew_stamps = tl_clock_stamps_in(&c->clock, TL_CLOCK_SKEW_NS);
    c->buf_cap = g->max_data > g->max_sys_data ? g->max_data : g->max_sys_data;
    c->buf = c->shared_tail ? malloc(c->buf_cap ? c->buf_cap : 1) : NULL;
    c->first_ts = tl_clock_stamp_ordered(&c->clock);
    return c->shared_tail && !c->buf ? -1 : 0;
}

/* Cache-line aligned: the flusher's groups run their consumers in threads of their own. */
static tl_consumer *alloc_consumer(void)
{
    tl_consumer *c = aligned_alloc(64, (sizeof *c + 63) & ~(size_t)63);
    if (c)
        memset(c, 0, sizeof *c);
    return c;
}

tl_consumer *tl_consumer_new(tl_stream *s)
{
    tl_consumer *c = alloc_consumer();
    if (c && init_from(c, s, s)) {
        tl_consumer_free(c);
        return NULL;
    }
    return c;
}

tl_consumer *tl_consumer_new_like(const tl_consumer *model)
{
    if (model->shared_tail)
        return NULL; /* a LOOP consumer copies events out: one buffer each, and producers move tails */
    tl_consumer *c = alloc_consumer();
    if (!c)
        return NULL;
    c->s = model->s;
    c->lanes = model->lanes;
    c->nlanes = model->nlanes;
    c->max_sys_data = model->max_sys_data;
    memcpy(c->data, model->data, sizeof c->data);
    memcpy(c->cap, model->cap, sizeof c->cap);
    c->markers = model->markers;
    c->clock = model->clock;
    c->skew_stamps = model->skew_stamps;
    c->buf_cap = model->buf_cap;
    c->own = model->own;
    c->producers_gone = model->producers_gone;
    c->first_ts = model->first_ts;
    c->floor_ts = c->last_ts = model->floor_ts;
    c->gone = model->gone;
    c->gone_arg = model->gone_arg;
    c->foreign = model->foreign;
    return c;
}

int tl_consumer_new_shared(void *map, uint64_t size, tl_consumer **out)
{
    tl_stream g; /* one read of the header: what is checked is what is used */
    if (size < sizeof g)
        return EINVAL;
    memcpy(&g, map, sizeof g);
    int e = tl_stream_check(&g, size);
    if (e)
        return e;
    tl_consumer *c = alloc_consumer();
    if (!c || init_from(c, map, &g)) {
        tl_consumer_free(c);
        return ENOMEM;
    }
    *out = c;
    return 0;
}

uint64_t tl_consumer_now(const tl_consumer *c) { return tl_clock_now_ordered(&c->clock); }
const tl_clock *tl_consumer_clock(const tl_consumer *c) { return &c->clock; }
size_t tl_consumer_max_data(const tl_consumer *c) { return c->buf_cap; }
uint32_t tl_consumer_lanes(const tl_consumer *c) { return c->nlanes; }
int tl_consumer_saw_later(const tl_consumer *c) { return c->batch_later; }

/* ---- the read position ---------------------------------------------------------- */

static uint64_t tail_of(const tl_consumer *c, uint32_t i)
{
    return c->shared_tail ? atomic_load(&c->lanes[i].tail) : c->pos[i];
}

/* Moves lane i's read position from t to next: 0 if a LOOP producer moved the tail first. */
static int advance(tl_consumer *c, uint32_t i, uint64_t t, uint64_t next)
{
    if (c->shared_tail)
        return atomic_compare_exchange_strong(&c->lanes[i].tail, &t, next);
    c->pos[i] = next;
    return 1;
}

/* Gives the room read in lane i back to producers, but that of an event still handed out. */
static void release(tl_consumer *c, uint32_t i)
{
    uint64_t to = c->held && c->held_lane == i ? c->held_pos : c->pos[i];
    if (c->shared_tail || c->pub[i] == to)
        return;
    atomic_store_explicit(&c->lanes[i].tail, to, memory_order_release);
    c->pub[i] = to;
    tl_stream_room_made(&c->lanes[i], c->cap[i]);
}

static void release_all(tl_consumer *c)
{
    for (uint64_t m = c->own; m; m &= m - 1)
        release(c, (uint32_t)__builtin_ctzll(m));
}

void tl_consumer_free(tl_consumer *c)
{
    if (!c)
        return;
    c->held = 0;
    release_all(c); /* another consumer may take over from here */
    free(c->buf);
    free(c);
}

/* ---- reading a lane ----------------------------------------------------------------- */

/*
 * Is the record header h, found rem bytes before the end of its ring, one a
 * producer could have written? The ring may be shared with another process
 * that scribbled over it or died mid-write (issue 12, item 6): nothing read
 * from it is used before it passes this check.
 */
static int rec_sane(const tl_consumer *c, const tl_rec *h, uint64_t rem)
{
    uint32_t kind = tl_rec_kind(h->kind_size), size = tl_rec_bytes(h->kind_size);
    if (kind != TL_KIND_EVENT && kind != TL_KIND_LOSS && kind != TL_KIND_SKIP)
        return 0;
    if (rem < TL_REC_HEADER || size < tl_rec_size(0) || size > rem)
        return 0;
    uint32_t len = tl_rec_data_len(h->kind_size); /* UINT32_MAX when the size cannot hold it */
    return kind == TL_KIND_SKIP || len <= c->buf_cap;
}

/* Lane i loses what lies from t to next: counted, marked by OVERFLOW and RESUME before its next event. 0 on a lost race. */
static int lose_span(tl_consumer *c, uint32_t i, uint64_t t, uint64_t next)
{
    if (!advance(c, i, t, next))
        return 0; /* a LOOP producer moved the tail: look again */
    atomic_fetch_add(&c->lanes[i].overruns, 1);
    if (!(c->garbage_lanes >> i & 1))
        c->garbage_ts[i] = c->last_ts ? c->last_ts : c->first_ts;
    c->garbage_lanes |= 1ull << i;
    return 1;
}

/* Lane i holds garbage at t: the position moves to next and the loss is counted. */
static void drop_garbage(tl_consumer *c, uint32_t i, uint64_t t, uint64_t next)
{
    if (lose_span(c, i, t, next))
        c->garbage++;
}

/*
 * What follows garbage at t cannot be parsed: the rest of the lane, up to
 * its head, goes. A head at or behind t was scribbled over: the lane goes
 * up to where the batch saw its head, so that one step ends the batch's
 * share of it (8 bytes a step took for ever over a head read as 2^32 - 1).
 */
static void drop_rest(tl_consumer *c, uint32_t i, uint64_t t)
{
    uint64_t h = atomic_load(&c->lanes[i].head);
    if (h <= t)
        h = c->batch && c->batch_head[i] > t ? c->batch_head[i] : t + 8;
    drop_garbage(c, i, t, h);
}

/*
 * The oldest complete record of lane i (skipping padding), or 0; *pos gets
 * its position and *h a checked copy of its header (what the caller uses:
 * the ring itself may change under it).
 */
static int peek(tl_consumer *c, uint32_t i, uint64_t *pos, tl_rec *h)
{
    uint8_t *base = c->data[i];
    uint64_t cap = c->cap[i];
    for (;;) {
        uint64_t t = tail_of(c, i);
        if (t % 8) { /* producers keep records 8-aligned: the tail was scribbled over */
            drop_rest(c, i, t);
            return 0;
        }
        uint64_t rem = cap - (t & (cap - 1));
        if (rem < 16) { /* too short for a record: the producers skipped it */
            if (atomic_load(&c->lanes[i].head) <= t)
                return 0;
            advance(c, i, t, t + rem);
            continue;
        }
        tl_rec *r = (tl_rec *)(base + (t & (cap - 1)));
        __builtin_prefetch(base + ((t + 1024) & (cap - 1)), 0, 3); /* the lines ahead: written on the producers' cores */
        if (atomic_load_explicit(&r->commit, memory_order_acquire) != t + 1)
            return 0;
        if (tl_rec_kind(r->kind_size) == TL_KIND_PAD) { /* a pad may be shorter than a header: nothing else is read */
            advance(c, i, t, t + rem);
            continue;
        }
        if (rem >= TL_REC_HEADER)
            memcpy(h, r, sizeof *h);
        /* A LOOP producer overwriting it moves the tail first: if the tail did not move, the copy is whole. */
        atomic_thread_fence(memory_order_acquire);
        if (tail_of(c, i) != t)
            continue;
        if (rem < TL_REC_HEADER || !rec_sane(c, h, rem)) {
            drop_rest(c, i, t);
            return 0;
        }
        /* The kind of the copy rec_sane checked, never of the ring: a traced program can change it in between. */
        if (tl_rec_kind(h->kind_size) == TL_KIND_SKIP) {
            advance(c, i, t, t + tl_rec_bytes(h->kind_size));
            continue;
        }
        *pos = t;
        return 1;
    }
}

/*
 * Lane i's producers are all gone (tl_consumer_producers_gone): the system
 * lane is not, it is also the client's, which may be recording there.
 */
static int lane_orphaned(const tl_consumer *c, uint32_t i) { return c->producers_gone && i < c->nlanes; }

/*
 * Where the record after the uncommitted one at t starts, or 0 if that is
 * not known yet: after its size, when its header says one that fits before
 * the head; else at the first later place whose commit word says a record
 * starts there (commit holds its own position + 1); else, once the head is
 * past the end of the ring, at that end (a lap ends with padding); once
 * the producers are gone, at the head.
 */
static uint64_t after_uncommitted(tl_consumer *c, uint32_t i, uint64_t t)
{
    uint64_t head = atomic_load(&c->lanes[i].head), cap = c->cap[i];
    uint64_t rem = cap - (t & (cap - 1));
    const uint8_t *base = c->data[i];
    if (rem >= TL_REC_HEADER) {
        const tl_rec *r = (const tl_rec *)(base + (t & (cap - 1)));
        uint32_t kind = tl_rec_kind(r->kind_size), size = tl_rec_bytes(r->kind_size);
        if ((kind == TL_KIND_EVENT || kind == TL_KIND_LOSS || kind == TL_KIND_SKIP) && size >= tl_rec_size(0) &&
            size <= rem && t + size <= head)
            return t + size;
    }
    for (uint64_t q = t + 8; q < head && q - t + 8 <= rem; q += 8) {
        const tl_rec *r = (const tl_rec *)(base + (q & (cap - 1)));
        if (atomic_load_explicit(&r->commit, memory_order_acquire) == q + 1)
            return q;
    }
    if (head >= t + rem)
        return t + rem;
    /* Nobody writes any more: the reservation ends at the head, which no longer moves. */
    return lane_orphaned(c, i) && head > t ? head : 0;
}

/* Lane i's uncommitted record at t is lost, with what cannot be parsed after it: 1, or 0 if not yet known where it ends. */
static int skip_abandoned(tl_consumer *c, uint32_t i, uint64_t t)
{
    if (atomic_load(&c->lanes[i].head) - t > c->cap[i]) {
        /* More reserved than the ring holds (a scribbled head): skipping record by record up to it would never end. */
        drop_rest(c, i, t);
        return 1;
    }
    uint64_t next = after_uncommitted(c, i, t);
    if (!next || !lose_span(c, i, t, next))
        return 0;
    c->abandoned++;
    c->stuck[i] = 0;
    return 1;
}

/*
 * Lane i's record at t, reserved before the batch, is not committed. Its
 * producer may be at work (wait), or dead: still uncommitted in a later
 * batch TL_PRODUCER_DEAD_NS after that batch first saw it, it is skipped as
 * a counted loss. 1 if it was skipped.
 */
static int skip_if_abandoned(tl_consumer *c, uint32_t i, uint64_t t)
{
    if (lane_orphaned(c, i))
        return skip_abandoned(c, i, t);
    if (c->stuck[i] != t + 1) {
        c->stuck[i] = t + 1;
        c->stuck_in[i] = c->batch_seq;
        c->stuck_since[i] = 0;
        return 0;
    }
    if (c->stuck_in[i] == c->batch_seq)
        return 0;
    uint64_t now = tl_clock_mono_ns();
    if (!c->stuck_since[i])
        c->stuck_since[i] = now;
    if (now - c->stuck_since[i] < TL_PRODUCER_DEAD_NS)
        return 0;
    return skip_abandoned(c, i, t);
}

/* ---- markers and delivery ------------------------------------------------------------ */

/*
 * A stamp the buffer gave for a loss (the first lost event's), as a marker
 * may carry it: between the last event delivered (lo) and the event or
 * time that follows the loss (hi). Any process sharing the buffer can write
 * it (cross-process.md 9.6): the log must stay in order whatever it says.
 */
static uint64_t loss_stamp(const tl_consumer *c, uint64_t ts, uint64_t lo, uint64_t hi)
{
    if (!lo) /* nothing delivered yet: nothing was lost before the consumer was made */
        lo = c->first_ts;
    if (hi < lo)
        hi = lo;
    return ts < lo ? lo : ts > hi ? hi : ts;
}

/* A marker at stamp ts. */
static void queue_marker(tl_consumer *c, uint32_t id, uint64_t ts)
{
    if (c->qlen == sizeof c->queue / sizeof c->queue[0] - 1)
        return; /* the event's place: only a caller that left markers queued gets here */
    c->queue[c->qlen++] = (tracelog_event){.timestamp_ns = tl_clock_ns(&c->clock, ts), .event_id = id};
}

/*
 * The only writer: a plain store, on a line of its own (producers never
 * read it). Consumers that take at once (tl_consumer_begin_batch) count
 * privately and add their count at the end of each batch.
 */
static void count_delivered(tl_consumer *c, uint64_t n)
{
    if (c->external) {
        c->delivered_here += n;
        return;
    }
    atomic_store_explicit(&c->s->delivered, atomic_load_explicit(&c->s->delivered, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/*
 * The stamp of the next event handed out, at least the last one's. Rare: a
 * preempted producer sharing the lane, or a signal handler, took a fresh
 * timestamp after a newer event was reserved. Order is kept; the timestamp
 * is raised to stay monotonic.
 */
static inline uint64_t stamp_in_order(tl_consumer *c, uint64_t ts)
{
    if (ts < c->last_ts) {
        ts = c->last_ts;
        c->clamped++;
    }
    c->last_ts = ts;
    return ts;
}

/* The event of record h (checked by rec_sane), stamped ts, its data at data. */
static inline void fill_event(const tl_consumer *c, const tl_rec *h, uint64_t ts, const uint8_t *data,
                              tracelog_event *out)
{
    *out = (tracelog_event){.timestamp_ns = tl_clock_ns(&c->clock, ts),
                            .event_id = h->id_trunc & 0x3fffffff,
                            .pid = h->pid,
                            .kernel_tid = h->ktid,
                            .truncation = h->id_trunc >> 30,
                            .tid = h->tid,
                            .address = h->addr,
                            .payload_len = tl_rec_data_len(h->kind_size),
                            .payload = data};
}

/*
 * Hands out the record at pos (header h, checked by peek) of lane i: 1 if
 * it went straight to *ev; 0 if it and the markers before it were queued;
 * -1 if a LOOP producer overwrote it meanwhile.
 */
static int deliver(tl_consumer *c, uint32_t i, const tl_rec *h, uint64_t pos, tracelog_event *ev)
{
    tl_lane *l = &c->lanes[i];
    uint32_t size = tl_rec_bytes(h->kind_size), kind = tl_rec_kind(h->kind_size);
    uint32_t len = tl_rec_data_len(h->kind_size); /* checked by rec_sane */
    const uint8_t *data = c->data[i] + (pos & (c->cap[i] - 1)) + TL_REC_HEADER;
    if (c->shared_tail) { /* copied out before the tail moves: a LOOP producer may overwrite it then */
        memcpy(c->buf, data, len);
        data = c->buf;
    }
    if (!advance(c, i, pos, pos + size))
        return -1;
    uint64_t prev = c->last_ts, ts = stamp_in_order(c, h->ts);
    if (c->garbage_lanes >> i & 1) { /* garbage was dropped before this record */
        queue_marker(c, c->markers.overflow, c->garbage_ts[i]);
        queue_marker(c, c->markers.resume, ts);
        c->garbage_lanes &= ~(1ull << i);
    }
    uint64_t d = atomic_load_explicit(&l->dropped, memory_order_relaxed);
    if (d != atomic_load_explicit(&l->dropped_acked, memory_order_relaxed)) { /* LOOP overwrote events before this one */
        queue_marker(c, c->markers.overflow, loss_stamp(c, atomic_load(&l->dropped_first_ts), prev, ts));
        queue_marker(c, c->markers.resume, ts);
        atomic_store(&l->dropped_acked, d);
    }
    if (kind == TL_KIND_LOSS) { /* FLUSH dropped events here; addr holds the first one's time */
        queue_marker(c, c->markers.overflow, loss_stamp(c, h->addr, prev, ts));
        queue_marker(c, c->markers.resume, ts);
        return 0;
    }
    c->held = 1; /* its data stays in the lane until it is handed out and the next call begins */
    c->held_lane = i;
    c->held_pos = pos;
    int now = c->qlen == 0; /* no marker before it: no queue */
    fill_event(c, h, ts, data, now ? ev : &c->queue[c->qlen++]); /* queue_marker kept this place */
    if (now)
        count_delivered(c, 1);
    return now;
}

/* Hands out the next queued event; 0 if the queue is empty. */
static int dequeue(tl_consumer *c, tracelog_event *ev)
{
    if (c->qhead == c->qlen) {
        c->qhead = c->qlen = 0;
        return 0;
    }
    *ev = c->queue[c->qhead++];
    count_delivered(c, 1);
    return 1;
}

/* ---- the heap of lane heads ------------------------------------------------------------ */

static int before(const tl_consumer *c, uint32_t a, uint32_t b)
{
    uint64_t ta = c->head_rec[a].ts, tb = c->head_rec[b].ts;
    return ta < tb || (ta == tb && a < b);
}

static void heap_push(tl_consumer *c, uint32_t lane)
{
    uint32_t k = c->nheap++;
    while (k && before(c, lane, c->heap[(k - 1) / 2])) {
        c->heap[k] = c->heap[(k - 1) / 2];
        k = (k - 1) / 2;
    }
    c->heap[k] = (uint8_t)lane;
}

/* The lane at the top of the heap has a new head: moves it down to its place. */
static inline void heap_sift_top(tl_consumer *c)
{
    uint32_t lane = c->heap[0], k = 0;
    for (;;) {
        uint32_t m = 2 * k + 1;
        if (m >= c->nheap)
            break;
        if (m + 1 < c->nheap && before(c, c->heap[m + 1], c->heap[m]))
            m++;
        if (!before(c, c->heap[m], lane))
            break;
        c->heap[k] = c->heap[m];
        k = m;
    }
    c->heap[k] = (uint8_t)lane;
}

static uint32_t heap_pop(tl_consumer *c)
{
    uint32_t top = c->heap[0];
    c->heap[0] = c->heap[--c->nheap];
    if (c->nheap)
        heap_sift_top(c);
    return top;
}

/* ---- batches ------------------------------------------------------------------------------ */

/*
 * A record reserved before the batch began but stamped after its
 * watermark: a producer that took a fresh timestamp after reserving, which
 * a later batch delivers. A later batch's watermark was taken after the
 * record was seen complete, so it can be older than the record only by
 * the clocks' skew between CPUs (each reads its own time-stamp counter):
 * at most TL_CLOCK_SKEW_NS, then it is delivered once the watermark passes
 * it. A record still ahead of a later batch's watermark by more is garbage,
 * and waiting for it would never end. Seen again in the same batch (across
 * calls that returned TL_TAKE_WAIT) it is only deferred: dropping it then
 * lost good events, with an OVERFLOW marker but no loss counted; so did
 * dropping it by the next batch whatever its distance, when the batches
 * followed each other closer than the skew (test_posix_controller_kill,
 * about 1 run in 20 under load). The skew is measured in watermarks, not
 * in wall time: a consumer preempted between publishing a watermark and
 * looking at the record once dropped a good one as garbage, its wall time
 * past the skew while its watermark was not (test_stream_shared, 1 run in
 * 20 under load). 1 if it was dropped (the lane moved on).
 */
static int defer(tl_consumer *c, uint32_t i, uint64_t pos, const tl_rec *h)
{
    if (c->deferred[i] != pos + 1) {
        c->deferred[i] = pos + 1;
        c->deferred_in[i] = c->batch_seq;
        c->deferred_pub[i] = c->batch_pub;
        c->deferred_at[i] = tl_clock_mono_ns();
    }
    c->batch_later = 1; /* a later batch takes it, or what follows it once it is dropped */
    if (c->deferred_in[i] == c->batch_seq || h->ts <= c->batch_pub)
        return 0; /* below the watermark published: a batch bounded lower (tl_consumer_begin_batch) left it */
    /* The watermarks have not moved by the skew since: it may be a good record of a CPU ahead. A second
       bound, in wall time, for a clock that does not advance (a shared buffer's scribbled header). */
    if (h->ts - c->batch_pub <= c->skew_stamps && c->batch_pub - c->deferred_pub[i] <= c->skew_stamps &&
        tl_clock_mono_ns() - c->deferred_at[i] <= TL_PRODUCER_DEAD_NS)
        return 0;
    drop_garbage(c, i, pos, pos + tl_rec_bytes(h->kind_size));
    return 1;
}

/*
 * Looks at lane i's oldest record within the batch: into the heap, among
 * the waiting lanes (reserved before the batch, not committed yet), or
 * nowhere (the lane is done with this batch).
 */
static void examine(tl_consumer *c, uint32_t i)
{
    c->waiting &= ~(1ull << i);
    for (;;) {
        uint64_t t = tail_of(c, i);
        if (t >= c->batch_head[i])
            return;
        uint64_t pos;
        tl_rec *h = &c->head_rec[i]; /* read only while lane i is in the heap: a record left out may overwrite it */
        if (!peek(c, i, &pos, h)) {
            t = tail_of(c, i);
            if (t >= c->batch_head[i])
                return;
            if (skip_if_abandoned(c, i, t))
                continue;
            c->waiting |= 1ull << i; /* it may be the oldest */
            return;
        }
        if (pos >= c->batch_head[i])
            return;
        if (h->ts > c->batch_w) {
            if (defer(c, i, pos, h))
                continue;
            return;
        }
        c->head_pos[i] = pos;
        heap_push(c, i);
        return;
    }
}

/*
 * examine's common case: lane i's next record is a committed, sound event
 * of the batch (FLUSH, UNTIL_FULL), now lane i's head (head_rec, head_pos),
 * not yet in the heap. 0 when examine must look (anything else: it does
 * the same checks again, and more).
 */
static inline int next_plain_event(tl_consumer *c, uint32_t i)
{
    uint64_t t = c->pos[i], cap = c->cap[i], rem = cap - (t & (cap - 1));
    if (c->shared_tail || t >= c->batch_head[i] || t % 8 || rem < TL_REC_HEADER)
        return 0;
    const tl_rec *r = (const tl_rec *)(c->data[i] + (t & (cap - 1)));
    __builtin_prefetch(c->data[i] + ((t + 1024) & (cap - 1)), 0, 3);
    if (atomic_load_explicit(&r->commit, memory_order_acquire) != t + 1)
        return 0;
    tl_rec *h = &c->head_rec[i];
    memcpy(h, r, sizeof *h);
    if (tl_rec_kind(h->kind_size) != TL_KIND_EVENT || !rec_sane(c, h, rem) || h->ts > c->batch_w)
        return 0;
    c->waiting &= ~(1ull << i);
    c->head_pos[i] = t;
    return 1;
}

/* The same, inline in take, its head in the heap. */
static inline int examine_next_event(tl_consumer *c, uint32_t i)
{
    if (!next_plain_event(c, i))
        return 0;
    heap_push(c, i);
    return 1;
}

uint64_t tl_consumer_publish_watermark(tl_consumer *c)
{
    uint64_t w = tl_clock_stamp_ordered(&c->clock);
    atomic_store(&c->s->watermark, w);
    atomic_thread_fence(memory_order_seq_cst);
    return w;
}

/*
 * Opens a batch that delivers up to stamp w, once watermark pub (>= w) is
 * published: read every own lane's head (see stream.h), look at each lane
 * once.
 */
static void open_batch(tl_consumer *c, uint64_t w, uint64_t pub)
{
    c->batch_w = w;
    c->batch_pub = pub;
    c->batch_used = atomic_load(&c->s->used_lanes) & c->own;
    c->batch = 1;
    c->batch_seq++;
    c->batch_later = 0;
    c->nheap = 0;
    c->waiting = 0;
    for (uint32_t i = 0; i <= c->nlanes; i++)
        if (c->batch_used >> i & 1)
            c->batch_head[i] = atomic_load(&c->lanes[i].head);
    for (uint32_t i = 0; i <= c->nlanes; i++)
        if (c->batch_used >> i & 1)
            examine(c, i);
}

static void restart_if_drained(tl_consumer *c);

static void start_batch(tl_consumer *c)
{
    uint64_t w = tl_consumer_publish_watermark(c);
    open_batch(c, w, w);
}

void tl_consumer_begin_batch(tl_consumer *c, uint64_t w, uint64_t pub)
{
    c->external = 1;
    open_batch(c, w < pub ? w : pub, pub);
}

/*
 * The stamp of the first committed event record of lane i that starts at or
 * after position `from`, looking `span` bytes at most and not past the
 * lane's head: 1, or 0 if none was found there. A record starts where its
 * commit word holds its own position + 1 (produce.h); its header is checked
 * as everywhere else, so a payload that looks like a commit word only moves
 * the bound the caller takes from it.
 */
static int stamp_after(const tl_consumer *c, uint32_t i, uint64_t from, uint64_t span, uint64_t *stamp)
{
    uint64_t head = atomic_load(&c->lanes[i].head), cap = c->cap[i];
    uint64_t end = from + span < head ? from + span : head;
    for (uint64_t p = (from + 7) & ~(uint64_t)7; p < end; p += 8) {
        uint64_t rem = cap - (p & (cap - 1));
        if (rem < TL_REC_HEADER)
            continue;
        const tl_rec *r = (const tl_rec *)(c->data[i] + (p & (cap - 1)));
        if (atomic_load_explicit(&r->commit, memory_order_acquire) != p + 1)
            continue;
        tl_rec h;
        memcpy(&h, r, sizeof h);
        if (tl_rec_kind(h.kind_size) == TL_KIND_EVENT && rec_sane(c, &h, rem)) {
            *stamp = h.ts;
            return 1;
        }
    }
    return 0;
}

int tl_consumer_bound(const tl_consumer *c, uint64_t budget, uint64_t *w)
{
    uint64_t span = 2 * (TL_REC_HEADER + (uint64_t)c->buf_cap) + 64; /* a whole record and then some */
    for (uint64_t m = c->own; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        uint64_t t = atomic_load(&c->lanes[i].tail), stamp;
        if (atomic_load(&c->lanes[i].head) - t <= budget)
            continue;
        if (!stamp_after(c, i, t + budget, span, &stamp))
            return 0;
        *w = stamp < *w ? stamp : *w;
    }
    return 1;
}

static int all_lanes_empty(tl_consumer *c)
{
    for (uint64_t m = c->own; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        if (tail_of(c, i) != atomic_load(&c->lanes[i].head))
            return 0;
    }
    return 1;
}

void tl_consumer_yield(tl_consumer *c)
{
    c->held = 0;
    c->batch = 0;
    c->nheap = 0;
    c->waiting = 0;
    release_all(c);
}

int tl_consumer_queued(const tl_consumer *c) { return c->qhead != c->qlen; }

void tl_consumer_set_lanes(tl_consumer *c, uint64_t own) { c->own = own & ((2ull << c->nlanes) - 1); }

void tl_consumer_adopt(tl_consumer *c, const tl_consumer *from)
{
    c->external = 0;
    for (uint64_t m = from->own & c->own; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        c->pos[i] = from->pos[i];
        c->pub[i] = from->pub[i];
    }
}

void tl_consumer_resync(tl_consumer *c)
{
    c->external = 0;
    if (c->shared_tail)
        return;
    for (uint64_t m = c->own; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        c->pos[i] = c->pub[i] = atomic_load(&c->lanes[i].tail);
    }
    if (c->own == (2ull << c->nlanes) - 1 && all_lanes_empty(c))
        restart_if_drained(c);
}

uint64_t tl_consumer_pending_bytes(const tl_consumer *c, uint32_t *cpu, uint32_t *lanes)
{
    uint64_t n = 0, most = 0;
    *cpu = 0;
    for (uint64_t m = c->own; m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        uint64_t p = atomic_load(&c->lanes[i].head) - atomic_load(&c->lanes[i].tail);
        n += p;
        *lanes += p != 0;
        if (p > most) {
            most = p;
            *cpu = atomic_load_explicit(&c->lanes[i].cpu, memory_order_relaxed);
        }
    }
    return n;
}

uint64_t tl_consumer_capacity_records(const tl_consumer *c)
{
    uint64_t bytes = 0;
    for (uint32_t i = 0; i <= c->nlanes; i++)
        bytes += c->cap[i];
    return bytes / TL_REC_HEADER;
}

uint32_t tl_consumer_backlog(const tl_consumer *c)
{
    uint64_t most = 0;
    for (uint64_t m = c->own & ((1ull << c->nlanes) - 1); m; m &= m - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(m);
        uint64_t used = atomic_load_explicit(&c->lanes[i].head, memory_order_relaxed) - tail_of(c, i);
        most = used > most ? used : most;
    }
    uint64_t cap = c->cap[0];
    return most >= cap ? 256 : (uint32_t)(most * 256 / cap);
}

int tl_consumer_quarter_full(const tl_consumer *c)
{
    for (uint32_t i = 0; i <= c->nlanes; i++)
        if (atomic_load(&c->lanes[i].head) - atomic_load(&c->lanes[i].tail) >= c->cap[i] / TL_DRAINER_WAKE_PART)
            return 1;
    return 0;
}

uint64_t tl_consumer_buffered(const tl_consumer *c)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        uint64_t used = atomic_load(&c->lanes[i].head) - atomic_load(&c->lanes[i].tail);
        n += used / tl_rec_size(0); /* an upper bound: records are at least this big */
    }
    return n;
}

void tl_consumer_producers_gone(tl_consumer *c) { c->producers_gone = 1; }

void tl_consumer_set_floor(tl_consumer *c)
{
    c->floor_ts = c->first_ts;
    if (c->last_ts < c->floor_ts)
        c->last_ts = c->floor_ts;
}

void tl_consumer_watch_producers(tl_consumer *c, int (*gone)(void *), void *arg)
{
    c->gone = gone;
    c->gone_arg = arg;
}

void tl_consumer_set_foreign(tl_consumer *c) { c->foreign = 1; }

uint64_t tl_consumer_overruns(const tl_consumer *c)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        uint64_t v = atomic_load(&c->lanes[i].overruns);
        if (v > TL_OVERRUNS_PLAUSIBLE)
            continue; /* not a count: a word of the buffer scribbled over (cross-process.md 9.8) */
        n = n + v < n ? UINT64_MAX : n + v;
    }
    return n;
}

/*
 * The reservation protocol of produce.h on the system lane, with the
 * consumer's geometry. Not tl_stream_record itself: it reads the geometry
 * from the mapping, and so do its slow paths (a loss, UNTIL_FULL's STOP).
 */
int tl_consumer_record_system(tl_consumer *c, const tracelog_event *ev)
{
    uint32_t n = c->nlanes;
    tl_lane *l = &c->lanes[n];
    uint8_t *base = c->data[n];
    uint64_t cap = c->cap[n];
    uint32_t size = tl_rec_size(ev->payload_len);
    if (ev->payload_len > c->max_sys_data) {
        atomic_fetch_add(&l->overruns, 1);
        return 0;
    }
    if (!(atomic_load_explicit(&c->s->used_lanes, memory_order_relaxed) >> n & 1))
        atomic_fetch_or(&c->s->used_lanes, 1ull << n);
    for (;;) {
        uint64_t h = atomic_load(&l->head);
        if (h % 8) { /* scribbled over: no record can go after it */
            atomic_fetch_add(&l->overruns, 1);
            return 0;
        }
        uint64_t rem = cap - (h & (cap - 1)), pad = rem < size ? rem : 0;
        if (!tl_stream_has_room(l, h, pad + size, cap)) {
            atomic_fetch_add(&l->overruns, 1);
            return 0;
        }
        if (!atomic_compare_exchange_weak(&l->head, &h, h + pad + size))
            continue;
        uint64_t ts = tl_clock_stamp(&c->clock);
        if (pad >= 16) { /* commit and kind_size only (see produce.h) */
            tl_rec *p = (tl_rec *)(base + (h & (cap - 1)));
            p->kind_size = (uint32_t)pad | (uint32_t)TL_KIND_PAD << 28;
            atomic_store_explicit(&p->commit, h + 1, memory_order_release);
        }
        uint64_t pos = h + pad;
        uint8_t *at = base + (pos & (cap - 1));
        tl_stream_write_rec(at, TL_KIND_EVENT, size, ts, ev);
        if (ev->payload_len)
            memcpy(at + TL_REC_HEADER, ev->payload, ev->payload_len);
        atomic_store_explicit(&((tl_rec *)at)->commit, pos + 1, memory_order_release);
        if (atomic_load_explicit(&c->s->waiters, memory_order_relaxed))
            tl_stream_wake_readers(c->s);
        return 1;
    }
}

/* All lanes empty: an UNTIL_FULL stream that stopped itself starts again (START before the next event). */
static void restart_if_drained(tl_consumer *c)
{
    tl_stream *s = c->s;
    atomic_store(&s->full, 0); /* read to the end: there is room again, whatever the policy */
    if (atomic_load(&c->lanes[c->nlanes].head) % 8)
        return; /* a scribbled system lane takes no START marker: the stream stays stopped */
    if (c->producers_gone || (c->gone && c->gone(c->gone_arg)))
        return; /* nobody is left to record: a START would claim the stream ran again after its process ended */
    uint32_t one = 1;
    if (!atomic_compare_exchange_strong(&s->autostopped, &one, 0))
        return;
    uint64_t filter[TL_FILTER_WORDS];
    tl_stream_get_filter(s, filter);
    tracelog_event start = {.event_id = c->markers.start, .payload_len = sizeof filter, .payload = filter};
    tl_consumer_record_system(c, &start);
    uint32_t suspended = TL_SUSPENDED;
    atomic_compare_exchange_strong(&s->state, &suspended, TL_RUNNING);
}

tl_take tl_consumer_take(tl_consumer *c, tracelog_event *ev, int force)
{
    if (c->qhead == c->qlen)
        c->held = 0; /* the event handed out last is no longer used */
    /* The lanes whose positions moved since the last call: the last one's, and those a run read from */
    for (uint64_t moved = c->run_lanes | 1ull << c->last_lane; moved; moved &= moved - 1) {
        uint32_t i = (uint32_t)__builtin_ctzll(moved);
        uint64_t read = c->pos[i] - c->pub[i];
        if (read >= TL_CONSUMER_RELEASE || read >= c->cap[i] / 8)
            release(c, i);
    }
    c->run_lanes = 0;
    int fresh = 0; /* the batch was opened by this call */
    for (;;) {
        if (dequeue(c, ev))
            return TL_TAKE_EVENT;
        if (!c->batch) {
            if (c->external) { /* its batch is over: the caller opens the next */
                release_all(c);
                atomic_fetch_add_explicit(&c->s->delivered, c->delivered_here, memory_order_relaxed);
                c->delivered_here = 0;
                return TL_TAKE_EMPTY;
            }
            start_batch(c);
            fresh = 1;
        }
        for (uint64_t w = c->waiting; w; w &= w - 1)
            examine(c, (uint32_t)__builtin_ctzll(w)); /* committed meanwhile? */
        if (c->waiting && !force) {
            release_all(c);
            return TL_TAKE_WAIT;
        }
        if (c->nheap) {
            uint32_t i = heap_pop(c);
            int r = deliver(c, i, &c->head_rec[i], c->head_pos[i], ev);
            if (r >= 0)
                c->last_lane = i;
            if (!examine_next_event(c, i))
                examine(c, i); /* its next record (after a lost race with an overwrite: the same place again) */
            if (r == 1)
                return TL_TAKE_EVENT;
            continue;
        }
        c->batch = 0; /* everything up to the watermark is out */
        if (c->external)
            continue;
        if (c->batch_later || !fresh)
            continue; /* newer records are there, or may be: a new batch takes them */
        release_all(c);
        if (all_lanes_empty(c))
            restart_if_drained(c);
        return TL_TAKE_EMPTY;
    }
}

/*
 * Whether lane i's head record, at the top of the heap, can go out without
 * anything before it: an event, no loss to mark on its lane.
 */
static int plain_head(const tl_consumer *c, uint32_t i)
{
    const tl_lane *l = &c->lanes[i];
    return tl_rec_kind(c->head_rec[i].kind_size) == TL_KIND_EVENT && !(c->garbage_lanes >> i & 1) &&
           atomic_load_explicit(&l->dropped, memory_order_relaxed) ==
               atomic_load_explicit(&l->dropped_acked, memory_order_relaxed);
}

/* Hands out lane i's head, a plain event (plain_head), out of the heap: advance, stamp, event. */
static inline void deliver_plain(tl_consumer *c, uint32_t i, tracelog_event *ev)
{
    const tl_rec *h = &c->head_rec[i];
    uint64_t pos = c->head_pos[i];
    c->pos[i] = pos + tl_rec_bytes(h->kind_size); /* advance(), without a shared tail */
    fill_event(c, h, stamp_in_order(c, h->ts), c->data[i] + (pos & (c->cap[i] - 1)) + TL_REC_HEADER, ev);
    c->last_lane = i;
    c->run_lanes |= 1ull << i;
}

uint32_t tl_consumer_take_run(tl_consumer *c, tracelog_event *evs, uint32_t max)
{
    uint32_t n = 0;
    /* (c->waiting: a lane's uncommitted record may be the oldest; take waits for it) */
    if (!c->batch || c->shared_tail || c->qhead != c->qlen || !max || c->waiting)
        return 0;
    c->run_lanes |= 1ull << c->last_lane; /* the take's: the run moves last_lane on */
    /* take's loop, without what only a call needs: nothing is released until the next take, which
       releases the lanes the run read from (run_lanes) as it does its last one. The lane at the top
       of the heap stays there while its events go out: alone in the heap, in a row; else one, then
       it moves down to its place (one comparison with 2 lanes), not a pop and a push per event. */
    while (n < max && c->nheap && plain_head(c, c->heap[0])) {
        uint32_t i = c->heap[0];
        int more;
        do { /* a lane alone in the heap: its events in a row */
            deliver_plain(c, i, &evs[n++]);
            more = next_plain_event(c, i);
        } while (more && c->nheap == 1 && n < max && plain_head(c, i));
        if (more) {
            if (c->nheap > 1)
                heap_sift_top(c);
            continue;
        }
        heap_pop(c);
        examine(c, i); /* as take does after delivering; only it makes a lane wait */
        if (c->waiting)
            break;
    }
    count_delivered(c, n);
    return n;
}

int tl_lane_run_begin(tl_consumer *c, tl_lane_run *r)
{
    /* take_run's conditions: the lane at the top of the heap, its events up to the next lane's head */
    if (!c->batch || c->shared_tail || c->qhead != c->qlen || c->waiting || !c->nheap || !plain_head(c, c->heap[0]))
        return 0;
    uint32_t i = c->heap[0];
    uint64_t w = c->batch_w, pos = c->head_pos[i], end = c->batch_head[i];
    /* At most what a take gives back at once: the run ends, the next take releases it (as a run of 63 did) */
    uint64_t release = TL_CONSUMER_RELEASE < c->cap[i] / 8 ? TL_CONSUMER_RELEASE : c->cap[i] / 8;
    end = end - pos > release ? pos + release : end;
    if (c->nheap > 1) { /* the next lane's head (the smaller of the top's children) goes first from its stamp on */
        uint32_t j = c->nheap > 2 && before(c, c->heap[2], c->heap[1]) ? c->heap[2] : c->heap[1];
        uint64_t next = c->head_rec[j].ts; /* before(): a tie goes to the lower lane */
        if (i > j && next == 0)
            return 0;
        next -= i > j;
        w = next < w ? next : w;
    }
    *r = (tl_lane_run){.base = c->data[i],
                       .mask = c->cap[i] - 1,
                       .pos = pos,
                       .end = end,
                       .w = w,
                       .last = c->last_ts,
                       .max_len = c->buf_cap,
                       .clock = &c->clock,
                       .lane = i};
    return 1;
}

void tl_lane_run_end(tl_consumer *c, const tl_lane_run *r)
{
    if (!r->taken)
        return;
    uint32_t i = r->lane;
    c->pos[i] = r->pos; /* advance(), without a shared tail */
    c->last_ts = r->last;
    c->clamped += r->clamped;
    c->run_lanes |= 1ull << c->last_lane | 1ull << i; /* the take's lane and the run's: the next take releases them */
    c->last_lane = i;
    count_delivered(c, r->taken);
    if (next_plain_event(c, i)) { /* its new head, at the top still: moved down to its place */
        if (c->nheap > 1)
            heap_sift_top(c);
    } else {
        heap_pop(c);
        examine(c, i);
    }
}

/*
 * Whether take_wait stops waiting for the producers mid-record: their
 * process is gone (the client's check, every millisecond of waiting), or
 * this batch has waited TL_PRODUCER_STALL_NS in all. Per batch, not per
 * record: a buffer full of records that are never committed (a producer
 * killed in each, or a process that scribbles commit words) costs one
 * stall a batch, not one a record (cross-process.md 9.7).
 */
static int stop_waiting(tl_consumer *c, uint64_t *prev, uint64_t *looked)
{
    uint64_t now = tl_clock_mono_ns();
    if (c->stall_batch != c->batch_seq) {
        c->stall_batch = c->batch_seq;
        c->stall_ns = 0;
    } else if (*prev) {
        c->stall_ns += now - *prev;
    }
    *prev = now;
    if (c->gone && !c->producers_gone && now - *looked >= 1000000) {
        *looked = now;
        if (c->gone(c->gone_arg))
            tl_consumer_producers_gone(c);
    }
    return c->producers_gone || c->stall_ns > TL_PRODUCER_STALL_NS;
}

/*
 * A producer is mid-record: spin, then yield, until it is done or
 * stop_waiting says to go on without it. A controller (producers in other
 * processes: c->foreign) yields 64 times, then sleeps (10 us, doubling up to 1 ms):
 * a record never committed (a traced process can leave one in each lane every
 * half second) cost it a CPU spent in sched_yield, at its priority, for
 * nothing the traced process paid. In process, the yields stay: a producer
 * preempted mid-record is run again at once, where a sleep on a loaded
 * machine let the others wait for room longer and lose more (tight loop,
 * FLUSH: 86.8-97.0 % kept against 98.4-100 % in alternating runs).
 */
static tl_take take_waiting(tl_consumer *c, tracelog_event *ev)
{
    uint64_t prev = 0, looked = 0;
    long nap_ns = 10000;
    for (unsigned spins = 1;; spins++) {
        int force = spins >= 64 && stop_waiting(c, &prev, &looked);
        tl_take r = tl_consumer_take(c, ev, force);
        if (r != TL_TAKE_WAIT)
            return r;
        if (spins < 64)
            continue;
        if (spins < 128 || !c->foreign) {
            sched_yield();
            continue;
        }
        struct timespec nap = {0, nap_ns};
        syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &nap, NULL); /* not a cancellation point, as the yield */
        nap_ns = nap_ns < 1000000 ? 2 * nap_ns : 1000000;
    }
}

tl_take tl_consumer_take_wait(tl_consumer *c, tracelog_event *ev)
{
    tl_take r = tl_consumer_take(c, ev, 0); /* the common case: nothing to wait for */
    return r != TL_TAKE_WAIT ? r : take_waiting(c, ev);
}

int tl_consumer_take_unmarked_loss(tl_consumer *c, tracelog_event *ev)
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
        uint64_t now = tl_clock_stamp_ordered(&c->clock);
        queue_marker(c, c->markers.overflow, loss_stamp(c, atomic_load(&l->lost_first_ts), c->last_ts, now));
        return dequeue(c, ev);
    }
    return 0;
}

void tl_consumer_clear(tl_consumer *c)
{
    for (uint32_t i = 0; i <= c->nlanes; i++) {
        tl_lane *l = &c->lanes[i];
        uint64_t h = atomic_load(&l->head);
        atomic_store(&l->tail, h);
        c->pos[i] = c->pub[i] = h;
        tl_stream_room_made(l, c->cap[i]);
        atomic_store(&l->dropped_acked, atomic_load(&l->dropped));
        atomic_store(&l->lost, 0);
    }
    atomic_store(&c->s->full, 0);
    c->qhead = c->qlen = 0;
    c->held = 0;
    c->batch = 0;
    c->nheap = 0;
    c->waiting = 0;
    c->garbage_lanes = 0;
}

int tl_consumer_start(tl_consumer *c, const tracelog_event *marker)
{
    if (!tl_stream_may_start(c->s))
        return 0;
    if (marker)
        tl_consumer_record_system(c, marker);
    tl_stream_set_running(c->s);
    return 1;
}

int tl_consumer_stop(tl_consumer *c, const tracelog_event *marker)
{
    if (!tl_stream_suspend(c->s))
        return 0;
    if (marker)
        tl_consumer_record_system(c, marker);
    return 1;
}

int tl_consumer_drainer_sleep(const tl_consumer *c, uint64_t ns, int look)
{
    tl_stream *s = c->s;
    uint32_t seq = atomic_load(&s->drainer_seq);
    struct timespec period = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    atomic_store(&s->drainer_sleeping, 1);
    /* The flag's store before the lanes are looked at, as a producer stores the head before it looks at the
       flag (both sequentially consistent): either it sees us asleep and wakes us, or we see its lane. */
    atomic_thread_fence(memory_order_seq_cst);
    int timed_out = 0;
    if (!look || !tl_consumer_quarter_full(c))
        timed_out = syscall(SYS_futex, &s->drainer_seq, FUTEX_WAIT, seq, &period, NULL, 0) != 0 && errno == ETIMEDOUT;
    atomic_store(&s->drainer_sleeping, 0);
    return !timed_out;
}
