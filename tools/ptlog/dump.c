/*
 * ptlog dump: one line per event (format documented in README.md, stable):
 *
 *   TIME[ DELTA] PID TID[ tid KTID[ (THREAD NAME)]] NAME[ TRUNCATION][ PAYLOAD]
 *
 * formatted by hand into the output buffer (no printf per event) because
 * dump must keep up with the reader (millions of events per second).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ptlog.h"

typedef struct dumper {
    ptlog_out *out;
    ptlog_timecache tc;
    ptlog_dump_opts o;       /* with the colour decided */
    const ptlog_select *sel; /* its origin: the log's first event */
    uint64_t prev_ts;        /* --delta: timestamp of the previous event printed */
    int have_prev;
    ptlog_src *src;          /* names in system events' payloads */
    ptlog_textmemo threads;
    ptlog_type_texts names;  /* as printed (quoted if needed) */
    ptlog_plans plans;       /* typed events' schemas, resolved once */
    ptlog_name_memos tnames; /* thread names' texts */
} dumper;

#define C_TIME "\033[2m"
#define C_NAME "\033[1;36m"
#define C_TRUNC "\033[1;31m"
#define C_TEXT "\033[33m"
#define C_HEX "\033[35m"
#define C_RESET "\033[0m"

enum { PLAIN_TEXT, ESCAPED_TEXT, BINARY };

/* Text is printable ASCII with \t \n \r; the last byte may be a NUL after at least one other. */
static int classify(const unsigned char *p, size_t n)
{
    int kind = PLAIN_TEXT;
    if (n > 1 && p[n - 1] == 0) { /* a C string with its terminator */
        n--;
        kind = ESCAPED_TEXT;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c >= 0x20 && c <= 0x7e) {
            if (c == '"' || c == '\\')
                kind = ESCAPED_TEXT;
        } else if (c == '\t' || c == '\n' || c == '\r') {
            kind = ESCAPED_TEXT;
        } else {
            return BINARY;
        }
    }
    return kind;
}

/* Names print bare unless they hold blanks, quotes, backslashes, control bytes or invalid UTF-8 (text.c). */
static char *name_text(const char *name, uint32_t id, size_t *len)
{
    size_t n = name ? strlen(name) : 0;
    char *t = malloc(4 * n + 32); /* room for the fixed-size copy of 32 */
    if (!t)
        return NULL;
    if (!name) {
        memcpy(t, "event#", 6);
        *len = 6 + ptlog_fmt_u64(id, t + 6);
        return t;
    }
    *len = ptlog_text_safe(name, n, 0, t);
    return t;
}

static void put_name(dumper *d, uint32_t id, const char *name)
{
    ptlog_put_type_text(d->out, &d->names, id, name);
}

/* An event name inside a decoded system event's payload. */
static void put_set_name(void *ctx, uint32_t id, const char *name)
{
    put_name(ctx, id, name);
}

/* Payload in slices so that any size fits the output buffer. */
static void put_payload(dumper *d, const unsigned char *p, size_t n)
{
    const size_t slice = 8192;
    int kind = classify(p, n);
    ptlog_out *out = d->out;
    if (!d->o.color && n <= 256) { /* the common case, in one go */
        char *o = ptlog_out_room(out, 4 * 256 + 3);
        o[0] = ' ';
        if (kind == PLAIN_TEXT) {
            o[1] = '"';
            memcpy(o + 2, p, n);
            o[n + 2] = '"';
            out->len += n + 3;
        } else if (kind == ESCAPED_TEXT) {
            out->len += 1 + ptlog_text_quote((const char *)p, n, o + 1);
        } else {
            ptlog_fmt_hexbytes(p, n, o + 1);
            out->len += 1 + 2 * n;
        }
        return;
    }
    int text = kind != BINARY;
    ptlog_out_write(out, " ", 1);
    if (d->o.color)
        ptlog_out_puts(out, text ? C_TEXT : C_HEX);
    for (size_t off = 0; off < n; off += slice) {
        size_t k = n - off < slice ? n - off : slice;
        char *o = ptlog_out_room(out, 4 * slice + 2);
        size_t w;
        if (text) {
            w = ptlog_text_quote((const char *)p + off, k, o);
            /* one quoted string across the slices */
            if (off > 0) {
                memmove(o, o + 1, w - 1);
                w--;
            }
            if (off + k < n)
                w--;
        } else {
            ptlog_fmt_hexbytes(p + off, k, o);
            w = 2 * k;
        }
        out->len += w;
    }
    if (d->o.color)
        ptlog_out_puts(out, C_RESET);
}

/* " PID 0xTID[ tid KTID] ": made once per thread (at most 46 bytes), then copied. */
static char *put_thread(dumper *d, const tracelog_event *ev, char *p)
{
    int hit;
    ptlog_memo_slot *s = ptlog_textmemo_get(&d->threads, ev->tid, (uint64_t)ev->pid << 32 | ev->kernel_tid, &hit);
    if (!hit) {
        char *t = s->text;
        *t++ = ' ';
        t += ptlog_fmt_u64(ev->pid, t);
        memcpy(t, " 0x", 3);
        t += 3 + ptlog_fmt_hex64(ev->tid, t + 3);
        if (ev->kernel_tid) { /* the kernel's thread id, as top, perf and gdb show it */
            memcpy(t, " tid ", 5);
            t += 5 + ptlog_fmt_u64(ev->kernel_tid, t + 5);
        }
        *t++ = ' ';
        s->len = (uint32_t)(t - s->text);
    }
    memcpy(p, s->text, sizeof s->text);
    return p + s->len;
}

/*
 * "(NAME) " after the kernel tid, when the log names the thread (format 1.2).
 * The name is the traced program's text: bare when it prints safely and
 * cannot be taken for the parentheses, else quoted and escaped (at most
 * 4 * 64 + 5 bytes).
 */
static char *put_tname(dumper *d, const tracelog_event *ev, char *p)
{
    const char *t = ev->kernel_tid && d->src->thread_name ? d->src->thread_name(d->src, ev) : NULL;
    if (!t)
        return p;
    int hit;
    ptlog_name_memo *m = ptlog_name_memos_get(&d->tnames, t, d->src->thread_names_stable, &hit);
    if (!hit) {
        char *q = m->text;
        *q++ = '(';
        q += memchr(m->raw, '(', m->raw_len) || memchr(m->raw, ')', m->raw_len)
                 ? ptlog_text_quote(m->raw, m->raw_len, q)
                 : ptlog_text_safe(m->raw, m->raw_len, 1, q);
        *q++ = ')';
        *q++ = ' ';
        m->len = (size_t)(q - m->text);
    }
    ptlog_copy_blocks(p, m->text, m->len); /* dump_event's room: at most 4 * 64 + 5 bytes here, and 15 past */
    return p + m->len;
}

static int dump_event(void *ctx, const tracelog_event *ev, const char *name)
{
    dumper *d = ctx;
    ptlog_out *out = d->out;
    char *o = ptlog_out_room(out, 512), *p = o;
    if (d->o.color) {
        memcpy(p, C_TIME, sizeof C_TIME - 1);
        p += sizeof C_TIME - 1;
    }
    if (d->o.relative)
        p += ptlog_fmt_relative(ev->timestamp_ns, d->sel->origin, p);
    else
        p += ptlog_fmt_time(&d->tc, ev->timestamp_ns, p);
    if (d->o.delta) { /* signed: a log's timestamps may go backwards */
        uint64_t prev = d->have_prev ? d->prev_ts : ev->timestamp_ns;
        *p++ = ' ';
        if (ev->timestamp_ns >= prev)
            *p++ = '+';
        p += ptlog_fmt_relative(ev->timestamp_ns, prev, p);
        d->prev_ts = ev->timestamp_ns;
        d->have_prev = 1;
    }
    if (d->o.color) {
        memcpy(p, C_RESET, sizeof C_RESET - 1);
        p += sizeof C_RESET - 1;
    }
    p = put_thread(d, ev, p);
    p = put_tname(d, ev, p);
    if (d->o.color) {
        memcpy(p, C_NAME, sizeof C_NAME - 1);
        p += sizeof C_NAME - 1;
    }
    out->len += (size_t)(p - o);
    put_name(d, ev->event_id, name);
    if (d->o.color)
        ptlog_out_puts(out, C_RESET);
    if (ev->truncation) {
        p = o = ptlog_out_room(out, 64);
        if (d->o.color) {
            memcpy(p, " " C_TRUNC, sizeof C_TRUNC);
            p += sizeof C_TRUNC;
        } else {
            *p++ = ' ';
        }
        if (ev->truncation == TRACELOG_TRUNC_RECORD) {
            memcpy(p, "[truncated:record]", 18);
            p += 18;
        } else if (ev->truncation == TRACELOG_TRUNC_READ) {
            memcpy(p, "[truncated:read]", 16);
            p += 16;
        } else {
            memcpy(p, "[truncated:", 11);
            p += 11;
            p += ptlog_fmt_u64(ev->truncation, p);
            *p++ = ']';
        }
        if (d->o.color) {
            memcpy(p, C_RESET, sizeof C_RESET - 1);
            p += sizeof C_RESET - 1;
        }
        out->len += (size_t)(p - o);
    }
    int typed = !d->o.hex && ptlog_fields_dump(out, d->src, &d->plans, ev, put_set_name, d);
    if (!typed && ev->payload_len)
        put_payload(d, ev->payload, ev->payload_len);
    ptlog_out_room(out, 1)[0] = '\n';
    out->len++;
    return 0;
}

/* ---- formatting on several threads (par.c) ------------------------------------------- */

static void *dumper_copy(const void *state, ptlog_out *out, ptlog_src *src)
{
    const dumper *d = state;
    dumper *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->o = d->o;
    c->sel = d->sel;
    c->tc = d->tc;
    c->names.make = d->names.make;
    c->names.fixed = d->names.fixed;
    c->out = out;
    c->src = src;
    return c;
}

static void dumper_resume(void *state, uint64_t kept, uint64_t prev_ts)
{
    dumper *d = state;
    d->have_prev = kept > 0;
    d->prev_ts = prev_ts;
}

static void dumper_free(void *state)
{
    dumper *d = state;
    ptlog_type_texts_free(&d->names);
    ptlog_plans_free(&d->plans);
    free(d);
}

int ptlog_write_text(ptlog_src *src, ptlog_out *out, ptlog_select *sel, const ptlog_dump_opts *opts)
{
    dumper *d = calloc(1, sizeof *d);
    if (!d)
        return ptlog_nomem();
    d->o = *opts;
    /* auto: colour only on a terminal, never into a file, and not when NO_COLOR is set to
       anything non-empty (https://no-color.org); --color=always still colours */
    const char *no_color = getenv("NO_COLOR");
    if (d->o.color < 0)
        d->o.color = !out->path && isatty(out->fd) && !(no_color && *no_color);
    d->out = out;
    d->sel = sel;
    d->src = src;
    d->names.make = name_text;
    d->names.fixed = 32;
    ptlog_timecache_init(&d->tc, d->o.local);
    ptlog_sink sink = {dump_event, d, out, dumper_copy, dumper_resume, dumper_free, d->o.delta ? NULL : ""};
    int rc = ptlog_sink_events(src, sel, &sink);
    dumper_free(d);
    return rc;
}
