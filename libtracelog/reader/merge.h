/*
 * A merge set being read (format-spec/ptl-format.md 6.10): the decoded
 * chunks of one set, each with its own cursor, and the heap that picks the
 * next event of the merge. The reader (iterate.c) decides which chunks are
 * members and advances the cursors (it reports what they find); this file
 * holds their memory and the order.
 */
#ifndef TRACELOG_READER_MERGE_H
#define TRACELOG_READER_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/heap.h"
#include "format/chunk.h"

#define TL_MERGE_SET_MAX 1024 /* chunks in a set (6.10) */

typedef struct tl_merge_slot {
    tl_chunk_cursor cur;
    tl_buf payload;       /* a stored (codec 0) chunk's payload: cur points into it */
    tracelog_event next;  /* merging, in the heap: the chunk's next event */
    uint64_t off;         /* its block's offset (problems) */
    uint64_t seq;         /* its block's seq (thread definitions, seekable) */
    size_t index;         /* its place in the chunk list (seekable) */
    size_t defs_before;   /* thread definitions read before it (pipe) */
} tl_merge_slot;

/* A place in the merge order: a timestamp and a member (id: its place in delivery order). */
typedef tl_heap_key tl_merge_key;

/*
 * The merge (6.10): the member delivering (cur), the members that have
 * started, in a heap on (next timestamp, member), and those that have not,
 * by (min_ts, member). A member's events are all at or after its min_ts, so
 * one that has not started cannot win before the least of those keys: it
 * joins the heap only then, and the heap holds the members whose time
 * ranges overlap where the merge is (about one per writer thread when each
 * one's chunks follow each other in time) rather than all of the set's.
 */
typedef struct tl_merge_set {
    tl_merge_slot *slot;  /* members in delivery order, then possibly the chunk that starts the next set */
    size_t cap;           /* slots allocated */
    size_t n;             /* members decoded so far */
    uint64_t decoded;     /* their decoded bytes (tl_chunk_decoded_size) */
    tl_merge_key *heap;   /* merging: started members but cur, by their next event, least first */
    size_t nheap;
    tl_merge_key *waiting; /* merging: members not started, by (min_ts, member) */
    size_t nwaiting, first_waiting; /* those from first_waiting on are still waiting */
    uint32_t cur;         /* merging: the member whose event was delivered last */
    tl_merge_key bound;   /* the least key of the others: cur's next event goes first while before it */
} tl_merge_set;

/* Slot i, allocated if needed (i <= TL_MERGE_SET_MAX). NULL when out of memory. */
tl_merge_slot *tl_merge_slot_at(tl_merge_set *s, size_t i);

/*
 * Ends the set: no member. Releases the buffers of slots other than the
 * first when they hold more than `keep` bytes together, so that what a large
 * set took is not kept for every later one (slot 0 serves sets of one chunk).
 */
void tl_merge_clear(tl_merge_set *s, uint64_t keep);

void tl_merge_free(tl_merge_set *s);

/* Starts merging the s->n members: all waiting, none started. */
void tl_merge_start(tl_merge_set *s);

/* The waiting member that may start first (nwaiting > first_waiting). */
static inline tl_merge_key tl_merge_waiting(const tl_merge_set *s) { return s->waiting[s->first_waiting]; }

/* Adds started member m, whose next event is in its slot, to the heap. */
static inline void tl_merge_push(tl_merge_set *s, uint32_t m)
{
    tl_heap_push(s->heap, &s->nheap, (tl_merge_key){s->slot[m].next.timestamp_ns, m});
}

/* s->bound: the least of the heap's least key and the first waiting member's. */
static inline void tl_merge_set_bound(tl_merge_set *s)
{
    tl_merge_key b = {UINT64_MAX, UINT32_MAX}; /* nothing else: cur goes on to its end */
    if (s->nheap)
        b = s->heap[0];
    if (s->first_waiting < s->nwaiting && tl_heap_before(tl_merge_waiting(s), b))
        b = tl_merge_waiting(s);
    s->bound = b;
}

#endif
