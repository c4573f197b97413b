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

ptlog_track_thread *ptlog_tracks_thread(ptlog_tracks *t, ptlog_track_process *p, const tracelog_event *ev)
{
    size_t i = ptlog_idmap_get(&p->thread_index, ev->tid);
    if (i != SIZE_MAX && (!ev->kernel_tid || !p->threads[i].ktid || p->threads[i].ktid == ev->kernel_tid))
        return &p->threads[i];
    ptlog_track_thread *v = tl_grow(p->threads, &p->cap, p->nthreads + 1, sizeof *v);
    if (!v)
        return NULL;
    p->threads = v;
    if (ptlog_idmap_put(&p->thread_index, ev->tid, p->nthreads))
        return NULL;
    ptlog_track_thread *th = &p->threads[p->nthreads++];
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
    char open_sep;
    return open && ptlog_slice_base_len(open, "begin", &open_sep) == n && open_sep == sep &&
           memcmp(open, name, n) == 0;
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

int ptlog_tracks_slice(ptlog_tracks *t, ptlog_track_thread *th, const tracelog_event *ev, const char *name,
                       size_t *len)
{
    size_t k;
    char sep;
    *len = strlen(name);
    if ((k = ptlog_slice_base_len(name, "begin", &sep)) && th->nopen < PTLOG_TRACKS_MAX_DEPTH) {
        if (push_slice(th, ev->event_id))
            return -1;
        *len = k;
        return 'B';
    }
    if ((k = ptlog_slice_base_len(name, "end", &sep)) && closes_innermost(t, th, name, k, sep)) {
        th->nopen--;
        *len = k;
        return 'E';
    }
    return 'i';
}

int ptlog_tracks_place(ptlog_tracks *t, const tracelog_event *ev, const char **name, char unknown[32], size_t *len,
                       ptlog_track_process **p, ptlog_track_thread **th)
{
    *p = ptlog_tracks_process(t, ev->pid);
    *th = *p ? ptlog_tracks_thread(t, *p, ev) : NULL;
    if (!*th)
        return -1;
    if (!*name) {
        memcpy(unknown, "event#", 6);
        unknown[6 + ptlog_fmt_u64(ev->event_id, unknown + 6)] = 0;
        *name = unknown;
    }
    return ptlog_tracks_slice(t, *th, ev, *name, len);
}

void ptlog_tracks_close_open(ptlog_tracks *t, ptlog_close_fn fn, void *ctx)
{
    for (size_t i = 0; i < t->nprocesses; i++) {
        ptlog_track_process *p = &t->processes[i];
        for (size_t j = 0; j < p->nthreads; j++) {
            ptlog_track_thread *th = &p->threads[j];
            while (th->nopen) {
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
