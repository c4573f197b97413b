/*
 * Read ahead (tracelog_reader_set_read_ahead): n threads each load one of
 * the chunks after the one being delivered (load.c: read, checksum, zstd,
 * planes), so that on a machine with CPUs to spare the caller's thread
 * spends its time on the events. Each thread owns one merge slot and trades
 * its buffers with the reader's slot when its chunk is taken; it never
 * touches the reader but through its loader (pread on a seekable file, the
 * options, the salt), and its problems are recorded by the caller's thread
 * when it takes the chunk, so the reader's events and problems are those of
 * loads on the caller's thread. Every wait is for one chunk's load, bounded
 * by the reader's limits.
 *
 * A caller that would wait for a chunk (it reads faster than the threads
 * load: a filter) loads a later one itself meanwhile, into a slot of its own
 * (the last worker, which has no thread): so the loading is shared between
 * the threads and the caller where the caller has time, and left to the
 * threads where it has not (formatting every event).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/nocancel.h"
#include "reader/internal.h"

enum ahead_state {
    AHEAD_IDLE,   /* nothing asked: the slot is the thread's to reuse */
    AHEAD_QUEUED, /* asked, or being loaded: the slot is the thread's */
    AHEAD_DONE,   /* loaded: the slot, st and problem wait for take */
};

typedef struct ahead_worker {
    struct tl_read_ahead *pool;
    pthread_t thread;
    enum ahead_state state;
    size_t index;    /* the chunk queued or loaded */
    chunk_ref chunk; /* its copy: the thread reads nothing of the reader's list */
    tl_merge_slot slot;
    tl_buf scratch;
    tl_loader loader;
    tracelog_status st;
    tl_load_problem problem;
} ahead_worker;

struct tl_read_ahead {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* any change of a worker's state, or stop */
    int stop;
    size_t n;          /* workers with a thread; w[n] is the caller's (no thread) */
    unsigned long hits, helped;
    ahead_worker w[];
};

static void *worker_main(void *arg)
{
    ahead_worker *w = arg;
    tl_read_ahead *a = w->pool;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && w->state != AHEAD_QUEUED)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop)
            break;
        pthread_mutex_unlock(&a->mu);
        tracelog_status st = tl_load_indexed(&w->loader, &w->chunk, &w->slot, &w->problem);
        pthread_mutex_lock(&a->mu);
        w->st = st;
        w->state = AHEAD_DONE;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

/* Frees the pool and what its workers hold (their threads have ended); the caller's slot borrows its dctx. */
static void pool_free(tl_read_ahead *a)
{
    for (size_t i = 0; i <= a->n; i++) {
        ahead_worker *w = &a->w[i];
        tl_chunk_cursor_free(&w->slot.cur);
        tl_buf_free(&w->slot.payload);
        tl_buf_free(&w->scratch);
        if (i < a->n)
            ZSTD_freeDCtx(w->loader.dctx);
    }
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

/* Stops the threads of the first `started` workers and waits for them. */
static void pool_join(tl_read_ahead *a, size_t started)
{
    int cancel = tl_nocancel_begin();
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    for (size_t i = 0; i < started; i++)
        pthread_join(a->w[i].thread, NULL);
    tl_nocancel_end(cancel);
}

tl_read_ahead *tl_read_ahead_start(tracelog_reader *r, size_t n)
{
    tl_read_ahead *a = calloc(1, sizeof *a + (n + 1) * sizeof a->w[0]);
    if (!a)
        return NULL;
    if (pthread_mutex_init(&a->mu, NULL)) {
        free(a);
        return NULL;
    }
    if (pthread_cond_init(&a->cv, NULL)) {
        pthread_mutex_destroy(&a->mu);
        free(a);
        return NULL;
    }
    a->n = n;
    /* The caller's slot loads on the caller's thread: with the reader's own dctx and buffer. */
    ahead_worker *own = &a->w[n];
    own->pool = a;
    own->loader = tl_reader_loader(r);
    /* Signals stay with the caller's threads: the program's handlers never run on these. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    size_t started = 0;
    for (; started < n; started++) {
        ahead_worker *w = &a->w[started];
        w->pool = a;
        w->loader = (tl_loader){&r->src, &r->opt, r->salt32, ZSTD_createDCtx(), &w->scratch, 0};
        if (!w->loader.dctx || pthread_create(&w->thread, NULL, worker_main, w))
            break;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started < n) {
        pool_join(a, started);
        pool_free(a); /* the workers not made hold nothing */
        return NULL;
    }
    return a;
}

void tl_read_ahead_stop(tl_read_ahead *a)
{
    if (!a)
        return;
    pool_join(a, a->n);
    pool_free(a);
}

/*
 * Chunks of fewer events and bytes than these are left to the caller's
 * thread: handing one over (a wake-up, a wait, a trade of buffers) costs
 * more than loading it, and a log of small flushes is all such chunks
 * (100,000 one-event chunks: `ptlog info` took 1.44 s with a thread, 0.23 s
 * without the handovers).
 */
#define AHEAD_MIN_EVENTS 16u
#define AHEAD_MIN_BODY (16u << 10)

static int worth_handing(const chunk_ref *c)
{
    return !c->bad && (c->ch.event_count >= AHEAD_MIN_EVENTS || c->ch.raw_size >= AHEAD_MIN_BODY);
}

/* The worker asked for chunk index (queued or loaded), or NULL. Under the lock. */
static ahead_worker *holding(tl_read_ahead *a, size_t index)
{
    for (size_t i = 0; i <= a->n; i++)
        if (a->w[i].state != AHEAD_IDLE && a->w[i].index == index)
            return &a->w[i];
    return NULL;
}

void tl_read_ahead_queue(tl_read_ahead *a, size_t from, const chunk_ref *chunks, size_t nchunks)
{
    pthread_mutex_lock(&a->mu);
    /* A chunk loaded that is no longer ahead (after a seek, a rewind, a failed load) is dropped. */
    for (size_t i = 0; i <= a->n; i++) {
        ahead_worker *w = &a->w[i];
        if (w->state == AHEAD_DONE && (w->index < from || w->index - from > a->n))
            w->state = AHEAD_IDLE;
    }
    size_t next_idle = 0, queued = 0;
    for (size_t j = from; j < nchunks && j - from <= a->n; j++) {
        if (!worth_handing(&chunks[j]) || holding(a, j))
            continue;
        while (next_idle < a->n && a->w[next_idle].state != AHEAD_IDLE)
            next_idle++;
        if (next_idle == a->n)
            break;
        ahead_worker *w = &a->w[next_idle];
        w->index = j;
        w->chunk = chunks[j];
        w->state = AHEAD_QUEUED;
        queued++;
    }
    if (queued) /* else the threads would wake for nothing: a chunk a call when they are left small ones */
        pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

/*
 * While chunk `index` is being loaded: the caller loads the first chunk of
 * the window after it that nobody holds, into its own slot, if that slot is
 * free. 1 when it did (the lock was released meanwhile). Under the lock.
 */
static int help(tl_read_ahead *a, size_t index, const chunk_ref *chunks, size_t nchunks)
{
    ahead_worker *own = &a->w[a->n];
    if (own->state != AHEAD_IDLE)
        return 0;
    for (size_t j = index + 1; j < nchunks && j - index <= a->n + 1; j++) {
        if (!worth_handing(&chunks[j]) || holding(a, j))
            continue;
        own->index = j;
        own->chunk = chunks[j];
        own->state = AHEAD_QUEUED; /* held: the threads leave it */
        pthread_mutex_unlock(&a->mu);
        tracelog_status st = tl_load_indexed(&own->loader, &own->chunk, &own->slot, &own->problem);
        pthread_mutex_lock(&a->mu);
        own->st = st;
        own->state = AHEAD_DONE;
        a->helped++;
        return 1;
    }
    return 0;
}

int tl_read_ahead_take(tl_read_ahead *a, size_t index, const chunk_ref *chunks, size_t nchunks, tl_merge_slot *m,
                       tracelog_status *st, tl_load_problem *p)
{
    pthread_mutex_lock(&a->mu);
    ahead_worker *w = holding(a, index);
    if (!w) {
        pthread_mutex_unlock(&a->mu);
        return 0;
    }
    int cancel = tl_nocancel_begin(); /* the wait holds the pool's mutex when it returns */
    while (w->state == AHEAD_QUEUED)
        if (!help(a, index, chunks, nchunks))
            pthread_cond_wait(&a->cv, &a->mu);
    tl_nocancel_end(cancel);
    tl_chunk_cursor cur = m->cur;
    tl_buf payload = m->payload;
    m->cur = w->slot.cur;
    m->payload = w->slot.payload;
    m->off = w->slot.off;
    m->seq = w->slot.seq;
    w->slot.cur = cur;
    w->slot.payload = payload;
    *st = w->st;
    *p = w->problem;
    w->state = AHEAD_IDLE;
    a->hits++;
    pthread_mutex_unlock(&a->mu);
    return 1;
}

unsigned long tl_read_ahead_hits(const tl_read_ahead *a) { return a->hits; }
unsigned long tl_read_ahead_helped(const tl_read_ahead *a) { return a->helped; }
