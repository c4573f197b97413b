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

void pb_varint(pb_buf *b, uint64_t v);
/* A varint field; int64 values are their two's complement (10 bytes when negative), as protobuf says. */
void pb_uint(pb_buf *b, uint32_t field, uint64_t v);
void pb_int(pb_buf *b, uint32_t field, int64_t v);
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
size_t pb_begin(pb_buf *b, uint32_t field);
void pb_end(pb_buf *b, size_t mark);

/* Bytes of the varint encoding of v. */
size_t pb_varint_size(uint64_t v);
/* Encodes v at p (room for 10 bytes); its size. */
size_t pb_varint_put(unsigned char *p, uint64_t v);

#endif
