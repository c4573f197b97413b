/* Growing arrays of any element type. */
#ifndef TRACELOG_ARRAY_H
#define TRACELOG_ARRAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/*
 * Returns v (an array of *cap elements of `size` bytes) with room for at
 * least `need` elements: reallocated with its capacity doubled (from 16)
 * until it fits, *cap updated. Returns v unchanged when it already fits, and
 * NULL when out of memory or when the size overflows (v is then still valid
 * and still the caller's). Usage:
 *     T *p = tl_grow(v, &cap, n + 1, sizeof *p);  if (!p) return NOMEM;  v = p;
 */
static inline void *tl_grow(void *v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return v;
    size_t n = *cap ? *cap : 16;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            return NULL;
        n *= 2;
    }
    if (n > SIZE_MAX / size)
        return NULL;
    void *p = realloc(v, n * size);
    if (p)
        *cap = n;
    return p;
}

#endif
