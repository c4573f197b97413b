/*
 * Merge sets (format-spec/ptl-format.md 6.10): slots and the merge order.
 *
 * The order is a binary min-heap of keys (next timestamp, member): the
 * member is its place in delivery order, so equal timestamps go to the
 * earlier chunk, and each chunk's events keep their order since only its
 * next event is in the heap. That is exactly the spec's rule, whatever the
 * timestamps. Members that have not started wait in a list sorted on
 * (min_ts, member), a lower bound of the key of each one's first event
 * (every event of a chunk is within [min_ts, max_ts], 6.7), so one joins
 * the heap only once its key may be the least (iterate.c, merge_next). A set
 * of one chunk never uses any of it.
 */
#include "reader/merge.h"

#include <stdlib.h>
#include <string.h>

tl_merge_slot *tl_merge_slot_at(tl_merge_set *s, size_t i)
{
    if (i < s->cap)
        return &s->slot[i];
    size_t cap = s->cap ? 2 * s->cap : 4;
    while (cap <= i)
        cap *= 2;
    if (cap > TL_MERGE_SET_MAX + 1)
        cap = TL_MERGE_SET_MAX + 1; /* the members and the chunk that starts the next set */
    if (i >= cap)
        return NULL;
    tl_merge_key *heap = realloc(s->heap, cap * sizeof *heap);
    if (!heap)
        return NULL;
    s->heap = heap;
    tl_merge_key *waiting = realloc(s->waiting, cap * sizeof *waiting);
    if (!waiting)
        return NULL;
    s->waiting = waiting;
    tl_merge_slot *slot = realloc(s->slot, cap * sizeof *slot);
    if (!slot)
        return NULL;
    memset(slot + s->cap, 0, (cap - s->cap) * sizeof *slot);
    s->slot = slot;
    s->cap = cap;
    return &s->slot[i];
}

static uint64_t slot_bytes(const tl_merge_slot *m)
{
    return m->payload.cap + m->cur.raw.cap + m->cur.rebuilt.cap + m->cur.keys_cap * sizeof *m->cur.keys;
}

static void slot_free(tl_merge_slot *m)
{
    tl_chunk_cursor_free(&m->cur);
    tl_buf_free(&m->payload);
}

void tl_merge_clear(tl_merge_set *s, uint64_t keep)
{
    uint64_t held = 0;
    for (size_t i = 1; i < s->cap; i++)
        held += slot_bytes(&s->slot[i]);
    if (held > keep)
        for (size_t i = 1; i < s->cap; i++)
            slot_free(&s->slot[i]);
    s->n = 0;
    s->decoded = 0;
    s->nheap = 0;
    s->nwaiting = s->first_waiting = 0;
}

void tl_merge_free(tl_merge_set *s)
{
    for (size_t i = 0; i < s->cap; i++)
        slot_free(&s->slot[i]);
    free(s->slot);
    free(s->heap);
    free(s->waiting);
    memset(s, 0, sizeof *s);
}

void tl_merge_start(tl_merge_set *s)
{
    /* Insertion sort: sets are small, and a writer's chunks mostly come in time order already. */
    tl_merge_key *w = s->waiting;
    for (uint32_t i = 0; i < s->n; i++) {
        tl_merge_key k = {s->slot[i].cur.h.min_ts, i};
        size_t j = i;
        for (; j > 0 && tl_heap_before(k, w[j - 1]); j--)
            w[j] = w[j - 1];
        w[j] = k;
    }
    s->nwaiting = s->n;
    s->first_waiting = 0;
    s->nheap = 0;
}

