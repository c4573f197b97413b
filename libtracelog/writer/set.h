/*
 * Merge sets (format-spec 6.10): several threads build the chunks of one
 * set at once, each from its own events (recorder/groups.c: a flusher per group
 * of lanes), and the writer writes them as one set, which readers deliver
 * merged by timestamp.
 *
 * Each thread appends to its own part (tl_set_append), which builds and
 * compresses chunks without a lock; a finished chunk is handed to the set,
 * which writes it under its lock. The set keeps the last chunk handed over
 * back until the next one comes, so that it knows which chunk is the set's
 * last (the one without MERGE_NEXT): tl_set_end writes it once every part
 * is finished (tl_set_part_finish). The set is the caller's time window:
 * the parts' events are all those stamped before one watermark.
 *
 * Thread-safety: a part belongs to one thread at a time; the set's lock
 * orders the writes. Between tl_set_end and the next append, the writer may
 * be used directly (its own chunks carry no flag).
 */
#ifndef TRACELOG_WRITER_SET_H
#define TRACELOG_WRITER_SET_H

#include <pthread.h>
#include <zstd.h>

#include "format/chunk.h"
#include "tracelog/writer.h"

/* A set's decoded bytes and chunks at most: what every reader merges whole (format-spec 6.10, 9.1). */
#define TL_SET_MAX_DECODED (64u << 20)
#define TL_SET_MAX_CHUNKS 1024u

typedef struct tl_set {
    tracelog_writer *w;
    pthread_mutex_t lock;
    tl_buf held;            /* the last chunk handed over, not written yet */
    uint32_t held_count;    /* its events; 0: none held */
    uint64_t decoded;       /* decoded bytes of the open set's chunks, the held one included */
    uint32_t chunks;        /* and their number */
    uint64_t ended_early;   /* sets ended before their window did, to stay within the limits */
    int merge;              /* several parts take part (tl_set_begin): else chunks go out as they come, without flag */
    tracelog_status error;  /* the first write error */
} tl_set;

typedef struct tl_set_part {
    tl_set *set;
    tl_chunk_builder chunk;
    ZSTD_CCtx *cctx;
    tl_buf out;
    uint32_t limit;         /* the writer's chunk body limit */
    uint64_t ktid, tid;     /* the last event's thread, known to the writer */
    uint32_t pid;
} tl_set_part;

int tl_set_init(tl_set *s, tracelog_writer *w); /* 0 or ENOMEM */
void tl_set_free(tl_set *s);
int tl_set_part_init(tl_set_part *p, tl_set *s); /* 0 or ENOMEM */
void tl_set_part_free(tl_set_part *p);

/*
 * Starts a set whose events several parts hold (merge = 1), or only one
 * (merge = 0: its chunks, already in time order, need no merging and are
 * written plain, so that a reader need not hold them all at once).
 */
void tl_set_begin(tl_set *s, int merge);
/* Appends one event (in timestamp order within the part). The writer's errors, TRACELOG_E_INVAL, _NOMEM. */
tracelog_status tl_set_append(tl_set_part *p, const tracelog_event *ev);
/* p's chunk and the thread it learnt last, as tl_writer_lane_target gives the writer's. */
tl_chunk_builder *tl_set_lane_target(tl_set_part *p, size_t *limit, tracelog_event *thread);
/* The part's last chunk, handed to the set: call when its share of the window is appended. */
tracelog_status tl_set_part_finish(tl_set_part *p);
/* Ends the set: its last chunk is written without MERGE_NEXT. Once every part is finished. */
tracelog_status tl_set_end(tl_set *s);

#endif
