/*
 * The in-memory trace stream: a multi-producer event buffer blind to what
 * it carries (format-spec does not cover it: it never reaches a file as
 * such). Its client (the POSIX layer) chooses the event ids, including those
 * of the few markers the stream makes itself (tl_stream_markers).
 *
 * Everything a stream holds lives in one mapping that can be shared:
 * MAP_SHARED anonymous memory today, so that a child made by fork() records
 * into the same stream, and later a named object drained by another
 * process. Hence no pointers inside, only offsets, and everything a consumer
 * needs (geometry, policy, marker ids, limits) is in the mapping's header.
 *
 * Producers write into lanes: one ring buffer per thread (threads beyond the
 * lane count share lanes), plus one system lane for the client's own
 * records. Recording an event is lock-free, allocation-free, makes no system
 * call, and is async-signal-safe: a producer reads the clock, reserves space
 * with one compare-and-swap on the lane head (retried with a fresh timestamp
 * if another producer or a signal handler reserved in between, so each lane
 * stays in timestamp order), writes the record and publishes it by storing
 * its commit word last.
 *
 * The consumer (one at a time: a reader, or the flusher of a stream with
 * log; or several over disjoint lanes sharing one watermark, see
 * tl_consumer_begin_batch) merges the lanes by timestamp in batches. A
 * batch starts by publishing a watermark W (the time now), then reading
 * every lane's head.
 * Records reserved before that read are waited for and delivered in
 * timestamp order up to W. A producer that reserves after it sees the
 * watermark (the reservation and the watermark store are both sequentially
 * consistent) and, if its timestamp is older than W, takes a fresh one, so
 * nothing older than W can appear once the batch is delivered: events come
 * out in generation order. Only a producer that was preempted between its
 * clock read and its reservation gets a later timestamp, the time it
 * actually reserved.
 *
 * A FLUSH producer that finds its lane full first waits for room, up to
 * wait_us (tl_stream_wait_room: it sleeps on the lane's room_seq futex,
 * which the consumer bumps whenever it gives room back and a producer
 * waits), so that a flusher slower than a burst of events makes the
 * producers wait rather than lose them (issue 11, "zero loss first";
 * LTTng's channels offer the same as a blocking timeout). A wait that
 * times out turns waiting off for the lane until the consumer moves its
 * tail again: a consumer that is gone costs one wait, not one per event.
 * The system lane never waits: the consumer records there itself.
 *
 * Losses are counted per lane and come out as markers: the consumer
 * delivers an OVERFLOW marker (timestamp of the first lost event) and a
 * RESUME marker (timestamp of the next event) where a LOOP stream
 * overwrote events or a FLUSH stream dropped them. An UNTIL_FULL stream
 * that fills up stops itself, records a STOP marker (data: the 32-bit value
 * 1) in the system lane, and starts again with a START marker (data: its
 * filter) once a consumer has emptied it.
 *
 * Waiting: readers sleep on a futex word in the mapping that producers bump
 * and wake only while a reader sleeps; a background drainer sleeps on
 * another that producers wake when a lane is a quarter full or events are
 * lost. Plain words, never a pthread object (a semaphore, a mutex): the
 * mapping may be shared with a process that writes any byte of it, and a
 * controller only loads, CASes and futex-waits with a timeout on what it
 * shares (docs/design/cross-process.md, 9.1).
 */
#ifndef TRACELOG_STREAM_H
#define TRACELOG_STREAM_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "stream/clock.h"
#include "tracelog/common.h"

#define TL_MAX_LANES 64
#define TL_FILTER_WORDS 17 /* the filter covers event ids below TL_FILTER_WORDS * 64 */
#define TL_FILTER_IDS (TL_FILTER_WORDS * 64u)
#define TL_REC_HEADER 48
#define TL_SYS_LANE_SIZE (256u << 10) /* a power of two, like every lane */
#define TL_MAX_DATA_LIMIT (64u << 10) /* largest max_data accepted */
#define TL_MAX_LANE_SIZE (1ull << 40) /* largest stream size accepted */
#define TL_MAX_SYS_DATA (4u << 10)    /* largest max_sys_data accepted */
#define TL_MAX_WAIT_US 1000000u       /* longest wait for room accepted: 1 s */

enum tl_state { TL_SUSPENDED = 0, TL_RUNNING = 1, TL_DEAD = 2 };
/* EVENT: an event. PAD: the rest of the lap is unused. LOSS: events were
   dropped here (FLUSH). SKIP: a hole of `size` bytes (an event the stream
   stopped under). */
enum tl_rec_kind { TL_KIND_EVENT = 1, TL_KIND_PAD = 2, TL_KIND_LOSS = 3, TL_KIND_SKIP = 4 };

/* The ids of the events the stream makes itself (see above). */
typedef struct tl_stream_markers {
    uint32_t overflow, resume; /* delivered around lost events */
    uint32_t stop, start;      /* UNTIL_FULL: recorded when it stops itself and when it starts again */
} tl_stream_markers;

typedef struct tl_stream_params {
    uint32_t policy;       /* TRACELOG_POLICY_LOOP, _UNTIL_FULL or _FLUSH */
    uint64_t stream_size;  /* bytes for event records (all user lanes) */
    uint32_t max_data;     /* largest event data in the user lanes (at most TL_MAX_DATA_LIMIT) */
    uint32_t max_sys_data; /* largest record data in the system lane (at most TL_MAX_SYS_DATA) */
    uint32_t nlanes;       /* 0: automatic; else rounded to a power of two (at most TL_MAX_LANES / 2) */
    uint32_t wait_us;      /* FLUSH: how long a producer waits for room before it loses an event (0: never; see below) */
    tl_stream_markers markers;
} tl_stream_params;

typedef struct tl_lane {
    /* Written by producers. */
    _Atomic uint64_t head;     /* bytes reserved so far */
    uint32_t index;
    _Atomic uint32_t room_waiters; /* FLUSH: producers waiting for room (tl_stream_wait_room) */
    _Atomic uint64_t lost;     /* FLUSH: events dropped and not yet marked in the ring */
    _Atomic uint64_t lost_first_ts;  /* a stamp, as every time in a lane */
    _Atomic uint64_t overruns; /* every event this lane lost, for any reason */
    _Atomic uint64_t tail_seen; /* a tail value producers saw: never ahead of tail */
    _Atomic uint32_t cpu;      /* FLUSH: 1 + the CPU its producer ran on when it last crossed an eighth of */
                               /* the lane (0: not known); a hint, where its flusher had best run */
    char pad0[64 - 52];
    /* Written by the consumer (and by LOOP producers that overwrite). */
    _Atomic uint64_t tail;
    _Atomic uint64_t dropped;  /* LOOP: events overwritten */
    _Atomic uint64_t dropped_acked;
    _Atomic uint64_t dropped_first_ts;
    _Atomic uint32_t room_seq; /* FLUSH: futex word of the producers waiting for room, bumped when it is made */
    _Atomic uint32_t wait_off; /* FLUSH: a wait for room timed out; no producer waits until the tail moves */
    char pad1[64 - 40];
} tl_lane;

/* The header of the mapping. Only the functions below touch it. */
typedef struct tl_stream {
    uint32_t magic;
    uint32_t policy;             /* stream full policy (TRACELOG_POLICY_*) */
    _Atomic uint32_t state;      /* enum tl_state */
    _Atomic uint32_t autostopped;
    _Atomic uint32_t full;
    uint32_t nlanes;             /* user lanes, a power of two; lane nlanes is the system lane */
    uint64_t lane_size;          /* bytes of each user lane: a power of two */
    uint32_t max_data;
    uint32_t max_sys_data;
    tl_stream_markers markers;
    tl_clock clock;              /* how its timestamps are made (clock.h), set at creation */
    _Atomic uint64_t used_lanes; /* bit i: lane i has been written */
    _Atomic uint32_t waiters;    /* readers sleeping on reader_seq */
    _Atomic uint32_t drainer_seq;/* futex word of the background drainer */
    _Atomic uint32_t drainer_sleeping;
    uint32_t wait_us;            /* tl_stream_params.wait_us (at most TL_MAX_WAIT_US) */
    _Atomic uint64_t filter[TL_FILTER_WORDS]; /* bit set: event type filtered out */
    char pad_watermark[64];
    _Atomic uint64_t watermark;  /* consumer: start of the current batch, a stamp (see above); own cache line */
    char pad_watermark_end[56];
    _Atomic uint64_t delivered;  /* consumer: events handed out so far; own cache line */
    char pad_delivered_end[56];
    uint64_t lanes_offset, data_offset, total_size;
    _Atomic uint32_t reader_seq; /* futex word of the sleeping readers: bumped by each wake-up */
} tl_stream;

/*
 * Record header inside a lane (host order, 8-aligned): 48 bytes, so that an
 * event of 16 data bytes takes one 64-byte line. The data length is not a
 * field of its own: the size is a multiple of 8, its low 3 bits hold the
 * length modulo 8 (tl_rec_data_len).
 */
typedef struct tl_rec {
    _Atomic uint64_t commit; /* reservation position + 1 once complete */
    uint32_t kind_size;      /* size in bytes | data length % 8 | kind << 28 */
    uint32_t id_trunc;       /* event id | truncation << 30 */
    uint64_t ts;             /* a stamp of the stream's clock (clock.h), converted to ns by the consumer */
    uint64_t tid;
    uint64_t addr;
    uint32_t pid;
    uint32_t ktid;           /* kernel thread id */
} tl_rec;

#define TL_REC_SIZE_MASK 0x0ffffff8u

static inline uint32_t tl_rec_kind(uint32_t kind_size) { return kind_size >> 28; }
static inline uint32_t tl_rec_bytes(uint32_t kind_size) { return kind_size & TL_REC_SIZE_MASK; }
/* The data length of a record of this kind_size; UINT32_MAX if its size cannot hold it. */
static inline uint32_t tl_rec_data_len(uint32_t kind_size)
{
    uint32_t size = tl_rec_bytes(kind_size), unused = (8 - (kind_size & 7)) & 7;
    return size >= TL_REC_HEADER + unused ? size - TL_REC_HEADER - unused : UINT32_MAX;
}

/*
 * One event is a tracelog_event (tracelog/common.h), the same struct the
 * writer takes and the reader hands out: what a producer gives
 * tl_stream_record (the stream takes the timestamp) and what the consumer
 * hands out. The stream does not interpret any field but the id (filter)
 * and the payload length.
 */

/* ---- life cycle ------------------------------------------------------------ */

/* Maps and initialises a stream (SUSPENDED). NULL with errno on failure. */
tl_stream *tl_stream_create(const tl_stream_params *p);
/* Bytes the mapping of a stream with these parameters takes (0: invalid parameters). */
uint64_t tl_stream_bytes(const tl_stream_params *p);
/*
 * Initialises a stream in zero-filled shared memory the caller mapped (a
 * named buffer another process maps too: docs/design/cross-process.md), of
 * `size` bytes, at least tl_stream_bytes(p). NULL with errno on failure.
 */
tl_stream *tl_stream_create_in(void *map, uint64_t size, const tl_stream_params *p);
/*
 * Is this mapping of `size` bytes a stream whose geometry fits in it? What
 * a traced process checks before recording into a buffer a controller made
 * (offsets are recomputed from the lane count, never taken on trust). 0 or EINVAL.
 */
int tl_stream_check(const void *map, uint64_t size);
/* Marks the stream dead: every producer mapping it, here or in another process, records nothing more. */
void tl_stream_end(tl_stream *s);
/* Ends the stream and releases its memory (see stream.c for why the address range stays reserved). */
void tl_stream_destroy(tl_stream *s);

/*
 * Where the lanes and their data start. Producers make every address from
 * these and from the geometry they read once per event, never from the
 * offset fields: a stream destroyed under a producer reads 0 in every field
 * (tl_stream_destroy), and an address made from a 0 would point into the
 * header, where a late write would garble the geometry for the next one.
 */
#define TL_LANES_OFFSET ((((uint64_t)sizeof(tl_stream)) + 63) & ~(uint64_t)63)
static inline uint64_t tl_stream_data_offset(uint32_t nlanes)
{
    return (TL_LANES_OFFSET + sizeof(tl_lane) * ((uint64_t)nlanes + 1) + 4095) & ~(uint64_t)4095;
}

/* Bytes one record with len data bytes takes in a lane. */
static inline uint32_t tl_rec_size(uint32_t len) { return (TL_REC_HEADER + len + 7u) & ~7u; }
/* What each user lane holds (a power of two, at least the stream size asked for). */
static inline uint64_t tl_stream_lane_size(const tl_stream *s) { return s->lane_size; }
static inline uint32_t tl_stream_lanes(const tl_stream *s) { return s->nlanes; }
static inline uint32_t tl_stream_max_data(const tl_stream *s) { return s->max_data; }

/* The stream's stamp now (clock.h: a record's time, in the clock's raw count). Async-signal-safe. */
static inline uint64_t tl_stream_stamp(const tl_stream *s) { return tl_clock_stamp(&s->clock); }

/* ---- control --------------------------------------------------------------- */

typedef struct tl_consumer tl_consumer; /* below */

/*
 * SUSPENDED -> RUNNING, unless the stream stopped itself (UNTIL_FULL, full:
 * it starts again once drained). marker (may be NULL) is recorded in the
 * system lane first, so that it comes before the events it starts: by
 * tl_consumer_record_system on `via`, a consumer of s, when the mapping is
 * shared with a process that may change its geometry; else (NULL) by
 * tl_stream_record_system. 1 if the stream started. Callers serialise
 * start, stop and filter changes.
 */
int tl_stream_start(tl_stream *s, const tracelog_event *marker, tl_consumer *via);
/* RUNNING -> SUSPENDED; marker (may be NULL) recorded after, as above. 1 if the stream stopped. */
int tl_stream_stop(tl_stream *s, const tracelog_event *marker, tl_consumer *via);
static inline int tl_stream_running(tl_stream *s) { return atomic_load(&s->state) == TL_RUNNING; }
/* A lane filled up since the stream was last emptied (UNTIL_FULL and FLUSH: events were lost; LOOP: it wraps). */
static inline int tl_stream_full(tl_stream *s) { return atomic_load(&s->full) != 0; }
void tl_stream_get_filter(tl_stream *s, uint64_t out[TL_FILTER_WORDS]);
void tl_stream_set_filter(tl_stream *s, const uint64_t in[TL_FILTER_WORDS]);

/* Events currently held in the lanes (for statistics; racy by nature: an upper bound). */
uint64_t tl_stream_buffered(tl_stream *s);
/* Sum of all lanes' overrun counters. */
uint64_t tl_stream_overruns(tl_stream *s);
/* Events the consumer has handed out. */
static inline uint64_t tl_stream_delivered(tl_stream *s) { return atomic_load(&s->delivered); }

/* ---- producers (async-signal-safe) ------------------------------------------ */

/* The user lanes, a power of two; read it once per event: a stream destroyed under a producer reads 0. */
static inline uint32_t tl_stream_user_lanes(const tl_stream *s) { return s->nlanes; }

typedef enum tl_admit { TL_ADMIT_RECORD, TL_ADMIT_IGNORE, TL_ADMIT_LOSE } tl_admit;

/*
 * Whether a user event with this id (below TL_FILTER_IDS) is to be recorded
 * now: ignored while the stream is stopped or filters it out; lost (to be
 * counted with tl_stream_count_lost) while an UNTIL_FULL stream is stopped
 * because it is full.
 */
static inline tl_admit tl_stream_admit(tl_stream *s, uint32_t event_id)
{
    if (atomic_load_explicit(&s->state, memory_order_relaxed) != TL_RUNNING)
        return atomic_load_explicit(&s->autostopped, memory_order_relaxed) ? TL_ADMIT_LOSE : TL_ADMIT_IGNORE;
    uint64_t word = atomic_load_explicit(&s->filter[event_id / 64], memory_order_relaxed);
    return (word >> (event_id % 64)) & 1 ? TL_ADMIT_IGNORE : TL_ADMIT_RECORD;
}

void tl_stream_count_lost(tl_stream *s, uint32_t lane);

/* Events go into user lanes with tl_stream_record (produce.h, inline: the fast path). */

/* Records ev into the system lane, which the client alone writes (len at most max_sys_data): 1, or 0 if lost. */
int tl_stream_record_system(tl_stream *s, const tracelog_event *ev);

/* ---- waiting ----------------------------------------------------------------- */

/*
 * FLUSH, lane l full: waits until need bytes fit (1), or up to the stream's
 * wait_us, or while it is not running (0: the event is lost). Async-signal-
 * safe: futex and clock system calls, no lock.
 */
int tl_stream_wait_room(tl_stream *s, tl_lane *l, uint64_t need, uint64_t cap);
/*
 * The calling thread drains streams (on: 1) or stops doing so (0); calls
 * nest. A draining thread never waits for room: only it, or a thread
 * waiting for it, could make that room (a signal handler recording while
 * its thread holds a log's lock). Async-signal-safe; thread-local.
 */
void tl_stream_thread_drains(int on);
/* The consumer moved lane l's tail (cap bytes): wakes its waiting producers once there is room enough, and lets them wait again. */
void tl_stream_room_made(tl_lane *l, uint64_t cap);

/*
 * A reader that found nothing to read: seq = tl_stream_wait_begin(), look
 * once more (an event recorded in between is seen then, or has bumped the
 * word past seq), tl_stream_sleep(seq) if still nothing, tl_stream_wait_end().
 */
uint32_t tl_stream_wait_begin(tl_stream *s);
/*
 * Sleeps until a wake-up after seq, `until` (CLOCK_REALTIME) or a signal:
 * 0, or EINTR (the kernel restarts the wait after a handler installed with
 * SA_RESTART: posix/read.c detects handlers by itself).
 */
int tl_stream_sleep(tl_stream *s, uint32_t seq, const struct timespec *until);
void tl_stream_wait_end(tl_stream *s);
/* Wakes a sleeping reader (shutdown: it looks at its handle again). */
void tl_stream_wake_readers(tl_stream *s);

/* A FLUSH producer wakes the drainer once its lane is 1/TL_DRAINER_WAKE_PART full (produce.h). */
#define TL_DRAINER_WAKE_PART 4

/*
 * The background drainer sleeps at most ns, less when producers need it
 * (see above). With its consumer c (or NULL), not at all when a lane is a
 * quarter full already: a producer that got there before the drainer said
 * it sleeps woke no one. 0 if it slept the whole ns, 1 if it was woken.
 */
int tl_stream_drainer_sleep(tl_stream *s, uint64_t ns, const tl_consumer *c);
void tl_stream_drainer_wake(tl_stream *s);

/* ---- consumer ------------------------------------------------------------------ */

/*
 * The consumer of one process, on that process's mapping of the stream: its
 * state is private; what it changes in the mapping (lane tails, acknowledged
 * losses, the full flag, the delivered count, the restart of an UNTIL_FULL
 * stream) is all in the mapping, so that another process can take over.
 * The geometry is read once, at init, and only that private copy is used
 * afterwards (a process sharing the mapping may change the header).
 * Not thread-safe: one thread at a time.
 *
 * Cheap per event (issue 11): in a FLUSH or UNTIL_FULL stream only the
 * consumer moves a lane's tail, so it keeps its read position private and
 * stores the tail once per TL_CONSUMER_RELEASE bytes read (or an eighth of
 * a smaller lane) and whenever it stops (empty, waiting), not once per
 * event; an event's data is handed out where it lies in the lane, its room
 * released only after the next call.
 * A LOOP producer may move the tail itself (overwriting), so there the
 * consumer still copies each event out and moves the tail with a CAS. The
 * lanes of a batch are merged with a heap of their oldest records: one
 * look at the lane an event came from, not at every lane, per event.
 */
#define TL_CONSUMER_RELEASE (64u << 10)
typedef struct tl_consumer {
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
    uint64_t stall_batch;  /* the batch take_wait last waited in */
    uint64_t stall_ns;     /* and how long it has waited in it */
    uint64_t own;          /* the lanes it takes from (bit i: lane i; the system lane is bit nlanes): all by default */
    int external;          /* its batches are opened by tl_consumer_begin_batch */
    uint64_t delivered_here; /* and the events it delivered in the current one */
} tl_consumer;

int tl_consumer_init(tl_consumer *c, tl_stream *s); /* 0, or -1 (out of memory) */
/* The time now in ns on the scale of the events' timestamps, by the consumer's own copy of the stream's clock. */
static inline uint64_t tl_consumer_now(const tl_consumer *c) { return tl_clock_now_ordered(&c->clock); }
/*
 * The consumer of a stream another process writes into, mapped at map
 * (size bytes): its geometry is checked first (tl_stream_check), and the
 * consumer uses only its own copy of it afterwards. Whatever the other
 * process writes in the lanes, the consumer stays inside the mapping and
 * ends: a record that cannot be one (bad kind, size, length, alignment, a
 * timestamp after the time it was seen) is dropped with the rest of what
 * its lane cannot parse, counted in the lane's overruns and in `garbage`,
 * and marked by OVERFLOW and RESUME. 0, EINVAL or ENOMEM.
 */
int tl_consumer_init_shared(tl_consumer *c, void *map, uint64_t size);
/*
 * Another consumer of model's stream, with model's copy of the geometry and
 * lanes and nothing read from the mapping: its positions are taken with
 * tl_consumer_resync before it takes. -1 for a LOOP stream's consumer.
 */
int tl_consumer_init_like(tl_consumer *c, const tl_consumer *model);
void tl_consumer_free(tl_consumer *c);

typedef enum tl_take { TL_TAKE_EVENT, TL_TAKE_EMPTY, TL_TAKE_WAIT } tl_take;

/*
 * Takes the next event in generation order. TL_TAKE_WAIT: a producer is
 * mid-record in another lane; retry shortly (the caller bounds the wait and
 * then passes force=1 to stop waiting for a producer that died mid-record).
 * ev->payload stays valid until the next call.
 */
tl_take tl_consumer_take(tl_consumer *c, tracelog_event *ev, int force);

/*
 * Like tl_consumer_take(), waiting (spinning, then yielding) while a
 * producer is mid-record; after TL_PRODUCER_STALL_NS of waiting in a
 * batch it stops waiting for that producer, which must have died mid-record (a killed child of an
 * inherited stream). Never returns TL_TAKE_WAIT.
 */
#define TL_PRODUCER_STALL_NS 200000000ull
tl_take tl_consumer_take_wait(tl_consumer *c, tracelog_event *ev);
/*
 * take_wait asks gone(arg) (at most once a millisecond, only while it
 * waits for a producer mid-record) whether the producers' process has
 * ended; once it says 1, as after tl_consumer_producers_gone. Consumers
 * made by tl_consumer_init_like inherit it; gone must be thread-safe.
 */
void tl_consumer_watch_producers(tl_consumer *c, int (*gone)(void *), void *arg);
/*
 * The consumer was made before anyone could record into the stream (a
 * controller's, made before the traced process learns the buffer's name):
 * an event stamped before then has a scribbled stamp, and is raised to the
 * consumer's birth as an event stamped before the last one is raised to it.
 */
void tl_consumer_set_floor(tl_consumer *c);

/*
 * A record reserved and never committed while its lane goes on (its
 * producer was killed mid-record, or the process sharing the buffer died):
 * once a later batch still finds it uncommitted TL_PRODUCER_DEAD_NS after it
 * first did, the consumer skips it as a counted loss (the lane's overruns,
 * `abandoned`, OVERFLOW and RESUME around it) and goes on with the lane.
 */
#define TL_PRODUCER_DEAD_NS 1000000000ull

/*
 * How far a record's timestamp may lie after a watermark taken later on
 * another CPU: the skew of their clocks (defer() in consume.c). A record
 * further ahead of a later batch's watermark, or still ahead once the
 * watermarks moved by that much since it was first deferred (or a second
 * passed: a clock in a scribbled header may not advance), is garbage.
 */
#define TL_CLOCK_SKEW_NS 1000000ull

/*
 * The client knows that nobody records into the user lanes any more (the
 * process sharing the buffer has ended and no other maps it): from now on a
 * record found uncommitted there is skipped at once as a counted loss (as
 * above, with what follows it up to the lane's head when nothing says where
 * it ends), without waiting TL_PRODUCER_STALL_NS or TL_PRODUCER_DEAD_NS.
 * The system lane, which the client itself writes, keeps the waits.
 */
void tl_consumer_producers_gone(tl_consumer *c);

/*
 * Records ev into the system lane with the consumer's own copy of the
 * geometry (what the consumer side records: START, errors, flush markers;
 * a controller's start, stop and filter markers), never the mapping's,
 * which a process sharing it may have changed. 1, or 0 if there was no room
 * (counted in the system lane's overruns). Safe alongside the consumer's
 * thread: it reads only the geometry copy and reserves like a producer.
 */
int tl_consumer_record_system(tl_consumer *c, const tracelog_event *ev);

/*
 * Several consumers of one stream at once (a flusher per group of lanes, each
 * building its own chunks of a merge set: format-spec 6.10). Each takes only
 * the lanes of its mask (tl_consumer_set_lanes, set before it takes). A
 * cycle: one of them publishes a watermark (tl_consumer_publish_watermark),
 * then each opens its batch with that same watermark
 * (tl_consumer_begin_batch) and takes until TL_TAKE_EMPTY: the end of its
 * batch, its lanes' room released. Then every event stamped below the
 * watermark is out, of every group: a time window. `batch_later` says
 * whether newer records were seen (a next cycle has work). A consumer that
 * takes lanes another one took from first adopts their tails
 * (tl_consumer_resync), with nothing held and no batch open, which is the
 * case after TL_TAKE_EMPTY; resync also ends the external batches.
 */
uint64_t tl_consumer_publish_watermark(tl_consumer *c);
/*
 * w: the stamp its batch delivers up to, pub the watermark published; w
 * may be lower (tl_consumer_bound), and then the records between are left
 * for a later batch rather than taken for a scribbled buffer's garbage.
 */
void tl_consumer_begin_batch(tl_consumer *c, uint64_t w, uint64_t pub);
/*
 * Lowers *w so that a batch up to *w takes about `budget` bytes at most
 * from each of its lanes: to the stamp of the first record past `budget`
 * bytes in each lane that holds more. 0 if such a lane showed no record
 * there (the caller cannot bound the batch).
 */
int tl_consumer_bound(const tl_consumer *c, uint64_t budget, uint64_t *w);
void tl_consumer_set_lanes(tl_consumer *c, uint64_t own);
void tl_consumer_resync(tl_consumer *c);
/*
 * Like resync, from the positions of `from` (which took last, and released
 * its room) for the lanes both take, not from the lanes' tails: the tails
 * lie in the buffer, which another process may have scribbled over since.
 * No buffer access.
 */
void tl_consumer_adopt(tl_consumer *c, const tl_consumer *from);
/*
 * Stops taking, so that other consumers may take its lanes: the room of
 * every event it handed out goes back to the producers, and its open batch
 * is dropped (what it had not handed out stays in the lanes for the next
 * consumer). Only with nothing queued (tl_consumer_queued).
 */
void tl_consumer_yield(tl_consumer *c);
int tl_consumer_queued(const tl_consumer *c);
/*
 * Bytes reserved and not yet released in its lanes: after a watermark is
 * published, what a batch can hold at most. *cpu: the fullest lane's CPU
 * hint (tl_lane.cpu: 1 + a CPU, or 0); *lanes is raised by the lanes that
 * hold some.
 */
uint64_t tl_consumer_pending_bytes(const tl_consumer *c, uint32_t *cpu, uint32_t *lanes);

/* How full the fullest user lane is, in 1/256ths of its size (the read position counts, not the tail). */
uint32_t tl_consumer_backlog(const tl_consumer *c);
/* 1 if a lane (the system lane too) is 1/TL_DRAINER_WAKE_PART full or more: what wakes the drainer. */
int tl_consumer_quarter_full(const tl_consumer *c);

/*
 * Sum of all lanes' overrun counters, over the consumer's own lane count.
 * Like the next two, it reads only the geometry copied at init and the
 * lanes' atomic words: safe from any thread, alongside the consumer's.
 */
uint64_t tl_consumer_overruns(const tl_consumer *c);
/* A lane's overrun counter above this is no count (78 hours of one loss a nanosecond): a scribbled word, left out. */
#define TL_OVERRUNS_PLAUSIBLE (1ull << 48)
/* Events held in the lanes (tl_stream_buffered over the consumer's lane count: an upper bound). */
uint64_t tl_consumer_buffered(const tl_consumer *c);
/* The user lanes, as the consumer's geometry says. */
static inline uint32_t tl_consumer_lanes(const tl_consumer *c) { return c->nlanes; }
/* Most records the consumer's lanes hold at once (its private geometry): a bound on any one drain's work. */
uint64_t tl_consumer_capacity_records(const tl_consumer *c);

/*
 * At the end: FLUSH losses are marked by the next event recorded in their
 * lane; for a lane whose producer stopped after losing events, this hands
 * out an OVERFLOW marker with the first lost event's timestamp (no RESUME
 * follows). 1 while there is one, then 0.
 */
int tl_consumer_take_unmarked_loss(tl_consumer *c, tracelog_event *ev);

/* Forgets every recorded event (posix_trace_clear); producers may run concurrently. */
void tl_consumer_clear(tl_consumer *c);

#endif
