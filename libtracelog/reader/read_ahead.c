/*
 * Read ahead (tracelog_reader_set_read_ahead): one thread loads the chunk
 * after the one being delivered (load.c: read, checksum, zstd, planes), so
 * that on a machine with a CPU to spare the caller's thread spends its time
 * on the events. The thread owns one merge slot and trades its buffers with
 * the reader's slot when the chunk is taken; it never touches the reader but
 * through its loader (pread on a seekable file, the options, the salt), and
 * its problems are recorded by the caller's thread when it takes the chunk,
 * so the reader's events and problems are those of a load on the caller's
 * thread. Every wait is for one chunk's load, bounded by the reader's limits.
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "reader/internal.h"

enum ahead_state {
    AHEAD_IDLE,   /* nothing asked: the slot is the thread's to reuse */
    AHEAD_QUEUED, /* asked, or being loaded: the slot is the thread's */
    AHEAD_DONE,   /* loaded: the slot, st and problem wait for take */
};

struct tl_read_ahead {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv; /* any change of state or stop */
    enum ahead_state state;
    int stop;
    size_t index;    /* the chunk queued or loaded */
    chunk_ref chunk; /* its copy: the thread reads nothing of the reader's list */
    tl_merge_slot slot;
    tl_buf scratch;
    tl_loader loader;
    tracelog_status st;
    tl_load_problem problem;
    unsigned long hits; /* chunks taken as the thread loaded them */
};

static void *ahead_main(void *arg)
{
    tl_read_ahead *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->stop && a->state != AHEAD_QUEUED)
            pthread_cond_wait(&a->cv, &a->mu);
        if (a->stop)
            break;
        pthread_mutex_unlock(&a->mu);
        tracelog_status st = tl_load_indexed(&a->loader, &a->chunk, &a->slot, &a->problem);
        pthread_mutex_lock(&a->mu);
        a->st = st;
        a->state = AHEAD_DONE;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static void ahead_free(tl_read_ahead *a)
{
    tl_chunk_cursor_free(&a->slot.cur);
    tl_buf_free(&a->slot.payload);
    tl_buf_free(&a->scratch);
    ZSTD_freeDCtx(a->loader.dctx);
    pthread_cond_destroy(&a->cv);
    pthread_mutex_destroy(&a->mu);
    free(a);
}

tl_read_ahead *tl_read_ahead_start(tracelog_reader *r)
{
    tl_read_ahead *a = calloc(1, sizeof *a);
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
    a->loader = (tl_loader){&r->src, &r->opt, r->salt32, ZSTD_createDCtx(), &a->scratch};
    if (!a->loader.dctx) {
        ahead_free(a);
        return NULL;
    }
    /* Signals stay with the caller's threads: the program's handlers never run on this one. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int e = pthread_create(&a->thread, NULL, ahead_main, a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e) {
        ahead_free(a);
        return NULL;
    }
    return a;
}

void tl_read_ahead_stop(tl_read_ahead *a)
{
    if (!a)
        return;
    pthread_mutex_lock(&a->mu);
    a->stop = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->thread, NULL);
    ahead_free(a);
}

void tl_read_ahead_queue(tl_read_ahead *a, size_t index, const chunk_ref *c)
{
    pthread_mutex_lock(&a->mu);
    if (a->state == AHEAD_IDLE) {
        a->index = index;
        a->chunk = *c;
        a->state = AHEAD_QUEUED;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
}

int tl_read_ahead_take(tl_read_ahead *a, size_t index, tl_merge_slot *m, tracelog_status *st, tl_load_problem *p)
{
    pthread_mutex_lock(&a->mu);
    while (a->state == AHEAD_QUEUED)
        pthread_cond_wait(&a->cv, &a->mu);
    int hit = a->state == AHEAD_DONE && a->index == index;
    if (hit) {
        tl_chunk_cursor cur = m->cur;
        tl_buf payload = m->payload;
        m->cur = a->slot.cur;
        m->payload = a->slot.payload;
        m->off = a->slot.off;
        m->seq = a->slot.seq;
        a->slot.cur = cur;
        a->slot.payload = payload;
        *st = a->st;
        *p = a->problem;
        a->hits++;
    }
    a->state = AHEAD_IDLE;
    pthread_mutex_unlock(&a->mu);
    return hit;
}

unsigned long tl_read_ahead_hits(const tl_read_ahead *a) { return a->hits; }
