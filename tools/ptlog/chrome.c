/*
 * Chrome Trace Event format output ({"traceEvents": [...]}), opened by
 * Perfetto UI and chrome://tracing. Conventions (README.md):
 *   - ts is in microseconds since the log's first event, with 3 decimals
 *     (nanosecond precision); otherData.origin_ns holds the absolute origin;
 *   - an event named "X:begin" opens a duration slice "X" (ph "B") on its
 *     thread, "X:end" closes it (ph "E"); every other event is an instant
 *     event (ph "i", scope "t");
 *   - args.data is the payload as lowercase hex, args.truncation is present
 *     when the payload was cut;
 *   - "M" events name each process ("program (pid N)" for the recording
 *     process, "pid N" otherwise) and each thread ("tid 0x...").
 */
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

typedef struct chrome_writer {
    ptlog_out *out;
    const ptlog_select *sel;
    const tracelog_metadata *meta;
    ptlog_idmap pids, threads;
    uint64_t count;
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

static void name_process(chrome_writer *c, uint32_t pid)
{
    ptlog_out *out = c->out;
    char text[TRACELOG_TEXT_MAX + 64];
    const char *prog = strrchr(c->meta->program, '/');
    prog = prog ? prog + 1 : c->meta->program;
    if (pid == c->meta->pid && *prog)
        snprintf(text, sizeof text, "%s (pid %u)", prog, pid);
    else
        snprintf(text, sizeof text, "pid %u", pid);
    sep(c);
    ptlog_out_puts(out, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":");
    put_num(out, pid);
    ptlog_out_puts(out, ",\"tid\":0,\"args\":{\"name\":");
    ptlog_json_string(out, text, strlen(text));
    ptlog_out_puts(out, "}}");
}

static void name_thread(chrome_writer *c, uint32_t pid, uint64_t tid)
{
    ptlog_out *out = c->out;
    sep(c);
    ptlog_out_puts(out, "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":");
    put_num(out, pid);
    ptlog_out_puts(out, ",\"tid\":");
    put_num(out, tid);
    ptlog_out_puts(out, ",\"args\":{\"name\":\"tid 0x");
    char *o = ptlog_out_room(out, 20);
    out->len += ptlog_fmt_hex64(tid, o);
    ptlog_out_puts(out, "\"}}");
}

static int chrome_event(void *ctx, const tracelog_event *ev, const char *name)
{
    chrome_writer *c = ctx;
    ptlog_out *out = c->out;
    if (ptlog_idmap_get(&c->pids, ev->pid) == SIZE_MAX) {
        if (ptlog_idmap_put(&c->pids, ev->pid, 1))
            return ptlog_nomem();
        name_process(c, ev->pid);
    }
    uint64_t tkey = ev->tid ^ ((uint64_t)ev->pid * 0x9E3779B97F4A7C15ull);
    if (ptlog_idmap_get(&c->threads, tkey) == SIZE_MAX) {
        if (ptlog_idmap_put(&c->threads, tkey, 1))
            return ptlog_nomem();
        name_thread(c, ev->pid, ev->tid);
    }
    char unknown[32];
    if (!name) {
        memcpy(unknown, "event#", 6);
        unknown[6 + ptlog_fmt_u64(ev->event_id, unknown + 6)] = 0;
        name = unknown;
    }
    size_t n = strlen(name);
    const char *ph = "i";
    if (n > 6 && strcmp(name + n - 6, ":begin") == 0) {
        ph = "B";
        n -= 6;
    } else if (n > 4 && strcmp(name + n - 4, ":end") == 0) {
        ph = "E";
        n -= 4;
    }
    sep(c);
    ptlog_out_puts(out, "{\"name\":");
    ptlog_json_string(out, name, n);
    ptlog_out_puts(out, ",\"ph\":\"");
    ptlog_out_puts(out, ph);
    ptlog_out_puts(out, *ph == 'i' ? "\",\"s\":\"t\",\"ts\":" : "\",\"ts\":");
    char *o = ptlog_out_room(out, 40), *p = o;
    uint64_t d = ev->timestamp_ns - c->sel->origin;
    if (ev->timestamp_ns < c->sel->origin) {
        *p++ = '-';
        d = c->sel->origin - ev->timestamp_ns;
    }
    p += ptlog_fmt_u64(d / 1000, p);
    *p++ = '.';
    *p++ = (char)('0' + d % 1000 / 100);
    *p++ = (char)('0' + d % 100 / 10);
    *p++ = (char)('0' + d % 10);
    out->len += (size_t)(p - o);
    ptlog_out_puts(out, ",\"pid\":");
    put_num(out, ev->pid);
    ptlog_out_puts(out, ",\"tid\":");
    put_num(out, ev->tid);
    if (ev->payload_len || ev->truncation) {
        ptlog_out_puts(out, ",\"args\":{\"data\":\"");
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
            ptlog_out_puts(out, ",\"truncation\":");
            put_num(out, ev->truncation);
        }
        ptlog_out_puts(out, "}");
    }
    ptlog_out_puts(out, "}");
    return 0;
}

int ptlog_write_chrome(ptlog_src *src, ptlog_out *out, ptlog_select *sel)
{
    chrome_writer c;
    memset(&c, 0, sizeof c);
    c.out = out;
    c.sel = sel;
    c.meta = &src->meta;
    ptlog_out_puts(out, "{\"traceEvents\":[");
    int rc = ptlog_src_events(src, sel, chrome_event, &c);
    ptlog_out_puts(out, "\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"trace_name\":");
    ptlog_json_string(out, src->meta.trace_name, strlen(src->meta.trace_name));
    ptlog_out_puts(out, ",\"origin_ns\":");
    ptlog_json_u64(out, c.count ? sel->origin : 0);
    char iso[48];
    ptlog_out_puts(out, ",\"origin\":\"");
    ptlog_out_puts(out, c.count ? ptlog_iso_utc(sel->origin, iso) : "");
    ptlog_out_puts(out, "\"}}\n");
    ptlog_idmap_free(&c.pids);
    ptlog_idmap_free(&c.threads);
    return rc;
}
