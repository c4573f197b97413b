/*
 * The in-memory trace stream (format-spec does not cover it: it never
 * reaches a file as such). Everything a stream holds lives in one mapping
 * that can be shared: MAP_SHARED anonymous memory today, so that a child made
 * by fork() records into the same stream, and later a named shared-memory
 * object flushed by another process. Hence no pointers inside: only offsets.
 *
 * Producers (posix_trace_event) write into lanes: one ring buffer per thread
 * (threads beyond the lane count share lanes). Recording an event is
 * lock-free, allocation-free, makes no system call, and is async-signal-safe:
 * a producer reads the clock, reserves space with one compare-and-swap on the
 * lane head (retried with a fresh timestamp if another producer or a signal
 * handler reserved in between, so each lane stays in timestamp order), writes
 * the record and publishes it by storing its commit word last.
 *
 * The consumer (a reader thread, or the flusher of a stream with log) merges
 * the lanes by timestamp in batches. A batch starts by publishing a
 * watermark W (the time now), then reading every lane's head. Records
 * reserved before that read are waited for and delivered in timestamp order
 * up to W. A producer that reserves after it sees the watermark (the
 * reservation and the watermark store are both sequentially consistent) and,
 * if its timestamp is older than W, takes a fresh one, so nothing older than
 * W can appear once the batch is delivered: events come out in generation
 * order. Only a producer that was preempted between its clock read and its
 * reservation gets a later timestamp, the time it actually reserved.
 */
#ifndef TRACELOG_STREAM_H
#define TRACELOG_STREAM_H

#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TL_MAX_LANES 64
#define TL_SET_WORDS 17 /* must match trace_event_set_t */
#define TL_REC_HEADER 56
#define TL_SYS_LANE_SIZE (256u << 10) /* a power of two, like every lane */
#define TL_MAX_DATA_LIMIT (64u << 10) /* largest max-data-size accepted */

enum tl_state { TL_SUSPENDED = 0, TL_RUNNING = 1, TL_DEAD = 2 };
/* EVENT: an event. PAD: the rest of the lap is unused. LOSS: events were
   dropped here (FLUSH). SKIP: a hole of `size` bytes (an event the stream
   stopped under). */
enum tl_rec_kind { TL_KIND_EVENT = 1, TL_KIND_PAD = 2, TL_KIND_LOSS = 3, TL_KIND_SKIP = 4 };

typedef struct tl_lane {
    /* Written by producers. */
    _Atomic uint64_t head;     /* bytes reserved so far */
    uint32_t index;
    uint32_t pad_;
    _Atomic uint64_t lost;     /* FLUSH: events dropped and not yet marked in the ring */
    _Atomic uint64_t lost_first_ts;
    _Atomic uint64_t overruns; /* every event this lane lost, for any reason */
    _Atomic uint64_t tail_seen; /* a tail value producers saw: never ahead of tail */
    char pad0[64 - 48];
    /* Written by the consumer (and by LOOP producers that overwrite). */
    _Atomic uint64_t tail;
    _Atomic uint64_t dropped;  /* LOOP: events overwritten */
    _Atomic uint64_t dropped_acked;
    _Atomic uint64_t dropped_first_ts;
    char pad1[64 - 32];
} tl_lane;

typedef struct tl_shm {
    uint32_t magic;
    uint32_t policy;             /* stream full policy (TRACELOG_POLICY_*) */
    _Atomic uint32_t state;      /* enum tl_state */
    _Atomic uint32_t autostopped;
    _Atomic uint32_t full;
    uint32_t nlanes;             /* user lanes, a power of two; lane nlanes is the system lane */
    uint64_t lane_size;          /* bytes of each user lane: a power of two */
    uint32_t max_data;
    uint32_t creator_pid;
    int64_t realtime_offset;     /* CLOCK_REALTIME - CLOCK_MONOTONIC at creation, ns */
    _Atomic uint64_t used_lanes; /* bit i: lane i has been written */
    _Atomic uint32_t waiters;    /* readers sleeping on reader_sem */
    _Atomic uint32_t flusher_seq;/* futex word of the flusher */
    _Atomic uint32_t flusher_sleeping;
    _Atomic uint64_t filter[TL_SET_WORDS]; /* bit set: event type filtered out */
    char pad_watermark[64];
    _Atomic uint64_t watermark;  /* consumer: start of the current batch (see above); own cache line */
    char pad_watermark_end[56];
    uint64_t lanes_offset, data_offset, total_size;
    /* A semaphore, not a futex: sem_wait fails with EINTR on a signal even with
       SA_RESTART, which blocking POSIX readers must report. */
    sem_t reader_sem;
} tl_shm;

/* Record header inside a lane (all little-endian host order, 8-aligned). */
typedef struct tl_rec {
    _Atomic uint64_t commit; /* reservation position + 1 once complete */
    uint32_t kind_size;      /* size in bytes | kind << 28 */
    uint32_t event_id;
    uint64_t ts;
    uint32_t pid;
    uint32_t len_trunc;      /* data bytes | truncation << 30 */
    uint64_t tid;
    uint64_t addr;
    uint32_t ktid;           /* kernel thread id */
    uint32_t pad_;
} tl_rec;

/* One event as the consumer hands it out (data copied into the consumer). */
typedef struct tl_out_event {
    uint32_t event_id;
    uint32_t pid;
    uint32_t ktid;
    uint64_t ts;
    uint64_t tid, addr;
    uint32_t len, truncation;
    const uint8_t *data;
} tl_out_event;

typedef struct tl_stream_params {
    uint32_t policy;      /* LOOP, UNTIL_FULL or FLUSH */
    uint64_t stream_size; /* bytes for event records (all user lanes) */
    uint32_t max_data;
    uint32_t nlanes;      /* 0: automatic; else rounded to a power of two (at most TL_MAX_LANES / 2) */
} tl_stream_params;

/* Maps and initialises a stream (SUSPENDED). NULL with errno on failure. */
tl_shm *tl_stream_create(const tl_stream_params *p);
/* Marks the stream dead and releases its memory (see stream.c for why the address range stays reserved). */
void tl_stream_destroy(tl_shm *s);
/* Forgets every recorded event (posix_trace_clear); producers may run concurrently. */
void tl_stream_clear(tl_shm *s);

static inline tl_lane *tl_lanes(tl_shm *s) { return (tl_lane *)((char *)s + s->lanes_offset); }
static inline uint8_t *tl_lane_data(tl_shm *s, uint32_t i)
{
    return (uint8_t *)s + s->data_offset + (uint64_t)i * s->lane_size;
}
static inline uint64_t tl_lane_cap(const tl_shm *s, uint32_t i)
{
    return i == s->nlanes ? TL_SYS_LANE_SIZE : s->lane_size;
}

/* Bytes one record with len data bytes takes in a lane. */
static inline uint32_t tl_rec_size(uint32_t len) { return (TL_REC_HEADER + len + 7u) & ~7u; }

/* Nanoseconds of CLOCK_MONOTONIC. Async-signal-safe (vDSO). */
uint64_t tl_clock_mono_ns(void);
/* The stream's time now, on the scale of its events' timestamps. Async-signal-safe. */
static inline uint64_t tl_stream_now(const tl_shm *s) { return tl_clock_mono_ns() + (uint64_t)s->realtime_offset; }

/*
 * Records one event into lane `lane` of s (user lanes) or the system lane.
 * Returns 1 if recorded, 0 if lost (counted). Async-signal-safe.
 */
int tl_stream_record(tl_shm *s, uint32_t lane, uint32_t event_id, const void *data,
                           uint32_t len, uint32_t truncation, uint64_t addr, uint64_t tid,
                           uint32_t pid, uint32_t ktid);

/* ---- consumer ------------------------------------------------------------ */

typedef struct tl_consumer {
    tl_shm *s;
    uint8_t *buf;          /* copy of the delivered event's data */
    size_t buf_cap;
    tl_out_event queue[3]; /* synthesized OVERFLOW/RESUME, then the event */
    uint32_t qhead, qlen;
    uint64_t delivered;
    int batch;             /* a batch is open (see consume.c) */
    int batch_later;       /* it saw records newer than its watermark */
    uint64_t batch_used;   /* lanes in the batch */
    uint64_t batch_w;      /* its watermark */
    uint64_t batch_head[TL_MAX_LANES]; /* each lane's head when it started */
    uint64_t last_ts;      /* timestamp of the last event delivered */
    uint64_t clamped;      /* events delivered with last_ts instead of an older own timestamp */
} tl_consumer;

int tl_consumer_init(tl_consumer *c, tl_shm *s);
void tl_consumer_free(tl_consumer *c);

typedef enum tl_take { TL_TAKE_EVENT, TL_TAKE_EMPTY, TL_TAKE_WAIT } tl_take;

/*
 * Takes the next event in generation order. TL_TAKE_WAIT: a producer is
 * mid-record in another lane; retry shortly (the caller bounds the wait and
 * then passes force=1 to stop waiting for a producer that died mid-record).
 * ev->data stays valid until the next call.
 */
tl_take tl_consumer_take(tl_consumer *c, tl_out_event *ev, int force);

/*
 * Like tl_consumer_take(), waiting (spinning, then yielding) while a
 * producer is mid-record; after TL_PRODUCER_STALL_NS it stops waiting for
 * that producer, which must have died mid-record (a killed child of an
 * inherited stream). Never returns TL_TAKE_WAIT.
 */
#define TL_PRODUCER_STALL_NS 200000000ull
tl_take tl_consumer_take_wait(tl_consumer *c, tl_out_event *ev);

/* Events currently held in the lanes (for statistics; racy by nature). */
uint64_t tl_stream_buffered(tl_shm *s);
/* Sum of all lanes' overrun counters. */
uint64_t tl_stream_overruns(tl_shm *s);

#endif
