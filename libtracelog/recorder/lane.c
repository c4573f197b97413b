/*
 * A lane's events encoded where they lie (lane.h).
 */
#include <errno.h>

#include "recorder/lane.h"

/* Whether record h (data length len) is an event of key k: the same id, truncation, thread, address and length. */
static inline int of_key(const tl_key_build *k, const tl_rec *h, uint32_t len)
{
    return (h->id_trunc & 0x3fffffff) == k->id && h->id_trunc >> 30 == k->trunc && h->tid == k->tid &&
           h->addr == k->addr && h->pid == k->pid && len == k->len;
}

/*
 * How many more events of len bytes of an existing key b's writer would
 * add to b (not empty) before it ends the chunk, at b's present index and
 * timestamp widths, and that fit the room reserved: tl_chunk_fits, which
 * counts a new key's entry for each event (so that the chunks are the ones
 * the writer's append makes), solved for the count. *widest gets the
 * largest zigzag timestamp delta that keeps the width.
 */
static uint32_t room_for(const tl_chunk_builder *b, uint32_t len, size_t limit, uint64_t *widest)
{
    if (b->nkeys >= TL_KEYS_MAX)
        return 0;
    uint64_t first = tl_zigzag((int64_t)(b->first_ts - b->min_ts)), mx = b->max_zz > first ? b->max_zz : first;
    unsigned w = tl_chunk_ts_width(mx);
    *widest = w >= 8 ? UINT64_MAX : (1ull << (8 * w)) - 1;
    tracelog_event like = {.payload_len = len};
    size_t per_event = (b->nkeys >= 256 ? 2 : 1) + w, entry = tl_chunk_key_bound(&like) - len;
    size_t used = b->fixed + entry + (size_t)b->count * per_event;
    if (used >= limit)
        return 0;
    size_t m = (limit - used) / (len + per_event);
    size_t cap = b->events_cap - b->count;
    m = m < cap ? m : cap;
    if (len) {
        size_t pd = (b->pdata.cap - b->pdata.len) / len, u32 = (UINT32_MAX - b->pdata.len) / len;
        m = m < pd ? m : pd;
        m = m < u32 ? m : u32;
    }
    return m < UINT32_MAX - b->count ? (uint32_t)m : UINT32_MAX - b->count;
}

/*
 * The common case: the run's next events of key k (the key of b's last
 * event) and thread ktid, for as long as they fit at b's present widths.
 * The first is checked field by field, the rest as records like it
 * (tl_lane_run_next_like). The chunk's and the run's fields are held in
 * locals, written back once; stamps in order (the run keeps them so), so
 * the chunk's earliest stays its earliest.
 */
static uint32_t add_key_run(tl_chunk_builder *b, size_t limit, tl_lane_run *r, uint32_t k, uint32_t ktid,
                            uint64_t *ns)
{
    tl_key_build *key = &b->keys[k];
    uint32_t len = key->len, l;
    uint64_t widest;
    uint32_t room = room_for(b, len, limit, &widest);
    tl_rec h;
    const uint8_t *data = room ? tl_lane_run_peek(r, &h, &l) : NULL;
    if (!data || h.ktid != ktid || !of_key(key, &h, l))
        return 0;
    tl_rec_like like;
    tl_lane_run_like(r, &h, &like);

    const tl_clock clock = *r->clock;
    uint8_t *pdata = b->pdata.data;
    uint32_t *off = b->off, count = b->count, n = 0;
    uint64_t *tss = b->ts;
    uint16_t *idx = b->idx;
    uint64_t prev = b->prev_ts, max_zz = b->max_zz, plen = b->pdata.len;
    uint64_t pos = r->pos, last = r->last, clamped = 0, raw = h.ts;
    do {
        uint64_t stamp = raw < last ? last : raw, ts = tl_clock_ns(&clock, stamp);
        if (ts < prev || ts - prev > INT64_MAX || 2 * (ts - prev) > widest)
            break; /* a wider timestamp (or one out of order): the general path */
        uint64_t zz = 2 * (ts - prev);
        max_zz = zz > max_zz ? zz : max_zz;
        if (len)
            tl_copy_payload(pdata + plen, data, len);
        off[count] = (uint32_t)plen;
        tss[count] = ts;
        idx[count] = (uint16_t)k;
        plen += len;
        count++;
        prev = ts;
        pos += like.size;
        clamped += stamp != raw;
        last = stamp;
        n++;
    } while (n < room && (data = tl_lane_run_next_like(r, pos, &like, &raw)));

    if (n) {
        r->pos = pos;
        r->last = last;
        r->clamped += clamped;
        r->taken += n;
        b->count = count;
        b->pdata.len = plen;
        b->fixed += (size_t)n * len;
        b->prev_ts = prev;
        b->max_ts = prev > b->max_ts ? prev : b->max_ts;
        b->max_zz = max_zz;
        key->count += n;
        *ns = prev;
    }
    return n;
}

/* The run's next event, of last's thread, the general way (a new key, a wider stamp, the chunk's end): 1 if added. */
static int add_one(tl_chunk_builder *b, size_t limit, tl_lane_run *r, const tracelog_event *last, uint64_t *ns)
{
    tl_rec h;
    uint32_t len;
    const uint8_t *data = tl_lane_run_peek(r, &h, &len);
    if (!data || h.ktid != last->kernel_tid || h.pid != last->pid || h.tid != last->tid)
        return 0; /* the end, or another thread: the writer's append defines it first */
    uint64_t stamp = tl_lane_run_stamp(r, &h);
    tracelog_event ev = {.timestamp_ns = tl_clock_ns(r->clock, stamp),
                         .event_id = h.id_trunc & 0x3fffffff,
                         .pid = h.pid,
                         .kernel_tid = h.ktid,
                         .truncation = h.id_trunc >> 30,
                         .tid = h.tid,
                         .address = h.addr,
                         .payload_len = len,
                         .payload = data};
    if (!tl_chunk_fits(b, &ev, limit) || tl_chunk_add(b, &ev) != TRACELOG_OK)
        return 0;
    tl_lane_run_take(r, &h, stamp);
    *ns = ev.timestamp_ns;
    return 1;
}

static uint32_t add_lane(tl_chunk_builder *b, size_t limit, tl_lane_run *r, tracelog_event *last)
{
    uint32_t n = 0;
    uint64_t ns = 0;
    for (;;) {
        const tl_key_build *key = b->count ? &b->keys[b->idx[b->count - 1]] : NULL;
        if (key && key->pid == last->pid && key->tid == last->tid) /* the key of the writer's thread */
            n += add_key_run(b, limit, r, b->idx[b->count - 1], last->kernel_tid, &ns);
        if (!add_one(b, limit, r, last, &ns))
            break;
        n++;
    }
    if (n) { /* what the caller knows of the last event added: its thread and time */
        const tl_key_build *key = &b->keys[b->idx[b->count - 1]];
        *last = (tracelog_event){.timestamp_ns = ns, .event_id = key->id, .pid = key->pid,
                                 .kernel_tid = last->kernel_tid, .truncation = key->trunc, .tid = key->tid,
                                 .address = key->addr, .payload_len = key->len,
                                 .payload = key->len ? b->pdata.data + b->off[b->count - 1] : NULL};
    }
    return n;
}

uint32_t tl_rec_append_lane(tl_consumer *c, tl_chunk_builder *b, size_t limit, tracelog_event *last)
{
    tl_lane_run run;
    if (!b || !tl_lane_run_begin(c, &run))
        return 0;
    uint32_t n = add_lane(b, limit, &run, last);
    tl_lane_run_end(c, &run);
    return n;
}

/* A run copied out under the guard (copy_run), and handed back under it (end_run). */
typedef struct copied {
    tl_consumer *c;
    const tracelog_event *thread; /* whose events may go in place */
    uint8_t *buf;
    size_t cap, bytes;
    tl_lane_run copy;
} copied;

/*
 * Copies out the run's events that could go in place: those of the
 * writer's thread, committed, looked at where they lie first (each commit
 * word read before its record, as a take reads it), so that no record is
 * copied while a producer is still writing it. All is checked again on the
 * copy, which alone is trusted.
 */
static int copy_run(void *arg)
{
    copied *s = arg;
    tl_lane_run run;
    s->bytes = 0;
    if (!tl_lane_run_begin(s->c, &run))
        return 0;
    tl_lane_run scan = run;
    tl_rec h;
    uint32_t len;
    const tracelog_event *t = s->thread;
    while (tl_lane_run_peek(&scan, &h, &len) && h.ktid == t->kernel_tid && h.pid == t->pid && h.tid == t->tid &&
           scan.pos + tl_rec_bytes(h.kind_size) - run.pos <= s->cap)
        scan.pos += tl_rec_bytes(h.kind_size);
    if (scan.pos == run.pos)
        return 0;
    run.end = scan.pos;
    s->bytes = tl_lane_run_copy(&run, s->buf, s->cap, &s->copy);
    return 0;
}

static int end_run(void *arg)
{
    copied *s = arg;
    tl_lane_run_end(s->c, &s->copy);
    return 0;
}

uint32_t tl_rec_append_lane_copied(tl_consumer *c, tl_remote *rm, tl_chunk_builder *b, size_t limit,
                                   tracelog_event *last, uint8_t *buf, size_t cap, int *fault)
{
    copied s = {.c = c, .thread = last, .buf = buf, .cap = cap};
    *fault = 0;
    if (!b)
        return 0;
    if (tl_remote_guard(rm, copy_run, &s) == EFAULT) {
        *fault = 1;
        return 0;
    }
    uint32_t n = s.bytes ? add_lane(b, limit, &s.copy, last) : 0;
    if (n && tl_remote_guard(rm, end_run, &s) == EFAULT)
        *fault = 1;
    return n;
}
