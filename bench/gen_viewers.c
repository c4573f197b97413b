/*
 * gen_viewers: the log of the trace-viewer benchmark (bench/viewers/run-viewers.sh):
 * what a traced service records, for comparing ptlog's Perfetto and Chrome
 * outputs on it.
 *
 *   gen_viewers N OUT.ptl
 *
 * N events (k, M suffixes) on 8 named threads of one process, written with
 * the writer API (deterministic: the same log every run), in rounds of four
 * per thread: request:begin {u32 id; enum8 method}, db.query {u32 rows;
 * f64 ms; bool cached}, request:end {u32 id; u16 status; u32 bytes}, and an
 * untyped 8-byte tick; about 250 ns apart.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tracelog.h>

#define THREADS 8

struct begin { uint32_t id; uint8_t method; };
struct query { uint32_t rows; uint8_t cached; double ms; };
struct end { uint32_t id; uint16_t status; uint32_t bytes; };

static int fail(const char *what, tracelog_status st)
{
    fprintf(stderr, "gen_viewers: %s: %s\n", what, tracelog_strerror(st));
    return 1;
}

static long long count_arg(const char *s)
{
    char *end;
    long long n = strtoll(s, &end, 10);
    if (*end == 'k' || *end == 'K')
        n *= 1000, end++;
    else if (*end == 'M')
        n *= 1000000, end++;
    return *end || n <= 0 ? -1 : n;
}

/* Event i (of thread i % THREADS, step i / THREADS % 4) into ev; its payload in buf. */
static void make_event(long long i, tracelog_event *ev, unsigned char *buf)
{
    uint32_t t = (uint32_t)(i % THREADS), round = (uint32_t)(i / THREADS / 4), id = round * THREADS + t;
    memset(ev, 0, sizeof *ev);
    memset(buf, 0, 24);
    ev->timestamp_ns = 1767225600000000000ull + (uint64_t)i * 250;
    ev->pid = 4242;
    ev->tid = 0x7f0000001000ull + 0x1000ull * t;
    ev->kernel_tid = 4242 + t;
    ev->payload = buf;
    switch (i / THREADS % 4) {
    case 0: {
        struct begin b = {id, (uint8_t)(id % 3)};
        memcpy(buf, &b, sizeof b);
        ev->event_id = 40, ev->payload_len = sizeof b;
        break;
    }
    case 1: {
        struct query q = {id % 50, id % 4 == 0, 0.125 * (id % 16)};
        memcpy(buf, &q, sizeof q);
        ev->event_id = 41, ev->payload_len = sizeof q;
        break;
    }
    case 2: {
        struct end e = {id, (uint16_t)(id % 17 ? 200 : 500), 100 + 64 * (id % 50)};
        memcpy(buf, &e, sizeof e);
        ev->event_id = 42, ev->payload_len = sizeof e;
        break;
    }
    default:
        memcpy(buf, &i, 8);
        ev->event_id = 43, ev->payload_len = 8;
    }
}

int main(int argc, char **argv)
{
    long long n = argc == 3 ? count_arg(argv[1]) : -1;
    if (n < 0) {
        fprintf(stderr, "usage: gen_viewers N OUT.ptl\n");
        return 2;
    }
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[2]);
        return 1;
    }
    tracelog_writer *w;
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(fd, NULL, NULL, &w, &err);
    if (st)
        return fail("create", st);
    static const struct { uint32_t id; const char *name, *schema; } types[] = {
        {40, "request:begin", "u32 id; enum8 method {GET=0, POST=1, DELETE=2}"},
        {41, "db.query", "u32 rows; bool cached; f64 ms"},
        {42, "request:end", "u32 id; u16 status; u32 bytes"},
        {43, "tick", NULL},
    };
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if ((st = tracelog_writer_define_event_schema(w, types[i].id, types[i].name, types[i].schema, &err)))
            return fail(types[i].name, st);
    for (uint32_t t = 0; t < THREADS; t++) {
        char name[16];
        snprintf(name, sizeof name, "worker-%u", t);
        if ((st = tracelog_writer_name_thread(w, 4242, 0x7f0000001000ull + 0x1000ull * t, 4242 + t, name)))
            return fail("name", st);
    }
    unsigned char buf[24];
    tracelog_event ev;
    for (long long i = 0; i < n; i++) {
        make_event(i, &ev, buf);
        if ((st = tracelog_writer_append(w, &ev)))
            return fail("append", st);
    }
    if ((st = tracelog_writer_close(w, &err)))
        return fail("close", st);
    return close(fd) ? 1 : 0;
}
