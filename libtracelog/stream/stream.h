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

typedef struct tl_stream tl_stream; /* the mapping's header: stream/layout.h, inside stream/ */
typedef struct tl_lane tl_lane;
typedef struct tl_consumer tl_consumer; /* stream/consumer.h */

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

/*
 * One event is a tracelog_event (tracelog/common.h), the same struct the
 * writer takes and the reader hands out: what a producer gives
 * tl_stream_record (the stream takes the timestamp) and what the consumer
 * hands out. The stream does not interpret any field but the id (filter)
 * and the payload length.
 */

/* Bytes one record with len data bytes takes in a lane. */
static inline uint32_t tl_rec_size(uint32_t len) { return (TL_REC_HEADER + len + 7u) & ~7u; }
/* What each user lane holds (a power of two, at least the stream size asked for). */
uint64_t tl_stream_lane_size(const tl_stream *s);
uint32_t tl_stream_lanes(const tl_stream *s);
/* The stream's stamp now (clock.h: a record's time, in the clock's raw count). Async-signal-safe. */
uint64_t tl_stream_stamp(const tl_stream *s);
/* 1 if a producer wrote one of the user lanes (bit i of used_lanes, i below the lane count). */
int tl_stream_user_lanes_written(const tl_stream *s);

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
/*
 * Ends the stream and releases its memory; its address range stays mapped
 * (zero pages, no memory committed) for a producer that may still be
 * inside it (see stream.c). size: its mapping's, as its creator knows it
 * (tl_stream_bytes, or the buffer's size), never the header's: a process
 * sharing the stream can write that.
 */
void tl_stream_destroy(tl_stream *s, uint64_t size);

/* ---- control --------------------------------------------------------------- */

/*
 * SUSPENDED -> RUNNING, unless the stream stopped itself (UNTIL_FULL, full:
 * it starts again once drained). marker (may be NULL) is recorded in the
 * system lane first (tl_stream_record_system), so that it comes before the
 * events it starts. 1 if the stream started. Callers serialise start, stop
 * and filter changes. For a stream whose mapping another process may
 * change, tl_consumer_start records the marker through a consumer's
 * checked geometry instead.
 */
int tl_stream_start(tl_stream *s, const tracelog_event *marker);
/* RUNNING -> SUSPENDED; marker (may be NULL) recorded after, as above. 1 if the stream stopped. */
int tl_stream_stop(tl_stream *s, const tracelog_event *marker);
/* The state changes of start and stop alone, for tl_consumer_start/stop. */
int tl_stream_may_start(tl_stream *s);
void tl_stream_set_running(tl_stream *s);
/* RUNNING -> SUSPENDED, and every clock read after it runs after the change is visible (stream.c). */
int tl_stream_suspend(tl_stream *s);
int tl_stream_running(tl_stream *s);
/* A lane filled up since the stream was last emptied (UNTIL_FULL and FLUSH: events were lost; LOOP: it wraps). */
int tl_stream_full(tl_stream *s);
void tl_stream_get_filter(tl_stream *s, uint64_t out[TL_FILTER_WORDS]);
void tl_stream_set_filter(tl_stream *s, const uint64_t in[TL_FILTER_WORDS]);

/* Events currently held in the lanes (for statistics; racy by nature: an upper bound). */
uint64_t tl_stream_buffered(tl_stream *s);
/* Sum of all lanes' overrun counters. */
uint64_t tl_stream_overruns(tl_stream *s);
/* Events the consumer has handed out. */
uint64_t tl_stream_delivered(tl_stream *s);

/* ---- producers (async-signal-safe) ------------------------------------------ */

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

/* Wakes the background drainer (tl_consumer_drainer_sleep). */
void tl_stream_drainer_wake(tl_stream *s);


#endif
