/*
 * CRC-32C of every block and header: the SSE4.2 crc32 instruction where the
 * CPU has it, else slicing-by-8 tables (eight bytes a step), built once.
 *
 * The instruction has a latency of three cycles and a throughput of one, so
 * long inputs are cut into three interleaved stripes whose CRCs are
 * computed side by side and then combined: a CRC register is carried over
 * a stripe of zero bytes by one multiplication in GF(2), done with a table
 * (the same algebra as zlib's crc32_combine). About three times faster on
 * chunks (bench/README.md, "CRC").
 */
#include "common/crc32c.h"

#include <pthread.h>
#include <string.h>

/* Slicing-by-8 tables, built once; the SSE4.2 instruction is used when present. */
static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int have_sse42;

#define POLY 0x82F63B78u /* reflected */
#define STRIPE 512       /* bytes per stripe of the three-stripe loop; a power of two (stripe_shift) */

/* Appending STRIPE zero bytes to a register r: the XOR of stripe_shift[b][byte b of r]. */
static uint32_t stripe_shift[4][256];

/* The 32x32 GF(2) matrix op (op[k]: the image of bit k) applied to v. */
static uint32_t gf2_apply(const uint32_t op[32], uint32_t v)
{
    uint32_t r = 0;
    for (int k = 0; v; k++, v >>= 1)
        if (v & 1)
            r ^= op[k];
    return r;
}

/* The operator that appends 2^log2_bits zero bits to a register, by squaring the one-bit operator. */
static void zeros_operator(uint32_t op[32], int log2_bits)
{
    op[0] = POLY; /* one zero bit: r >> 1, and the polynomial when bit 0 falls off */
    for (int k = 1; k < 32; k++)
        op[k] = 1u << (k - 1);
    for (int i = 0; i < log2_bits; i++) {
        uint32_t sq[32];
        for (int k = 0; k < 32; k++)
            sq[k] = gf2_apply(op, op[k]);
        memcpy(op, sq, sizeof sq);
    }
}

static uint32_t shift_stripe(uint32_t r)
{
    return stripe_shift[0][r & 0xff] ^ stripe_shift[1][(r >> 8) & 0xff] ^ stripe_shift[2][(r >> 16) & 0xff] ^
           stripe_shift[3][r >> 24];
}

static void build_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (POLY & (0u - (c & 1)));
        table[0][i] = c;
    }
    uint32_t op[32];
    zeros_operator(op, __builtin_ctz(STRIPE * 8));
    for (uint32_t b = 0; b < 4; b++)
        for (uint32_t v = 0; v < 256; v++)
            stripe_shift[b][v] = gf2_apply(op, v << (8 * b));
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++)
            table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    have_sse42 = __builtin_cpu_supports("sse4.2");
#endif
}

static uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t len)
{
    while (len >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= crc;
        crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
              table[4][lo >> 24] ^ table[3][hi & 0xff] ^ table[2][(hi >> 8) & 0xff] ^
              table[1][(hi >> 16) & 0xff] ^ table[0][hi >> 24];
        p += 8;
        len -= 8;
    }
    while (len--)
        crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
    return crc;
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
    uint64_t c = crc;
    while (len >= 3 * STRIPE) {
        uint64_t c1 = 0, c2 = 0;
        for (size_t i = 0; i < STRIPE; i += 8) {
            uint64_t v0, v1, v2;
            memcpy(&v0, p + i, 8);
            memcpy(&v1, p + STRIPE + i, 8);
            memcpy(&v2, p + 2 * STRIPE + i, 8);
            c = __builtin_ia32_crc32di(c, v0);
            c1 = __builtin_ia32_crc32di(c1, v1);
            c2 = __builtin_ia32_crc32di(c2, v2);
        }
        /* crc(r, A B) = shift_|B|(crc(r, A)) ^ crc(0, B): the registers are linear in their input */
        c = shift_stripe(shift_stripe((uint32_t)c) ^ (uint32_t)c1) ^ (uint32_t)c2;
        p += 3 * STRIPE;
        len -= 3 * STRIPE;
    }
    while (len >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        len -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (len--)
        c32 = __builtin_ia32_crc32qi(c32, *p++);
    return c32;
}
#endif

uint32_t tl_crc32c(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&table_once, build_tables);
    crc = ~crc;
#if defined(__x86_64__) && defined(__GNUC__)
    if (have_sse42)
        return ~crc_hw(crc, data, len);
#endif
    return ~crc_soft(crc, data, len);
}
