/*
 * A run of one lane's events read where they lie, for a flusher that
 * encodes them straight into a chunk (writer/lane.c) instead of taking them
 * as tracelog_events (tl_consumer_take_run): the lane whose event is due
 * next, its committed events of the batch up to the next lane's head, with
 * nothing to mark before them. Each record is checked as take_run checks it, on a copy of its
 * header read once; the caller takes it or stops there. Not thread-safe:
 * the consumer's thread, between two takes.
 */
#ifndef TRACELOG_STREAM_LANE_RUN_H
#define TRACELOG_STREAM_LANE_RUN_H

#include <string.h>

#include "stream/clock.h"
#include "stream/consumer.h"
#include "stream/layout.h"

typedef struct tl_lane_run {
    const uint8_t *base;  /* the lane's ring */
    uint64_t mask;        /* its bytes - 1 */
    uint64_t pos;         /* the next record */
    uint64_t end;         /* the lane's head when the batch began: its records after are not the batch's */
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
 * take, or tl_consumer_take_run, takes them). A LOOP stream's consumer
 * always gets 0. End every run begun with tl_lane_run_end.
 */
int tl_lane_run_begin(tl_consumer *c, tl_lane_run *r);
/* Gives the consumer the run's events taken: they are handed out, as by take_run. */
void tl_lane_run_end(tl_consumer *c, const tl_lane_run *r);

/*
 * The run's next record, if it is a committed event of the batch: its
 * data (*len bytes) where it lies, and a checked copy of its header in h
 * (the ring may change under us: only h is used). NULL at the run's end.
 */
static inline const uint8_t *tl_lane_run_peek(const tl_lane_run *r, tl_rec *h, uint32_t *len)
{
    uint64_t t = r->pos, rem = r->mask + 1 - (t & r->mask);
    if (t >= r->end || rem < TL_REC_HEADER)
        return NULL;
    const uint8_t *at = r->base + (t & r->mask);
    __builtin_prefetch(r->base + ((t + 1024) & r->mask), 0, 3); /* the lines ahead: written on the producers' cores */
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
