/*
 * The flusher split over groups of lanes (groups.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include <string.h>

#include "recorder/groups.h"
#include "recorder/lane.h"
#include "recorder/run.h"
#include "writer/set.h"
#include "xproc/traced.h"

#define GROUPS_MAX 8
/*
 * Record bytes a cycle may take. A set decodes to at most about 2.2 times
 * the lane bytes of its events (a key entry, a timestamp and a rebuilt
 * payload against a 48-byte header and the payload), well within
 * TL_SET_MAX_DECODED; and a reader holds a set decoded whole, on every
 * thread that reads: a third of TL_SET_MAX_DECODED took ptlog dump to 58
 * MiB and convert to 95 (2 threads), 8 MiB to 20 and 32. Smaller windows
 * mean more cycles, each ending a chunk of every busy group (issue 27: with
 * 4 MiB the tight loop ran about 4 % slower than with 8, within the noise).
 */
#define WINDOW_MAX (8u << 20)
/* Another process's stream: events taken per guarded step, their payloads copied out (as log.c's drain_remote). */
#define STEP 256
#define STEP_ARENA (64u << 10)

typedef struct group group;

/* A guarded step of a group of another process's stream (see STEP). */
typedef struct step {
    group *g;
    uint64_t w, pub;        /* the cycle's bound and watermark: the step that begins the batch opens it */
    int begin;
    tracelog_event ev[STEP];
    volatile uint32_t n;    /* stored after each event is complete: after a fault, those before it are good */
    int more;               /* the step filled up: there may be more */
    int runs;               /* stop where a lane's run can go in place (lane.h) */
    int lane_run;           /* it stopped there */
    uint8_t *arena;
    size_t arena_cap;
} step;

/* Aligned: each group is another thread's, and its counters must not share a line with the next one's consumer. */
struct group {
    tl_consumer *consumer;
    tl_set_part part;
    step *step;      /* another process's stream only */
    uint64_t taken;  /* events taken in the current cycle */
    uint64_t last_ts; /* of the last one */
    int later;       /* it saw records newer than the watermark */
    tracelog_status error;
};

struct tl_groups {
    tl_remote *rm;              /* another process's stream (its buffer's SIGBUS guard), or NULL */
    tl_set set;
    group g[GROUPS_MAX];
    uint32_t n;
    uint64_t pub;               /* the current cycle's watermark */
    uint64_t w;                 /* and the stamp it takes events up to (tl_consumer_bound) */
    int unbounded;              /* the last cycle was bounded and took nothing: this one is not bounded */
    int cut_short;              /* the last cycle was bounded below its watermark: more was waiting */
    uint32_t busy[GROUPS_MAX];  /* the groups with records this cycle */
    uint32_t nbusy;
    uint32_t cpu_of[GROUPS_MAX]; /* and the CPU (+ 1) of the producer of each one's fullest lane */
    _Atomic uint32_t claimed[GROUPS_MAX]; /* taken by a thread of the cycle */
    pthread_mutex_t mu;         /* the fields below */
    pthread_cond_t go, done;
    uint64_t cycle;
    uint32_t wanted, started, finished; /* helpers asked to run the current cycle, and how far they got */
    int stop;
    pthread_t helpers[GROUPS_MAX - 1];
    uint32_t nhelpers;
};

/* Keeps the group's first error. The rest is still taken: the stream must not fill up behind a dead log. */
static void note(group *g, tracelog_status st)
{
    if (st != TRACELOG_OK && g->error == TRACELOG_OK)
        g->error = st;
}

static void append(group *g, const tracelog_event *ev) { note(g, tl_set_append(&g->part, ev)); }

/* Under the guard: takes up to STEP events, their payloads copied out; no lock, no allocation. */
static int take_step(void *arg)
{
    step *b = arg;
    tl_consumer *c = b->g->consumer;
    b->n = 0;
    b->more = 0;
    b->lane_run = 0;
    if (b->begin) {
        tl_consumer_begin_batch(c, b->w, b->pub);
        b->begin = 0;
    }
    size_t used = 0;
    size_t max_data = tl_consumer_max_data(c);
    for (uint32_t n = 0; n < STEP && used + max_data <= b->arena_cap;) {
        tracelog_event *ev = &b->ev[n];
        uint32_t got = tl_rec_take(c, ev, tl_rec_run_max(STEP - n - 1, used, b->arena_cap, max_data),
                                   b->runs ? &b->lane_run : NULL);
        if (!got)
            return 0;
        tl_rec_copy_out(ev, got, b->arena, &used, &b->n);
        n += got;
        if (b->lane_run) {
            b->more = 1;
            return 0;
        }
    }
    b->more = 1;
    return 0;
}

/* Another process's stream: guarded steps; a fault (the buffer shrunk) ends the group's share. */
static void run_remote_group(tl_groups *gs, group *g)
{
    step *b = g->step;
    b->w = gs->w;
    b->pub = gs->pub;
    b->begin = 1;
    b->runs = 1;
    for (;;) {
        int fault = tl_remote_guard(gs->rm, take_step, b) == EFAULT;
        for (uint32_t i = 0; i < b->n; i++)
            append(g, &b->ev[i]);
        g->taken += b->n;
        if (b->n)
            g->last_ts = b->ev[b->n - 1].timestamp_ns;
        if (!fault && b->lane_run) { /* as the recorder's drain (drain.c): the lane's run copied out, in place */
            tracelog_event last;
            size_t limit = 0;
            tl_chunk_builder *cb = tl_set_lane_target(&g->part, &limit, &last);
            uint32_t placed =
                tl_rec_append_lane_copied(g->consumer, gs->rm, cb, limit, &last, b->arena, b->arena_cap, &fault);
            b->runs = placed > 0;
            g->taken += placed;
            if (placed)
                g->last_ts = last.timestamp_ns;
        } else {
            b->runs = 1;
        }
        if (fault || !b->more)
            return;
    }
}

/* One group's share of a cycle: its lanes' events below the watermark, into its part of the set. */
static void run_group(tl_groups *gs, group *g)
{
    g->taken = 0;
    if (gs->rm) {
        run_remote_group(gs, g);
    } else {
        tracelog_event ev[TL_REC_RUN];
        uint64_t taken = 0, last_ts = 0;
        tl_consumer *c = g->consumer;
        tl_consumer_begin_batch(c, gs->w, gs->pub);
        while (tl_consumer_take_wait(c, &ev[0]) == TL_TAKE_EVENT) {
            append(g, &ev[0]);
            /* as the recorder's drain: the lane's next events where they lie, else a run */
            tracelog_event last;
            size_t limit = 0;
            tl_chunk_builder *b = tl_set_lane_target(&g->part, &limit, &last);
            uint32_t got = 1, placed = tl_rec_append_lane(c, b, limit, &last);
            if (!placed) {
                got += tl_consumer_take_run(c, ev + 1, TL_REC_RUN - 1);
                for (uint32_t k = 1; k < got; k++)
                    append(g, &ev[k]);
                last = ev[got - 1];
            }
            taken += got + placed;
            last_ts = last.timestamp_ns;
        }
        g->taken = taken;
        g->last_ts = last_ts;
    }
    g->later = tl_consumer_saw_later(g->consumer);
    note(g, tl_set_part_finish(&g->part));
}

/* A busy group not taken yet, preferably one whose producer last ran on this CPU (its lanes are in this CPU's cache). */
static int pick(tl_groups *gs, int cpu)
{
    for (int pass = 0; pass < 2; pass++)
        for (uint32_t k = 0; k < gs->nbusy; k++) {
            uint32_t free = 0;
            if (!pass && gs->cpu_of[k] != (uint32_t)cpu + 1)
                continue;
            if (atomic_load_explicit(&gs->claimed[k], memory_order_relaxed) == 0 &&
                atomic_compare_exchange_strong(&gs->claimed[k], &free, 1))
                return (int)k;
        }
    return -1;
}

static void run_groups(tl_groups *gs)
{
    int cpu = sched_getcpu();
    for (int k; (k = pick(gs, cpu)) >= 0;)
        run_group(gs, &gs->g[gs->busy[k]]);
}

static void *helper_main(void *arg)
{
    tl_groups *gs = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&gs->mu);
    for (;;) {
        while (!gs->stop && (gs->cycle == seen || gs->started >= gs->wanted))
            pthread_cond_wait(&gs->go, &gs->mu);
        if (gs->stop)
            break;
        seen = gs->cycle;
        gs->started++;
        pthread_mutex_unlock(&gs->mu);
        run_groups(gs);
        pthread_mutex_lock(&gs->mu);
        if (++gs->finished == gs->started)
            pthread_cond_signal(&gs->done);
    }
    pthread_mutex_unlock(&gs->mu);
    return NULL;
}

/* The lead runs groups too; helpers that have not started by the time it is done are not waited for. */
static void run_cycle(tl_groups *gs)
{
    for (uint32_t k = 0; k < gs->nbusy; k++)
        atomic_store(&gs->claimed[k], 0);
    uint32_t helpers = gs->nbusy - 1 < gs->nhelpers ? gs->nbusy - 1 : gs->nhelpers;
    if (helpers) {
        pthread_mutex_lock(&gs->mu);
        gs->cycle++;
        gs->wanted = helpers;
        gs->started = gs->finished = 0;
        pthread_cond_broadcast(&gs->go);
        pthread_mutex_unlock(&gs->mu);
    }
    run_groups(gs);
    if (helpers) {
        pthread_mutex_lock(&gs->mu);
        gs->wanted = gs->started;
        while (gs->finished < gs->started)
            pthread_cond_wait(&gs->done, &gs->mu);
        pthread_mutex_unlock(&gs->mu);
    }
}

static uint32_t cpus_allowed(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        return 1;
    return (uint32_t)CPU_COUNT(&set);
}

static void stop_helpers(tl_groups *gs)
{
    pthread_mutex_lock(&gs->mu);
    gs->stop = 1;
    pthread_cond_broadcast(&gs->go);
    pthread_mutex_unlock(&gs->mu);
    for (uint32_t i = 0; i < gs->nhelpers; i++)
        pthread_join(gs->helpers[i], NULL);
    gs->nhelpers = 0;
}

void tl_groups_close(tl_groups *gs)
{
    if (!gs)
        return;
    stop_helpers(gs);
    for (uint32_t i = 0; i < gs->n; i++) {
        tl_remote_consumer_free(gs->rm, gs->g[i].consumer);
        tl_set_part_free(&gs->g[i].part);
        if (gs->g[i].step)
            free(gs->g[i].step->arena);
        free(gs->g[i].step);
    }
    tl_set_free(&gs->set);
    pthread_mutex_destroy(&gs->mu);
    pthread_cond_destroy(&gs->go);
    pthread_cond_destroy(&gs->done);
    free(gs);
}

/* Group i of n takes user lanes i, i + n, i + 2n...; group 0 the system lane too. */
static uint64_t lanes_of(uint32_t i, uint32_t n, uint32_t nlanes)
{
    uint64_t m = i == 0 ? 1ull << nlanes : 0;
    for (uint32_t l = i; l < nlanes; l += n)
        m |= 1ull << l;
    return m;
}

/* Another process's stream: each group's step and its arena. */
static int make_step(group *g)
{
    g->step = calloc(1, sizeof *g->step);
    if (!g->step)
        return -1;
    g->step->g = g;
    g->step->arena_cap = STEP_ARENA + tl_consumer_max_data(g->consumer); /* a step stops once STEP_ARENA bytes are used */
    g->step->arena = malloc(g->step->arena_cap);
    return g->step->arena ? 0 : -1;
}

tl_groups *tl_groups_open(const tl_consumer *model, tl_remote *rm, tracelog_writer *w, int *err)
{
    *err = 0;
    uint32_t nlanes = tl_consumer_lanes(model);
    uint32_t n = nlanes < GROUPS_MAX ? nlanes : GROUPS_MAX, threads = cpus_allowed();
    if (n < 2)
        return NULL;
    threads = threads < n ? threads : n;
    size_t size = (sizeof(tl_groups) + 63) & ~(size_t)63; /* its groups are aligned on cache lines */
    tl_groups *gs = aligned_alloc(64, size);
    if (gs)
        memset(gs, 0, size);
    if (!gs || tl_set_init(&gs->set, w)) {
        free(gs);
        *err = ENOMEM;
        return NULL;
    }
    gs->rm = rm;
    pthread_mutex_init(&gs->mu, NULL);
    pthread_cond_init(&gs->go, NULL);
    pthread_cond_init(&gs->done, NULL);
    for (; gs->n < n; gs->n++) {
        group *g = &gs->g[gs->n];
        if (!(g->consumer = tl_consumer_new_like(model))) { /* a LOOP stream: one flusher */
            tl_groups_close(gs);
            return NULL;
        }
        if (tl_set_part_init(&g->part, &gs->set) || (rm && make_step(g))) {
            tl_set_part_free(&g->part);
            free(g->step ? g->step->arena : NULL);
            free(g->step);
            *err = ENOMEM;
            break;
        }
        tl_consumer_set_lanes(g->consumer, lanes_of(gs->n, n, nlanes));
    }
    for (; !*err && gs->nhelpers < threads - 1; gs->nhelpers++)
        if (pthread_create(&gs->helpers[gs->nhelpers], NULL, helper_main, gs))
            *err = EAGAIN;
    if (*err) {
        tl_groups_close(gs);
        return NULL;
    }
    return gs;
}

void tl_groups_take_over(tl_groups *gs, const tl_consumer *from)
{
    for (uint32_t i = 0; i < gs->n; i++)
        tl_consumer_adopt(gs->g[i].consumer, from);
}

void tl_groups_hand_back(const tl_groups *gs, tl_consumer *to)
{
    for (uint32_t i = 0; i < gs->n; i++)
        tl_consumer_adopt(to, gs->g[i].consumer);
}

typedef struct backlog_args {
    const tl_groups *gs;
    uint32_t most;
} backlog_args;

static int read_backlog(void *arg)
{
    backlog_args *a = arg;
    for (uint32_t i = 0; i < a->gs->n; i++) {
        uint32_t b = tl_consumer_backlog(a->gs->g[i].consumer);
        a->most = b > a->most ? b : a->most;
    }
    return 0;
}

uint32_t tl_groups_backlog(const tl_groups *gs)
{
    backlog_args a = {gs, 0};
    tl_remote_guard(gs->rm, read_backlog, &a);
    return a.most;
}

/*
 * The watermark is published before the lanes' fill is read, so that the
 * fill bounds the cycle: a record reserved later is stamped after the
 * watermark (stream.h) and waits for the next cycle.
 */
typedef struct plan_args {
    tl_groups *gs;
    uint64_t pending;
    int bounded; /* every lane's share is within its budget below gs->w */
} plan_args;

/*
 * Publishes the cycle's watermark, finds the groups with records, and
 * bounds the cycle: it takes events up to the stamp found about a budget
 * into each lane that holds more, so that the set stays within what
 * readers merge whole however large the lanes are (in the buffer: guarded).
 */
static int plan(void *arg)
{
    plan_args *a = arg;
    tl_groups *gs = a->gs;
    gs->pub = gs->w = tl_consumer_publish_watermark(gs->g[0].consumer);
    uint32_t lanes = 0;
    gs->nbusy = 0;
    for (uint32_t i = 0; i < gs->n; i++) {
        uint32_t cpu;
        uint64_t p = tl_consumer_pending_bytes(gs->g[i].consumer, &cpu, &lanes);
        a->pending += p;
        if (p) {
            gs->cpu_of[gs->nbusy] = cpu;
            gs->busy[gs->nbusy++] = i;
        }
    }
    a->bounded = a->pending <= WINDOW_MAX; /* within the window whole: no bound needed */
    if (a->bounded || gs->unbounded)
        return 0;
    uint64_t budget = WINDOW_MAX / lanes;
    a->bounded = 1;
    for (uint32_t k = 0; k < gs->nbusy && a->bounded; k++)
        a->bounded = tl_consumer_bound(gs->g[gs->busy[k]].consumer, budget, &gs->w);
    if (!a->bounded)
        gs->w = gs->pub;
    return 0;
}

tracelog_status tl_groups_cycle(tl_groups *gs, uint64_t *taken, uint64_t *last_ts, int *more, int *too_big)
{
    *taken = 0;
    *more = *too_big = 0;
    plan_args a = {gs, 0, 0};
    if (tl_remote_guard(gs->rm, plan, &a) == EFAULT)
        return TRACELOG_OK; /* the caller sees tl_remote_faulted */
    if (!a.bounded && a.pending > WINDOW_MAX) {
        *too_big = 1;
        return TRACELOG_OK;
    }
    if (!gs->nbusy)
        return TRACELOG_OK;
    tl_set_begin(&gs->set, gs->nbusy > 1);
    run_cycle(gs);
    tracelog_status st = tl_set_end(&gs->set);
    for (uint32_t k = 0; k < gs->nbusy; k++) {
        group *g = &gs->g[gs->busy[k]];
        *taken += g->taken;
        *last_ts = g->taken && g->last_ts > *last_ts ? g->last_ts : *last_ts;
        *more |= g->taken != 0 || g->later;
        if (st == TRACELOG_OK)
            st = g->error;
        g->error = TRACELOG_OK;
    }
    /* Lanes restamped out of order could put every lane's first record past the bound: not twice. */
    gs->cut_short = gs->w < gs->pub;
    gs->unbounded = gs->cut_short && *taken == 0;
    return st;
}

int tl_groups_cut_short(const tl_groups *gs) { return gs->cut_short; }
