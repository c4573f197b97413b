/*
 * Reading in ranges on several threads (dump, convert to JSON and JSON
 * Lines, of one seekable .ptl log).
 *
 * The log's chunks are cut into units of consecutive chunks. Each thread
 * (the formatter threads and the calling thread) has a reader of its own on
 * the same file, and reads, selects and formats whole units
 * (tracelog_reader_read_range), each into a text of its own, with a copy of
 * the sink's state resumed as after no event. The calling thread writes the
 * texts in unit order, with the sink's joint between two that hold events,
 * and reads a unit itself while the next one to write is not done. So the
 * reading, not only the formatting, is shared, and nothing is copied
 * between threads but the texts.
 *
 * Ranges read one after the other are the whole read only when no reading
 * finds a problem (tracelog_reader_read_range): a unit whose reading found
 * one is not written, and the log is read on from that unit's first chunk
 * as one range on the calling thread's source, whose problems are then
 * reported as a whole read reports them.
 *
 * Not for selections whose state runs across events (--limit, --begin,
 * --end) or sinks whose text does (joint NULL: --delta), nor for a log the
 * open scan found damaged: par.c then formats on several threads, or the
 * event loop runs on one.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

#define UNIT_EVENTS 4096 /* about this many events a unit, and this many decoded bytes: its text */
#define UNIT_BYTES (256u * 1024) /* is a MiB or so at most (2 (N + 1) of them held) */
#define UNIT_CHUNKS_MAX 64
#define UNITS_PER_THREAD 4
#define TEXT_CAP (512u * 1024)

typedef struct unit {
    int done;
    tracelog_status st; /* how the reading ended: TRACELOG_END, or an error whose message is not printed yet */
    int damaged;        /* the reading found a problem: not written, read again on the calling thread */
    uint64_t kept, last_ts;
    ptlog_out text;
} unit;

typedef struct parts parts;

typedef struct worker {
    parts *p;
    ptlog_src *src;   /* a clone of the log's source, with its own reader */
    ptlog_select sel; /* a copy: its verdicts, and a where of its own */
    ptlog_out out;
    void *state;
} worker;

struct parts {
    ptlog_src *src;
    ptlog_select *sel;
    const ptlog_sink *sink;
    uint64_t nchunks, per_unit, nunits;
    pthread_mutex_t lock;
    pthread_cond_t room, done; /* a unit may be taken; a unit is done */
    int stop;
    uint64_t next, written; /* units taken, and written out */
    unit *ring;
    size_t nring;
    size_t nthreads, started;
    pthread_t thread[PTLOG_FORMAT_THREADS_MAX];
    worker w[PTLOG_FORMAT_THREADS_MAX + 1]; /* the last is the calling thread's */
};

static uint64_t unit_first_chunk(const parts *p, uint64_t u)
{
    return u * p->per_unit < p->nchunks ? u * p->per_unit : p->nchunks;
}

/* Reads, selects and formats unit u into x's text. */
static void run_unit(parts *p, worker *w, uint64_t u, unit *x)
{
    x->kept = 0;
    tracelog_reader *r = ptlog_ptl_reader(w->src);
    tracelog_reader_info before, after;
    tracelog_reader_get_info(r, &before);
    tracelog_status st = tracelog_reader_read_range(r, unit_first_chunk(p, u), unit_first_chunk(p, u + 1));
    p->sink->resume(w->state, 0, 0);
    int every = ptlog_select_keeps_all(&w->sel);
    tracelog_event ev;
    while (st == TRACELOG_OK && (st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        const char *name = ptlog_src_type_name(w->src, ev.event_id);
        int keep = ptlog_select_keep(&w->sel, every, w->src, &ev, name);
        if (keep < 0) {
            st = TRACELOG_E_NOMEM;
            break;
        }
        if (keep) {
            p->sink->each(w->state, &ev, name);
            x->kept++;
            x->last_ts = ev.timestamp_ns;
        }
    }
    x->st = st;
    tracelog_reader_get_info(r, &after);
    x->damaged = after.problems != before.problems;
    ptlog_out t = x->text;
    x->text = w->out;
    w->out = t;
    w->out.len = 0;
}

/* The next unit to read, taken (under the lock); 0 when none may be taken now. */
static int take_unit(parts *p, uint64_t *u)
{
    if (p->stop || p->next >= p->nunits || p->next >= p->written + p->nring)
        return 0;
    *u = p->next++;
    return 1;
}

static void *unit_thread(void *arg)
{
    worker *w = arg;
    parts *p = w->p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        uint64_t u;
        if (!take_unit(p, &u)) {
            if (p->stop || p->next >= p->nunits)
                break;
            pthread_cond_wait(&p->room, &p->lock);
            continue;
        }
        unit *x = &p->ring[u % p->nring];
        pthread_mutex_unlock(&p->lock);
        run_unit(p, w, u, x);
        pthread_mutex_lock(&p->lock);
        x->done = 1;
        pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

static void worker_free(parts *p, worker *w)
{
    if (w->state)
        p->sink->free_copy(w->state);
    ptlog_out_abort(&w->out);
    if (w->sel.where != p->sel->where)
        ptlog_where_free(w->sel.where);
    if (w->src) {
        free(w->src->memo);
        w->src->memo = NULL;
        w->src->close(w->src);
    }
    memset(w, 0, sizeof *w);
}

/*
 * A worker over src, a clone (closed by worker_free, whatever happens), which
 * must list the same chunks as the log's reader: -1 otherwise (a file that
 * changed between the opens) or without memory.
 */
static int worker_init(parts *p, worker *w, ptlog_src *src)
{
    w->p = p;
    w->src = src;
    w->sel = *p->sel;
    if (p->sel->where && !(w->sel.where = ptlog_where_clone(p->sel->where)))
        return -1;
    tracelog_reader_info info;
    tracelog_reader_get_info(ptlog_ptl_reader(src), &info);
    if (info.chunks != p->nchunks || info.problems || ptlog_out_memory(&w->out, TEXT_CAP))
        return -1;
    if (src->upfront && !src->memo)
        src->memo = calloc(1, sizeof *src->memo); /* without it, the source is asked every time */
    w->state = p->sink->copy(p->sink->state, &w->out, src);
    return w->state ? 0 : -1;
}

static void start_threads(parts *p)
{
    for (; p->started < p->nthreads; p->started++) {
        worker *w = &p->w[p->started];
        ptlog_src *clone;
        if (ptlog_ptl_src_clone(p->src, &clone))
            break;
        if (worker_init(p, w, clone) || ptlog_thread_start(&p->thread[p->started], unit_thread, w)) {
            worker_free(p, w);
            break;
        }
    }
}

static void stop_threads(parts *p)
{
    pthread_mutex_lock(&p->lock);
    p->stop = 1;
    pthread_cond_broadcast(&p->room);
    pthread_mutex_unlock(&p->lock);
    for (size_t i = 0; i < p->started; i++)
        pthread_join(p->thread[i], NULL);
    p->started = 0;
}

static void parts_free(parts *p)
{
    for (size_t i = 0; i < p->nring; i++)
        ptlog_out_abort(&p->ring[i].text);
    free(p->ring);
    for (size_t i = 0; i <= p->nthreads; i++)
        worker_free(p, &p->w[i]);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->room);
    pthread_cond_destroy(&p->done);
    free(p);
}

/* Unit u's text once done, reading units on this thread meanwhile. Called with the lock held. */
static unit *wait_unit(parts *p, uint64_t u)
{
    unit *x = &p->ring[u % p->nring];
    uint64_t v;
    while (!x->done) {
        if (take_unit(p, &v)) {
            unit *y = &p->ring[v % p->nring];
            pthread_mutex_unlock(&p->lock);
            run_unit(p, &p->w[p->nthreads], v, y);
            pthread_mutex_lock(&p->lock);
            y->done = 1;
            continue;
        }
        pthread_cond_wait(&p->done, &p->lock);
    }
    return x;
}

/*
 * Writes the units in order. Returns the exit code of a failed unit (its
 * events before the failure written, as on one thread), or 0 with *from the
 * chunk to read on from on the calling thread (nchunks: none).
 */
static int write_units(parts *p, uint64_t *kept, uint64_t *last_ts, uint64_t *from)
{
    const ptlog_sink *sink = p->sink;
    ptlog_progress prog;
    ptlog_progress_init(&prog, p->src->total_events);
    int code = 0;
    *from = p->nchunks;
    pthread_mutex_lock(&p->lock);
    for (uint64_t u = 0; u < p->nunits; u++) {
        unit *x = wait_unit(p, u);
        pthread_mutex_unlock(&p->lock);
        if (x->damaged) {
            *from = unit_first_chunk(p, u);
            pthread_mutex_lock(&p->lock);
            break;
        }
        if (x->st != TRACELOG_END)
            code = ptlog_ptl_read_error(p->src->name, x->st);
        else if (x->text.err)
            code = ptlog_nomem();
        if (x->kept && *kept && sink->joint[0])
            ptlog_out_puts(sink->out, sink->joint);
        ptlog_out_write_block(sink->out, x->text.buf, x->text.len);
        x->text.len = 0;
        x->text.err = 0;
        if (x->kept) {
            *kept += x->kept;
            *last_ts = x->last_ts;
        }
        ptlog_progress_update(&prog, p->src->total_events / p->nunits * (u + 1));
        pthread_mutex_lock(&p->lock);
        x->done = 0;
        p->written++;
        pthread_cond_broadcast(&p->room);
        if (code)
            break;
    }
    pthread_mutex_unlock(&p->lock);
    ptlog_progress_end(&prog);
    return code;
}

/*
 * Whether src and sel can be read in ranges, in units of at least two:
 * then the log's first event was read (it resolves sel's relative times),
 * the reader's threads stopped, and p's chunks and units set.
 */
static int applies(parts *p, ptlog_src *src, ptlog_select *sel, const ptlog_sink *sink)
{
    tracelog_reader *r = ptlog_ptl_reader(src);
    if (!r || !sink->joint || sel->has_limit || sel->begin.set || sel->end.set)
        return 0;
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    if (!info.seekable || info.problems || info.chunks < 2)
        return 0;
    p->nchunks = info.chunks;
    /* Bounded in events and bytes (the texts held), and at least UNITS_PER_THREAD units a thread: the
       threads' shares even out on a small log too. */
    uint64_t bound = UNIT_EVENTS / (info.events / info.chunks + 1) + 1;
    uint64_t by_bytes = UNIT_BYTES / (info.raw_bytes / info.chunks + 1) + 1;
    bound = by_bytes < bound ? by_bytes : bound;
    uint64_t share = p->nchunks / (UNITS_PER_THREAD * (p->nthreads + 1));
    p->per_unit = bound < UNIT_CHUNKS_MAX ? bound : UNIT_CHUNKS_MAX;
    if (share < p->per_unit)
        p->per_unit = share ? share : 1;
    p->nunits = (p->nchunks + p->per_unit - 1) / p->per_unit;
    if (p->nunits < 2)
        return 0;
    tracelog_event ev;
    tracelog_status st = tracelog_reader_next(r, &ev);
    tracelog_reader_get_info(r, &info);
    if (st != TRACELOG_OK || info.problems) { /* the first chunk damaged, an empty log, an error: */
        tracelog_reader_rewind(r);            /* read from the start on one thread, met and reported there */
        return 0;
    }
    ptlog_select_resolve(sel, ev.timestamp_ns);
    if (src->yield_cpus)
        src->yield_cpus(src);
    return 1;
}

int ptlog_parts_events(ptlog_src *src, ptlog_select *sel, const ptlog_sink *sink, int threads)
{
    if (threads <= 0)
        return -1;
    parts *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->nthreads = (size_t)threads;
    if (!applies(p, src, sel, sink)) {
        free(p);
        return -1;
    }
    tracelog_reader *r = ptlog_ptl_reader(src);
    if (sel->where && src->upfront) { /* as the event loop: a misspelt field before any output */
        int bad = ptlog_where_check(sel->where, src);
        if (bad) {
            free(p);
            return bad;
        }
    }
    p->src = src;
    p->sel = sel;
    p->sink = sink;
    p->nring = 2 * (p->nthreads + 1);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->room, NULL);
    pthread_cond_init(&p->done, NULL);
    p->ring = calloc(p->nring, sizeof *p->ring);
    /* The calling thread reads its units on a clone too: src's reader, which reads on after a problem, then
       reports the problems in a whole read's order (none found by it out of order). */
    ptlog_src *own;
    int bad = !p->ring || ptlog_ptl_src_clone(src, &own) || worker_init(p, &p->w[p->nthreads], own);
    for (size_t i = 0; !bad && i < p->nring; i++)
        bad = ptlog_out_memory(&p->ring[i].text, TEXT_CAP);
    if (bad) {
        parts_free(p);
        tracelog_reader_rewind(r);
        return -1; /* no memory for it: read as before, from the start */
    }
    start_threads(p);
    uint64_t kept = 0, last_ts = 0, from, nchunks = p->nchunks;
    int rc = write_units(p, &kept, &last_ts, &from);
    stop_threads(p);
    parts_free(p);
    if (rc)
        return rc;
    sink->resume(sink->state, kept, last_ts);
    if (from < nchunks) { /* a problem: read on as a whole read does, and report as it does */
        tracelog_reader_read_range(r, from, nchunks);
        return ptlog_src_events(src, sel, sink->each, sink->state);
    }
    return src->finish(src);
}
