/* Decimal digits made several at a time in one 64-bit word (SWAR), without a loop or a table. */
#ifndef TRACELOG_DIGITS_H
#define TRACELOG_DIGITS_H

#include <stdint.h>

/*
 * The 8 decimal digits of v < 10^8 as ASCII bytes, the first in the lowest
 * byte, with no branch: v splits into two halves of 4 digits, each half into
 * two of 2, each into 2 digits, the lanes of one 64-bit word side by side
 * (the multiplications by 10486 / 2^20 and 103 / 2^10 are exact divisions by
 * 100 and 10 for lanes below 10^4 and 10^2, and no lane carries into the next).
 * Stored with htole64, the word is the text.
 */
static inline uint64_t tl_ascii8(uint32_t v)
{
    uint64_t x = v / 10000 | (uint64_t)(v % 10000) << 32;
    uint64_t hundreds = (x * 10486 >> 20) & 0x0000007f0000007full;
    x = hundreds | (x - hundreds * 100) << 16;
    uint64_t tens = (x * 103 >> 10) & 0x000f000f000f000full;
    x = tens | (x - tens * 10) << 8;
    return x + 0x3030303030303030ull;
}

/* The 4 decimal digits of v < 10^4 as ASCII bytes, the first in the lowest byte (tl_ascii8's second half). */
static inline uint32_t tl_ascii4(uint32_t v)
{
    uint32_t hundreds = v * 5243 >> 19; /* v / 100 for v < 10^4 */
    uint32_t x = hundreds | (v - hundreds * 100) << 16;
    uint32_t tens = (x * 103 >> 10) & 0x000f000fu;
    x = tens | (x - tens * 10) << 8;
    return x + 0x30303030u;
}

#endif
