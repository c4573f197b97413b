/* Little-endian loads/stores, LEB128 varints and short copies over bounded byte buffers. */
#ifndef TRACELOG_BYTES_H
#define TRACELOG_BYTES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t tl_load16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t tl_load32(const uint8_t *p)
{
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t tl_load64(const uint8_t *p)
{
    return (uint64_t)tl_load32(p) | ((uint64_t)tl_load32(p + 4) << 32);
}
static inline void tl_store16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static inline void tl_store32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void tl_store64(uint8_t *p, uint64_t v)
{
    tl_store32(p, (uint32_t)v);
    tl_store32(p + 4, (uint32_t)(v >> 32));
}

/*
 * An event's payload: up to 16 bytes copied inline with at most two
 * overlapping loads and stores of each width, longer ones by memcpy (a call
 * costs more than the copy at these sizes, and the trace point and the chunk
 * encoder copy one per event). Never reads outside [from, from + len).
 */
static inline void tl_copy_payload(uint8_t *to, const uint8_t *from, uint32_t len)
{
    if (len > 16) {
        memcpy(to, from, len);
    } else if (len >= 8) {
        uint64_t a, b;
        memcpy(&a, from, 8);
        memcpy(&b, from + len - 8, 8);
        memcpy(to, &a, 8);
        memcpy(to + len - 8, &b, 8);
    } else if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, from, 4);
        memcpy(&b, from + len - 4, 4);
        memcpy(to, &a, 4);
        memcpy(to + len - 4, &b, 4);
    } else if (len) {
        to[0] = from[0];
        to[len / 2] = from[len / 2];
        to[len - 1] = from[len - 1];
    }
}

#define TL_VARINT_MAX 10 /* bytes of the longest 64-bit varint */

/* Writes v as an unsigned LEB128 varint at p (room for TL_VARINT_MAX bytes); returns bytes written. */
static inline size_t tl_put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

/*
 * Reads a varint from [*p, end). Returns 0 and advances *p, or -1 if the
 * varint runs past end, is longer than 10 bytes, or overflows 64 bits.
 */
static inline int tl_get_varint(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
    const uint8_t *s = *p;
    if (s < end && *s < 0x80) { /* fast path: one byte */
        *out = *s;
        *p = s + 1;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned shift = 0; s < end && shift < 64; shift += 7) {
        uint8_t b = *s++;
        if (shift == 63 && b > 1)
            return -1;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *out = v;
            *p = s;
            return 0;
        }
    }
    return -1;
}

static inline uint64_t tl_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t tl_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static inline uint64_t tl_align8(uint64_t v) { return (v + 7) & ~(uint64_t)7; }

#endif
