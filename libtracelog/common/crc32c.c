/*
 * CRC-32C of every block and header: the SSE4.2 crc32 instruction where the
 * CPU has it, else slicing-by-8 tables (eight bytes a step), built once.
 */
#include "common/crc32c.h"

#include <pthread.h>
#include <string.h>

/* Slicing-by-8 tables, built once; the SSE4.2 instruction is used when present. */
static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static int have_sse42;

static void build_tables(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
        table[0][i] = c;
    }
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
