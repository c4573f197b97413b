/*
 * Byte planes (format-spec/ptl-format.md 6.8.5): n rows of len bytes stored
 * as len planes of n bytes (byte b of every row, then byte b+1...). Shared by
 * the keyed body's writer and reader. With SSE2 (every x86-64), 16 rows of 16
 * bytes are transposed in registers; other shapes take the scalar loops.
 */
#ifndef TRACELOG_PLANES_H
#define TRACELOG_PLANES_H

#include <stdint.h>

#ifdef __SSE2__
#include <emmintrin.h>

/*
 * Transposes a 16x16 byte matrix held in 16 registers. Each round
 * interleaves row i with row i+8, which rotates the 8-bit (row, column)
 * index of every byte left by one bit: four rounds swap row and column.
 */
static inline void tl_transpose16(__m128i v[16])
{
    for (int round = 0; round < 4; round++) {
        __m128i t[16];
        for (int i = 0; i < 8; i++) {
            t[2 * i] = _mm_unpacklo_epi8(v[i], v[i + 8]);
            t[2 * i + 1] = _mm_unpackhi_epi8(v[i], v[i + 8]);
        }
        for (int i = 0; i < 16; i++)
            v[i] = t[i];
    }
}
#endif

#endif
