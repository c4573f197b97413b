/*
 * ptlog's integer text (tools/ptlog/timefmt.c), which every dump and JSON
 * line uses several times: ptlog_fmt_u64 against printf for every value
 * below 2^21, around every power of ten, and at random over every digit
 * count, and never a byte written past the 20 its callers give it. And the
 * hex of payloads (ptlog_fmt_hexbytes, 16 and 8 bytes at a time, then one by
 * one) against printf for every length to 80, never a byte past 2 * n.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "../tools/ptlog/timefmt.c"
#include "tl_test.h"

static unsigned long checked;

static int check_u64(uint64_t v)
{
    char want[24], got[32];
    memset(got, '#', sizeof got);
    int n = snprintf(want, sizeof want, "%" PRIu64, v);
    size_t len = ptlog_fmt_u64(v, got);
    checked++;
    return CHECK_MSG(len == (size_t)n && memcmp(got, want, (size_t)n) == 0 && got[20] == '#',
                     "%" PRIu64 ": \"%.*s\" (%zu bytes), want \"%s\"%s", v, (int)(len < 24 ? len : 24), got, len,
                     want, got[20] == '#' ? "" : "; wrote past 20 bytes");
}

static void test_small_values(void)
{
    for (uint64_t v = 0; v < (1u << 21); v++)
        if (!check_u64(v))
            return;
}

static void test_powers_of_ten(void)
{
    uint64_t p = 1;
    for (int k = 0; k <= 19; k++, p *= 10)
        for (int64_t d = -300; d <= 300; d++)
            if ((d >= 0 || (uint64_t)-d <= p) && !check_u64(p + (uint64_t)d))
                return;
    for (uint64_t d = 0; d < 300; d++)
        if (!check_u64(UINT64_MAX - d))
            return;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ z >> 27) * 0x94D049BB133111EBull;
    return z ^ z >> 31;
}

/* Values of every bit length alike, so that each digit count gets its share. */
static void test_random(void)
{
    for (int i = 0; i < 2000000; i++) {
        uint64_t r = rng();
        if (!check_u64(r >> (rng() % 64)))
            return;
    }
}

static void test_hexbytes(void)
{
    unsigned char in[80];
    uint64_t x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < sizeof in; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        in[i] = (unsigned char)(x >> 56);
    }
    in[3] = 0x00, in[4] = 0xff, in[5] = 0x9a, in[6] = 0xa9; /* both ends of both digit ranges */
    for (size_t n = 0; n <= sizeof in; n++) {
        char want[2 * sizeof in + 1], got[2 * sizeof in + 8];
        for (size_t i = 0; i < n; i++)
            snprintf(want + 2 * i, 3, "%02x", in[i]);
        memset(got, '#', sizeof got);
        ptlog_fmt_hexbytes(in, n, got);
        CHECK_MSG(memcmp(got, want, 2 * n) == 0 && got[2 * n] == '#', "%zu bytes: \"%.*s\"", n, (int)(2 * n + 1), got);
    }
}

int main(void)
{
    TL_TEST_RUN(test_small_values);
    TL_TEST_RUN(test_powers_of_ten);
    TL_TEST_RUN(test_random);
    TL_TEST_RUN(test_hexbytes);
    printf("%lu values\n", checked);
    return tl_test_finish();
}
