/*
 * ptlog info: what a log is. Everything but the per-event-type (and, with
 * --threads, per-thread) statistics comes from the reader's open scan
 * (block headers, no decompression); the statistics need one pass over the
 * events (skipped by --quick).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "ptlog.h"

typedef struct type_stats {
    uint32_t id;
    uint64_t count, first, last;
    uint32_t pmin, pmax;
} type_stats;

typedef struct info_pass {
    ptlog_idmap index; /* id -> position in stats */
    type_stats *stats;
    size_t n, cap;
    uint64_t events, first, last;
    int count_threads;
    ptlog_threads threads; /* --threads */
    ptlog_src *src;        /* --threads: the threads' names */
} info_pass;

static type_stats *stats_for(info_pass *p, uint32_t id)
{
    size_t i = ptlog_idmap_get(&p->index, id);
    if (i != SIZE_MAX)
        return &p->stats[i];
    type_stats *v = tl_grow(p->stats, &p->cap, p->n + 1, sizeof *v);
    if (!v)
        return NULL;
    p->stats = v;
    if (ptlog_idmap_put(&p->index, id, p->n))
        return NULL;
    type_stats *t = &p->stats[p->n++];
    memset(t, 0, sizeof *t);
    t->id = id;
    t->pmin = UINT32_MAX;
    return t;
}

static int count_event(void *ctx, const tracelog_event *ev, const char *name)
{
    info_pass *p = ctx;
    (void)name;
    type_stats *t = stats_for(p, ev->event_id);
    if (!t)
        return ptlog_nomem();
    if (t->count == 0 || ev->timestamp_ns < t->first)
        t->first = ev->timestamp_ns;
    if (ev->timestamp_ns > t->last)
        t->last = ev->timestamp_ns;
    t->count++;
    if (ev->payload_len < t->pmin)
        t->pmin = ev->payload_len;
    if (ev->payload_len > t->pmax)
        t->pmax = ev->payload_len;
    if (p->events == 0 || ev->timestamp_ns < p->first)
        p->first = ev->timestamp_ns;
    if (ev->timestamp_ns > p->last)
        p->last = ev->timestamp_ns;
    p->events++;
    if (!p->count_threads)
        return 0;
    const char *tname = ev->kernel_tid && p->src->thread_name ? p->src->thread_name(p->src, ev) : NULL;
    if (ptlog_threads_count(&p->threads, ev->pid, ev->tid, ev->kernel_tid, tname, ev->timestamp_ns))
        return ptlog_nomem();
    return 0;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = ((const type_stats *)a)->id, y = ((const type_stats *)b)->id;
    return x < y ? -1 : x > y;
}

/* Every named type gets a row, with or without events; then sorted by id. */
static int complete_rows(info_pass *p, ptlog_src *src)
{
    size_t n = src->type_count(src);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *name;
        src->type_at(src, i, &id, &name);
        if (!stats_for(p, id))
            return ptlog_nomem();
    }
    if (p->n)
        qsort(p->stats, p->n, sizeof *p->stats, by_id);
    return 0;
}

/* Problems that are losses the writer counted (5.4): names or thread ids it had no room for, no event. */
static int only_counted_losses(const tracelog_reader *r, const tracelog_reader_info *ri)
{
    size_t n = tracelog_reader_problem_count(r);
    if (n != ri->problems)
        return 0; /* some are not kept in detail: cannot tell */
    for (size_t i = 0; i < n; i++) {
        const char *c = tracelog_reader_problem_condition(r, i);
        if (!c || (strcmp(c, "TYPES_DROPPED") != 0 && strcmp(c, "THREADS_DROPPED") != 0))
            return 0;
    }
    return 1;
}

/*
 * Clean is closed with nothing lost (format-spec 8.6). Otherwise the cases
 * a user acts on differently: closed, with only a loss the writer counted
 * (names or thread ids it had no room for); closed, but damaged; not closed
 * and nothing else found (a crash, a kill); and damage with no trailer as
 * the newest block, where damage may have hidden the trailer.
 */
const char *ptlog_shutdown_text(const tracelog_reader *r, const tracelog_reader_info *ri)
{
    if (ri->clean)
        return "clean (trailer found)";
    if (!ri->problems)
        return "not closed (no trailer): recovered";
    if (!ri->closed)
        return "not closed, or damaged (see the problems): recovered";
    return only_counted_losses(r, ri) ? "closed, with a known loss (see the problems)"
                                      : "closed, but damaged (see the problems): recovered";
}

typedef struct info_view {
    const char *file;
    ptlog_src *src;
    tracelog_reader_info ri;
    tracelog_log_status st;
    uint64_t events, first, last;
    size_t threads;   /* thread definitions (kernel tids) of a format 1.1 log */
    int have_stats;
    info_pass *pass;
    const char *shutdown; /* ptlog_shutdown_text */
} info_view;

static void line(ptlog_out *o, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void line(ptlog_out *o, const char *key, const char *fmt, ...)
{
    char buf[8192]; /* room for four shown texts */
    int n = snprintf(buf, sizeof buf, "%-18s", key);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    va_end(ap);
    ptlog_out_puts(o, buf);
    ptlog_out_puts(o, "\n");
}

static void row(ptlog_out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void row(ptlog_out *o, const char *fmt, ...)
{
    char buf[2048]; /* room for a shown name */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ptlog_out_puts(o, buf);
    ptlog_out_puts(o, "\n");
}

static double span_s(const info_view *v)
{
    return v->events ? (double)(v->last - v->first) / 1e9 : 0;
}

static void text_report(ptlog_out *o, const info_view *v)
{
    const tracelog_metadata *m = &v->src->meta;
    const tracelog_reader_info *ri = &v->ri;
    char t1[48], t2[48];
    line(o, "file:", "%s (%llu bytes)", v->file, (unsigned long long)ri->file_size);
    line(o, "format:", ".ptl %u.%u", ri->format_major, ri->format_minor);
    /* Every text from the file is shown escaped (text.c): a log cannot drive the terminal. */
    char s1[PTLOG_TEXT_SHOW_SIZE], s2[PTLOG_TEXT_SHOW_SIZE], s3[PTLOG_TEXT_SHOW_SIZE], s4[PTLOG_TEXT_SHOW_SIZE];
    line(o, "trace name:", "%s", ptlog_text_show(m->trace_name, s1, sizeof s1));
    line(o, "generated by:", "%s", ptlog_text_show(m->generation_version, s1, sizeof s1));
    line(o, "created:", "%s", ptlog_iso_utc(m->creation_time_ns, t1));
    line(o, "clock:", "%s read by %s, resolution %llu ns", ptlog_text_show(m->clock_id, s1, sizeof s1),
         ptlog_text_show(m->clock_source, s2, sizeof s2), (unsigned long long)m->clock_resolution_ns);
    if (m->clock_mult) /* format 1.1: how the timestamps were made from the time-stamp counter */
        line(o, "calibration:", "ns = %llu + floor((tsc - %llu) * %llu / 2^%u) (%.6f ns per tick)",
             (unsigned long long)m->clock_ns_base, (unsigned long long)m->clock_tsc_base,
             (unsigned long long)m->clock_mult, m->clock_shift, (double)m->clock_mult / (double)(1ull << m->clock_shift));
    line(o, "host:", "%s (%s %s %s)", ptlog_text_show(m->hostname, s1, sizeof s1),
         ptlog_text_show(m->os_name, s2, sizeof s2), ptlog_text_show(m->os_release, s3, sizeof s3),
         ptlog_text_show(m->machine, s4, sizeof s4));
    line(o, "process:", "%u %s", m->pid, ptlog_text_show(m->program, s1, sizeof s1));
    line(o, "stream full:", "%s", ptlog_policy_text(m->stream_full_policy));
    line(o, "log full:", "%s", ptlog_policy_text(m->log_full_policy));
    line(o, "log max size:", "%llu bytes", (unsigned long long)m->log_max_size);
    line(o, "max data size:", "%llu bytes", (unsigned long long)m->max_data_size);
    line(o, "stream min size:", "%llu bytes", (unsigned long long)m->stream_min_size);
    line(o, "inheritance:", "%s", m->inherited ? "inherited" : "close_for_child");
    line(o, "shutdown:", "%s", v->shutdown);
    line(o, "status:", "recorded %llu, written %llu, stream overruns %llu, log overruns %llu, log full %s, "
                       "flush error %d",
         (unsigned long long)v->st.events_recorded, (unsigned long long)v->st.events_written,
         (unsigned long long)v->st.stream_overruns, (unsigned long long)v->st.log_overruns,
         v->st.log_full ? "yes" : "no", v->st.flush_error);
    if (v->st.types_dropped || v->st.threads_dropped)
        line(o, "dropped:", "%llu event-type names, %llu thread ids (a LOOP log's durable region full, or more "
                            "thread ids than a log holds)",
             (unsigned long long)v->st.types_dropped, (unsigned long long)v->st.threads_dropped);
    if (v->threads)
        line(o, "threads:", "%zu kernel thread ids recorded", v->threads);
    line(o, "blocks:", "%llu", (unsigned long long)ri->blocks);
    line(o, "chunks:", "%llu", (unsigned long long)ri->chunks);
    if (ri->merged_chunks)
        line(o, "merge sets:", "%llu chunks joined to the next one (read merged by timestamp)",
             (unsigned long long)ri->merged_chunks);
    line(o, "events:", "%llu", (unsigned long long)v->events);
    line(o, "stored bytes:", "%llu", (unsigned long long)ri->stored_bytes);
    line(o, "raw bytes:", "%llu", (unsigned long long)ri->raw_bytes);
    line(o, "ratio:", "%.2f", ri->stored_bytes ? (double)ri->raw_bytes / (double)ri->stored_bytes : 0.0);
    if (v->events)
        line(o, "time span:", "%s .. %s (%llu.%09llu s)", ptlog_iso_utc(v->first, t1), ptlog_iso_utc(v->last, t2),
             (unsigned long long)((v->last - v->first) / 1000000000u), /* exact: a double's 53 bits are 104 days */
             (unsigned long long)((v->last - v->first) % 1000000000u));
    else
        line(o, "time span:", "-");
    line(o, "problems:", "%llu (%llu bytes skipped)", (unsigned long long)ri->problems,
         (unsigned long long)ri->bytes_skipped);
    if (!v->have_stats)
        return;
    ptlog_out_puts(o, "\nevent types:\n");
    row(o, "%10s %12s %-30s %-30s %-14s %12s  %s", "ID", "COUNT", "FIRST", "LAST", "PAYLOAD", "RATE/S", "NAME");
    double span = span_s(v);
    for (size_t i = 0; i < v->pass->n; i++) {
        const type_stats *t = &v->pass->stats[i];
        const char *name = v->src->type_name(v->src, t->id);
        char unknown[32], payload[32], rate[32];
        if (!name) {
            snprintf(unknown, sizeof unknown, "event#%u", t->id);
            name = unknown;
        } else {
            name = ptlog_text_show(name, s1, sizeof s1);
        }
        if (t->count)
            snprintf(payload, sizeof payload, "%u..%u", t->pmin, t->pmax);
        else
            snprintf(payload, sizeof payload, "-");
        if (span > 0)
            snprintf(rate, sizeof rate, "%.1f", (double)t->count / span);
        else
            snprintf(rate, sizeof rate, "-");
        row(o, "%10u %12llu %-30s %-30s %-14s %12s  %s", t->id, (unsigned long long)t->count,
             t->count ? ptlog_iso_utc(t->first, t1) : "-", t->count ? ptlog_iso_utc(t->last, t2) : "-", payload, rate,
             name);
    }
}

/* info --threads: one row per (pid, tid, kernel tid), by pid then first event; its name (1.2) last, escaped. */
static void text_threads(ptlog_out *o, const ptlog_threads *th)
{
    char t1[48], t2[48], name[4 * TRACELOG_THREAD_NAME_MAX + 3];
    ptlog_out_puts(o, "\nthreads:\n");
    row(o, "%10s %18s %10s %12s %-30s %-30s %16s %s", "PID", "TID", "KTID", "COUNT", "FIRST", "LAST", "SPAN/S",
        "NAME");
    for (size_t i = 0; i < th->n; i++) {
        const ptlog_thread_stats *t = &th->v[i];
        char tid[24], ktid[16], span[32];
        snprintf(tid, sizeof tid, "0x%llx", (unsigned long long)t->tid); /* as dump prints it */
        if (t->ktid) /* the kernel's thread id, as top, perf and gdb show it */
            snprintf(ktid, sizeof ktid, "%u", t->ktid);
        else
            snprintf(ktid, sizeof ktid, "-");
        span[ptlog_fmt_relative(t->last, t->first, span)] = 0;
        ptlog_text_show(t->name[0] ? t->name : "-", name, sizeof name);
        row(o, "%10u %18s %10s %12llu %-30s %-30s %16s %s", t->pid, tid, ktid, (unsigned long long)t->count,
            ptlog_iso_utc(t->first, t1), ptlog_iso_utc(t->last, t2), span, name);
    }
}

static void jkey(ptlog_out *o, const char *key, int comma)
{
    ptlog_out_puts(o, comma ? ",\"" : "\"");
    ptlog_out_puts(o, key);
    ptlog_out_puts(o, "\":");
}

static void ju(ptlog_out *o, const char *key, uint64_t v)
{
    jkey(o, key, 1);
    ptlog_json_u64(o, v);
}

static void jnum(ptlog_out *o, const char *key, double v, int valid)
{
    char buf[64];
    jkey(o, key, 1);
    if (!valid) {
        ptlog_out_puts(o, "null");
        return;
    }
    snprintf(buf, sizeof buf, "%.3f", v);
    ptlog_out_puts(o, buf);
}

static void json_report(ptlog_out *o, const info_view *v)
{
    const tracelog_reader_info *ri = &v->ri;
    ptlog_out_puts(o, "{\"file\":");
    ptlog_json_string(o, v->file, strlen(v->file));
    ju(o, "file_size", ri->file_size);
    ptlog_out_puts(o, ",\"format\":{\"major\":");
    ptlog_json_u64(o, ri->format_major);
    ju(o, "minor", ri->format_minor);
    ptlog_out_puts(o, "},\"attributes\":");
    ptlog_json_attributes(o, &v->src->meta);
    jkey(o, "clean", 1);
    ptlog_out_puts(o, ri->clean ? "true" : "false");
    ptlog_out_puts(o, ",\"status\":{\"events_recorded\":");
    ptlog_json_u64(o, v->st.events_recorded);
    ju(o, "events_written", v->st.events_written);
    ju(o, "stream_overruns", v->st.stream_overruns);
    ju(o, "log_overruns", v->st.log_overruns);
    ju(o, "flush_error", (uint64_t)(v->st.flush_error < 0 ? 0 : v->st.flush_error));
    ptlog_out_puts(o, v->st.log_full ? ",\"log_full\":true" : ",\"log_full\":false");
    if (v->st.types_dropped || v->st.threads_dropped) {
        ju(o, "types_dropped", v->st.types_dropped);
        ju(o, "threads_dropped", v->st.threads_dropped);
    }
    ptlog_out_puts(o, "}");
    if (v->threads)
        ju(o, "threads", v->threads);
    ju(o, "blocks", ri->blocks);
    ju(o, "chunks", ri->chunks);
    ju(o, "events", v->events);
    ju(o, "stored_bytes", ri->stored_bytes);
    ju(o, "raw_bytes", ri->raw_bytes);
    jnum(o, "ratio", ri->stored_bytes ? (double)ri->raw_bytes / (double)ri->stored_bytes : 0, ri->stored_bytes > 0);
    jkey(o, "first_ts", 1);
    if (v->events) {
        ptlog_json_u64(o, v->first);
        ju(o, "last_ts", v->last);
        ju(o, "span_ns", v->last - v->first);
    } else {
        ptlog_out_puts(o, "null,\"last_ts\":null,\"span_ns\":null");
    }
    ju(o, "problems", ri->problems);
    ju(o, "bytes_skipped", ri->bytes_skipped);
    if (v->have_stats) {
        ptlog_out_puts(o, ",\"event_types\":[");
        double span = span_s(v);
        for (size_t i = 0; i < v->pass->n; i++) {
            const type_stats *t = &v->pass->stats[i];
            const char *name = v->src->type_name(v->src, t->id);
            ptlog_out_puts(o, i ? ",\n{\"id\":" : "\n{\"id\":");
            ptlog_json_u64(o, t->id);
            jkey(o, "name", 1);
            if (name)
                ptlog_json_string(o, name, strlen(name));
            else
                ptlog_out_puts(o, "null");
            ju(o, "count", t->count);
            if (t->count) {
                ju(o, "first_ts", t->first);
                ju(o, "last_ts", t->last);
                ju(o, "payload_min", t->pmin);
                ju(o, "payload_max", t->pmax);
            } else {
                ptlog_out_puts(o, ",\"first_ts\":null,\"last_ts\":null,\"payload_min\":null,\"payload_max\":null");
            }
            jnum(o, "rate_per_s", span > 0 ? (double)t->count / span : 0, span > 0);
            const tracelog_schema *schema = v->src->type_schema ? v->src->type_schema(v->src, t->id) : NULL;
            if (schema) { /* the payload's layout, in canonical schema text (format-spec 9) */
                const char *text = tracelog_schema_text(schema);
                jkey(o, "schema", 1);
                ptlog_json_string(o, text, strlen(text));
            }
            ptlog_out_puts(o, "}");
        }
        ptlog_out_puts(o, "]");
    }
    if (v->pass->count_threads) {
        const ptlog_threads *th = &v->pass->threads;
        ptlog_out_puts(o, ",\"threads\":[");
        for (size_t i = 0; i < th->n; i++) {
            const ptlog_thread_stats *t = &th->v[i];
            ptlog_out_puts(o, i ? ",\n{\"pid\":" : "\n{\"pid\":");
            ptlog_json_u64(o, t->pid);
            ju(o, "tid", t->tid);
            if (t->ktid) /* as in events: absent when the log does not know it */
                ju(o, "ktid", t->ktid);
            if (t->name[0]) { /* format 1.2: the thread's last name; absent when it has none */
                jkey(o, "name", 1);
                ptlog_json_string(o, t->name, strlen(t->name));
            }
            ju(o, "count", t->count);
            ju(o, "first_ts", t->first);
            ju(o, "last_ts", t->last);
            ju(o, "span_ns", t->last - t->first);
            ptlog_out_puts(o, "}");
        }
        ptlog_out_puts(o, "]");
    }
    ptlog_out_puts(o, "}\n");
}

int ptlog_cmd_info(const char *path, const ptlog_info_opts *opts, const char *out_path)
{
    int json = opts->json, quick = opts->quick;
    ptlog_src *src;
    tracelog_reader *r;
    int rc = ptlog_src_open_ptl(path, &src, &r);
    if (rc)
        return rc;
    info_pass pass;
    memset(&pass, 0, sizeof pass);
    pass.count_threads = opts->threads;
    pass.src = src;
    info_view v;
    memset(&v, 0, sizeof v);
    v.file = ptlog_display_name(path);
    v.src = src;
    v.pass = &pass;
    tracelog_reader_get_info(r, &v.ri);
    if (!quick || !v.ri.seekable) {
        /* The pass also finds damage in chunk payloads: report it like every command does. */
        ptlog_select all;
        memset(&all, 0, sizeof all);
        rc = ptlog_src_events(src, &all, count_event, &pass);
        v.events = pass.events;
        v.first = pass.first;
        v.last = pass.last;
        v.have_stats = !quick;
        if (rc <= PTLOG_EXIT_LOSS && complete_rows(&pass, src))
            rc = PTLOG_EXIT_INTERNAL;
        ptlog_threads_sort(&pass.threads);
        tracelog_reader_get_info(r, &v.ri); /* streams count while reading */
    } else {
        v.events = v.ri.events;
        v.first = v.ri.first_ts;
        v.last = v.ri.last_ts;
        rc = ptlog_report_problems(src->name, r) ? PTLOG_EXIT_LOSS : PTLOG_EXIT_OK;
    }
    tracelog_reader_get_status(r, &v.st);
    v.threads = tracelog_reader_thread_count(r);
    v.shutdown = ptlog_shutdown_text(r, &v.ri);
    if (rc <= PTLOG_EXIT_LOSS) {
        ptlog_out out;
        int orc = ptlog_out_open(&out, out_path);
        if (!orc) {
            if (json) {
                json_report(&out, &v);
            } else {
                text_report(&out, &v);
                if (opts->threads)
                    text_threads(&out, &pass.threads);
            }
            orc = ptlog_out_finish(&out);
        }
        if (orc)
            rc = orc;
    }
    ptlog_idmap_free(&pass.index);
    free(pass.stats);
    ptlog_threads_free(&pass.threads);
    src->close(src);
    return rc;
}
