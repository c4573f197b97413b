/*
 * pb.h - a protocol buffers wire-format encoder, for perfetto.c: just what
 * writing messages takes (varints, fixed64 doubles, length-delimited bytes
 * and nested messages), into a growing buffer. No schema, no reflection:
 * the caller names each field by its number.
 *
 * Errors are sticky: once an allocation failed (or a message grew past
 * PB_MAX), every call does nothing and pb_failed() says so, so that a
 * writer checks once per message.
 */
#ifndef PTLOG_PB_H
#define PTLOG_PB_H

#include <stddef.h>
#include <stdint.h>

#define PB_MAX ((size_t)1 << 30) /* largest buffer: a TracePacket is far smaller */

typedef struct pb_buf {
    unsigned char *p;
    size_t len, cap;
    int failed;
} pb_buf;

/* Wire types (protobuf encoding: tag = field << 3 | wire type). */
enum { PB_VARINT = 0, PB_FIXED64 = 1, PB_LEN = 2 };

void pb_reset(pb_buf *b);
void pb_free(pb_buf *b);
static inline int pb_failed(const pb_buf *b) { return b->failed; }

/* Room for n more bytes when the buffer must grow (or has failed); NULL then sets failed. */
unsigned char *pb_room_slow(pb_buf *b, size_t n);
/* Room for n more bytes at b->p + b->len; NULL once failed. Inline: a perfetto event writes a dozen fields. */
static inline unsigned char *pb_room(pb_buf *b, size_t n)
{
    return !b->failed && b->cap - b->len >= n ? b->p + b->len : pb_room_slow(b, n);
}

/* Encodes v at p (room for 10 bytes); its size. */
static inline size_t pb_varint_put(unsigned char *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline void pb_varint(pb_buf *b, uint64_t v)
{
    unsigned char *p = pb_room(b, 10);
    if (p)
        b->len += pb_varint_put(p, v);
}

/* A varint field; int64 values are their two's complement (10 bytes when negative), as protobuf says. */
static inline void pb_uint(pb_buf *b, uint32_t field, uint64_t v)
{
    unsigned char *p = pb_room(b, 20); /* the tag (a field number below 2^29: 5 bytes) and the value */
    if (p) {
        size_t n = pb_varint_put(p, (uint64_t)field << 3 | PB_VARINT);
        b->len += n + pb_varint_put(p + n, v);
    }
}

static inline void pb_int(pb_buf *b, uint32_t field, int64_t v) { pb_uint(b, field, (uint64_t)v); }
void pb_double(pb_buf *b, uint32_t field, double v);
void pb_bytes(pb_buf *b, uint32_t field, const void *p, size_t n);
void pb_string(pb_buf *b, uint32_t field, const char *s);
/* n more bytes for the caller to fill (inside a pb_begin/pb_end); NULL once failed. */
unsigned char *pb_append(pb_buf *b, size_t n);

/*
 * A nested message: pb_begin writes its tag and returns a mark for pb_end,
 * which writes the length in front of what was written since (most are
 * below 128 bytes: one byte reserved, moved only when longer).
 */
static inline size_t pb_begin(pb_buf *b, uint32_t field)
{
    unsigned char *p = pb_room(b, 6); /* the tag, and the length's one byte */
    if (!p)
        return 0;
    size_t n = pb_varint_put(p, (uint64_t)field << 3 | PB_LEN);
    p[n] = 0;
    b->len += n + 1;
    return b->len;
}
void pb_end(pb_buf *b, size_t mark);

/* Bytes of the varint encoding of v. */
size_t pb_varint_size(uint64_t v);

#endif
