/*
 * Processes, threads and begin/end slices of the trace-viewer outputs
 * (chrome.c, perfetto.c): what both need to draw an event on a track.
 *
 *   - a process per pid, with the pid it is written with: below 2^31
 *     (consumers need a positive int32; only a JSON input holds a larger
 *     pid: those are renumbered down from INT32_MAX);
 *   - a thread per (pid, pthread_t), whose tid is its kernel thread id
 *     where the log knows it, else a small number per process (1, 2, ...
 *     skipping the numbers taken): a pthread_t is a pointer, and viewers put
 *     every thread with an out-of-range tid on one track. A kernel tid that
 *     another thread of the process already shows gets a small number too.
 *     A pthread_t seen again with another kernel tid is a new thread (the
 *     value was reused);
 *   - an event named "X:begin" or "X.begin" opens a slice "X" on its thread,
 *     and "X:end" (resp. "X.end") closes it when the innermost open slice of
 *     that thread is "X" with that separator; an end that matches no open
 *     slice, or a begin past PTLOG_TRACKS_MAX_DEPTH open slices, is an
 *     instant event with its full name.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "ptlog.h"

void ptlog_tracks_init(ptlog_tracks *t, ptlog_src *src, ptlog_track_fn on_new, void *ctx)
{
    memset(t, 0, sizeof *t);
    t->src = src;
    t->on_new = on_new;
    t->ctx = ctx;
}

ptlog_track_process *ptlog_tracks_process(ptlog_tracks *t, uint32_t pid)
{
    size_t i = ptlog_idmap_get(&t->process_index, pid);
    if (i != SIZE_MAX)
        return &t->processes[i];
    ptlog_track_process *v = tl_grow(t->processes, &t->cap, t->nprocesses + 1, sizeof *v);
    if (!v)
        return NULL;
    t->processes = v;
    if (ptlog_idmap_put(&t->process_index, pid, t->nprocesses))
        return NULL;
    ptlog_track_process *p = &t->processes[t->nprocesses++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->out_pid = pid <= INT32_MAX ? pid : INT32_MAX - t->big_pids++;
    p->serial = ++t->serials;
    if (t->on_new && t->on_new(t->ctx, p, NULL))
        return NULL;
    return p;
}

/* The tid a new thread is written with: its kernel tid unless taken, else the next free small number. */
static int pick_tid(ptlog_track_process *p, uint32_t ktid, uint32_t *tid)
{
    uint32_t n = ktid && ktid <= INT32_MAX && ptlog_idmap_get(&p->tids_taken, ktid) == SIZE_MAX ? ktid : 0;
    while (!n) {
        uint32_t next = ++p->next_tid;
        if (ptlog_idmap_get(&p->tids_taken, next) == SIZE_MAX)
            n = next;
    }
    *tid = n;
    return ptlog_idmap_put(&p->tids_taken, n, 1);
}

/* Whether thread th is ev's (a pthread_t seen again with another kernel tid is a new thread). */
static int is_thread_of(const ptlog_track_thread *th, const tracelog_event *ev)
{
    return th->pthread == ev->tid && (!ev->kernel_tid || !th->ktid || th->ktid == ev->kernel_tid);
}

ptlog_track_thread *ptlog_tracks_thread(ptlog_tracks *t, ptlog_track_process *p, const tracelog_event *ev)
{
    size_t i = ptlog_idmap_get(&p->thread_index, ev->tid);
    if (i != SIZE_MAX && is_thread_of(&p->threads[i], ev))
        return &p->threads[i];
    if (t->nthreads >= PTLOG_TRACKS_MAX_THREADS) {
        t->too_many = 1;
        return NULL;
    }
    ptlog_track_thread *v = tl_grow(p->threads, &p->cap, p->nthreads + 1, sizeof *v);
    if (!v)
        return NULL;
    p->threads = v;
    if (ptlog_idmap_put(&p->thread_index, ev->tid, p->nthreads))
        return NULL;
    ptlog_track_thread *th = &p->threads[p->nthreads++];
    t->nthreads++;
    memset(th, 0, sizeof *th);
    th->pthread = ev->tid;
    th->ktid = ev->kernel_tid;
    th->serial = ++t->serials;
    if (pick_tid(p, th->ktid, &th->tid))
        return NULL;
    if (t->on_new && t->on_new(t->ctx, p, th))
        return NULL;
    return th;
}

/* name's shape, from its slot when its address is there (stable: not the caller's buffer of an unknown id). */
static const ptlog_slice_shape *shape_of(ptlog_tracks *t, const char *name, int stable, ptlog_slice_shape *tmp)
{
    ptlog_slice_shape *x = tmp;
    if (stable) {
        uint64_t h = (uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull;
        x = &t->shapes[(h >> 32) % PTLOG_SHAPE_SLOTS];
        if (x->name == name)
            return x;
    }
    x->name = name;
    x->len = strlen(name);
    x->begin = ptlog_slice_base_len(name, "begin", &x->begin_sep);
    x->end = ptlog_slice_base_len(name, "end", &x->end_sep);
    return x;
}

size_t ptlog_slice_base_len(const char *name, const char *word, char *sep)
{
    size_t n = strlen(name), k = strlen(word);
    if (n <= k + 1 || strcmp(name + n - k, word) != 0 || (name[n - k - 1] != ':' && name[n - k - 1] != '.'))
        return 0;
    *sep = name[n - k - 1];
    return n - k - 1;
}

/* Does the innermost open slice of th have the base name and separator of an "X:end" / "X.end" event? */
static int closes_innermost(ptlog_tracks *t, const ptlog_track_thread *th, const char *name, size_t n, char sep)
{
    if (!th->nopen)
        return 0;
    const char *open = t->src->type_name(t->src, th->open[th->nopen - 1]);
    if (!open)
        return 0;
    ptlog_slice_shape tmp;
    const ptlog_slice_shape *o = shape_of(t, open, t->src->type_names_stable, &tmp);
    return o->begin == n && o->begin_sep == sep && memcmp(open, name, n) == 0;
}

static int push_slice(ptlog_track_thread *th, uint32_t id)
{
    uint32_t *v = tl_grow(th->open, &th->cap, th->nopen + 1, sizeof *v);
    if (!v)
        return -1;
    th->open = v;
    th->open[th->nopen++] = id;
    return 0;
}

/*
 * What ev (of a type whose name has this shape) does on its thread: 'B'
 * opens a slice, 'E' closes the innermost one, 'i' is an instant; *len is
 * the length of the name to show (the base name of a slice). -1 when out of
 * memory.
 */
static int slice(ptlog_tracks *t, ptlog_track_thread *th, const tracelog_event *ev, const ptlog_slice_shape *shape,
                 size_t *len)
{
    ptlog_slice_shape x = *shape; /* a copy: closes_innermost may take its slot for the open slice's name */
    *len = x.len;
    if (x.begin && th->nopen < PTLOG_TRACKS_MAX_DEPTH && t->nopen < PTLOG_TRACKS_MAX_OPEN) {
        if (push_slice(th, ev->event_id))
            return -1;
        t->nopen++;
        *len = x.begin;
        return 'B';
    }
    if (x.end && closes_innermost(t, th, x.name, x.end, x.end_sep)) {
        th->nopen--;
        t->nopen--;
        *len = x.end;
        return 'E';
    }
    return 'i';
}

int ptlog_tracks_place(ptlog_tracks *t, const tracelog_event *ev, const char **name, char unknown[32], size_t *len,
                       ptlog_track_process **p, ptlog_track_thread **th)
{
    /* The last event's process, then its thread: a process's threads take turns, its pid stays. */
    *p = t->have_last && t->processes[t->last_process].pid == ev->pid ? &t->processes[t->last_process]
                                                                       : ptlog_tracks_process(t, ev->pid);
    if (!*p)
        return -1;
    if (t->have_last && *p == &t->processes[t->last_process] && is_thread_of(&(*p)->threads[t->last_thread], ev))
        *th = &(*p)->threads[t->last_thread];
    else if (!(*th = ptlog_tracks_thread(t, *p, ev)))
        return -1;
    t->last_process = (size_t)(*p - t->processes);
    t->last_thread = (size_t)(*th - (*p)->threads);
    t->have_last = 1;
    int stable = *name != NULL && t->src->type_names_stable; /* else the name's address may be another's later */
    if (!*name) {
        memcpy(unknown, "event#", 6);
        unknown[6 + ptlog_fmt_u64(ev->event_id, unknown + 6)] = 0;
        *name = unknown;
    }
    ptlog_slice_shape tmp;
    return slice(t, *th, ev, shape_of(t, *name, stable, &tmp), len);
}

int ptlog_tracks_error(const ptlog_tracks *t)
{
    if (!t->too_many)
        return ptlog_nomem();
    ptlog_msg(t->src->name,
              "more than %d threads: Chrome and Perfetto output draw a track for each, and keep each one's "
              "state; convert a part of the log (ptlog filter --pid, --tid, --begin, --end)",
              PTLOG_TRACKS_MAX_THREADS);
    return PTLOG_EXIT_INPUT;
}

void ptlog_tracks_close_open(ptlog_tracks *t, ptlog_close_fn fn, void *ctx)
{
    for (size_t i = 0; i < t->nprocesses; i++) {
        ptlog_track_process *p = &t->processes[i];
        for (size_t j = 0; j < p->nthreads; j++) {
            ptlog_track_thread *th = &p->threads[j];
            while (th->nopen) {
                t->nopen--;
                const char *name = t->src->type_name(t->src, th->open[--th->nopen]);
                char sep;
                size_t n = name ? ptlog_slice_base_len(name, "begin", &sep) : 0;
                fn(ctx, p, th, name ? name : "", n);
            }
        }
    }
}

void ptlog_tracks_free(ptlog_tracks *t)
{
    for (size_t i = 0; i < t->nprocesses; i++) {
        ptlog_track_process *p = &t->processes[i];
        for (size_t j = 0; j < p->nthreads; j++)
            free(p->threads[j].open);
        free(p->threads);
        ptlog_idmap_free(&p->thread_index);
        ptlog_idmap_free(&p->tids_taken);
    }
    free(t->processes);
    ptlog_idmap_free(&t->process_index);
    memset(t, 0, sizeof *t);
}
