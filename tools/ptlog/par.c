/*
 * Formatting on several threads (dump, convert to JSON and JSON Lines).
 *
 * The reading thread reads and selects as on one thread, and copies each
 * event kept into a batch, with its thread's name looked up there (the
 * reader's position decides it). Formatter threads turn whole batches into
 * text, each with a state of the sink's own and a source of its own
 * (replay_src) that answers the thread name from the batch and the type
 * lookups from the log's tables; a batch starts from the state the events
 * before it leave (sink->resume). The reading thread
 * writes the texts in batch order, and formats a batch itself when the
 * ring of batches is full, so the output is byte for byte the one thread's.
 *
 * The threads start with the first full batch, and only when more than
 * half of the events read so far were kept: then formatting is the work,
 * and the source's own threads (read ahead) make way for them. A selection
 * that keeps few (--where, --event) is reading and filtering, which read
 * ahead shares, and a small log never starts a thread.
 *
 * Only for a source whose type lookups may run on other threads while it
 * is read (lookups_shared: a seekable .ptl log), since a payload's event
 * set names any type.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptlog.h"

#define BATCH_EVENTS 2048
#define BATCH_BYTES (256u * 1024) /* payload bytes copied into a batch (a larger payload gets a batch alone) */
#define TEXT_CAP (512u * 1024)
#define FORMAT_THREADS_DEFAULT_MAX 3

typedef struct item { /* one cache line: the reading thread writes one per event */
    tracelog_event ev; /* payload: its offset in the batch's bytes */
    const char *tname;
} item;
_Static_assert(sizeof(item) <= 64, "an item per cache line");

enum { FREE, FILLING, READY, TAKEN, DONE };

typedef struct batch {
    int state;
    size_t n;
    uint64_t kept;    /* events kept before this batch's first */
    uint64_t prev_ts; /* the timestamp of the last of them */
    item *items;
    unsigned char *bytes;
    size_t nbytes, cap_bytes;
    ptlog_out text; /* what a formatter made of it (swapped with the formatter's buffer) */
} batch;

/* The source a formatter's sink reads: the batch's thread names, and the log's type table. */
typedef struct replay_src {
    ptlog_src base;
    ptlog_src *real;
    const item *cur;
    struct ptlog_type_memo memo; /* its own: the memo is filled as ids come */
} replay_src;

typedef struct par par;

typedef struct formatter {
    par *p;
    replay_src src;
    ptlog_out out;
    void *state; /* the sink's, writing into out and reading src */
} formatter;

struct par {
    ptlog_src *src;
    const ptlog_select *sel;
    const ptlog_sink *sink;
    ptlog_out *out;
    pthread_mutex_t lock;
    pthread_cond_t ready, done; /* a batch to format; a batch formatted */
    int stop;
    batch *ring;
    size_t nring;
    batch *filling; /* ring[fill % nring] */
    uint64_t fill, write; /* batches handed to the formatters, and written out */
    uint64_t kept, last_ts;
    int code;
    size_t nthreads, started;
    int decided; /* whether to start the threads (at the first full batch) */
    pthread_t thread[PTLOG_FORMAT_THREADS_MAX];
    formatter fmt[PTLOG_FORMAT_THREADS_MAX + 1]; /* the last is the reading thread's */
};

static const char *replay_type_name(ptlog_src *s, uint32_t id)
{
    ptlog_src *real = ((replay_src *)s)->real;
    return real->type_name(real, id);
}

static const tracelog_schema *replay_type_schema(ptlog_src *s, uint32_t id)
{
    ptlog_src *real = ((replay_src *)s)->real;
    return real->type_schema ? real->type_schema(real, id) : NULL;
}

static const char *replay_thread_name(ptlog_src *s, const tracelog_event *ev)
{
    (void)ev;
    return ((replay_src *)s)->cur->tname;
}

static int formatter_init(par *p, formatter *f)
{
    ptlog_src *real = p->src;
    f->p = p;
    f->src.real = real;
    f->src.base.name = real->name;
    f->src.base.meta = real->meta;
    f->src.base.format_major = real->format_major;
    f->src.base.format_minor = real->format_minor;
    f->src.base.type_name = replay_type_name;
    f->src.base.type_schema = replay_type_schema;
    f->src.base.thread_name = real->thread_name ? replay_thread_name : NULL;
    f->src.base.thread_names_stable = real->thread_names_stable;
    f->src.base.type_names_stable = real->type_names_stable;
    f->src.base.memo = &f->src.memo;
    if (ptlog_out_memory(&f->out, TEXT_CAP))
        return -1;
    f->state = p->sink->copy(p->sink->state, &f->out, &f->src.base);
    return f->state ? 0 : -1;
}

static void formatter_free(par *p, formatter *f)
{
    if (f->state)
        p->sink->free_copy(f->state);
    f->state = NULL;
    ptlog_out_abort(&f->out);
}

/* Formats b into f's buffer, then hands that buffer to b (and takes b's old one). */
static void format_batch(par *p, formatter *f, batch *b)
{
    p->sink->resume(f->state, b->kept, b->prev_ts);
    for (size_t i = 0; i < b->n; i++) {
        item *it = &b->items[i];
        tracelog_event ev = it->ev;
        ev.payload = b->bytes + (uintptr_t)ev.payload;
        f->src.cur = it;
        p->sink->each(f->state, &ev, ptlog_src_type_name(&f->src.base, ev.event_id));
    }
    ptlog_out t = b->text;
    b->text = f->out;
    f->out = t;
    f->out.len = 0;
}

/* The oldest batch ready to format, taken (under the lock); NULL if none. */
static batch *take_ready(par *p)
{
    for (uint64_t s = p->write; s < p->fill; s++) {
        batch *b = &p->ring[s % p->nring];
        if (b->state == READY) {
            b->state = TAKEN;
            return b;
        }
    }
    return NULL;
}

static void *format_thread(void *arg)
{
    formatter *f = arg;
    par *p = f->p;
    pthread_mutex_lock(&p->lock);
    for (;;) {
        batch *b = take_ready(p);
        if (!b) {
            if (p->stop)
                break;
            pthread_cond_wait(&p->ready, &p->lock);
            continue;
        }
        pthread_mutex_unlock(&p->lock);
        format_batch(p, f, b);
        pthread_mutex_lock(&p->lock);
        b->state = DONE;
        pthread_cond_signal(&p->done);
    }
    pthread_mutex_unlock(&p->lock);
    return NULL;
}

/* The formatter threads; fewer when one cannot start (the reading thread formats the batches left). */
static void start_threads(par *p)
{
    for (; p->started < p->nthreads; p->started++) {
        formatter *f = &p->fmt[p->started];
        if (formatter_init(p, f) || ptlog_thread_start(&p->thread[p->started], format_thread, f)) {
            formatter_free(p, f); /* fewer threads: the reading thread formats the rest */
            break;
        }
    }
}

/* At the first full batch: formatting is the work when most of the events read were kept. */
static void decide(par *p)
{
    p->decided = 1;
    if (p->kept * 2 <= p->sel->read)
        return;
    if (p->src->yield_cpus)
        p->src->yield_cpus(p->src);
    start_threads(p);
}

/* Hands the batch being filled to the formatters. */
static void submit(par *p)
{
    pthread_mutex_lock(&p->lock);
    p->filling->state = READY;
    p->fill++;
    pthread_cond_signal(&p->ready);
    pthread_mutex_unlock(&p->lock);
}

/*
 * Writes out the batches formatted, in order, and formats one itself when
 * none is, until `room` batches of the ring are free (nring: everything
 * written). Called with the lock held.
 */
static void drain(par *p, size_t room)
{
    formatter *own = &p->fmt[p->nthreads];
    while (p->fill - p->write > p->nring - room) {
        batch *w = &p->ring[p->write % p->nring];
        if (w->state == DONE) {
            pthread_mutex_unlock(&p->lock);
            if (w->text.err && !p->code)
                p->code = ptlog_nomem();
            ptlog_out_write_block(p->out, w->text.buf, w->text.len);
            w->text.len = 0;
            w->text.err = 0;
            pthread_mutex_lock(&p->lock);
            w->state = FREE;
            p->write++;
            continue;
        }
        batch *b = take_ready(p);
        if (b) {
            pthread_mutex_unlock(&p->lock);
            format_batch(p, own, b);
            pthread_mutex_lock(&p->lock);
            b->state = DONE;
            continue;
        }
        pthread_cond_wait(&p->done, &p->lock);
    }
}

/* The next batch to fill, empty, starting after the events kept so far. */
static batch *next_batch(par *p)
{
    pthread_mutex_lock(&p->lock);
    drain(p, 1);
    batch *b = p->filling = &p->ring[p->fill % p->nring];
    b->state = FILLING;
    pthread_mutex_unlock(&p->lock);
    b->n = 0;
    b->nbytes = 0;
    b->kept = p->kept;
    b->prev_ts = p->last_ts;
    return b;
}

static int copy_payload(batch *b, const tracelog_event *ev)
{
    if (b->cap_bytes - b->nbytes < ev->payload_len) {
        size_t cap = b->nbytes + ev->payload_len;
        cap = cap > BATCH_BYTES ? cap : BATCH_BYTES;
        unsigned char *n = realloc(b->bytes, cap);
        if (!n)
            return -1;
        b->bytes = n;
        b->cap_bytes = cap;
    }
    if (ev->payload_len)
        memcpy(b->bytes + b->nbytes, ev->payload, ev->payload_len);
    b->nbytes += ev->payload_len;
    return 0;
}

/* The sink's `each` on the reading thread: the event into the batch, with its thread's name. */
static int keep_event(void *ctx, const tracelog_event *ev, const char *name)
{
    (void)name; /* looked up again by the formatter, in the same table */
    par *p = ctx;
    batch *b = p->filling;
    if (b->n == BATCH_EVENTS || (b->n && b->nbytes + ev->payload_len > BATCH_BYTES)) {
        if (!p->decided)
            decide(p);
        submit(p);
        b = next_batch(p);
        if (p->code)
            return p->code;
    }
    item *it = &b->items[b->n];
    it->ev = *ev;
    it->ev.payload = (const void *)(uintptr_t)b->nbytes;
    if (copy_payload(b, ev))
        return ptlog_nomem();
    it->tname = ev->kernel_tid && p->src->thread_name ? p->src->thread_name(p->src, ev) : NULL;
    b->n++;
    p->kept++;
    p->last_ts = ev->timestamp_ns;
    return 0;
}

static void par_free(par *p)
{
    for (size_t i = 0; i < p->nring; i++) {
        free(p->ring[i].items);
        free(p->ring[i].bytes);
        ptlog_out_abort(&p->ring[i].text);
    }
    free(p->ring);
    for (size_t i = 0; i <= p->nthreads; i++)
        formatter_free(p, &p->fmt[i]);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->ready);
    pthread_cond_destroy(&p->done);
    free(p);
}

static par *par_new(ptlog_src *src, const ptlog_sink *sink, int threads)
{
    par *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->src = src;
    p->sink = sink;
    p->out = sink->out;
    p->nthreads = (size_t)threads;
    p->nring = 2 * (p->nthreads + 1);
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->ready, NULL);
    pthread_cond_init(&p->done, NULL);
    p->ring = calloc(p->nring, sizeof *p->ring);
    int bad = !p->ring || formatter_init(p, &p->fmt[p->nthreads]);
    for (size_t i = 0; !bad && i < p->nring; i++) {
        batch *b = &p->ring[i];
        b->items = malloc(BATCH_EVENTS * sizeof *b->items);
        b->bytes = malloc(BATCH_BYTES); /* never NULL: an empty payload points into it */
        b->cap_bytes = BATCH_BYTES;
        bad = !b->items || !b->bytes || ptlog_out_memory(&b->text, TEXT_CAP);
    }
    if (bad) {
        par_free(p);
        return NULL;
    }
    return p;
}

/*
 * Formatter threads: one per CPU this process may run on beyond the reading
 * thread's, at most FORMAT_THREADS_DEFAULT_MAX. PTLOG_FORMAT_THREADS sets
 * their number (0: the reading thread formats everything).
 */
static int format_threads = -1;

int ptlog_format_threads_init(void)
{
    const char *v = getenv("PTLOG_FORMAT_THREADS");
    if (v && *v) {
        if (ptlog_parse_threads(v, PTLOG_FORMAT_THREADS_MAX, &format_threads) == 0)
            return 0;
        ptlog_msg("PTLOG_FORMAT_THREADS", "expected a number of threads from 0 to %d, not '%s'",
                  PTLOG_FORMAT_THREADS_MAX, v);
        return PTLOG_EXIT_USAGE;
    }
    int spare = ptlog_cpus() - 1;
    format_threads = spare < FORMAT_THREADS_DEFAULT_MAX ? spare : FORMAT_THREADS_DEFAULT_MAX;
    return 0;
}

int ptlog_sink_events(ptlog_src *src, ptlog_select *sel, const ptlog_sink *sink)
{
    if (format_threads <= 0 || !sink->copy || !src->lookups_shared)
        return ptlog_src_events(src, sel, sink->each, sink->state);
    int rc = ptlog_parts_events(src, sel, sink, format_threads);
    if (rc >= 0)
        return rc;
    par *p = par_new(src, sink, format_threads);
    if (!p)
        return ptlog_src_events(src, sel, sink->each, sink->state); /* no memory for it: on one thread */
    p->sel = sel;
    p->filling = &p->ring[0];
    p->filling->state = FILLING;
    rc = ptlog_src_events(src, sel, keep_event, p);
    pthread_mutex_lock(&p->lock);
    if (p->filling->n) {
        pthread_mutex_unlock(&p->lock);
        submit(p);
        pthread_mutex_lock(&p->lock);
    }
    drain(p, p->nring); /* everything written; a last batch not full is the reading thread's if no thread runs */
    p->stop = 1;
    pthread_cond_broadcast(&p->ready);
    pthread_mutex_unlock(&p->lock);
    for (size_t i = 0; i < p->started; i++)
        pthread_join(p->thread[i], NULL);
    sink->resume(sink->state, p->kept, p->last_ts);
    if (p->code && rc <= PTLOG_EXIT_LOSS)
        rc = p->code;
    par_free(p);
    return rc;
}
