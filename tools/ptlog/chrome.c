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

/* What a thread's events repeat, made once (by its serial). */
typedef struct thread_texts {
    char written[TRACELOG_THREAD_NAME_MAX + 1]; /* the name its last thread_name event gave ("": its pthread) */
    const char *seen;       /* the log's name last found equal to written, when the source's names are stable */
    uint8_t ids_len, pthread_len;
    char ids[48];     /* ,"pid":P,"tid":T (sizes: blocks of 16, as ptlog_copy_blocks copies them) */
    char pthread[32]; /* "pthread":"0x..." */
} thread_texts;

/* An event's text up to its ts, {"name":"NAME","ph":"i","s":"t","ts":, for a name whose text fits. */
#define HEAD_TEXT 176 /* copied in blocks of 16 (ptlog_copy_blocks) */
#define HEAD_SLOTS 64
typedef struct head_text {
    const char *name; /* NULL: an empty slot */
    size_t n;
    uint32_t id;
    int ph;
    size_t len;
    char text[HEAD_TEXT];
} head_text;

typedef struct chrome_writer {
    ptlog_out *out;
    ptlog_src *src;
    const ptlog_select *sel;
    ptlog_tracks tracks;
    uint64_t count;
    uint64_t last_ts;
    const tracelog_event *creating; /* the event being written: its thread's name names a new thread */
    thread_texts *threads;          /* by thread serial */
    size_t threads_cap;
    ptlog_plans plans;              /* typed events' schemas, resolved once */
    head_text heads[HEAD_SLOTS];
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

/* Thread t's texts (its ids made the first time), or NULL when out of memory. */
static thread_texts *texts_of(chrome_writer *c, const ptlog_track_process *p, const ptlog_track_thread *t)
{
    if (t->serial >= c->threads_cap) {
        size_t cap = c->threads_cap ? c->threads_cap : 64;
        while (cap <= t->serial)
            cap *= 2;
        thread_texts *v = realloc(c->threads, cap * sizeof *v);
        if (!v)
            return NULL;
        memset(v + c->threads_cap, 0, (cap - c->threads_cap) * sizeof *v);
        c->threads = v;
        c->threads_cap = cap;
    }
    thread_texts *x = &c->threads[t->serial];
    if (x->ids_len)
        return x;
    char *q = x->ids; /* 7 + 10 + 7 + 10 bytes, and the 8 ptlog_fmt_u64 may write past the digits */
    memcpy(q, ",\"pid\":", 7);
    q += 7 + ptlog_fmt_u64(p->out_pid, q + 7);
    memcpy(q, ",\"tid\":", 7);
    q += 7 + ptlog_fmt_u64(t->tid, q + 7);
    x->ids_len = (uint8_t)(q - x->ids);
    q = x->pthread; /* 13 + 16 + 1 bytes */
    memcpy(q, "\"pthread\":\"0x", 13);
    q += 13 + ptlog_fmt_hex64(t->pthread, q + 13);
    *q++ = '"';
    x->pthread_len = (uint8_t)(q - x->pthread);
    return x;
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
    thread_texts *x = texts_of(c, p, t);
    if (!x)
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
    snprintf(x->written, sizeof x->written, "%s", tname ? tname : "");
    x->seen = c->src->thread_names_stable ? tname : NULL;
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
    thread_texts *x = texts_of(c, p, t);
    if (!x)
        return -1;
    if (tname == x->seen) /* a stable source's name, found equal last time */
        return 0;
    if (strcmp(x->written, tname) != 0)
        return name_thread(c, p, t, tname);
    x->seen = c->src->thread_names_stable ? tname : NULL;
    return 0;
}

/* Microseconds since the origin with 3 decimals: the nanoseconds' digits, a point before the last three. */
static void put_ts(chrome_writer *c, uint64_t ts)
{
    ptlog_out *out = c->out;
    char *o = ptlog_out_room(out, 40), *p = o;
    uint64_t d = ts - c->sel->origin;
    if (ts < c->sel->origin) {
        *p++ = '-';
        d = c->sel->origin - ts;
    }
    if (d < 1000) { /* 0.ddd */
        p[0] = '0';
        p[1] = '.';
        p[2] = (char)('0' + d / 100);
        p[3] = (char)('0' + d / 10 % 10);
        p[4] = (char)('0' + d % 10);
        out->len += (size_t)(p + 5 - o);
        return;
    }
    size_t n = ptlog_fmt_u64(d, p);
    memmove(p + n - 2, p + n - 3, 3);
    p[n - 3] = '.';
    out->len += (size_t)(p + n + 1 - o);
}

/* Typed event f's fields as args members, through its plan: each key made once (fields.c). */
static void put_fields(chrome_writer *c, const tracelog_fields *f, int end, int comma)
{
    ptlog_out *out = c->out;
    const ptlog_plan *plan = ptlog_plan_of(&c->plans, f->schema);
    if (!plan) { /* no memory for the plan: field by field */
        ptlog_json_field_members(out, f, end ? "end_" : "", comma);
        return;
    }
    for (size_t i = 0; i < f->present; i++) {
        const ptlog_field_plan *fp = &plan->f[i];
        char *o = ptlog_out_room(out, 1 + PTLOG_FIELD_HEAD);
        size_t k = i || comma;
        o[0] = ',';
        ptlog_copy_blocks(o + k, fp->chrome_head[end], fp->chrome_len[end]);
        out->len += k + fp->chrome_len[end];
        ptlog_json_plan_value(out, fp, f, i);
    }
}

static const char *ph_text(int ph)
{
    return ph == 'i' ? ",\"ph\":\"i\",\"s\":\"t\",\"ts\":" : ph == 'B' ? ",\"ph\":\"B\",\"ts\":" : ",\"ph\":\"E\",\"ts\":";
}

/* {"name":"NAME","ph":..,"ts": into o (room for 6 n + 40 bytes); its length. */
static size_t head_at(char *o, const char *name, size_t n, int ph)
{
    memcpy(o, "{\"name\":", 8);
    size_t k = 8 + ptlog_json_quote(name, n, o + 8);
    const char *t = ph_text(ph);
    size_t tn = strlen(t);
    memcpy(o + k, t, tn);
    return k + tn;
}

/*
 * An event's head: made once per event type and phase (a slot by the name's
 * address), then copied. A name made for an unknown id (in the caller's
 * buffer), a name of a source whose names may move (memo 0) or a name too
 * long for a slot is made each time.
 */
static void put_head(chrome_writer *c, const tracelog_event *ev, const char *name, size_t n, int ph, int memo)
{
    ptlog_out *out = c->out;
    if (!memo || n > (HEAD_TEXT - 40) / 6) {
        ptlog_out_write(out, "{\"name\":", 8);
        ptlog_json_string(out, name, n);
        ptlog_out_puts(out, ph_text(ph));
        return;
    }
    uint64_t h = ((uint64_t)(uintptr_t)name ^ (uint64_t)ph << 56 ^ n) * 0x9E3779B97F4A7C15ull;
    head_text *x = &c->heads[(h >> 32) % HEAD_SLOTS];
    if (x->name != name || x->n != n || x->id != ev->event_id || x->ph != ph) {
        x->len = head_at(x->text, name, n, ph);
        x->name = name;
        x->n = n;
        x->id = ev->event_id;
        x->ph = ph;
    }
    ptlog_copy_blocks(ptlog_out_room(out, HEAD_TEXT), x->text, x->len); /* text: whole blocks of 16 */
    out->len += x->len;
}

/*
 * args of an event. Those of an E are added to its slice's, whose B has the
 * thread: an E has only its payload, as end_data and end_truncation.
 */
static void put_args(chrome_writer *c, const thread_texts *x, const tracelog_event *ev, int end)
{
    ptlog_out *out = c->out;
    tracelog_fields f;
    int typed = ptlog_event_fields(c->src, ev, &f) && f.present;
    if (end && !ev->payload_len && !ev->truncation && !typed)
        return;
    ptlog_out_write(out, ",\"args\":{", 9);
    if (!end) {
        ptlog_copy_blocks(ptlog_out_room(out, sizeof x->pthread), x->pthread, x->pthread_len);
        out->len += x->pthread_len;
    }
    int comma = !end;
    if (ev->payload_len || ev->truncation) {
        ptlog_out_puts(out, end ? "\"end_data\":\"" : ",\"data\":\"");
        const size_t slice = 8192;
        for (size_t off = 0; off < ev->payload_len; off += slice) {
            size_t k = ev->payload_len - off < slice ? ev->payload_len - off : slice;
            ptlog_fmt_hexbytes((const unsigned char *)ev->payload + off, k, ptlog_out_room(out, 2 * slice));
            out->len += 2 * k;
        }
        ptlog_out_write(out, "\"", 1);
        if (ev->truncation) {
            ptlog_out_puts(out, end ? ",\"end_truncation\":" : ",\"truncation\":");
            put_num(out, ev->truncation);
        }
        comma = 1;
    }
    if (typed) /* the fields, after pthread or end_data */
        put_fields(c, &f, end, comma);
    ptlog_out_write(out, "}", 1);
}

static int chrome_event(void *ctx, const tracelog_event *ev, const char *name)
{
    chrome_writer *c = ctx;
    ptlog_out *out = c->out;
    ptlog_track_process *p;
    ptlog_track_thread *t;
    thread_texts *x;
    char unknown[32];
    size_t n;
    c->creating = ev;
    int ph = ptlog_tracks_place(&c->tracks, ev, &name, unknown, &n, &p, &t);
    if (ph < 0)
        return ptlog_tracks_error(&c->tracks);
    if (rename_thread(c, p, t) || !(x = texts_of(c, p, t)))
        return ptlog_nomem();
    if (ev->timestamp_ns > c->last_ts)
        c->last_ts = ev->timestamp_ns;
    sep(c);
    put_head(c, ev, name, n, ph, name != unknown && c->src->type_names_stable);
    put_ts(c, ev->timestamp_ns);
    ptlog_copy_blocks(ptlog_out_room(out, sizeof x->ids), x->ids, x->ids_len);
    out->len += x->ids_len;
    put_args(c, x, ev, ph == 'E');
    ptlog_out_write(out, "}", 1);
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
    ptlog_plans_free(&c.plans);
    free(c.threads);
    return rc;
}
