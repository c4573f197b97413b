/*
 * Chrome Trace Event format output ({"traceEvents": [...]}), opened by
 * Perfetto UI, chrome://tracing and speedscope. Conventions (README.md):
 *   - ts is in microseconds since the log's first event, with 3 decimals
 *     (nanosecond precision); otherData.origin_ns holds the absolute origin;
 *   - pid is the process id; tid is the thread's kernel thread id where the
 *     log knows it (as top, perf and gdb show it), else a small number per
 *     process (1, 2, ... in order of appearance, skipping the numbers taken):
 *     consumers need integers below 2^31, and a pthread_t is a pointer
 *     (Perfetto turned such tids into 0, putting every thread on one track).
 *     A kernel tid that another thread of the process already shows as its
 *     tid gets a small number too. The pthread_t is kept in args.pthread and
 *     in the thread's name;
 *   - an event named "X:begin" or "X.begin" opens a duration slice "X" (ph
 *     "B") on its thread and "X:end" (resp. "X.end") closes it (ph "E") when
 *     the innermost open slice of that thread is "X" with that separator; an end that matches no open slice, or a begin past
 *     MAX_DEPTH open slices, is an instant event with its full name; slices
 *     still open at the end are closed at the last timestamp with
 *     args.unfinished, so that B and E always balance per thread;
 *   - every other event is an instant event (ph "i", scope "t");
 *   - args.data is the payload as lowercase hex, args.truncation is present
 *     when the payload was cut (end_data, end_truncation for an E, whose
 *     args Chrome adds to those of its slice); a typed event's fields
 *     follow, as in JSON's "fields" (end_NAME for an E; field_NAME for a
 *     field named like one of these keys);
 *   - "M" events name each process ("program (pid N)" for the recording
 *     process, "pid N" otherwise) and each thread ("pthread 0x...").
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "ptlog.h"

#define MAX_DEPTH 256 /* open slices per thread; deeper ones become instant events */

typedef struct chrome_thread {
    uint64_t pthread;
    uint32_t ktid;     /* kernel thread id, 0 unknown */
    uint32_t tid;      /* as written */
    uint32_t *open;    /* event ids of the open slices, innermost last */
    size_t nopen, cap;
} chrome_thread;

typedef struct chrome_process {
    uint32_t pid;      /* as recorded */
    uint32_t out_pid;  /* as written: below 2^31 */
    uint32_t nthreads;
    uint32_t next_tid;        /* the next small number to try for a thread without kernel tid */
    ptlog_idmap thread_index; /* pthread -> index in threads (its latest thread) */
    ptlog_idmap tids_taken;   /* tids written for this process */
    chrome_thread *threads;
    size_t cap;
} chrome_process;

typedef struct chrome_writer {
    ptlog_out *out;
    ptlog_src *src;
    const ptlog_select *sel;
    ptlog_idmap process_index; /* pid -> index in processes */
    chrome_process *processes;
    size_t nprocesses, cap;
    uint32_t big_pids;         /* pids above INT32_MAX renumbered so far */
    uint64_t count;
    uint64_t last_ts;
} chrome_writer;

static void sep(chrome_writer *c)
{
    ptlog_out_puts(c->out, c->count++ ? ",\n" : "\n");
}

static void put_num(ptlog_out *out, uint64_t v)
{
    char *o = ptlog_out_room(out, 24);
    out->len += ptlog_fmt_u64(v, o);
}

static void put_hex(ptlog_out *out, uint64_t v)
{
    char *o = ptlog_out_room(out, 20);
    o[0] = '0';
    o[1] = 'x';
    out->len += 2 + ptlog_fmt_hex64(v, o + 2);
}

/* ,"pid":P,"tid":T */
static void put_ids(ptlog_out *out, const chrome_process *p, const chrome_thread *t)
{
    ptlog_out_puts(out, ",\"pid\":");
    put_num(out, p->out_pid);
    ptlog_out_puts(out, ",\"tid\":");
    put_num(out, t ? t->tid : 0);
}

static void name_process(chrome_writer *c, const chrome_process *p)
{
    const tracelog_metadata *m = &c->src->meta;
    char text[TRACELOG_TEXT_MAX + 64];
    const char *prog = strrchr(m->program, '/');
    prog = prog ? prog + 1 : m->program;
    if (p->pid == m->pid && *prog)
        snprintf(text, sizeof text, "%s (pid %u)", prog, p->pid);
    else
        snprintf(text, sizeof text, "pid %u", p->pid);
    sep(c);
    ptlog_out_puts(c->out, "{\"name\":\"process_name\",\"ph\":\"M\"");
    put_ids(c->out, p, NULL);
    ptlog_out_puts(c->out, ",\"args\":{\"name\":");
    ptlog_json_string(c->out, text, strlen(text));
    ptlog_out_puts(c->out, "}}");
}

static void name_thread(chrome_writer *c, const chrome_process *p, const chrome_thread *t)
{
    sep(c);
    ptlog_out_puts(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\"");
    put_ids(c->out, p, t);
    ptlog_out_puts(c->out, ",\"args\":{\"name\":\"pthread ");
    put_hex(c->out, t->pthread);
    ptlog_out_puts(c->out, "\"}}");
}

/* The process of pid, created (and named) on first use; NULL when out of memory. */
static chrome_process *process_of(chrome_writer *c, uint32_t pid)
{
    size_t i = ptlog_idmap_get(&c->process_index, pid);
    if (i != SIZE_MAX)
        return &c->processes[i];
    chrome_process *v = tl_grow(c->processes, &c->cap, c->nprocesses + 1, sizeof *v);
    if (!v)
        return NULL;
    c->processes = v;
    if (ptlog_idmap_put(&c->process_index, pid, c->nprocesses))
        return NULL;
    chrome_process *p = &c->processes[c->nprocesses++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    /* Only a JSON input can hold such a pid (Linux pids are below 2^22): its name keeps the real one. */
    p->out_pid = pid <= INT32_MAX ? pid : INT32_MAX - c->big_pids++;
    name_process(c, p);
    return p;
}

/* The tid an event's new thread is written with: its kernel tid unless taken, else the next free small number. */
static int pick_tid(chrome_process *p, uint32_t ktid, uint32_t *tid)
{
    uint32_t t = ktid && ktid <= INT32_MAX && ptlog_idmap_get(&p->tids_taken, ktid) == SIZE_MAX ? ktid : 0;
    while (!t) {
        uint32_t n = ++p->next_tid;
        if (ptlog_idmap_get(&p->tids_taken, n) == SIZE_MAX)
            t = n;
    }
    *tid = t;
    return ptlog_idmap_put(&p->tids_taken, t, 1);
}

/*
 * The thread of an event, created (and named) on first use; NULL when out of
 * memory. A pthread_t seen again with another kernel tid is a new thread
 * (the value was reused).
 */
static chrome_thread *thread_of(chrome_writer *c, chrome_process *p, const tracelog_event *ev)
{
    size_t i = ptlog_idmap_get(&p->thread_index, ev->tid);
    if (i != SIZE_MAX && (!ev->kernel_tid || !p->threads[i].ktid || p->threads[i].ktid == ev->kernel_tid))
        return &p->threads[i];
    chrome_thread *v = tl_grow(p->threads, &p->cap, p->nthreads + 1, sizeof *v);
    if (!v)
        return NULL;
    p->threads = v;
    if (ptlog_idmap_put(&p->thread_index, ev->tid, p->nthreads))
        return NULL;
    chrome_thread *t = &p->threads[p->nthreads++];
    memset(t, 0, sizeof *t);
    t->pthread = ev->tid;
    t->ktid = ev->kernel_tid;
    if (pick_tid(p, t->ktid, &t->tid))
        return NULL;
    name_thread(c, p, t);
    return t;
}

/*
 * Length of X in "X:WORD" or "X.WORD" (word "begin" or "end"), and its
 * separator in *sep; 0 if name is not of that form (or is only the suffix).
 */
static size_t base_len(const char *name, const char *word, char *sep)
{
    size_t n = strlen(name), k = strlen(word);
    if (n <= k + 1 || strcmp(name + n - k, word) != 0 || (name[n - k - 1] != ':' && name[n - k - 1] != '.'))
        return 0;
    *sep = name[n - k - 1];
    return n - k - 1;
}

/* Does the innermost open slice of t have the base name and separator of an "X:end" / "X.end" event? */
static int closes_innermost(chrome_writer *c, const chrome_thread *t, const char *name, size_t n, char sep)
{
    if (!t->nopen)
        return 0;
    const char *open = c->src->type_name(c->src, t->open[t->nopen - 1]);
    char open_sep;
    return open && base_len(open, "begin", &open_sep) == n && open_sep == sep && memcmp(open, name, n) == 0;
}

static int push_slice(chrome_thread *t, uint32_t id)
{
    uint32_t *v = tl_grow(t->open, &t->cap, t->nopen + 1, sizeof *v);
    if (!v)
        return -1;
    t->open = v;
    t->open[t->nopen++] = id;
    return 0;
}

static void put_ts(chrome_writer *c, uint64_t ts)
{
    ptlog_out *out = c->out;
    char *o = ptlog_out_room(out, 40), *p = o;
    uint64_t d = ts - c->sel->origin;
    if (ts < c->sel->origin) {
        *p++ = '-';
        d = c->sel->origin - ts;
    }
    p += ptlog_fmt_u64(d / 1000, p);
    *p++ = '.';
    *p++ = (char)('0' + d % 1000 / 100);
    *p++ = (char)('0' + d % 100 / 10);
    *p++ = (char)('0' + d % 10);
    out->len += (size_t)(p - o);
}

/*
 * args of an event. Those of an E are added to its slice's, whose B has the
 * thread: an E has only its payload, as end_data and end_truncation.
 */
static void put_args(ptlog_out *out, ptlog_src *src, const tracelog_event *ev, int end)
{
    tracelog_fields f;
    int typed = ptlog_event_fields(src, ev, &f) && f.present;
    if (end && !ev->payload_len && !ev->truncation && !typed)
        return;
    ptlog_out_puts(out, ",\"args\":{");
    if (!end) {
        ptlog_out_puts(out, "\"pthread\":\"");
        put_hex(out, ev->tid);
        ptlog_out_puts(out, "\"");
    }
    if (ev->payload_len || ev->truncation) {
        ptlog_out_puts(out, end ? "\"end_data\":\"" : ",\"data\":\"");
        static const char hexd[] = "0123456789abcdef";
        const unsigned char *b = ev->payload;
        for (uint32_t i = 0; i < ev->payload_len; i++) {
            char *h = ptlog_out_room(out, 2);
            h[0] = hexd[b[i] >> 4];
            h[1] = hexd[b[i] & 15];
            out->len += 2;
        }
        ptlog_out_puts(out, "\"");
        if (ev->truncation) {
            ptlog_out_puts(out, end ? ",\"end_truncation\":" : ",\"truncation\":");
            put_num(out, ev->truncation);
        }
    }
    if (typed) /* the fields, after pthread or end_data: always a comma */
        ptlog_json_field_members(out, &f, end ? "end_" : "", !end || ev->payload_len || ev->truncation);
    ptlog_out_puts(out, "}");
}

static int chrome_event(void *ctx, const tracelog_event *ev, const char *name)
{
    chrome_writer *c = ctx;
    ptlog_out *out = c->out;
    chrome_process *p = process_of(c, ev->pid);
    chrome_thread *t = p ? thread_of(c, p, ev) : NULL;
    if (!t)
        return ptlog_nomem();
    char unknown[32];
    if (!name) {
        memcpy(unknown, "event#", 6);
        unknown[6 + ptlog_fmt_u64(ev->event_id, unknown + 6)] = 0;
        name = unknown;
    }
    size_t n = strlen(name), k;
    char ph = 'i', sepc;
    if ((k = base_len(name, "begin", &sepc)) && t->nopen < MAX_DEPTH) {
        if (push_slice(t, ev->event_id))
            return ptlog_nomem();
        ph = 'B';
        n = k;
    } else if ((k = base_len(name, "end", &sepc)) && closes_innermost(c, t, name, k, sepc)) {
        t->nopen--;
        ph = 'E';
        n = k;
    }
    if (ev->timestamp_ns > c->last_ts)
        c->last_ts = ev->timestamp_ns;
    sep(c);
    ptlog_out_puts(out, "{\"name\":");
    ptlog_json_string(out, name, n);
    ptlog_out_puts(out, ph == 'i' ? ",\"ph\":\"i\",\"s\":\"t\",\"ts\":" : ph == 'B' ? ",\"ph\":\"B\",\"ts\":"
                                                                                     : ",\"ph\":\"E\",\"ts\":");
    put_ts(c, ev->timestamp_ns);
    put_ids(out, p, t);
    put_args(out, c->src, ev, ph == 'E');
    ptlog_out_puts(out, "}");
    return 0;
}

/* Closes the slices still open, innermost first, at the last timestamp of the trace. */
static void close_open_slices(chrome_writer *c)
{
    for (size_t i = 0; i < c->nprocesses; i++) {
        chrome_process *p = &c->processes[i];
        for (size_t j = 0; j < p->nthreads; j++) {
            chrome_thread *t = &p->threads[j];
            while (t->nopen) {
                const char *name = c->src->type_name(c->src, t->open[--t->nopen]);
                char sepc;
                size_t n = name ? base_len(name, "begin", &sepc) : 0;
                sep(c);
                ptlog_out_puts(c->out, "{\"name\":");
                ptlog_json_string(c->out, name ? name : "", n);
                ptlog_out_puts(c->out, ",\"ph\":\"E\",\"ts\":");
                put_ts(c, c->last_ts);
                put_ids(c->out, p, t);
                ptlog_out_puts(c->out, ",\"args\":{\"unfinished\":true}}");
            }
        }
    }
}

static void free_writer(chrome_writer *c)
{
    for (size_t i = 0; i < c->nprocesses; i++) {
        chrome_process *p = &c->processes[i];
        for (size_t j = 0; j < p->nthreads; j++)
            free(p->threads[j].open);
        free(p->threads);
        ptlog_idmap_free(&p->thread_index);
        ptlog_idmap_free(&p->tids_taken);
    }
    free(c->processes);
    ptlog_idmap_free(&c->process_index);
}

int ptlog_write_chrome(ptlog_src *src, ptlog_out *out, ptlog_select *sel)
{
    chrome_writer c;
    memset(&c, 0, sizeof c);
    c.out = out;
    c.src = src;
    c.sel = sel;
    ptlog_out_puts(out, "{\"traceEvents\":[");
    int rc = ptlog_src_events(src, sel, chrome_event, &c);
    if (rc <= PTLOG_EXIT_LOSS)
        close_open_slices(&c);
    ptlog_out_puts(out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"trace_name\":");
    ptlog_json_string(out, src->meta.trace_name, strlen(src->meta.trace_name));
    ptlog_out_puts(out, ",\"origin_ns\":");
    ptlog_json_u64(out, c.count ? sel->origin : 0);
    char iso[48];
    ptlog_out_puts(out, ",\"origin\":\"");
    ptlog_out_puts(out, c.count ? ptlog_iso_utc(sel->origin, iso) : "");
    ptlog_out_puts(out, "\"}}\n");
    free_writer(&c);
    return rc;
}
