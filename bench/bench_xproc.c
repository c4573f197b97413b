/*
 * bench_xproc: tracing another process (issue 12; bench/README.md, "Tracing
 * another process"). Its figures, each next to its in-process
 * counterpart measured in the same run:
 *
 *   cost    ns per posix_trace_event (16 B) in a traced child, into a LOOP
 *           stream its controller (this process) made for it, vs into a
 *           stream the child made itself. The two streams exist together
 *           and take turns: the one not measured is stopped, so both
 *           figures include the same check of one stopped stream.
 *   rate    the FLUSH zero-loss sustained rate with an APPEND log written
 *           by the controller's flusher (another process) vs by the
 *           child's own flusher thread.
 *   bursts  ns per posix_trace_event (16 B) while 1 and 2 threads of the
 *           child (pinned to the last two CPUs) record bursts into a FLUSH
 *           stream with an APPEND log, each burst under a quarter of a lane
 *           and followed by a pause longer than the flush interval: the
 *           flusher drains in the pauses, the controller's (this process)
 *           vs the child's own. Each thread first writes its lane over once
 *           (untimed); the median over the bursts after the first.
 *   tight   ns per posix_trace_event (16 B) per thread while 1 and 2 threads
 *           of the child (pinned) record --tight-events each as fast as they
 *           can into a FLUSH stream with an APPEND log that waits for room
 *           (1 s), so that nothing is lost and the flusher sets the pace:
 *           the controller's flusher vs the child's own (issue 11, a
 *           flusher per group of lanes); median of --runs (at most 5).
 *   attach  posix_trace_create(pid) + start, until the controller reads
 *           the first event of a child that records all the time. Measured
 *           first, so the first attach is this process's first stream
 *           creation and pays what only the first one pays (the TSC
 *           clock's calibration, stream/clock.c): reported on its own.
 *   recorded  the recorded path (issue 27): `ptlog record` (its defaults,
 *           or --ptlog-arg ones) of this program run as a traced program
 *           (--produce) whose 2 threads record a total rate, paced, for
 *           --recorded-seconds, while one CPU-bound process (a busy child of
 *           this one) competes; next to the same program recording into its
 *           own FLUSH stream with an APPEND log (producers wait for room).
 *           Per rate (--recorded-rates) and run (--recorded-runs, the two
 *           alternating): events lost, the rate achieved, the median cost of
 *           posix_trace_event in the program, ptlog's CPU per event. The
 *           zero-loss rate: the highest rate that, with every one below it,
 *           lost nothing in any run. Measured last, and alone with
 *           --only-recorded.
 *
 *   bench_xproc [--smoke] [--runs N] [--events N] [--tight-events N] [--seconds S]
 *               [--rates 1,2,4] [--dir DIR] [--json FILE]
 *               [--recorded-rates 2,5,10] [--recorded-seconds S] [--recorded-runs N]
 *               [--ptlog PATH] [--ptlog-arg ARG]... [--no-competitor] [--no-in-process]
 *               [--only-recorded | --no-recorded]
 *
 * Exit 1 when a call fails or a self-check fails (every sustained step and
 * every burst and tight run: events in the log == events recorded - events
 * lost; every recorded run: each thread's events in the log in order, none
 * repeated, each stamped within its group's time and after its thread's last
 * one, and the sequence numbers missing == the log's stream overruns).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <trace.h>
#include <tracelog/posix.h>
#include <tracelog/reader.h>
#include <unistd.h>

#include "bench_util.h"

#define MAX_RUNS 64
#define MAX_RATES 16
#define STREAM_SIZE (64u << 20)
#define PAYLOAD 16

#define BURSTS 8

static int runs = 7, attaches = 15;
static long long burst_events = 250000; /* 16 MB of 64-byte records: just under a quarter of a lane */
static unsigned burst_gap_us = 150000;  /* longer than the default 100 ms flush interval */
static long long events = 500000;
static long long tight_events = 5000000;
static double seconds = 2;
static double rates[MAX_RATES] = {2, 3, 4, 5, 6, 8};
static int nrates = 6;
static const char *dir = "/tmp";
static const char *json;
static int failures;

static void fail(const char *what, int e)
{
    fprintf(stderr, "bench_xproc: %s: %s\n", what, e ? strerror(e) : "failed");
    failures++;
}

static void must(int e, const char *what)
{
    if (e) {
        fprintf(stderr, "bench_xproc: %s: %s\n", what, strerror(e));
        exit(1);
    }
}

/* ---- the two processes talk over two pipes: one command byte, then a u64 or a double ---- */

typedef struct chan {
    int to_child, from_child;  /* the controller's ends */
    int to_parent, from_parent; /* the child's ends */
} chan;

static void put(int fd, const void *p, size_t n)
{
    if (write(fd, p, n) != (ssize_t)n)
        _exit(90);
}

static void get(int fd, void *p, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r <= 0)
            _exit(91); /* the other side is gone: nothing left to measure */
        got += (size_t)r;
    }
}

static void say(int fd, char c) { put(fd, &c, 1); }

static char hear(int fd)
{
    char c;
    get(fd, &c, 1);
    return c;
}

/* The child asks the controller something and waits for its answer. */
static void ask(const chan *l, char c)
{
    say(l->to_parent, c);
    hear(l->from_parent);
}

static pid_t start_child(chan *l, void (*body)(const chan *))
{
    int down[2], up[2];
    if (pipe(down) || pipe(up))
        must(errno, "pipe");
    pid_t pid = fork();
    if (pid < 0)
        must(errno, "fork");
    if (pid == 0) {
        close(down[1]), close(up[0]);
        l->from_parent = down[0];
        l->to_parent = up[1];
        body(l);
        _exit(0);
    }
    close(down[0]), close(up[1]);
    l->to_child = down[1];
    l->from_child = up[0];
    return pid;
}

static int end_child(chan *l, pid_t pid)
{
    close(l->to_child);
    close(l->from_child);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void attr_of(trace_attr_t *a, int policy, size_t size)
{
    posix_trace_attr_init(a);
    posix_trace_attr_setstreamfullpolicy(a, policy);
    posix_trace_attr_setstreamsize(a, size);
    posix_trace_attr_setmaxdatasize(a, 64);
}

/* ---- cost: the child measures, the controller starts and stops its stream ---- */

static trace_event_id_t bench_id(void)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("bench:xproc", &id))
        _exit(92);
    return id;
}

static double timed_events(trace_event_id_t id, const bu_payload *table, long long n)
{
    uint64_t t0 = bu_now_ns();
    for (long long i = 0; i < n; i++)
        posix_trace_event(id, table[i & (BU_TABLE_SIZE - 1)], PAYLOAD);
    return (double)(bu_now_ns() - t0) / (double)n;
}

/*
 * The child: its own stream and the controller's take turns. Commands to
 * the controller: 'S' start yours, 'T' stop and clear yours (it answers
 * 'k'). Sends 2 * runs doubles: own, controller's, run by run.
 */
static void cost_child(const chan *l)
{
    trace_event_id_t id = bench_id();
    bu_payload *table = bu_table_new(7);
    if (!table)
        _exit(93);
    trace_attr_t a;
    attr_of(&a, POSIX_TRACE_LOOP, STREAM_SIZE);
    trace_id_t own;
    if (posix_trace_create(0, &a, &own))
        _exit(94);
    say(l->to_parent, 'r'); /* instrumented: the controller may create its stream now */
    if (hear(l->from_parent) != 'c')
        _exit(95);
    /* One lap and 10 % into each (64-byte records): first-touch page faults are not recording cost. */
    long long lap = STREAM_SIZE / 64 + STREAM_SIZE / 640;
    posix_trace_start(own);
    timed_events(id, table, lap);
    posix_trace_stop(own);
    posix_trace_clear(own);
    ask(l, 'S');
    timed_events(id, table, lap);
    ask(l, 'T');
    for (int r = 0; r < runs; r++) {
        posix_trace_start(own);
        double mine = timed_events(id, table, events);
        posix_trace_stop(own);
        posix_trace_clear(own);
        ask(l, 'S');
        double theirs = timed_events(id, table, events);
        ask(l, 'T');
        put(l->to_parent, &mine, sizeof mine);
        put(l->to_parent, &theirs, sizeof theirs);
    }
    say(l->to_parent, 'q');
    posix_trace_shutdown(own);
    free(table);
}

static bu_summary cost_in, cost_x;

static void measure_cost(void)
{
    chan l;
    pid_t pid = start_child(&l, cost_child);
    double in[MAX_RUNS], x[MAX_RUNS];
    if (hear(l.from_child) != 'r')
        must(EPROTO, "cost child");
    trace_attr_t a;
    attr_of(&a, POSIX_TRACE_LOOP, STREAM_SIZE);
    trace_id_t t;
    must(posix_trace_create(pid, &a, &t), "posix_trace_create(child)");
    say(l.to_child, 'c');
    int stops = 0;
    for (char c; (c = hear(l.from_child)) != 'q';) {
        if (c == 'S') {
            must(posix_trace_start(t), "start");
        } else if (c == 'T') {
            must(posix_trace_stop(t), "stop");
            must(posix_trace_clear(t), "clear");
        }
        say(l.to_child, 'k');
        if (c == 'T' && stops++ > 0 && stops - 2 < MAX_RUNS) { /* a run's two figures (the first 'T' ends the warm-up) */
            get(l.from_child, &in[stops - 2], sizeof in[0]);
            get(l.from_child, &x[stops - 2], sizeof x[0]);
        }
    }
    tracelog_trace_stats st;
    must(tracelog_trace_get_stats(t, &st), "stats");
    must(posix_trace_shutdown(t), "shutdown");
    if (end_child(&l, pid) != 0)
        fail("cost child", 0);
    if (st.events_lost == 0)
        fail("the controller's LOOP stream reports no overwritten events after the warm-up lap", 0);
    cost_in = bu_summarize(in, stops - 1);
    cost_x = bu_summarize(x, stops - 1);
}

/* ---- rate: one paced producer in the child, the log written here or there ---- */

typedef struct step {
    double offered, in_rate, x_rate;
    uint64_t in_lost, x_lost, in_n, x_n;
} step;

static step steps[MAX_RATES];

static uint64_t paced(trace_event_id_t id, double rate_m, double secs, double *achieved)
{
    bu_gen g;
    bu_gen_init(&g, 11);
    uint64_t n = (uint64_t)(rate_m * 1e6 * secs), t0 = bu_now_ns();
    double per_ns = rate_m / 1000.0;
    for (uint64_t i = 0; i < n; i++) {
        if (i % BU_PACE_GROUP == 0)
            bu_pace(t0, i, per_ns);
        posix_trace_event(id, bu_gen_next(&g, PAYLOAD), PAYLOAD);
    }
    *achieved = (double)n / (double)(bu_now_ns() - t0) * 1e3;
    return n;
}

static int scratch(const char *what)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/bench_xproc_%s_%d.ptl", dir, what, (int)getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        must(errno, path);
    unlink(path);
    return fd;
}

/* Events in a log: the self-check's count (the log read back with the native reader). */
static uint64_t events_in_log(int fd, trace_event_id_t id)
{
    tracelog_reader *r;
    tracelog_error err;
    if (tracelog_reader_open(fd, NULL, &r, &err) != TRACELOG_OK)
        return UINT64_MAX;
    uint64_t n = 0;
    tracelog_event ev;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
        n += ev.event_id == (uint32_t)id;
    tracelog_reader_close(r);
    return n;
}

/* Events in the log + events lost == events recorded, for the run `what`. */
static void check_counts(const char *what, uint64_t n, uint64_t lost, uint64_t in_log)
{
    if (in_log + lost != n) {
        fprintf(stderr, "bench_xproc: %s: %llu in the log + %llu lost != %llu recorded\n", what,
                (unsigned long long)in_log, (unsigned long long)lost, (unsigned long long)n);
        failures++;
    }
}

static void check_step(const char *who, double rate, uint64_t n, uint64_t lost, uint64_t in_log)
{
    char what[64];
    snprintf(what, sizeof what, "%s at %.1f M/s", who, rate);
    check_counts(what, n, lost, in_log);
}

/* The stream of the tight loop waits this long for room (the most a FLUSH stream may wait). */
#define TIGHT_WAIT_US 1000000u

/* The child's own FLUSH stream with an APPEND log, started; *fd gets the log. wait_us: 0 keeps the default. */
static trace_id_t own_stream_start(const char *what, int *fd, unsigned wait_us)
{
    trace_attr_t a;
    attr_of(&a, POSIX_TRACE_FLUSH, STREAM_SIZE);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    if (wait_us)
        tracelog_trace_attr_setflushwait(&a, wait_us);
    *fd = scratch(what);
    trace_id_t t;
    if (posix_trace_create_withlog(0, &a, *fd, &t) || posix_trace_start(t))
        _exit(96);
    return t;
}

/* Stops and shuts it down: what it lost, and the events of id its log holds. */
static void own_stream_end(trace_id_t t, int fd, trace_event_id_t id, uint64_t *lost, uint64_t *in_log)
{
    tracelog_trace_stats st;
    tracelog_trace_get_stats(t, &st);
    posix_trace_stop(t);
    if (posix_trace_shutdown(t))
        _exit(97);
    *lost = st.events_lost;
    *in_log = events_in_log(fd, id);
    close(fd);
}

/* The controller's FLUSH stream with an APPEND log for the child, started; *fd the log, *id the child's id. */
static trace_id_t controller_stream_start(pid_t pid, const char *what, int *fd, trace_event_id_t *id,
                                          unsigned wait_us)
{
    trace_attr_t a;
    attr_of(&a, POSIX_TRACE_FLUSH, STREAM_SIZE);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    if (wait_us)
        tracelog_trace_attr_setflushwait(&a, wait_us);
    *fd = scratch(what);
    trace_id_t t;
    must(posix_trace_create_withlog(pid, &a, *fd, &t), "create_withlog(child)");
    must(posix_trace_trid_eventid_open(t, "bench:xproc", id), "trid_eventid_open"); /* the child's id */
    must(posix_trace_start(t), "start");
    return t;
}

/* Flushes, stops and shuts it down: what it lost, and the events of id its log holds. */
static void controller_stream_end(trace_id_t t, int fd, trace_event_id_t id, uint64_t *lost, uint64_t *in_log)
{
    must(posix_trace_flush(t), "flush");
    tracelog_trace_stats st;
    must(tracelog_trace_get_stats(t, &st), "stats");
    must(posix_trace_stop(t), "stop");
    must(posix_trace_shutdown(t), "shutdown");
    *lost = st.events_lost;
    *in_log = events_in_log(fd, id);
    close(fd);
}

/* Per step: 'i' the child records into its own stream with log, 'x' into the controller's. */
static void rate_child(const chan *l)
{
    trace_event_id_t id = bench_id();
    say(l->to_parent, 'r');
    for (char c; (c = hear(l->from_parent)) != 'q';) {
        double rate, achieved;
        get(l->from_parent, &rate, sizeof rate);
        uint64_t n, lost = 0, in_log = 0;
        if (c == 'i') {
            int fd;
            trace_id_t t = own_stream_start("in", &fd, 0);
            n = paced(id, rate, seconds, &achieved);
            own_stream_end(t, fd, id, &lost, &in_log);
        } else {
            say(l->to_parent, 'g'); /* the controller's stream is started: go */
            hear(l->from_parent);
            n = paced(id, rate, seconds, &achieved);
        }
        put(l->to_parent, &n, sizeof n);
        put(l->to_parent, &achieved, sizeof achieved);
        put(l->to_parent, &lost, sizeof lost);
        put(l->to_parent, &in_log, sizeof in_log);
    }
}

static void rate_step(chan *l, pid_t pid, step *s)
{
    double rate = s->offered, achieved;
    uint64_t n, lost, in_log;
    say(l->to_child, 'i');
    put(l->to_child, &rate, sizeof rate);
    get(l->from_child, &n, sizeof n);
    get(l->from_child, &achieved, sizeof achieved);
    get(l->from_child, &lost, sizeof lost);
    get(l->from_child, &in_log, sizeof in_log);
    check_step("in-process", rate, n, lost, in_log);
    s->in_n = n, s->in_rate = achieved, s->in_lost = lost;

    int fd;
    trace_event_id_t id;
    trace_id_t t = controller_stream_start(pid, "x", &fd, &id, 0);
    say(l->to_child, 'x');
    put(l->to_child, &rate, sizeof rate);
    if (hear(l->from_child) != 'g')
        must(EPROTO, "rate child");
    say(l->to_child, 'k');
    get(l->from_child, &n, sizeof n);
    get(l->from_child, &achieved, sizeof achieved);
    get(l->from_child, &lost, sizeof lost);
    get(l->from_child, &in_log, sizeof in_log);
    controller_stream_end(t, fd, id, &lost, &in_log);
    s->x_n = n, s->x_rate = achieved, s->x_lost = lost;
    check_step("controller", rate, n, lost, in_log);
}

static double zero_loss(int controller)
{
    double best = 0;
    for (int i = 0; i < nrates; i++) {
        const step *s = &steps[i];
        uint64_t lost = controller ? s->x_lost : s->in_lost;
        double got = controller ? s->x_rate : s->in_rate;
        if (lost == 0 && got >= 0.98 * s->offered && s->offered > best)
            best = s->offered;
    }
    return best;
}

static void measure_rate(void)
{
    chan l;
    pid_t pid = start_child(&l, rate_child);
    if (hear(l.from_child) != 'r')
        must(EPROTO, "rate child");
    for (int i = 0; i < nrates; i++) {
        steps[i].offered = rates[i];
        rate_step(&l, pid, &steps[i]);
    }
    say(l.to_child, 'q');
    if (end_child(&l, pid) != 0)
        fail("rate child", 0);
}

/* ---- bursts: threads record bursts that the flusher drains in the pauses ---- */

/*
 * A thread of the child: pinned, it records bursts (each timed, paused in
 * between) or, tight, one run of tight_events.
 */
typedef struct recorder {
    trace_event_id_t id;
    int cpu, tight;
    pthread_barrier_t *bar;
    bu_payload *table;
    double ns[BURSTS]; /* tight: ns[0] */
} recorder;

/* Events a thread records first, untimed: its lane written over once, so that no burst pays first touches. */
static long long warm_events(void) { return (long long)(STREAM_SIZE / 64) + 1000; }

static void record_bursts(recorder *r)
{
    timed_events(r->id, r->table, warm_events());
    pthread_barrier_wait(r->bar);
    usleep(burst_gap_us);
    for (int k = 0; k < BURSTS; k++) {
        pthread_barrier_wait(r->bar);
        r->ns[k] = timed_events(r->id, r->table, burst_events);
        pthread_barrier_wait(r->bar);
        usleep(burst_gap_us);
    }
}

static void *recorder_main(void *arg)
{
    recorder *r = arg;
    if (bu_pin(r->cpu))
        _exit(98);
    if (!r->tight) {
        record_bursts(r);
        return NULL;
    }
    pthread_barrier_wait(r->bar);
    r->ns[0] = timed_events(r->id, r->table, tight_events);
    return NULL;
}

/* Runs nthreads recorders, on the two CPUs, to their end: r[i].ns holds their figures. */
static void run_recorders(trace_event_id_t id, int nthreads, int tight, recorder *r)
{
    int cpu[2];
    bu_two_cpus(&cpu[0], &cpu[1]);
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
    pthread_t th[2];
    for (int i = 0; i < nthreads; i++) {
        r[i] = (recorder){.id = id, .cpu = cpu[i], .tight = tight, .bar = &bar,
                          .table = bu_table_new((uint64_t)i + (tight ? 17 : 7))};
        if (!r[i].table || pthread_create(&th[i], NULL, recorder_main, &r[i]))
            _exit(99);
    }
    for (int i = 0; i < nthreads; i++) {
        pthread_join(th[i], NULL);
        free(r[i].table);
    }
    pthread_barrier_destroy(&bar);
}

/* The bursts on nthreads threads: the median ns per event per thread over bursts 2..BURSTS. */
static double run_bursts(trace_event_id_t id, int nthreads)
{
    recorder r[2];
    run_recorders(id, nthreads, 0, r);
    double ns[2 * BURSTS];
    int n = 0;
    for (int i = 0; i < nthreads; i++)
        for (int k = 1; k < BURSTS; k++)
            ns[n++] = r[i].ns[k];
    return bu_summarize(ns, n).median;
}

/* ---- tight: threads record as fast as they can, the stream waits for room ---- */

/* nthreads record tight_events each at once: ns per event of the slowest (each thread's own span). */
static double run_tight(trace_event_id_t id, int nthreads)
{
    recorder r[2];
    run_recorders(id, nthreads, 1, r);
    double slowest = 0;
    for (int i = 0; i < nthreads; i++)
        slowest = r[i].ns[0] > slowest ? r[i].ns[0] : slowest;
    return slowest;
}

/*
 * Per run: a command and a thread count: 'i' or 'x' bursts into the child's
 * own stream with log or the controller's, 'I' or 'X' the tight loop.
 */
static void burst_child(const chan *l)
{
    trace_event_id_t id = bench_id();
    say(l->to_parent, 'r');
    for (char c; (c = hear(l->from_parent)) != 'q';) {
        int nthreads;
        get(l->from_parent, &nthreads, sizeof nthreads);
        uint64_t lost = 0, in_log = 0;
        double (*run)(trace_event_id_t, int) = c == 'i' || c == 'x' ? run_bursts : run_tight;
        double ns;
        if (c == 'i' || c == 'I') {
            int fd;
            trace_id_t t = own_stream_start("bin", &fd, c == 'I' ? TIGHT_WAIT_US : 0);
            ns = run(id, nthreads);
            own_stream_end(t, fd, id, &lost, &in_log);
        } else {
            say(l->to_parent, 'g');
            hear(l->from_parent);
            ns = run(id, nthreads);
        }
        put(l->to_parent, &ns, sizeof ns);
        put(l->to_parent, &lost, sizeof lost);
        put(l->to_parent, &in_log, sizeof in_log);
    }
}

static double bursts_ns[2][2]; /* [controller][threads - 1] */
#define TIGHT_RUNS_MAX 5
static bu_summary tight_ns[2][2];  /* [controller][threads - 1] */

/* One run of the child's bursts (tight 0) or tight loop (tight 1): its ns per event, checked counts. */
static double child_run(chan *l, pid_t pid, int controller, int tight, int nthreads)
{
    uint64_t per_thread = tight ? (uint64_t)tight_events : (uint64_t)(BURSTS * burst_events + warm_events());
    uint64_t n = per_thread * (uint64_t)nthreads, lost, in_log;
    trace_id_t t = 0;
    trace_event_id_t id = 0;
    int fd = -1;
    say(l->to_child, controller ? (tight ? 'X' : 'x') : (tight ? 'I' : 'i'));
    put(l->to_child, &nthreads, sizeof nthreads);
    if (controller) {
        t = controller_stream_start(pid, "bx", &fd, &id, tight ? TIGHT_WAIT_US : 0);
        if (hear(l->from_child) != 'g')
            must(EPROTO, "burst child");
        say(l->to_child, 'k');
    }
    double ns;
    get(l->from_child, &ns, sizeof ns);
    get(l->from_child, &lost, sizeof lost);
    get(l->from_child, &in_log, sizeof in_log);
    if (controller)
        controller_stream_end(t, fd, id, &lost, &in_log);
    char what[64];
    snprintf(what, sizeof what, "%s, %s of %d thread(s)", controller ? "controller" : "in-process",
             tight ? "tight loop" : "bursts", nthreads);
    check_counts(what, n, lost, in_log);
    return ns;
}

static void measure_bursts(void)
{
    chan l;
    pid_t pid = start_child(&l, burst_child);
    if (hear(l.from_child) != 'r')
        must(EPROTO, "burst child");
    for (int nthreads = 1; nthreads <= 2; nthreads++)
        for (int controller = 0; controller < 2; controller++)
            bursts_ns[controller][nthreads - 1] = child_run(&l, pid, controller, 0, nthreads);
    int truns = runs < TIGHT_RUNS_MAX ? runs : TIGHT_RUNS_MAX;
    double ns[2][2][TIGHT_RUNS_MAX];
    for (int r = 0; r < truns; r++) /* run by run in alternation: the machine's drift spreads over all four */
        for (int nthreads = 1; nthreads <= 2; nthreads++)
            for (int controller = 0; controller < 2; controller++)
                ns[controller][nthreads - 1][r] = child_run(&l, pid, controller, 1, nthreads);
    for (int x = 0; x < 2; x++)
        for (int k = 0; k < 2; k++)
            tight_ns[x][k] = bu_summarize(ns[x][k], truns);
    say(l.to_child, 'q');
    if (end_child(&l, pid) != 0)
        fail("burst child", 0);
}

/* ---- attach: create + start until the first event is read here ---- */

static void attach_child(const chan *l)
{
    trace_event_id_t id = bench_id();
    say(l->to_parent, 'r');
    /* Records until told to stop (the pipe is non-blocking: one read per 1,024 events). */
    fcntl(l->from_parent, F_SETFL, O_NONBLOCK);
    char c;
    for (uint32_t i = 0;; i++) {
        posix_trace_event(id, &i, sizeof i);
        if (i % 1024 == 0 && read(l->from_parent, &c, 1) == 1)
            return;
    }
}

static bu_summary attach_ms;
static double first_attach_ms;

static void measure_attach(void)
{
    chan l;
    pid_t pid = start_child(&l, attach_child);
    if (hear(l.from_child) != 'r')
        must(EPROTO, "attach child");
    double ms[MAX_RUNS];
    trace_attr_t a;
    posix_trace_attr_init(&a);
    for (int r = 0; r < attaches; r++) {
        uint64_t t0 = bu_now_ns();
        trace_id_t t;
        must(posix_trace_create(pid, &a, &t), "create(child)");
        must(posix_trace_start(t), "start");
        struct posix_trace_event_info info;
        char buf[64];
        size_t len;
        int unavailable = 1;
        while (unavailable && bu_now_ns() - t0 < 5000000000ull)
            must(posix_trace_trygetnext_event(t, &info, buf, sizeof buf, &len, &unavailable), "trygetnext");
        ms[r] = (double)(bu_now_ns() - t0) / 1e6;
        if (unavailable)
            fail("no event within 5 s of attaching", 0);
        must(posix_trace_shutdown(t), "shutdown");
    }
    say(l.to_child, 'q');
    if (end_child(&l, pid) != 0)
        fail("attach child", 0);
    first_attach_ms = ms[0];
    attach_ms = bu_summarize(ms, attaches);
}

/* ---- recorded: `ptlog record` of a program with 2 paced threads, a competing process running ---- */

/*
 * The traced program is this benchmark again (`bench_xproc --produce MODE
 * RATE SECONDS [LOG]`): 2 threads record RATE M events/s between them for
 * SECONDS, paced, each event 16 B: its thread's sequence number (thread in
 * the top byte) and the CLOCK_REALTIME time, as this process estimates it,
 * at the start of its group of BU_PACE_GROUP. MODE "record": into the stream
 * a controller (ptlog record) gave the process; "in": into its own FLUSH
 * stream with an APPEND log at LOG, made with the same settings ptlog record
 * uses by default (the traced program's side then waits for room: zero loss
 * first). It prints one line: the events each thread recorded, the achieved
 * rate, the median ns of posix_trace_event (per group of BU_PACE_GROUP, one
 * clock read included) and the threads' CPU time.
 */
#define PRODUCERS 2
#define SEQ_THREAD_SHIFT 56
#define COST_BINS 8192 /* ns per group of BU_PACE_GROUP, 1-ns bins; the last one collects the rest */
#define TS_SLACK_NS 2000000 /* the log's stamps against the payload's clock (two offsets, taken apart) */

typedef struct producer {
    trace_event_id_t id;
    int index;
    double per_ns;                   /* this thread's events per ns */
    uint64_t n, t0, cpu_ns;
    int64_t real_off;                /* CLOCK_REALTIME - CLOCK_MONOTONIC, once */
    pthread_barrier_t *bar;
    uint32_t *bins;                  /* COST_BINS */
} producer;

static uint64_t real_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void *producer_main(void *arg)
{
    producer *p = arg;
    pthread_barrier_wait(p->bar);
    uint64_t payload[2], cpu0 = bu_thread_cpu_ns(), now = bu_now_ns();
    for (uint64_t i = 0; i < p->n; i += BU_PACE_GROUP) {
        uint64_t due = p->t0 + (uint64_t)((double)i / p->per_ns);
        while (now < due) {
            __asm__ __volatile__("pause");
            now = bu_now_ns();
        }
        uint64_t start = now, end = i + BU_PACE_GROUP < p->n ? i + BU_PACE_GROUP : p->n;
        payload[1] = (uint64_t)((int64_t)start + p->real_off);
        for (uint64_t k = i; k < end; k++) {
            payload[0] = (uint64_t)p->index << SEQ_THREAD_SHIFT | k;
            posix_trace_event(p->id, payload, sizeof payload);
        }
        now = bu_now_ns();
        uint64_t ns = now - start;
        p->bins[ns < COST_BINS ? ns : COST_BINS - 1]++;
    }
    p->cpu_ns = bu_thread_cpu_ns() - cpu0;
    return NULL;
}

/* The median of the bins, in ns per event (the whole groups only count: the last may be short). */
static double bins_median(const uint32_t *bins)
{
    uint64_t total = 0, seen = 0;
    for (int i = 0; i < COST_BINS; i++)
        total += bins[i];
    for (int i = 0; i < COST_BINS; i++)
        if ((seen += bins[i]) * 2 >= total)
            return (double)i / BU_PACE_GROUP;
    return 0;
}

static int produce_main(int argc, char **argv)
{
    if (argc != 5 && argc != 6)
        return 2;
    int in = strcmp(argv[2], "in") == 0;
    double rate = atof(argv[3]), secs = atof(argv[4]);
    if ((!in && strcmp(argv[2], "record")) || (in && argc != 6) || rate <= 0 || secs <= 0)
        return 2;
    trace_event_id_t id;
    if (posix_trace_eventid_open("bench:xrate", &id))
        return 3;
    trace_id_t own = 0;
    if (in) {
        trace_attr_t a;
        posix_trace_attr_init(&a);
        posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH);
        posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
        int fd = open(argv[5], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0 || posix_trace_create_withlog(0, &a, fd, &own) || posix_trace_start(own))
            return 4;
    }
    uint32_t *bins = calloc((size_t)PRODUCERS * COST_BINS, sizeof *bins);
    if (!bins)
        return 5;
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, PRODUCERS + 1);
    producer p[PRODUCERS];
    pthread_t th[PRODUCERS];
    uint64_t each = (uint64_t)(rate * 1e6 * secs / PRODUCERS);
    int64_t off = (int64_t)real_now_ns() - (int64_t)bu_now_ns();
    for (int i = 0; i < PRODUCERS; i++) {
        p[i] = (producer){.id = id, .index = i, .per_ns = rate / PRODUCERS / 1000.0, .n = each,
                          .real_off = off, .bar = &bar, .bins = bins + (size_t)i * COST_BINS};
        if (pthread_create(&th[i], NULL, producer_main, &p[i]))
            return 6;
    }
    uint64_t t0 = bu_now_ns() + 1000000; /* both start together, 1 ms on */
    for (int i = 0; i < PRODUCERS; i++)
        p[i].t0 = t0;
    pthread_barrier_wait(&bar);
    for (int i = 0; i < PRODUCERS; i++)
        pthread_join(th[i], NULL);
    double achieved = (double)(each * PRODUCERS) / (double)(bu_now_ns() - t0) * 1e3;
    for (int i = 1; i < PRODUCERS; i++)
        for (int k = 0; k < COST_BINS; k++)
            bins[k] += bins[(size_t)i * COST_BINS + k];
    if (in && posix_trace_shutdown(own))
        return 7;
    printf("%llu %llu %.4f %.3f %.4f\n", (unsigned long long)p[0].n, (unsigned long long)p[1].n, achieved,
           bins_median(bins), (double)(p[0].cpu_ns + p[1].cpu_ns) / 1e9);
    free(bins);
    return fflush(stdout) ? 8 : 0;
}

static double xr_rates[MAX_RATES] = {2, 5, 7.5, 10, 12.5};
static int xr_nrates = 5, xr_runs = 3, xr_competitor = 1, xr_enabled = 1, xr_only, xr_in_process = 1;
static double xr_seconds = 10;
static const char *ptlog_path;
#define PTLOG_ARGS_MAX 16
static const char *ptlog_args[PTLOG_ARGS_MAX];
static int nptlog_args;

/* One run of the traced program, as the log read back says. */
typedef struct xrun {
    uint64_t produced, in_log, lost, overruns; /* lost: the gaps in the threads' sequences */
    double achieved, cost_ns, producers_cpu_s, total_cpu_s;
} xrun;

static xrun xr[2][MAX_RATES][MAX_RUNS]; /* [recorded][rate][run] */

/* The log's id of bench:xrate, or -1. */
static int64_t xrate_id(const tracelog_reader *r)
{
    size_t n = tracelog_reader_event_type_count(r);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *name;
        if (tracelog_reader_event_type(r, i, &id, &name) == TRACELOG_OK && name && strcmp(name, "bench:xrate") == 0)
            return id;
    }
    return -1;
}

/* A problem with the log read back: the self-check fails. */
static void bad_log(const char *what, const char *why, unsigned long long a, unsigned long long b)
{
    fprintf(stderr, "bench_xproc: %s: %s (%llu, %llu)\n", what, why, a, b);
    failures++;
}

/*
 * The self-check: each thread's events in the log in sequence order, each
 * stamped within its group's time (payload) and after the one before; the
 * sequence numbers missing (between two, and after the last one) are the
 * events lost, and they must equal the stream's overruns in the log's
 * status exactly.
 */
static void read_back(const char *what, const char *path, const uint64_t produced[PRODUCERS], xrun *x)
{
    tracelog_reader *r;
    tracelog_error err;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0 || tracelog_reader_open(fd, NULL, &r, &err) != TRACELOG_OK) {
        bad_log(what, "the log cannot be read", 0, 0);
        if (fd >= 0)
            close(fd);
        return;
    }
    int64_t id = xrate_id(r);
    uint64_t next[PRODUCERS] = {0}, last_ts[PRODUCERS] = {0}, group_at[PRODUCERS] = {0};
    tracelog_event ev;
    while (id >= 0 && tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        if (ev.event_id != (uint32_t)id)
            continue;
        uint64_t p[2];
        if (ev.payload_len != sizeof p) {
            bad_log(what, "an event of another size", ev.payload_len, sizeof p);
            break;
        }
        memcpy(p, ev.payload, sizeof p);
        uint64_t th = p[0] >> SEQ_THREAD_SHIFT, seq = p[0] & ((1ull << SEQ_THREAD_SHIFT) - 1);
        if (th >= PRODUCERS || seq < next[th] || seq >= produced[th]) {
            bad_log(what, "an event out of its thread's order, repeated or never made (thread, sequence)", th, seq);
            break;
        }
        if (p[1] != group_at[th]) { /* a new group: every event before it was stamped before it began */
            if (last_ts[th] > p[1] + TS_SLACK_NS)
                bad_log(what, "an event stamped after the next group began (stamp, group)", last_ts[th], p[1]);
            group_at[th] = p[1];
        }
        if (ev.timestamp_ns + TS_SLACK_NS < p[1] || ev.timestamp_ns < last_ts[th])
            bad_log(what, "an event stamped before it was made, or before its thread's last one (stamp, made)",
                    ev.timestamp_ns, p[1]);
        x->lost += seq - next[th];
        next[th] = seq + 1;
        last_ts[th] = ev.timestamp_ns;
        x->in_log++;
    }
    if (id < 0)
        bad_log(what, "no bench:xrate event type in the log", 0, 0);
    for (int th = 0; th < PRODUCERS; th++)
        x->lost += produced[th] - next[th];
    tracelog_log_status st;
    tracelog_reader_get_status(r, &st);
    x->overruns = st.stream_overruns;
    if (x->lost != st.stream_overruns)
        bad_log(what, "events missing from the threads' sequences != the stream's overruns", x->lost,
                st.stream_overruns);
    if (x->in_log + x->lost != x->produced)
        bad_log(what, "events in the log + lost != recorded", x->in_log + x->lost, x->produced);
    tracelog_reader_close(r);
    close(fd);
}

/* A CPU-bound process until killed (it dies with us). */
static pid_t start_competitor(void)
{
    pid_t pid = fork();
    if (pid < 0)
        must(errno, "fork");
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (volatile uint64_t spin = 0;; spin++)
            ;
    }
    return pid;
}

static void stop_competitor(pid_t pid)
{
    if (pid <= 0)
        return;
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
}

/* Runs argv with its standard output into line (one line, at most cap bytes). Its exit status; *cpu_s: its CPU time and its children's. */
static int run_program(char *const argv[], char *line, size_t cap, double *cpu_s)
{
    int out[2];
    if (pipe2(out, O_CLOEXEC))
        must(errno, "pipe");
    pid_t pid = fork();
    if (pid < 0)
        must(errno, "fork");
    if (pid == 0) {
        dup2(out[1], STDOUT_FILENO);
        execv(argv[0], argv);
        fprintf(stderr, "bench_xproc: %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    close(out[1]);
    size_t got = 0;
    for (ssize_t n; got + 1 < cap && (n = read(out[0], line + got, cap - 1 - got)) != 0;)
        if (n > 0)
            got += (size_t)n;
        else if (errno != EINTR)
            break;
    line[got] = 0;
    close(out[0]);
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
        ;
    *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static char self_exe[4096];

/* One run: the program recorded by ptlog record (recorded 1) or into its own stream and log, at rate. */
static void recorded_run(int recorded, double rate, xrun *x)
{
    char log[4096], rate_s[32], secs_s[32], line[256], what[96];
    snprintf(log, sizeof log, "%s/bench_xproc_rec_%d.ptl", dir, (int)getpid());
    snprintf(rate_s, sizeof rate_s, "%g", rate);
    snprintf(secs_s, sizeof secs_s, "%g", xr_seconds);
    snprintf(what, sizeof what, "%s at %g M/s", recorded ? "ptlog record" : "in-process", rate);
    const char *argv[32 + PTLOG_ARGS_MAX];
    int n = 0;
    if (recorded) {
        argv[n++] = ptlog_path, argv[n++] = "record", argv[n++] = "-q", argv[n++] = "-o", argv[n++] = log;
        for (int i = 0; i < nptlog_args; i++)
            argv[n++] = ptlog_args[i];
        argv[n++] = "--";
    }
    argv[n++] = self_exe, argv[n++] = "--produce", argv[n++] = recorded ? "record" : "in";
    argv[n++] = rate_s, argv[n++] = secs_s;
    if (!recorded)
        argv[n++] = log;
    argv[n] = NULL;
    *x = (xrun){0};
    int st = run_program((char *const *)argv, line, sizeof line, &x->total_cpu_s);
    unsigned long long made[PRODUCERS];
    if (st != 0 || sscanf(line, "%llu %llu %lf %lf %lf", &made[0], &made[1], &x->achieved, &x->cost_ns,
                          &x->producers_cpu_s) != 5) {
        bad_log(what, "the traced program failed (exit status, 0)", (unsigned long long)st, 0);
        unlink(log);
        return;
    }
    uint64_t produced[PRODUCERS] = {made[0], made[1]};
    x->produced = produced[0] + produced[1];
    read_back(what, log, produced, x);
    unlink(log);
}

static int xr_nrun;

static void measure_recorded(void)
{
    pid_t rival = xr_competitor ? start_competitor() : 0;
    for (int r = 0; r < xr_runs; r++)
        for (int i = 0; i < xr_nrates; i++)
            for (int k = 0; k < 2; k++) { /* the order alternates run by run */
                int recorded = (k + r) % 2;
                if (recorded || xr_in_process)
                    recorded_run(recorded, xr_rates[i], &xr[recorded][i][r]);
            }
    xr_nrun = xr_runs;
    stop_competitor(rival);
}

/* The runs of (recorded, rate i) that lost nothing and kept the rate (98 %). */
static int runs_without_loss(int recorded, int i)
{
    int n = 0;
    for (int r = 0; r < xr_nrun; r++)
        n += xr[recorded][i][r].lost == 0 && xr[recorded][i][r].achieved >= 0.98 * xr_rates[i];
    return n;
}

/* The highest rate that, with every one below it, lost nothing in any run (0: none). */
static double recorded_zero_loss(int recorded)
{
    double best = 0;
    for (int i = 0; i < xr_nrates && runs_without_loss(recorded, i) == xr_nrun; i++)
        best = xr_rates[i];
    return best;
}

static bu_summary xr_summary(int recorded, int i, int what)
{
    double v[MAX_RUNS];
    for (int r = 0; r < xr_nrun; r++) {
        const xrun *x = &xr[recorded][i][r];
        v[r] = what == 0   ? (x->produced ? 100.0 * (double)x->lost / (double)x->produced : 0)
               : what == 1 ? x->achieved
               : what == 2 ? x->cost_ns
                           : (x->produced ? (x->total_cpu_s - x->producers_cpu_s) * 1e9 / (double)x->produced : 0);
    }
    return bu_summarize(v, xr_nrun);
}

static void print_recorded(void)
{
    printf("\n  the recorded path: 2 paced threads, 16 B, %g s per run, %d run(s), %s; in-process: FLUSH + APPEND log,"
           " default stream; recorded: ptlog record%s",
           xr_seconds, xr_nrun, xr_competitor ? "one CPU-bound process competing" : "no competing process",
           nptlog_args ? " with" : " (defaults)");
    for (int i = 0; i < nptlog_args; i++)
        printf(" %s", ptlog_args[i]);
    printf("\n  %-8s %-40s %-40s %s\n", "offered", "in-process: lost % (clean runs), M/s, ns",
           "ptlog record: lost % (clean runs), M/s, ns", "cost ratio, controller ns/event");
    for (int i = 0; i < xr_nrates; i++) {
        bu_summary l[2], a[2], c[2];
        for (int k = 0; k < 2; k++)
            l[k] = xr_summary(k, i, 0), a[k] = xr_summary(k, i, 1), c[k] = xr_summary(k, i, 2);
        printf("  %-8g %7.3f [%.3f-%.3f] (%d/%d) %5.2f %5.1f   %7.3f [%.3f-%.3f] (%d/%d) %5.2f %5.1f   %.3fx  %.1f\n",
               xr_rates[i], l[0].median, l[0].min, l[0].max, runs_without_loss(0, i), xr_nrun, a[0].median,
               c[0].median, l[1].median, l[1].min, l[1].max, runs_without_loss(1, i), xr_nrun, a[1].median,
               c[1].median, c[0].median > 0 ? c[1].median / c[0].median : 0, xr_summary(1, i, 3).median);
    }
    double zl = recorded_zero_loss(1);
    printf("  zero-loss rate (every run, every rate up to it): in-process %g M/s, ptlog record %g M/s  "
           "target >= 10 M/s: %s\n",
           recorded_zero_loss(0), zl, zl >= 10 ? "met" : "MISSED");
}

/* ---- output ---- */

static void print(void)
{
    printf("\n  event cost, 16 B, LOOP stream, no log; median [min-max] of %d runs of %lld events\n", runs, events);
    printf("  %-40s %7.1f ns [%.1f-%.1f]\n", "in-process (the child's own stream)", cost_in.median, cost_in.min,
           cost_in.max);
    printf("  %-40s %7.1f ns [%.1f-%.1f]  = %.2fx in-process\n", "traced by a controller", cost_x.median, cost_x.min,
           cost_x.max, cost_x.median / cost_in.median);
    printf("\n  FLUSH stream + APPEND log, one paced producer, %.1f s per step\n", seconds);
    printf("  %-9s %-28s %-28s\n", "offered", "in-process: achieved, lost", "controller: achieved, lost");
    for (int i = 0; i < nrates; i++) {
        const step *s = &steps[i];
        printf("  %-9.1f %6.2f M/s %10.2f %%        %6.2f M/s %10.2f %%\n", s->offered, s->in_rate,
               s->in_n ? 100.0 * (double)s->in_lost / (double)s->in_n : 0, s->x_rate,
               s->x_n ? 100.0 * (double)s->x_lost / (double)s->x_n : 0);
    }
    printf("  zero-loss rate: in-process %.1f M/s, controller %.1f M/s\n", zero_loss(0), zero_loss(1));
    printf("\n  bursts of %lld events of 16 B per thread, %u ms apart, FLUSH + APPEND log; ns per event per thread\n",
           burst_events, burst_gap_us / 1000);
    for (int x = 0; x < 2; x++)
        printf("  %-28s 1 thread %6.1f ns, 2 threads %6.1f ns, 2 threads / 1 thread %.2fx\n",
               x ? "drained by the controller" : "drained in-process", bursts_ns[x][0], bursts_ns[x][1],
               2 * bursts_ns[x][0] / bursts_ns[x][1]);
    printf("\n  tight loop, %lld events of 16 B per thread, FLUSH + APPEND log waiting up to 1 s for room; ns per event "
           "per thread, median [min-max]\n",
           tight_events);
    for (int x = 0; x < 2; x++)
        printf("  %-28s 1 thread %6.1f ns [%.1f-%.1f], 2 threads %6.1f ns [%.1f-%.1f]\n",
               x ? "drained by the controller" : "drained in-process", tight_ns[x][0].median, tight_ns[x][0].min,
               tight_ns[x][0].max, tight_ns[x][1].median, tight_ns[x][1].min, tight_ns[x][1].max);
    printf("\n  attach (create + start to the first event read), %d attaches: %.2f ms [%.2f-%.2f]  target < 10 ms: %s\n",
           attaches, attach_ms.median, attach_ms.min, attach_ms.max, attach_ms.median < 10 ? "met" : "MISSED");
    printf("  first attach of this process (its first stream: clock start-up included): %.2f ms  target < 10 ms: %s\n",
           first_attach_ms, first_attach_ms < 10 ? "met" : "MISSED");
}

/* The recorded path's figures (measure_recorded), after the others: "recorded": {...}. */
static void write_json_recorded(FILE *f)
{
    if (!xr_nrun)
        return;
    fprintf(f, "  \"recorded\": {\"seconds\": %g, \"runs\": %d, \"competitor\": %d, "
               "\"zero_loss_mevents_s\": {\"in_process\": %g, \"ptlog_record\": %g}, \"rates\": [",
            xr_seconds, xr_nrun, xr_competitor, recorded_zero_loss(0), recorded_zero_loss(1));
    for (int i = 0; i < xr_nrates; i++) {
        fprintf(f, "%s\n    {\"offered\": %g", i ? "," : "", xr_rates[i]);
        for (int k = 0; k < 2; k++)
            fprintf(f, ", \"%s\": {\"lost_pct\": %.4f, \"clean_runs\": %d, \"rate\": %.3f, \"cost_ns\": %.2f, "
                       "\"drain_ns_per_event\": %.2f}",
                    k ? "ptlog_record" : "in_process", xr_summary(k, i, 0).median, runs_without_loss(k, i),
                    xr_summary(k, i, 1).median, xr_summary(k, i, 2).median, xr_summary(k, i, 3).median);
        fprintf(f, "}");
    }
    fprintf(f, "\n  ]}");
}

/* The other figures (not with --only-recorded), then the recorded path's. */
static void write_json_others(FILE *f)
{
    fprintf(f,
            "  \"cost_ns\": {\"in_process\": %.2f, \"controller\": %.2f},\n"
            "  \"zero_loss_mevents_s\": {\"in_process\": %.1f, \"controller\": %.1f},\n"
            "  \"attach_ms\": {\"median\": %.3f, \"min\": %.3f, \"max\": %.3f, \"first\": %.3f},\n"
            "  \"bursts_ns\": {\"in_1t\": %.2f, \"in_2t\": %.2f, \"x_1t\": %.2f, \"x_2t\": %.2f},\n"
            "  \"tight_ns\": {\"in_1t\": %.2f, \"in_2t\": %.2f, \"x_1t\": %.2f, \"x_2t\": %.2f},\n  \"steps\": [",
            cost_in.median, cost_x.median, zero_loss(0), zero_loss(1), attach_ms.median, attach_ms.min,
            attach_ms.max, first_attach_ms, bursts_ns[0][0], bursts_ns[0][1], bursts_ns[1][0], bursts_ns[1][1],
            tight_ns[0][0].median, tight_ns[0][1].median, tight_ns[1][0].median, tight_ns[1][1].median);
    for (int i = 0; i < nrates; i++)
        fprintf(f, "%s\n    {\"offered\": %.1f, \"in_rate\": %.3f, \"in_lost\": %llu, \"x_rate\": %.3f, \"x_lost\": %llu}",
                i ? "," : "", steps[i].offered, steps[i].in_rate, (unsigned long long)steps[i].in_lost,
                steps[i].x_rate, (unsigned long long)steps[i].x_lost);
    fprintf(f, "\n  ]%s", xr_nrun ? ",\n" : "");
}

static void write_json(void)
{
    FILE *f = json ? fopen(json, "w") : NULL;
    if (!f) {
        if (json)
            fail(json, errno);
        return;
    }
    fprintf(f, "{\n");
    if (!xr_only)
        write_json_others(f);
    write_json_recorded(f);
    fprintf(f, "\n}\n");
    fclose(f);
}

static int parse_rates(const char *s, double *out, int *count)
{
    int n = 0;
    for (char *end; *s && n < MAX_RATES; s = *end == ',' ? end + 1 : end) {
        double v = strtod(s, &end);
        if (end == s || v <= 0 || (*end && *end != ','))
            return -1;
        out[n++] = v;
    }
    *count = n;
    return n ? 0 : -1;
}

/* The options of the recorded path's figure; 1 if a was one of them (and took v), -1 if wrong. */
static int parse_recorded_arg(const char *a, const char *v)
{
    if (strcmp(a, "--recorded-rates") == 0)
        return parse_rates(v, xr_rates, &xr_nrates) ? -1 : 1;
    if (strcmp(a, "--recorded-seconds") == 0)
        return (xr_seconds = atof(v)) > 0 ? 1 : -1;
    if (strcmp(a, "--recorded-runs") == 0)
        return (xr_runs = atoi(v)) >= 1 && xr_runs <= MAX_RUNS ? 1 : -1;
    if (strcmp(a, "--ptlog") == 0)
        return ptlog_path = v, 1;
    if (strcmp(a, "--ptlog-arg") == 0) {
        if (nptlog_args == PTLOG_ARGS_MAX)
            return -1;
        ptlog_args[nptlog_args++] = v;
        return 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--smoke") == 0) {
            runs = 3, attaches = 3, events = 20000, seconds = 0.1, burst_events = 2000, burst_gap_us = 5000;
            tight_events = 20000;
            rates[0] = 1, nrates = 1;
            xr_rates[0] = 1, xr_nrates = 1, xr_seconds = 0.2, xr_runs = 1;
            continue;
        }
        int *flag = strcmp(a, "--only-recorded") == 0   ? &xr_only
                    : strcmp(a, "--no-recorded") == 0   ? &xr_enabled
                    : strcmp(a, "--no-competitor") == 0 ? &xr_competitor
                    : strcmp(a, "--no-in-process") == 0 ? &xr_in_process
                                                        : NULL;
        if (flag) {
            *flag = flag == &xr_only;
            continue;
        }
        if (!v)
            return -1;
        i++;
        int rec = parse_recorded_arg(a, v);
        if (rec < 0)
            return -1;
        if (rec > 0)
            continue;
        if (strcmp(a, "--runs") == 0)
            runs = atoi(v);
        else if (strcmp(a, "--events") == 0)
            events = bu_parse_count(v);
        else if (strcmp(a, "--tight-events") == 0)
            tight_events = bu_parse_count(v);
        else if (strcmp(a, "--seconds") == 0)
            seconds = atof(v);
        else if (strcmp(a, "--rates") == 0) {
            if (parse_rates(v, rates, &nrates))
                return -1;
        } else if (strcmp(a, "--dir") == 0)
            dir = v;
        else if (strcmp(a, "--json") == 0)
            json = v;
        else
            return -1;
    }
    if (runs < 1 || runs > MAX_RUNS || events < 1 || tight_events < 1 || seconds <= 0 || (xr_only && !xr_enabled))
        return -1;
    attaches = attaches > MAX_RUNS ? MAX_RUNS : attaches;
    return 0;
}

/* ptlog beside this program's build (<build>/bench/bench_xproc, <build>/tools/ptlog) unless --ptlog says. */
static int find_programs(void)
{
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0)
        return -1;
    self_exe[n] = 0;
    if (ptlog_path)
        return 0;
    static char beside[4096 + 32];
    snprintf(beside, sizeof beside, "%s", self_exe);
    char *slash = strrchr(beside, '/');
    if (!slash)
        return -1;
    snprintf(slash, sizeof beside - (size_t)(slash - beside), "/../tools/ptlog");
    ptlog_path = beside;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--produce") == 0)
        return produce_main(argc, argv);
    if (parse_args(argc, argv)) {
        fprintf(stderr, "usage: bench_xproc [--smoke] [--runs N] [--events N] [--tight-events N] [--seconds S] "
                        "[--rates 1,2,4] [--dir DIR] [--json FILE]\n"
                        "       [--recorded-rates 2,5,10] [--recorded-seconds S] [--recorded-runs N] [--ptlog PATH]\n"
                        "       [--ptlog-arg ARG]... [--no-competitor] [--no-in-process] [--only-recorded | --no-recorded]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    if (xr_enabled && find_programs()) {
        fprintf(stderr, "bench_xproc: cannot find this program's path (/proc/self/exe)\n");
        return 2;
    }
    if (!xr_only) {
        measure_attach();
        measure_cost();
        measure_rate();
        measure_bursts();
        print();
    }
    if (xr_enabled) {
        measure_recorded();
        print_recorded();
    }
    write_json();
    return failures ? 1 : 0;
}
