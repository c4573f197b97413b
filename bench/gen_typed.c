/*
 * gen_typed: the log of the typed-output benchmark (bench/typed/run-typed.sh,
 * issue 27) and the checker of what ptlog prints from it.
 *
 *   gen_typed write N small|any OUT.ptl
 *   gen_typed check N small|any dump|where|hex|jsonl OUTPUT|-
 *
 * write: N events (k, M suffixes) of one type, net.rx, with the schema
 * "u32 len; u16 port; char[8] iface; f64 lat", on one thread, written with
 * the writer API. Event i's values come from a hash of i (the same log every
 * run): len 40..1500, port 80, 443 or 8080, except every hundredth event
 * (i % 100 == 37) on port 9000, so that `--where 'port == 9000'` keeps 1 %;
 * iface eth0, eth1, wlan0 or lo; lat, with "small", k / 1e6 for k in 0..999
 * (0 to 0.000999, as the issue measured), with "any", random finite bit
 * patterns over the whole double range: one in sixteen subnormal, the rest
 * of every exponent, and now and then 0, -0, DBL_MAX, DBL_TRUE_MIN,
 * DBL_MIN. Timestamps rise by 128 ns plus 0..63 ns of jitter.
 *
 * check: reads what `ptlog dump` (dump), `ptlog dump --where 'port == 9000'`
 * (where), `ptlog dump --hex` (hex) or `ptlog convert --to jsonl` (jsonl)
 * printed for that log and checks every line against the event it must
 * show: its time (the event index comes from it), pid, thread and every
 * field; every printed double parsed back with strtod must give the
 * event's exact bits. The events must come in order with none missing
 * (where: exactly the events on port 9000). Exit 0 when all is right, 1
 * with the first wrong line on standard error.
 */
#define _GNU_SOURCE
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tracelog.h>

#include "bench_util.h"

#define BASE_NS 1767225600000000000ull /* 2026-01-01T00:00:00Z */
#define PID 4242u
#define TID UINT64_C(0x7f0000001000)
#define KTID 4243u
#define EVENT_ID 40u
#define WHERE_PORT 9000u

struct payload { /* the schema's C struct: 24 bytes */
    uint32_t len;
    uint16_t port;
    char iface[8];
    double lat;
};

enum { LAT_SMALL, LAT_ANY };

static uint64_t mix(uint64_t x) /* splitmix64's finaliser */
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t ts_of(uint64_t i)
{
    return BASE_NS + i * 128 + (mix(i) & 63);
}

static int kept(uint64_t i) /* on port 9000: what --where 'port == 9000' keeps */
{
    return i % 100 == 37;
}

static double lat_of(uint64_t i, int mode)
{
    uint64_t h = mix(i ^ 0x5bd1e995u);
    if (mode == LAT_SMALL)
        return (double)(h % 1000) / 1e6;
    static const double special[] = {0.0, -0.0, DBL_MAX, -DBL_MAX, DBL_TRUE_MIN, DBL_MIN, 1.0, 0.1};
    if (i % 997 == 5)
        return special[(i / 997) % (sizeof special / sizeof *special)];
    uint64_t bits = mix(h);
    if (i % 16 == 3)
        bits &= 0x800fffffffffffffull; /* a subnormal (or a zero) */
    else if ((bits >> 52 & 0x7ff) == 0x7ff)
        bits ^= 1ull << 62; /* not inf or nan: exponent 0x3ff */
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static void make(uint64_t i, int mode, struct payload *p)
{
    static const uint16_t ports[] = {80, 443, 8080};
    static const char *const ifaces[] = {"eth0", "eth1", "wlan0", "lo"};
    uint64_t h = mix(i ^ 0xa5a5a5a5u);
    memset(p, 0, sizeof *p);
    p->len = (uint32_t)(40 + h % 1461);
    p->port = kept(i) ? WHERE_PORT : ports[(h >> 32) % 3];
    memcpy(p->iface, ifaces[(h >> 40) & 3], strlen(ifaces[(h >> 40) & 3]));
    p->lat = lat_of(i, mode);
}

static int write_log(uint64_t n, int mode, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        return 1;
    }
    tracelog_writer *w;
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(fileno(f), NULL, NULL, &w, &err);
    if (!st)
        st = tracelog_writer_define_event_schema(w, EVENT_ID, "net.rx", "u32 len; u16 port; char[8] iface; f64 lat",
                                                 &err);
    if (!st)
        st = tracelog_writer_name_thread(w, PID, TID, KTID, "rx");
    struct payload p;
    tracelog_event ev = {0};
    ev.pid = PID, ev.tid = TID, ev.kernel_tid = KTID, ev.event_id = EVENT_ID;
    ev.payload = &p, ev.payload_len = sizeof p;
    for (uint64_t i = 0; i < n && !st; i++) {
        make(i, mode, &p);
        ev.timestamp_ns = ts_of(i);
        st = tracelog_writer_append(w, &ev);
    }
    if (!st)
        st = tracelog_writer_close(w, &err);
    if (fclose(f) || st) {
        fprintf(stderr, "gen_typed: writing %s: %s\n", path, st ? tracelog_strerror(st) : "close failed");
        return 1;
    }
    return 0;
}

/* ---- check ------------------------------------------------------------------------ */

enum { OUT_DUMP, OUT_WHERE, OUT_HEX, OUT_JSONL };

typedef struct checker {
    uint64_t n, next; /* events; the index the next line must show (where: at least) */
    int mode, kind;
    unsigned long line;
    uint64_t doubles; /* doubles parsed back */
} checker;

static int bad(const checker *c, const char *what, const char *text)
{
    fprintf(stderr, "gen_typed: line %lu: %s: %.200s\n", c->line, what, text);
    return 1;
}

/* "2026-01-01T00:00:00.000001234Z" -> ns; 0 when it is not that form. */
static uint64_t parse_time(const char *s, const char **end)
{
    struct tm tm = {0};
    const char *p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!p || *p != '.')
        return 0;
    uint64_t frac = 0;
    int k = 0;
    for (p++; *p >= '0' && *p <= '9'; p++, k++)
        frac = frac * 10 + (uint64_t)(*p - '0');
    if (k != 9 || *p != 'Z')
        return 0;
    *end = p + 1;
    return (uint64_t)timegm(&tm) * 1000000000u + frac;
}

/* The event index of timestamp ts, which must be the next one shown; UINT64_MAX when it is not. */
static uint64_t index_of(checker *c, uint64_t ts)
{
    if (ts < BASE_NS)
        return UINT64_MAX;
    uint64_t i = (ts - BASE_NS) / 128;
    if (i >= c->n || ts_of(i) != ts || i < c->next)
        return UINT64_MAX;
    if (c->kind == OUT_WHERE) {
        for (uint64_t j = c->next; j < i; j++)
            if (kept(j))
                return UINT64_MAX; /* an event the filter keeps is missing */
        if (!kept(i))
            return UINT64_MAX;
    } else if (i != c->next) {
        return UINT64_MAX;
    }
    c->next = i + 1;
    return i;
}

/* text starts with a double that strtod reads as exactly want, followed by stop. */
static int same_double(checker *c, const char *text, double want, const char *stop)
{
    char *end;
    double got = strtod(text, &end);
    c->doubles++;
    return end != text && memcmp(&got, &want, sizeof got) == 0 && strncmp(end, stop, strlen(stop)) == 0;
}

static int check_hex(const char *p, const struct payload *want)
{
    const unsigned char *b = (const unsigned char *)want;
    char hex[2 * sizeof *want + 1];
    for (size_t k = 0; k < sizeof *want; k++)
        snprintf(hex + 2 * k, 3, "%02x", b[k]);
    return strcmp(p, hex) == 0;
}

static int check_dump_line(checker *c, const char *s)
{
    const char *p = s;
    uint64_t i = index_of(c, parse_time(s, &p));
    if (i == UINT64_MAX)
        return bad(c, "not the next event's time", s);
    struct payload want;
    make(i, c->mode, &want);
    char head[160];
    int k = snprintf(head, sizeof head, " %u 0x%" PRIx64 " tid %u (rx) net.rx ", PID, TID, KTID);
    if (strncmp(p, head, (size_t)k))
        return bad(c, "wrong pid, thread or name", s);
    p += k;
    if (c->kind == OUT_HEX)
        return check_hex(p, &want) ? 0 : bad(c, "wrong payload", s);
    k = snprintf(head, sizeof head, "{ len = %u, port = %u, iface = \"%s\", lat = ", want.len, want.port, want.iface);
    if (strncmp(p, head, (size_t)k))
        return bad(c, "wrong fields", s);
    if (!same_double(c, p + k, want.lat, " }"))
        return bad(c, "lat does not read back to the event's double", s);
    return 0;
}

static int check_jsonl_line(checker *c, const char *s)
{
    if (strncmp(s, "{\"name\":", 8))
        return 0; /* the header and status lines */
    const char *p = strstr(s, ",\"ts\":");
    if (!p)
        return bad(c, "no ts", s);
    uint64_t i = index_of(c, strtoull(p + 6, NULL, 10));
    if (i == UINT64_MAX)
        return bad(c, "not the next event's ts", s);
    struct payload want;
    make(i, c->mode, &want);
    char head[200];
    int k = snprintf(head, sizeof head, ",\"pid\":%u,\"tid\":%" PRIu64 ",\"ktid\":%u,", PID, TID, KTID);
    if (!strstr(p, head))
        return bad(c, "wrong pid or thread", s);
    k = snprintf(head, sizeof head, "\"fields\":{\"len\":%u,\"port\":%u,\"iface\":\"%s\",\"lat\":", want.len,
                 want.port, want.iface);
    p = strstr(p, head);
    if (!p)
        return bad(c, "wrong fields", s);
    if (!same_double(c, p + k, want.lat, "},\"fields_size\":null}"))
        return bad(c, "lat does not read back to the event's double", s);
    return 0;
}

static int check_output(uint64_t n, int mode, int kind, const char *path)
{
    FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
    if (!f) {
        perror(path);
        return 1;
    }
    checker c = {.n = n, .mode = mode, .kind = kind};
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    int rc = 0;
    while (!rc && (len = getline(&line, &cap, f)) > 0) {
        c.line++;
        if (line[len - 1] == '\n')
            line[len - 1] = 0;
        rc = kind == OUT_JSONL ? check_jsonl_line(&c, line) : check_dump_line(&c, line);
    }
    free(line);
    if (f != stdin)
        fclose(f);
    if (rc)
        return 1;
    uint64_t shown_to = c.next;
    if (kind == OUT_WHERE)
        while (shown_to < n && !kept(shown_to))
            shown_to++;
    if (shown_to != n) {
        fprintf(stderr, "gen_typed: the output ends before event %" PRIu64 " of %" PRIu64 "\n", shown_to, n);
        return 1;
    }
    printf("%lu lines checked, %" PRIu64 " doubles read back exactly\n", c.line, c.doubles);
    return 0;
}

int main(int argc, char **argv)
{
    static const char *const kinds[] = {"dump", "where", "hex", "jsonl"};
    long long n = argc >= 5 ? bu_parse_count(argv[2]) : -1;
    int mode = argc >= 5 && strcmp(argv[3], "small") == 0 ? LAT_SMALL
             : argc >= 5 && strcmp(argv[3], "any") == 0   ? LAT_ANY
                                                          : -1;
    if (n > 0 && mode >= 0 && argc == 5 && strcmp(argv[1], "write") == 0)
        return write_log((uint64_t)n, mode, argv[4]);
    for (int k = 0; n > 0 && mode >= 0 && argc == 6 && k < 4; k++)
        if (strcmp(argv[1], "check") == 0 && strcmp(argv[4], kinds[k]) == 0)
            return check_output((uint64_t)n, mode, k, argv[5]);
    fprintf(stderr, "usage: gen_typed write N small|any OUT.ptl\n"
                    "       gen_typed check N small|any dump|where|hex|jsonl OUTPUT|-\n");
    return 2;
}
