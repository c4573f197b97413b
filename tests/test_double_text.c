/*
 * format/double_text.c: the shortest text of a double or float that reads
 * back exactly, against the slow way (printf's correctly rounded digits and
 * strtod), over millions of values: random bit patterns, every binary
 * exponent at its edges, powers of two and ten and their neighbours,
 * subnormals, decimals and halfway cases, and the extremes.
 *
 * For each finite value v with text T and digits D (n of them, no trailing
 * zero) * 10^E:
 *   - T parses back (strtod, strtof) to v's exact bits, and says D * 10^E;
 *   - no decimal of n - 1 significant digits reads back as v: neither
 *     printf's correctly rounded one nor its neighbours one unit of the
 *     last digit away (whatever reads back lies between the two decimals
 *     that bracket v, and those are the rounded one and a neighbour);
 *   - D is the closest n-digit decimal that reads back: printf's rounded
 *     one when it reads back, else its neighbour on the other side of v;
 *   - the layout is %g's at precision max(15, n) (max(6, n) for a float):
 *     T is snprintf("%.*g") of v whenever D is printf's rounded digits;
 *   - T is the text of the former definition (the shortest of %.15g,
 *     %.16g, %.17g that reads back; %.6g..%.9g for a float) unless v is
 *     subnormal or T has fewer digits: the only two ways they may differ.
 * The full slow reference, the shortest of %.1g .. %.17g that reads back,
 * runs on a sample and must never be shorter than T.
 */
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tracelog/schema.h>

#include "format/double_text.h"
#include "tl_test.h"

static unsigned long stats_checked, stats_not_rounded, stats_former_differs;

static uint64_t rng_state = 0x243F6A8885A308D3ull;

static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static int reads_back(const char *s, double v, int is_f32)
{
    if (is_f32) {
        float got = strtof(s, NULL), want = (float)v;
        return memcmp(&got, &want, sizeof got) == 0;
    }
    double got = strtod(s, NULL);
    return memcmp(&got, &v, sizeof got) == 0;
}

static int digit_count(uint64_t d)
{
    int n = 1;
    while (d >= 10) {
        d /= 10;
        n++;
    }
    return n;
}

static uint64_t pow10u(int n)
{
    uint64_t p = 1;
    while (n-- > 0)
        p *= 10;
    return p;
}

static void strip_zeros(uint64_t *d, int *e)
{
    while (*d && *d % 10 == 0) {
        *d /= 10;
        ++*e;
    }
}

/* printf's m-digit rounding of v > 0: digits *d (m of them) * 10^*e. */
static void rounded(double v, int m, uint64_t *d, int *e)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.*e", m - 1, v);
    char *x = strchr(buf, 'e');
    *d = 0;
    for (char *p = buf; p < x; p++)
        if (*p != '.')
            *d = *d * 10 + (uint64_t)(*p - '0');
    *e = atoi(x + 1) - (m - 1);
}

static int reads_back_de(uint64_t d, int e, double v, int is_f32)
{
    char buf[48];
    snprintf(buf, sizeof buf, "%llue%d", (unsigned long long)d, e);
    return reads_back(buf, v, is_f32);
}

/*
 * The closest decimal of m significant digits that reads back as v > 0, in
 * *d * 10^*e (trailing zeros stripped): 1 rounded, 2 a neighbour, 0 none.
 */
static int closest(double v, int is_f32, int m, uint64_t *d, int *e)
{
    uint64_t r;
    int x;
    rounded(v, m, &r, &x);
    *d = r, *e = x;
    if (reads_back_de(r, x, v, is_f32)) {
        strip_zeros(d, e);
        return 1;
    }
    uint64_t up = r + 1, down = r - 1;
    int xu = x, xd = x;
    if (up == pow10u(m))
        up /= 10, xu++;
    if (down < pow10u(m - 1))
        down = down * 10 + 9, xd--; /* 10..0 - 1 = 9..9, a decade lower */
    if (reads_back_de(up, xu, v, is_f32))
        *d = up, *e = xu;
    else if (reads_back_de(down, xd, v, is_f32))
        *d = down, *e = xd;
    else
        return 0;
    strip_zeros(d, e);
    return 2;
}

/* The former definition: the shortest of %.15g..%.17g (%.6g..%.9g) that reads back. */
static void former_text(double v, int is_f32, char *buf, size_t cap)
{
    for (int prec = is_f32 ? 6 : 15; prec <= (is_f32 ? 9 : 17); prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (reads_back(buf, v, is_f32))
            return;
    }
}

/* Significant digits and exponent of a text T as %g writes it; -1 if it is not one. */
static int parse_text(const char *t, uint64_t *d, int *e, int *exp_form)
{
    const char *p = t + (*t == '-');
    *d = 0;
    *e = 0;
    int frac = 0, seen_point = 0, any = 0;
    for (; (*p >= '0' && *p <= '9') || *p == '.'; p++) {
        if (*p == '.') {
            seen_point = 1;
            continue;
        }
        if (any || *p != '0') { /* leading zeros are not significant */
            any = 1;
            if (*d > UINT64_MAX / 100)
                return -1;
            *d = *d * 10 + (uint64_t)(*p - '0');
        }
        frac += seen_point;
    }
    *exp_form = *p == 'e';
    if (*exp_form) {
        if ((p[1] != '+' && p[1] != '-') || strlen(p + 2) < 2)
            return -1;
        *e = atoi(p + 1);
    } else if (*p) {
        return -1;
    }
    *e -= frac;
    strip_zeros(d, e);
    return 0;
}

static void check_value(double v, int is_f32)
{
    char t[TL_DOUBLE_TEXT_MAX + 1];
    size_t len = is_f32 ? tl_float_text((float)v, t) : tl_double_text(v, t);
    t[len] = 0;
    char pub[TRACELOG_DOUBLE_TEXT_MAX]; /* the public functions (ptlog's fields) give the same text */
    size_t pub_len = is_f32 ? tracelog_float_text((float)v, pub) : tracelog_double_text(v, pub);
    CHECK_MSG(pub_len == len && memcmp(pub, t, len) == 0, "%a: tracelog_%s_text differs", v, is_f32 ? "float" : "double");
    if (is_f32)
        v = (float)v;
    stats_checked++;
    if (!CHECK_MSG(len < TL_DOUBLE_TEXT_MAX && reads_back(t, v, is_f32), "%s %a: \"%s\" does not read back",
                   is_f32 ? "f32" : "f64", v, t))
        return;
    if (v == 0 || isinf(v)) {
        CHECK_MSG(strcmp(t, signbit(v) ? (v == 0 ? "-0" : "-inf") : (v == 0 ? "0" : "inf")) == 0, "%a: \"%s\"", v,
                  t);
        return;
    }
    double a = fabs(v);
    uint64_t d, rd = 0;
    int e, re = 0, exp_form;
    tl_double_shortest(a, is_f32, &d, &e);
    int n = digit_count(d);
    uint64_t td;
    int te;
    if (!CHECK_MSG(parse_text(t, &td, &te, &exp_form) == 0 && td == d && te == e && (*t == '-') == (v < 0),
                   "%a: text \"%s\" is not %llue%d", v, t, (unsigned long long)d, e))
        return;
    if (n > 1)
        CHECK_MSG(!closest(a, is_f32, n - 1, &rd, &re), "%s %a: \"%s\" but %llue%d, shorter, reads back",
                  is_f32 ? "f32" : "f64", v, t, (unsigned long long)rd, re);
    int how = closest(a, is_f32, n, &rd, &re);
    if (!CHECK_MSG(how && rd == d && re == e, "%s %a: \"%s\" but the closest of %d digits is %llue%d",
                   is_f32 ? "f32" : "f64", v, t, n, (unsigned long long)rd, re))
        return;
    int prec = n > (is_f32 ? 6 : 15) ? n : (is_f32 ? 6 : 15);
    int x = n - 1 + e;
    char want[64];
    int subnormal = is_f32 ? a < FLT_MIN : a < DBL_MIN;
    stats_not_rounded += how == 2;
    if (how == 1 && !subnormal) { /* %.15g rounds a normal value to D: printf's layout is the one to have */
        snprintf(want, sizeof want, "%.*g", prec, v);
        CHECK_MSG(strcmp(t, want) == 0, "%a: \"%s\", %%.%dg gives \"%s\"", v, t, prec, want);
    } else { /* the digits are checked above: the layout's rule */
        CHECK_MSG(exp_form == (x < -4 || x >= prec), "%a: \"%s\" is not in %%g's layout", v, t);
    }
    former_text(v, is_f32, want, sizeof want);
    if (strcmp(t, want) != 0) {
        stats_former_differs++;
        uint64_t fd;
        int fe, fx;
        parse_text(want, &fd, &fe, &fx);
        CHECK_MSG(subnormal || n < digit_count(fd), "%a: \"%s\", formerly \"%s\"", v, t, want);
    }
}

/* The shortest of %.1g .. %.17g that reads back (the slow reference); its digit count. */
static int slow_reference_digits(double v, int is_f32)
{
    char buf[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (reads_back(buf, v, is_f32)) {
            uint64_t d;
            int e, x;
            parse_text(buf, &d, &e, &x);
            return digit_count(d);
        }
    }
    return 99;
}

static double from_bits(uint64_t bits)
{
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static float float_from_bits(uint32_t bits)
{
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

static void test_extremes(void)
{
    static const double values[] = {0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_MIN, DBL_TRUE_MIN, -DBL_TRUE_MIN, 1.0, -1.0,
                                    0.1, 1e23, 9007199254740993.0, 5e-324, 1.7976931348623157e308, 2.2250738585072009e-308};
    for (size_t i = 0; i < sizeof values / sizeof *values; i++) {
        check_value(values[i], 0);
        check_value(values[i], 1);
    }
    char t[TL_DOUBLE_TEXT_MAX + 1];
    static const struct { double v; const char *text; } fixed[] = {
        {DBL_TRUE_MIN, "5e-324"},     {DBL_MAX, "1.7976931348623157e+308"}, {DBL_MIN, "2.2250738585072014e-308"},
        {-0.0, "-0"},                 {0.000231, "0.000231"},               {8e-06, "8e-06"},
        {1e15, "1e+15"},              {123456789012345.0, "123456789012345"}, {1234567890123456.0, "1234567890123456"},
        {1e100, "1e+100"},            {1.0 / 3, "0.3333333333333333"},      {0.0001, "0.0001"},
        {100, "100"},                 {-2.5, "-2.5"},                       {NAN, "nan"},
        {INFINITY, "inf"},            {-INFINITY, "-inf"},                  {2e-7, "2e-07"},
    };
    for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
        t[tl_double_text(fixed[i].v, t)] = 0;
        CHECK_STR_EQ(t, fixed[i].text);
    }
    static const struct { float v; const char *text; } ffixed[] = {
        {FLT_TRUE_MIN, "1e-45"}, {FLT_MAX, "3.4028235e+38"}, {0.1f, "0.1"}, {16777216.0f, "16777216"},
        {1e6f, "1e+06"},         {123456.0f, "123456"},       {-0.0f, "-0"}, {NAN, "nan"},
    };
    for (size_t i = 0; i < sizeof ffixed / sizeof *ffixed; i++) {
        t[tl_float_text(ffixed[i].v, t)] = 0;
        CHECK_STR_EQ(t, ffixed[i].text);
    }
}

/* Every exponent of a double, at its edges and a few random significands; powers of two and their neighbours. */
static void test_every_exponent(void)
{
    for (uint64_t exp = 0; exp < 0x7ff; exp++) {
        const uint64_t mans[] = {0, 1, 2, 3, 0xfffffffffffffull, 0xffffffffffffeull, 1ull << 51, (1ull << 51) + 1,
                                 rng() & 0xfffffffffffffull, rng() & 0xfffffffffffffull, rng() & 0xfffffffffffffull};
        for (size_t i = 0; i < sizeof mans / sizeof *mans; i++) {
            check_value(from_bits(exp << 52 | mans[i]), 0);
            check_value(from_bits(1ull << 63 | exp << 52 | mans[i]), 0);
        }
    }
    for (uint32_t exp = 0; exp < 0xff; exp++) {
        const uint32_t mans[] = {0, 1, 2, 0x7fffff, 0x7ffffe, 1u << 22, (uint32_t)rng() & 0x7fffff};
        for (size_t i = 0; i < sizeof mans / sizeof *mans; i++)
            check_value(float_from_bits(exp << 23 | mans[i]), 1);
    }
}

/* Powers of ten (as strtod reads them) and the doubles on either side. */
static void test_powers_of_ten(void)
{
    for (int p = -325; p <= 309; p++) {
        char s[16];
        snprintf(s, sizeof s, "1e%d", p);
        double v = strtod(s, NULL);
        if (v == 0 || isinf(v))
            continue;
        check_value(v, 0);
        check_value(nextafter(v, 0), 0);
        check_value(nextafter(v, INFINITY), 0);
        float f = strtof(s, NULL);
        if (f != 0 && !isinf(f)) {
            check_value(f, 1);
            check_value(nextafterf(f, 0), 1);
            check_value(nextafterf(f, INFINITY), 1);
        }
    }
}

/* Short decimals at every scale (what programs mostly record), and halfway cases of 16 and 17 digits. */
static void test_decimals(void)
{
    for (int i = 0; i < 200000; i++) {
        uint64_t r = rng();
        int digits = 1 + (int)(r % 17);
        uint64_t d = (r >> 8) % pow10u(digits);
        int e = (int)((r >> 40) % 640) - 330;
        char s[48];
        if (i % 4 == 0)
            snprintf(s, sizeof s, "%llu5e%d", (unsigned long long)d, e); /* ends in 5: a halfway case at some length */
        else
            snprintf(s, sizeof s, "%llue%d", (unsigned long long)d, e);
        double v = strtod(s, NULL);
        if (v != 0 && !isinf(v))
            check_value(v, 0);
        float f = strtof(s, NULL);
        if (f != 0 && !isinf(f))
            check_value(f, 1);
    }
}

static void test_random_bits(void)
{
    for (int i = 0; i < 1000000; i++) {
        uint64_t bits = rng();
        if ((bits >> 52 & 0x7ff) == 0x7ff)
            continue;
        check_value(from_bits(bits), 0);
    }
    for (int i = 0; i < 100000; i++) /* subnormals */
        check_value(from_bits(rng() & 0x800fffffffffffffull), 0);
    for (int i = 0; i < 300000; i++) {
        uint32_t bits = (uint32_t)rng();
        if ((bits >> 23 & 0xff) != 0xff)
            check_value(float_from_bits(bits), 1);
    }
    for (int i = 0; i < 50000; i++) /* float subnormals */
        check_value(float_from_bits((uint32_t)rng() & 0x807fffff), 1);
}

/*
 * The shortcut for short decimals (2^-26 <= v < 10^15, at most 15 digits):
 * its edges, and every decimal of up to 15 digits in its range, checked as
 * every value is; then the same digits in every rounding mode, which the
 * shortcut's floating-point check would not give (it would take a decimal
 * that reads back only when rounded upward, say).
 */
static void test_short_decimals(void)
{
    const double edges[] = {0x1p-26, nextafter(0x1p-26, 0), nextafter(0x1p-26, 1), 999999999999999.0,
                            nextafter(1e15, 0), 1e15, 99999999999999.95, 1e-8, 0.000231, 123456789012345e-10,
                            0.1, 0.3, 2.675, 1e14, 5e-9};
    for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
        check_value(edges[i], 0);
    static const int modes[] = {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO};
    int mismatches = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t r = rng();
        double v;
        if (i % 2) { /* any double of the range: most need 16 or 17 digits */
            v = from_bits((uint64_t)(1023 - 26 + (r >> 52) % 77) << 52 | (r & 0xfffffffffffffull));
            if (v >= 1e15)
                continue;
        } else { /* a decimal of at most 15 digits */
            int digits = 1 + (int)(r % 15);
            uint64_t d = (r >> 8) % pow10u(digits);
            int e = (int)((r >> 40) % 24) - 8 - digits;
            char s[48];
            snprintf(s, sizeof s, "%llue%d", (unsigned long long)d, e);
            v = strtod(s, NULL); /* in round-to-nearest */
            if (v == 0)
                continue;
        }
        check_value(v, 0);
        uint64_t want_d, got_d;
        int want_e, got_e;
        tl_double_shortest(v, 0, &want_d, &want_e);
        for (size_t m = 0; m < sizeof modes / sizeof modes[0]; m++) {
            fesetround(modes[m]);
            tl_double_shortest(v, 0, &got_d, &got_e);
            fesetround(FE_TONEAREST);
            if (!CHECK_MSG(got_d == want_d && got_e == want_e, "%a: %llue%d rounding to nearest, %llue%d in mode %d",
                           v, (unsigned long long)want_d, want_e, (unsigned long long)got_d, got_e, modes[m]) &&
                ++mismatches > 10)
                return;
        }
    }
}

/* The slow reference on a sample: it never finds fewer digits. */
static void test_slow_reference(void)
{
    int shorter = 0;
    for (int i = 0; i < 50000; i++) {
        uint64_t bits = rng();
        if (i % 8 == 0)
            bits &= 0x800fffffffffffffull;
        if ((bits >> 52 & 0x7ff) == 0x7ff || (bits << 1) == 0)
            continue;
        double v = fabs(from_bits(bits));
        uint64_t d;
        int e;
        tl_double_shortest(v, 0, &d, &e);
        int ref = slow_reference_digits(v, 0);
        CHECK_MSG(digit_count(d) <= ref, "%a: %d digits, the slow reference %d", v, digit_count(d), ref);
        shorter += digit_count(d) < ref;
    }
    printf("slow reference: %d of the sample shorter than %%.Ng's shortest\n", shorter);
}

int main(void)
{
    TL_TEST_RUN(test_extremes);
    TL_TEST_RUN(test_every_exponent);
    TL_TEST_RUN(test_powers_of_ten);
    TL_TEST_RUN(test_decimals);
    TL_TEST_RUN(test_short_decimals);
    TL_TEST_RUN(test_random_bits);
    TL_TEST_RUN(test_slow_reference);
    printf("%lu values; %lu whose shortest digits are not printf's rounding; %lu whose text differs from the "
           "former %%.15g-%%.17g definition (subnormals, or fewer digits)\n",
           stats_checked, stats_not_rounded, stats_former_differs);
    return tl_test_finish();
}
