/*
 * lttng_event: the LTTng-UST side of bench_event, run by run-lttng.sh under
 * an LTTng session it configured. Same loops, pinning, payloads and pacing
 * as bench_event.c (../bench_util.h); the tracepoint (tp.h) carries the same
 * bytes posix_trace_event records.
 *
 *   lttng_event cost     --events N --runs R --buffer-bytes B
 *       1 and 2 threads, payloads 16, 64, 256: ns per event per run
 *   lttng_event cheap    --events N --runs R [--tp disabled]
 *       ns per call of a tracepoint that records nothing (no session
 *       enabled it, or its filter rejects every event)
 *   lttng_event tight    --threads T --events N --runs R
 *       T threads (1 or 2) record N events of 16 B each as fast as they can,
 *       in one go (no pause: the consumer daemon keeps up or discards), R
 *       times with a pause between runs: ns per event per thread
 *   lttng_event paced    --rate M --seconds S
 *       one producer paced at M million events/s (16 B payloads)
 *   lttng_event generate --events N [--payload P] --buffer-bytes B [--tp fields|typed]
 *                        [--jsonl FILE]
 *       N events, paused so that the consumer keeps up (for the reading
 *       benchmark); --tp fields: the 16 bytes as three integer fields;
 *       --tp typed: bench:net_rx (net_rx.h), and with --jsonl the same
 *       events as ptlog JSON Lines (their .ptl log is its import)
 *
 * Prints one JSON object on its last line of output.
 * Worker 0 runs on the last CPU the process may use (A), worker 1 on the
 * one before (B); run-lttng.sh pins lttng-sessiond and its consumer daemon
 * to CPU B, as bench_event's flusher is.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../bench_util.h"
#include "tp.h"

#define MAX_RUNS 64

enum job_kind { JOB_EVENT, JOB_DISABLED, JOB_PACED, JOB_QUIT };

typedef struct job {
    enum job_kind kind;
    long long n;
    size_t len;
    int realistic;
    int fields; /* bench:fields instead of bench:event (16-byte payloads only) */
    int typed;  /* bench:net_rx, event i of net_rx.h from first on */
    long long first;
    double rate_per_ns;
    uint64_t duration_ns;
} job;

typedef struct worker {
    pthread_t th;
    int index, cpu;
    bu_gen gen;
    bu_payload *table;
    uint64_t t0, t1, cpu_ns;
    long long done;
} worker;

static worker workers[2];
static job current;
static int nactive;
static pthread_barrier_t start_bar, done_bar;

static struct {
    const char *mode, *tp, *jsonl;
    long long events;
    int runs;
    uint64_t buffer_bytes;
    size_t payload;
    double rate, seconds;
    int threads;
} cfg = {NULL, "event", NULL, 1000000, 5, 64u << 20, 16, 1, 1, 1};

static void run_job(worker *w, const job *j)
{
    uint64_t c0 = bu_thread_cpu_ns();
    w->t0 = bu_now_ns();
    long long i = 0;
    switch (j->kind) {
    case JOB_EVENT:
        if (j->typed) {
            bench_net_rx rx;
            for (; i < j->n; i++) {
                bench_net_rx_make((uint64_t)(j->first + i), &rx);
                lttng_ust_tracepoint(bench, net_rx, &rx);
            }
        } else if (j->fields) {
            for (; i < j->n; i++)
                lttng_ust_tracepoint(bench, fields, bu_gen_next(&w->gen, 16));
        } else if (j->realistic) {
            for (; i < j->n; i++)
                lttng_ust_tracepoint(bench, event, bu_gen_next(&w->gen, j->len), j->len);
        } else {
            for (; i < j->n; i++)
                lttng_ust_tracepoint(bench, event, w->table[i & (BU_TABLE_SIZE - 1)], j->len);
        }
        break;
    case JOB_DISABLED:
        for (; i < j->n; i++)
            lttng_ust_tracepoint(bench, disabled, w->table[i & (BU_TABLE_SIZE - 1)], j->len);
        break;
    case JOB_PACED:
        for (;;) {
            for (int k = 0; k < BU_PACE_GROUP; k++)
                lttng_ust_tracepoint(bench, event, bu_gen_next(&w->gen, j->len), j->len);
            i += BU_PACE_GROUP;
            bu_pace(w->t0, (uint64_t)i, j->rate_per_ns);
            if (bu_now_ns() - w->t0 >= j->duration_ns)
                break;
        }
        break;
    case JOB_QUIT:
        break;
    }
    w->t1 = bu_now_ns();
    w->cpu_ns = bu_thread_cpu_ns() - c0;
    w->done = i;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    if (bu_pin(w->cpu)) {
        perror("lttng_event: sched_setaffinity");
        exit(1);
    }
    for (;;) {
        pthread_barrier_wait(&start_bar);
        job j = current;
        if (j.kind == JOB_QUIT)
            return NULL;
        if (w->index < nactive)
            run_job(w, &j);
        pthread_barrier_wait(&done_bar);
    }
}

static void run_on(int nthreads, job j)
{
    current = j;
    nactive = nthreads;
    pthread_barrier_wait(&start_bar);
    if (j.kind != JOB_QUIT)
        pthread_barrier_wait(&done_bar);
}

static uint64_t span_ns(int nthreads)
{
    uint64_t t0 = workers[0].t0, t1 = workers[0].t1;
    for (int i = 1; i < nthreads; i++) {
        if (workers[i].t0 < t0)
            t0 = workers[i].t0;
        if (workers[i].t1 > t1)
            t1 = workers[i].t1;
    }
    return t1 - t0;
}

/* Bytes of one event in LTTng's buffer: about the compact header, the 16-bit length and the payload. */
static uint64_t event_bytes(size_t len) { return 8 + 2 + len; }

/* Lets the consumer daemon empty the buffers after a batch: it has no "drained" query we can call. */
static void pause_for(long long events, size_t len)
{
    double bytes = (double)events * (double)event_bytes(len);
    double secs = 0.02 + bytes / 300e6;
    struct timespec ts = {(time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9)};
    nanosleep(&ts, NULL);
}

static long long issued;
static uint64_t record_cpu_ns; /* the last record()'s thread CPU time, per thread */

/* n events per thread, in batches of a quarter buffer with pauses; returns the recording time. */
static uint64_t record(int nthreads, long long n, size_t len, int realistic, double *share, int fields)
{
    int typed = fields == 2;
    if (typed)
        len = sizeof(bench_net_rx);
    long long batch = (long long)(cfg.buffer_bytes / 4 / event_bytes(len));
    if (batch > n)
        batch = n;
    uint64_t total = 0, cpu = 0;
    double sh = 1;
    for (long long done = 0; done < n; done += batch) {
        long long b = n - done < batch ? n - done : batch;
        run_on(nthreads, (job){.kind = JOB_EVENT, .n = b, .len = len, .realistic = realistic, .fields = fields == 1,
                               .typed = typed, .first = done});
        total += span_ns(nthreads);
        for (int i = 0; i < nthreads; i++) {
            double s = (double)workers[i].cpu_ns / (double)(workers[i].t1 - workers[i].t0);
            if (s < sh)
                sh = s;
            cpu += workers[i].cpu_ns;
        }
        issued += b * nthreads;
        pause_for(b, len);
    }
    if (share)
        *share = sh;
    record_cpu_ns = cpu / (uint64_t)nthreads;
    return total;
}

static void print_array(const char *key, const double *v, int n, const char *sep)
{
    printf("\"%s\": [", key);
    for (int i = 0; i < n; i++)
        printf("%s%.4f", i ? ", " : "", v[i]);
    printf("]%s", sep);
}

static void mode_cost(void)
{
    static const size_t sizes[3] = {16, 64, 256};
    record(2, (long long)(cfg.buffer_bytes / event_bytes(16)) + 1000, 16, 0, NULL, 0); /* warm: one lap per CPU */
    printf("{\"mode\": \"cost\", \"payloads\": {");
    for (int p = 0; p < 3; p++) {
        size_t len = sizes[p];
        long long fit = (long long)(cfg.buffer_bytes / 10 * 9 / event_bytes(len));
        long long n = cfg.events < fit ? cfg.events : fit;
        double one[MAX_RUNS], one_cpu[MAX_RUNS], two[MAX_RUNS], speed[MAX_RUNS], share1 = 1, share2 = 1;
        for (int r = 0; r < cfg.runs; r++) {
            double sh;
            uint64_t t1 = record(1, n, len, 0, &sh, 0);
            one_cpu[r] = (double)record_cpu_ns / (double)n;
            share1 = sh < share1 ? sh : share1;
            uint64_t t2 = record(2, n, len, 0, &sh, 0);
            share2 = sh < share2 ? sh : share2;
            one[r] = (double)t1 / (double)n;
            two[r] = (double)t2 / (double)n;
            speed[r] = (2.0 * (double)n / (double)t2) / ((double)n / (double)t1);
        }
        printf("%s\"%zu\": {\"events\": %lld, \"cpu_share_1t\": %.3f, \"cpu_share_2t\": %.3f, ", p ? ", " : "", len,
               n, share1, share2);
        print_array("ns_1t", one, cfg.runs, ", ");
        print_array("cpu_ns_1t", one_cpu, cfg.runs, ", ");
        print_array("ns_2t", two, cfg.runs, ", ");
        print_array("speedup", speed, cfg.runs, "}");
    }
    printf("}, \"issued\": %lld}\n", issued);
}

/* The tight loop of bench_event (issue 11): nothing paced, whatever the consumer daemon keeps. */
static void mode_tight(void)
{
    double ns[MAX_RUNS], share = 1;
    for (int r = 0; r < cfg.runs; r++) {
        run_on(cfg.threads, (job){.kind = JOB_EVENT, .n = cfg.events, .len = 16, .realistic = 1});
        ns[r] = (double)span_ns(cfg.threads) / (double)cfg.events;
        for (int i = 0; i < cfg.threads; i++) {
            double s = (double)workers[i].cpu_ns / (double)(workers[i].t1 - workers[i].t0);
            share = s < share ? s : share;
        }
        issued += cfg.events * cfg.threads;
        pause_for(cfg.events * cfg.threads, 16);
    }
    printf("{\"mode\": \"tight\", \"threads\": %d, \"events\": %lld, \"cpu_share\": %.3f, ", cfg.threads, cfg.events,
           share);
    print_array("ns", ns, cfg.runs, ", ");
    printf("\"issued\": %lld}\n", issued);
}

static void mode_cheap(void)
{
    int disabled = !strcmp(cfg.tp, "disabled");
    job j = {.kind = disabled ? JOB_DISABLED : JOB_EVENT, .n = cfg.events / 10 + 1, .len = 16};
    run_on(1, j);
    double ns[MAX_RUNS], share = 1;
    j.n = cfg.events;
    for (int r = 0; r < cfg.runs; r++) {
        run_on(1, j);
        ns[r] = (double)span_ns(1) / (double)cfg.events;
        double s = (double)workers[0].cpu_ns / (double)span_ns(1);
        share = s < share ? s : share;
    }
    printf("{\"mode\": \"cheap\", \"tp\": \"%s\", \"cpu_share\": %.3f, ", cfg.tp, share);
    print_array("ns", ns, cfg.runs, "}\n");
}

static void mode_paced(void)
{
    /* Warm: one lap of the buffer, so that page faults do not count. */
    record(1, (long long)(cfg.buffer_bytes / event_bytes(16)) + 1000, 16, 1, NULL, 0);
    long long warm = issued;
    job j = {.kind = JOB_PACED, .len = 16, .rate_per_ns = cfg.rate * 1e6 / 1e9,
             .duration_ns = (uint64_t)(cfg.seconds * 1e9)};
    run_on(1, j);
    uint64_t el = span_ns(1);
    printf("{\"mode\": \"paced\", \"target_mev_s\": %.3f, \"warm_events\": %lld, \"events\": %lld, "
           "\"elapsed_ns\": %llu, \"achieved_mev_s\": %.4f, \"cpu_share\": %.3f}\n",
           cfg.rate, warm, workers[0].done, (unsigned long long)el, (double)workers[0].done / (double)el * 1e3,
           (double)workers[0].cpu_ns / (double)el);
}

/* The typed events as ptlog JSON Lines: a header with the type and its schema, then one line per event. */
static int write_typed_jsonl(const char *path, long long n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fprintf(f, "{\"attributes\":{\"trace_name\":\"bench_typed\"},\"event_types\":"
               "[{\"id\":33,\"name\":\"net.rx\",\"schema\":\"%s\"}]}\n", BENCH_NET_RX_SCHEMA);
    for (long long i = 0; i < n; i++) {
        bench_net_rx rx;
        bench_net_rx_make((uint64_t)i, &rx);
        const unsigned char *p = (const unsigned char *)&rx;
        fprintf(f, "{\"id\":33,\"ts\":%lld,\"pid\":1,\"tid\":1,\"data\":\"", 1700000000000000000ll + 100 * i);
        for (size_t k = 0; k < sizeof rx; k++)
            fprintf(f, "%02x", p[k]);
        fputs("\"}\n", f);
    }
    return fclose(f) ? -1 : 0;
}

static void mode_generate(void)
{
    uint64_t t0 = bu_now_ns();
    int tp = !strcmp(cfg.tp, "fields") ? 1 : !strcmp(cfg.tp, "typed") ? 2 : 0;
    if (tp == 2 && cfg.jsonl && write_typed_jsonl(cfg.jsonl, cfg.events)) {
        perror("lttng_event: --jsonl");
        exit(1);
    }
    record(1, cfg.events, cfg.payload, 1, NULL, tp);
    printf("{\"mode\": \"generate\", \"events\": %lld, \"payload\": %zu, \"seconds\": %.3f}\n", issued, cfg.payload,
           (double)(bu_now_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: lttng_event cost|cheap|tight|paced|generate [options] (see the source)\n");
        return 2;
    }
    cfg.mode = argv[1];
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *a = argv[i], *v = argv[i + 1];
        long long n = bu_parse_count(v);
        if (!strcmp(a, "--events") && n > 0)
            cfg.events = n;
        else if (!strcmp(a, "--runs") && n > 0 && n <= MAX_RUNS)
            cfg.runs = (int)n;
        else if (!strcmp(a, "--buffer-bytes") && n >= 4096)
            cfg.buffer_bytes = (uint64_t)n;
        else if (!strcmp(a, "--payload") && n >= 0 && n <= 256)
            cfg.payload = (size_t)n;
        else if (!strcmp(a, "--rate") && strtod(v, NULL) > 0)
            cfg.rate = strtod(v, NULL);
        else if (!strcmp(a, "--seconds") && strtod(v, NULL) > 0)
            cfg.seconds = strtod(v, NULL);
        else if (!strcmp(a, "--tp"))
            cfg.tp = v;
        else if (!strcmp(a, "--jsonl"))
            cfg.jsonl = v;
        else if (!strcmp(a, "--threads") && (n == 1 || n == 2))
            cfg.threads = (int)n;
        else {
            fprintf(stderr, "lttng_event: bad option %s %s\n", a, v);
            return 2;
        }
    }
    int a, b;
    bu_two_cpus(&a, &b);
    pthread_barrier_init(&start_bar, NULL, 3);
    pthread_barrier_init(&done_bar, NULL, 3);
    for (int i = 0; i < 2; i++) {
        workers[i].index = i;
        workers[i].cpu = i == 0 ? a : b;
        bu_gen_init(&workers[i].gen, (uint64_t)i + 1);
        workers[i].table = bu_table_new((uint64_t)i + 101);
        if (!workers[i].table || pthread_create(&workers[i].th, NULL, worker_main, &workers[i])) {
            fprintf(stderr, "lttng_event: cannot start the workers\n");
            return 1;
        }
    }
    if (!strcmp(cfg.mode, "cost"))
        mode_cost();
    else if (!strcmp(cfg.mode, "cheap"))
        mode_cheap();
    else if (!strcmp(cfg.mode, "paced"))
        mode_paced();
    else if (!strcmp(cfg.mode, "tight"))
        mode_tight();
    else if (!strcmp(cfg.mode, "generate"))
        mode_generate();
    else {
        fprintf(stderr, "lttng_event: unknown mode %s\n", cfg.mode);
        return 2;
    }
    run_on(0, (job){.kind = JOB_QUIT});
    for (int i = 0; i < 2; i++)
        pthread_join(workers[i].th, NULL);
    return 0;
}
