/*
 * Per-thread statistics of `info --threads`: one record per (pid, tid, kernel
 * tid) with its event count and first and last timestamps (a pthread_t
 * reused by a later thread is another thread: another kernel tid). Records
 * are found through an open-addressing table keyed by the whole triple, hashed with
 * a per-process random seed: a crafted log cannot aim many threads at one
 * slot to make the pass quadratic.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "common/array.h"
#include "ptlog.h"

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t random_seed(void)
{
    /* 16 random bytes the kernel gives every process (no system call) */
    const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
    uint64_t seed = 0x6a09e667f3bcc908ull;
    if (r)
        memcpy(&seed, r, sizeof seed);
    return seed;
}

static size_t slot_of(const ptlog_threads *t, uint32_t pid, uint64_t tid, uint32_t ktid)
{
    return (size_t)mix(tid ^ mix(((uint64_t)ktid << 32 | pid) ^ t->seed)) & (t->nslots - 1);
}

/* Slot holding (pid, tid, ktid), or the empty slot where it goes. */
static size_t find(const ptlog_threads *t, uint32_t pid, uint64_t tid, uint32_t ktid)
{
    size_t i = slot_of(t, pid, tid, ktid);
    for (;;) {
        size_t k = t->slots[i];
        if (!k || (t->v[k - 1].pid == pid && t->v[k - 1].tid == tid && t->v[k - 1].ktid == ktid))
            return i;
        i = (i + 1) & (t->nslots - 1);
    }
}

static int grow_slots(ptlog_threads *t)
{
    size_t n = t->nslots ? 2 * t->nslots : 64;
    size_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    for (size_t k = 0; k < t->n; k++)
        t->slots[find(t, t->v[k].pid, t->v[k].tid, t->v[k].ktid)] = k + 1;
    return 0;
}

int ptlog_threads_count(ptlog_threads *t, uint32_t pid, uint64_t tid, uint32_t ktid, const char *name, uint64_t ts)
{
    if (!t->seed)
        t->seed = random_seed() | 1;
    if (2 * (t->n + 1) > t->nslots && grow_slots(t))
        return -1;
    size_t i = find(t, pid, tid, ktid);
    if (t->slots[i]) {
        ptlog_thread_stats *s = &t->v[t->slots[i] - 1];
        s->count++;
        if (ts < s->first)
            s->first = ts;
        if (ts > s->last)
            s->last = ts;
        if (name && strcmp(name, s->name) != 0) /* renamed: the latest name */
            snprintf(s->name, sizeof s->name, "%s", name);
        return 0;
    }
    ptlog_thread_stats *v = tl_grow(t->v, &t->cap, t->n + 1, sizeof *v);
    if (!v)
        return -1;
    t->v = v;
    t->v[t->n] = (ptlog_thread_stats){pid, tid, ktid, 1, ts, ts, ""};
    if (name)
        snprintf(t->v[t->n].name, sizeof t->v[t->n].name, "%s", name);
    t->slots[i] = ++t->n;
    return 0;
}

static int by_pid_first_tid(const void *a, const void *b)
{
    const ptlog_thread_stats *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x->ktid < y->ktid ? -1 : x->ktid > y->ktid;
}

void ptlog_threads_sort(ptlog_threads *t)
{
    if (t->n > 1)
        qsort(t->v, t->n, sizeof *t->v, by_pid_first_tid);
    /* the slots no longer match the records: counting is over */
    free(t->slots);
    t->slots = NULL;
    t->nslots = 0;
}

void ptlog_threads_free(ptlog_threads *t)
{
    free(t->v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}
