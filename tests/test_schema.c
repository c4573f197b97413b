/*
 * Payload schemas (include/tracelog/schema.h, format-spec section 5.6):
 * layouts against the C compiler's own (offsetof, sizeof), every type's
 * values and text, parse errors with their byte positions, the limits, the
 * canonical form, payloads shorter and longer than the schema, and the
 * built-in schemas of the POSIX system events. Payloads are given in
 * buffers of exactly their length, so that ASan catches a read past them.
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>

#include "common/buf.h"
#include "format/schema.h"
#include "tl_test.h"

/* A copy of src in a buffer of exactly len bytes (at least 1 allocated). */
static uint8_t *exact(const void *src, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        TL_DIE("out of memory");
    if (len)
        memcpy(p, src, len);
    return p;
}

static tracelog_schema *parse_ok(const char *text)
{
    tracelog_schema *s = NULL;
    tracelog_error err = {0};
    tracelog_status st = tracelog_schema_parse(text, &s, &err);
    CHECK_MSG(st == TRACELOG_OK, "parse \"%s\": %s", text, err.message);
    return s;
}

/* ---- layout against the compiler -------------------------------------------- */

/* The schema's fields are at offsets[0..n) and the payload size is size. */
static void check_layout(const char *text, size_t size, const size_t *offsets, size_t n)
{
    tl_test_context("schema \"%s\"", text);
    tracelog_schema *s = parse_ok(text);
    if (!s)
        return;
    CHECK_EQ(tracelog_schema_size(s), size);
    if (CHECK_EQ(tracelog_schema_field_count(s), n))
        for (size_t i = 0; i < n; i++) {
            tracelog_field_info fi;
            CHECK_STATUS(tracelog_schema_field(s, i, &fi), TRACELOG_OK);
            CHECK_EQ(fi.offset, offsets[i]);
        }
    tracelog_schema_free(s);
    tl_test_context(NULL);
}

#define OFF(T, f) offsetof(T, f)
#define LAYOUT(text, T, ...)                                                                       \
    check_layout(text, sizeof(T), (const size_t[]){__VA_ARGS__},                                   \
                 sizeof((const size_t[]){__VA_ARGS__}) / sizeof(size_t))

struct net_rx { uint32_t len; uint16_t port; char iface[16]; double latency; };
struct pad_double { char c; double d; };
struct mixed { uint8_t a; uint16_t b; uint8_t c; uint32_t d; uint8_t e; };
struct tail_pad { uint32_t a; uint8_t b; };
struct chars_then_u16 { char s[3]; uint16_t x; };
struct ptr_bool { bool b; void *p; int8_t c; float f; };
struct all_types {
    uint8_t u8; uint16_t u16; uint32_t u32; uint64_t u64;
    int8_t i8; int16_t i16; int32_t i32; int64_t i64;
    float f32; double f64; bool flag; void *ptr;
    char name[5]; uint8_t raw[3]; uint64_t set[2];
    uint8_t e8; uint16_t e16; uint32_t e32; uint8_t fl8; uint16_t fl16; uint32_t fl32;
};
struct flex_char { uint32_t len; char data[]; };
struct flex_pad { uint64_t a; uint8_t b; unsigned char rest[]; };
struct only_small { uint8_t a, b, c; };
struct u16_u64_u16 { uint16_t a; uint64_t b; uint16_t c; };
struct f32_f64 { float a; double b; float c; };
struct bytes_u32 { uint8_t raw[5]; uint32_t x; };
struct enums { uint8_t a; uint32_t b; uint16_t c; uint8_t d; };
struct sets { uint8_t a; trace_event_set_t set; uint16_t b; };

static void test_layout_matches_c(void)
{
    LAYOUT("u32 len; u16 port; char[16] iface; f64 latency", struct net_rx,
           OFF(struct net_rx, len), OFF(struct net_rx, port), OFF(struct net_rx, iface),
           OFF(struct net_rx, latency));
    LAYOUT("u8 c; f64 d", struct pad_double, OFF(struct pad_double, c), OFF(struct pad_double, d));
    LAYOUT("u8 a; u16 b; u8 c; u32 d; u8 e", struct mixed, OFF(struct mixed, a),
           OFF(struct mixed, b), OFF(struct mixed, c), OFF(struct mixed, d), OFF(struct mixed, e));
    LAYOUT("u32 a; u8 b", struct tail_pad, OFF(struct tail_pad, a), OFF(struct tail_pad, b));
    LAYOUT("char[3] s; u16 x", struct chars_then_u16, OFF(struct chars_then_u16, s),
           OFF(struct chars_then_u16, x));
    LAYOUT("bool b; ptr p; i8 c; f32 f", struct ptr_bool, OFF(struct ptr_bool, b),
           OFF(struct ptr_bool, p), OFF(struct ptr_bool, c), OFF(struct ptr_bool, f));
    LAYOUT("u8 u8; u16 u16; u32 u32; u64 u64; i8 i8; i16 i16; i32 i32; i64 i64; f32 f32; "
           "f64 f64; bool flag; ptr ptr; char[5] name; bytes[3] raw; eventset[2] set; "
           "enum8 e8 {A=0}; enum16 e16 {A=0}; enum32 e32 {A=0}; flags8 fl8 {A=1}; "
           "flags16 fl16 {A=1}; flags32 fl32 {A=1}",
           struct all_types, OFF(struct all_types, u8), OFF(struct all_types, u16),
           OFF(struct all_types, u32), OFF(struct all_types, u64), OFF(struct all_types, i8),
           OFF(struct all_types, i16), OFF(struct all_types, i32), OFF(struct all_types, i64),
           OFF(struct all_types, f32), OFF(struct all_types, f64), OFF(struct all_types, flag),
           OFF(struct all_types, ptr), OFF(struct all_types, name), OFF(struct all_types, raw),
           OFF(struct all_types, set), OFF(struct all_types, e8), OFF(struct all_types, e16),
           OFF(struct all_types, e32), OFF(struct all_types, fl8), OFF(struct all_types, fl16),
           OFF(struct all_types, fl32));
    LAYOUT("u8 a; u8 b; u8 c", struct only_small, OFF(struct only_small, a),
           OFF(struct only_small, b), OFF(struct only_small, c));
    LAYOUT("u16 a; u64 b; u16 c", struct u16_u64_u16, OFF(struct u16_u64_u16, a),
           OFF(struct u16_u64_u16, b), OFF(struct u16_u64_u16, c));
    LAYOUT("f32 a; f64 b; f32 c", struct f32_f64, OFF(struct f32_f64, a), OFF(struct f32_f64, b),
           OFF(struct f32_f64, c));
    LAYOUT("bytes[5] raw; u32 x", struct bytes_u32, OFF(struct bytes_u32, raw),
           OFF(struct bytes_u32, x));
    LAYOUT("enum8 a {X=1}; enum32 b {X=1}; enum16 c {X=1}; flags8 d {X=1}", struct enums,
           OFF(struct enums, a), OFF(struct enums, b), OFF(struct enums, c), OFF(struct enums, d));
    LAYOUT("u8 a; eventset[17] set; u16 b", struct sets, OFF(struct sets, a),
           OFF(struct sets, set), OFF(struct sets, b));

    /* A flexible array member starts where C puts it; the schema's size is
       then that offset (the least a payload holds), not the padded sizeof. */
    tracelog_schema *s = parse_ok("u32 len; char[] data");
    if (s) {
        tracelog_field_info fi;
        CHECK_STATUS(tracelog_schema_field(s, 1, &fi), TRACELOG_OK);
        CHECK_EQ(fi.offset, offsetof(struct flex_char, data));
        CHECK_EQ(fi.size, 0);
        CHECK(fi.variable);
        CHECK_EQ(tracelog_schema_size(s), offsetof(struct flex_char, data));
        CHECK(tracelog_schema_is_variable(s));
    }
    tracelog_schema_free(s);
    s = parse_ok("u64 a; u8 b; bytes[] rest");
    if (s) {
        tracelog_field_info fi;
        CHECK_STATUS(tracelog_schema_field(s, 2, &fi), TRACELOG_OK);
        CHECK_EQ(fi.offset, offsetof(struct flex_pad, rest));
        CHECK_EQ(tracelog_schema_size(s), offsetof(struct flex_pad, rest));
    }
    tracelog_schema_free(s);
}

/* ---- values of every type ----------------------------------------------------- */

static void check_text(const tracelog_fields *f, const char *name, const char *want)
{
    char buf[512];
    size_t len = 0;
    size_t i = tracelog_schema_find(f->schema, name);
    tracelog_status st = tracelog_fields_format(f, i, buf, sizeof buf, &len);
    if (!CHECK_MSG(st == TRACELOG_OK, "format %s: %s", name, tracelog_status_name(st)))
        return;
    CHECK_STR_EQ(buf, want);
    CHECK_EQ(len, strlen(want));
}

static void test_values(void)
{
    const char *text = "u8 u8; u16 u16; u32 u32; u64 u64; i8 i8; i16 i16; i32 i32; i64 i64; "
                       "f32 f32; f64 f64; bool flag; ptr ptr; char[5] name; bytes[3] raw; "
                       "eventset[2] set; enum8 e8 {IDLE=0, BUSY=1}; enum16 e16 {A=7}; "
                       "enum32 e32 {BIG=4000000000}; flags8 fl8 {READ=1, WRITE=2, RW=3}; "
                       "flags16 fl16 {X=0x100}; flags32 fl32 {TOP=0x80000000}";
    tracelog_schema *s = parse_ok(text);
    if (!s)
        return;
    struct all_types v;
    memset(&v, 0xAB, sizeof v); /* padding bytes must not matter */
    v.u8 = 255; v.u16 = 65535; v.u32 = 4294967295u; v.u64 = UINT64_MAX;
    v.i8 = -128; v.i16 = -32768; v.i32 = -2147483647 - 1; v.i64 = INT64_MIN;
    v.f32 = 0.1f; v.f64 = 0.000231; v.flag = true; v.ptr = (void *)(uintptr_t)0x7ffd1234abcdull;
    memcpy(v.name, "eth0", 5); memcpy(v.raw, "\x00\x7f\xff", 3);
    v.set[0] = 0x1FEull | 1ull << 63; v.set[1] = 1; /* ids 1-8, 63, 64 */
    v.e8 = 1; v.e16 = 9; v.e32 = 4000000000u; v.fl8 = 3; v.fl16 = 0x101; v.fl32 = 0;
    CHECK_EQ(tracelog_schema_size(s), sizeof v);
    uint8_t *p = exact(&v, sizeof v);
    tracelog_fields f;
    CHECK_STATUS(tracelog_fields_decode(s, p, sizeof v, &f), TRACELOG_OK);
    CHECK_EQ(f.present, 21);
    CHECK_EQ_INT(f.size_check, 0);

    int64_t i;
    uint64_t u;
    double d;
    CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(s, "u64"), &u), TRACELOG_OK);
    CHECK_EQ(u, UINT64_MAX);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "u64"), &i), TRACELOG_E_LIMIT);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "u32"), &i), TRACELOG_OK);
    CHECK_EQ_INT(i, 4294967295ll);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "i8"), &i), TRACELOG_OK);
    CHECK_EQ_INT(i, -128);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "i16"), &i), TRACELOG_OK);
    CHECK_EQ_INT(i, -32768);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "i32"), &i), TRACELOG_OK);
    CHECK_EQ_INT(i, INT32_MIN);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "i64"), &i), TRACELOG_OK);
    CHECK_EQ_INT(i, INT64_MIN);
    CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(s, "i64"), &u), TRACELOG_E_LIMIT);
    CHECK_STATUS(tracelog_fields_double(&f, tracelog_schema_find(s, "i16"), &d), TRACELOG_OK);
    CHECK(d == -32768.0);
    CHECK_STATUS(tracelog_fields_double(&f, tracelog_schema_find(s, "f32"), &d), TRACELOG_OK);
    CHECK(d == (double)0.1f);
    CHECK_STATUS(tracelog_fields_double(&f, tracelog_schema_find(s, "f64"), &d), TRACELOG_OK);
    CHECK(d == 0.000231);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "f64"), &i), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_fields_int(&f, tracelog_schema_find(s, "flag"), &i), TRACELOG_OK);
    CHECK_EQ_INT(i, 1);
    CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(s, "ptr"), &u), TRACELOG_OK);
    CHECK_EQ(u, 0x7ffd1234abcdull);
    CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(s, "e32"), &u), TRACELOG_OK);
    CHECK_EQ(u, 4000000000u);
    CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(s, "name"), &u), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_fields_double(&f, tracelog_schema_find(s, "set"), &d), TRACELOG_E_INVAL);

    const char *str;
    size_t n;
    CHECK_STATUS(tracelog_fields_string(&f, tracelog_schema_find(s, "name"), &str, &n), TRACELOG_OK);
    CHECK_EQ(n, 4);
    CHECK(n == 4 && memcmp(str, "eth0", 4) == 0);
    CHECK_STATUS(tracelog_fields_string(&f, tracelog_schema_find(s, "raw"), &str, &n),
                 TRACELOG_E_INVAL);
    const uint8_t *b;
    CHECK_STATUS(tracelog_fields_bytes(&f, tracelog_schema_find(s, "raw"), &b, &n), TRACELOG_OK);
    CHECK(n == 3 && b == p + offsetof(struct all_types, raw));
    CHECK_STATUS(tracelog_fields_bytes(&f, tracelog_schema_find(s, "u32"), &b, &n), TRACELOG_OK);
    CHECK(n == 4 && b == p + offsetof(struct all_types, u32));

    check_text(&f, "u8", "255");
    check_text(&f, "u64", "18446744073709551615");
    check_text(&f, "i8", "-128");
    check_text(&f, "i64", "-9223372036854775808");
    check_text(&f, "f32", "0.1");
    check_text(&f, "f64", "0.000231");
    check_text(&f, "flag", "true");
    check_text(&f, "ptr", "0x7ffd1234abcd");
    check_text(&f, "name", "eth0");
    check_text(&f, "raw", "007fff");
    check_text(&f, "set", "[1-8, 63-64]");
    check_text(&f, "e8", "BUSY");
    check_text(&f, "e16", "9"); /* a value without a name: the number */
    check_text(&f, "e32", "BIG");
    check_text(&f, "fl8", "READ|WRITE|RW");
    check_text(&f, "fl16", "X|0x1");
    check_text(&f, "fl32", "0");

    /* Index errors, and the by-name lookup that feeds them. */
    CHECK_EQ(tracelog_schema_find(s, "nope"), TRACELOG_SCHEMA_NO_FIELD);
    CHECK_STATUS(tracelog_fields_int(&f, TRACELOG_SCHEMA_NO_FIELD, &i), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_fields_int(&f, 21, &i), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_fields_int(NULL, 0, &i), TRACELOG_E_INVAL);
    free(p);
    tracelog_schema_free(s);
}

/*
 * A flag whose value has several bits (RW = 3, HIGH = 0xC0, TOPS =
 * 0xC0000000) is named only when all of its bits are set: one of them alone
 * names the one-bit flag, or is shown as hex. Every value of the low bits,
 * in flags8, flags16 and flags32.
 */
static void test_multi_bit_flags(void)
{
    tracelog_schema *s = parse_ok("flags8 f8 {READ=1, WRITE=2, RW=3, HIGH=0xC0}; "
                                  "flags16 f16 {LO=0x100, BOTH=0x300}; "
                                  "flags32 f32 {A=1, TOPS=0xC0000000, B=0x80000000}");
    if (!s)
        return;
    static const struct {
        uint8_t f8;
        uint16_t f16;
        uint32_t f32;
        const char *t8, *t16, *t32;
    } cases[] = {
        {0, 0, 0, "0", "0", "0"},
        {1, 0x100, 1, "READ", "LO", "A"},
        {2, 0x200, 0x40000000, "WRITE", "0x200", "0x40000000"},
        {3, 0x300, 0xC0000000, "READ|WRITE|RW", "LO|BOTH", "TOPS|B"},
        {0x40, 0x301, 0x80000000, "0x40", "LO|BOTH|0x1", "B"},
        {0x80, 0x201, 0x80000001, "0x80", "0x201", "A|B"},
        {0xC0, 0x101, 0x40000001, "HIGH", "LO|0x1", "A|0x40000000"},
        {0x41, 0x3ff, 0xC0000001, "READ|0x40", "LO|BOTH|0xff", "A|TOPS|B"},
        {0xC2, 0x0, 0x7fffffff, "WRITE|HIGH", "0", "A|0x7ffffffe"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct {
            uint8_t f8;
            uint16_t f16;
            uint32_t f32;
        } v = {cases[k].f8, cases[k].f16, cases[k].f32};
        uint8_t *p = exact(&v, sizeof v);
        tracelog_fields f;
        tl_test_context("f8 0x%x, f16 0x%x, f32 0x%x", cases[k].f8, cases[k].f16, cases[k].f32);
        if (CHECK_STATUS(tracelog_fields_decode(s, p, sizeof v, &f), TRACELOG_OK)) {
            check_text(&f, "f8", cases[k].t8);
            check_text(&f, "f16", cases[k].t16);
            check_text(&f, "f32", cases[k].t32);
        }
        free(p);
    }
    tl_test_context(NULL);
    tracelog_schema_free(s);
}

static void test_text_forms(void)
{
    tracelog_schema *s = parse_ok("f64 a; f32 b; bool c; char[4] d; flags8 e {R=1, W=2}; "
                                  "enum8 g {A=0}; eventset[1] h");
    if (!s)
        return;
    struct { double a; float b; bool c; char d[4]; uint8_t e, g; uint64_t h; } v;
    memset(&v, 0, sizeof v);
    v.a = NAN;
    v.b = -INFINITY;
    v.c = 2; /* any non-zero byte reads as true */
    memcpy(v.d, "abcd", 4); /* no NUL: the whole field */
    v.e = 0x10 | 1;
    v.h = 1; /* id 0 */
    uint8_t *p = exact(&v, sizeof v);
    tracelog_fields f;
    CHECK_STATUS(tracelog_fields_decode(s, p, sizeof v, &f), TRACELOG_OK);
    check_text(&f, "a", "nan");
    check_text(&f, "b", "-inf");
    check_text(&f, "c", "true");
    check_text(&f, "d", "abcd");
    check_text(&f, "e", "R|0x10");
    check_text(&f, "g", "A");
    check_text(&f, "h", "[0]");
    v.a = 1.0 / 3;
    v.b = 16777216.0f;
    v.h = 0;
    memcpy(p, &v, sizeof v);
    check_text(&f, "a", "0.3333333333333333");
    check_text(&f, "b", "16777216");
    check_text(&f, "h", "[]");
    double back = strtod("0.3333333333333333", NULL);
    CHECK(back == 1.0 / 3); /* shortest form, and it reads back */

    /* Cut to the buffer, NUL-terminated, full length reported like snprintf. */
    char small[4];
    size_t len = 0;
    CHECK_STATUS(tracelog_fields_format(&f, 0, small, sizeof small, &len), TRACELOG_OK);
    CHECK_STR_EQ(small, "0.3");
    CHECK_EQ(len, 18);
    CHECK_STATUS(tracelog_fields_format(&f, 0, NULL, 0, &len), TRACELOG_OK);
    CHECK_EQ(len, 18);
    CHECK_STATUS(tracelog_fields_format(&f, 0, NULL, 4, &len), TRACELOG_E_INVAL);
    free(p);
    tracelog_schema_free(s);
}

/*
 * The float text on these values: the shortest %.Ng that reads back, N from
 * 15 (6 for f32) for a normal value, from 1 for a subnormal one, whose
 * %.15g can have digits to spare (1e-45, not 1.4013e-45). Where printf's
 * rounding to the fewest digits does not read back but a neighbour does
 * (at a power of two), the text is shorter still: tests/test_double_text.c
 * checks that case, and every value's digits, in depth.
 */
static void reference_float(double v, int is_f32, char *buf, size_t cap)
{
    if (isnan(v)) {
        snprintf(buf, cap, "nan");
        return;
    }
    if (isinf(v)) {
        snprintf(buf, cap, v < 0 ? "-inf" : "inf");
        return;
    }
    int subnormal = v != 0 && fabs(v) < (is_f32 ? FLT_MIN : DBL_MIN);
    for (int prec = subnormal ? 1 : is_f32 ? 6 : 15; prec <= (is_f32 ? 9 : 17); prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (is_f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
            return;
    }
}

/* Floats as text against the definition, over decimals of every size and random bit patterns. */
static void test_float_text(void)
{
    tracelog_schema *s = parse_ok("f64 d; f32 f");
    if (!s)
        return;
    uint64_t rng = 0x243F6A8885A308D3ull;
    unsigned bad = 0;
    for (int i = 0; i < 300000 && bad < 5; i++) {
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        double v;
        if (i % 3 == 0) { /* any bits */
            uint64_t bits = rng;
            memcpy(&v, &bits, sizeof v);
        } else { /* a short decimal at some scale: what programs mostly record */
            double digits = (double)((rng >> 20) % (i % 3 == 1 ? 1000000u : 1000000000000u));
            v = digits / pow(10.0, (double)((rng >> 8) % 24)) * ((rng & 1) ? -1 : 1);
        }
        struct { double d; float f; } p = {v, (float)v};
        tracelog_fields fl;
        tracelog_fields_decode(s, &p, sizeof p, &fl);
        char got[64], want[64];
        for (int k = 0; k < 2; k++) {
            tracelog_fields_format(&fl, (size_t)k, got, sizeof got, NULL);
            reference_float(k ? (double)p.f : p.d, k, want, sizeof want);
            if (!CHECK_MSG(strcmp(got, want) == 0, "%s %.17g: \"%s\", want \"%s\"", k ? "f32" : "f64",
                           k ? (double)p.f : p.d, got, want))
                bad++;
        }
    }
    tracelog_schema_free(s);
}

/* ---- sizes: short, long, variable ---------------------------------------------- */

static void test_short_and_long_payloads(void)
{
    tracelog_schema *s = parse_ok("u32 len; u16 port; char[16] iface; f64 latency");
    if (!s)
        return;
    struct net_rx rx = {1500, 443, "eth0", 0.000231};
    /* Every length from 0 to 8 bytes past the struct. */
    for (size_t len = 0; len <= sizeof rx + 8; len++) {
        tl_test_context("payload of %zu bytes", len);
        uint8_t buf[sizeof rx + 8] = {0};
        memcpy(buf, &rx, sizeof rx);
        uint8_t *p = exact(buf, len);
        tracelog_fields f;
        tracelog_status st = tracelog_fields_decode(s, p, len, &f);
        size_t want = len >= 32 ? 4 : len >= 22 ? 3 : len >= 6 ? 2 : len >= 4 ? 1 : 0;
        CHECK_EQ(f.present, want);
        CHECK_STATUS(st, len < sizeof rx ? TRACELOG_E_TRUNCATED
                         : len > sizeof rx ? TRACELOG_E_CORRUPT : TRACELOG_OK);
        CHECK_EQ_INT(f.size_check, len < sizeof rx ? -1 : len > sizeof rx);
        uint64_t port;
        CHECK_STATUS(tracelog_fields_uint(&f, 1, &port), len >= 6 ? TRACELOG_OK : TRACELOG_E_TRUNCATED);
        if (len >= 6)
            CHECK_EQ(port, 443);
        char text[32];
        CHECK_STATUS(tracelog_fields_format(&f, 3, text, sizeof text, NULL),
                     len >= 32 ? TRACELOG_OK : TRACELOG_E_TRUNCATED);
        free(p);
    }
    tl_test_context(NULL);
    /* The view is the caller's: a present count raised by hand does not make
       the decoder read past len. */
    uint8_t *p = exact(&rx, 8);
    tracelog_fields f;
    tracelog_fields_decode(s, p, 8, &f);
    f.present = 4;
    double d;
    CHECK_STATUS(tracelog_fields_double(&f, 3, &d), TRACELOG_E_TRUNCATED);
    free(p);
    tracelog_schema_free(s);

    /* Variable: at least the fixed part; the tail is the rest, possibly empty. */
    s = parse_ok("u32 len; char[] text");
    if (!s)
        return;
    uint8_t buf[12] = {5, 0, 0, 0, 'h', 'e', 'l', 'l', 'o', 0, 'x', 'y'};
    for (size_t len = 0; len <= sizeof buf; len++) {
        tl_test_context("variable payload of %zu bytes", len);
        p = exact(buf, len);
        tracelog_status st = tracelog_fields_decode(s, p, len, &f);
        CHECK_STATUS(st, len < 4 ? TRACELOG_E_TRUNCATED : TRACELOG_OK);
        CHECK_EQ(f.present, len < 4 ? 0 : 2);
        const char *t;
        size_t n;
        if (len >= 4 && CHECK_STATUS(tracelog_fields_string(&f, 1, &t, &n), TRACELOG_OK))
            CHECK_EQ(n, len < 9 ? len - 4 : 5);
        free(p);
    }
    tl_test_context(NULL);
    tracelog_schema_free(s);

    /* The empty schema describes an empty payload. */
    s = parse_ok(" \t\n");
    if (s) {
        CHECK_EQ(tracelog_schema_field_count(s), 0);
        CHECK_EQ(tracelog_schema_size(s), 0);
        CHECK_STR_EQ(tracelog_schema_text(s), "");
        CHECK_STATUS(tracelog_fields_decode(s, NULL, 0, &f), TRACELOG_OK);
        p = exact("x", 1);
        CHECK_STATUS(tracelog_fields_decode(s, p, 1, &f), TRACELOG_E_CORRUPT);
        free(p);
    }
    tracelog_schema_free(s);
}

/* ---- errors and their positions ------------------------------------------------- */

typedef struct bad_case {
    const char *text;
    tracelog_status code;
    size_t position;
    const char *says; /* part of the message */
} bad_case;

static const bad_case bad_cases[] = {
    {"u33 x", TRACELOG_E_INVAL, 0, "unknown type 'u33'"},
    {"U8 x", TRACELOG_E_INVAL, 0, "unknown type 'U8'"},
    {"u8x", TRACELOG_E_INVAL, 0, "unknown type 'u8x'"},
    {"u32", TRACELOG_E_INVAL, 3, "expected a field name, found the end"},
    {"u32 len;;", TRACELOG_E_INVAL, 8, "expected a type, found ';'"},
    {";", TRACELOG_E_INVAL, 0, "expected a type, found ';'"},
    {"u32 1len", TRACELOG_E_INVAL, 4, "expected a field name, found '1'"},
    {"u32 len u16 port", TRACELOG_E_INVAL, 8, "expected ';' or the end, found 'u'"},
    {"u32 l-en", TRACELOG_E_INVAL, 5, "expected ';' or the end, found '-'"},
    {"u8 a; u8 a", TRACELOG_E_INVAL, 9, "field name 'a' repeated"},
    {"char[0] x", TRACELOG_E_INVAL, 5, "array size 0"},
    {"char[x] a", TRACELOG_E_INVAL, 5, "expected a decimal digit, found 'x'"},
    {"char[4 ] a", TRACELOG_E_INVAL, 6, "expected ']' after the array size, found byte 0x20"},
    {"char [4] x", TRACELOG_E_INVAL, 4, "expected '[' after the type, found byte 0x20"},
    {"char x", TRACELOG_E_INVAL, 4, "expected '[' after the type"},
    {"char[4]x", TRACELOG_E_INVAL, 7, "expected a space after the type, found 'x'"},
    {"bytes[1048577] a", TRACELOG_E_LIMIT, 6, "array size above 1048576"},
    {"eventset[131073] a", TRACELOG_E_LIMIT, 9, "array size above 131072"},
    {"eventset[] a", TRACELOG_E_INVAL, 9, "expected a decimal digit, found ']'"},
    {"char[] a; u8 b", TRACELOG_E_INVAL, 10, "must be the last"},
    {"bytes[] a; bytes[] b", TRACELOG_E_INVAL, 11, "must be the last"},
    {"bytes[1048576] a; u8 b", TRACELOG_E_LIMIT, 18, "fields span more than 1048576 bytes"},
    {"u8 a; bytes[1048576] b", TRACELOG_E_LIMIT, 6, "fields span more than 1048576 bytes"},
    {"enum8 e", TRACELOG_E_INVAL, 7, "expected '{' before the values, found the end"},
    {"enum8 e {}", TRACELOG_E_INVAL, 9, "expected a value name, found '}'"},
    {"enum8 e {A=256}", TRACELOG_E_INVAL, 11, "enum8 above 255"},
    {"enum16 e {A=0x10000}", TRACELOG_E_INVAL, 12, "enum16 above 65535"},
    {"enum32 e {A=4294967296}", TRACELOG_E_INVAL, 12, "enum32 above 4294967295"},
    {"enum32 e {A=99999999999999999999999}", TRACELOG_E_INVAL, 12, "enum32 above 4294967295"},
    {"enum8 e {A=1, A=2}", TRACELOG_E_INVAL, 14, "value name 'A' repeated in 'e'"},
    {"enum8 e {A=1", TRACELOG_E_INVAL, 12, "expected ',' or '}', found the end"},
    {"enum8 e {A 1}", TRACELOG_E_INVAL, 11, "expected '=' after a value name, found '1'"},
    {"enum8 e {A=}", TRACELOG_E_INVAL, 11, "expected a decimal digit, found '}'"},
    {"enum8 e {A=0x}", TRACELOG_E_INVAL, 13, "expected a hex digit, found '}'"},
    {"enum8 e {A=0xg}", TRACELOG_E_INVAL, 13, "expected a hex digit, found 'g'"},
    {"enum8 e {A=12b}", TRACELOG_E_INVAL, 13, "expected a decimal digit, found 'b'"},
    {"enum8 e {A=-1}", TRACELOG_E_INVAL, 11, "expected a decimal digit, found '-'"},
    {"enum8 e {A=1,,}", TRACELOG_E_INVAL, 13, "expected a value name, found ','"},
    {"flags8 f {A=0}", TRACELOG_E_INVAL, 12, "flag 'A' has no bit set"},
    {"flags8 f {A=1} x", TRACELOG_E_INVAL, 15, "expected ';' or the end, found 'x'"},
    {"u8 \xc3\xa9", TRACELOG_E_INVAL, 3, "expected a field name, found byte 0xc3"},
};

static void test_errors(void)
{
    for (size_t k = 0; k < sizeof bad_cases / sizeof *bad_cases; k++) {
        const bad_case *c = &bad_cases[k];
        tl_test_context("schema \"%s\"", c->text);
        tracelog_schema *s = (tracelog_schema *)1;
        tracelog_error err;
        memset(&err, 0x55, sizeof err);
        CHECK_STATUS(tracelog_schema_parse(c->text, &s, &err), c->code);
        CHECK(s == NULL);
        CHECK_STATUS(err.code, c->code);
        CHECK_EQ(err.offset, c->position);
        CHECK_EQ(err.sys_errno, 0);
        char prefix[40];
        snprintf(prefix, sizeof prefix, "schema byte %zu: ", c->position);
        CHECK_MSG(strncmp(err.message, prefix, strlen(prefix)) == 0, "message \"%s\"", err.message);
        CHECK_MSG(strstr(err.message, c->says) != NULL, "message \"%s\" lacks \"%s\"", err.message,
                  c->says);
    }
    tl_test_context(NULL);
    tracelog_error err;
    tracelog_schema *s;
    /* A NUL byte inside a counted text (as a log's entry can hold). */
    CHECK_STATUS(tl_schema_parse("u8 a\0u8 b", 9, &s, &err), TRACELOG_E_INVAL);
    CHECK_EQ(err.offset, 4);
    CHECK(strstr(err.message, "found byte 0x00") != NULL);
    /* NULL arguments. */
    CHECK_STATUS(tracelog_schema_parse(NULL, &s, &err), TRACELOG_E_INVAL);
    CHECK(s == NULL);
    CHECK_STATUS(tracelog_schema_parse("u8 a", NULL, NULL), TRACELOG_E_INVAL);
    CHECK_STATUS(tl_schema_parse(NULL, 3, &s, NULL), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_fields_decode(NULL, "", 0, NULL), TRACELOG_E_INVAL);
    tracelog_schema_free(NULL);
    CHECK(tracelog_schema_text(NULL) == NULL);
    CHECK_EQ(tracelog_schema_field_count(NULL), 0);
}

/* ---- limits ----------------------------------------------------------------------- */

static char *text_of(tl_buf *b)
{
    if (tl_buf_append(b, "", 1))
        TL_DIE("out of memory");
    return (char *)b->data;
}

static void append(tl_buf *b, const char *s)
{
    if (tl_buf_append(b, s, strlen(s)))
        TL_DIE("out of memory");
}

static void check_limit(const char *text, tracelog_status want, size_t position, const char *what)
{
    tl_test_context("%s", what);
    tracelog_schema *s = NULL;
    tracelog_error err = {0};
    CHECK_STATUS(tracelog_schema_parse(text, &s, &err), want);
    if (want != TRACELOG_OK)
        CHECK_EQ(err.offset, position);
    tracelog_schema_free(s);
    tl_test_context(NULL);
}

/* A name of n bytes, different for each k. */
static void put_name(tl_buf *b, size_t n, unsigned k)
{
    char name[80];
    snprintf(name, sizeof name, "n%05u", k);
    size_t len = strlen(name);
    memset(name + len, 'x', n > len ? n - len : 0);
    name[n] = 0;
    append(b, name);
}

static void test_limits(void)
{
    /* Fields: 256 accepted, the 257th refused where it starts. */
    tl_buf b = {0};
    size_t at257 = 0;
    for (unsigned k = 0; k < 257; k++) {
        if (k)
            append(&b, "; ");
        if (k == 256)
            at257 = b.len;
        append(&b, "u8 ");
        put_name(&b, 6, k);
    }
    char *t = text_of(&b);
    check_limit(t, TRACELOG_E_LIMIT, at257, "257 fields");
    t[at257 - 2] = 0;
    check_limit(t, TRACELOG_OK, 0, "256 fields");
    tl_buf_free(&b);

    /* Names: 63 bytes accepted, 64 refused. */
    b = (tl_buf){0};
    append(&b, "u8 ");
    put_name(&b, 64, 0);
    check_limit(text_of(&b), TRACELOG_E_LIMIT, 3, "64-byte name");
    tl_buf_free(&b);
    b = (tl_buf){0};
    append(&b, "enum8 e {");
    put_name(&b, 63, 0);
    append(&b, "=1, ");
    put_name(&b, 64, 1);
    append(&b, "=2}");
    check_limit(text_of(&b), TRACELOG_E_LIMIT, 9 + 63 + 4, "64-byte value name");
    tl_buf_free(&b);

    /* Values: 256 per field, 512 per schema. */
    b = (tl_buf){0};
    append(&b, "enum16 e {");
    size_t at257v = 0;
    for (unsigned k = 0; k < 257; k++) {
        if (k)
            append(&b, ", ");
        if (k == 256)
            at257v = b.len;
        put_name(&b, 6, k);
        append(&b, "=1");
    }
    append(&b, "}");
    check_limit(text_of(&b), TRACELOG_E_LIMIT, at257v, "257 values in a field");
    tl_buf_free(&b);
    b = (tl_buf){0};
    size_t at513 = 0;
    for (unsigned k = 0; k < 513; k++) {
        if (k % 256 == 0)
            append(&b, k ? "}; flags32 f" : "flags32 f");
        if (k % 256 == 0) {
            char n[8];
            snprintf(n, sizeof n, "%u {", k / 256);
            append(&b, n);
        } else {
            append(&b, ", ");
        }
        if (k == 512)
            at513 = b.len;
        put_name(&b, 6, k);
        append(&b, "=0x1");
    }
    append(&b, "}");
    check_limit(text_of(&b), TRACELOG_E_LIMIT, at513, "513 values in a schema");
    tl_buf_free(&b);

    /* Size: exactly 1 MiB accepted (the padding included). */
    check_limit("bytes[1048576] a", TRACELOG_OK, 0, "1 MiB");
    check_limit("eventset[131072] a", TRACELOG_OK, 0, "1 MiB of eventset");
    check_limit("u64 a; bytes[1048568] b", TRACELOG_OK, 0, "1 MiB in two fields");
    check_limit("u64 a; bytes[1048569] b", TRACELOG_E_LIMIT, 7, "1 MiB + 1");
    check_limit("bytes[1048575] b; u8 c; bytes[] tail", TRACELOG_OK, 0, "1 MiB and a tail");

    /* Text: 65536 bytes accepted (spaces are text too), 65537 refused at 65536. */
    char *big = malloc(TRACELOG_SCHEMA_TEXT_MAX + 2);
    if (!big)
        TL_DIE("out of memory");
    memset(big, ' ', TRACELOG_SCHEMA_TEXT_MAX + 1);
    memcpy(big, "u8 a", 4);
    big[TRACELOG_SCHEMA_TEXT_MAX] = 0;
    check_limit(big, TRACELOG_OK, 0, "65536 bytes");
    big[TRACELOG_SCHEMA_TEXT_MAX + 1] = 0;
    big[TRACELOG_SCHEMA_TEXT_MAX] = ' ';
    check_limit(big, TRACELOG_E_LIMIT, TRACELOG_SCHEMA_TEXT_MAX, "65537 bytes");
    free(big);

    /* The longest canonical form the limits allow still fits the text limit,
       so every schema a writer stores reads back: 256 fields with 63-byte
       names, 512 values with 63-byte names and 10-character values, and the
       longest array types the size limit allows. */
    tracelog_schema *s = NULL;
    tracelog_error err = {0};
    b = (tl_buf){0};
    for (unsigned k = 0; k < 256; k++) {
        if (k)
            append(&b, ";");
        if (k < 2) {
            append(&b, "flags32 ");
            put_name(&b, 63, k);
            append(&b, "{");
            for (unsigned j = 0; j < 256; j++) {
                if (j)
                    append(&b, ",");
                put_name(&b, 63, 1000 + 256 * k + j);
                append(&b, "=0xffffffff");
            }
            append(&b, "}");
        } else {
            append(&b, "eventset[512] "); /* 254 x 4 KiB: near the size limit */
            put_name(&b, 63, k);
        }
    }
    CHECK_STATUS(tracelog_schema_parse(text_of(&b), &s, &err), TRACELOG_OK);
    if (s) {
        size_t n = strlen(tracelog_schema_text(s));
        CHECK_MSG(n <= TRACELOG_SCHEMA_TEXT_MAX, "canonical form of %zu bytes", n);
        tracelog_schema *again = NULL;
        CHECK_STATUS(tracelog_schema_parse(tracelog_schema_text(s), &again, &err), TRACELOG_OK);
        tracelog_schema_free(again);
    }
    tracelog_schema_free(s);
    tl_buf_free(&b);
}

/* ---- canonical form ---------------------------------------------------------------- */

static void check_same_layout(const tracelog_schema *a, const tracelog_schema *b)
{
    CHECK_EQ(tracelog_schema_size(a), tracelog_schema_size(b));
    CHECK_EQ(tracelog_schema_is_variable(a), tracelog_schema_is_variable(b));
    if (!CHECK_EQ(tracelog_schema_field_count(a), tracelog_schema_field_count(b)))
        return;
    for (size_t i = 0; i < tracelog_schema_field_count(a); i++) {
        tracelog_field_info x, y;
        tracelog_schema_field(a, i, &x);
        tracelog_schema_field(b, i, &y);
        CHECK_STR_EQ(x.name, y.name);
        CHECK(x.type == y.type && x.offset == y.offset && x.size == y.size &&
              x.count == y.count && x.item_count == y.item_count && x.variable == y.variable);
        for (size_t j = 0; j < x.item_count; j++) {
            const char *nx, *ny;
            uint64_t vx, vy;
            tracelog_schema_item(a, i, j, &nx, &vx);
            tracelog_schema_item(b, i, j, &ny, &vy);
            CHECK_STR_EQ(nx, ny);
            CHECK_EQ(vx, vy);
        }
    }
}

static void test_canonical(void)
{
    static const struct { const char *in, *canonical; } cases[] = {
        {"  u32   len ;\n u16 port;char[16]\tiface ; enum8 st{ IDLE = 0 , BUSY=0x1, } ;"
         "flags16 m {R=1,W=0x0002};bytes[] rest ;",
         "u32 len; u16 port; char[16] iface; enum8 st {IDLE=0, BUSY=1}; "
         "flags16 m {R=0x1, W=0x2}; bytes[] rest"},
        {"u8 a;", "u8 a"},
        {"enum32 e {Z=007, Y=0xFFFFFFFF}", "enum32 e {Z=7, Y=4294967295}"},
        {"eventset[017] s", "eventset[17] s"},
        {"char[0x10] a", "char[16] a"},
        {"\r\n", ""},
        {"ptr p; bool b; f32 x; f64 y; i64 z", "ptr p; bool b; f32 x; f64 y; i64 z"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        tl_test_context("schema \"%s\"", cases[k].in);
        tracelog_schema *a = parse_ok(cases[k].in);
        if (!a)
            continue;
        CHECK_STR_EQ(tracelog_schema_text(a), cases[k].canonical);
        CHECK_EQ(tl_schema_text_len(a), strlen(cases[k].canonical));
        tracelog_schema *b = parse_ok(tracelog_schema_text(a));
        if (b) {
            CHECK_STR_EQ(tracelog_schema_text(b), cases[k].canonical);
            check_same_layout(a, b);
        }
        tracelog_schema_free(a);
        tracelog_schema_free(b);
    }
    tl_test_context(NULL);

    /* Items, enum names and type names. */
    tracelog_schema *s = parse_ok("enum8 st {IDLE=0, BUSY=1, ALSO_IDLE=0}; flags8 f {R=1}; u8 x");
    if (!s)
        return;
    const char *name = NULL;
    uint64_t value = 9;
    CHECK_STATUS(tracelog_schema_item(s, 0, 2, &name, &value), TRACELOG_OK);
    CHECK_STR_EQ(name, "ALSO_IDLE");
    CHECK_EQ(value, 0);
    CHECK_STATUS(tracelog_schema_item(s, 0, 3, &name, &value), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_schema_item(s, 2, 0, &name, &value), TRACELOG_E_INVAL);
    CHECK_STR_EQ(tracelog_schema_enum_name(s, 0, 0), "IDLE"); /* the first of equal values */
    CHECK(tracelog_schema_enum_name(s, 0, 2) == NULL);
    CHECK(tracelog_schema_enum_name(s, 1, 1) == NULL); /* flags are not an enum */
    tracelog_field_info fi;
    CHECK_STATUS(tracelog_schema_field(s, 1, &fi), TRACELOG_OK);
    CHECK(fi.type == TRACELOG_FIELD_FLAGS && fi.item_count == 1 && fi.size == 1);
    CHECK_STATUS(tracelog_schema_field(s, 3, &fi), TRACELOG_E_INVAL);
    CHECK_STR_EQ(tracelog_field_type_name(TRACELOG_FIELD_ENUM), "enum");
    CHECK_STR_EQ(tracelog_field_type_name(TRACELOG_FIELD_EVENTSET), "eventset");
    CHECK_STR_EQ(tracelog_field_type_name(TRACELOG_FIELD_U16), "u16");
    CHECK(tracelog_field_type_name((tracelog_field_type)0) == NULL);
    tracelog_schema_free(s);
}

/*
 * Mutations of valid schemas (a byte replaced, inserted or deleted): every
 * result either parses, with a canonical form that is a fixed point, or
 * fails with a position inside the text and a message.
 */
static void test_mutations(void)
{
    static const char *const seeds[] = {
        "u32 len; u16 port; char[16] iface; f64 latency",
        "enum8 st {IDLE=0, BUSY=1}; flags16 m {R=0x1, W=0x2}; bytes[] rest",
        "eventset[17] f; ptr p; bool b; i8 c; char[] t",
    };
    static const char alphabet[] = " ;{}[],=0x19afAZ_u8cbe\n\t-";
    uint64_t rng = 0x9E3779B97F4A7C15ull;
    unsigned failures = 0;
    for (int k = 0; k < 30000 && failures < 5; k++) {
        const char *seed = seeds[k % 3];
        char buf[128];
        size_t n = strlen(seed);
        memcpy(buf, seed, n + 1);
        rng = rng * 6364136223846793005ull + 1442695040888963407ull;
        size_t at = (size_t)(rng >> 33) % n;
        char c = alphabet[(rng >> 20) % (sizeof alphabet - 1)];
        switch ((rng >> 10) % 3) {
        case 0: buf[at] = c; break;
        case 1: memmove(buf + at + 1, buf + at, n - at + 1); buf[at] = c; n++; break;
        default: memmove(buf + at, buf + at + 1, n - at); n--; break;
        }
        tracelog_schema *s = NULL;
        tracelog_error err = {0};
        tracelog_status st = tracelog_schema_parse(buf, &s, &err);
        if (st != TRACELOG_OK) {
            if (!CHECK_MSG((st == TRACELOG_E_INVAL || st == TRACELOG_E_LIMIT) && err.offset <= n &&
                               err.message[0],
                           "\"%s\": %s at %llu", buf, tracelog_status_name(st),
                           (unsigned long long)err.offset))
                failures++;
            continue;
        }
        tracelog_schema *again = NULL;
        if (!CHECK_STATUS(tracelog_schema_parse(tracelog_schema_text(s), &again, &err), TRACELOG_OK) ||
            !CHECK_STR_EQ(tracelog_schema_text(again), tracelog_schema_text(s)))
            failures++;
        else
            check_same_layout(s, again);
        tracelog_schema_free(again);
        tracelog_schema_free(s);
    }
}

/* ---- built-in schemas of the POSIX system events ---------------------------------- */

static void test_system_schemas(void)
{
    CHECK(tl_system_event_schema(0) == NULL);
    CHECK(tl_system_event_schema(10) == NULL);
    CHECK(tl_system_event_schema(POSIX_TRACE_UNNAMED_USEREVENT) == NULL);
    /* What posix/ and stream/ record for each id (sizeof of the C data). */
    /* 9: tracelog_process_end (a controller's log: how the traced process ended, and its code). */
    static const size_t sizes[10] = {0, sizeof(int), sizeof(trace_event_set_t), sizeof(int), 0, 0,
                                     2 * sizeof(trace_event_set_t), 0, 0, 2 * sizeof(int32_t)};
    for (uint32_t id = 1; id <= 9; id++) {
        tl_test_context("system event %u", id);
        const char *text = tl_system_event_schema(id);
        if (!CHECK(text != NULL))
            continue;
        tracelog_schema *s = parse_ok(text);
        if (!s)
            continue;
        CHECK_STR_EQ(tracelog_schema_text(s), text); /* stored as is: already canonical */
        CHECK_EQ(tracelog_schema_size(s), sizes[id]);
        CHECK(!tracelog_schema_is_variable(s));
        tracelog_schema_free(s);
    }
    tl_test_context(NULL);

    /* ERROR names the errno; STOP says automatic or manual. */
    tracelog_schema *s = parse_ok(tl_system_event_schema(POSIX_TRACE_ERROR));
    int e = ENOSPC;
    tracelog_fields f;
    char text[64];
    if (s) {
        CHECK_STATUS(tracelog_fields_decode(s, &e, sizeof e, &f), TRACELOG_OK);
        CHECK_STATUS(tracelog_fields_format(&f, 0, text, sizeof text, NULL), TRACELOG_OK);
        CHECK_STR_EQ(text, "ENOSPC");
        e = EFBIG;
        CHECK_STATUS(tracelog_fields_format(&f, 0, text, sizeof text, NULL), TRACELOG_OK);
        CHECK_STR_EQ(text, "EFBIG");
        CHECK_STR_EQ(tracelog_schema_enum_name(s, 0, EIO), "EIO");
        CHECK_STR_EQ(tracelog_schema_enum_name(s, 0, EAGAIN), "EAGAIN");
    }
    tracelog_schema_free(s);
    s = parse_ok(tl_system_event_schema(POSIX_TRACE_STOP));
    if (s) {
        int automatic = 1;
        CHECK_STATUS(tracelog_fields_decode(s, &automatic, sizeof automatic, &f), TRACELOG_OK);
        CHECK_STATUS(tracelog_fields_format(&f, 0, text, sizeof text, NULL), TRACELOG_OK);
        CHECK_STR_EQ(text, "AUTOMATIC");
    }
    tracelog_schema_free(s);

    /* FILTER: the old and the new filter, as the sets posix_trace_eventset_* build. */
    s = parse_ok(tl_system_event_schema(POSIX_TRACE_FILTER));
    if (s) {
        trace_event_set_t both[2];
        posix_trace_eventset_empty(&both[0]);
        posix_trace_eventset_fill(&both[1], POSIX_TRACE_SYSTEM_EVENTS);
        posix_trace_eventset_add(40, &both[1]);
        CHECK_EQ(posix_trace_eventset_add(1055, &both[1]), 0);
        CHECK_STATUS(tracelog_fields_decode(s, both, sizeof both, &f), TRACELOG_OK);
        CHECK_STATUS(tracelog_fields_format(&f, 0, text, sizeof text, NULL), TRACELOG_OK);
        CHECK_STR_EQ(text, "[]");
        CHECK_STATUS(tracelog_fields_format(&f, 1, text, sizeof text, NULL), TRACELOG_OK);
        CHECK_STR_EQ(text, "[1-8, 40, 1055]");
        CHECK_EQ(tracelog_schema_find(s, "new_event_filter"), 1);
    }
    tracelog_schema_free(s);
}

int main(void)
{
    TL_TEST_RUN(test_layout_matches_c);
    TL_TEST_RUN(test_values);
    TL_TEST_RUN(test_multi_bit_flags);
    TL_TEST_RUN(test_text_forms);
    TL_TEST_RUN(test_float_text);
    TL_TEST_RUN(test_short_and_long_payloads);
    TL_TEST_RUN(test_errors);
    TL_TEST_RUN(test_limits);
    TL_TEST_RUN(test_canonical);
    TL_TEST_RUN(test_mutations);
    TL_TEST_RUN(test_system_schemas);
    return tl_test_finish();
}
