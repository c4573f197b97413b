/*
 * The consumer's state (consumer.h says what it does). Only stream/ and
 * white-box tests include this.
 */
#ifndef TRACELOG_STREAM_CONSUMER_INTERNAL_H
#define TRACELOG_STREAM_CONSUMER_INTERNAL_H

#include "stream/consumer.h"
#include "stream/layout.h"

#define TL_CONSUMER_RELEASE (64u << 10)
struct tl_consumer {
    tl_stream *s;
    tl_lane *lanes;
    uint8_t *data[TL_MAX_LANES + 1]; /* each lane's ring */
    uint64_t cap[TL_MAX_LANES + 1];  /* and its size, a power of two */
    uint32_t nlanes;                 /* user lanes; the system lane follows */
    uint32_t max_sys_data;
    int shared_tail;                 /* LOOP: producers move tails too */
    tl_stream_markers markers;
    tl_clock clock;        /* the stream's, copied at init: the watermark's stamps, and each event's time in ns */
    uint64_t skew_stamps;  /* TL_CLOCK_SKEW_NS in stamps of that clock */
    uint8_t *buf;          /* LOOP: copy of the delivered event's data */
    size_t buf_cap;        /* the largest data a record may have */
    uint64_t pos[TL_MAX_LANES + 1];  /* each lane's read position (the tail, when not shared) */
    uint64_t pub[TL_MAX_LANES + 1];  /* and the value last stored in the lane's tail */
    uint32_t last_lane;    /* the lane of the event handed out last */
    uint64_t run_lanes;    /* the lanes a run read from since the last take (tl_consumer_take_run) */
    int held;              /* an event of lane held_lane at held_pos is queued or handed out: its room stays */
    uint32_t held_lane;
    uint64_t held_pos;
    /* Synthesized OVERFLOW/RESUME pairs, then the event: a record can bring three pairs (garbage
       dropped before it, LOOP overwrites, a FLUSH loss: the last two only together in a scribbled buffer). */
    tracelog_event queue[7];
    uint32_t qhead, qlen;
    int batch;             /* a batch is open (see consume.c) */
    int batch_later;       /* it saw records newer than its watermark */
    uint64_t batch_used;   /* lanes in the batch */
    uint64_t batch_w;      /* its watermark (a stamp): it delivers up to there */
    uint64_t batch_pub;    /* the watermark published for it: batch_w, or later (tl_consumer_begin_batch) */
    uint64_t batch_head[TL_MAX_LANES + 1]; /* each lane's head when it started */
    uint64_t batch_seq;    /* batches opened so far */
    tl_rec head_rec[TL_MAX_LANES + 1];     /* each lane's oldest record in the batch (a checked copy) */
    uint64_t head_pos[TL_MAX_LANES + 1];   /* and its position */
    uint8_t heap[TL_MAX_LANES + 1];        /* lanes with a head record, a min-heap on its timestamp */
    uint32_t nheap;
    uint64_t waiting;      /* lanes whose oldest record is reserved but not committed yet */
    uint64_t last_ts;      /* stamp of the last event delivered */
    uint64_t first_ts;     /* when the consumer was made: no loss marker is stamped before */
    uint64_t floor_ts;     /* tl_consumer_set_floor: no event is stamped before either */
    uint64_t clamped;      /* events delivered with last_ts instead of an older own timestamp */
    uint64_t garbage;      /* times a lane held garbage (a shared buffer scribbled over): counted losses */
    uint64_t abandoned;    /* records whose producer died mid-record, skipped: counted losses */
    uint64_t garbage_lanes;                 /* lanes whose garbage is not marked yet */
    uint64_t garbage_ts[TL_MAX_LANES + 1];  /* and the stamp of the last event before it */
    uint64_t deferred[TL_MAX_LANES + 1];    /* position + 1 of the record each lane deferred last */
    uint64_t deferred_in[TL_MAX_LANES + 1]; /* and the batch that deferred it */
    uint64_t deferred_pub[TL_MAX_LANES + 1]; /* and that batch's published watermark (a stamp), */
    uint64_t deferred_at[TL_MAX_LANES + 1];  /* and when (CLOCK_MONOTONIC ns) */
    uint64_t stuck[TL_MAX_LANES + 1];       /* position + 1 of an uncommitted record each lane waits for */
    uint64_t stuck_in[TL_MAX_LANES + 1];    /* the batch that first waited for it */
    uint64_t stuck_since[TL_MAX_LANES + 1]; /* when a later batch still found it uncommitted (0: not yet) */
    int producers_gone;    /* tl_consumer_producers_gone was called */
    int (*gone)(void *);   /* tl_consumer_watch_producers: 1 once the producers' process has ended */
    void *gone_arg;
    int foreign;           /* tl_consumer_set_foreign: its producers are in other processes */
    uint64_t stall_batch;  /* the batch take_wait last waited in */
    uint64_t stall_ns;     /* and how long it has waited in it */
    uint64_t own;          /* the lanes it takes from (bit i: lane i; the system lane is bit nlanes): all by default */
    int external;          /* its batches are opened by tl_consumer_begin_batch */
    uint64_t delivered_here; /* and the events it delivered in the current one */
};

#endif
