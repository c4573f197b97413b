/*
 * bench_drain: what the flusher costs per event, piece by piece, on one
 * thread pinned to one CPU, with nothing else running in the process. The
 * tight-loop rows of bench_event measure the flusher among producers that
 * share its CPUs, which the scheduler and the machine's load make noisy (a
 * few ns from run to run); this one measures the same code on events
 * recorded beforehand, so that a change of one or two ns shows.
 *
 *   bench_drain [--smoke] [--runs N] [--events N] [--cpu N] [--dir DIR] [--json FILE] [--only KIND]
 *               [--lanes 1|2] [--run N] [--no-in-place]
 *
 * Each run records --events events of 16 B (bench_util.h's generator)
 * into a fresh FLUSH stream, from one lane or alternately from two (two
 * threads recording at once: the merge alternates), then times, in thread
 * CPU time per event:
 *  - take: the consumer alone (tl_consumer_take_wait and the runs after
 *    it, as the flusher takes: lanes read, merged, checked);
 *  - append: the writer alone (tracelog_writer_append of the same events
 *    from memory), raw chunks;
 *  - drain: take + append into a log, raw chunks (what the flusher does
 *    while it is behind) and zstd chunks (while it keeps up), with one
 *    consumer: two lanes merge event by event;
 *  - groups: the flusher's drain as it runs, by its groups of lanes
 *    (recorder/groups.h: a group per lane, each lane's runs where they lie,
 *    parts of one merge set), raw and zstd chunks.
 * The drained logs are read back: every event, in order, with its payload.
 * --only KIND (take, append_raw, drain_raw, drain_zstd, groups_raw,
 * groups_zstd) times that kind
 * alone, and --lanes N only the runs of N lanes, for a profiler (callgrind
 * counts one kind's instructions: bench/drain_instructions.sh). --run N
 * bounds the runs of events taken after each take (tl_consumer_take_run,
 * at most 63, the default); 0 takes one event per take, as before runs.
 * --no-in-place: the drains take every event as a tracelog_event and append
 * it, without the lane runs encoded where they lie (recorder/lane.h) that
 * the flusher uses, to compare the two.
 *
 * Exit status: 0, 1 when a self-check fails, 2 for bad arguments.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "recorder/groups.h"
#include "recorder/lane.h"
#include "recorder/run.h"
#include "stream/produce.h"
#include "stream/consumer.h"
#include "stream/layout.h"
#include "tracelog/reader.h"
#include "tracelog/writer.h"
#include "writer/io.h"

#define EVENT_ID 100
#define PAYLOAD 16
#define MAX_RUNS 64

static struct {
    int runs, cpu, lanes; /* lanes: 1 or 2, 0 for both */
    uint32_t run;         /* events a take's run may add (tl_consumer_take_run); 0: one event per take */
    int in_place;         /* drain: a lane's runs encoded where they lie (tl_rec_append_lane), as the flusher */
    long long events;
    const char *dir, *json, *only;
} cfg = {.runs = 7, .cpu = -1, .run = TL_REC_RUN - 1, .in_place = 1, .events = 500000, .dir = "/tmp"};

static int failures;

static void check_failed(const char *what)
{
    fprintf(stderr, "bench_drain: SELF-CHECK FAILED: %s\n", what);
    failures++;
}

static void die(const char *what)
{
    fprintf(stderr, "bench_drain: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* A FLUSH stream holding n events of 16 B from `lanes` lanes, recorded in turn (two threads at once). */
static tl_stream *recorded(long long n, uint32_t lanes)
{
    tl_stream_params p = {.policy = TRACELOG_POLICY_FLUSH,
                          .stream_size = ((uint64_t)n * tl_rec_size(PAYLOAD) / lanes + (1u << 20)) * 2,
                          .max_data = 256,
                          .max_sys_data = 64,
                          .nlanes = 2,
                          .markers = {4, 5, 3, 2}};
    uint64_t size = 1;
    while (size < p.stream_size)
        size *= 2;
    p.stream_size = size;
    tl_stream *s = tl_stream_create(&p);
    if (!s)
        die("tl_stream_create");
    tl_stream_start(s, NULL);
    bu_gen g[2];
    bu_gen_init(&g[0], 1);
    bu_gen_init(&g[1], 2);
    for (long long i = 0; i < n; i++) {
        uint32_t lane = lanes == 2 ? (uint32_t)(i & 1) : 0;
        tracelog_event ev = {.event_id = EVENT_ID,
                             .pid = 4242,
                             .kernel_tid = 4242 + lane,
                             .tid = 0x7f0000001000ull + lane * 0x10000,
                             .address = 0x55d0c4a01234ull,
                             .payload_len = PAYLOAD,
                             .payload = bu_gen_next(&g[lane], PAYLOAD)};
        if (!tl_stream_record(s, lane, &ev)) {
            check_failed("an event did not fit in the stream");
            break;
        }
    }
    return s;
}

static tracelog_writer *open_log(const char *path, int *fd, int zstd)
{
    *fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (*fd < 0)
        die(path);
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(*fd, NULL, &opt, &w, &err) != TRACELOG_OK) {
        fprintf(stderr, "bench_drain: %s: %s\n", path, err.message);
        exit(1);
    }
    tl_writer_set_raw(w, !zstd);
    return w;
}

/* Reads the log back: n events of EVENT_ID, in time order, each lane's payload sequence numbers consecutive. */
static void check_log(const char *path, long long n, uint32_t lanes)
{
    tracelog_reader *r;
    tracelog_error err;
    if (tracelog_reader_open_path(path, NULL, &r, &err) != TRACELOG_OK) {
        check_failed("cannot open the drained log");
        return;
    }
    tracelog_event ev;
    long long count = 0, bad = 0;
    uint32_t next[2] = {0, 0};
    uint64_t prev = 0;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        uint32_t lane = lanes == 2 && ev.kernel_tid == 4243, seq;
        memcpy(&seq, ev.payload, sizeof seq);
        if (ev.event_id != EVENT_ID || ev.payload_len != PAYLOAD || seq != next[lane] || ev.timestamp_ns < prev)
            bad++;
        next[lane] = seq + 1;
        prev = ev.timestamp_ns;
        count++;
    }
    if (count != n || bad || tracelog_reader_problem_count(r))
        check_failed("the drained log does not hold every event in order");
    tracelog_reader_close(r);
}

/* recorded(), and a consumer on it. */
static tl_stream *recorded_with_consumer(long long n, uint32_t lanes, tl_consumer **c)
{
    tl_stream *s = recorded(n, lanes);
    if (!(*c = tl_consumer_new(s)))
        die("tl_consumer_new");
    return s;
}

/* Flushes the log, which ends the time taken since t0, closes it and reads it back: ns per event. */
static double close_log(tracelog_writer *w, int fd, uint64_t t0, const char *path, long long n, uint32_t lanes)
{
    if (tracelog_writer_flush(w) != TRACELOG_OK)
        check_failed("tracelog_writer_flush");
    uint64_t t = bu_thread_cpu_ns() - t0;
    tracelog_writer_close(w, NULL);
    close(fd);
    check_log(path, n, lanes);
    return (double)t / (double)n;
}

/* Consumer alone: ns per event. */
static double time_take(long long n, uint32_t lanes)
{
    tl_consumer *c = NULL;
    tl_stream *s = recorded_with_consumer(n, lanes, &c);
    tracelog_event ev[TL_REC_RUN];
    long long got = 0;
    uint64_t sum = 0;
    uint64_t t0 = bu_thread_cpu_ns();
    for (uint32_t run; (run = tl_rec_take(c, ev, cfg.run, NULL));)
        for (uint32_t k = 0; k < run; k++) {
            sum += ev[k].payload_len ? ((const uint8_t *)ev[k].payload)[0] : 0; /* the payload is used, as the writer would */
            got++;
        }
    uint64_t t = bu_thread_cpu_ns() - t0;
    if (got < n || sum == 0)
        check_failed("the consumer did not hand out every event");
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
    return (double)t / (double)n;
}

/* Writer alone, from events in memory (what take hands out): ns per event. */
static double time_append(long long n, uint32_t lanes, const char *path)
{
    tl_consumer *c = NULL;
    tl_stream *s = recorded_with_consumer(n, lanes, &c);
    tracelog_event *evs = malloc(sizeof *evs * (size_t)n);
    uint8_t *data = malloc((size_t)n * PAYLOAD);
    if (!evs || !data)
        die("malloc");
    long long got = 0;
    while (got < n && tl_consumer_take_wait(c, &evs[got]) == TL_TAKE_EVENT) {
        memcpy(data + got * PAYLOAD, evs[got].payload, PAYLOAD);
        evs[got].payload = data + got * PAYLOAD;
        got++;
    }
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
    int fd;
    tracelog_writer *w = open_log(path, &fd, 0);
    uint64_t t0 = bu_thread_cpu_ns();
    for (long long i = 0; i < got; i++)
        if (tracelog_writer_append(w, &evs[i]) != TRACELOG_OK)
            check_failed("tracelog_writer_append");
    double ns = close_log(w, fd, t0, path, n, lanes);
    free(evs);
    free(data);
    return ns;
}

/* Consumer and writer, as the flusher: ns per event. */
static double time_drain(long long n, uint32_t lanes, int zstd, const char *path)
{
    tl_consumer *c = NULL;
    tl_stream *s = recorded_with_consumer(n, lanes, &c);
    int fd;
    tracelog_writer *w = open_log(path, &fd, zstd);
    tracelog_event ev[TL_REC_RUN];
    uint64_t t0 = bu_thread_cpu_ns();
    while (tl_consumer_take_wait(c, &ev[0]) == TL_TAKE_EVENT) { /* as the flusher (recorder/drain.c) */
        if (tracelog_writer_append(w, &ev[0]) != TRACELOG_OK)
            check_failed("tracelog_writer_append");
        tracelog_event last;
        size_t limit = 0;
        tl_chunk_builder *b = cfg.in_place ? tl_writer_lane_target(w, &limit, &last) : NULL;
        if (tl_rec_append_lane(c, b, limit, &last))
            continue;
        uint32_t run = tl_consumer_take_run(c, ev, cfg.run);
        for (uint32_t k = 0; k < run; k++)
            if (tracelog_writer_append(w, &ev[k]) != TRACELOG_OK)
                check_failed("tracelog_writer_append");
    }
    double ns = close_log(w, fd, t0, path, n, lanes);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
    return ns;
}

/*
 * The flusher's drain as it runs now: by its groups of lanes (recorder/groups.h), a group per lane,
 * each lane's runs encoded where they lie into its part of a merge set; on this one CPU, the groups
 * one after the other. ns per event.
 */
static double time_groups(long long n, uint32_t lanes, int zstd, const char *path)
{
    tl_consumer *c = NULL;
    tl_stream *s = recorded_with_consumer(n, lanes, &c);
    int fd, err;
    tracelog_writer *w = open_log(path, &fd, zstd);
    tl_groups *gs = tl_groups_open(c, NULL, w, &err);
    if (!gs) {
        errno = err;
        die("tl_groups_open");
    }
    uint64_t t0 = bu_thread_cpu_ns();
    tl_groups_take_over(gs, c);
    for (;;) {
        uint64_t taken, last_ts;
        int more, too_big;
        if (tl_groups_cycle(gs, &taken, &last_ts, &more, &too_big) != TRACELOG_OK || too_big)
            check_failed("tl_groups_cycle");
        if (!more || too_big)
            break;
    }
    tl_groups_close(gs);
    double ns = close_log(w, fd, t0, path, n, lanes);
    tl_consumer_free(c);
    tl_stream_destroy(s, s->total_size);
    return ns;
}

/* ---- figures ---------------------------------------------------------------------------- */

typedef struct figure {
    double v[MAX_RUNS];
    int n;
} figure;

enum { TAKE, APPEND, DRAIN_RAW, DRAIN_ZSTD, GROUPS_RAW, GROUPS_ZSTD, NKINDS };
static const char *kind_key[NKINDS] = {"take", "append_raw", "drain_raw", "drain_zstd", "groups_raw", "groups_zstd"};
static const char *kind_label[NKINDS] = {"take (consumer alone)",
                                         "append (writer alone), raw chunks",
                                         "drain (take + append), raw chunks",
                                         "drain (take + append), zstd chunks",
                                         "the flusher's drain by groups, raw chunks",
                                         "the flusher's drain by groups, zstd chunks"};
static figure figures[2][NKINDS];

static void print_and_save(void)
{
    FILE *j = cfg.json ? fopen(cfg.json, "w") : NULL;
    if (cfg.json && !j)
        die(cfg.json);
    if (j)
        fprintf(j, "{\"events\": %lld, \"runs\": %d, \"figures\": [", cfg.events, cfg.runs);
    printf("\n%-58s %10s %s\n", "figure (thread CPU time per event)", "median", "min-max");
    const char *sep = "";
    for (int l = 0; l < 2; l++) {
        for (int k = 0; k < NKINDS; k++) {
            figure *f = &figures[l][k];
            if (!f->n)
                continue;
            bu_summary s = bu_summarize(f->v, f->n);
            char label[128];
            snprintf(label, sizeof label, "%s, %d lane(s)", kind_label[k], l + 1);
            printf("%-58s %7.2f ns %.2f-%.2f\n", label, s.median, s.min, s.max);
            if (j)
                fprintf(j, "%s{\"key\": \"%s_%dlane_ns\", \"label\": \"%s\", \"median\": %.3f, \"min\": %.3f, "
                           "\"max\": %.3f}",
                        sep, kind_key[k], l + 1, label, s.median, s.min, s.max);
            sep = ", ";
        }
    }
    if (j) {
        fprintf(j, "]}\n");
        fclose(j);
    }
}

/* The kind named by key (a figure's key without its lane suffix, kind_key), or -1. */
static int kind_of(const char *key)
{
    for (int k = 0; k < NKINDS; k++)
        if (!strcmp(key, kind_key[k]))
            return k;
    return -1;
}

/* Whether the runs time kind k: all, or only the one --only names (for a profiler). */
static int wanted(int k) { return !cfg.only || kind_of(cfg.only) == k; }

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) {
            cfg.runs = 1;
            cfg.events = 20000;
            continue;
        }
        if (!strcmp(a, "--no-in-place")) {
            cfg.in_place = 0;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (!strcmp(a, "--runs") && atoi(v) >= 1 && atoi(v) <= MAX_RUNS)
            cfg.runs = atoi(v);
        else if (!strcmp(a, "--events") && bu_parse_count(v) >= 1000)
            cfg.events = bu_parse_count(v);
        else if (!strcmp(a, "--cpu") && atoi(v) >= 0)
            cfg.cpu = atoi(v);
        else if (!strcmp(a, "--dir"))
            cfg.dir = v;
        else if (!strcmp(a, "--json"))
            cfg.json = v;
        else if (!strcmp(a, "--only") && kind_of(v) >= 0)
            cfg.only = v;
        else if (!strcmp(a, "--lanes") && (!strcmp(v, "1") || !strcmp(v, "2")))
            cfg.lanes = atoi(v);
        else if (!strcmp(a, "--run") && atoi(v) >= 0 && atoi(v) < TL_REC_RUN)
            cfg.run = (uint32_t)atoi(v);
        else
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv)) {
        fprintf(stderr, "usage: bench_drain [--smoke] [--runs N] [--events N] [--cpu N] [--dir DIR] [--json FILE] [--only KIND] [--lanes 1|2] [--run N] [--no-in-place]\n");
        return 2;
    }
    int a, b;
    bu_two_cpus(&a, &b);
    int cpu = cfg.cpu >= 0 ? cfg.cpu : a;
    if (bu_pin(cpu)) {
        fprintf(stderr, "bench_drain: cannot run on CPU %d: %s\n", cpu, strerror(errno));
        return 2;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_drain.%d.ptl", cfg.dir, (int)getpid());
    printf("bench_drain: %d runs of %lld events of %d B, CPU %d, logs in %s\n", cfg.runs, cfg.events, PAYLOAD, cpu,
           cfg.dir);
    /* Runs interleave the kinds, so that a slow moment of the machine spreads over all of them. */
    for (int r = 0; r < cfg.runs; r++) {
        for (uint32_t lanes = 1; lanes <= 2; lanes++) {
            if (cfg.lanes && lanes != (uint32_t)cfg.lanes)
                continue;
            figure *f = figures[lanes - 1];
            if (wanted(TAKE))
                f[TAKE].v[f[TAKE].n++] = time_take(cfg.events, lanes);
            if (wanted(APPEND))
                f[APPEND].v[f[APPEND].n++] = time_append(cfg.events, lanes, path);
            if (wanted(DRAIN_RAW))
                f[DRAIN_RAW].v[f[DRAIN_RAW].n++] = time_drain(cfg.events, lanes, 0, path);
            if (wanted(DRAIN_ZSTD))
                f[DRAIN_ZSTD].v[f[DRAIN_ZSTD].n++] = time_drain(cfg.events, lanes, 1, path);
            if (wanted(GROUPS_RAW))
                f[GROUPS_RAW].v[f[GROUPS_RAW].n++] = time_groups(cfg.events, lanes, 0, path);
            if (wanted(GROUPS_ZSTD))
                f[GROUPS_ZSTD].v[f[GROUPS_ZSTD].n++] = time_groups(cfg.events, lanes, 1, path);
        }
    }
    unlink(path);
    print_and_save();
    return failures ? 1 : 0;
}
