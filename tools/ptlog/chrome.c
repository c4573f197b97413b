/*
 * Chrome Trace Event format output ({"traceEvents": [...]}), opened by
 * Perfetto UI, chrome://tracing and speedscope. Conventions (README.md):
 *   - ts is in microseconds since the log's first event, with 3 decimals
 *     (nanosecond precision); otherData.origin_ns holds the absolute origin;
 *   - pid is the process id; tid is the thread's kernel thread id where the
 *     log knows it (as top, perf and gdb show it), else a small number per
 *     process (1, 2, ... in order of appearance, skipping the numbers taken):
 *     consumers need integers below 2^31, and a pthread_t is a pointer
 *     (Perfetto turned such tids into 0, putting every thread on one track);
 *     tracks.c picks them. The pthread_t is kept in args.pthread and in the
 *     thread's name;
 *   - an event named "X:begin" or "X.begin" opens a duration slice "X" (ph
 *     "B") on its thread and "X:end" (resp. "X.end") closes it (ph "E") when
 *     the innermost open slice of that thread is "X" with that separator (tracks.c); an end that matches
 *     no open slice, or a begin past PTLOG_TRACKS_MAX_DEPTH open slices, is
 *     an instant event with its full name; slices
 *     still open at the end are closed at the last timestamp with
 *     args.unfinished, so that B and E always balance per thread;
 *   - every other event is an instant event (ph "i", scope "t");
 *   - args.data is the payload as lowercase hex, args.truncation is present
 *     when the payload was cut (end_data, end_truncation for an E, whose
 *     args Chrome adds to those of its slice); a typed event's fields
 *     follow, as in JSON's "fields" (end_NAME for an E; field_NAME for a
 *     field named like one of these keys);
 *   - "M" events name each process ("program (pid N)" for the recording
 *     process, "pid N" otherwise) and each thread: its name in the log
 *     (format 1.2), else "pthread 0x..."; a thread renamed gets another
 *     thread_name event before its first event with the new name (viewers
 *     keep the last).
 */
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

typedef struct chrome_writer {
    ptlog_out *out;
    ptlog_src *src;
    const ptlog_select *sel;
    ptlog_tracks tracks;
    uint64_t count;
    uint64_t last_ts;
    const tracelog_event *creating; /* the event being written: its thread's name names a new thread */
    char (*tnames)[TRACELOG_THREAD_NAME_MAX + 1]; /* by thread serial: the name written last ("": pthread) */
    size_t tnames_cap;
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
static void put_ids(ptlog_out *out, const ptlog_track_process *p, const ptlog_track_thread *t)
{
    ptlog_out_puts(out, ",\"pid\":");
    put_num(out, p->out_pid);
    ptlog_out_puts(out, ",\"tid\":");
    put_num(out, t ? t->tid : 0);
}

static void name_process(chrome_writer *c, const ptlog_track_process *p)
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

/* The slot of thread t's name last written ("" at first). NULL when out of memory. */
static char *written_name(chrome_writer *c, const ptlog_track_thread *t)
{
    if (t->serial >= c->tnames_cap) {
        size_t cap = c->tnames_cap ? c->tnames_cap : 64;
        while (cap <= t->serial)
            cap *= 2;
        char(*v)[TRACELOG_THREAD_NAME_MAX + 1] = realloc(c->tnames, cap * sizeof *v);
        if (!v)
            return NULL;
        memset(v + c->tnames_cap, 0, (cap - c->tnames_cap) * sizeof *v);
        c->tnames = v;
        c->tnames_cap = cap;
    }
    return c->tnames[t->serial];
}

/* The name of the thread of c->creating in the log, or NULL. */
static const char *log_thread_name(const chrome_writer *c)
{
    const tracelog_event *ev = c->creating;
    return ev && ev->kernel_tid && c->src->thread_name ? c->src->thread_name(c->src, ev) : NULL;
}

/* A thread_name "M" event: the log's name of the thread (tname), else its pthread_t. 0 or -1 (memory). */
static int name_thread(chrome_writer *c, const ptlog_track_process *p, const ptlog_track_thread *t,
                       const char *tname)
{
    char *written = written_name(c, t);
    if (!written)
        return -1;
    sep(c);
    ptlog_out_puts(c->out, "{\"name\":\"thread_name\",\"ph\":\"M\"");
    put_ids(c->out, p, t);
    ptlog_out_puts(c->out, ",\"args\":{\"name\":");
    if (tname) {
        ptlog_json_string(c->out, tname, strlen(tname));
    } else {
        ptlog_out_puts(c->out, "\"pthread ");
        put_hex(c->out, t->pthread);
        ptlog_out_puts(c->out, "\"");
    }
    ptlog_out_puts(c->out, "}}");
    snprintf(written, TRACELOG_THREAD_NAME_MAX + 1, "%s", tname ? tname : "");
    return 0;
}

/* The "M" events naming a new process or thread. */
static int on_new_track(void *ctx, const ptlog_track_process *p, const ptlog_track_thread *t)
{
    chrome_writer *c = ctx;
    if (t)
        return name_thread(c, p, t, log_thread_name(c));
    name_process(c, p);
    return 0;
}

/* A thread whose name in the log changed since its thread_name event (a rename) gets a new one. */
static int rename_thread(chrome_writer *c, const ptlog_track_process *p, const ptlog_track_thread *t)
{
    const char *tname = log_thread_name(c);
    if (!tname)
        return 0;
    const char *written = written_name(c, t);
    if (!written)
        return -1;
    return strcmp(written, tname) == 0 ? 0 : name_thread(c, p, t, tname);
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
    ptlog_track_process *p;
    ptlog_track_thread *t;
    char unknown[32];
    size_t n;
    c->creating = ev;
    int ph = ptlog_tracks_place(&c->tracks, ev, &name, unknown, &n, &p, &t);
    if (ph < 0 || rename_thread(c, p, t))
        return ptlog_nomem();
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

/* An E for a slice still open at the end, at the last timestamp of the trace. */
static void close_slice(void *ctx, const ptlog_track_process *p, const ptlog_track_thread *t, const char *name,
                        size_t n)
{
    chrome_writer *c = ctx;
    sep(c);
    ptlog_out_puts(c->out, "{\"name\":");
    ptlog_json_string(c->out, name, n);
    ptlog_out_puts(c->out, ",\"ph\":\"E\",\"ts\":");
    put_ts(c, c->last_ts);
    put_ids(c->out, p, t);
    ptlog_out_puts(c->out, ",\"args\":{\"unfinished\":true}}");
}

int ptlog_write_chrome(ptlog_src *src, ptlog_out *out, ptlog_select *sel)
{
    chrome_writer c;
    memset(&c, 0, sizeof c);
    c.out = out;
    c.src = src;
    c.sel = sel;
    ptlog_tracks_init(&c.tracks, src, on_new_track, &c);
    ptlog_out_puts(out, "{\"traceEvents\":[");
    int rc = ptlog_src_events(src, sel, chrome_event, &c);
    if (rc <= PTLOG_EXIT_LOSS)
        ptlog_tracks_close_open(&c.tracks, close_slice, &c);
    ptlog_out_puts(out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"trace_name\":");
    ptlog_json_string(out, src->meta.trace_name, strlen(src->meta.trace_name));
    ptlog_out_puts(out, ",\"origin_ns\":");
    ptlog_json_u64(out, c.count ? sel->origin : 0);
    char iso[48];
    ptlog_out_puts(out, ",\"origin\":\"");
    ptlog_out_puts(out, c.count ? ptlog_iso_utc(sel->origin, iso) : "");
    ptlog_out_puts(out, "\"}}\n");
    ptlog_tracks_free(&c.tracks);
    free(c.tnames);
    return rc;
}
