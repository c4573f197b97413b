/*
 * Merge sets (format-spec/ptl-format.md 6.10): slots and the merge order.
 *
 * The order is a binary min-heap of member indexes on (next timestamp,
 * index): the index is the member's place in delivery order, so equal
 * timestamps go to the earlier chunk, and each chunk's events keep their
 * order since only its next event is in the heap. That is exactly the
 * spec's rule, whatever the timestamps. A set of one chunk never uses it.
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
    uint32_t *heap = realloc(s->heap, cap * sizeof *heap);
    if (!heap)
        return NULL;
    s->heap = heap;
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
}

void tl_merge_free(tl_merge_set *s)
{
    for (size_t i = 0; i < s->cap; i++)
        slot_free(&s->slot[i]);
    free(s->slot);
    free(s->heap);
    memset(s, 0, sizeof *s);
}

static int before(const tl_merge_set *s, uint32_t a, uint32_t b)
{
    uint64_t x = s->slot[a].next.timestamp_ns, y = s->slot[b].next.timestamp_ns;
    return x < y || (x == y && a < b);
}

static void sift_down(tl_merge_set *s, size_t i)
{
    uint32_t *h = s->heap;
    for (;;) {
        size_t least = i, l = 2 * i + 1, r = l + 1;
        if (l < s->nheap && before(s, h[l], h[least]))
            least = l;
        if (r < s->nheap && before(s, h[r], h[least]))
            least = r;
        if (least == i)
            return;
        uint32_t t = h[i];
        h[i] = h[least];
        h[least] = t;
        i = least;
    }
}

void tl_merge_push(tl_merge_set *s, uint32_t m)
{
    uint32_t *h = s->heap;
    size_t i = s->nheap++;
    h[i] = m;
    while (i > 0 && before(s, h[i], h[(i - 1) / 2])) {
        uint32_t t = h[i];
        h[i] = h[(i - 1) / 2];
        h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

void tl_merge_top_moved(tl_merge_set *s) { sift_down(s, 0); }

void tl_merge_pop(tl_merge_set *s)
{
    s->heap[0] = s->heap[--s->nheap];
    sift_down(s, 0);
}
