/* Protocol buffers wire-format encoder (pb.h). */
#include <stdlib.h>
#include <string.h>

#include "pb.h"

void pb_reset(pb_buf *b)
{
    b->len = 0;
}

void pb_free(pb_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

unsigned char *pb_room_slow(pb_buf *b, size_t n)
{
    if (b->failed)
        return NULL;
    if (n > PB_MAX - b->len) {
        b->failed = 1;
        return NULL;
    }
    size_t cap = b->cap ? b->cap : 256;
    while (cap - b->len < n)
        cap *= 2;
    unsigned char *p = realloc(b->p, cap);
    if (!p) {
        b->failed = 1;
        return NULL;
    }
    b->p = p;
    b->cap = cap;
    return p + b->len;
}

size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static void tag(pb_buf *b, uint32_t field, unsigned wire)
{
    pb_varint(b, (uint64_t)field << 3 | wire);
}

void pb_double(pb_buf *b, uint32_t field, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    tag(b, field, PB_FIXED64);
    unsigned char *p = pb_room(b, 8);
    if (!p)
        return;
    for (int i = 0; i < 8; i++) /* little-endian, whatever the host */
        p[i] = (unsigned char)(u >> 8 * i);
    b->len += 8;
}

void pb_bytes(pb_buf *b, uint32_t field, const void *data, size_t n)
{
    tag(b, field, PB_LEN);
    pb_varint(b, n);
    unsigned char *p = pb_room(b, n);
    if (!p)
        return;
    if (n)
        memcpy(p, data, n);
    b->len += n;
}

void pb_string(pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

unsigned char *pb_append(pb_buf *b, size_t n)
{
    unsigned char *p = pb_room(b, n);
    if (p)
        b->len += n;
    return p;
}

void pb_end(pb_buf *b, size_t mark)
{
    if (b->failed)
        return;
    size_t n = b->len - mark, k = pb_varint_size(n);
    if (k > 1) { /* the one byte reserved is too few: move the message up */
        if (!pb_room(b, k - 1))
            return;
        memmove(b->p + mark + k - 1, b->p + mark, n);
        b->len += k - 1;
    }
    pb_varint_put(b->p + mark - 1, n);
}
