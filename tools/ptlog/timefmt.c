/*
 * Time and integer formatting for the hot paths (no printf per event: the
 * broken-down time is computed once per second and cached), and parsing of
 * the times given on the command line.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#include <time.h>

#include "common/digits.h"
#include "ptlog.h"

#define NS_PER_S 1000000000ull

static const char digits2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

/* "000".."999", four bytes apart (fixed-size copies). */
static char digits3[1000][4];

static void init_digits3(void)
{
    for (int i = 0; i < 1000; i++) {
        digits3[i][0] = (char)('0' + i / 100);
        digits3[i][1] = (char)('0' + i / 10 % 10);
        digits3[i][2] = (char)('0' + i % 10);
    }
}

void ptlog_timecache_init(ptlog_timecache *c, int local)
{
    memset(c, 0, sizeof *c);
    c->sec = INT64_MIN;
    if (digits3[999][0] != '9')
        init_digits3();
    c->local = local;
}

static void fill_prefix(ptlog_timecache *c, int64_t sec)
{
    time_t t = (time_t)sec;
    struct tm tm;
    if (c->local)
        localtime_r(&t, &tm);
    else
        gmtime_r(&t, &tm);
    int n = snprintf(c->prefix, sizeof c->prefix, "%04d-%02d-%02dT%02d:%02d:%02d", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
    c->prefix_len = n > 0 && (size_t)n < sizeof c->prefix ? (size_t)n : 0;
    if (!c->local) {
        memcpy(c->zone, "Z", 2);
        c->zone_len = 1;
    } else {
        long off = tm.tm_gmtoff;
        char sign = off < 0 ? '-' : '+';
        if (off < 0)
            off = -off;
        snprintf(c->zone, sizeof c->zone, "%c%02ld:%02ld", sign, (off / 3600) % 100, (off / 60) % 60);
        c->zone_len = strlen(c->zone);
    }
    c->sec = sec;
}

/* Nine digits of a nanosecond count below one second (out has room for 10). */
static inline void put9(uint32_t v, char *out)
{
    uint32_t a = v / 1000000u, b = v / 1000u % 1000u, c = v % 1000u;
    memcpy(out, digits3[a], 4);
    memcpy(out + 3, digits3[b], 4);
    memcpy(out + 6, digits3[c], 3);
}

size_t ptlog_fmt_time(ptlog_timecache *c, uint64_t ns, char *out)
{
    uint64_t frac = ns - c->sec_start_ns; /* no division while in the cached second */
    if (c->sec == INT64_MIN || ns < c->sec_start_ns || frac >= NS_PER_S) {
        int64_t sec = (int64_t)(ns / NS_PER_S);
        fill_prefix(c, sec);
        c->sec_start_ns = (uint64_t)sec * NS_PER_S;
        frac = ns - c->sec_start_ns;
    }
    char *p = out;
    if (c->prefix_len == 19) /* years 1000..9999: a fixed-size copy */
        memcpy(p, c->prefix, 19);
    else
        memcpy(p, c->prefix, c->prefix_len);
    p += c->prefix_len;
    *p++ = '.';
    put9((uint32_t)frac, p);
    p += 9;
    if (c->zone_len == 1) {
        *p = 'Z';
        return (size_t)(p - out) + 1;
    }
    memcpy(p, c->zone, c->zone_len);
    return (size_t)(p - out) + c->zone_len;
}

static inline size_t count_digits(uint64_t v)
{
    size_t n = 1;
    for (;;) {
        if (v < 10)
            return n;
        if (v < 100)
            return n + 1;
        if (v < 1000)
            return n + 2;
        if (v < 10000)
            return n + 3;
        v /= 10000;
        n += 4;
    }
}

size_t ptlog_fmt_u64(uint64_t v, char *out)
{
    if (v < 10000) { /* most fields' values, lengths, ports: half the work of 8 digits */
        uint32_t w = (uint32_t)v;
        size_t n = 1 + (w >= 10) + (w >= 100) + (w >= 1000);
        uint32_t digits = htole32(tl_ascii4(w) >> (8 * (4 - n)));
        memcpy(out, &digits, 4);
        return n;
    }
    if (v < 100000000) { /* the common case: digit count and digits without a branch on v */
        static const uint32_t pow10[10] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};
        uint32_t w = (uint32_t)v | 1; /* 0 has one digit; no power of ten from 10 up lies between w and v */
        uint32_t a = (uint32_t)(64 - __builtin_clzll(w)) * 1233 >> 12; /* the digits of w, or one fewer */
        size_t n = a + (w >= pow10[a]);
        uint64_t digits = htole64(tl_ascii8((uint32_t)v) >> (8 * (8 - n))); /* the leading zeros shifted out */
        memcpy(out, &digits, 8);
        return n;
    }
    size_t n = count_digits(v);
    char *p = out + n;
    while (v >= 100) {
        p -= 2;
        memcpy(p, digits2 + 2 * (v % 100), 2);
        v /= 100;
    }
    if (v >= 10)
        memcpy(p - 2, digits2 + 2 * v, 2);
    else
        p[-1] = (char)('0' + v);
    return n;
}

void ptlog_fmt_hexbytes(const unsigned char *p, size_t n, char *out)
{
    static const char pairs[513] =
        "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
        "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
        "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
        "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
        "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
        "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
        "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
    size_t i = 0;
#ifdef __SSE2__
    /* 16 bytes at a time: each byte's two nibbles side by side, then '0'..'9' or 'a'..'f' */
    const __m128i low4 = _mm_set1_epi8(0x0f), nine = _mm_set1_epi8(9), zero = _mm_set1_epi8('0'),
                  letters = _mm_set1_epi8('a' - '0' - 10);
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4), lo = _mm_and_si128(v, low4);
        __m128i d[2] = {_mm_unpacklo_epi8(hi, lo), _mm_unpackhi_epi8(hi, lo)};
        for (int k = 0; k < 2; k++) {
            __m128i x = _mm_add_epi8(_mm_add_epi8(d[k], zero), _mm_and_si128(_mm_cmpgt_epi8(d[k], nine), letters));
            _mm_storeu_si128((__m128i *)(out + 2 * i + 16 * k), x);
        }
    }
    if (i + 8 <= n) { /* 8 more the same way (the tail of a 24-byte payload) */
        __m128i v = _mm_loadl_epi64((const __m128i *)(p + i));
        __m128i hi = _mm_and_si128(_mm_srli_epi16(v, 4), low4), lo = _mm_and_si128(v, low4);
        __m128i d = _mm_unpacklo_epi8(hi, lo);
        _mm_storeu_si128((__m128i *)(out + 2 * i),
                         _mm_add_epi8(_mm_add_epi8(d, zero), _mm_and_si128(_mm_cmpgt_epi8(d, nine), letters)));
        i += 8;
    }
#endif
    for (; i < n; i++)
        memcpy(out + 2 * i, pairs + 2 * p[i], 2);
}

size_t ptlog_fmt_hex64(uint64_t v, char *out)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1; /* hex digits */
    char *p = out + n;
    while (p - out >= 2) { /* two digits per step */
        p -= 2;
        p[0] = hex[(v >> 4) & 15];
        p[1] = hex[v & 15];
        v >>= 8;
    }
    if (p > out)
        *out = hex[v & 15];
    return n;
}

size_t ptlog_fmt_relative(uint64_t ns, uint64_t origin, char *out)
{
    char *p = out;
    if (digits3[999][0] != '9')
        init_digits3();
    uint64_t d;
    if (ns >= origin) {
        d = ns - origin;
    } else {
        d = origin - ns;
        *p++ = '-';
    }
    p += ptlog_fmt_u64(d / NS_PER_S, p);
    *p++ = '.';
    put9((uint32_t)(d % NS_PER_S), p);
    return (size_t)(p - out) + 9;
}

void ptlog_nscache_init(ptlog_nscache *c)
{
    memset(c, 0, sizeof *c);
    if (digits3[999][0] != '9')
        init_digits3();
}

size_t ptlog_fmt_ns(ptlog_nscache *c, uint64_t ns, char *out)
{
    if (ns < NS_PER_S)
        return ptlog_fmt_u64(ns, out);
    uint64_t frac = ns - c->sec_start_ns;
    if (!c->sec_len || ns < c->sec_start_ns || frac >= NS_PER_S) {
        uint64_t sec = ns / NS_PER_S;
        c->sec_len = ptlog_fmt_u64(sec, c->sec); /* at most 11 digits */
        c->sec_start_ns = sec * NS_PER_S;
        frac = ns - c->sec_start_ns;
    }
    memcpy(out, c->sec, sizeof c->sec);
    put9((uint32_t)frac, out + c->sec_len);
    return c->sec_len + 9;
}

const char *ptlog_iso_utc(uint64_t ns, char *out)
{
    ptlog_timecache c; /* also initialises the digit table */
    ptlog_timecache_init(&c, 0);
    out[ptlog_fmt_time(&c, ns, out)] = 0;
    return out;
}

/* ---- parsing ------------------------------------------------------------------ */

/* Reads exactly n digits. */
static int digits(const char **s, int n, int *out)
{
    int v = 0;
    for (int i = 0; i < n; i++) {
        if (!isdigit((unsigned char)(*s)[i]))
            return -1;
        v = v * 10 + ((*s)[i] - '0');
    }
    *s += n;
    *out = v;
    return 0;
}

/* Reads "[.fraction]" as nanoseconds (up to 9 digits kept, more refused). */
static int fraction(const char **s, uint64_t *ns)
{
    *ns = 0;
    if (**s != '.')
        return 0;
    (*s)++;
    int n = 0;
    uint64_t v = 0;
    while (isdigit((unsigned char)**s)) {
        if (n == 9)
            return -1;
        v = v * 10 + (uint64_t)(**s - '0');
        (*s)++;
        n++;
    }
    if (n == 0)
        return -1;
    while (n++ < 9)
        v *= 10;
    *ns = v;
    return 0;
}

/* "+1.5s", "+250ms", "+10us", "+7ns", "+2" (seconds). */
static int parse_relative(const char *s, uint64_t *ns)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    unsigned long long whole = strtoull(s, &end, 10);
    if (errno == ERANGE)
        return -1;
    const char *p = end;
    uint64_t frac;
    if (fraction(&p, &frac))
        return -1;
    static const struct { const char *unit; uint64_t mul; } units[] = {
        {"", NS_PER_S}, {"s", NS_PER_S}, {"ms", 1000000}, {"us", 1000}, {"ns", 1},
        {"m", 60 * NS_PER_S}, {"h", 3600 * NS_PER_S},
    };
    for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
        if (strcmp(p, units[i].unit) != 0)
            continue;
        uint64_t mul = units[i].mul;
        if (whole > UINT64_MAX / mul)
            return -1;
        /* frac is in billionths of the unit; the sum past 2^64 ns (584 years) is no time */
        uint64_t part = (uint64_t)((unsigned __int128)frac * mul / NS_PER_S);
        if (whole * mul > UINT64_MAX - part)
            return -1;
        *ns = whole * mul + part;
        return 0;
    }
    return -1;
}

static int is_leap(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

static int days_in_month(int y, int m)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    return m == 2 && is_leap(y) ? 29 : days[m - 1];
}

/* Days from 1970-01-01 to y-m-d of the proleptic Gregorian calendar (no time zone, no libc). */
static int64_t days_from_epoch(int y, int m, int d)
{
    /* H. Hinnant's days_from_civil: March-based years make February the last month. */
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* "Z", "+HH:MM", "+HHMM" or nothing (UTC): seconds east of UTC. 0 or -1. */
static int parse_zone(const char **p, long *offset)
{
    *offset = 0;
    if (**p == 'Z' || **p == 'z') {
        (*p)++;
        return 0;
    }
    if (**p != '+' && **p != '-')
        return 0;
    int sign = *(*p)++ == '-' ? -1 : 1, oh, om;
    if (digits(p, 2, &oh))
        return -1;
    if (**p == ':')
        (*p)++;
    if (digits(p, 2, &om) || oh > 23 || om > 59)
        return -1;
    *offset = sign * (oh * 3600L + om * 60L);
    return 0;
}

/*
 * "YYYY-MM-DD[THH:MM[:SS[.fraction]]][zone]", validated against the calendar
 * (month lengths, leap years). Two ISO 8601 / RFC 3339 edge cases:
 *   - 24:00 (or 24:00:00, no fraction) is the end of that day, i.e. 00:00 of
 *     the next one;
 *   - second 60 is accepted only where a leap second can be, at 23:59:60 UTC,
 *     and read as the second after 23:59:59 (the log's clock, like POSIX time,
 *     has no leap seconds).
 */
static int parse_absolute(const char *s, uint64_t *ns)
{
    if (strspn(s, "0123456789") == strlen(s) && *s) { /* nanoseconds since the epoch */
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end || errno)
            return -1;
        *ns = v;
        return 0;
    }
    int y, mo, d, h = 0, mi = 0, sec = 0;
    const char *p = s;
    if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' || digits(&p, 2, &d))
        return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
        return -1;
    uint64_t frac = 0;
    if (*p == 'T' || *p == 't' || *p == ' ') {
        p++;
        if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi))
            return -1;
        if (*p == ':') {
            p++;
            if (digits(&p, 2, &sec) || fraction(&p, &frac))
                return -1;
        }
    }
    long offset;
    if (parse_zone(&p, &offset) || *p)
        return -1;
    if (h == 24 ? mi != 0 || sec != 0 || frac != 0 : h > 23 || mi > 59 || sec > 60)
        return -1;
    int64_t t = days_from_epoch(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset;
    if (sec == 60 && (t - 1) % 86400 != 86399) /* not 23:59:60 UTC */
        return -1;
    if (t < 0 || (uint64_t)t > UINT64_MAX / NS_PER_S - 1)
        return -1;
    *ns = (uint64_t)t * NS_PER_S + frac;
    return 0;
}

int ptlog_parse_time(const char *s, ptlog_timearg *t)
{
    memset(t, 0, sizeof *t);
    int rc;
    if (*s == '+') {
        t->relative = 1;
        rc = parse_relative(s + 1, &t->ns);
    } else {
        rc = parse_absolute(s, &t->ns);
    }
    t->set = rc == 0;
    return rc;
}
