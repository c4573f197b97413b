/* A growable byte buffer. */
#ifndef TRACELOG_BUF_H
#define TRACELOG_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct tl_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
} tl_buf;

/* Makes room for `extra` more bytes after len. Returns 0, or -1 when out of memory. */
static inline int tl_buf_reserve(tl_buf *b, size_t extra)
{
    if (extra <= b->cap - b->len)
        return 0;
    if (extra > SIZE_MAX / 2 - b->len)
        return -1;
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < extra)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p)
        return -1;
    b->data = p;
    b->cap = cap;
    return 0;
}

static inline int tl_buf_append(tl_buf *b, const void *src, size_t n)
{
    if (tl_buf_reserve(b, n))
        return -1;
    if (n)
        memcpy(b->data + b->len, src, n);
    b->len += n;
    return 0;
}

static inline void tl_buf_free(tl_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

#endif
