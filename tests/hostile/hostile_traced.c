/*
 * hostile_traced: a traced program that attacks its controller (issue 24).
 * It records events from a few threads, like any instrumented program, and
 * meanwhile scribbles over the memory it shares with the controller: the
 * stream buffer, its name map and its control object, found by name in
 * /proc/self/maps. The controller (ptlog record/attach, run under ASan by
 * the tests) must finish within a bound, write a log that verifies, and
 * never crash or write outside its own memory.
 *
 *   hostile_traced MODE SECONDS [END]
 *
 * MODE (what it scribbles, in a loop, while it records):
 *   none        nothing (the reference run)
 *   random      random 64-bit words anywhere in the stream buffer
 *   header      random words in the stream's header
 *   counters    the lanes' positions and counters (head, tail, lost, overruns, stamps)
 *   timestamps  the records' stamps (where 64-byte records would have them)
 *   sizes       the records' kind/size words
 *   skips       the records' kind/size words, to a SKIP of up to 64 KiB or
 *               back to a 16-byte EVENT (a kind read twice, EVENT then SKIP,
 *               once sent a SKIP's length out as a payload: a heap overflow)
 *   locks       the futex and semaphore words of the stream
 *   suspend     the stream's state word, to SUSPENDED (ptlog attach once took
 *               that for the process's end, and stopped tracing it)
 *   names       the name map: its header (lock word, count, moved) and its names
 *   ctl         the control object: the announcement slots
 *   cut-names   truncates its name map to 0 bytes half way (the controller
 *               reads it: SIGBUS killed ptlog), and records on
 *   cut-ctl     truncates its control object to 0 bytes half way (the
 *               controller writes and reads it; the program's own next
 *               event faults too: it ends by SIGBUS)
 *   cut-table   truncates the user's stream table (TRACE_SYS_MAX's, which
 *               every process of the user shares: the controller's
 *               shutdown once died releasing its entry there)
 *   stall       twice a second, reserves 64 bytes in every lane and never
 *               writes nor commits them, and records only 30 events a
 *               second: each drain waited for those records
 *               spinning with sched_yield, which cost a controller most of a
 *               CPU and the program nothing
 * SECONDS: how long it records and scribbles. END: "exit" (default) or
 * "kill" (SIGKILL itself at the end: the controller sees no exit()).
 * Exit status 0, 2 for bad arguments.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

#include "stream/layout.h"

#define PRODUCERS 3

typedef struct region {
    uint8_t *base;
    size_t size;
    char path[128];
} region;

static atomic_int stop;
static trace_event_id_t ids[5];
static int slow; /* the producers record ten events a second each, not a million in all */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void)
{
    uint64_t x = rng_state; /* xorshift64: only the scribbler thread draws */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

/* A random value of the kinds that break code: 0, all ones, huge, small, a near miss. */
static uint64_t nasty_value(void)
{
    switch (next_random() % 8) {
    case 0: return 0;
    case 1: return UINT64_MAX;
    case 2: return 1ull << 63;
    case 3: return next_random() % 64;
    case 4: return (uint64_t)-(int64_t)(next_random() % 4096);
    case 5: return 0xffffffffull;
    default: return next_random();
    }
}

static void poke64(region r, size_t off)
{
    if (r.base && off + 8 <= r.size)
        __atomic_store_n((uint64_t *)(void *)(r.base + (off & ~(size_t)7)), nasty_value(), __ATOMIC_RELAXED);
}

static void poke32(region r, size_t off)
{
    if (r.base && off + 4 <= r.size)
        __atomic_store_n((uint32_t *)(void *)(r.base + (off & ~(size_t)3)), (uint32_t)nasty_value(),
                         __ATOMIC_RELAXED);
}

static void *producer(void *arg)
{
    uint64_t n = 0, me = (uint64_t)(uintptr_t)arg;
    while (!atomic_load(&stop)) {
        uint64_t payload[2] = {n++, me};
        posix_trace_event(ids[n % 5], payload, sizeof payload);
        if (slow || n % 256 == 0)
            usleep(slow ? 100000 : 200); /* about a million events a second in all, not a tight loop */
    }
    return NULL;
}

/* Our mapping of the shared object whose /dev/shm name ends as `kind` says. */
static region find_mapping(const char *kind)
{
    char want[64];
    snprintf(want, sizeof want, "/dev/shm/tracelog.%u.%u", (unsigned)geteuid(), (unsigned)getpid());
    size_t wlen = strlen(want);
    region found = {0};
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char *path = strchr(line, '/');
        if (!path || sscanf(line, "%lx-%lx", &lo, &hi) != 2 || strncmp(path, want, wlen) != 0)
            continue;
        const char *rest = path + wlen;
        int is_names = strncmp(rest, ".names", 6) == 0;
        int is_ctl = *rest == '\n' || *rest == ' ';
        int is_stream = *rest == '.' && !is_names;
        if ((!strcmp(kind, "names") && is_names) || (!strcmp(kind, "ctl") && is_ctl) ||
            (!strcmp(kind, "stream") && is_stream)) {
            found.base = (uint8_t *)lo;
            found.size = hi - lo;
            snprintf(found.path, sizeof found.path, "%.*s", (int)strcspn(path, " \n"), path);
        }
    }
    if (f)
        fclose(f);
    return found;
}

static void scribble_lanes(region s, int counters)
{
    const tl_stream *h = (const tl_stream *)(void *)s.base;
    /* Read once, then bounded by our own mapping: the header itself may be scribbled. */
    uint64_t lanes = h->lanes_offset, nlanes = (uint64_t)h->nlanes + 1;
    if (lanes >= s.size || nlanes > TL_MAX_LANES + 1)
        return;
    size_t lane = lanes + (next_random() % nlanes) * sizeof(tl_lane);
    if (counters)
        poke64(s, lane + (next_random() % (sizeof(tl_lane) / 8)) * 8);
}

static void scribble_records(region s, size_t field)
{
    const tl_stream *h = (const tl_stream *)(void *)s.base;
    uint64_t data = h->data_offset;
    if (data >= s.size)
        return;
    size_t records = (s.size - data) / 64;
    poke64(s, data + (next_random() % records) * 64 + field);
}

/* The object r maps, cut to 0 bytes: the controller's next access past the end faults. */
static void cut(region r)
{
    FILE *f = r.base ? fopen(r.path, "r+") : NULL;
    if (f && ftruncate(fileno(f), 0) == 0)
        fprintf(stderr, "hostile_traced: cut %s\n", r.path);
    if (f)
        fclose(f);
}

/* A record's kind/size word (where 64-byte records have it): a SKIP over up to 64 KiB, or a 16-byte EVENT. */
static void flip_kind(region s)
{
    const tl_stream *h = (const tl_stream *)(void *)s.base;
    uint64_t data = h->data_offset;
    if (data >= s.size)
        return;
    size_t off = data + (next_random() % ((s.size - data) / 64)) * 64 + offsetof(tl_rec, kind_size);
    uint32_t skip = (uint32_t)(64 + 8 * (next_random() % 8192)) | (uint32_t)TL_KIND_SKIP << 28;
    uint32_t event = (uint32_t)tl_rec_size(16) | (uint32_t)TL_KIND_EVENT << 28;
    if (off + 4 <= s.size)
        __atomic_store_n((uint32_t *)(void *)(s.base + off), next_random() & 1 ? skip : event, __ATOMIC_RELAXED);
}

/* Every lane's next 64 bytes, reserved and never written nor committed. */
static void stall_lanes(region s)
{
    tl_stream *h = (tl_stream *)(void *)s.base;
    uint64_t lanes = h->lanes_offset, nlanes = h->nlanes;
    if (lanes >= s.size || nlanes > TL_MAX_LANES || lanes + nlanes * sizeof(tl_lane) > s.size)
        return;
    tl_lane *lane = (tl_lane *)(void *)(s.base + lanes);
    for (uint64_t i = 0; i < nlanes; i++) {
        atomic_fetch_or(&h->used_lanes, 1ull << i);
        atomic_fetch_add(&lane[i].head, 64);
    }
}

/* The user's stream table (xproc/quota.c's name: TRACELOG_STREAMS_TABLE's tag, as the tests set it), cut to 0. */
static void cut_table(void)
{
    const char *tag = getenv("TRACELOG_STREAMS_TABLE");
    char path[160];
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.streams%s%s", (unsigned)geteuid(), tag && *tag ? "." : "",
             tag ? tag : "");
    if (truncate(path, 0) == 0)
        fprintf(stderr, "hostile_traced: cut %s\n", path);
}

static void scribble(const char *mode, region s, region names, region ctl)
{
    if (!strcmp(mode, "random") && s.base)
        poke64(s, next_random() % s.size);
    else if (!strcmp(mode, "header") && s.base)
        poke64(s, next_random() % sizeof(tl_stream));
    else if (!strcmp(mode, "counters") && s.base)
        scribble_lanes(s, 1);
    else if (!strcmp(mode, "timestamps") && s.base)
        scribble_records(s, offsetof(tl_rec, ts));
    else if (!strcmp(mode, "sizes") && s.base)
        scribble_records(s, offsetof(tl_rec, kind_size));
    else if (!strcmp(mode, "skips") && s.base)
        flip_kind(s);
    else if (!strcmp(mode, "suspend") && s.base)
        atomic_store_explicit(&((tl_stream *)(void *)s.base)->state, TL_SUSPENDED, memory_order_relaxed);
    else if (!strcmp(mode, "locks") && s.base) {
        const tl_stream *h = (const tl_stream *)(void *)s.base;
        size_t words[] = {offsetof(tl_stream, reader_seq),
                          offsetof(tl_stream, waiters), offsetof(tl_stream, drainer_seq),
                          offsetof(tl_stream, drainer_sleeping), offsetof(tl_stream, state)};
        poke32(s, words[next_random() % (sizeof words / sizeof words[0])]);
        if (h->lanes_offset < s.size)
            poke32(s, h->lanes_offset + offsetof(tl_lane, room_seq));
    } else if (!strcmp(mode, "names") && names.base) {
        /* Mostly the header (lock word, count, moved, the redirect) and the schemas' places, sometimes a
           name or a schema's text. */
        if (next_random() % 4)
            poke32(names, next_random() % 4096);
        else
            poke64(names, next_random() % names.size);
    } else if (!strcmp(mode, "ctl") && ctl.base) {
        poke64(ctl, 128 + next_random() % (ctl.size - 128));
    }
}

int main(int argc, char **argv)
{
    static const char *const modes[] = {"none",  "random", "header",    "counters", "timestamps",
                                        "sizes", "locks",  "names",     "ctl",      "cut-names",
                                        "cut-ctl", "suspend", "skips", "cut-table", "stall"};
    int known = 0;
    for (size_t i = 0; argc >= 3 && i < sizeof modes / sizeof modes[0]; i++)
        known |= !strcmp(argv[1], modes[i]);
    double seconds = argc >= 3 ? atof(argv[2]) : 0;
    const char *end = argc >= 4 ? argv[3] : "exit";
    if (!known || seconds <= 0 || (strcmp(end, "exit") && strcmp(end, "kill"))) {
        fprintf(stderr, "usage: hostile_traced MODE SECONDS [exit|kill]\n");
        return 2;
    }
    const char *names[4] = {"a1", "a2", "b1", "zzz"};
    for (int i = 0; i < 4; i++)
        posix_trace_eventid_open(names[i], &ids[i]);
    tracelog_eventid_open_typed("typed", "u64 n; u64 who", &ids[4]); /* a schema in the map, to scribble over */
    rng_state ^= (uint64_t)getpid() << 20;
    slow = !strcmp(argv[1], "stall");

    pthread_t t[PRODUCERS];
    for (uintptr_t i = 0; i < PRODUCERS; i++)
        pthread_create(&t[i], NULL, producer, (void *)i);

    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    region s = {0}, nm = {0}, ctl = {0};
    int cut_done = 0;
    double stalled = 0;
    for (unsigned round = 0;; round++) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double elapsed = (double)(now.tv_sec - t0.tv_sec) + (now.tv_nsec - t0.tv_nsec) / 1e9;
        if (elapsed >= seconds)
            break;
        if (!cut_done && elapsed >= seconds / 2 && !strcmp(argv[1], "cut-table")) {
            cut_table();
            cut_done = 1;
        } else if (!cut_done && elapsed >= seconds / 2 && !strncmp(argv[1], "cut-", 4)) {
            cut(find_mapping(strcmp(argv[1], "cut-names") ? "ctl" : "names"));
            cut_done = 1;
        }
        if (round % 1024 == 0) { /* the controller may announce (or replace) a buffer at any time */
            s = find_mapping("stream");
            nm = find_mapping("names");
            ctl = find_mapping("ctl");
        }
        if (slow && s.base && elapsed - stalled >= 0.5) {
            stall_lanes(s);
            stalled = elapsed;
        }
        for (int i = 0; i < 16; i++)
            scribble(argv[1], s, nm, ctl);
        usleep(50);
    }
    atomic_store(&stop, 1);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(t[i], NULL);
    if (!strcmp(end, "kill"))
        raise(SIGKILL);
    return 0;
}
