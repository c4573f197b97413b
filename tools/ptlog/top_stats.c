/*
 * ptlog top's counters: two open-addressing tables (event types by id,
 * threads by pid and pthread id) of fixed capacity, so that a log naming
 * millions of threads cannot make top grow without bound.
 */
#include "top_stats.h"

#include <stdlib.h>
#include <string.h>

#define TYPE_SLOTS (2 * TOP_TYPES_MAX)
#define THREAD_SLOTS (2 * TOP_THREADS_MAX)

int top_stats_init(top_stats *s)
{
    memset(s, 0, sizeof *s);
    s->types = calloc(TYPE_SLOTS, sizeof *s->types);
    s->threads = calloc(THREAD_SLOTS, sizeof *s->threads);
    if (!s->types || !s->threads || pthread_mutex_init(&s->lock, NULL) != 0) {
        free(s->types);
        free(s->threads);
        return -1;
    }
    return 0;
}

void top_stats_free(top_stats *s)
{
    pthread_mutex_destroy(&s->lock);
    free(s->types);
    free(s->threads);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    return x ^ (x >> 33);
}

static void set_name(char *dst, const char *src)
{
    size_t n = src ? strnlen(src, TOP_NAME_MAX) : 0;
    memcpy(dst, src ? src : "", n);
    dst[n] = '\0';
}

/* The slot of id; NULL when the table is full (its events count in the totals only). */
static top_type *type_slot(top_stats *s, uint32_t id, const char *name)
{
    for (size_t i = mix(id) % TYPE_SLOTS, n = 0; n < TYPE_SLOTS; i = (i + 1) % TYPE_SLOTS, n++) {
        top_type *t = &s->types[i];
        if (t->used && t->id == id) {
            if (name && strncmp(t->name, name, TOP_NAME_MAX) != 0) /* a later definition renames it */
                set_name(t->name, name);
            return t;
        }
        if (!t->used) {
            if (s->ntypes >= TOP_TYPES_MAX)
                return NULL;
            t->used = 1;
            t->id = id;
            set_name(t->name, name);
            s->ntypes++;
            return t;
        }
    }
    return NULL;
}

static top_thread *thread_slot(top_stats *s, const tracelog_event *ev)
{
    for (size_t i = mix(ev->tid ^ ((uint64_t)ev->pid << 40)) % THREAD_SLOTS, n = 0; n < THREAD_SLOTS;
         i = (i + 1) % THREAD_SLOTS, n++) {
        top_thread *t = &s->threads[i];
        if (t->used && t->pid == ev->pid && t->tid == ev->tid)
            return t;
        if (!t->used) {
            if (s->nthreads >= TOP_THREADS_MAX)
                return NULL;
            t->used = 1;
            t->pid = ev->pid;
            t->tid = ev->tid;
            s->nthreads++;
            return t;
        }
    }
    return NULL;
}

static void count(top_count *c, const tracelog_event *ev)
{
    c->events++;
    c->bytes += ev->payload_len;
}

void top_stats_add(top_stats *s, const tracelog_event *ev, const char *name, const char *thread_name)
{
    pthread_mutex_lock(&s->lock);
    count(&s->all, ev);
    if (ev->timestamp_ns > s->last_ts)
        s->last_ts = ev->timestamp_ns;
    top_type *t = type_slot(s, ev->event_id, name);
    if (t)
        count(&t->c, ev);
    top_thread *th = thread_slot(s, ev);
    if (th) {
        count(&th->c, ev);
        if (ev->kernel_tid) /* the latest: a pthread_t value may be reused by another thread */
            th->ktid = ev->kernel_tid;
        if (thread_name)
            set_name(th->name, thread_name);
    } else {
        s->other_thread_events++;
    }
    pthread_mutex_unlock(&s->lock);
}

static void tick_one(top_count *c, double seconds)
{
    c->rate = seconds > 0 ? (double)(c->events - c->mark) / seconds : 0;
    c->mark = c->events;
}

void top_stats_tick(top_stats *s, double seconds)
{
    tick_one(&s->all, seconds);
    for (size_t i = 0; i < TYPE_SLOTS; i++)
        if (s->types[i].used)
            tick_one(&s->types[i].c, seconds);
    for (size_t i = 0; i < THREAD_SLOTS; i++)
        if (s->threads[i].used)
            tick_one(&s->threads[i].c, seconds);
}
