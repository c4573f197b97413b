/*
 * bench_event: what recording an event through the POSIX interface costs
 * (issue 3's targets), in one process and one run, next to clock_gettime.
 *
 *   bench_event [--smoke] [--runs N] [--events N] [--stream-mib N]
 *               [--seconds S] [--rates 2,4,6,...] [--no-sustained] [--no-cost]
 *               [--tight-events N] [--no-tight] [--dir DIR] [--json FILE]
 *   bench_event --cheap [--runs N] [--events N] [--json FILE]
 *   bench_event --instructions N
 *   bench_event --generate N --out FILE.ptl [--payload BYTES]
 *
 * Measures, each as the median and min-max of --runs runs (events per
 * thread per run: --events), with two worker threads pinned to the last two
 * CPUs (A: the producer; B: the second producer, and the flusher):
 *  - clock_gettime(CLOCK_REALTIME), the baseline, and the benchmark loop
 *    alone (it cycles through a table of 4096 generated payloads);
 *  - posix_trace_event with 16, 64 and 256-byte payloads, 1 and 2 threads,
 *    on a running stream without log (LOOP, sized so that a run never
 *    overwrites: the stream is cleared between runs), on a full LOOP stream
 *    (every event overwrites the oldest), and on a FLUSH stream with an
 *    APPEND log whose background flusher runs on CPU B (recorded in batches
 *    the flusher drains in between, so no event is lost and the cost is
 *    that of recording, not of dropping);
 *  - a filtered-out event, an event on a stopped stream, and with no stream,
 *    each through <trace.h>'s inline test and as a call of the function
 *    (what a program built with an older header pays); --cheap measures
 *    only these (and the baselines);
 *  - the tight loop (issue 11, "zero loss first"): 1 and 2 threads record
 *    --tight-events events each as fast as they can into a FLUSH stream of
 *    the default size with an APPEND log, nothing waited for: the share of
 *    events kept, and the log read back event by event (each thread's
 *    sequence numbers in order without repeats, its gaps adding up to the
 *    loss counted, timestamps never going back, OVERFLOW where lost); each
 *    with the flusher on CPU B and with the flusher free to run on either
 *    CPU (as in a program that pins nothing), run by run in alternation;
 *  - the FLUSH sustained rate: one producer paced at each --rates value
 *    (M events/s) for --seconds into a --stream-mib stream with an APPEND
 *    log; loss per rate, bytes/s to disk, and the log read back: events
 *    read + lost == recorded, OVERFLOW markers present when events were lost.
 * Every stream is warmed before timing (its lanes written over once), so
 * first-touch page faults do not count as recording cost.
 *
 * --instructions N records N events of 16 B on one thread into a LOOP
 * stream without log, nothing else: for callgrind or perf stat.
 *
 * --generate records N events (the same generator as the LTTng benchmark)
 * into a FLUSH log without loss, for the reading benchmarks.
 *
 * Exit status: 0, 1 when a self-check fails (events missing from a log,
 * unmarked loss, an API call failing), 2 for bad arguments. Missed targets
 * are reported, not failures.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "bench_util.h"
#include "tracelog.h"
#include "tracelog/posix.h"
#include "tracelog/reader.h"

#define MAX_RUNS 64
#define MAX_RATES 32
#define NPAYLOADS 3
static const size_t payloads[NPAYLOADS] = {16, 64, 256};

/* ---- configuration ------------------------------------------------------------ */

static struct {
    int smoke, runs, sustained, cost, tight, cheap;
    long long instructions; /* --instructions N */
    long long events, tight_events;
    size_t stream_size;
    double seconds;
    double rates[MAX_RATES]; /* M events/s */
    int nrates;
    const char *dir, *json;
    long long generate;
    const char *out;
    size_t payload;
    int cpu_a, cpu_b, ncpus;
} cfg;

static int failures;

__attribute__((format(printf, 1, 2))) static void check_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_event: SELF-CHECK FAILED: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    failures++;
}

static void die(const char *what, int e)
{
    fprintf(stderr, "bench_event: %s: %s\n", what, strerror(e));
    exit(1);
}

/* ---- worker threads ------------------------------------------------------------ */

/* JOB_EVENT_CALL: posix_trace_event called as a function, (posix_trace_event)(...), as a program built
   with an older <trace.h> or TRACELOG_NO_INLINE_EVENT does; JOB_EVENT goes through <trace.h>'s inline test. */
enum job_kind { JOB_CLOCK, JOB_GEN, JOB_EVENT, JOB_EVENT_CALL, JOB_PACED, JOB_QUIT };

typedef struct job {
    enum job_kind kind;
    long long n;           /* events (or calls) per thread */
    trace_event_id_t id;
    size_t len;
    double rate_per_ns;    /* JOB_PACED */
    uint64_t duration_ns;  /* JOB_PACED */
    int realistic;         /* JOB_EVENT: a fresh payload per event (bu_gen_next) rather than the table */
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
static volatile unsigned char sink;

static void run_job(worker *w, const job *j)
{
    struct timespec ts = {0, 0};
    uint64_t c0 = bu_thread_cpu_ns();
    w->t0 = bu_now_ns();
    long long i = 0;
    switch (j->kind) {
    case JOB_CLOCK:
        for (; i < j->n; i++) {
            clock_gettime(CLOCK_REALTIME, &ts);
            __asm__ __volatile__("" : : "r"(&ts) : "memory");
        }
        break;
    case JOB_GEN:
        for (; i < j->n; i++) {
            const unsigned char *p = w->table[i & (BU_TABLE_SIZE - 1)];
            __asm__ __volatile__("" : : "r"(p) : "memory");
        }
        break;
    case JOB_EVENT:
        if (j->realistic) {
            for (; i < j->n; i++)
                posix_trace_event(j->id, bu_gen_next(&w->gen, j->len), j->len);
        } else {
            for (; i < j->n; i++)
                posix_trace_event(j->id, w->table[i & (BU_TABLE_SIZE - 1)], j->len);
        }
        break;
    case JOB_EVENT_CALL:
        for (; i < j->n; i++)
            (posix_trace_event)(j->id, w->table[i & (BU_TABLE_SIZE - 1)], j->len);
        break;
    case JOB_PACED:
        for (;;) {
            for (int k = 0; k < BU_PACE_GROUP; k++)
                posix_trace_event(j->id, bu_gen_next(&w->gen, j->len), j->len);
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
    sink = (unsigned char)ts.tv_nsec;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    int e = bu_pin(w->cpu);
    if (e)
        die("sched_setaffinity", e);
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

/* Runs j on threads 0..nthreads-1 (worker 0 on CPU A, worker 1 on CPU B). */
static void run_on(int nthreads, job j)
{
    current = j;
    nactive = nthreads;
    pthread_barrier_wait(&start_bar);
    if (j.kind != JOB_QUIT)
        pthread_barrier_wait(&done_bar);
}

static void start_workers(void)
{
    pthread_barrier_init(&start_bar, NULL, 3);
    pthread_barrier_init(&done_bar, NULL, 3);
    for (int i = 0; i < 2; i++) {
        workers[i].index = i;
        workers[i].cpu = i == 0 ? cfg.cpu_a : cfg.cpu_b;
        bu_gen_init(&workers[i].gen, (uint64_t)i + 1);
        workers[i].table = bu_table_new((uint64_t)i + 101);
        if (!workers[i].table)
            die("malloc", ENOMEM);
        int e = pthread_create(&workers[i].th, NULL, worker_main, &workers[i]);
        if (e)
            die("pthread_create", e);
    }
}

static void stop_workers(void)
{
    run_on(0, (job){.kind = JOB_QUIT});
    for (int i = 0; i < 2; i++)
        pthread_join(workers[i].th, NULL);
}

/* Wall time of the last job on nthreads: first start to last end. */
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

/* ---- streams -------------------------------------------------------------------- */

typedef struct stream {
    trace_id_t trid;
    int fd;                 /* the log, or -1 */
    char path[4096];
    int policy;
    uint64_t lane_bytes;    /* bytes of one lane (a power of two >= the stream size) */
    long long issued;       /* events passed to posix_trace_event while it ran */
} stream;

static trace_event_id_t event_ids[NPAYLOADS];

static void must(int e, const char *what)
{
    if (e)
        die(what, e);
}

/*
 * Created by the main thread, which is pinned to CPU B: the flusher thread
 * that posix_trace_create_withlog starts inherits that affinity, so it runs
 * on the other core than producer A.
 */
static void stream_open(stream *s, int with_log, int policy, size_t size, const char *name)
{
    size_t asked = size;
    if (!size) /* the default stream size */
        size = 8u << 20;
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->policy = policy;
    trace_attr_t attr;
    must(posix_trace_attr_init(&attr), "posix_trace_attr_init");
    must(posix_trace_attr_setname(&attr, "bench_event"), "posix_trace_attr_setname");
    must(posix_trace_attr_setmaxdatasize(&attr, 256), "posix_trace_attr_setmaxdatasize");
    if (asked)
        must(posix_trace_attr_setstreamsize(&attr, size), "posix_trace_attr_setstreamsize");
    else if (posix_trace_attr_getstreamsize(&attr, &size) == 0 && size != 8u << 20)
        check_failed("the default stream size is %zu, not the 8 MiB this benchmark assumes", size);
    must(posix_trace_attr_setstreamfullpolicy(&attr, policy), "posix_trace_attr_setstreamfullpolicy");
    if (with_log) {
        must(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND), "posix_trace_attr_setlogfullpolicy");
        snprintf(s->path, sizeof s->path, "%s/%s", cfg.dir, name);
        s->fd = open(s->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (s->fd < 0)
            die(s->path, errno);
        must(posix_trace_create_withlog(0, &attr, s->fd, &s->trid), "posix_trace_create_withlog");
    } else {
        must(posix_trace_create(0, &attr, &s->trid), "posix_trace_create");
    }
    posix_trace_attr_destroy(&attr);
    s->lane_bytes = 4096;
    while (s->lane_bytes < size)
        s->lane_bytes *= 2;
    must(posix_trace_start(s->trid), "posix_trace_start");
}

static tracelog_trace_stats stats_of(const stream *s)
{
    tracelog_trace_stats st;
    must(tracelog_trace_get_stats(s->trid, &st), "tracelog_trace_get_stats");
    return st;
}

/* Waits until the flusher has taken every event out of the stream (at most 10 s). */
static void wait_drained(const stream *s)
{
    uint64_t deadline = bu_now_ns() + 10000000000ull;
    while (stats_of(s).events_buffered != 0) {
        if (bu_now_ns() > deadline) {
            check_failed("the flusher did not drain the stream within 10 s");
            return;
        }
        usleep(200);
    }
}

static uint32_t rec_bytes(size_t len) { return (uint32_t)((48 + len + 7) & ~(size_t)7); }

/* Events per thread per run that fit in 90 % of a lane (a run never wraps onto unread events). */
static long long fit_events(const stream *s, size_t len)
{
    long long fit = (long long)(s->lane_bytes / 10 * 9 / rec_bytes(len));
    return cfg.events < fit ? cfg.events : fit;
}

/*
 * Records n events per thread on nthreads; returns the wall time of
 * recording (summed over batches for a stream with log, whose flusher
 * drains between batches). cpu_share: lowest CPU time / wall time of a
 * thread (below ~0.97: another process took our CPU).
 */
/* CPU time of the first thread in the last record() (what preemption on a busy machine does not inflate). */
static uint64_t record_cpu_ns;

static uint64_t record(stream *s, int nthreads, long long n, size_t len, trace_event_id_t id, double *cpu_share,
                       int realistic)
{
    long long batch = n;
    if (s->fd >= 0) {
        long long quarter = (long long)(s->lane_bytes / 4 / rec_bytes(len));
        if (batch > quarter)
            batch = quarter;
    }
    uint64_t total = 0;
    double share = 1.0;
    record_cpu_ns = 0;
    for (long long done = 0; done < n; done += batch) {
        long long b = n - done < batch ? n - done : batch;
        run_on(nthreads, (job){.kind = JOB_EVENT, .n = b, .id = id, .len = len, .realistic = realistic});
        total += span_ns(nthreads);
        record_cpu_ns += workers[0].cpu_ns;
        for (int i = 0; i < nthreads; i++) {
            double sh = (double)workers[i].cpu_ns / (double)(workers[i].t1 - workers[i].t0);
            if (sh < share)
                share = sh;
        }
        s->issued += b * nthreads;
        if (s->fd >= 0)
            wait_drained(s);
    }
    if (cpu_share)
        *cpu_share = share;
    return total;
}

/* Writes every lane used by nthreads over once (and more), so that no page is touched for the first time later. */
static void warm(stream *s, int nthreads)
{
    long long lap = (long long)(s->lane_bytes / rec_bytes(16)) + 1000;
    record(s, nthreads, lap, 16, event_ids[0], NULL, 0);
    if (s->fd < 0)
        must(posix_trace_clear(s->trid), "posix_trace_clear");
}

/* ---- results ------------------------------------------------------------------------- */

typedef struct figure {
    char key[64];   /* JSON name */
    char label[128]; /* table label */
    const char *unit;
    double v[MAX_RUNS];
    int n;
    double cpu_share; /* lowest over runs; 0 if not measured */
} figure;

#define MAX_FIGURES 96
/* Unit of figures measured in the thread's CPU time (CLOCK_THREAD_CPUTIME_ID) instead of elapsed time. */
#define CPU_NS "cpu ns"
static figure figs[MAX_FIGURES];
static int nfigs;

static figure *fig_new(const char *key, const char *label, const char *unit)
{
    if (nfigs == MAX_FIGURES) {
        fprintf(stderr, "bench_event: too many figures\n");
        exit(1);
    }
    figure *f = &figs[nfigs++];
    memset(f, 0, sizeof *f);
    snprintf(f->key, sizeof f->key, "%s", key);
    snprintf(f->label, sizeof f->label, "%s", label);
    f->unit = unit;
    f->cpu_share = 1.0;
    return f;
}

static void fig_add(figure *f, double v, double share)
{
    if (f->n < MAX_RUNS)
        f->v[f->n++] = v;
    if (share > 0 && share < f->cpu_share)
        f->cpu_share = share;
}

static figure *fig_find(const char *key)
{
    for (int i = 0; i < nfigs; i++)
        if (!strcmp(figs[i].key, key))
            return &figs[i];
    return NULL;
}

static double med(const char *key)
{
    figure *f = fig_find(key);
    return f ? bu_summarize(f->v, f->n).median : 0;
}

/* Targets: a figure, a bound and a direction, printed beside each other. */
typedef struct target {
    char what[96];
    double value, bound;
    int at_most; /* 1: value <= bound; 0: value >= bound */
    char bound_text[64];
    const char *unit;
} target;

static target targets[32];
static int ntargets;

static void add_target(const char *what, double value, int at_most, double bound, const char *unit,
                       const char *bound_text)
{
    target *t = &targets[ntargets++];
    snprintf(t->what, sizeof t->what, "%s", what);
    t->value = value;
    t->at_most = at_most;
    t->bound = bound;
    t->unit = unit;
    snprintf(t->bound_text, sizeof t->bound_text, "%s", bound_text);
}

static int met(const target *t) { return t->at_most ? t->value <= t->bound : t->value >= t->bound; }

/* ---- the measures ---------------------------------------------------------------------- */

static void measure_baselines(void)
{
    long long n = cfg.events;
    figure *clk = fig_new("clock_gettime_realtime_ns", "clock_gettime(CLOCK_REALTIME)", "ns");
    figure *loop = fig_new("loop_overhead_ns", "the benchmark loop alone (no call)", "ns");
    figure *clk_cpu = fig_new("clock_gettime_realtime_cpu_ns", "clock_gettime(CLOCK_REALTIME), thread CPU time", CPU_NS);
    run_on(1, (job){.kind = JOB_CLOCK, .n = n / 10 + 1}); /* warm-up */
    for (int r = 0; r < cfg.runs; r++) {
        run_on(1, (job){.kind = JOB_CLOCK, .n = n});
        fig_add(clk, (double)span_ns(1) / (double)n, (double)workers[0].cpu_ns / (double)span_ns(1));
        fig_add(clk_cpu, (double)workers[0].cpu_ns / (double)n, 0);
        run_on(1, (job){.kind = JOB_GEN, .n = n, .len = 16});
        fig_add(loop, (double)span_ns(1) / (double)n, (double)workers[0].cpu_ns / (double)span_ns(1));
    }
}

/* 1 and 2 threads on stream s, every payload size: ns/event and 2-thread speedup. */
static void measure_recording(stream *s, const char *mode, const char *mode_label)
{
    for (int p = 0; p < NPAYLOADS; p++) {
        size_t len = payloads[p];
        long long n = fit_events(s, len);
        char key[64], label[96];
        snprintf(key, sizeof key, "event_%s_%zub_1t_ns", mode, len);
        snprintf(label, sizeof label, "posix_trace_event %zu B, %s, 1 thread", len, mode_label);
        figure *one = fig_new(key, label, "ns");
        snprintf(key, sizeof key, "event_%s_%zub_2t_ns", mode, len);
        snprintf(label, sizeof label, "posix_trace_event %zu B, %s, 2 threads (per thread)", len, mode_label);
        figure *two = fig_new(key, label, "ns");
        snprintf(key, sizeof key, "event_%s_%zub_2t_speedup", mode, len);
        snprintf(label, sizeof label, "2 threads / 1 thread, %zu B, %s (aggregate events/s)", len, mode_label);
        figure *speed = fig_new(key, label, "x");
        snprintf(key, sizeof key, "event_%s_%zub_1t_cpu_ns", mode, len);
        snprintf(label, sizeof label, "posix_trace_event %zu B, %s, 1 thread, thread CPU time", len, mode_label);
        figure *one_cpu = fig_new(key, label, CPU_NS);
        for (int r = 0; r < cfg.runs; r++) {
            double share;
            uint64_t t1 = record(s, 1, n, len, event_ids[p], &share, 0);
            fig_add(one, (double)t1 / (double)n, share);
            fig_add(one_cpu, (double)record_cpu_ns / (double)n, 0);
            if (s->fd < 0)
                must(posix_trace_clear(s->trid), "posix_trace_clear");
            uint64_t t2 = record(s, 2, n, len, event_ids[p], &share, 0);
            fig_add(two, (double)t2 / (double)n, share);
            fig_add(speed, (2.0 * (double)n / (double)t2) / ((double)n / (double)t1), 0);
            if (s->fd < 0)
                must(posix_trace_clear(s->trid), "posix_trace_clear");
        }
    }
}

static void measure_cheap(stream *s, const char *key, const char *label, enum job_kind kind)
{
    long long n = cfg.events;
    figure *f = fig_new(key, label, "ns");
    char cpu_key[64], cpu_label[128];
    snprintf(cpu_key, sizeof cpu_key, "%s_cpu", key);
    snprintf(cpu_label, sizeof cpu_label, "%s, thread CPU time", label);
    figure *cpu = fig_new(cpu_key, cpu_label, CPU_NS);
    run_on(1, (job){.kind = kind, .n = n / 10 + 1, .id = event_ids[0], .len = 16});
    for (int r = 0; r < cfg.runs; r++) {
        run_on(1, (job){.kind = kind, .n = n, .id = event_ids[0], .len = 16});
        fig_add(f, (double)span_ns(1) / (double)n, (double)workers[0].cpu_ns / (double)span_ns(1));
        fig_add(cpu, (double)workers[0].cpu_ns / (double)n, 0);
    }
    if (s)
        s->issued += (cfg.runs * n + n / 10 + 1);
}

/*
 * Events that record nothing, on s (a running LOOP stream without log, full:
 * any event recorded would overwrite one, which the check at the end sees):
 * filtered out, the stream stopped, then (s shut down) no stream at all;
 * each through <trace.h>'s inline test and as a call of the function.
 */
static void measure_nothing_recorded(stream *s)
{
    trace_event_set_t set;
    posix_trace_eventset_empty(&set);
    posix_trace_eventset_add(event_ids[0], &set);
    must(posix_trace_set_filter(s->trid, &set, POSIX_TRACE_SET_EVENTSET), "posix_trace_set_filter");
    uint64_t lost0 = stats_of(s).events_lost;
    measure_cheap(NULL, "event_filtered_ns", "posix_trace_event, event filtered out", JOB_EVENT);
    measure_cheap(NULL, "event_filtered_call_ns", "  the same, the function called (older <trace.h>)", JOB_EVENT_CALL);
    posix_trace_eventset_empty(&set);
    must(posix_trace_set_filter(s->trid, &set, POSIX_TRACE_SET_EVENTSET), "posix_trace_set_filter");
    must(posix_trace_stop(s->trid), "posix_trace_stop");
    measure_cheap(NULL, "event_stopped_ns", "posix_trace_event, stream stopped", JOB_EVENT);
    measure_cheap(NULL, "event_stopped_call_ns", "  the same, the function called (older <trace.h>)", JOB_EVENT_CALL);
    tracelog_trace_stats st = stats_of(s);
    /* Nothing was recorded: in a full LOOP stream, any recorded event would have overwritten one. */
    if (st.events_lost != lost0)
        check_failed("filtered or stopped events reached the stream (lost %llu -> %llu)",
                     (unsigned long long)lost0, (unsigned long long)st.events_lost);
    must(posix_trace_shutdown(s->trid), "posix_trace_shutdown");
    measure_cheap(NULL, "event_no_stream_ns", "posix_trace_event, no stream at all", JOB_EVENT);
    measure_cheap(NULL, "event_no_stream_call_ns", "  the same, the function called (older <trace.h>)", JOB_EVENT_CALL);
}

/* A full LOOP stream: every event first drops the oldest one. */
static void fill_loop(stream *s) { record(s, 1, (long long)(s->lane_bytes / rec_bytes(16)) + 1000, 16, event_ids[0], NULL, 0); }

/* --cheap: only the events that record nothing (and the baselines), quick enough to alternate with LTTng's. */
static void measure_cheap_only(void)
{
    stream s;
    stream_open(&s, 0, POSIX_TRACE_LOOP, cfg.stream_size, NULL);
    fill_loop(&s);
    measure_nothing_recorded(&s);
}

/*
 * --instructions N: N events of 16 B on one thread into a running LOOP
 * stream without log that never wraps, nothing else timed: for counting the
 * instructions of the recording path (valgrind --tool=callgrind, perf stat).
 */
static void count_instructions(long long n)
{
    stream s;
    size_t size = (size_t)(n + 1000) * rec_bytes(16) * 2;
    stream_open(&s, 0, POSIX_TRACE_LOOP, size < (1u << 20) ? 1u << 20 : size, NULL);
    double share;
    record(&s, 1, n, 16, event_ids[0], &share, 0);
    tracelog_trace_stats st = stats_of(&s);
    if (st.events_lost)
        check_failed("%llu events lost while counting instructions", (unsigned long long)st.events_lost);
    must(posix_trace_shutdown(s.trid), "posix_trace_shutdown");
}

/*
 * A typed event (tracelog_eventid_open_typed: its schema describes the 16 B
 * payload) against an untyped one of the same size, runs interleaved: the
 * schema is used only when the log's type table is written, so the two
 * should cost the same.
 */
static void measure_typed(stream *s)
{
    trace_event_id_t typed;
    must(tracelog_eventid_open_typed("bench_typed", "u32 len; u16 port; u16 flags; f64 latency", &typed),
         "tracelog_eventid_open_typed");
    long long n = fit_events(s, 16);
    figure *plain = fig_new("event_nolog_16b_untyped_1t_ns", "posix_trace_event 16 B, no log, untyped (same runs)", "ns");
    figure *with = fig_new("event_nolog_16b_typed_1t_ns", "posix_trace_event 16 B, no log, typed (4 fields)", "ns");
    for (int r = 0; r < cfg.runs; r++) {
        double share;
        uint64_t t = record(s, 1, n, 16, event_ids[0], &share, 0);
        fig_add(plain, (double)t / (double)n, share);
        must(posix_trace_clear(s->trid), "posix_trace_clear");
        t = record(s, 1, n, 16, typed, &share, 0);
        fig_add(with, (double)t / (double)n, share);
        must(posix_trace_clear(s->trid), "posix_trace_clear");
    }
}

static void measure_no_log(void)
{
    stream s;
    stream_open(&s, 0, POSIX_TRACE_LOOP, cfg.stream_size, NULL);
    warm(&s, 2);
    measure_recording(&s, "nolog", "no log");
    measure_typed(&s);

    fill_loop(&s);
    measure_cheap(&s, "event_loopfull_16b_1t_ns", "posix_trace_event 16 B, no log, LOOP full (overwrites)", JOB_EVENT);
    tracelog_trace_stats st = stats_of(&s);
    if (st.events_lost == 0)
        check_failed("a full LOOP stream reported no overwritten event");
    measure_nothing_recorded(&s);
}

/* Reads a log: events of type id, OVERFLOW markers, every event. */
typedef struct log_count {
    uint64_t mine, overflow, resume, total;
    int clean;
} log_count;

static int read_log(const char *path, const trace_event_id_t *ids, int nids, log_count *c)
{
    memset(c, 0, sizeof *c);
    tracelog_reader *r;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open_path(path, NULL, &r, &err);
    if (st != TRACELOG_OK) {
        check_failed("%s: cannot open the log: %s", path, err.message);
        return -1;
    }
    tracelog_event ev;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        c->total++;
        if (ev.event_id == POSIX_TRACE_OVERFLOW)
            c->overflow++;
        else if (ev.event_id == POSIX_TRACE_RESUME)
            c->resume++;
        for (int i = 0; i < nids; i++)
            if (ev.event_id == ids[i])
                c->mine++;
    }
    c->clean = tracelog_reader_problem_count(r) == 0;
    tracelog_reader_close(r);
    if (st != TRACELOG_END) {
        check_failed("%s: reading failed: %s", path, tracelog_strerror(st));
        return -1;
    }
    return 0;
}

/* Events read + lost == recorded, and loss is marked. */
static void check_log(stream *s, uint64_t lost, const char *what, log_count *c)
{
    if (read_log(s->path, event_ids, NPAYLOADS, c))
        return;
    if (!c->clean)
        check_failed("%s: the log has problems", what);
    if (c->mine + lost != (uint64_t)s->issued)
        check_failed("%s: %llu events read + %llu lost != %lld recorded", what, (unsigned long long)c->mine,
                     (unsigned long long)lost, s->issued);
    if (lost > 0 && c->overflow == 0)
        check_failed("%s: %llu events lost but no OVERFLOW marker in the log", what, (unsigned long long)lost);
    /* A loss at the very end of the run has its OVERFLOW but nothing after it to RESUME. */
    if (c->resume > c->overflow || c->overflow > c->resume + 1)
        check_failed("%s: %llu OVERFLOW markers but %llu RESUME", what, (unsigned long long)c->overflow,
                     (unsigned long long)c->resume);
}

/* Stops, flushes and shuts down a stream with log; returns the events it lost. */
static uint64_t finish_log(stream *s)
{
    must(posix_trace_stop(s->trid), "posix_trace_stop");
    must(posix_trace_flush(s->trid), "posix_trace_flush");
    uint64_t lost = stats_of(s).events_lost;
    must(posix_trace_shutdown(s->trid), "posix_trace_shutdown");
    close(s->fd);
    s->fd = -1;
    return lost;
}

static long long log_lost_in_cost_runs;

static void measure_with_log(void)
{
    stream s;
    stream_open(&s, 1, POSIX_TRACE_FLUSH, cfg.stream_size, "event_withlog.ptl");
    warm(&s, 2);
    measure_recording(&s, "log", "FLUSH + log");
    uint64_t lost = finish_log(&s);
    log_lost_in_cost_runs = (long long)lost;
    log_count c;
    check_log(&s, lost, "cost runs with log", &c);
    unlink(s.path);
}

/* ---- tight loop ------------------------------------------------------------------------- */

/*
 * Reads back the log of a tight-loop run: per worker thread, the payload's
 * sequence numbers (bu_gen_next) must lie in [first, first + n), strictly
 * increasing; what is missing must add up to `lost`; timestamps never go
 * back; OVERFLOW markers wherever events went missing. 1 if all holds.
 */
static int check_tight(const stream *s, int nthreads, const uint32_t *first, long long n, uint64_t lost, uint64_t t0,
                       uint64_t t1)
{
    tracelog_reader *r;
    tracelog_error err;
    if (tracelog_reader_open_path(s->path, NULL, &r, &err) != TRACELOG_OK) {
        check_failed("tight loop: cannot open the log: %s", err.message);
        return 0;
    }
    uint64_t count[2] = {0, 0}, overflow = 0, prev_ts = 0, bad = 0;
    uint32_t next[2] = {first[0], first[1]};
    tracelog_event ev;
    tracelog_status st;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        if (ev.event_id == POSIX_TRACE_OVERFLOW)
            overflow++; /* stamped with the first lost event's time: it may go back */
        if (ev.event_id != event_ids[0])
            continue;
        if (ev.timestamp_ns < prev_ts)
            bad++; /* the merged order is generation order */
        prev_ts = ev.timestamp_ns;
        int w = nthreads == 2 && ev.tid == (uint64_t)workers[1].th;
        uint32_t seq;
        memcpy(&seq, ev.payload, sizeof seq);
        if (ev.payload_len != 16 || (!w && ev.tid != (uint64_t)workers[0].th) || seq - first[w] >= (uint64_t)n ||
            seq - first[w] < next[w] - first[w] || ev.timestamp_ns < t0 || ev.timestamp_ns > t1)
            bad++; /* another thread's, repeated, out of order, out of range or stamped outside the run */
        else
            next[w] = seq + 1;
        count[w]++;
    }
    int clean = tracelog_reader_problem_count(r) == 0 && st == TRACELOG_END;
    tracelog_reader_close(r);
    uint64_t missing = 0;
    for (int w = 0; w < nthreads; w++)
        missing += (uint64_t)n - count[w];
    if (!clean || bad || missing != lost || (lost && !overflow)) {
        check_failed("tight loop, %d thread(s): %s, %llu bad events, %llu missing but %llu lost, %llu OVERFLOW",
                     nthreads, clean ? "log clean" : "log NOT clean", (unsigned long long)bad,
                     (unsigned long long)missing, (unsigned long long)lost, (unsigned long long)overflow);
        return 0;
    }
    return 1;
}

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t process_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * One run: nthreads record n events each, nothing waited for; the share
 * kept, in %. *consumer_ns: the CPU time of everything but the producers
 * (the flusher, and the final flush and close) per event kept: what the
 * consumer costs, which the load of other processes does not inflate.
 */
static double tight_run(int nthreads, long long n, int free_flusher, double *ns, double *share, double *consumer_ns)
{
    stream s;
    uint64_t cpu0 = process_cpu_ns();
    /* The flusher inherits the affinity of the thread that creates the stream (stream_open). */
    must(free_flusher ? bu_pin_either(cfg.cpu_a, cfg.cpu_b) : 0, "sched_setaffinity");
    stream_open(&s, 1, POSIX_TRACE_FLUSH, 0, "tight.ptl");
    must(bu_pin(cfg.cpu_b), "sched_setaffinity");
    uint32_t first[2] = {workers[0].gen.seq, workers[1].gen.seq};
    uint64_t t0 = realtime_ns() - 1000000000ull; /* margins: the stream's clock is CLOCK_MONOTONIC + an offset */
    run_on(nthreads, (job){.kind = JOB_EVENT, .n = n, .id = event_ids[0], .len = 16, .realistic = 1});
    *ns = (double)span_ns(nthreads) / (double)n;
    *share = 1.0;
    for (int i = 0; i < nthreads; i++) {
        double sh = (double)workers[i].cpu_ns / (double)(workers[i].t1 - workers[i].t0);
        *share = sh < *share ? sh : *share;
    }
    s.issued = n * nthreads;
    uint64_t lost = finish_log(&s);
    uint64_t producers = workers[0].cpu_ns + (nthreads == 2 ? workers[1].cpu_ns : 0);
    *consumer_ns = (double)(process_cpu_ns() - cpu0 - producers) / (double)((uint64_t)s.issued - lost);
    check_tight(&s, nthreads, first, n, lost, t0, realtime_ns() + 1000000000ull);
    unlink(s.path);
    return 100.0 * (double)(s.issued - (long long)lost) / (double)s.issued;
}

/* The figures of one thread count and flusher placement (free: "_free" in the keys). */
typedef struct tight_figures {
    figure *kept, *cost, *consumer;
} tight_figures;

static tight_figures tight_figures_new(int nthreads, int free_flusher)
{
    const char *k = free_flusher ? "_free" : "", *where = free_flusher ? "flusher on either CPU" : "flusher on CPU B";
    char key[64], label[128];
    tight_figures f;
    snprintf(key, sizeof key, "tight%s_16b_%dt_kept_pct", k, nthreads);
    snprintf(label, sizeof label, "tight loop, %d thread(s), FLUSH + log, default stream, %s: kept", nthreads, where);
    f.kept = fig_new(key, label, "%");
    snprintf(key, sizeof key, "tight%s_16b_%dt_ns", k, nthreads);
    snprintf(label, sizeof label, "tight loop, %d thread(s), FLUSH + log, %s: ns per event per thread", nthreads,
             where);
    f.cost = fig_new(key, label, "ns");
    snprintf(key, sizeof key, "tight%s_16b_%dt_consumer_cpu_ns", k, nthreads);
    snprintf(label, sizeof label, "tight loop, %d thread(s), %s: consumer CPU ns per event kept", nthreads, where);
    f.consumer = fig_new(key, label, "ns");
    return f;
}

/*
 * Each thread count with the flusher pinned to CPU B (beside producer B)
 * and with the flusher free to run on either CPU, as in a program that pins
 * nothing; the two placements alternate run by run.
 */
static void measure_tight(void)
{
    long long n = cfg.tight_events;
    for (int t = 1; t <= 2; t++) {
        tight_figures f[2] = {tight_figures_new(t, 0), tight_figures_new(t, 1)};
        for (int r = 0; r < cfg.runs; r++) {
            for (int free_flusher = 0; free_flusher < 2; free_flusher++) {
                double ns, share, cns;
                fig_add(f[free_flusher].kept, tight_run(t, n, free_flusher, &ns, &share, &cns), 0);
                fig_add(f[free_flusher].cost, ns, share);
                fig_add(f[free_flusher].consumer, cns, 0);
            }
        }
    }
}

/* ---- sustained rate ---------------------------------------------------------------------- */

typedef struct step {
    double target, achieved; /* M events/s */
    long long issued;
    uint64_t lost;
    double fraction_lost, bytes_per_s, bytes_per_event, cpu_share;
    uint64_t overflow_markers;
} step;

static step steps[MAX_RATES];
static int nsteps;

static off_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) ? 0 : st.st_size;
}

static void sustained_step(double rate_m)
{
    step *st = &steps[nsteps++];
    memset(st, 0, sizeof *st);
    st->target = rate_m;
    stream s;
    stream_open(&s, 1, POSIX_TRACE_FLUSH, cfg.stream_size, "sustained.ptl");
    warm(&s, 1);
    must(posix_trace_flush(s.trid), "posix_trace_flush");
    uint64_t lost0 = stats_of(&s).events_lost;
    off_t size0 = file_size(s.fd);
    job j = {.kind = JOB_PACED, .id = event_ids[0], .len = 16, .rate_per_ns = rate_m * 1e6 / 1e9,
             .duration_ns = (uint64_t)(cfg.seconds * 1e9)};
    run_on(1, j);
    uint64_t elapsed = span_ns(1);
    st->issued = workers[0].done;
    s.issued += workers[0].done;
    st->cpu_share = (double)workers[0].cpu_ns / (double)elapsed;
    uint64_t lost = finish_log(&s);
    st->lost = lost - lost0;
    st->achieved = (double)st->issued / (double)elapsed * 1e3;
    st->fraction_lost = (double)st->lost / (double)st->issued;
    off_t size1;
    {
        struct stat sb;
        size1 = stat(s.path, &sb) ? 0 : sb.st_size;
    }
    st->bytes_per_s = (double)(size1 - size0) / ((double)elapsed / 1e9);
    st->bytes_per_event = (double)(size1 - size0) / (double)(st->issued - (long long)st->lost);
    log_count c;
    check_log(&s, lost, "sustained run", &c);
    st->overflow_markers = c.overflow;
    unlink(s.path);
    printf("  %5.1f M ev/s target: %6.2f M ev/s achieved, %11llu events, lost %10llu (%6.3f %%), "
           "%6.1f MB/s to disk, %5.2f B/event, %llu OVERFLOW, cpu %3.0f %%\n",
           st->target, st->achieved, (unsigned long long)st->issued, (unsigned long long)st->lost,
           100 * st->fraction_lost, st->bytes_per_s / 1e6, st->bytes_per_event,
           (unsigned long long)st->overflow_markers, 100 * st->cpu_share);
    fflush(stdout);
}

static double max_zero_loss(void)
{
    double best = 0;
    for (int i = 0; i < nsteps; i++)
        if (steps[i].lost == 0 && steps[i].achieved >= 0.98 * steps[i].target && steps[i].target > best)
            best = steps[i].target;
    return best;
}

/* ---- output ----------------------------------------------------------------------------- */

static void print_table(void)
{
    double clk = med("clock_gettime_realtime_ns"), clk_cpu = med("clock_gettime_realtime_cpu_ns");
    printf("\n%-72s %9s  %-19s %6s  %s\n", "figure", "median", "min-max", "cpu", "x clock_gettime");
    for (int i = 0; i < nfigs; i++) {
        figure *f = &figs[i];
        bu_summary s = bu_summarize(f->v, f->n);
        char range[40];
        snprintf(range, sizeof range, "%.2f-%.2f", s.min, s.max);
        printf("%-72s %7.2f %-2s %-18s ", f->label, s.median, strcmp(f->unit, CPU_NS) ? f->unit : "ns", range);
        if (!strcmp(f->unit, "ns"))
            printf("%5.0f%%  %.2f\n", 100 * f->cpu_share, clk > 0 ? s.median / clk : 0);
        else if (!strcmp(f->unit, CPU_NS)) /* against clock_gettime's CPU time */
            printf("%6s  %.2f\n", "", clk_cpu > 0 ? s.median / clk_cpu : 0);
        else
            printf("\n");
    }
    printf("\n%-60s %12s %18s  %s\n", "target", "value", "bound", "");
    for (int i = 0; i < ntargets; i++) {
        target *t = &targets[i];
        printf("%-60s %9.2f %-3s %17s  %s\n", t->what, t->value, t->unit, t->bound_text, met(t) ? "met" : "MISSED");
    }
}

static void write_json(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench_event: %s: %s\n", path, strerror(errno));
        failures++;
        return;
    }
    double load[3] = {0, 0, 0};
    getloadavg(load, 3);
    fprintf(f, "{\n  \"benchmark\": \"event\",\n  \"smoke\": %s,\n", cfg.smoke ? "true" : "false");
    fprintf(f, "  \"config\": {\"runs\": %d, \"events_per_run\": %lld, \"stream_bytes\": %zu, "
               "\"cpus\": [%d, %d], \"sustained_seconds\": %.3f, \"load_average_1min\": %.2f},\n",
            cfg.runs, cfg.events, cfg.stream_size, cfg.cpu_a, cfg.cpu_b, cfg.seconds, load[0]);
    fprintf(f, "  \"figures\": {\n");
    for (int i = 0; i < nfigs; i++) {
        figure *g = &figs[i];
        bu_summary s = bu_summarize(g->v, g->n);
        fprintf(f, "    \"%s\": {\"label\": \"%s\", \"unit\": \"%s\", \"median\": %.4f, \"min\": %.4f, \"max\": %.4f, "
                   "\"cpu_share_min\": %.3f, \"runs\": [",
                g->key, g->label, g->unit, s.median, s.min, s.max, g->cpu_share);
        for (int k = 0; k < g->n; k++)
            fprintf(f, "%s%.4f", k ? ", " : "", g->v[k]);
        fprintf(f, "]}%s\n", i + 1 < nfigs ? "," : "");
    }
    fprintf(f, "  },\n  \"events_lost_in_log_cost_runs\": %lld,\n", log_lost_in_cost_runs);
    fprintf(f, "  \"sustained\": {\"stream_bytes\": %zu, \"seconds\": %.3f, \"payload\": 16, "
               "\"max_zero_loss_mev_s\": %.2f, \"steps\": [\n",
            cfg.stream_size, cfg.seconds, max_zero_loss());
    for (int i = 0; i < nsteps; i++) {
        step *s = &steps[i];
        fprintf(f, "    {\"target_mev_s\": %.2f, \"achieved_mev_s\": %.4f, \"events\": %lld, \"lost\": %llu, "
                   "\"fraction_lost\": %.6f, \"bytes_per_s\": %.0f, \"bytes_per_event\": %.3f, "
                   "\"overflow_markers\": %llu, \"cpu_share\": %.3f}%s\n",
                s->target, s->achieved, s->issued, (unsigned long long)s->lost, s->fraction_lost, s->bytes_per_s,
                s->bytes_per_event, (unsigned long long)s->overflow_markers, s->cpu_share, i + 1 < nsteps ? "," : "");
    }
    fprintf(f, "  ]},\n  \"targets\": [\n");
    for (int i = 0; i < ntargets; i++) {
        target *t = &targets[i];
        fprintf(f, "    {\"what\": \"%s\", \"value\": %.4f, \"unit\": \"%s\", \"bound\": %.4f, \"at_most\": %s, "
                   "\"met\": %s}%s\n",
                t->what, t->value, t->unit, t->bound, t->at_most ? "true" : "false", met(t) ? "true" : "false",
                i + 1 < ntargets ? "," : "");
    }
    fprintf(f, "  ],\n  \"self_check_failures\": %d\n}\n", failures);
    if (fclose(f)) {
        fprintf(stderr, "bench_event: %s: %s\n", path, strerror(errno));
        failures++;
    }
}

static void set_cost_targets(void)
{
    double clk = med("clock_gettime_realtime_ns");
    char b[64];
    snprintf(b, sizeof b, "<= %.2f ns (2x clock)", 2 * clk);
    add_target("posix_trace_event 16 B, log, 1 thread", med("event_log_16b_1t_ns"), 1, 2 * clk, "ns", b);
    add_target("posix_trace_event 16 B, no log, 1 thread", med("event_nolog_16b_1t_ns"), 1, 2 * clk, "ns", b);
    add_target("filtered-out event", med("event_filtered_ns"), 1, 3, "ns", "< 3 ns");
    add_target("event on a stopped stream", med("event_stopped_ns"), 1, 3, "ns", "< 3 ns");
    add_target("2 threads / 1 thread, 16 B, no log", med("event_nolog_16b_2t_speedup"), 0, 1.6, "x", ">= 1.6x");
    add_target("2 threads / 1 thread, 16 B, log", med("event_log_16b_2t_speedup"), 0, 1.7, "x", ">= 1.7x");
}

static void set_targets(void)
{
    if (cfg.cost)
        set_cost_targets();
    if (cfg.tight) {
        add_target("tight loop, 1 thread, FLUSH + log: events kept", med("tight_16b_1t_kept_pct"), 0, 99, "%", ">= 99 %");
        add_target("tight loop, 2 threads, FLUSH + log: events kept", med("tight_16b_2t_kept_pct"), 0, 99, "%", ">= 99 %");
        add_target("tight loop, 1 thread, flusher free: events kept", med("tight_free_16b_1t_kept_pct"), 0, 99, "%",
                   ">= 99 %");
        add_target("tight loop, 2 threads, flusher free: events kept", med("tight_free_16b_2t_kept_pct"), 0, 99, "%",
                   ">= 99 %");
    }
    if (nsteps) {
        char b[64];
        snprintf(b, sizeof b, ">= 10 M/s (%.1f s)", cfg.seconds);
        add_target("FLUSH zero-loss sustained rate (M events/s)", max_zero_loss(), 0, 10, "M/s", b);
    }
}

/* ---- generate ----------------------------------------------------------------------------- */

static int generate(void)
{
    stream s;
    memset(&s, 0, sizeof s);
    s.fd = open(cfg.out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (s.fd < 0)
        die(cfg.out, errno);
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "bench_read");
    posix_trace_attr_setmaxdatasize(&attr, 256);
    posix_trace_attr_setstreamsize(&attr, cfg.stream_size);
    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
    must(posix_trace_create_withlog(0, &attr, s.fd, &s.trid), "posix_trace_create_withlog");
    snprintf(s.path, sizeof s.path, "%s", cfg.out);
    s.lane_bytes = 4096;
    while (s.lane_bytes < cfg.stream_size)
        s.lane_bytes *= 2;
    trace_event_id_t id;
    must(posix_trace_eventid_open("bench_event", &id), "posix_trace_eventid_open");
    must(posix_trace_start(s.trid), "posix_trace_start");
    uint64_t t0 = bu_now_ns();
    record(&s, 1, cfg.generate, cfg.payload, id, NULL, 1);
    uint64_t lost = finish_log(&s);
    double secs = (double)(bu_now_ns() - t0) / 1e9;
    struct stat sb;
    off_t size = stat(cfg.out, &sb) ? 0 : sb.st_size;
    printf("generated %lld events of %zu bytes in %s: %lld bytes (%.2f B/event), %.2f s, %llu lost\n", cfg.generate,
           cfg.payload, cfg.out, (long long)size, (double)size / (double)cfg.generate, secs,
           (unsigned long long)lost);
    if (lost)
        check_failed("%llu events lost while generating", (unsigned long long)lost);
    return failures ? 1 : 0;
}

/* ---- main ----------------------------------------------------------------------------------- */

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_event [--smoke] [--runs N] [--events N] [--stream-mib N] [--seconds S]\n"
               "                   [--rates R1,R2,...] [--no-sustained] [--no-cost] [--tight-events N] [--no-tight]\n"
               "                   [--dir DIR] [--json FILE]\n"
               "       bench_event --cheap [--runs N] [--events N] [--json FILE]\n"
               "       bench_event --instructions N\n"
               "       bench_event --generate N --out FILE.ptl [--payload BYTES]\n");
}

static int parse_rates(const char *s)
{
    cfg.nrates = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *end;
        double v = strtod(tok, &end);
        if (*end || v <= 0 || cfg.nrates == MAX_RATES)
            return -1;
        cfg.rates[cfg.nrates++] = v;
    }
    return cfg.nrates ? 0 : -1;
}

static int parse_args(int argc, char **argv)
{
    cfg.runs = 5;
    cfg.events = 1000000;
    cfg.stream_size = 64u << 20;
    cfg.seconds = 10;
    cfg.sustained = 1;
    cfg.cost = 1;
    cfg.tight = 1;
    cfg.tight_events = 5000000;
    cfg.dir = "/tmp";
    cfg.payload = 16;
    parse_rates("2,4,6,8,10,12,15,20");
    int explicit_events = 0, explicit_tight = 0, explicit_stream = 0, explicit_seconds = 0, explicit_rates = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--smoke")) {
            cfg.smoke = 1;
            continue;
        }
        if (!strcmp(a, "--no-sustained")) {
            cfg.sustained = 0;
            continue;
        }
        if (!strcmp(a, "--no-tight")) {
            cfg.tight = 0;
            continue;
        }
        if (!strcmp(a, "--no-cost")) {
            cfg.cost = 0;
            continue;
        }
        if (!strcmp(a, "--cheap")) {
            cfg.cheap = 1;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            exit(0);
        }
        if (!v) {
            fprintf(stderr, "bench_event: unknown option or missing value: %s\n", a);
            return -1;
        }
        i++;
        long long n = bu_parse_count(v);
        if (!strcmp(a, "--runs") && n >= 1 && n <= MAX_RUNS)
            cfg.runs = (int)n;
        else if (!strcmp(a, "--events") && n >= 100)
            cfg.events = n, explicit_events = 1;
        else if (!strcmp(a, "--tight-events") && n >= 100)
            cfg.tight_events = n, explicit_tight = 1;
        else if (!strcmp(a, "--stream-mib") && n >= 1 && n <= 4096)
            cfg.stream_size = (size_t)n << 20, explicit_stream = 1;
        else if (!strcmp(a, "--seconds") && strtod(v, NULL) > 0)
            cfg.seconds = strtod(v, NULL), explicit_seconds = 1;
        else if (!strcmp(a, "--rates") && parse_rates(v) == 0)
            explicit_rates = 1;
        else if (!strcmp(a, "--dir"))
            cfg.dir = v;
        else if (!strcmp(a, "--json"))
            cfg.json = v;
        else if (!strcmp(a, "--instructions") && n >= 1)
            cfg.instructions = n;
        else if (!strcmp(a, "--generate") && n >= 1)
            cfg.generate = n;
        else if (!strcmp(a, "--out"))
            cfg.out = v;
        else if (!strcmp(a, "--payload") && n >= 0 && n <= 256)
            cfg.payload = (size_t)n;
        else {
            fprintf(stderr, "bench_event: bad option: %s %s\n", a, v);
            return -1;
        }
    }
    if (cfg.smoke) {
        if (!explicit_events)
            cfg.events = 20000;
        if (!explicit_stream)
            cfg.stream_size = 2u << 20;
        if (!explicit_tight)
            cfg.tight_events = 50000;
        if (!explicit_seconds)
            cfg.seconds = 0.2;
        if (!explicit_rates)
            parse_rates("1,4");
    }
    if (cfg.generate && !cfg.out) {
        fprintf(stderr, "bench_event: --generate needs --out\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv)) {
        usage(stderr);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    cfg.ncpus = bu_two_cpus(&cfg.cpu_a, &cfg.cpu_b);
    int e = bu_pin(cfg.cpu_b); /* the main thread, and so the flushers it starts, on CPU B */
    if (e)
        die("sched_setaffinity", e);
    for (int p = 0; p < NPAYLOADS; p++) {
        char name[32];
        snprintf(name, sizeof name, "bench_p%zu", payloads[p]);
        must(posix_trace_eventid_open(name, &event_ids[p]), "posix_trace_eventid_open");
    }
    start_workers();
    if (cfg.generate) {
        int rc = generate();
        stop_workers();
        return rc;
    }
    if (cfg.instructions) {
        count_instructions(cfg.instructions);
        stop_workers();
        return failures ? 1 : 0;
    }
    if (cfg.ncpus < 2)
        printf("warning: only one CPU allowed: the 2-thread figures share it\n");
    printf("bench_event: %d runs, %lld events per thread per run, %zu MiB streams, producer CPU %d, "
           "second producer and flusher CPU %d\n",
           cfg.runs, cfg.events, cfg.stream_size >> 20, cfg.cpu_a, cfg.cpu_b);

    measure_baselines(); /* always: the targets are relative to clock_gettime */
    if (cfg.cheap) {
        measure_cheap_only();
        cfg.cost = cfg.tight = cfg.sustained = 0;
    } else if (cfg.cost) {
        measure_no_log();
        measure_with_log();
    }
    if (cfg.tight)
        measure_tight();
    if (cfg.sustained) {
        printf("\nFLUSH sustained rate: one producer paced for %.1f s, %zu MiB stream, APPEND log, 16 B payload\n",
               cfg.seconds, cfg.stream_size >> 20);
        for (int i = 0; i < cfg.nrates; i++)
            sustained_step(cfg.rates[i]);
    }
    stop_workers();
    set_targets();
    print_table();
    if (cfg.json)
        write_json(cfg.json);
    if (failures)
        fprintf(stderr, "bench_event: %d self-check(s) failed\n", failures);
    return failures ? 1 : 0;
}
