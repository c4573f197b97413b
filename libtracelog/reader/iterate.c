/*
 * Reading events (format-spec/ptl-format.md 6.10, 8.7): merge sets loaded
 * one chunk at a time (from the chunk list of a seekable file, or from the
 * blocks of a stream as they arrive), their chunks verified and decoded,
 * their events merged in timestamp order, each with its thread's kernel
 * tid; rewind and time seek. tracelog_reader_next is here with what it
 * calls on every event (slot_next, the kernel tid by chunk key), so that they stay
 * inlined into it.
 */
#include <stdlib.h>
#include <string.h>

#include "format/chunk.h"
#include "format/format.h"
#include "format/threads.h"
#include "reader/internal.h"

/* ---- threads of the events delivered --------------------------------------- */

/* Every memo of a lookup in the map (r->cache, r->last, the chunk keys' thread) is dropped: it may change. */
static void threads_changing(tracelog_reader *r)
{
    r->cache.ktid = 0;
    r->last = NULL;
    r->threads_gen++;
}

/* Seekable: makes the map hold the definitions made before seq, the last chunk of the set about to be read. */
static tracelog_status sync_threads(tracelog_reader *r, uint64_t seq)
{
    if (seq < r->threads_seq) { /* rewind or seek back: start again */
        tl_thread_map_reset(&r->threads);
        r->next_def = 0;
    }
    threads_changing(r);
    for (; r->next_def < r->ndefs && r->defs[r->next_def].seq < seq; r->next_def++) {
        if (tl_thread_map_put(&r->threads, &r->defs[r->next_def].d))
            return TRACELOG_E_NOMEM; /* tried again with the same chunk */
    }
    r->threads_seq = seq;
    return TRACELOG_OK;
}

/* Pipe: applies the definitions that arrived before the set's last chunk (blocks come in order). */
static tracelog_status apply_defs(tracelog_reader *r, size_t upto)
{
    threads_changing(r);
    for (; r->next_def < upto; r->next_def++) {
        if (tl_thread_map_put(&r->threads, &r->defs[r->next_def].d))
            return TRACELOG_E_NOMEM; /* tried again by the next call */
    }
    return TRACELOG_OK;
}

/* A column body's event (format 1.0): the last lookup (r->cache) or the map. */
static uint32_t kernel_tid_of(tracelog_reader *r, const tracelog_event *ev)
{
    tl_thread_def *cache = &r->cache;
    if (r->threads.n == 0)
        return 0;
    if (!cache->ktid || cache->pid != ev->pid || cache->tid != ev->tid) {
        const tl_thread_def *d = tl_thread_map_find(&r->threads, ev->pid, ev->tid);
        if (!d)
            return 0;
        *cache = *d; /* its name too: tracelog_reader_event_thread_name looks here */
    }
    return cache->ktid;
}

/*
 * The kernel tid of the event c just gave, looked up once per chunk key (a
 * key is one thread's) while the map stays as it is, not once per event:
 * the threads of a chunk take turns, which a single last lookup misses.
 */
static inline uint32_t kernel_tid_of_key(tracelog_reader *r, const tl_chunk_cursor *c, const tracelog_event *ev)
{
    tl_key_read *key = c->last_key;
    if (!key)
        return kernel_tid_of(r, ev); /* a column body (format 1.0) */
    if (key->thread_gen != r->threads_gen) {
        key->thread = r->threads.n ? tl_thread_map_find(&r->threads, ev->pid, ev->tid) : NULL;
        key->thread_gen = r->threads_gen;
    }
    r->last = key->thread;
    return r->last ? r->last->ktid : 0;
}

/* ---- merge sets (6.10) ------------------------------------------------------ */

/*
 * Verifies the chunk whose block is at m->off and opens m's cursor on it.
 * codec: what the chunk header said when the chunk was found. TRACELOG_OK,
 * TRACELOG_E_CORRUPT (dropped: reported), TRACELOG_E_NOMEM or TRACELOG_E_IO
 * (not reported: the caller decides).
 */
static tracelog_status decode_chunk(tracelog_reader *r, tl_merge_slot *m, const tl_block_header *h, uint8_t codec)
{
    tl_loader l = tl_reader_loader(r);
    tl_load_problem p;
    tracelog_status st = tl_load_chunk(&l, m, h, codec, &p);
    if (st == TRACELOG_E_CORRUPT)
        tl_reader_load_problem(r, m->off, &p);
    return st;
}

/* Damage found part way through a chunk: reported once, whatever the passes. */
static void chunk_damage(tracelog_reader *r, const tl_merge_slot *m, const char *why)
{
    if (r->src.seekable) {
        chunk_ref *c = &r->chunks[m->index];
        if (c->reported & REPORTED_DAMAGE)
            return;
        c->reported |= REPORTED_DAMAGE;
    }
    /* Every event was delivered when only the end check failed. */
    if (m->cur.index == m->cur.h.event_count)
        tl_reader_problem(r, TL_COND_CHUNK_TRAILING_DATA, m->off, 0, "chunk: %s", why);
    else
        tl_reader_problem(r, TL_COND_BAD_EVENT, m->off, 0, "chunk: %s (events after it in this chunk are lost)", why);
}

/*
 * Next event of a member; TRACELOG_END when it is done, or found damaged
 * part way (the events before the damage are delivered on every pass).
 */
static inline tracelog_status slot_next(tracelog_reader *r, tl_merge_slot *m, tracelog_event *ev)
{
    const char *why = "";
    tracelog_status st = tl_chunk_next(&m->cur, ev, &why);
    if (st == TRACELOG_OK)
        return st;
    if (st != TRACELOG_END)
        chunk_damage(r, m, why);
    return TRACELOG_END;
}

/* What taking the next chunk of the log gave. */
typedef enum take_kind {
    TAKE_NONE,    /* the log has no more chunks */
    TAKE_DROPPED, /* a chunk that delivers nothing: the set goes on (its flag is not trusted) */
    TAKE_HELD,    /* a member, decoded */
    TAKE_CUT,     /* decoded, but past the set's limits: it starts the next set (carry) */
} take_kind;

typedef struct taken {
    take_kind kind;
    uint64_t seq;
    size_t defs;
} taken;

/*
 * A chunk decoded into slot set.n joins the set, unless the set's decoded
 * bytes or chunk count would exceed the limits (6.10): then it is kept
 * decoded to start the next set (MERGE_SET_TOO_LARGE, reported once).
 */
static take_kind join_set(tracelog_reader *r, tl_merge_slot *m)
{
    tl_merge_set *s = &r->set;
    uint64_t d = tl_chunk_decoded_size(&m->cur); /* at most max_chunk_size, as s->decoded */
    if (s->n > 0 && (s->n == TL_MERGE_SET_MAX || d > r->opt.max_chunk_size - s->decoded)) {
        r->carry = 1;
        uint16_t *done = r->src.seekable ? &r->chunks[m->index].reported : NULL;
        if (!done || !(*done & REPORTED_CUT))
            tl_reader_problem(r, TL_COND_MERGE_SET_TOO_LARGE, m->off, 0,
                              "merge set of %zu chunks, %llu decoded bytes: ends before this chunk of %llu bytes", s->n,
                              (unsigned long long)s->decoded, (unsigned long long)d);
        if (done)
            *done |= REPORTED_CUT;
        return TAKE_CUT;
    }
    s->n++;
    s->decoded += d;
    return TAKE_HELD;
}

/* Seekable: the chunks read, those before the end time's (tracelog_reader_set_end_time). */
static size_t chunks_read(const tracelog_reader *r)
{
    return r->has_end_chunk && r->end_chunk < r->nchunks ? r->end_chunk : r->nchunks;
}

/*
 * Seekable: verifies chunk i and opens it in m, as a read-ahead thread
 * loaded it if one did; then asks those threads for the chunks after it.
 * As decode_chunk; the chunk is marked bad when dropped.
 */
static tracelog_status load_indexed_chunk(tracelog_reader *r, size_t i, tl_merge_slot *m)
{
    chunk_ref *c = &r->chunks[i];
    if (c->bad)
        return TRACELOG_E_CORRUPT;
    m->index = i;
    tracelog_status st;
    tl_load_problem p;
    /* A load ahead that failed for want of memory or a read is tried again here: the
       error, if any, is the one a load on this thread gets now. */
    if (!r->ahead || !tl_read_ahead_take(r->ahead, i, r->chunks, chunks_read(r), m, &st, &p) ||
        st == TRACELOG_E_NOMEM || st == TRACELOG_E_IO) {
        tl_loader l = tl_reader_loader(r);
        st = tl_load_indexed(&l, c, m, &p);
    }
    if (st == TRACELOG_E_CORRUPT) {
        tl_reader_load_problem(r, c->offset, &p);
        c->bad = 1;
    }
    if (r->ahead && (st == TRACELOG_OK || st == TRACELOG_E_CORRUPT)) /* else chunk i is tried again */
        tl_read_ahead_queue(r->ahead, i + 1, r->chunks, chunks_read(r));
    return st;
}

/* Seekable: takes the next listed chunk. On an error, the same chunk is tried again by the next call. */
static tracelog_status take_indexed(tracelog_reader *r, taken *t)
{
    t->kind = TAKE_NONE;
    if (r->next_chunk >= chunks_read(r))
        return TRACELOG_OK;
    tl_merge_slot *m = tl_merge_slot_at(&r->set, r->set.n);
    if (!m)
        return TRACELOG_E_NOMEM;
    tracelog_status st = load_indexed_chunk(r, r->next_chunk, m);
    if (st == TRACELOG_E_NOMEM || st == TRACELOG_E_IO)
        return st;
    t->seq = r->chunks[r->next_chunk++].seq;
    t->kind = st == TRACELOG_OK ? join_set(r, m) : TAKE_DROPPED;
    return TRACELOG_OK;
}

/*
 * Pipe: handles blocks up to the next chunk and decodes it, then forgets its
 * block: what a set holds is its decoded chunks (8.7). A chunk that cannot be
 * read for want of memory or a failed read is reported and lost, and the
 * error returned; the next call goes on with the blocks after it.
 */
static tracelog_status take_streamed(tracelog_reader *r, taken *t)
{
    t->kind = TAKE_NONE;
    while (!r->stream_done) {
        tl_block_header h;
        uint64_t pos = r->stream_pos, limit = UINT64_MAX;
        tracelog_status why;
        scan_result s = tl_reader_scan_block(r, &pos, &limit, 0, &h, &why);
        if (s == SCAN_ERROR)
            return TRACELOG_E_IO;
        if (s == SCAN_END && r->src.follow && !r->follow_stopped) {
            /* Following: what ends the data is a block not written yet, not damage. The
               scan starts again at stream_pos (a followed file is read with pread). */
            tl_reader_follow_dry(r);
            return TRACELOG_OK;
        }
        tl_reader_report_skip(r, r->stream_pos, pos, why, s == SCAN_END);
        if (s == SCAN_END) {
            if (r->stream_pos > r->src.size) { /* the last block claimed more than the stream held */
                r->torn_tail = 1;
                tl_reader_problem(r, TL_COND_TORN_TAIL, r->stream_block, r->src.size - r->stream_block,
                                  "log ends inside a block (torn write)");
            }
            r->stream_done = 1;
            tl_reader_report_drops(r);
            break;
        }
        tl_reader_check_seq(r, pos, h.seq);
        r->stream_block = pos;
        r->stream_pos = pos + tl_block_span(h.payload_len);
        chunk_ref c;
        int is_chunk;
        tracelog_status st = tl_reader_handle_block(r, pos, &h, &c, &is_chunk);
        if (st != TRACELOG_OK)
            return st;
        if (!is_chunk) {
            tl_source_release(&r->src, r->stream_pos);
            continue;
        }
        r->stored_bytes += c.payload_len;
        r->raw_bytes += c.ch.raw_size + TL_CHUNK_HEADER_SIZE;
        r->nchunks++; /* counted only: a stream keeps no chunk list */
        r->merged_chunks += (c.ch.flags & TL_CHUNK_MERGE_NEXT) != 0;
        tl_merge_slot *m = tl_merge_slot_at(&r->set, r->set.n);
        tracelog_status dst = TRACELOG_E_NOMEM;
        if (m) {
            m->off = pos;
            m->seq = h.seq;
            m->defs_before = r->ndefs;
            dst = decode_chunk(r, m, &h, c.ch.codec);
        }
        tl_source_release(&r->src, r->stream_pos);
        if (dst == TRACELOG_E_NOMEM || dst == TRACELOG_E_IO) { /* a stream cannot come back to it */
            tl_reader_problem(r, dst == TRACELOG_E_NOMEM ? TL_COND_OUT_OF_MEMORY : TL_COND_READ_ERROR, pos,
                              tl_block_span(h.payload_len), "%s: chunk skipped", tracelog_strerror(dst));
            return dst;
        }
        t->seq = h.seq;
        t->defs = m->defs_before;
        t->kind = dst == TRACELOG_OK ? join_set(r, m) : TAKE_DROPPED;
        return TRACELOG_OK;
    }
    return TRACELOG_OK;
}

/* The set is complete: the thread definitions before its last chunk apply, then the merge starts. */
static tracelog_status start_set(tracelog_reader *r)
{
    tl_merge_set *s = &r->set;
    if (s->n > 0) {
        tracelog_status st = r->src.seekable ? sync_threads(r, r->set_last_seq) : apply_defs(r, r->set_last_defs);
        if (st != TRACELOG_OK)
            return st;
    }
    r->complete = 0;
    r->advance = 0;
    r->live = s->n;
    if (s->n > 1) /* a set of one is read straight from its cursor */
        tl_merge_start(s);
    return TRACELOG_OK;
}

/*
 * Loads the rest of the set: chunks until a member without MERGE_NEXT, a
 * chunk past the set's limits, or the end of the log; then starts it.
 * r->live is 0 afterwards only at the end of the log.
 */
static tracelog_status load_set(tracelog_reader *r)
{
    while (!r->complete) {
        taken t = {0};
        tracelog_status st = r->src.seekable ? take_indexed(r, &t) : take_streamed(r, &t);
        if (st != TRACELOG_OK)
            return st;
        if (t.kind == TAKE_NONE && r->follow_dry)
            return TRACELOG_END; /* following: the set's next chunk is not written yet; loaded on by the next call */
        if (t.kind == TAKE_NONE && r->hold_open_set && r->set.n &&
            (r->set.slot[r->set.n - 1].cur.h.flags & TL_CHUNK_MERGE_NEXT))
            return TRACELOG_END; /* its other chunks are not written yet: held back */
        if (t.kind == TAKE_HELD || t.kind == TAKE_DROPPED) {
            r->set_last_seq = t.seq;
            r->set_last_defs = t.defs;
        }
        r->complete = t.kind == TAKE_NONE || t.kind == TAKE_CUT ||
                      (t.kind == TAKE_HELD && !(r->set.slot[r->set.n - 1].cur.h.flags & TL_CHUNK_MERGE_NEXT));
    }
    return start_set(r);
}

/* The set was delivered: the chunk that ended it early, if any, starts the next one. */
static void set_done(tracelog_reader *r)
{
    tl_merge_set *s = &r->set;
    r->live = 0;
    if (r->carry) {
        tl_merge_slot t = s->slot[0];
        s->slot[0] = s->slot[s->n];
        s->slot[s->n] = t;
    }
    tl_merge_clear(s, r->opt.max_chunk_size);
    if (r->carry) {
        r->carry = 0;
        s->n = 1;
        s->decoded = tl_chunk_decoded_size(&s->slot[0].cur);
        r->set_last_seq = s->slot[0].seq;
        r->set_last_defs = s->slot[0].defs_before;
        r->complete = !(s->slot[0].cur.h.flags & TL_CHUNK_MERGE_NEXT);
    }
}

/* Forgets the set being read (rewind, seek): reading starts again at next_chunk. */
static void set_reset(tracelog_reader *r)
{
    r->carry = 0;
    r->complete = 0;
    set_done(r);
    r->has_peeked = 0;
}

/*
 * Next event of a set of several chunks: the least (timestamp, member) of
 * their next events. The member delivering goes on while its next event
 * comes before s->bound, the least key of the others (one comparison: runs
 * of one chunk's events are common); otherwise it goes back into the heap,
 * and members start (their first event read) once their (min_ts, member)
 * comes before the heap's least key. Not inlined: in tracelog_reader_next
 * it made the loop of sets of one chunk 7% slower (ptlog verify, 20 M
 * events).
 */
__attribute__((noinline)) static tracelog_status merge_next(tracelog_reader *r, tracelog_event *ev)
{
    tl_merge_set *s = &r->set;
    if (r->advance) { /* the event delivered last was cur's: its next one, into ev */
        uint32_t c = s->cur;
        tl_merge_slot *m = &s->slot[c];
        if (slot_next(r, m, ev) == TRACELOG_OK) {
            uint64_t ts = ev->timestamp_ns;
            if (ts < s->bound.ts || (ts == s->bound.ts && c < s->bound.id))
                return TRACELOG_OK;
            m->next = *ev;
            tl_merge_key k = {ts, c};
            if (s->nheap > 0 && (s->first_waiting == s->nwaiting ||
                                 tl_heap_before(s->heap[0], tl_merge_waiting(s)))) {
                /* the heap's least goes first: it trades places with cur, one sift */
                s->cur = tl_heap_replace(s->heap, s->nheap, k).id;
                tl_merge_set_bound(s);
                *ev = s->slot[s->cur].next;
                return TRACELOG_OK;
            }
            tl_merge_push(s, c);
        }
        r->advance = 0;
    }
    while (s->first_waiting < s->nwaiting &&
           (s->nheap == 0 || tl_heap_before(tl_merge_waiting(s), s->heap[0]))) {
        uint32_t w = tl_merge_waiting(s).id;
        s->first_waiting++;
        if (slot_next(r, &s->slot[w], &s->slot[w].next) == TRACELOG_OK)
            tl_merge_push(s, w);
    }
    if (s->nheap == 0)
        return TRACELOG_END;
    s->cur = tl_heap_pop(s->heap, &s->nheap).id;
    tl_merge_set_bound(s);
    *ev = s->slot[s->cur].next;
    r->advance = 1;
    return TRACELOG_OK;
}

/* Stream open: reads the first set so attributes and names are known. */
tracelog_status tl_reader_stream_prime(tracelog_reader *r)
{
    r->stream_pos = r->hdr.header_size;
    tracelog_status st = load_set(r);
    return st == TRACELOG_END ? TRACELOG_OK : st; /* following a log with no complete set yet */
}

tracelog_status tracelog_reader_next(tracelog_reader *r, tracelog_event *ev)
{
    if (!r || !ev)
        return TRACELOG_E_INVAL;
    if (r->has_peeked) {
        *ev = r->peeked;
        r->has_peeked = 0;
        return TRACELOG_OK;
    }
    r->follow_dry = 0;
    for (;;) {
        if (r->live == 1) { /* the common case, as cheap as reading one chunk */
            if (slot_next(r, &r->set.slot[0], ev) == TRACELOG_OK) {
                ev->kernel_tid = kernel_tid_of_key(r, &r->set.slot[0].cur, ev);
                return TRACELOG_OK;
            }
            set_done(r);
        } else if (r->live > 1) {
            if (merge_next(r, ev) == TRACELOG_OK) { /* the member's last event read is the one delivered */
                ev->kernel_tid = kernel_tid_of_key(r, &r->set.slot[r->set.cur].cur, ev);
                return TRACELOG_OK;
            }
            set_done(r);
        }
        tracelog_status st = load_set(r);
        if (st != TRACELOG_OK)
            return st;
        if (r->live == 0)
            return TRACELOG_END;
    }
}

tracelog_status tracelog_reader_rewind(tracelog_reader *r)
{
    if (!r)
        return TRACELOG_E_INVAL;
    if (!r->src.seekable)
        return TRACELOG_E_NOT_SEEKABLE;
    set_reset(r);
    r->next_chunk = r->begin_chunk;
    return TRACELOG_OK;
}

/* The first chunk at or after i that starts a set as the chunk headers delimit sets (nchunks: none). */
static size_t set_start_from(const tracelog_reader *r, size_t i)
{
    while (i > 0 && i < r->nchunks && (r->chunks[i - 1].ch.flags & TL_CHUNK_MERGE_NEXT))
        i++;
    return i;
}

tracelog_status tracelog_reader_read_range(tracelog_reader *r, uint64_t first, uint64_t end)
{
    if (!r || first > end)
        return TRACELOG_E_INVAL;
    if (!r->src.seekable)
        return TRACELOG_E_NOT_SEEKABLE;
    if (end > r->nchunks)
        return TRACELOG_E_INVAL;
    r->begin_chunk = set_start_from(r, (size_t)first);
    r->end_chunk = set_start_from(r, (size_t)end);
    r->has_end_chunk = 1;
    set_reset(r);
    r->next_chunk = r->begin_chunk;
    return TRACELOG_OK;
}

/*
 * From the last chunk back, while every event of the chunks seen is at or
 * after ts (each chunk's smallest timestamp bounds its events: the reader
 * checks them against it), then on to the end of a merge set, read whole.
 */
tracelog_status tracelog_reader_set_end_time(tracelog_reader *r, uint64_t ts)
{
    if (!r)
        return TRACELOG_E_INVAL;
    if (!r->src.seekable)
        return TRACELOG_E_NOT_SEEKABLE;
    size_t end = r->nchunks;
    uint64_t least = UINT64_MAX;
    while (end > 0) {
        uint64_t m = r->chunks[end - 1].ch.min_ts;
        least = m < least ? m : least;
        if (least < ts)
            break;
        end--;
    }
    r->end_chunk = set_start_from(r, end);
    r->has_end_chunk = ts != UINT64_MAX;
    return TRACELOG_OK;
}

/* The largest max_ts up to each chunk: nondecreasing, so time seek can bisect it whatever the log. */
static tracelog_status build_reach(tracelog_reader *r)
{
    if (r->reach || r->nchunks == 0)
        return TRACELOG_OK;
    r->reach = malloc(r->nchunks * sizeof *r->reach);
    if (!r->reach)
        return TRACELOG_E_NOMEM;
    uint64_t top = 0;
    for (size_t i = 0; i < r->nchunks; i++)
        r->reach[i] = top = r->chunks[i].ch.max_ts > top ? r->chunks[i].ch.max_ts : top;
    return TRACELOG_OK;
}

/*
 * Starts at the set, as the chunk headers delimit sets, of the first chunk
 * that reaches ts: every event of the chunks before that set is earlier
 * than ts, and reading a set from its first chunk merges it as a whole read
 * does.
 */
tracelog_status tracelog_reader_seek_time(tracelog_reader *r, uint64_t ts)
{
    if (!r)
        return TRACELOG_E_INVAL;
    if (!r->src.seekable)
        return TRACELOG_E_NOT_SEEKABLE;
    tracelog_status st = build_reach(r);
    if (st != TRACELOG_OK)
        return st;
    size_t lo = 0, hi = r->nchunks; /* first chunk that reaches ts */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->reach[mid] < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    while (lo > 0 && lo < r->nchunks && (r->chunks[lo - 1].ch.flags & TL_CHUNK_MERGE_NEXT))
        lo--;
    if (lo < r->begin_chunk) /* read_range: its first set */
        lo = r->begin_chunk;
    set_reset(r);
    r->next_chunk = lo;
    tracelog_event ev;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK)
        if (ev.timestamp_ns >= ts) {
            r->peeked = ev;
            r->has_peeked = 1;
            break;
        }
    return st == TRACELOG_END ? TRACELOG_OK : st;
}
