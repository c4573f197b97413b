/*
 * JSON document and JSON Lines output (schema in README.md, stable).
 * Written by hand into the output buffer: jsonl must keep up with the
 * reader, and every event is one line in both formats.
 */
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

static const char hexd[] = "0123456789abcdef";

/* 1 if s[0..n) is valid UTF-8. */
static int utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t k = ptlog_utf8_len(p + i, n - i);
        if (k == 0)
            return 0;
        i += k;
    }
    return 1;
}

size_t ptlog_json_quote(const char *s, size_t n, char *dst)
{
    const unsigned char *p = (const unsigned char *)s;
    char *d = dst;
    *d++ = '"';
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
            *d++ = (char)c;
            i++;
            continue;
        }
        if (c == '"' || c == '\\') {
            *d++ = '\\';
            *d++ = (char)c;
            i++;
            continue;
        }
        /* Control characters, DEL and C1 (U+0080..U+009F) escaped: safe on a terminal. */
        int c1 = c == 0xC2 && i + 1 < n && p[i + 1] >= 0x80 && p[i + 1] <= 0x9F;
        if (c < 0x20 || c == 0x7f || c1) {
            unsigned char v = c1 ? p[i + 1] : c;
            memcpy(d, "\\u00", 4);
            d[4] = hexd[v >> 4];
            d[5] = hexd[v & 15];
            d += 6;
            i += c1 ? 2 : 1;
            continue;
        }
        size_t k = ptlog_utf8_len(p + i, n - i);
        if (k == 0) {
            memcpy(d, "\\ufffd", 6);
            d += 6;
            i++;
        } else {
            memcpy(d, p + i, k);
            d += k;
            i += k;
        }
    }
    *d++ = '"';
    return (size_t)(d - dst);
}

void ptlog_json_string(ptlog_out *out, const char *s, size_t n)
{
    ptlog_out_quoted(out, s, n, ptlog_json_quote, 6);
}

/*
 * "key":"text", plus "key_hex":"..." with the exact bytes when the text is
 * not valid UTF-8 (JSON strings cannot hold such bytes; names in a .ptl
 * log are bytes): README.md, "JSON schema".
 */
static void put_text(ptlog_out *out, const char *key, const char *text, int comma)
{
    size_t n = strlen(text);
    ptlog_out_puts(out, comma ? ",\"" : "\"");
    ptlog_out_puts(out, key);
    ptlog_out_puts(out, "\":");
    ptlog_json_string(out, text, n);
    if (utf8_valid(text, n))
        return;
    ptlog_out_puts(out, ",\"");
    ptlog_out_puts(out, key);
    ptlog_out_puts(out, "_hex\":\"");
    ptlog_fmt_hexbytes((const unsigned char *)text, n, ptlog_out_room(out, 2 * n)); /* n <= 255 */
    out->len += 2 * n;
    ptlog_out_puts(out, "\"");
}

void ptlog_json_u64(ptlog_out *out, uint64_t v)
{
    char *o = ptlog_out_room(out, 24);
    if (v > INT64_MAX) {
        o[0] = '"';
        o[1] = '0';
        o[2] = 'x';
        size_t k = ptlog_fmt_hex64(v, o + 3);
        o[3 + k] = '"';
        out->len += k + 4;
        return;
    }
    out->len += ptlog_fmt_u64(v, o);
}

static void kv_str(ptlog_out *out, const char *key, const char *v, int comma)
{
    ptlog_out_puts(out, comma ? ",\"" : "\"");
    ptlog_out_puts(out, key);
    ptlog_out_puts(out, "\":");
    ptlog_json_string(out, v, strlen(v));
}

static void kv_u64(ptlog_out *out, const char *key, uint64_t v, int comma)
{
    ptlog_out_puts(out, comma ? ",\"" : "\"");
    ptlog_out_puts(out, key);
    ptlog_out_puts(out, "\":");
    ptlog_json_u64(out, v);
}

/* The metadata with the CBOR key names of the METADATA block (format/meta.c). */
void ptlog_json_attributes(ptlog_out *out, const tracelog_metadata *m)
{
    ptlog_out_puts(out, "{");
    put_text(out, "trace_name", m->trace_name, 0);
    put_text(out, "generation_version", m->generation_version, 1);
    kv_u64(out, "creation_time_ns", m->creation_time_ns, 1);
    put_text(out, "clock_id", m->clock_id, 1);
    put_text(out, "clock_source", m->clock_source, 1);
    kv_u64(out, "clock_resolution_ns", m->clock_resolution_ns, 1);
    kv_u64(out, "max_data_size", m->max_data_size, 1);
    kv_u64(out, "stream_min_size", m->stream_min_size, 1);
    kv_u64(out, "log_max_size", m->log_max_size, 1);
    kv_str(out, "stream_full_policy", ptlog_policy_text(m->stream_full_policy), 1);
    kv_str(out, "log_full_policy", ptlog_policy_text(m->log_full_policy), 1);
    kv_str(out, "inheritance", m->inherited ? "inherited" : "close_for_child", 1);
    ptlog_out_puts(out, ",\"host\":{");
    put_text(out, "hostname", m->hostname, 0);
    put_text(out, "os_name", m->os_name, 1);
    put_text(out, "os_release", m->os_release, 1);
    put_text(out, "machine", m->machine, 1);
    ptlog_out_puts(out, "},\"process\":{");
    kv_u64(out, "pid", m->pid, 0);
    put_text(out, "program", m->program, 1);
    ptlog_out_puts(out, "}");
    if (m->clock_mult) { /* format 1.1: the TSC's calibration */
        ptlog_out_puts(out, ",\"clock_calibration\":{");
        kv_u64(out, "tsc_base", m->clock_tsc_base, 0);
        kv_u64(out, "ns_base", m->clock_ns_base, 1);
        kv_u64(out, "mult", m->clock_mult, 1);
        kv_u64(out, "shift", m->clock_shift, 1);
        ptlog_out_puts(out, "}");
    }
    ptlog_out_puts(out, "}");
}

/* "ts" and "ts_origin_ns" say how events' ts are written when not as integer ns since the epoch. */
static void put_format(ptlog_out *out, const ptlog_src *src, ptlog_ts_form ts)
{
    ptlog_out_puts(out, "\"format\":{\"schema\":\"tracelog\",\"version\":1");
    kv_u64(out, "ptl_major", src->format_major, 1);
    kv_u64(out, "ptl_minor", src->format_minor, 1);
    if (ts == PTLOG_TS_TEXT)
        ptlog_out_puts(out, ",\"ts\":\"text\"");
    if (ts == PTLOG_TS_RELATIVE) {
        ptlog_out_puts(out, ",\"ts\":\"relative\"");
        kv_u64(out, "ts_origin_ns", src->meta.creation_time_ns, 1);
    }
    ptlog_out_puts(out, "}");
}

static void put_types(ptlog_out *out, ptlog_src *src)
{
    ptlog_out_puts(out, "\"event_types\":[");
    size_t n = src->type_count(src);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *name;
        src->type_at(src, i, &id, &name);
        ptlog_out_puts(out, i ? ",{" : "{");
        kv_u64(out, "id", id, 0);
        put_text(out, "name", name, 1);
        const tracelog_schema *schema = src->type_schema ? src->type_schema(src, id) : NULL;
        if (schema) {
            const char *text = tracelog_schema_text(schema);
            ptlog_out_puts(out, ",\"schema\":");
            ptlog_json_string(out, text, strlen(text));
        }
        ptlog_out_puts(out, "}");
    }
    ptlog_out_puts(out, "]");
}

static void put_status(ptlog_out *out, ptlog_src *src)
{
    tracelog_log_status st;
    src->get_status(src, &st);
    ptlog_out_puts(out, "\"status\":{");
    kv_u64(out, "events_recorded", st.events_recorded, 0);
    kv_u64(out, "events_written", st.events_written, 1);
    kv_u64(out, "stream_overruns", st.stream_overruns, 1);
    kv_u64(out, "log_overruns", st.log_overruns, 1);
    kv_u64(out, "flush_error", (uint64_t)(st.flush_error < 0 ? 0 : st.flush_error), 1);
    ptlog_out_puts(out, st.log_full ? ",\"log_full\":true" : ",\"log_full\":false");
    if (st.types_dropped) /* format 1.1 counters: only when not 0, as in the .ptl STATUS */
        kv_u64(out, "types_dropped", st.types_dropped, 1);
    if (st.threads_dropped)
        kv_u64(out, "threads_dropped", st.threads_dropped, 1);
    ptlog_out_puts(out, "}");
}

/* ---- events ----------------------------------------------------------------------- */

typedef struct json_writer {
    ptlog_out *out;
    ptlog_src *src; /* schemas of typed events */
    int lines;
    ptlog_ts_form ts_form;
    uint64_t origin;   /* PTLOG_TS_RELATIVE: ts counts from here (the creation time) */
    uint64_t count;
    ptlog_nscache ts;
    ptlog_textmemo threads, addresses;
    ptlog_type_texts prefixes; /* {"name":...,"id":N,"ts": */
    ptlog_plans plans;         /* typed events' schemas, resolved once */
    ptlog_name_memos tnames;   /* thread names' texts */
} json_writer;

static char *make_prefix(const char *name, uint32_t id, size_t *len)
{
    size_t n = name ? strlen(name) : 0;
    char *t = malloc(8 * n + 80); /* room for the fixed-size copy of 64 */
    if (!t)
        return NULL;
    char *p = t;
    memcpy(p, "{\"name\":", 8);
    p += 8;
    if (name) {
        p += ptlog_json_quote(name, n, p);
        if (!utf8_valid(name, n)) { /* the exact bytes too, as put_text does */
            memcpy(p, ",\"name_hex\":\"", 13);
            p += 13;
            ptlog_fmt_hexbytes((const unsigned char *)name, n, p);
            p += 2 * n;
            *p++ = '"';
        }
    } else {
        memcpy(p, "null", 4);
        p += 4;
    }
    memcpy(p, ",\"id\":", 6);
    p += 6;
    p += ptlog_fmt_u64(id, p);
    memcpy(p, ",\"ts\":", 6);
    p += 6;
    *len = (size_t)(p - t);
    return t;
}

static inline char *put_u64_fast(char *p, uint64_t v)
{
    if (v > INT64_MAX) {
        *p++ = '"';
        *p++ = '0';
        *p++ = 'x';
        p += ptlog_fmt_hex64(v, p);
        *p++ = '"';
        return p;
    }
    return p + ptlog_fmt_u64(v, p);
}

static void put_data_hex(ptlog_out *out, const unsigned char *p, size_t n)
{
    const size_t slice = 16384;
    for (size_t off = 0; off < n; off += slice) {
        size_t k = n - off < slice ? n - off : slice;
        ptlog_fmt_hexbytes(p + off, k, ptlog_out_room(out, 2 * slice));
        out->len += 2 * k;
    }
}

/* ---- fields of typed events (README.md, "JSON schema") ------------------------------- */

static void put_json_text(void *ctx, const char *s, size_t n)
{
    ptlog_json_string(ctx, s, n);
}

static void put_json_raw(void *ctx, const char *s, size_t n)
{
    ptlog_out_write(ctx, s, n);
}

static void put_int_field(ptlog_out *out, const tracelog_fields *f, size_t i, int is_signed)
{
    char text[32];
    int64_t sv;
    uint64_t uv, mag;
    if (is_signed) {
        tracelog_fields_int(f, i, &sv);
        snprintf(text, sizeof text, "%lld", (long long)sv);
        mag = sv < 0 ? 0 - (uint64_t)sv : (uint64_t)sv;
    } else {
        tracelog_fields_uint(f, i, &uv);
        snprintf(text, sizeof text, "%llu", (unsigned long long)uv);
        mag = uv;
    }
    if (mag > PTLOG_JSON_SAFE_INT) /* exact as a string */
        ptlog_json_string(out, text, strlen(text));
    else
        ptlog_out_puts(out, text);
}

static void put_float_field(ptlog_out *out, const tracelog_fields *f, size_t i)
{
    char text[64];
    tracelog_fields_format(f, i, text, sizeof text, NULL);
    if (strchr(text, 'n')) /* nan, inf, -inf: not JSON numbers */
        ptlog_json_string(out, text, strlen(text));
    else
        ptlog_out_puts(out, text);
}

static void put_enum_field(ptlog_out *out, const tracelog_fields *f, size_t i)
{
    uint64_t v;
    tracelog_fields_uint(f, i, &v);
    const char *name = tracelog_schema_enum_name(f->schema, i, v);
    if (name)
        ptlog_json_string(out, name, strlen(name));
    else
        ptlog_json_u64(out, v);
}

static void put_eventset_field(ptlog_out *out, const tracelog_fields *f, size_t i)
{
    const uint8_t *p;
    size_t n;
    tracelog_fields_bytes(f, i, &p, &n);
    const char *sep = "";
    ptlog_out_puts(out, "[");
    for (size_t id = 0; id < 8 * n; id++) {
        if (!(p[id / 8] >> (id % 8) & 1))
            continue;
        ptlog_out_puts(out, sep);
        sep = ",";
        ptlog_json_u64(out, id);
    }
    ptlog_out_puts(out, "]");
}

static void put_field_value(ptlog_out *out, const tracelog_fields *f, size_t i, tracelog_field_type type)
{
    const char *text;
    const uint8_t *bytes;
    size_t n;
    switch (type) {
    case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32: case TRACELOG_FIELD_U64:
        put_int_field(out, f, i, 0);
        break;
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64:
        put_int_field(out, f, i, 1);
        break;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        put_float_field(out, f, i);
        break;
    case TRACELOG_FIELD_BOOL: /* true, false */
        ptlog_field_text(f, i, put_json_raw, out);
        break;
    case TRACELOG_FIELD_FLAGS: /* "READ|WRITE", "0", "READ|0x80" */
        ptlog_field_text(f, i, put_json_text, out);
        break;
    case TRACELOG_FIELD_ENUM:
        put_enum_field(out, f, i);
        break;
    case TRACELOG_FIELD_CHAR:
        tracelog_fields_string(f, i, &text, &n);
        ptlog_json_string(out, text, n);
        break;
    case TRACELOG_FIELD_EVENTSET:
        put_eventset_field(out, f, i);
        break;
    case TRACELOG_FIELD_BYTES:
        tracelog_fields_bytes(f, i, &bytes, &n);
        ptlog_out_puts(out, "\"");
        put_data_hex(out, bytes, n);
        ptlog_out_puts(out, "\"");
        break;
    default: /* ptr: "0x..." */
        ptlog_field_text(f, i, put_json_text, out);
        break;
    }
}

int ptlog_chrome_reserved_key(const char *name)
{
    static const char *const keys[] = {"pthread", "data", "truncation", "unfinished"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (strcmp(name, keys[i]) == 0)
            return 1;
    return 0;
}

void ptlog_json_field_members(ptlog_out *out, const tracelog_fields *f, const char *key_prefix, int comma)
{
    for (size_t i = 0; i < f->present; i++) {
        tracelog_field_info info;
        tracelog_schema_field(f->schema, i, &info);
        ptlog_out_puts(out, i || comma ? ",\"" : "\"");
        ptlog_out_puts(out, key_prefix);
        if (*key_prefix == 0 && comma && ptlog_chrome_reserved_key(info.name))
            ptlog_out_puts(out, "field_");
        ptlog_out_puts(out, info.name); /* a schema name: [A-Za-z_][A-Za-z0-9_]* */
        ptlog_out_puts(out, "\":");
        put_field_value(out, f, i, info.type);
    }
}

static void put_json_integer(ptlog_out *out, int neg, uint64_t mag)
{
    char *o = ptlog_out_room(out, 32);
    out->len += (size_t)(ptlog_integer_at(o, neg, mag, 1) - o);
}

/* Field i's value through its plan: integers, floats and plain text without a detour; the rest as before. */
void ptlog_json_plan_value(ptlog_out *out, const ptlog_field_plan *fp, const tracelog_fields *f, size_t i)
{
    const uint8_t *p = f->data + fp->offset;
    uint64_t v;
    switch (fp->type) {
    case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32: case TRACELOG_FIELD_U64:
        put_json_integer(out, 0, ptlog_plan_load(fp, p));
        return;
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64:
        v = ptlog_plan_load(fp, p);
        put_json_integer(out, (int64_t)v < 0, (int64_t)v < 0 ? 0 - v : v);
        return;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64: {
        char *o = ptlog_out_room(out, TRACELOG_DOUBLE_TEXT_MAX);
        size_t n = ptlog_plan_float_text(fp, p, o); /* at most 24 bytes */
        if (o[n - 1] == 'n' || o[n - 1] == 'f') { /* nan, inf, -inf: not JSON numbers */
            char text[8];
            memcpy(text, o, n < sizeof text ? n : sizeof text); /* a copy: writing may flush the buffer */
            ptlog_json_string(out, text, n < sizeof text ? n : sizeof text);
        } else {
            out->len += n;
        }
        return;
    }
    case TRACELOG_FIELD_CHAR: {
        size_t n = fp->size ? fp->size : f->len - fp->offset;
        if (!ptlog_put_plain_text(out, (const char *)p, &n))
            ptlog_json_string(out, (const char *)p, n);
        return;
    }
    default:
        put_field_value(out, f, i, fp->type);
        return;
    }
}

#define FIELDS_SIZE_NULL "},\"fields_size\":null"

/*
 * ,"fields":{...},"fields_size":... on every event, so that a consumer that
 * infers columns from the first lines (DuckDB) sees both keys whatever the
 * first events are: {} and null for an untyped event, "short"/"long" when the
 * payload's size is not the schema's.
 */
static void put_fields(ptlog_out *out, ptlog_src *src, ptlog_plans *plans, const tracelog_event *ev)
{
    tracelog_fields f;
    if (!ptlog_event_fields(src, ev, &f)) {
        ptlog_out_write(out, ",\"fields\":{" FIELDS_SIZE_NULL, 11 + sizeof FIELDS_SIZE_NULL - 1);
        return;
    }
    const ptlog_plan *plan = ptlog_plan_of(plans, f.schema);
    ptlog_out_write(out, ",\"fields\":{", 11);
    if (!plan) { /* no memory for the plan: field by field through the schema */
        ptlog_json_field_members(out, &f, "", 0);
    } else if (plan->json_room) {
        ptlog_plan_members(out, plan, &f);
    } else {
        for (size_t i = 0; i < f.present; i++) {
            const ptlog_field_plan *fp = &plan->f[i];
            ptlog_copy_blocks(ptlog_out_room(out, PTLOG_FIELD_HEAD), fp->json_head, fp->json_len);
            out->len += fp->json_len;
            ptlog_json_plan_value(out, fp, &f, i);
        }
    }
    if (!f.size_check)
        ptlog_out_write(out, FIELDS_SIZE_NULL, sizeof FIELDS_SIZE_NULL - 1);
    else
        ptlog_out_puts(out, f.size_check < 0 ? "},\"fields_size\":\"short\"" : "},\"fields_size\":\"long\"");
}

/* ts in the form asked (README.md, "JSON schema"); at most 32 bytes. */
static char *put_ts(json_writer *w, uint64_t ts, char *p)
{
    if (w->ts_form == PTLOG_TS_TEXT) { /* "SECONDS.NNNNNNNNN" */
        *p++ = '"';
        p += ptlog_fmt_u64(ts / 1000000000u, p);
        *p++ = '.';
        for (uint64_t d = 100000000u, r = ts % 1000000000u; d; d /= 10)
            *p++ = (char)('0' + r / d % 10);
        *p++ = '"';
        return p;
    }
    if (w->ts_form == PTLOG_TS_RELATIVE) { /* signed ns since the origin; past 2^63 a string, as for ns */
        if (ts >= w->origin)
            return put_u64_fast(p, ts - w->origin);
        uint64_t before = w->origin - ts;
        int text = before > INT64_MAX;
        if (text)
            *p++ = '"';
        *p++ = '-';
        p += ptlog_fmt_u64(before, p);
        if (text)
            *p++ = '"';
        return p;
    }
    if (ts <= INT64_MAX)
        return p + ptlog_fmt_ns(&w->ts, ts, p);
    return put_u64_fast(p, ts);
}

/* ,"pid":P,"tid":T[,"ktid":K] (at most 62 bytes), made once per thread. */
static char *put_thread(json_writer *w, const tracelog_event *ev, char *p)
{
    int hit;
    ptlog_memo_slot *s = ptlog_textmemo_get(&w->threads, ev->tid, (uint64_t)ev->pid << 32 | ev->kernel_tid, &hit);
    if (!hit) {
        char *t = s->text;
        memcpy(t, ",\"pid\":", 7);
        t = put_u64_fast(t + 7, ev->pid);
        memcpy(t, ",\"tid\":", 7);
        t = put_u64_fast(t + 7, ev->tid);
        if (ev->kernel_tid) { /* known only in logs of format 1.1 on */
            memcpy(t, ",\"ktid\":", 8);
            t = put_u64_fast(t + 8, ev->kernel_tid);
        }
        s->len = (uint32_t)(t - s->text);
    }
    memcpy(p, s->text, sizeof s->text);
    return p + s->len;
}

/* ,"address":A (at most 33 bytes), made once per call site. */
static char *put_address(json_writer *w, uint64_t address, char *p)
{
    int hit;
    ptlog_memo_slot *s = ptlog_textmemo_get(&w->addresses, address, 0, &hit);
    if (!hit) {
        memcpy(s->text, ",\"address\":", 11);
        s->len = (uint32_t)(put_u64_fast(s->text + 11, address) - s->text);
    }
    memcpy(p, s->text, sizeof s->text);
    return p + s->len;
}

static int json_event(void *ctx, const tracelog_event *ev, const char *name)
{
    json_writer *w = ctx;
    ptlog_out *out = w->out;
    if (!w->lines && w->count)
        ptlog_out_write(out, ",\n", 2);
    w->count++;
    ptlog_put_type_text(out, &w->prefixes, ev->event_id, name);
    int small = ev->payload_len <= 1024; /* the common case: one reservation */
    char *o = ptlog_out_room(out, 256 + (small ? 2 * 1024 : 0)), *p = o;
    p = put_ts(w, ev->timestamp_ns, p);
    p = put_thread(w, ev, p);
    const char *tname = ev->kernel_tid && w->src->thread_name ? w->src->thread_name(w->src, ev) : NULL;
    if (tname) { /* format 1.2: "tname" (and "tname_hex" when it is not UTF-8), escaped by the JSON writer */
        out->len += (size_t)(p - o);
        int hit;
        ptlog_name_memo *m = ptlog_name_memos_get(&w->tnames, tname, w->src->thread_names_stable, &hit);
        if (hit) {
            ptlog_copy_blocks(ptlog_out_room(out, sizeof m->text), m->text, m->len);
            out->len += m->len;
        } else { /* made in the buffer (room for all of it: nothing is written out meanwhile), then kept */
            size_t start = ptlog_out_room(out, sizeof m->text) - out->buf;
            put_text(out, "tname", tname, 1);
            m->len = out->len - start;
            memcpy(m->text, out->buf + start, m->len);
        }
        o = p = ptlog_out_room(out, 256 + (small ? 2 * 1024 : 0));
    }
    p = put_address(w, ev->address, p);
    memcpy(p, ",\"truncation\":0", 15); /* most events */
    p = ev->truncation ? put_u64_fast(p + 14, ev->truncation) : p + 15;
    memcpy(p, ",\"data\":\"", 9);
    p += 9;
    if (small) {
        ptlog_fmt_hexbytes(ev->payload, ev->payload_len, p);
        p += 2 * ev->payload_len;
        *p++ = '"';
    }
    out->len += (size_t)(p - o);
    if (!small) {
        put_data_hex(out, ev->payload, ev->payload_len);
        ptlog_out_write(out, "\"", 1);
    }
    put_fields(out, w->src, &w->plans, ev);
    if (w->lines)
        ptlog_out_write(out, "}\n", 2);
    else
        ptlog_out_write(out, "}", 1);
    return 0;
}

/* ---- formatting on several threads (par.c) ------------------------------------------- */

static void *writer_copy(const void *state, ptlog_out *out, ptlog_src *src)
{
    const json_writer *w = state;
    json_writer *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->lines = w->lines;
    c->ts_form = w->ts_form;
    c->origin = w->origin;
    c->ts = w->ts;
    c->prefixes.make = w->prefixes.make;
    c->prefixes.fixed = w->prefixes.fixed;
    c->out = out;
    c->src = src;
    return c;
}

static void writer_resume(void *state, uint64_t kept, uint64_t prev_ts)
{
    (void)prev_ts;
    ((json_writer *)state)->count = kept;
}

static void writer_free(void *state)
{
    json_writer *w = state;
    ptlog_type_texts_free(&w->prefixes);
    ptlog_plans_free(&w->plans);
    free(w);
}

int ptlog_write_json(ptlog_src *src, ptlog_out *out, int lines, ptlog_select *sel, ptlog_ts_form ts)
{
    json_writer *w = calloc(1, sizeof *w);
    if (!w)
        return ptlog_nomem();
    w->out = out;
    w->src = src;
    w->lines = lines;
    w->ts_form = ts;
    w->origin = src->meta.creation_time_ns;
    ptlog_nscache_init(&w->ts);
    w->prefixes.make = make_prefix;
    w->prefixes.fixed = 64;
    /* Types and status are complete up front only when the whole input was scanned. */
    int upfront = src->upfront;
    ptlog_out_puts(out, "{");
    put_format(out, src, ts);
    ptlog_out_puts(out, ",\"attributes\":");
    ptlog_json_attributes(out, &src->meta);
    if (lines) {
        ptlog_out_puts(out, ",");
        put_types(out, src); /* those known so far; the last line repeats the full table */
        ptlog_out_puts(out, "}\n");
    } else {
        if (upfront) {
            ptlog_out_puts(out, ",\n");
            put_types(out, src);
            ptlog_out_puts(out, ",\n");
            put_status(out, src);
        }
        ptlog_out_puts(out, ",\n\"events\":[\n");
    }
    ptlog_sink sink = {json_event, w, out, writer_copy, writer_resume, writer_free, lines ? "" : ",\n"};
    int rc = ptlog_sink_events(src, sel, &sink);
    if (lines) {
        ptlog_out_puts(out, "{");
        put_status(out, src);
        ptlog_out_puts(out, ",");
        put_types(out, src);
        ptlog_out_puts(out, "}\n");
    } else {
        ptlog_out_puts(out, w->count ? "\n]" : "]");
        if (!upfront) {
            ptlog_out_puts(out, ",\n");
            put_types(out, src);
            ptlog_out_puts(out, ",\n");
            put_status(out, src);
        }
        ptlog_out_puts(out, "}\n");
    }
    writer_free(w);
    return rc;
}
