/*
 * make_typed OUT.ptl: a small deterministic typed log for the ptlog tests
 * (test_ptlog_typed.sh, test_ptlog_duckdb.sh), written with the writer API:
 * net.rx events with every kind of field, one short and one long payload,
 * a trailing char[], an untyped event, and pairs named X.begin / X.end.
 *
 * make_typed --numbers OUT.ptl: events of one type "num" {f32 f; i16 s;
 * i64 l; u8 b} for --where's comparisons read from the payload bytes:
 * negative, NaN and extreme values, and a payload cut inside the fields.
 *
 * make_typed --wide OUT.ptl: events whose fields are all numbers and text,
 * which dump and JSON write into one reservation per event (fields.c,
 * ptlog_plan's rooms), at their widest: names of 63 bytes, the longest
 * integers, nan and inf, text to escape, char[255] full, and a char[] of
 * 300 bytes.
 */
#include <fcntl.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tracelog.h>

struct net_rx {
    uint32_t len;
    uint16_t port;
    char iface[16];
    double latency;
    uint64_t big;
    int8_t delta;
    uint8_t state; /* enum8 */
    uint8_t mode;  /* flags8 */
    uint8_t ok;    /* bool */
};

#define RX_SCHEMA                                                                                       \
    "u32 len; u16 port; char[16] iface; f64 latency; u64 big; i8 delta; enum8 state {IDLE=0, BUSY=1}; " \
    "flags8 mode {READ=0x1, WRITE=0x2}; bool ok"

static int fail(const char *what, tracelog_status st)
{
    fprintf(stderr, "make_typed: %s: %s\n", what, tracelog_strerror(st));
    return 1;
}

static tracelog_status add(tracelog_writer *w, uint64_t ts, uint32_t id, const void *p, size_t n)
{
    tracelog_event ev = {.timestamp_ns = ts, .event_id = id, .pid = 7, .tid = 9, .payload_len = (uint32_t)n,
                         .payload = p};
    return tracelog_writer_append(w, &ev);
}

/* The --numbers log: event i at 2026-01-01T00:00:00Z + i ms. */
static int write_numbers(tracelog_writer *w)
{
    struct num {
        float f;
        int16_t s;
        int64_t l;
        uint8_t b;
    };
    static const struct num nums[] = {
        {1.5f, -1, INT64_MIN, 0},      {-2.5f, 300, -1, 255},           {NAN, -32768, INT64_MAX, 7},
        {0.0f, 32767, 0, 1},           {-INFINITY, 0, -4000000000, 2},  {3.0e38f, -300, 5, 200},
    };
    tracelog_error err;
    tracelog_status st = tracelog_writer_define_event_schema(w, 50, "num", "f32 f; i16 s; i64 l; u8 b", &err);
    uint64_t ts = 1767225600000000000ull;
    for (size_t i = 0; i < sizeof nums / sizeof *nums && !st; i++)
        st = add(w, ts + i * 1000000, 50, &nums[i], sizeof nums[i]);
    if (!st) /* cut inside l: f and s present, l and b absent */
        st = add(w, ts + 6000000, 50, &nums[1], 12);
    if (st)
        return fail("numbers", st);
    return (st = tracelog_writer_close(w, &err)) ? fail("close", st) : 0;
}

#define NAME63 "a_field_name_of_sixty_three_bytes_which_is_the_longest_allowed"

/* The --wide log: 8 events of type "wide", at 2026-01-01T00:00:00Z + i ms. */
static int write_wide(tracelog_writer *w)
{
    struct wide {
        int64_t i64;
        uint64_t u64;
        double f64;
        float f32;
        char tag[4];
        char text[255];
        uint16_t NAME63_field;
        char rest[300];
    } __attribute__((packed)) v;
    static const char *tags[] = {"ab", "a\"b", "\n\t\\", "abcd"};
    static const double doubles[] = {0.000231, -1e300, NAN, INFINITY, -INFINITY, 5e-324, 123456789012345678.0, 0};
    tracelog_error err;
    tracelog_status st = tracelog_writer_define_event_schema(
        w, 60, "wide",
        "i64 i; u64 u; f64 d; f32 f; char[4] tag; char[255] text; u16 " NAME63 "; char[] rest", &err);
    uint64_t ts = 1767225600000000000ull;
    for (uint32_t i = 0; i < 8 && !st; i++) {
        memset(&v, 0, sizeof v);
        v.i64 = i % 2 ? INT64_MIN : INT64_MAX - i;
        v.u64 = i % 3 ? UINT64_MAX - i : ((uint64_t)1 << 53) + i;
        v.f64 = doubles[i];
        v.f32 = i % 2 ? -3.4e38f : 1.5f;
        memcpy(v.tag, tags[i % 4], strlen(tags[i % 4]));
        memset(v.text, i % 2 ? 'x' : '"', sizeof v.text); /* 255 bytes, no NUL: plain, or all to escape */
        v.NAME63_field = (uint16_t)(65535 - i);
        memset(v.rest, 'r', sizeof v.rest);
        size_t len = i == 7 ? offsetof(struct wide, rest) + 10 : sizeof v; /* a shorter char[] */
        st = add(w, ts + i * 1000000, 60, &v, len);
    }
    if (st)
        return fail("wide", st);
    return (st = tracelog_writer_close(w, &err)) ? fail("close", st) : 0;
}

int main(int argc, char **argv)
{
    int numbers = argc == 3 && strcmp(argv[1], "--numbers") == 0, wide = argc == 3 && strcmp(argv[1], "--wide") == 0;
    if (argc != 2 && !numbers && !wide) {
        fprintf(stderr, "usage: make_typed [--numbers | --wide] OUT.ptl\n");
        return 2;
    }
    if (numbers || wide)
        argv++;
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    tracelog_writer *w;
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(fd, NULL, NULL, &w, &err);
    if (st)
        return fail("create", st);
    if (numbers)
        return write_numbers(w) || close(fd) ? 1 : 0;
    if (wide)
        return write_wide(w) || close(fd) ? 1 : 0;
    static const struct {
        uint32_t id;
        const char *name, *schema;
    } types[] = {
        {40, "net.rx", RX_SCHEMA},
        {41, "msg", "u32 code; char[] text"},
        {42, "plain", NULL},
        {43, "req.begin", "u32 req"},
        {44, "req.end", "u32 req; i32 status"},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if ((st = tracelog_writer_define_event_schema(w, types[i].id, types[i].name, types[i].schema, &err)))
            return fail(types[i].name, st);
    const char *ifaces[] = {"eth0", "eth1", "lo \"x\""};
    uint64_t ts = 1767225600000000000ull; /* 2026-01-01T00:00:00Z */
    for (uint32_t i = 0; i < 6; i++) {
        struct net_rx rx;
        memset(&rx, 0, sizeof rx);
        rx.len = 500 * (i + 1);
        rx.port = i % 2 ? 80 : 443;
        snprintf(rx.iface, sizeof rx.iface, "%s", ifaces[i % 3]);
        rx.latency = 0.000231 * (i + 1);
        rx.big = i == 5 ? UINT64_MAX : (uint64_t)1 << 53 | i;
        rx.delta = (int8_t)(-(int)i);
        rx.state = (uint8_t)(i % 3); /* 2 has no name */
        rx.mode = (uint8_t)(i % 4 | (i == 4 ? 0x80 : 0));
        rx.ok = (uint8_t)(i % 2);
        if ((st = add(w, ts + i * 1000, 40, &rx, sizeof rx)))
            return fail("append", st);
    }
    struct net_rx rx = {.len = 1, .port = 2};
    unsigned char longer[sizeof rx + 3] = {0};
    memcpy(longer, &rx, sizeof rx);
    unsigned char msg[4 + 5] = {1, 0, 0, 0, 'h', 'e', 'l', 'l', 'o'};
    uint32_t req = 12;
    uint32_t end[2] = {12, (uint32_t)-5};
    if ((st = add(w, ts + 10000, 40, &rx, 10)) || (st = add(w, ts + 11000, 40, longer, sizeof longer)) ||
        (st = add(w, ts + 12000, 41, msg, sizeof msg)) || (st = add(w, ts + 13000, 42, "raw", 3)) ||
        (st = add(w, ts + 14000, 43, &req, sizeof req)) || (st = add(w, ts + 15000, 44, end, sizeof end)))
        return fail("append", st);
    if ((st = tracelog_writer_close(w, &err)))
        return fail("close", st);
    return close(fd) ? 1 : 0;
}
