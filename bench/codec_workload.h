/*
 * codec_workload.h - the events of the codec benchmarks (bench_codec.c,
 * codec_layouts.c): one traced process seen by a POSIX trace stream, from a
 * seeded generator, so that runs and machines compare. bench/README.md
 * ("codec", Method) describes the mix. Header-only: CMake builds each
 * bench/<name>.c on its own.
 */
#ifndef CODEC_WORKLOAD_H
#define CODEC_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tracelog.h"

#define PAYLOAD_SIZE 16

/* splitmix64: small, fast, and good enough for a synthetic workload. */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t rng_below(uint64_t *s, uint32_t n) /* uniform in [0, n) */
{
    return (uint32_t)(((rng_next(s) >> 32) * n) >> 32);
}

enum { EV_LOCK, EV_UNLOCK, EV_MALLOC, EV_FREE, EV_READ, EV_REQUEST, EV_TYPES };

static const struct {
    uint32_t id;
    const char *name;
    uint32_t weight; /* per 1000 events */
} g_types[EV_TYPES] = {
    [EV_LOCK] = {16, "mutex_lock", 300},   [EV_UNLOCK] = {17, "mutex_unlock", 300},
    [EV_MALLOC] = {18, "malloc", 160},     [EV_FREE] = {19, "free", 150},
    [EV_READ] = {20, "io_read", 60},       [EV_REQUEST] = {21, "request_done", 30},
};

#define NTHREADS 3
#define NLOCKS 8
#define LIVE_OBJECTS 64
#define PID 41873u
#define TS_START 1717171717123456789ull /* 2024-05-31, ns since the epoch */
#define TEXT_BASE 0x55d4c3a01000ull     /* PIE text segment */
#define HEAP_BASE 0x55d4c5a3f2a0ull
#define HEAP_SPAN (64ull << 20)
#define LOCK_BASE 0x55d4c3c2a040ull     /* mutexes in .bss, one per cache line */

/* glibc pthread_t values: thread stacks 8 MiB + a guard page apart. */
static const uint64_t g_tids[NTHREADS] = {0x7f3a12345700ull, 0x7f3a11b44700ull, 0x7f3a11343700ull};

typedef struct generator {
    uint64_t rng;
    uint64_t ts;
    uint32_t thread;
    uint32_t seq[NTHREADS];
    uint32_t burst_left;
    uint64_t heap_next;
    uint64_t live[LIVE_OBJECTS];
    uint64_t requests;
} generator;

static void gen_init(generator *g, uint64_t seed)
{
    memset(g, 0, sizeof *g);
    g->rng = seed;
    g->ts = TS_START;
    g->heap_next = HEAP_BASE;
    for (int i = 0; i < LIVE_OBJECTS; i++)
        g->live[i] = HEAP_BASE + 16ull * (uint64_t)i;
    g->requests = 100000;
}

/* Time to the next event: mostly 50..2000 ns skewed short, bursts, idle gaps. */
static uint64_t gen_interval(generator *g)
{
    uint64_t *r = &g->rng;
    if (g->burst_left) {
        g->burst_left--;
        return 20 + rng_below(r, 41);
    }
    uint32_t u = rng_below(r, 4096);
    if (u < 16) /* 1/256: a burst of 16..128 events 20..60 ns apart */
        g->burst_left = 16 + rng_below(r, 113);
    if (u == 4095) /* 1/4096: the process sleeps 10..500 us */
        return 10000 + rng_below(r, 490001);
    /* The product of two uniforms skews towards short intervals (mean ~540 ns). */
    uint64_t a = rng_below(r, 1951), b = rng_below(r, 1951);
    return 50 + a * b / 1950;
}

static uint32_t gen_type(generator *g)
{
    uint32_t u = rng_below(&g->rng, 1000), t = 0;
    while (u >= g_types[t].weight) {
        u -= g_types[t].weight;
        t++;
    }
    return t;
}

/* Each event type is emitted from one main call site, sometimes from a second one. */
static uint64_t gen_address(generator *g, uint32_t type)
{
    uint64_t site = TEXT_BASE + 0x1a40ull * type + 0x2cull;
    return rng_below(&g->rng, 8) == 0 ? site + 0x3b8 : site;
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/*
 * The payload is what instrumentation typically records: a per-thread
 * sequence number, a small value (size, byte count, wait time, latency) and
 * a pointer or identifier (mutex, heap object, request id).
 */
static void gen_payload(generator *g, uint32_t type, uint8_t p[PAYLOAD_SIZE])
{
    uint64_t *r = &g->rng;
    uint32_t value = 0;
    uint64_t ptr = 0;
    switch (type) {
    case EV_LOCK:
    case EV_UNLOCK:
        value = rng_below(r, 4) == 0 ? rng_below(r, 300) : 0; /* spins before getting it */
        ptr = LOCK_BASE + 64ull * rng_below(r, NLOCKS);
        break;
    case EV_MALLOC: {
        /* Sizes: mostly small multiples of 16, sometimes up to 4 KiB. */
        value = 16u << rng_below(r, rng_below(r, 4) == 0 ? 9 : 4);
        ptr = g->heap_next;
        g->live[rng_below(r, LIVE_OBJECTS)] = ptr;
        g->heap_next += value + 16;
        if (g->heap_next >= HEAP_BASE + HEAP_SPAN)
            g->heap_next = HEAP_BASE;
        break;
    }
    case EV_FREE:
        ptr = g->live[rng_below(r, LIVE_OBJECTS)];
        break;
    case EV_READ:
        value = rng_below(r, 8) ? 4096 : 1 + rng_below(r, 4096); /* bytes read */
        ptr = HEAP_BASE + 0x100000ull + 4096ull * rng_below(r, 16); /* buffer */
        break;
    default: /* EV_REQUEST: latency in us, request id */
        value = 50 + rng_below(r, 2000) * rng_below(r, 2000) / 1000;
        ptr = g->requests++;
        break;
    }
    put32(p, g->seq[g->thread]++);
    put32(p + 4, value);
    put64(p + 8, ptr);
}

static void gen_event(generator *g, tracelog_event *ev, uint8_t *payload)
{
    /* Threads run a while, then another one gets the CPU (1 switch in 8). */
    if (rng_below(&g->rng, 8) == 0)
        g->thread = (g->thread + 1 + rng_below(&g->rng, NTHREADS - 1)) % NTHREADS;
    uint32_t type = gen_type(g);
    g->ts += gen_interval(g);
    gen_payload(g, type, payload);
    *ev = (tracelog_event){.timestamp_ns = g->ts,
                           .event_id = g_types[type].id,
                           .pid = PID,
                           .tid = g_tids[g->thread],
                           .address = gen_address(g, type),
                           .truncation = TRACELOG_TRUNC_NONE,
                           .payload_len = PAYLOAD_SIZE,
                           .payload = payload};
}

typedef struct workload {
    tracelog_event *ev;
    uint8_t *payloads;
    size_t n;
    uint64_t checksum; /* fold_event over all events, what a decode must reproduce */
} workload;

/* Folds every field and every payload byte: the "consumer" of the decode runs. */
static inline uint64_t fold_event(uint64_t acc, const tracelog_event *e)
{
    acc += e->timestamp_ns ^ ((uint64_t)e->event_id << 32 | e->pid);
    acc = (acc ^ e->tid) * 0x100000001B3ull;
    acc += e->address ^ ((uint64_t)e->truncation << 32 | e->payload_len);
    const uint8_t *p = e->payload;
    uint32_t n = e->payload_len, i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        acc = (acc ^ w) * 0x100000001B3ull;
    }
    for (; i < n; i++)
        acc = (acc ^ p[i]) * 0x100000001B3ull;
    return acc;
}

static void make_workload(workload *w, size_t n, uint64_t seed)
{
    w->n = n;
    w->ev = malloc(n * sizeof *w->ev);
    w->payloads = malloc(n * PAYLOAD_SIZE);
    if (!w->ev || !w->payloads)
    {
        fprintf(stderr, "out of memory for %zu events\n", n);
        exit(1);
    }
    generator g;
    gen_init(&g, seed);
    w->checksum = 0;
    for (size_t i = 0; i < n; i++) {
        gen_event(&g, &w->ev[i], w->payloads + i * PAYLOAD_SIZE);
        w->checksum = fold_event(w->checksum, &w->ev[i]);
    }
}

#endif
