/*
 * bench_xproc: tracing another process (issue 12; bench/README.md, "Tracing
 * another process"). Three figures, each next to its in-process
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
 *
 *   bench_xproc [--smoke] [--runs N] [--events N] [--tight-events N] [--seconds S]
 *               [--rates 1,2,4] [--dir DIR] [--json FILE]
 *
 * Exit 1 when a call fails or a self-check fails (every sustained step and
 * every burst and tight run: events in the log == events recorded - events lost).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static void write_json(void)
{
    FILE *f = json ? fopen(json, "w") : NULL;
    if (!f) {
        if (json)
            fail(json, errno);
        return;
    }
    fprintf(f,
            "{\n  \"cost_ns\": {\"in_process\": %.2f, \"controller\": %.2f},\n"
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
    fprintf(f, "\n  ]\n}\n");
    fclose(f);
}

static int parse_rates(const char *s)
{
    nrates = 0;
    for (char *end; *s && nrates < MAX_RATES; s = *end == ',' ? end + 1 : end) {
        double v = strtod(s, &end);
        if (end == s || v <= 0 || (*end && *end != ','))
            return -1;
        rates[nrates++] = v;
    }
    return nrates ? 0 : -1;
}

static int parse_args(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--smoke") == 0) {
            runs = 3, attaches = 3, events = 20000, seconds = 0.1, burst_events = 2000, burst_gap_us = 5000;
            tight_events = 20000;
            rates[0] = 1, nrates = 1;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--runs") == 0)
            runs = atoi(v);
        else if (strcmp(a, "--events") == 0)
            events = bu_parse_count(v);
        else if (strcmp(a, "--tight-events") == 0)
            tight_events = bu_parse_count(v);
        else if (strcmp(a, "--seconds") == 0)
            seconds = atof(v);
        else if (strcmp(a, "--rates") == 0) {
            if (parse_rates(v))
                return -1;
        } else if (strcmp(a, "--dir") == 0)
            dir = v;
        else if (strcmp(a, "--json") == 0)
            json = v;
        else
            return -1;
    }
    if (runs < 1 || runs > MAX_RUNS || events < 1 || tight_events < 1 || seconds <= 0)
        return -1;
    attaches = attaches > MAX_RUNS ? MAX_RUNS : attaches;
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv)) {
        fprintf(stderr, "usage: bench_xproc [--smoke] [--runs N] [--events N] [--tight-events N] [--seconds S] "
                        "[--rates 1,2,4] [--dir DIR] [--json FILE]\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    measure_attach();
    measure_cost();
    measure_rate();
    measure_bursts();
    print();
    write_json();
    return failures ? 1 : 0;
}
