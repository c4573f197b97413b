/*
 * ptlog top's counters (top_stats.c): per event type and per thread, filled
 * by the thread that reads the log, read by the thread that draws, under
 * one mutex. Memory is bounded: at most TOP_TYPES_MAX types and
 * TOP_THREADS_MAX threads are kept apart; the events of any more are
 * counted in the totals (and as "other threads").
 */
#ifndef PTLOG_TOP_STATS_H
#define PTLOG_TOP_STATS_H

#include <pthread.h>
#include <stdint.h>

#include <tracelog.h>

#define TOP_TYPES_MAX 4096
#define TOP_THREADS_MAX 4096
#define TOP_NAME_MAX 64 /* bytes of a name kept (type or thread), escaped when drawn */

typedef struct top_count {
    uint64_t events, bytes;
    uint64_t mark;  /* events at the last refresh: the rate is events - mark per interval */
    double rate;    /* events per second over the last interval */
} top_count;

typedef struct top_type {
    uint32_t id;
    int used;
    char name[TOP_NAME_MAX + 1]; /* "" when the log names none */
    top_count c;
} top_type;

typedef struct top_thread {
    uint32_t pid, ktid;
    uint64_t tid;
    int used;
    char name[TOP_NAME_MAX + 1]; /* the thread's name when the log gives one (format 1.2), else "" */
    top_count c;
} top_thread;

typedef struct top_stats {
    pthread_mutex_t lock;
    top_type *types;     /* open addressing by id, TOP_TYPES_MAX * 2 slots */
    top_thread *threads; /* open addressing by (pid, tid), TOP_THREADS_MAX * 2 slots */
    size_t ntypes, nthreads;
    top_count all;
    uint64_t other_thread_events; /* threads past TOP_THREADS_MAX */
    tracelog_log_status status;   /* the log's latest (losses) */
    uint64_t last_ts;             /* timestamp of the newest event */
    int ended;                    /* the reader is done: end_rc says how */
    int end_rc;
} top_stats;

/* 0, or -1 out of memory. */
int top_stats_init(top_stats *s);
void top_stats_free(top_stats *s);

/* One event (the lock taken inside). name: its type's; thread_name: NULL when unknown. */
void top_stats_add(top_stats *s, const tracelog_event *ev, const char *name, const char *thread_name);

/* Under the lock: each count's rate over `seconds`, and a new mark. */
void top_stats_tick(top_stats *s, double seconds);

#endif
