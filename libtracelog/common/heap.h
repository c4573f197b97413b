/*
 * A binary min-heap of (timestamp, id) keys, ties broken by id: the k-way
 * merge by time of the reader's merge sets (reader/merge.c) and of `ptlog
 * merge`'s inputs (tools/ptlog/merge.c). Header-only, like common/array.h
 * and common/text.h: static inline functions, nothing linked, so that ptlog
 * may include it. (The stream's consumer keeps its own heap of lane
 * indexes, one byte each, whose keys it holds anyway in its lanes' head
 * records: the merge of every event it hands out.)
 */
#ifndef TRACELOG_COMMON_HEAP_H
#define TRACELOG_COMMON_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_heap_key {
    uint64_t ts;
    uint32_t id;
} tl_heap_key;

static inline int tl_heap_before(tl_heap_key a, tl_heap_key b)
{
    return a.ts < b.ts || (a.ts == b.ts && a.id < b.id);
}

/* Moves h[i] down to its place among the n keys of h. */
static inline void tl_heap_sift_down(tl_heap_key *h, size_t n, size_t i)
{
    tl_heap_key k = h[i];
    for (;;) {
        size_t l = 2 * i + 1, least = l;
        if (l >= n)
            break;
        if (l + 1 < n && tl_heap_before(h[l + 1], h[l]))
            least = l + 1;
        if (!tl_heap_before(h[least], k))
            break;
        h[i] = h[least];
        i = least;
    }
    h[i] = k;
}

/* Adds k to the *n keys of h (room for one more is the caller's). */
static inline void tl_heap_push(tl_heap_key *h, size_t *n, tl_heap_key k)
{
    size_t i = (*n)++;
    while (i > 0 && tl_heap_before(k, h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = k;
}

/* Takes the least of the *n (at least one) keys of h out. */
static inline tl_heap_key tl_heap_pop(tl_heap_key *h, size_t *n)
{
    tl_heap_key top = h[0];
    h[0] = h[--*n];
    if (*n)
        tl_heap_sift_down(h, *n, 0);
    return top;
}

/* Puts k in place of the least of the n (at least one) keys of h, which it returns. */
static inline tl_heap_key tl_heap_replace(tl_heap_key *h, size_t n, tl_heap_key k)
{
    tl_heap_key top = h[0];
    h[0] = k;
    if (n > 1)
        tl_heap_sift_down(h, n, 0);
    return top;
}

#endif
