/*
 * A merge set being read (format-spec/ptl-format.md 6.10): the decoded
 * chunks of one set, each with its own cursor, and the heap that picks the
 * next event of the merge. The reader (reader.c) decides which chunks are
 * members and advances the cursors (it reports what they find); this file
 * holds their memory and the order.
 */
#ifndef TRACELOG_READER_MERGE_H
#define TRACELOG_READER_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "format/chunk.h"

#define TL_MERGE_SET_MAX 1024 /* chunks in a set (6.10) */

typedef struct tl_merge_slot {
    tl_chunk_cursor cur;
    tl_buf payload;       /* a stored (codec 0) chunk's payload: cur points into it */
    tracelog_event next;  /* merging: the chunk's next event */
    uint64_t off;         /* its block's offset (problems) */
    uint64_t seq;         /* its block's seq (thread definitions, seekable) */
    size_t index;         /* its place in the chunk list (seekable) */
    size_t defs_before;   /* thread definitions read before it (pipe) */
} tl_merge_slot;

typedef struct tl_merge_set {
    tl_merge_slot *slot;  /* members in delivery order, then possibly the chunk that starts the next set */
    size_t cap;           /* slots allocated */
    size_t n;             /* members decoded so far */
    uint64_t decoded;     /* their decoded bytes (tl_chunk_decoded_size) */
    uint32_t *heap;       /* merging: members with a next event, least (timestamp, slot) first */
    size_t nheap;
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

/* Adds member i, whose next event is in its slot, to the heap. */
void tl_merge_push(tl_merge_set *s, uint32_t i);

/* The member whose next event comes first (the heap is not empty). */
static inline uint32_t tl_merge_top(const tl_merge_set *s) { return s->heap[0]; }

/* After the top member's next event changed: restores the order. */
void tl_merge_top_moved(tl_merge_set *s);

/* Removes the top member (its chunk has no event left). */
void tl_merge_pop(tl_merge_set *s);

#endif
