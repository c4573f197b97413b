/*
 * The stream's mapping as its producers and its consumer see it: the
 * header, the lanes, the records (stream.h says what each part is for).
 * Only stream/ includes this (and white-box tests): everyone else holds a
 * tl_stream and calls stream.h's functions.
 */
#ifndef TRACELOG_STREAM_LAYOUT_H
#define TRACELOG_STREAM_LAYOUT_H

#include "stream/stream.h"

enum tl_state { TL_SUSPENDED = 0, TL_RUNNING = 1, TL_DEAD = 2 };
/* EVENT: an event. PAD: the rest of the lap is unused. LOSS: events were
   dropped here (FLUSH). SKIP: a hole of `size` bytes (an event the stream
   stopped under). */
enum tl_rec_kind { TL_KIND_EVENT = 1, TL_KIND_PAD = 2, TL_KIND_LOSS = 3, TL_KIND_SKIP = 4 };

struct tl_lane {
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
};

/* The header of the mapping. Only the functions below touch it. */
struct tl_stream {
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
};

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

#endif
