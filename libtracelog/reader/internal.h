/*
 * The reader's own interface (format-spec/ptl-format.md section 8): the
 * reader struct and the functions its files share. Only the files of
 * reader/ may include it; everything else reads logs through
 * include/tracelog/reader.h.
 *
 *   reader.c   the public entry points: open, close, the queries; problems
 *   scan.c     the blocks: finding, reading, handling them; the sequential open scan
 *   tables.c   what the small blocks define: metadata, event types, threads, status
 *   ring.c     the open scan of a ring (LOOP) log: segments, recovery (8.5)
 *   follow.c   following a file being written: open, wait, stop
 *   load.c     loading one chunk, its problems returned rather than recorded
 *   read_ahead.c  the threads that load the next chunks while events are delivered
 *   iterate.c  reading events: merge sets, next, rewind, seek (its public entry
 *              points are there, with the inline functions next calls per event)
 *
 * merge.c (merge sets) and source.c (file, pipe or read function) have
 * their own headers and do not need this one.
 */
#ifndef TRACELOG_READER_INTERNAL_H
#define TRACELOG_READER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <zstd.h>

#include "common/buf.h"
#include "format/chunk.h"
#include "format/condition.h"
#include "format/event_types.h"
#include "format/format.h"
#include "format/threads.h"
#include "reader/merge.h"
#include "reader/source.h"
#include "tracelog/reader.h"

typedef struct chunk_ref {
    uint64_t offset; /* of the block header */
    uint64_t seq;
    uint32_t payload_len;
    uint16_t bad;      /* cannot be opened: skipped whole (reported once) */
    uint16_t reported; /* REPORTED_*: what later passes do not report again */
    tl_chunk_header ch;
} chunk_ref;

enum {
    REPORTED_DAMAGE = 1, /* damage inside the chunk (BAD_EVENT, CHUNK_TRAILING_DATA) */
    REPORTED_CUT = 2,    /* MERGE_SET_TOO_LARGE at this chunk */
};

_Static_assert(TL_COND_COUNT <= 256, "a problem's condition is kept in a byte");
/* A thread definition and the block that made it (seekable logs keep them all). */
typedef struct thread_def_at {
    tl_thread_def d;
    uint64_t seq;   /* of its THREADS block: it names the threads of later chunks */
    uint64_t order; /* keeps the order of definitions with the same seq when sorted */
} thread_def_at;

/* A schema value ignored for an id: key id + 1 (0: free slot). */
typedef struct tl_ignored_slot {
    uint64_t key;
    uint64_t tag;
} tl_ignored_slot;

struct tracelog_reader {
    tl_source src;
    int own_fd;
    tracelog_reader_options opt;
    tl_file_header hdr;
    uint32_t salt32;
    tracelog_metadata meta;
    int have_meta;

    tracelog_event_types types; /* a later definition renames; names handed out stay valid */
    tl_ignored_slot *ignored;   /* id -> tag of the schema value last ignored for it (open addressing) */
    size_t ignored_n, ignored_cap;
    uint64_t types_block;       /* offset of the block whose event types are being decoded */

    /* Threads: the map gives the kernel tid of the events being read. Every
       definition is kept (defs, at most max_threads); the map holds those
       made before the last chunk of the set being read (6.10): by seq on a
       seekable file, by arrival on a pipe. */
    tl_thread_map threads;
    tl_thread_names names;  /* of the definitions (format 1.2) */
    thread_def_at *defs;
    size_t ndefs, defs_cap, next_def;
    uint64_t threads_seq;  /* the map holds the definitions made before this seq */
    tl_thread_def cache;   /* a column body's last lookup, with its name (ktid 0: none; cleared when threads changes) */
    uint64_t threads_gen;  /* counts the changes of threads, from 1 (a chunk key's memo, tl_key_read.thread) */
    const tl_thread_def *last; /* in threads: the last event's thread, read through its key (NULL: none) */

    chunk_ref *chunks;
    size_t nchunks, chunks_cap;
    uint64_t merged_chunks; /* of them, with MERGE_NEXT */

    tracelog_problem *problems;
    uint8_t *conditions;   /* tl_condition of each problem kept in detail */
    size_t nproblems;
    uint64_t problem_total, bytes_skipped;

    tracelog_log_status status;
    uint64_t status_seq;
    int have_status;
    int have_trailer, torn_tail;  /* clean = trailer is the newest block and nothing torn follows */
    int drops_reported;
    uint64_t trailer_seq, max_seq;
    uint64_t blocks, stored_bytes, raw_bytes;

    /* Iteration: merge sets (6.10), loaded one chunk at a time so that an
       error (memory, I/O) can be returned and the load resumed. */
    size_t next_chunk;     /* seekable: index of the next chunk to load */
    uint64_t stream_pos;   /* stream: offset of the next block */
    uint64_t stream_block; /* stream: offset of the last block handled */
    uint64_t last_seq;     /* sequential layout: seq of the last valid block */
    int have_last_seq;
    int stream_done;
    tl_merge_set set;      /* the set being loaded or delivered */
    size_t live;           /* members being delivered (0: none, the set is being loaded) */
    int complete;          /* every member is loaded: threads and merge to start */
    int advance;           /* merging: the event delivered last was set.cur's, its next one is due */
    int carry;             /* slot set.n holds the decoded chunk that starts the next set */
    uint64_t set_last_seq; /* seq of the set's last chunk so far (seekable: thread definitions) */
    size_t set_last_defs;  /* pipe: definitions read before the set's last chunk so far */
    uint64_t *reach;       /* seekable, built at the first time seek: the largest max_ts up to each chunk */
    size_t begin_chunk;    /* seekable, tracelog_reader_read_range: where rewind and seek start (0: the log's) */
    size_t end_chunk;      /* seekable, tracelog_reader_set_end_time or read_range: the chunks from here on are not read */
    int has_end_chunk;
    tracelog_event peeked; /* seek_time found it: next() returns it first */
    int has_peeked;
    tl_buf payload;
    ZSTD_DCtx *dctx;
    struct tl_read_ahead *ahead; /* tracelog_reader_set_read_ahead: NULL when off */
    size_t ahead_n;              /* its threads */

    /* Following a file being written (follow.c): the stream reading above, where the end
       of the data is "not yet" until tracelog_reader_follow_stop. */
    int follow_dry;       /* the last take found no complete block: next() says TRACELOG_END for now */
    int follow_stopped;   /* no more data will come: the end of the data is the end of the log */
    int hold_open_set;    /* a set the last chunk leaves open ends reading (tracelog_reader_hold_open_set) */
    uint64_t follow_size; /* the file's size when it ran dry: follow_wait waits for more */
};

/* ---- reader.c ------------------------------------------------------------ */

/* Records a problem (counted always, kept in detail up to max_problems). */
void tl_reader_problem(tracelog_reader *r, tl_condition cond, uint64_t off, uint64_t len, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* ---- scan.c -------------------------------------------------------------- */

typedef enum scan_result { SCAN_BLOCK, SCAN_END, SCAN_ERROR } scan_result;

int tl_reader_all_zero(const uint8_t *p, size_t n);
/* The next valid block header at or after *pos, before *limit (see scan.c). */
scan_result tl_reader_scan_block(tracelog_reader *r, uint64_t *pos, uint64_t *limit, int quiet_zeros,
                                 tl_block_header *h, tracelog_status *why);
/* Reports [from, to) skipped: damage, or a torn tail when at_end. */
void tl_reader_report_skip(tracelog_reader *r, uint64_t from, uint64_t to, tracelog_status why, int at_end);
/* One valid block: a small one applied; a chunk returned through *chunk_out, *is_chunk set. */
tracelog_status tl_reader_handle_block(tracelog_reader *r, uint64_t off, const tl_block_header *h,
                                       chunk_ref *chunk_out, int *is_chunk);
/* One valid block of a seekable file's open scan: handled, and listed if it is a chunk. */
tracelog_status tl_reader_index_block(tracelog_reader *r, uint64_t off, const tl_block_header *h);
/* A sequential log's blocks are numbered one by one: a gap is reported. */
void tl_reader_check_seq(tracelog_reader *r, uint64_t off, uint64_t seq);
/* The open scan of a sequential log on a seekable file. */
tracelog_status tl_reader_scan_sequential(tracelog_reader *r);

/* ---- load.c -------------------------------------------------------------- */

/* What a load found wrong: the problem its caller records at the block's offset. */
typedef struct tl_load_problem {
    tl_condition cond;
    uint64_t len;
    char message[sizeof ((tracelog_problem *)0)->message];
} tl_load_problem;

/* Records what a load found wrong (reader.c, beside tl_reader_problem), at the block's offset off. */
void tl_reader_load_problem(tracelog_reader *r, uint64_t off, const tl_load_problem *p);

/* What loading needs of a reader; each thread that loads has its own dctx and scratch. */
typedef struct tl_loader {
    tl_source *src;  /* seekable when shared with the read-ahead threads: read with pread only */
    const tracelog_reader_options *opt;
    uint32_t salt32;
    ZSTD_DCtx *dctx;
    tl_buf *scratch; /* a compressed payload while it is decompressed */
    int near;        /* the open scan's: read through the source's window (tl_source_read_near) */
} tl_loader;

/* The loader of the reader's own thread: its dctx, and r->payload as scratch. */
static inline tl_loader tl_reader_loader(tracelog_reader *r)
{
    return (tl_loader){&r->src, &r->opt, r->salt32, r->dctx, &r->payload, 0};
}

/*
 * A block's payload into buf, verified. TRACELOG_OK; TRACELOG_E_CORRUPT with
 * *p filled (too large, file shrank, checksum); TRACELOG_E_NOMEM; TRACELOG_E_IO.
 */
tracelog_status tl_load_payload(const tl_loader *l, uint64_t off, const tl_block_header *h, tl_buf *buf,
                                tl_load_problem *p);
/* The chunk of block h at m->off, verified and opened in m's cursor. As tl_load_payload. */
tracelog_status tl_load_chunk(const tl_loader *l, tl_merge_slot *m, const tl_block_header *h, uint8_t codec,
                              tl_load_problem *p);
/* A listed chunk: its header read and checked again, then tl_load_chunk (m->off and m->seq set). */
tracelog_status tl_load_indexed(const tl_loader *l, const chunk_ref *c, tl_merge_slot *m, tl_load_problem *p);

/* ---- read_ahead.c ---------------------------------------------------------- */

typedef struct tl_read_ahead tl_read_ahead;

/* Starts n threads (seekable logs only). NULL when out of memory or a thread could not start. */
tl_read_ahead *tl_read_ahead_start(tracelog_reader *r, size_t n);
/* Stops and joins the threads, frees what they held. NULL is a no-op. */
void tl_read_ahead_stop(tl_read_ahead *a);
/*
 * Asks idle threads for the chunks of the window from `from` on (as many
 * chunks as threads, and one for the caller's slot; bad chunks skipped);
 * loaded chunks outside the window are dropped.
 */
void tl_read_ahead_queue(tl_read_ahead *a, size_t from, const chunk_ref *chunks, size_t nchunks);

/*
 * Chunk `index` as a thread (or the caller, helping) loaded it, into m
 * (whose buffers that slot keeps for its next load), waiting for the load to
 * end, and meanwhile loading a later chunk of the window (of the nchunks of
 * chunks) itself: 1 with its status and problem; 0 when nobody was asked for it.
 */
int tl_read_ahead_take(tl_read_ahead *a, size_t index, const chunk_ref *chunks, size_t nchunks, tl_merge_slot *m,
                       tracelog_status *st, tl_load_problem *p);
/* Chunks taken as loaded ahead, and of them those the caller loaded while it waited (tests). */
unsigned long tl_read_ahead_hits(const tl_read_ahead *a);
unsigned long tl_read_ahead_helped(const tl_read_ahead *a);

/* ---- tables.c ------------------------------------------------------------ */

/* Each applies the block whose payload is in r->payload (read and verified), at offset off. */
void tl_reader_take_metadata(tracelog_reader *r, uint64_t off);
void tl_reader_take_types(tracelog_reader *r, uint64_t off);
void tl_reader_take_threads(tracelog_reader *r, uint64_t off, uint64_t seq);
void tl_reader_take_status(tracelog_reader *r, uint64_t off, uint64_t seq);
void tl_reader_take_trailer(tracelog_reader *r, uint64_t off, uint64_t seq);
/* After the open scan: thread definitions in the order they were written. */
void tl_reader_sort_defs(tracelog_reader *r);
/* The names and threads the writer had no room for (final status): reported once. */
void tl_reader_report_drops(tracelog_reader *r);

/* A log full policy that METADATA does not give is the one the layout implies. */
static inline tracelog_policy tl_reader_layout_policy(const tracelog_reader *r)
{
    return r->hdr.layout == TL_LAYOUT_RING ? TRACELOG_POLICY_LOOP : TRACELOG_POLICY_APPEND;
}

/* ---- ring.c -------------------------------------------------------------- */

/* The open scan of a ring log: its blocks handled, its chunks listed in sequence order. */
tracelog_status tl_reader_scan_ring(tracelog_reader *r);

/* ---- iterate.c ----------------------------------------------------------- */

/* Opening a stream: reads the first set, so that attributes and names are known. */
tracelog_status tl_reader_stream_prime(tracelog_reader *r);

/* ---- follow.c ------------------------------------------------------------ */

/* The stream ran out of complete blocks while following: remembers the file's size then. */
void tl_reader_follow_dry(tracelog_reader *r);

#endif
