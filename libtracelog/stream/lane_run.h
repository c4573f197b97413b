/*
 * A run of one lane's events read where they lie, for a flusher that
 * encodes them straight into a chunk (recorder/lane.c) instead of taking them
 * as tracelog_events (tl_consumer_take_run): the lane whose event is due
 * next, its committed events of the batch up to the next lane's head, with
 * nothing to mark before them. Each record is checked as take_run checks it, on a copy of its
 * header read once; the caller takes it or stops there. Not thread-safe:
 * the consumer's thread, between two takes.
 */
#ifndef TRACELOG_STREAM_LANE_RUN_H
#define TRACELOG_STREAM_LANE_RUN_H

#include <stddef.h>
#include <string.h>

#include "stream/clock.h"
#include "stream/consumer.h"
#include "stream/layout.h"

typedef struct tl_lane_run {
    const uint8_t *base;  /* the lane's ring, or a copy of part of it (tl_lane_run_copy) */
    uint64_t mask;        /* the ring's bytes - 1 (a copy: UINT64_MAX, it does not wrap) */
    uint64_t origin;      /* a copy: the position at base (the ring itself: 0) */
    uint64_t pos;         /* the next record */
    uint64_t end;         /* where the run's bytes end: the lane's head when the batch began (its records after
                             are not the batch's) or what a take releases at once, whichever comes first; or
                             the copy's end */
    uint64_t w;           /* the last stamp it takes: the batch's watermark, or just before the next lane's head */
    uint64_t last;        /* the stamp of the last event taken, kept in order (stamp_in_order) */
    uint64_t clamped;     /* events taken whose stamp was raised to keep the order */
    uint64_t max_len;     /* the longest data a record may have */
    const tl_clock *clock;
    uint32_t lane;
    uint32_t taken;
} tl_lane_run;

/*
 * Right after a take that handed out an event (and before the next take):
 * 1 with r set up if the next events are a run as above, else 0 (the next
 * take, or tl_consumer_take_run, takes them). A run reads at most what a
 * take gives back to the producers at once (TL_CONSUMER_RELEASE, or an
 * eighth of the lane): the next take gives it back. A LOOP stream's consumer
 * always gets 0. End every run begun with tl_lane_run_end.
 */
int tl_lane_run_begin(tl_consumer *c, tl_lane_run *r);
/* Gives the consumer the run's events taken: they are handed out, as by take_run. */
void tl_lane_run_end(tl_consumer *c, const tl_lane_run *r);

/*
 * Another process's buffer, which it may rewrite or shrink at any time: the
 * run's next bytes (up to cap, not past the ring's end) copied to buf,
 * under the buffer's SIGBUS guard; *copy is then the run on the copy,
 * read without the guard and without its writer (then tl_lane_run_end
 * with the copy, under the guard again). The bytes copied.
 */
static inline size_t tl_lane_run_copy(const tl_lane_run *r, uint8_t *buf, size_t cap, tl_lane_run *copy)
{
    uint64_t off = r->pos & r->mask, n = r->end - r->pos, ring = r->mask + 1 - off;
    n = n < ring ? n : ring;
    n = n < cap ? n : cap;
    memcpy(buf, r->base + off, n);
    *copy = *r;
    copy->base = buf;
    copy->mask = UINT64_MAX;
    copy->origin = r->pos;
    copy->end = r->pos + n;
    return n;
}

/*
 * The run's next record, if it is a committed event of the batch: its
 * data (*len bytes) where it lies, and a checked copy of its header in h
 * (the ring may change under us: only h is used). NULL at the run's end.
 */
static inline const uint8_t *tl_lane_run_peek(const tl_lane_run *r, tl_rec *h, uint32_t *len)
{
    uint64_t t = r->pos, off = (t - r->origin) & r->mask;
    if (t >= r->end)
        return NULL;
    /* the bytes readable from t: to the ring's end (a copy has none) or the run's, whichever comes first */
    uint64_t ring = r->mask - off, left = r->end - t, rem = ring < left ? ring + 1 : left;
    if (rem < TL_REC_HEADER)
        return NULL;
    const uint8_t *at = r->base + off;
    if (r->mask != UINT64_MAX) /* the lines ahead, written on the producers' cores (a copy is in ours) */
        __builtin_prefetch(r->base + ((t + 1024) & r->mask), 0, 3);
    if (atomic_load_explicit(&((const tl_rec *)at)->commit, memory_order_acquire) != t + 1)
        return NULL;
    memcpy(h, at, sizeof *h);
    uint32_t l = tl_rec_data_len(h->kind_size); /* UINT32_MAX when the size cannot hold it */
    if (tl_rec_kind(h->kind_size) != TL_KIND_EVENT || tl_rec_bytes(h->kind_size) > rem || l > r->max_len ||
        h->ts > r->w)
        return NULL;
    *len = l;
    return at + TL_REC_HEADER;
}

/*
 * The records of a run that repeat a peeked one's header but for the commit
 * word and the stamp (the same kind and size, event, thread and address):
 * most runs are one key's events. Each is then checked by comparing four
 * words with the first's (tl_lane_run_next_like) instead of field by field.
 */
typedef struct tl_rec_like {
    uint64_t words[4]; /* the header's bytes from kind_size, less the stamp */
    uint64_t size;     /* bytes of each record */
    uint64_t stop;     /* where the lap or the run ends, whichever comes first: no record read crosses it */
} tl_rec_like;
_Static_assert(offsetof(tl_rec, id_trunc) == offsetof(tl_rec, kind_size) + 4 &&
                   offsetof(tl_rec, ktid) == offsetof(tl_rec, pid) + 4 && sizeof(tl_rec) == offsetof(tl_rec, pid) + 8,
               "the words of tl_rec_like cover the header but for its commit word and stamp");

static inline uint64_t tl_rec_word(const uint8_t *at, size_t off)
{
    uint64_t v;
    memcpy(&v, at + off, 8);
    return v;
}

/* The records like the one whose header h tl_lane_run_peek just gave at r->pos. */
static inline void tl_lane_run_like(const tl_lane_run *r, const tl_rec *h, tl_rec_like *like)
{
    uint64_t off = (r->pos - r->origin) & r->mask, ring = r->mask - off, left = r->end - r->pos;
    like->words[0] = tl_rec_word((const uint8_t *)h, offsetof(tl_rec, kind_size));
    like->words[1] = tl_rec_word((const uint8_t *)h, offsetof(tl_rec, tid));
    like->words[2] = tl_rec_word((const uint8_t *)h, offsetof(tl_rec, addr));
    like->words[3] = tl_rec_word((const uint8_t *)h, offsetof(tl_rec, pid));
    like->size = tl_rec_bytes(h->kind_size);
    like->stop = r->pos + (ring < left ? ring + 1 : left);
}

/*
 * The data of the record at pos (after the run's records before it were
 * taken) if it is a committed event of the batch like `like`, its stamp in
 * *ts; else NULL (tl_lane_run_peek then says what it is).
 */
static inline const uint8_t *tl_lane_run_next_like(const tl_lane_run *r, uint64_t pos, const tl_rec_like *like,
                                                   uint64_t *ts)
{
    if (like->stop - pos < like->size) /* pos <= stop: each record taken ended at or before it */
        return NULL;
    const uint8_t *at = r->base + ((pos - r->origin) & r->mask);
    __builtin_prefetch(r->base + ((pos + 1024 - r->origin) & r->mask), 0, 3); /* a copy: a hint past it, harmless */
    if (atomic_load_explicit(&((const tl_rec *)at)->commit, memory_order_acquire) != pos + 1)
        return NULL;
    uint64_t differ = (tl_rec_word(at, offsetof(tl_rec, kind_size)) ^ like->words[0]) |
                      (tl_rec_word(at, offsetof(tl_rec, tid)) ^ like->words[1]) |
                      (tl_rec_word(at, offsetof(tl_rec, addr)) ^ like->words[2]) |
                      (tl_rec_word(at, offsetof(tl_rec, pid)) ^ like->words[3]);
    uint64_t stamp = tl_rec_word(at, offsetof(tl_rec, ts));
    if (differ || stamp > r->w)
        return NULL;
    *ts = stamp;
    return at + TL_REC_HEADER;
}

/* The stamp of the peeked record h in the run's order: at least the last one's. */
static inline uint64_t tl_lane_run_stamp(const tl_lane_run *r, const tl_rec *h)
{
    return h->ts < r->last ? r->last : h->ts;
}

/* Takes the peeked record h, stamped `stamp` (tl_lane_run_stamp). */
static inline void tl_lane_run_take(tl_lane_run *r, const tl_rec *h, uint64_t stamp)
{
    r->pos += tl_rec_bytes(h->kind_size);
    r->clamped += stamp != h->ts;
    r->last = stamp;
    r->taken++;
}

#endif
