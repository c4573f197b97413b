/*
 * Shortest round-trip text of a double (or float), exact for every finite
 * value and without a loop over precisions: the digits come straight from
 * the binary value, after R. Giulietti's Schubfach ("The Schubfach way to
 * render doubles", 2020).
 *
 * v = c * 2^q reads back from every decimal strictly inside the rounding
 * interval around it (its ends too when c is even: strtod rounds half to
 * even). Scaled by 10^-k, with k the largest such that the interval is at
 * least 10^k wide, that interval holds at least one integer, and the
 * shortest decimals in it are among s * 10^k, (s + 1) * 10^k and, one
 * digit shorter, the multiples of 10^(k+1) around v. Computing v * 10^-k
 * and the two ends needs only their integer part and whether a fraction is
 * left: one 64 x 128-bit product each with 10^-k rounded up to 128 bits
 * (pow10_table.h, written by pow10_gen.py), which the proof shows is
 * precise enough for every double (and, a fortiori, every float, whose c
 * is shorter). The checks against the slow way (every %.Ng, strtod) are in
 * tests/test_double_text.c.
 */
#include "format/double_text.h"

#include <endian.h>
#include <fenv.h>
#include <math.h>
#include <string.h>
#ifdef __SSE2_MATH__
#include <xmmintrin.h>
#endif

#include "common/digits.h"
#include "format/pow10_table.h"

typedef unsigned __int128 u128;

/* floor(e * log10(2)), floor(e * log10(2) + log10(3/4)), floor(e * log2(10)): exact for |e| <= 1650 (checked). */
static int floor_log10_pow2(int e) { return (e * 1262611) >> 22; }
static int floor_log10_three_quarters_pow2(int e) { return (e * 1262611 - 524031) >> 22; }
static int floor_log2_pow10(int e) { return (e * 1741647) >> 19; }

/* floor(g * cp / 2^128), with its lowest bit set when a fraction is left (rounded to odd). */
static uint64_t times_pow10(const uint64_t g[2], uint64_t cp)
{
    u128 lo = (u128)g[1] * cp;
    u128 hi = (u128)g[0] * cp + (uint64_t)(lo >> 64);
    return (uint64_t)(hi >> 64) | ((uint64_t)hi > 1);
}

/*
 * The shortest decimal digits * 10^exp10 inside v's rounding interval, for
 * v = c * 2^q > 0 (lower_closer: c is a power of two above the smallest
 * normal, so the value below is half as far as the one above).
 */
static void shortest(uint64_t c, int q, int lower_closer, uint64_t *digits, int *exp10)
{
    int even = !(c & 1);
    uint64_t cbl = 4 * c - 2 + (uint64_t)lower_closer, cb = 4 * c, cbr = 4 * c + 2;
    int k = lower_closer ? floor_log10_three_quarters_pow2(q) : floor_log10_pow2(q);
    int h = q + floor_log2_pow10(-k) + 1; /* 1..4 */
    const uint64_t *g = pow10_table[-k - POW10_MIN];
    uint64_t vbl = times_pow10(g, cbl << h), vb = times_pow10(g, cb << h), vbr = times_pow10(g, cbr << h);
    uint64_t lower = vbl + !even, upper = vbr - !even; /* 4 * the interval's ends, scaled by 10^-k */
    uint64_t s = vb >> 2;                                  /* floor(v * 10^-k) */
    if (s >= 10) { /* one digit fewer: at most one multiple of 10 * 10^k lies in the interval */
        uint64_t sp = s / 10;
        int up_in = lower <= 40 * sp, wp_in = 40 * sp + 40 <= upper;
        if (up_in != wp_in) {
            *digits = sp + (uint64_t)wp_in;
            *exp10 = k + 1;
            return;
        }
    }
    int u_in = lower <= 4 * s, w_in = 4 * s + 4 <= upper;
    if (u_in != w_in) {
        *digits = s + (uint64_t)w_in;
        *exp10 = k;
        return;
    }
    uint64_t mid = 4 * s + 2; /* both in: the closer, ties to even */
    *digits = s + (uint64_t)(vb > mid || (vb == mid && (s & 1)));
    *exp10 = k;
}

/*
 * Divides d by 10^k when 10^k divides it, without a division (Granlund and
 * Montgomery): d times the inverse of 5^k modulo 2^64 maps the multiples of
 * 5^k, and only them, onto 0 .. UINT64_MAX / 5^k, to their quotients; rotated
 * right by k, such a quotient stays at most UINT64_MAX / 10^k only when its
 * low k bits, the 2^k, were zero.
 */
typedef struct pow10_divisor {
    uint64_t inv5, max;
    int k;
} pow10_divisor;

static const pow10_divisor by_1e8 = {0xc767074b22e90e21ull, 0x2af31dc461ull, 8},
                           by_1e4 = {0xd288ce703afb7e91ull, 0x68db8bac710cbull, 4},
                           by_1e2 = {0x8f5c28f5c28f5c29ull, 0x28f5c28f5c28f5cull, 2},
                           by_1e1 = {0xcccccccccccccccdull, 0x1999999999999999ull, 1};

static inline int divide_exactly(uint64_t *d, pow10_divisor by)
{
    uint64_t x = *d * by.inv5;
    uint64_t q = x >> by.k | x << (64 - by.k);
    if (q > by.max)
        return 0;
    *d = q;
    return 1;
}

static void drop_trailing_zeros(uint64_t *digits, int *exp10)
{
    uint64_t d = *digits; /* not 0 */
    int e = *exp10;
    while (divide_exactly(&d, by_1e8))
        e += 8;
    e += 4 * divide_exactly(&d, by_1e4);
    e += 2 * divide_exactly(&d, by_1e2);
    e += divide_exactly(&d, by_1e1);
    *digits = d;
    *exp10 = e;
}

/*
 * Whether double arithmetic rounds to nearest. Where it runs on SSE2 (x86-64)
 * that is MXCSR's rounding control, read inline: fegetround() is a call into
 * libm that cost 5 % of a dump of doubles.
 */
static inline int rounds_to_nearest(void)
{
#ifdef __SSE2_MATH__
    return (_mm_getcsr() & 0x6000) == 0;
#else
    return fegetround() == FE_TONEAREST;
#endif
}

/* 10^0 .. 10^22: the powers of ten a double holds exactly. */
static const double exact_pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                       1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/*
 * The shortcut for a normal double v > 0 that reads back from a decimal of
 * at most 15 significant digits (short exact decimals such as the 0.000231
 * of a latency in seconds), 2^-26 <= v < 10^15 (the binary exponents e2
 * where floor(e2 * log10(2)) is -8 .. 14, so that 10^e is exact): d =
 * v * 10^e rounded to an integer of 15 digits, kept when d / 10^e (both
 * exact, so one correctly rounded division, as strtod rounds) gives v
 * back. Two decimals of 15 digits or fewer never read back as the same
 * double (DBL_DIG), so d is then the only one in v's rounding interval:
 * the shortest once its trailing zeros are dropped (by the callers), and
 * the closest. When such a decimal exists, d is it (v * 10^e is within
 * 0.25 of it), so a miss means 16 or 17 digits: 0, and the full
 * computation. Only while the program
 * rounds to nearest (fegetround): in another rounding mode the division
 * that checks d would not round as strtod does, and the full computation,
 * integers only, does not depend on the mode.
 */
static int short_decimal(double v, uint64_t bits, uint64_t *digits, int *exp10)
{
    int x = floor_log10_pow2((int)(bits >> 52 & 0x7ff) - 1023); /* v's first digit is at 10^x or 10^(x+1) */
    if (x < -8 || x > 14 || !rounds_to_nearest())
        return 0;
    int e = 14 - x;
    double s = v * exact_pow10[e]; /* 10^14 <= s < 10^16 */
    if (s >= 1e15) {
        if (e == 0)
            return 0;
        s = v * exact_pow10[--e];
    }
    uint64_t d = (uint64_t)(s + 0.5);
    if ((double)d / exact_pow10[e] != v)
        return 0;
    *digits = d; /* 10^14 .. 10^15, trailing zeros and all */
    *exp10 = -e;
    return 1;
}

/* tl_double_shortest; short_decimal is tried first only with try_short (tl_double_text has tried it). */
static void shortest_digits(double v, int is_f32, int try_short, uint64_t *digits, int *exp10)
{
    uint64_t c, man;
    int exp, q;
    if (is_f32) {
        float f = (float)v;
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        man = bits & 0x7fffff;
        exp = (int)(bits >> 23 & 0xff);
        c = exp ? man | 1u << 23 : man;
        q = exp ? exp - 150 : -149;
    } else {
        uint64_t bits;
        memcpy(&bits, &v, sizeof bits);
        if (try_short && short_decimal(v, bits, digits, exp10)) {
            drop_trailing_zeros(digits, exp10);
            return;
        }
        man = bits & 0xfffffffffffffull;
        exp = (int)(bits >> 52 & 0x7ff);
        c = exp ? man | 1ull << 52 : man;
        q = exp ? exp - 1075 : -1074;
    }
    shortest(c, q, man == 0 && exp > 1, digits, exp10);
    drop_trailing_zeros(digits, exp10);
}

void tl_double_shortest(double v, int is_f32, uint64_t *digits, int *exp10)
{
    shortest_digits(v, is_f32, 1, digits, exp10);
}

static const char two_digits[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                    "8081828384858687888990919293949596979899";

/* d's decimal digits, right-aligned so that they end at end; returns how many. */
static int put_digits(uint64_t d, char *end)
{
    char *p = end;
    while (d >= 100) {
        p -= 2;
        memcpy(p, two_digits + 2 * (d % 100), 2);
        d /= 100;
    }
    if (d >= 10) {
        p -= 2;
        memcpy(p, two_digits + 2 * d, 2);
    } else {
        *--p = (char)('0' + d);
    }
    return (int)(end - p);
}

/*
 * The n digits at d (no trailing zero; 32 bytes readable), the first at
 * 10^x, as %g prints them at precision prec >= n: exponent form when x is
 * below -4 or at least prec, else fixed, trailing zeros removed. The digits
 * are copied in fixed-size blocks (no call to memcpy for a few bytes): out
 * has room for TL_DOUBLE_TEXT_MAX - 1 bytes, the text is at most 24.
 */
static size_t layout_digits(const char *d, int n, int x, int prec, char *out)
{
    if (prec < n)
        prec = n;
    char *p = out;
    if (x < -4 || x >= prec) {
        p[0] = d[0];
        p[1] = '.';
        memcpy(p + 2, d + 1, 16);
        p += n > 1 ? n + 1 : 1;
        *p++ = 'e';
        *p++ = x < 0 ? '-' : '+';
        unsigned ax = (unsigned)(x < 0 ? -x : x);
        if (ax >= 100)
            *p++ = (char)('0' + ax / 100);
        memcpy(p, two_digits + 2 * (ax % 100), 2);
        return (size_t)(p + 2 - out);
    }
    if (x < 0) { /* 0.000ddd */
        memcpy(p, "0.0000", 6);
        memcpy(p + 1 - x, d, 17);
        return (size_t)(1 - x + n);
    }
    memcpy(p, d, 17);
    if (x >= n - 1) { /* ddd000 */
        memcpy(p + n, "0000000000000000", 16); /* x - n + 1 <= 16 */
        return (size_t)x + 1;
    }
    p[x + 1] = '.'; /* dd.ddd */
    memcpy(p + x + 2, d + x + 1, 16);
    return (size_t)n + 1;
}

/* digits * 10^exp10 (no trailing zero) laid out by layout_digits. */
static size_t layout(uint64_t digits, int exp10, int prec, char *out)
{
    char buf[48];
    int n = put_digits(digits, buf + 24); /* at most 17 digits, ending at buf + 24 */
    return layout_digits(buf + 24 - n, n, n - 1 + exp10, prec, out);
}

/*
 * The text of short_decimal's d * 10^-e (10^14 <= d <= 10^15): its 16
 * digits, a leading zero included, made at once as two words of 8 (the
 * second all zeros for the values of up to 7 digits most fields hold), and
 * the trailing zeros counted on the words instead of divided out of d.
 */
static size_t short_text(uint64_t d, int e, char *out)
{
    uint32_t hi = (uint32_t)(d / 100000000), lo = (uint32_t)(d % 100000000);
    uint64_t w[5] = {tl_ascii8(hi), lo ? tl_ascii8(lo) : 0x3030303030303030ull}; /* and what layout_digits reads past */
    int lead = hi < 10000000;                      /* 15 digits: the first word starts with a 0 */
    uint64_t zeros = w[1] ^ 0x3030303030303030ull; /* a byte 0 for each '0'; the last digit is the highest */
    int tz = zeros ? __builtin_clzll(zeros) / 8 : 8 + __builtin_clzll(w[0] ^ 0x3030303030303030ull) / 8;
    w[0] = htole64(w[0]);
    w[1] = htole64(w[1]);
    return layout_digits((const char *)w + lead, 16 - lead - tz, 15 - lead - e, 15, out);
}

/* v's text the general way: a float, or a double short_decimal did not take. */
static size_t text(double v, int is_f32, char *out)
{
    if (isnan(v)) {
        memcpy(out, "nan", 3);
        return 3;
    }
    char *p = out;
    if (signbit(v)) {
        *p++ = '-';
        v = -v;
    }
    if (v == 0) {
        *p = '0';
        return (size_t)(p + 1 - out);
    }
    if (isinf(v)) {
        memcpy(p, "inf", 3);
        return (size_t)(p + 3 - out);
    }
    uint64_t digits;
    int exp10;
    shortest_digits(v, is_f32, 0, &digits, &exp10);
    return (size_t)(p - out) + layout(digits, exp10, is_f32 ? 6 : 15, p);
}

size_t tl_double_text(double v, char *out)
{
    double a = fabs(v);
    uint64_t bits, d;
    int exp10;
    memcpy(&bits, &a, sizeof bits);
    if (!short_decimal(a, bits, &d, &exp10)) /* nan, inf, 0 and subnormals too: their exponents are out of its range */
        return text(v, 0, out);
    *out = '-';
    size_t sign = signbit(v) != 0;
    return sign + short_text(d, -exp10, out + sign);
}

size_t tl_float_text(float v, char *out)
{
    return text(v, 1, out);
}
