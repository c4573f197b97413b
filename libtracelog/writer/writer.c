/*
 * The log writer: metadata and event types first, then chunks, status
 * records and, at close, the trailer (format-spec/ptl-format.md).
 * Sequential logs (APPEND, UNTIL_FULL) only ever append. LOOP logs keep the
 * metadata and event types in a durable region and the chunks in a ring of
 * fixed-size segments, overwriting the oldest segment when the ring is full.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/array.h"
#include "common/bytes.h"
#include "common/error.h"
#include "format/chunk.h"
#include "format/event_types.h"
#include "format/format.h"
#include "format/meta.h"
#include "format/schema.h"
#include "format/segment.h"
#include "format/threads.h"
#include "format/trailer.h"
#include "writer/io.h"

struct tracelog_writer {
    tl_io io;
    int fd; /* io.ctx points here for descriptor-backed writers */
    tracelog_writer_options opt;
    tracelog_metadata meta;
    tl_file_header hdr;
    uint32_t salt32;
    uint64_t seq;  /* sequence number of the next block */
    uint64_t pos;  /* next write offset (sequential layout) */
    uint32_t chunk_limit; /* uncompressed bytes per chunk */

    tracelog_event_types types;
    uint32_t *defined;    /* the ids of types, in definition order */
    size_t ndefined, defined_cap, types_written;

    tl_thread_map threads;   /* (pid, tid) -> its current definition (format 1.1) */
    tl_thread_names names;   /* of the definitions (format 1.2) */
    tl_thread_def *pending;  /* definitions not written yet, in order */
    size_t npending, pending_cap;
    tl_thread_def last_thread; /* of the last event: most events skip the lookup */
    uint64_t thread_defs;      /* definitions made (at most TL_LOG_THREADS_MAX) */
    uint64_t *dropped_seen;    /* past them: the threads counted lately (drop_thread) */
    tl_thread_namer namer;     /* names a new thread (tl_writer_set_thread_namer), or NULL */
    void *namer_ctx;
    tl_type_definer definer; /* defines new types before a chunk (tl_writer_set_type_definer), or NULL */
    void *definer_ctx;
    size_t rename_at;          /* where the next tl_writer_rename_threads pass starts in the map */

    tl_chunk_builder chunk;
    tl_buf payload, block;
    ZSTD_CCtx *cctx;

    tracelog_log_status status;
    int status_dirty;
    uint64_t chunk_bytes; /* bytes of chunk blocks written (UNTIL_FULL budget) */

    /* Ring layout (LOOP). */
    uint64_t durable_pos;
    uint32_t segment;     /* segment being written */
    uint64_t seg_pos;     /* write offset inside it; 0: its SEGMENT block is not written yet */
    uint64_t lap;         /* passes over the ring completed */
    uint64_t *seg_events; /* events held by each segment */
    uint32_t *seg_extent; /* bytes of each segment written by earlier laps */

    int raw;              /* store the next chunks uncompressed (tl_writer_set_raw) */
    int final_written;    /* UNTIL_FULL: the one event allowed past the budget is written */
    int full_reported;    /* UNTIL_FULL: the status block saying so is written */
    tracelog_error error; /* code != TRACELOG_OK: poisoned */
};

void tracelog_writer_options_init(tracelog_writer_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->log_policy = TRACELOG_POLICY_APPEND;
    opt->log_max_size = 64u << 20;
    opt->chunk_size = 128u << 10;
    opt->compression_level = 1;
}

static tracelog_status poison(tracelog_writer *w, tracelog_status code, int sys_errno, uint64_t off,
                              const char *what)
{
    tl_fail(&w->error, code, sys_errno, off, "%s: %s", what,
                  code == TRACELOG_E_IO ? strerror(sys_errno) : tracelog_strerror(code));
    return code;
}

static tracelog_status io_write(tracelog_writer *w, const void *buf, size_t n, uint64_t off)
{
    int e = w->io.write(w->io.ctx, buf, n, w->io.seekable ? off : UINT64_MAX);
    return e ? poison(w, TRACELOG_E_IO, e, off, "write failed") : TRACELOG_OK;
}

/* The header of the next block: its type, sequence number, payload length and checksum (len <= UINT32_MAX - 8). */
static void block_head(const tracelog_writer *w, uint16_t type, const uint8_t *payload, size_t len,
                       uint8_t out[TL_BLOCK_HEADER_SIZE])
{
    tl_block_header h = {type, 0, w->seq, (uint32_t)len, tl_block_payload_crc(w->salt32, payload, len)};
    tl_block_header_encode(&h, w->salt32, out);
}

/*
 * Writes one block (header, payload, zero padding) at off, followed when
 * marked by its END marker (spec 7.5): a block header of type END with the
 * block's seq, in the same write, so that a reader can tell the ring's
 * newest block from one whose write was torn. With the channel's writev
 * when it has one, so that the payload (a whole compressed chunk) goes out
 * without being copied; else framed into w->block first.
 */
static tracelog_status put_block(tracelog_writer *w, uint16_t type, const uint8_t *payload, size_t len, uint64_t off,
                                 int marked)
{
    if (len > UINT32_MAX - 8)
        return TRACELOG_E_LIMIT;
    size_t span = (size_t)tl_block_span((uint32_t)len), pad = span - TL_BLOCK_HEADER_SIZE - len;
    size_t end_len = marked ? TL_BLOCK_HEADER_SIZE : 0;
    static const uint8_t zeros[8];
    uint8_t head[TL_BLOCK_HEADER_SIZE], end[TL_BLOCK_HEADER_SIZE];
    block_head(w, type, payload, len, head);
    if (marked)
        block_head(w, TL_BLOCK_END, NULL, 0, end);
    if (w->io.writev) {
        struct iovec iov[4] = {{head, sizeof head}, {(void *)(uintptr_t)payload, len}, {(void *)(uintptr_t)zeros, pad},
                               {end, end_len}};
        int e = w->io.writev(w->io.ctx, iov, marked ? 4 : 3, w->io.seekable ? off : UINT64_MAX);
        return e ? poison(w, TRACELOG_E_IO, e, off, "write failed") : TRACELOG_OK;
    }
    w->block.len = 0;
    if (tl_buf_reserve(&w->block, span + end_len))
        return TRACELOG_E_NOMEM;
    memcpy(w->block.data, head, sizeof head);
    if (len)
        memcpy(w->block.data + TL_BLOCK_HEADER_SIZE, payload, len);
    memset(w->block.data + TL_BLOCK_HEADER_SIZE + len, 0, pad);
    memcpy(w->block.data + span, end, end_len);
    w->block.len = span + end_len;
    return io_write(w, w->block.data, w->block.len, off);
}

static int is_ring(const tracelog_writer *w) { return w->hdr.layout == TL_LAYOUT_RING; }

static uint64_t segment_offset(const tracelog_writer *w, uint32_t s)
{
    return w->hdr.ring_offset + (uint64_t)s * w->hdr.segment_size;
}

/* Counts the events of segment s, which is about to be overwritten, as lost. */
static void forget_segment(tracelog_writer *w, uint32_t s)
{
    w->status.log_overruns += w->seg_events[s];
    w->seg_events[s] = 0;
}

/* Where the next block of the current segment goes: after its SEGMENT block. */
static uint64_t seg_used(const tracelog_writer *w) { return w->seg_pos ? w->seg_pos : TL_SEGMENT_SPAN; }

/* The largest block a segment holds, after its SEGMENT block and before the END marker that follows it. */
static uint64_t seg_room(const tracelog_writer *w) { return w->hdr.segment_size - TL_SEGMENT_SPAN - TL_BLOCK_HEADER_SIZE; }

/* Does a block of this span fit in the current segment, with its END marker? */
static int seg_fits(const tracelog_writer *w, uint64_t span)
{
    return seg_used(w) + span + TL_BLOCK_HEADER_SIZE <= w->hdr.segment_size;
}

/*
 * Starts the current segment with its SEGMENT block (spec 7.4): its own
 * small write, so that a write torn there spoils no data block, and the
 * reader knows the lap and sequence number the segment's data starts at.
 */
static tracelog_status enter_segment(tracelog_writer *w)
{
    uint8_t p[TL_SEGMENT_PAYLOAD_SIZE];
    tl_segment_info s = {w->segment, w->seg_extent[w->segment], w->lap};
    tl_segment_encode(&s, p);
    tracelog_status st = put_block(w, TL_BLOCK_SEGMENT, p, sizeof p, segment_offset(w, w->segment), 1);
    if (st != TRACELOG_OK)
        return st;
    w->seq++;
    w->seg_pos = TL_SEGMENT_SPAN;
    return TRACELOG_OK;
}

/*
 * Ends the current segment with a PADDING block and moves to the next. A
 * reader takes that PADDING block for the writer's entry into the next
 * segment, whose older lap is then lost (spec 8.5): its events are counted
 * as overruns before it is written, so that no crash can lose them uncounted.
 */
static tracelog_status next_segment(tracelog_writer *w)
{
    uint32_t next = (w->segment + 1) % w->hdr.segment_count;
    forget_segment(w, next);
    if (next == 0 && !w->status.log_full) {
        /* The ring wrapped: from now on new chunks overwrite the oldest (POSIX: the log is full). */
        w->status.log_full = 1;
        w->status_dirty = 1;
    }
    uint64_t left = w->hdr.segment_size - w->seg_pos;
    if (left >= TL_BLOCK_HEADER_SIZE) {
        tracelog_status st = put_block(w, TL_BLOCK_PADDING, NULL, 0, segment_offset(w, w->segment) + w->seg_pos, 0);
        if (st != TRACELOG_OK)
            return st;
        w->seq++;
        w->seg_pos += TL_BLOCK_HEADER_SIZE;
    }
    if (w->seg_pos > w->seg_extent[w->segment])
        w->seg_extent[w->segment] = (uint32_t)w->seg_pos;
    w->segment = next;
    w->lap += next == 0;
    w->seg_pos = 0;
    return TRACELOG_OK;
}

/*
 * Frames and writes one block where its type belongs, and returns its file
 * offset in *where. Durable blocks (metadata, event types) of a ring go to
 * the durable region; everything else goes to the data area.
 */
static tracelog_status write_block(tracelog_writer *w, uint16_t type, const uint8_t *payload,
                                   size_t len, uint64_t *where)
{
    if (w->error.code != TRACELOG_OK)
        return w->error.code;
    if (len > UINT32_MAX - 8)
        return TRACELOG_E_LIMIT;
    uint64_t span = tl_block_span((uint32_t)len);
    int durable = type == TL_BLOCK_METADATA || type == TL_BLOCK_EVENT_TYPES || type == TL_BLOCK_THREADS;
    uint64_t off;
    if (!is_ring(w)) {
        off = w->pos;
    } else if (durable) {
        if (w->durable_pos + span > w->hdr.ring_offset)
            return TRACELOG_E_LIMIT; /* durable region full: too many event types */
        off = w->durable_pos;
    } else {
        if (span > seg_room(w))
            return TRACELOG_E_LIMIT;
        tracelog_status st = TRACELOG_OK;
        if (!seg_fits(w, span))
            st = next_segment(w);
        if (st == TRACELOG_OK && w->seg_pos == 0)
            st = enter_segment(w);
        if (st != TRACELOG_OK)
            return st;
        off = segment_offset(w, w->segment) + w->seg_pos;
    }
    tracelog_status st = put_block(w, type, payload, len, off, is_ring(w) && !durable);
    if (st != TRACELOG_OK)
        return st;
    w->seq++;
    if (!is_ring(w))
        w->pos += span;
    else if (durable)
        w->durable_pos += span;
    else
        w->seg_pos += span;
    if (where)
        *where = off;
    return TRACELOG_OK;
}

/* Encodes entry i of a batch of pending definitions into out. */
typedef tracelog_status (*entry_encoder)(const tracelog_writer *w, size_t i, tl_buf *out);

static tracelog_status encode_type(const tracelog_writer *w, size_t i, tl_buf *out)
{
    return tl_types_encode_entry(tl_event_types_get(&w->types, w->defined[w->types_written + i]), out);
}

static tracelog_status encode_thread(const tracelog_writer *w, size_t i, tl_buf *out)
{
    return tl_threads_encode_entry(&w->pending[i], tl_thread_names_get(&w->names, w->pending[i].name), out);
}

/* Ring: how many of a batch's n entries fit, as one block, in the durable region below limit (w->block is scratch). */
static tracelog_status batch_fit(tracelog_writer *w, size_t n, entry_encoder encode, uint64_t limit, size_t *fit)
{
    uint64_t room = limit > w->durable_pos ? limit - w->durable_pos : 0, body = 0;
    for (*fit = 0; *fit < n; ++*fit) {
        w->block.len = 0;
        if (encode(w, *fit, &w->block) != TRACELOG_OK)
            return TRACELOG_E_NOMEM;
        body += w->block.len;
        if (tl_block_span((uint32_t)(tl_cbor_head_size(*fit + 1) + body)) > room)
            break;
    }
    return TRACELOG_OK;
}

/*
 * Writes a batch of n pending definitions as one block: all of them in a
 * sequential log; in a ring, as many as fit in the durable region below
 * limit. The others are counted in *dropped (a status counter): their
 * events still go to the log, without them, rather than the log stopping
 * for good.
 */
static tracelog_status write_batch(tracelog_writer *w, uint16_t type, size_t n, entry_encoder encode,
                                   uint64_t limit, uint64_t *dropped)
{
    size_t fit = n;
    tracelog_status st = is_ring(w) ? batch_fit(w, n, encode, limit, &fit) : TRACELOG_OK;
    if (st == TRACELOG_OK && fit > 0) {
        w->payload.len = 0;
        st = tl_cbor_put_array(&w->payload, fit) ? TRACELOG_E_NOMEM : TRACELOG_OK;
        for (size_t i = 0; i < fit && st == TRACELOG_OK; i++)
            st = encode(w, i, &w->payload);
        if (st == TRACELOG_OK)
            st = write_block(w, type, w->payload.data, w->payload.len, NULL);
    }
    if (st == TRACELOG_OK && fit < n) {
        *dropped += n - fit;
        w->status_dirty = 1;
    }
    return st;
}

/* Writes the types defined since the last call (EVENT_TYPES), with those the definer has to add. */
static tracelog_status write_pending_types(tracelog_writer *w)
{
    if (w->definer)
        w->definer(w->definer_ctx, w);
    size_t n = w->ndefined - w->types_written;
    if (n == 0)
        return TRACELOG_OK;
    tracelog_status st = write_batch(w, TL_BLOCK_EVENT_TYPES, n, encode_type, w->hdr.ring_offset,
                                     &w->status.types_dropped);
    if (st == TRACELOG_OK)
        w->types_written = w->ndefined;
    return st;
}

/* Writes the thread definitions made since the last call (THREADS). */
static tracelog_status write_pending_threads(tracelog_writer *w)
{
    if (w->npending == 0)
        return TRACELOG_OK;
    /* In a ring they leave the last quarter of the durable region to event
       names, which are worth more: a program that keeps starting threads
       would fill it otherwise. */
    uint64_t limit = w->hdr.ring_offset - (w->hdr.ring_offset - TL_HEADER_SIZE) / 4;
    tracelog_status st = write_batch(w, TL_BLOCK_THREADS, w->npending, encode_thread, limit,
                                     &w->status.threads_dropped);
    if (st == TRACELOG_OK)
        w->npending = 0;
    return st;
}

/* Definitions go before the chunk that follows them, so that a log cut short still has them. */
static tracelog_status write_pending(tracelog_writer *w)
{
    tracelog_status st = write_pending_types(w);
    return st == TRACELOG_OK ? write_pending_threads(w) : st;
}

static void mark_full(tracelog_writer *w, uint64_t lost)
{
    w->status.log_overruns += lost;
    w->status.log_full = 1;
    w->status_dirty = 1;
}

/* Writes a finished chunk payload of count events as the next CHUNK block (its definitions are out). */
static tracelog_status put_chunk(tracelog_writer *w, const uint8_t *payload, size_t len, uint32_t count)
{
    tracelog_status st = write_block(w, TL_BLOCK_CHUNK, payload, len, NULL);
    if (st != TRACELOG_OK)
        return st;
    if (is_ring(w))
        w->seg_events[w->segment] += count;
    if (!w->opt.preserve_attributes) /* a copy's counters are the caller's */
        w->status.events_written += count;
    w->chunk_bytes += tl_block_span((uint32_t)len);
    w->status_dirty = 1;
    return TRACELOG_OK;
}

/* Writes the events buffered in w->chunk as one chunk block. */
static tracelog_status emit_chunk(tracelog_writer *w)
{
    tl_chunk_builder *c = &w->chunk;
    if (c->count == 0)
        return TRACELOG_OK;
    tracelog_status st = write_pending(w);
    if (st == TRACELOG_OK)
        st = tl_chunk_finish(c, w->cctx, w->raw ? 0 : w->opt.compression_level, &w->payload);
    if (st != TRACELOG_OK)
        return st;
    uint64_t span = tl_block_span((uint32_t)w->payload.len);
    if (w->opt.log_policy == TRACELOG_POLICY_UNTIL_FULL &&
        w->chunk_bytes + span > w->opt.log_max_size) {
        mark_full(w, c->count);
        tl_chunk_builder_reset(c);
        return TRACELOG_E_LOG_FULL;
    }
    st = put_chunk(w, w->payload.data, w->payload.len, c->count);
    if (st == TRACELOG_OK)
        tl_chunk_builder_reset(c);
    return st;
}

/*
 * Ring: a block that does not fit in the current segment starts the next
 * one, which overwrites the oldest segment and counts its events as
 * overruns. Status and trailer blocks carry those counters, so they must
 * move on before encoding them: *moved says the caller has to re-encode.
 */
static tracelog_status ring_room(tracelog_writer *w, size_t len, int *moved)
{
    *moved = 0;
    if (!is_ring(w) || len > UINT32_MAX - 8)
        return TRACELOG_OK;
    uint64_t span = tl_block_span((uint32_t)len);
    if (span > seg_room(w) || seg_fits(w, span))
        return TRACELOG_OK; /* fits, or never will (write_block refuses it) */
    if (w->error.code != TRACELOG_OK)
        return w->error.code;
    *moved = 1;
    return next_segment(w);
}

static tracelog_status write_status(tracelog_writer *w)
{
    tracelog_status st;
    int moved;
    do {
        w->payload.len = 0;
        st = tl_status_encode(&w->status, &w->payload);
        if (st == TRACELOG_OK)
            st = ring_room(w, w->payload.len, &moved);
    } while (st == TRACELOG_OK && moved);
    if (st == TRACELOG_OK)
        st = write_block(w, TL_BLOCK_STATUS, w->payload.data, w->payload.len, NULL);
    if (st == TRACELOG_OK)
        w->status_dirty = 0;
    return st;
}

static tracelog_status check_options(const tracelog_writer_options *o, int seekable, tracelog_error *err)
{
    if (o->log_policy != TRACELOG_POLICY_APPEND && o->log_policy != TRACELOG_POLICY_UNTIL_FULL &&
        o->log_policy != TRACELOG_POLICY_LOOP)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "log policy must be APPEND, UNTIL_FULL or LOOP");
    if (o->chunk_size < 4096 || o->chunk_size > (16u << 20))
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "chunk size %u outside 4 KiB..16 MiB", o->chunk_size);
    if (o->compression_level < 0 || o->compression_level > ZSTD_maxCLevel())
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "compression level %d outside 0..%d",
                             o->compression_level, ZSTD_maxCLevel());
    if (o->log_policy != TRACELOG_POLICY_APPEND && o->log_max_size == 0)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "log size must be > 0 for LOOP and UNTIL_FULL");
    if (o->log_policy == TRACELOG_POLICY_LOOP && !seekable)
        return tl_fail(err, TRACELOG_E_NOT_SEEKABLE, 0, TL_NO_OFFSET, "a LOOP log needs a seekable file");
    return TRACELOG_OK;
}

#define TL_DURABLE_MIN 4096u
#define TL_DURABLE_MAX (64u << 20)

/*
 * The durable region of a LOOP log of budget L whose ring takes `ring`
 * bytes, so that the whole file stays within L plus the overhead allowance
 * max(16 KiB, L/8) (format-spec 7.3): the allowance up to 256 KiB (room for
 * POSIX's TRACE_USER_EVENT_MAX names of the longest length), or L/256 when
 * larger, less the file header and what the ring exceeds L by.
 */
static uint64_t default_durable(uint64_t L, uint64_t ring)
{
    uint64_t allowance = L / 8 > (16u << 10) ? L / 8 : (16u << 10);
    uint64_t want = allowance < (256u << 10) ? allowance : (256u << 10);
    if (L / 256 > want)
        want = L / 256;
    uint64_t excess = ring > L ? ring - L : 0;
    if (want < TL_HEADER_SIZE + excess + TL_DURABLE_MIN) /* only with a segment size given */
        return TL_DURABLE_MIN;
    return (want - TL_HEADER_SIZE - excess) & ~(uint64_t)7;
}

/* Chooses the ring geometry of a LOOP log (format-spec: ring layout). */
static void plan_ring(tracelog_writer *w)
{
    const tracelog_writer_options *o = &w->opt;
    uint64_t seg = o->segment_size ? (o->segment_size & ~7u) : (o->log_max_size / 8) & ~(uint64_t)4095;
    if (seg < 4096)
        seg = 4096;
    if (seg > (1u << 24))
        seg = 1u << 24;
    uint64_t count = o->log_max_size / seg;
    if (count < 2)
        count = 2;
    if (count > (1u << 20))
        count = 1u << 20;
    uint64_t durable = o->durable_size ? tl_align8(o->durable_size) : default_durable(o->log_max_size, seg * count);
    if (durable < TL_DURABLE_MIN)
        durable = TL_DURABLE_MIN;
    if (durable > TL_DURABLE_MAX)
        durable = TL_DURABLE_MAX;
    w->hdr.layout = TL_LAYOUT_RING;
    w->hdr.segment_size = (uint32_t)seg;
    w->hdr.segment_count = (uint32_t)count;
    w->hdr.ring_offset = TL_HEADER_SIZE + durable;
    w->hdr.compat_flags = TL_COMPAT_SEGMENT_HEADERS;
    w->durable_pos = TL_HEADER_SIZE;
    uint64_t room = seg - TL_SEGMENT_SPAN - 2 * TL_BLOCK_HEADER_SIZE - TL_CHUNK_HEADER_SIZE - 8; /* and the END marker */
    if (w->chunk_limit > room)
        w->chunk_limit = (uint32_t)room;
}

static uint64_t random_salt(void)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        s = (uint64_t)ts.tv_nsec * 0x9E3779B97F4A7C15ull ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 32);
    }
    return s;
}

static tracelog_status start_log(tracelog_writer *w, tracelog_error *err)
{
    if (w->io.truncate) {
        int e = w->io.truncate(w->io.ctx, 0);
        if (e)
            return tl_fail(err, TRACELOG_E_IO, e, 0, "truncate failed: %s", strerror(e));
    }
    uint8_t head[TL_HEADER_SIZE];
    tl_header_encode(&w->hdr, head);
    w->payload.len = 0;
    tracelog_status st = io_write(w, head, sizeof head, 0);
    if (st == TRACELOG_OK)
        st = tl_meta_encode(&w->meta, &w->payload);
    if (st == TRACELOG_OK)
        st = write_block(w, TL_BLOCK_METADATA, w->payload.data, w->payload.len, NULL);
    if (st != TRACELOG_OK)
        return w->error.code ? (*err = w->error, w->error.code)
                             : tl_fail(err, st, 0, TL_NO_OFFSET, "cannot write the log's metadata");
    return TRACELOG_OK;
}

tracelog_status tl_writer_create_io(const tl_io *io, const tracelog_metadata *meta,
                                          const tracelog_writer_options *opt,
                                          tracelog_writer **out, tracelog_error *err)
{
    tracelog_writer_options defaults;
    if (!out || !io)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "NULL argument");
    *out = NULL;
    if (!opt) {
        tracelog_writer_options_init(&defaults);
        opt = &defaults;
    }
    tracelog_status st = check_options(opt, io->seekable, err);
    if (st != TRACELOG_OK)
        return st;
    tracelog_writer *w = calloc(1, sizeof *w);
    if (!w)
        return tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    w->io = *io;
    w->opt = *opt;
    if (meta)
        w->meta = *meta;
    else
        tracelog_metadata_init(&w->meta);
    if (!opt->preserve_attributes) {
        w->meta.log_full_policy = opt->log_policy;
        w->meta.log_max_size = opt->log_policy == TRACELOG_POLICY_APPEND ? 0 : opt->log_max_size;
    }
    w->chunk_limit = opt->chunk_size;
    w->hdr = (tl_file_header){.major = TRACELOG_FORMAT_MAJOR, .minor = TRACELOG_FORMAT_MINOR,
                              .header_size = TL_HEADER_SIZE, .salt = random_salt(),
                              .incompat_flags = TL_INCOMPAT_KEYED_CHUNKS,
                              .created_ns = w->meta.creation_time_ns};
    w->salt32 = tl_salt32(w->hdr.salt);
    w->pos = TL_HEADER_SIZE;
    tl_chunk_builder_reset(&w->chunk);
    if (opt->log_policy == TRACELOG_POLICY_LOOP) {
        plan_ring(w);
        w->seg_events = calloc(w->hdr.segment_count, sizeof *w->seg_events);
        w->seg_extent = calloc(w->hdr.segment_count, sizeof *w->seg_extent);
    }
    if (opt->compression_level > 0)
        w->cctx = ZSTD_createCCtx();
    if ((opt->log_policy == TRACELOG_POLICY_LOOP && (!w->seg_events || !w->seg_extent)) ||
        (opt->compression_level > 0 && !w->cctx)) {
        tracelog_writer_abandon(w);
        return tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    }
    st = start_log(w, err);
    if (st != TRACELOG_OK) {
        tracelog_writer_abandon(w);
        return st;
    }
    *out = w;
    return TRACELOG_OK;
}

tracelog_status tracelog_writer_create(int fd, const tracelog_metadata *meta,
                                       const tracelog_writer_options *opt,
                                       tracelog_writer **out, tracelog_error *err)
{
    if (fd < 0 || !out)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "bad file descriptor or NULL out");
    int fd_copy = fd;
    tl_io io;
    tl_io_from_fd(&io, &fd_copy);
    tracelog_status st = tl_writer_create_io(&io, meta, opt, out, err);
    if (st == TRACELOG_OK) {
        (*out)->fd = fd;
        (*out)->io.ctx = &(*out)->fd;
    }
    return st;
}

void tl_writer_set_raw(tracelog_writer *w, int raw) { w->raw = raw; }

tracelog_status tracelog_writer_define_event(tracelog_writer *w, uint32_t id, const char *name)
{
    return tracelog_writer_define_event_schema(w, id, name, NULL, NULL);
}

tracelog_status tracelog_writer_define_event_schema(tracelog_writer *w, uint32_t id, const char *name,
                                                    const char *schema, tracelog_error *err)
{
    if (!w || !name)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "NULL argument");
    if (w->error.code != TRACELOG_OK) {
        if (err)
            *err = w->error;
        return w->error.code;
    }
    size_t len = strlen(name);
    if (len == 0 || len > TRACELOG_TEXT_MAX)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "event type %u: name of %zu bytes (1..%d)",
                       id, len, TRACELOG_TEXT_MAX);
    tracelog_schema *parsed = NULL;
    if (schema) {
        tracelog_status st = tracelog_schema_parse(schema, &parsed, err);
        if (st != TRACELOG_OK)
            return st;
    }
    const tl_type_entry *known = tl_event_types_get(&w->types, id);
    int late_schema = known && !known->schema && parsed && strcmp(known->name, name) == 0;
    if (known && !late_schema) {
        int same = strcmp(known->name, name) == 0 && tl_schema_equal(known->schema, parsed);
        tracelog_schema_free(parsed);
        return same ? TRACELOG_OK
                    : tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET,
                              "event type %u is already defined with another name or schema", id);
    }
    /* Refused here, where the caller learns of it, rather than written and refused by every reader. */
    if ((!known && w->types.n >= TL_LOG_EVENT_TYPES_MAX) ||
        (parsed && w->types.schema_bytes + tl_schema_text_len(parsed) > TL_LOG_SCHEMA_BYTES_MAX)) {
        tracelog_schema_free(parsed);
        return tl_fail(err, TRACELOG_E_LIMIT, 0, TL_NO_OFFSET,
                       "event type %u: a log holds at most %u event types and %u bytes of schemas "
                       "(what a reader accepts, format-spec 9.1)",
                       id, TL_LOG_EVENT_TYPES_MAX, TL_LOG_SCHEMA_BYTES_MAX);
    }
    uint32_t *d = tl_grow(w->defined, &w->defined_cap, w->ndefined + 1, sizeof *d);
    if (!d) {
        tracelog_schema_free(parsed);
        return tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    }
    w->defined = d;
    /* A schema given late is written in a definition of its own: the log's table is the whole log's (the
       events before read with it too, format-spec 5.3). */
    tracelog_status st = tl_event_types_set_typed(&w->types, id, name, len, parsed, late_schema);
    if (st != TRACELOG_OK)
        return tl_fail(err, st, 0, TL_NO_OFFSET, "event type %u: %s", id, tracelog_strerror(st));
    w->defined[w->ndefined++] = id;
    return TRACELOG_OK;
}

/*
 * Keeps the thread table up to date with ev's kernel tid (0: unknown, no
 * change). pthread_t values are reused: a thread handle seen with another
 * kernel tid ends the chunk in progress, since a definition applies to the
 * chunks after it (format-spec 5.7). Once per thread, not per event.
 */
/* The name id the namer gives ev's new thread; 0: none (no namer, no name, out of memory). */
static uint32_t name_new_thread(tracelog_writer *w, const tracelog_event *ev)
{
    if (!w->namer)
        return 0;
    char name[TL_THREAD_NAME_MAX + 1] = "";
    w->namer(w->namer_ctx, ev->pid, ev->tid, ev->kernel_tid, name, sizeof name);
    size_t len = strnlen(name, TL_THREAD_NAME_MAX);
    return len ? tl_thread_names_intern(&w->names, name, len) : 0;
}

void tl_writer_set_thread_namer(tracelog_writer *w, tl_thread_namer namer, void *ctx)
{
    w->namer = namer;
    w->namer_ctx = ctx;
}

void tl_writer_set_type_definer(tracelog_writer *w, tl_type_definer definer, void *ctx)
{
    w->definer = definer;
    w->definer_ctx = ctx;
}

#define RENAME_PASS 256

tracelog_status tl_writer_rename_threads(tracelog_writer *w)
{
    if (!w->namer || w->error.code != TRACELOG_OK)
        return w->error.code;
    /* A rename replaces the definition in place (tl_thread_map_put): the slots do not move. At most
       RENAME_PASS threads a pass, taking turns: a program that made thousands of threads does not pay
       a read of each one's name at every write. */
    size_t cap = w->threads.cap, asked = 0, k = 0;
    tracelog_status st = TRACELOG_OK;
    for (; k < cap && asked < RENAME_PASS && st == TRACELOG_OK; k++) {
        tl_thread_def d = w->threads.slots[(w->rename_at + k) % cap];
        if (!d.ktid)
            continue;
        asked++;
        char name[TL_THREAD_NAME_MAX + 1] = ""; /* the name it has: the namer tells a rename from a new thread */
        const char *has = tl_thread_names_get(&w->names, d.name);
        if (has)
            memcpy(name, has, strnlen(has, TL_THREAD_NAME_MAX)); /* a name the writer holds: at most the max */
        w->namer(w->namer_ctx, d.pid, d.tid, d.ktid, name, sizeof name);
        if (name[0]) /* a thread that is gone has no name to read: it keeps its own */
            st = tracelog_writer_name_thread(w, d.pid, d.tid, d.ktid, name);
        if (st == TRACELOG_E_INVAL) /* not a name a log holds: the thread keeps its own */
            st = TRACELOG_OK;
    }
    w->rename_at = cap ? (w->rename_at + k) % cap : 0;
    return st;
}

static tracelog_status note_other_thread(tracelog_writer *w, const tracelog_event *ev);

/* note_other_thread unless ev's thread is the last event's, inline: most events. */
static inline tracelog_status note_thread(tracelog_writer *w, const tracelog_event *ev)
{
    const tl_thread_def *last = &w->last_thread;
    if (!ev->kernel_tid || (ev->kernel_tid == last->ktid && ev->pid == last->pid && ev->tid == last->tid))
        return TRACELOG_OK;
    return note_other_thread(w, ev);
}

#define DROPPED_SETS 1024 /* of DROPPED_WAYS threads each */
#define DROPPED_WAYS 4

/*
 * A definition past the ones a reader keeps: counted, not written. The map
 * does not learn it: a controller's writer takes the thread ids of its
 * events from the traced process, which could make up a new one for every
 * event and grow the map by 24 bytes an event (958 MB in 30 s). A small
 * table of the threads counted lately (4,096, 4 to a set) keeps a thread's
 * next events from being counted again, mostly: one pushed out of it and
 * seen again is counted again.
 */
static tracelog_status drop_thread(tracelog_writer *w, uint32_t pid, uint64_t tid, uint32_t ktid)
{
    if (!w->dropped_seen &&
        !(w->dropped_seen = calloc(DROPPED_SETS * DROPPED_WAYS, sizeof *w->dropped_seen)))
        return TRACELOG_E_NOMEM;
    uint64_t key = (tid ^ ((uint64_t)pid << 32 | ktid) * 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
    key += !key; /* 0 marks a free way */
    uint64_t *set = &w->dropped_seen[((key * 0x9E3779B97F4A7C15ull) >> 54) * DROPPED_WAYS];
    for (int i = 0; i < DROPPED_WAYS; i++)
        if (set[i] == key)
            return TRACELOG_OK;
    memmove(set + 1, set, (DROPPED_WAYS - 1) * sizeof *set); /* the oldest goes */
    set[0] = key;
    w->status.threads_dropped++;
    w->status_dirty = 1;
    return TRACELOG_OK;
}

/*
 * Makes d the definition of its (pid, tid), written before the next chunk.
 * A handle that had another kernel tid (reused) first ends the chunk in
 * progress, since a definition applies to whole chunks; a rename of the
 * same thread does not (names are for display: the chunk's earlier events
 * may read back with the new name). Beyond the definitions a reader keeps,
 * drop_thread.
 */
static tracelog_status define_thread(tracelog_writer *w, const tl_thread_def *d, uint32_t known)
{
    /* A rename before the thread's definition went out replaces it: a chunk shows one name per thread,
       and a thread renamed at every event once took a definition each (a million dropped past the limit). */
    for (size_t i = w->npending; known == d->ktid && i-- > 0;) {
        tl_thread_def *p = &w->pending[i];
        if (p->pid == d->pid && p->tid == d->tid && p->ktid == d->ktid) {
            *p = *d;
            return tl_thread_map_put(&w->threads, d) ? TRACELOG_E_NOMEM : TRACELOG_OK;
        }
    }
    if (w->thread_defs >= TL_LOG_THREADS_MAX)
        return drop_thread(w, d->pid, d->tid, d->ktid);
    tracelog_status st = known && known != d->ktid ? emit_chunk(w) : TRACELOG_OK;
    if (st != TRACELOG_OK)
        return st;
    tl_thread_def *p = tl_grow(w->pending, &w->pending_cap, w->npending + 1, sizeof *p);
    if (!p)
        return TRACELOG_E_NOMEM;
    w->pending = p;
    if (tl_thread_map_put(&w->threads, d))
        return TRACELOG_E_NOMEM;
    w->pending[w->npending++] = *d;
    w->thread_defs++;
    return TRACELOG_OK;
}

static tracelog_status note_other_thread(tracelog_writer *w, const tracelog_event *ev)
{
    uint32_t known = tl_thread_map_get(&w->threads, ev->pid, ev->tid);
    if (known != ev->kernel_tid) {
        /* A new thread: its namer's name, else none until one is given; past the definitions kept,
           not named (a controller's namer reads /proc: once an event for threads made up). */
        tracelog_status st;
        if (w->thread_defs >= TL_LOG_THREADS_MAX) {
            st = drop_thread(w, ev->pid, ev->tid, ev->kernel_tid);
        } else {
            tl_thread_def d = {ev->tid, ev->pid, ev->kernel_tid, name_new_thread(w, ev)};
            st = define_thread(w, &d, known);
        }
        if (st != TRACELOG_OK)
            return st;
    }
    w->last_thread = (tl_thread_def){ev->tid, ev->pid, ev->kernel_tid, 0};
    return TRACELOG_OK;
}

tracelog_status tracelog_writer_name_thread(tracelog_writer *w, uint32_t pid, uint64_t tid, uint32_t kernel_tid,
                                            const char *name)
{
    if (!w || !name || !kernel_tid)
        return TRACELOG_E_INVAL;
    size_t len = strlen(name);
    if (len > TL_THREAD_NAME_MAX)
        return TRACELOG_E_INVAL;
    if (w->error.code != TRACELOG_OK)
        return w->error.code;
    const tl_thread_def *cur = tl_thread_map_find(&w->threads, pid, tid);
    const char *cur_name = cur ? tl_thread_names_get(&w->names, cur->name) : NULL;
    if (cur && cur->ktid == kernel_tid && strcmp(cur_name ? cur_name : "", name) == 0)
        return TRACELOG_OK;
    tl_thread_def d = {tid, pid, kernel_tid, len ? tl_thread_names_intern(&w->names, name, len) : 0};
    if (len && !d.name)
        return TRACELOG_E_NOMEM;
    tracelog_status st = define_thread(w, &d, cur ? cur->ktid : 0);
    if (st == TRACELOG_E_LOG_FULL) /* the chunk it ended was counted as lost; the thread is defined */
        st = define_thread(w, &d, 0);
    w->last_thread = (tl_thread_def){0, 0, 0, 0}; /* the next event looks its thread up again */
    return st;
}

void tl_writer_chunk_params(const tracelog_writer *w, uint32_t *limit, int *level)
{
    *limit = w->chunk_limit;
    *level = w->raw ? 0 : w->opt.compression_level;
}

/*
 * A write error ends the log (the writer's errors are sticky): the events
 * the chunk builder holds will never be written, nor `also` more that the
 * caller drops. They are log overruns, as a full log's losses are, so that
 * the status keeps telling that events are lost after the error was read.
 */
static void lose_chunk_if_dead(tracelog_writer *w, uint64_t also)
{
    if (w->error.code == TRACELOG_OK)
        return;
    w->status.log_overruns += w->chunk.count + also;
    tl_chunk_builder_reset(&w->chunk);
}

void tl_writer_count_lost(tracelog_writer *w, uint64_t n) { w->status.log_overruns += n; }

tracelog_status tl_writer_put_chunk(tracelog_writer *w, const uint8_t *payload, size_t len, uint32_t count)
{
    tracelog_status st = write_pending(w);
    if (st == TRACELOG_OK)
        st = put_chunk(w, payload, len, count);
    if (st != TRACELOG_OK)
        w->status.log_overruns += count; /* the caller drops the chunk */
    return st;
}

tracelog_status tl_writer_end_chunk(tracelog_writer *w)
{
    tracelog_status st = w->error.code != TRACELOG_OK ? w->error.code : emit_chunk(w);
    if (st != TRACELOG_OK)
        lose_chunk_if_dead(w, 0);
    return st;
}

int tl_writer_thread_reused(const tracelog_writer *w, const tracelog_event *ev)
{
    uint32_t known = tl_thread_map_get(&w->threads, ev->pid, ev->tid);
    return known && known != ev->kernel_tid;
}

tracelog_status tl_writer_learn_thread(tracelog_writer *w, const tracelog_event *ev)
{
    return w->error.code != TRACELOG_OK ? w->error.code : note_thread(w, ev);
}

tracelog_status tracelog_writer_append(tracelog_writer *w, const tracelog_event *ev)
{
    if (!w || !ev)
        return TRACELOG_E_INVAL;
    if (w->error.code != TRACELOG_OK) {
        lose_chunk_if_dead(w, 1);
        return w->error.code;
    }
    if (w->opt.log_policy == TRACELOG_POLICY_UNTIL_FULL && w->status.log_full) {
        mark_full(w, 1);
        return TRACELOG_E_LOG_FULL;
    }
    size_t bound = tl_chunk_event_bound(ev);
    if (bound > w->chunk_limit - TL_CHUNK_TABLE_SIZE)
        return TRACELOG_E_INVAL;
    tracelog_status st = TRACELOG_OK;
    if (!tl_chunk_fits(&w->chunk, ev, w->chunk_limit))
        st = emit_chunk(w);
    if (st == TRACELOG_OK)
        st = note_thread(w, ev);
    if (st == TRACELOG_E_LOG_FULL)
        mark_full(w, 1);
    else if (st != TRACELOG_OK)
        lose_chunk_if_dead(w, 1);
    return st == TRACELOG_OK ? tl_chunk_add(&w->chunk, ev) : st;
}

tl_chunk_builder *tl_writer_lane_target(tracelog_writer *w, size_t *limit, tracelog_event *thread)
{
    /* What append checks for every event, and an event of the thread it noted last needs only once: it is not
       stopped; the thread is known (none after a rename: append looks it up again). */
    const tl_thread_def *t = &w->last_thread;
    if (w->error.code != TRACELOG_OK || (w->opt.log_policy == TRACELOG_POLICY_UNTIL_FULL && w->status.log_full) ||
        !t->ktid)
        return NULL;
    *thread = (tracelog_event){.kernel_tid = t->ktid, .pid = t->pid, .tid = t->tid};
    *limit = w->chunk_limit;
    return &w->chunk;
}

tracelog_status tracelog_writer_append_final(tracelog_writer *w, const tracelog_event *ev)
{
    if (!w || !ev)
        return TRACELOG_E_INVAL;
    if (w->opt.log_policy != TRACELOG_POLICY_UNTIL_FULL || !w->status.log_full)
        return tracelog_writer_append(w, ev);
    if (w->final_written)
        return TRACELOG_E_LOG_FULL;
    if (tl_chunk_event_bound(ev) > w->chunk_limit - TL_CHUNK_TABLE_SIZE)
        return TRACELOG_E_INVAL;
    /* One chunk of its own, beyond the budget: the spec allows this one. */
    tl_chunk_builder_reset(&w->chunk);
    tracelog_status st = note_thread(w, ev); /* the chunk is empty: never ends one */
    if (st == TRACELOG_OK)
        st = tl_chunk_add(&w->chunk, ev);
    if (st != TRACELOG_OK)
        return st;
    uint64_t saved = w->opt.log_max_size;
    w->opt.log_max_size = UINT64_MAX;
    st = emit_chunk(w);
    w->opt.log_max_size = saved;
    w->final_written = 1;
    return st;
}

tracelog_status tracelog_writer_set_status(tracelog_writer *w, const tracelog_log_status *st)
{
    if (!w || !st)
        return TRACELOG_E_INVAL;
    if (w->error.code != TRACELOG_OK)
        return w->error.code;
    if (w->opt.preserve_attributes) { /* a copy of another log: its counters, as they were */
        w->status = *st;
        w->status_dirty = 1;
        return TRACELOG_OK;
    }
    /* The stream-side counters belong to the caller; the log-side ones to the writer. */
    w->status.events_recorded = st->events_recorded;
    w->status.stream_overruns = st->stream_overruns;
    if (!w->status.flush_error)
        w->status.flush_error = st->flush_error;
    w->status_dirty = 1;
    return TRACELOG_OK;
}

tracelog_status tracelog_writer_get_status(const tracelog_writer *w, tracelog_log_status *st)
{
    if (!w || !st)
        return TRACELOG_E_INVAL;
    *st = w->status;
    return TRACELOG_OK;
}

tracelog_status tracelog_writer_flush(tracelog_writer *w)
{
    if (!w)
        return TRACELOG_E_INVAL;
    /* Poisoned: report the error again, even with nothing left to write (a
       sync must not succeed after a failed one: the data may be lost). */
    if (w->error.code != TRACELOG_OK)
        return w->error.code;
    tracelog_status st = write_pending(w);
    tracelog_status chunk_st = st == TRACELOG_OK ? emit_chunk(w) : st;
    if (chunk_st != TRACELOG_OK && chunk_st != TRACELOG_E_LOG_FULL)
        return chunk_st;
    /* Once an UNTIL_FULL log is full, one status block says so; the trailer
       carries the final counters (so a full log stops growing). */
    if (w->status_dirty && !w->full_reported) {
        st = write_status(w);
        if (st != TRACELOG_OK)
            return st;
        w->full_reported = w->opt.log_policy == TRACELOG_POLICY_UNTIL_FULL && w->status.log_full;
    }
    return chunk_st;
}

tracelog_status tracelog_writer_sync(tracelog_writer *w)
{
    tracelog_status st = tracelog_writer_flush(w);
    if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL)
        return st;
    int e = w->io.sync(w->io.ctx);
    return e ? poison(w, TRACELOG_E_IO, e, TL_NO_OFFSET, "fdatasync failed") : st;
}

/*
 * A ring keeps its names in the durable region, which is never overwritten:
 * its trailer lists none (it must fit in one segment). No trailer carries a
 * chunk index (format 1.1, spec 5.5: it grew without bound and no reader
 * needs it; the chunk headers found by the open scan hold the same).
 */
static tracelog_status encode_trailer(tracelog_writer *w)
{
    tl_trailer t = {&w->status, &w->types, w->defined, is_ring(w) ? 0 : w->ndefined,
                    NULL, 0, is_ring(w) ? 0 : w->pos};
    return tl_trailer_encode(&t, &w->payload);
}

static tracelog_status write_trailer(tracelog_writer *w)
{
    tracelog_status st;
    int moved;
    do {
        st = encode_trailer(w);
        if (st == TRACELOG_OK)
            st = ring_room(w, w->payload.len, &moved);
    } while (st == TRACELOG_OK && moved);
    if (st != TRACELOG_OK)
        return st;
    return write_block(w, TL_BLOCK_TRAILER, w->payload.data, w->payload.len, NULL);
}

static void free_writer(tracelog_writer *w)
{
    tl_event_types_clear(&w->types);
    free(w->defined);
    tl_thread_map_free(&w->threads);
    tl_thread_names_free(&w->names);
    free(w->pending);
    free(w->dropped_seen);
    tl_chunk_builder_free(&w->chunk);
    tl_buf_free(&w->payload);
    tl_buf_free(&w->block);
    ZSTD_freeCCtx(w->cctx);
    free(w->seg_events);
    free(w->seg_extent);
    free(w);
}

tracelog_status tracelog_writer_close(tracelog_writer *w, tracelog_error *err)
{
    if (!w)
        return TRACELOG_OK;
    tracelog_status st = tracelog_writer_flush(w);
    if (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL)
        st = write_trailer(w);
    if (st == TRACELOG_OK) {
        int e = w->io.sync(w->io.ctx);
        if (e)
            st = poison(w, TRACELOG_E_IO, e, TL_NO_OFFSET, "fdatasync failed");
    }
    if (st != TRACELOG_OK) {
        if (w->error.code != TRACELOG_OK) {
            if (err)
                *err = w->error;
        } else {
            tl_fail(err, st, 0, TL_NO_OFFSET, "closing the log: %s", tracelog_strerror(st));
        }
    }
    free_writer(w);
    return st;
}

tracelog_status tracelog_writer_checkpoint(tracelog_writer *w)
{
    if (!w)
        return TRACELOG_E_INVAL;
    tracelog_status st = tracelog_writer_flush(w);
    if (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL)
        st = write_trailer(w);
    return st;
}

void tracelog_writer_abandon(tracelog_writer *w)
{
    if (w)
        free_writer(w);
}

void tracelog_writer_last_error(const tracelog_writer *w, tracelog_error *err)
{
    if (!err)
        return;
    if (!w) {
        tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "NULL writer");
        return;
    }
    *err = w->error;
}
