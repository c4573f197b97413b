/*
 * Event sources over JSON (one document, loaded whole with jansson, at most
 * 1 GiB) and JSON Lines (streamed line by line: memory stays bounded).
 * Schema in README.md. Every value is checked; errors name the file, the
 * line and column (syntax) or the event index and key (values).
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

#define JSON_DOC_MAX (1ull << 30)   /* largest JSON document loaded */
#define JSON_LINE_MAX (64u << 20)   /* longest JSON Lines line */

typedef struct json_src {
    ptlog_src base;
    ptlog_in *in;
    int lines;
    ptlog_types types;
    tracelog_log_status status;
    unsigned char *data;
    size_t data_cap;
    uint64_t index;      /* of the next event */
    /* document */
    json_t *root, *events;
    size_t nevents;
    /* lines */
    char *buf;
    size_t len, pos, cap;
    int eof;
    uint64_t line;       /* number of the line last read */
    json_t *pending;     /* an event line read while looking for the header */
    uint64_t pending_line;
} json_src;

/* "FILE" or "FILE:LINE" for messages. */
static const char *where(json_src *s, char *buf, size_t n)
{
    if (!s->lines)
        return s->base.name;
    snprintf(buf, n, "%s:%llu", s->base.name, (unsigned long long)s->line);
    return buf;
}

static int bad_value(json_src *s, const char *what, const char *key, const char *expected)
{
    char w[512];
    ptlog_msg(where(s, w, sizeof w), "%s%skey \"%s\": %s", what ? what : "", what ? ": " : "", key, expected);
    return PTLOG_EXIT_INPUT;
}

/* A non-negative integer, or a "0x..." / decimal string for values above INT64_MAX. */
static int get_u64(const json_t *v, uint64_t max, uint64_t *out)
{
    if (json_is_integer(v)) {
        json_int_t x = json_integer_value(v);
        if (x < 0 || (uint64_t)x > max)
            return -1;
        *out = (uint64_t)x;
        return 0;
    }
    if (!json_is_string(v))
        return -1;
    const char *s = json_string_value(v);
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s || strspn(s, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") != strlen(s))
        return -1;
    errno = 0;
    unsigned long long x = strtoull(s, NULL, base);
    if (errno || x > max)
        return -1;
    *out = x;
    return 0;
}

static const char *u64_expect(uint64_t max)
{
    if (max == UINT32_MAX)
        return "expected a non-negative integer below 2^32";
    if (max == UINT64_MAX)
        return "expected a non-negative integer";
    return "expected 0 (none), 1 (record) or 2 (read)";
}

/* ---- attributes, event types, status ------------------------------------------------ */

static int text_field(json_src *s, const json_t *obj, const char *key, const char *path, char *dst, size_t cap)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (!json_is_string(v))
        return bad_value(s, NULL, path, "expected a string");
    size_t n = json_string_length(v);
    if (n >= cap || memchr(json_string_value(v), 0, n)) {
        char msg[80];
        snprintf(msg, sizeof msg, "expected a string of at most %zu bytes without NUL", cap - 1);
        return bad_value(s, NULL, path, msg);
    }
    memcpy(dst, json_string_value(v), n + 1);
    return 0;
}

static int u64_field(json_src *s, const json_t *obj, const char *key, const char *path, uint64_t max,
                     uint64_t *dst)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    if (get_u64(v, max, dst))
        return bad_value(s, NULL, path, u64_expect(max));
    return 0;
}

static int policy_field(json_src *s, const json_t *obj, const char *key, const char *path, tracelog_policy bad,
                        tracelog_policy *dst)
{
    const json_t *v = json_object_get(obj, key);
    if (!v)
        return 0;
    tracelog_policy p;
    if (!json_is_string(v) || ptlog_policy_parse(json_string_value(v), &p) || p == bad)
        return bad_value(s, NULL, path,
                         bad == TRACELOG_POLICY_APPEND ? "expected \"loop\", \"until_full\" or \"flush\""
                                                       : "expected \"loop\", \"until_full\" or \"append\"");
    *dst = p;
    return 0;
}

static int parse_attributes(json_src *s, const json_t *a)
{
    tracelog_metadata *m = &s->base.meta;
    if (!json_is_object(a))
        return bad_value(s, NULL, "attributes", "expected an object");
    static const struct { const char *key, *path; size_t off, cap; } texts[] = {
#define T(k, f) {#k, "attributes." #k, offsetof(tracelog_metadata, f), sizeof(((tracelog_metadata *)0)->f)}
        T(trace_name, trace_name), T(generation_version, generation_version), T(clock_id, clock_id),
        T(clock_source, clock_source),
#undef T
    };
    static const struct { const char *key, *path; size_t off; } nums[] = {
#define U(k) {#k, "attributes." #k, offsetof(tracelog_metadata, k)}
        U(creation_time_ns), U(clock_resolution_ns), U(max_data_size), U(stream_min_size), U(log_max_size),
#undef U
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof texts / sizeof *texts && !rc; i++)
        rc = text_field(s, a, texts[i].key, texts[i].path, (char *)m + texts[i].off, texts[i].cap);
    for (size_t i = 0; i < sizeof nums / sizeof *nums && !rc; i++)
        rc = u64_field(s, a, nums[i].key, nums[i].path, UINT64_MAX, (uint64_t *)((char *)m + nums[i].off));
    if (!rc)
        rc = policy_field(s, a, "stream_full_policy", "attributes.stream_full_policy", TRACELOG_POLICY_APPEND,
                          &m->stream_full_policy);
    if (!rc)
        rc = policy_field(s, a, "log_full_policy", "attributes.log_full_policy", TRACELOG_POLICY_FLUSH,
                          &m->log_full_policy);
    const json_t *inh = json_object_get(a, "inheritance");
    if (!rc && inh) {
        const char *v = json_is_string(inh) ? json_string_value(inh) : "";
        if (strcmp(v, "inherited") == 0)
            m->inherited = 1;
        else if (strcmp(v, "close_for_child") == 0)
            m->inherited = 0;
        else
            rc = bad_value(s, NULL, "attributes.inheritance", "expected \"inherited\" or \"close_for_child\"");
    }
    const json_t *host = json_object_get(a, "host");
    if (!rc && host) {
        if (!json_is_object(host))
            return bad_value(s, NULL, "attributes.host", "expected an object");
        rc = text_field(s, host, "hostname", "attributes.host.hostname", m->hostname, sizeof m->hostname);
        if (!rc)
            rc = text_field(s, host, "os_name", "attributes.host.os_name", m->os_name, sizeof m->os_name);
        if (!rc)
            rc = text_field(s, host, "os_release", "attributes.host.os_release", m->os_release,
                            sizeof m->os_release);
        if (!rc)
            rc = text_field(s, host, "machine", "attributes.host.machine", m->machine, sizeof m->machine);
    }
    const json_t *proc = json_object_get(a, "process");
    if (!rc && proc) {
        if (!json_is_object(proc))
            return bad_value(s, NULL, "attributes.process", "expected an object");
        uint64_t pid = m->pid;
        rc = u64_field(s, proc, "pid", "attributes.process.pid", UINT32_MAX, &pid);
        m->pid = (uint32_t)pid;
        if (!rc)
            rc = text_field(s, proc, "program", "attributes.process.program", m->program, sizeof m->program);
    }
    return rc;
}

static int add_type(json_src *s, uint32_t id, const char *name, const char *ctx, const char *key)
{
    int r = ptlog_types_add(&s->types, id, name);
    if (r == -1)
        return ptlog_nomem();
    if (r == -2) {
        char msg[400];
        snprintf(msg, sizeof msg, "event type %u is named both \"%.120s\" and \"%.120s\"", id,
                 ptlog_types_name(&s->types, id), name);
        return bad_value(s, ctx, key, msg);
    }
    return 0;
}

static int parse_types(json_src *s, const json_t *arr)
{
    if (!json_is_array(arr))
        return bad_value(s, NULL, "event_types", "expected an array");
    for (size_t i = 0; i < json_array_size(arr); i++) {
        const json_t *t = json_array_get(arr, i);
        char ctx[64];
        snprintf(ctx, sizeof ctx, "event_types[%zu]", i);
        const json_t *name = json_object_get(t, "name");
        uint64_t id;
        if (!json_is_object(t))
            return bad_value(s, ctx, "id", "expected an object {\"id\":..., \"name\":...}");
        if (get_u64(json_object_get(t, "id"), UINT32_MAX, &id))
            return bad_value(s, ctx, "id", u64_expect(UINT32_MAX));
        if (!json_is_string(name) || json_string_length(name) == 0 ||
            json_string_length(name) > TRACELOG_TEXT_MAX || memchr(json_string_value(name), 0, json_string_length(name)))
            return bad_value(s, ctx, "name", "expected a name of 1 to 255 bytes");
        int rc = add_type(s, (uint32_t)id, json_string_value(name), ctx, "name");
        if (rc)
            return rc;
    }
    return 0;
}

static int parse_status(json_src *s, const json_t *o)
{
    if (!json_is_object(o))
        return bad_value(s, NULL, "status", "expected an object");
    tracelog_log_status *st = &s->status;
    int rc = u64_field(s, o, "events_recorded", "status.events_recorded", UINT64_MAX, &st->events_recorded);
    if (!rc)
        rc = u64_field(s, o, "events_written", "status.events_written", UINT64_MAX, &st->events_written);
    if (!rc)
        rc = u64_field(s, o, "stream_overruns", "status.stream_overruns", UINT64_MAX, &st->stream_overruns);
    if (!rc)
        rc = u64_field(s, o, "log_overruns", "status.log_overruns", UINT64_MAX, &st->log_overruns);
    uint64_t fe = (uint64_t)st->flush_error;
    if (!rc)
        rc = u64_field(s, o, "flush_error", "status.flush_error", INT32_MAX, &fe);
    st->flush_error = (int32_t)fe;
    const json_t *full = json_object_get(o, "log_full");
    if (!rc && full) {
        if (!json_is_boolean(full))
            return bad_value(s, NULL, "status.log_full", "expected true or false");
        st->log_full = json_is_true(full);
    }
    return rc;
}

static int parse_format(json_src *s, const json_t *f)
{
    if (!json_is_object(f))
        return bad_value(s, NULL, "format", "expected an object");
    const json_t *schema = json_object_get(f, "schema"), *version = json_object_get(f, "version");
    if (!json_is_string(schema) || strcmp(json_string_value(schema), "tracelog") != 0)
        return bad_value(s, NULL, "format.schema", "expected \"tracelog\"");
    if (!json_is_integer(version) || json_integer_value(version) != 1) {
        char w[512];
        ptlog_msg(where(s, w, sizeof w), "unsupported JSON schema version (this ptlog reads version 1)");
        return PTLOG_EXIT_INPUT;
    }
    uint64_t major = s->base.format_major, minor = s->base.format_minor;
    int rc = u64_field(s, f, "ptl_major", "format.ptl_major", UINT16_MAX, &major);
    if (!rc)
        rc = u64_field(s, f, "ptl_minor", "format.ptl_minor", UINT16_MAX, &minor);
    s->base.format_major = (uint16_t)major;
    s->base.format_minor = (uint16_t)minor;
    return rc;
}

/* The top-level keys other than events: format, attributes, event_types, status. */
static int parse_header(json_src *s, const json_t *o)
{
    const json_t *v;
    int rc = 0;
    if ((v = json_object_get(o, "format")))
        rc = parse_format(s, v);
    if (!rc && (v = json_object_get(o, "attributes")))
        rc = parse_attributes(s, v);
    if (!rc && (v = json_object_get(o, "event_types")))
        rc = parse_types(s, v);
    if (!rc && (v = json_object_get(o, "status")))
        rc = parse_status(s, v);
    return rc;
}

/* ---- events ---------------------------------------------------------------------------- */

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static int event_from(json_src *s, const json_t *o, tracelog_event *ev)
{
    char ctx[48];
    snprintf(ctx, sizeof ctx, "event %llu", (unsigned long long)s->index);
    if (!json_is_object(o))
        return bad_value(s, ctx, "ts", "expected an event object");
    memset(ev, 0, sizeof *ev);
    static const struct { const char *key; uint64_t max; } keys[] = {
        {"ts", UINT64_MAX}, {"pid", UINT32_MAX}, {"tid", UINT64_MAX}, {"address", UINT64_MAX}, {"truncation", 2},
    };
    uint64_t vals[5] = {0};
    for (size_t i = 0; i < 5; i++) {
        const json_t *v = json_object_get(o, keys[i].key);
        if (!v && i == 0)
            return bad_value(s, ctx, "ts", "missing (integer nanoseconds since the epoch)");
        if (v && get_u64(v, keys[i].max, &vals[i]))
            return bad_value(s, ctx, keys[i].key, u64_expect(keys[i].max));
    }
    ev->timestamp_ns = vals[0];
    ev->pid = (uint32_t)vals[1];
    ev->tid = vals[2];
    ev->address = vals[3];
    ev->truncation = (uint32_t)vals[4];

    const json_t *jid = json_object_get(o, "id"), *jname = json_object_get(o, "name");
    const char *name = NULL;
    if (jname && !json_is_null(jname)) {
        if (!json_is_string(jname) || json_string_length(jname) == 0 ||
            json_string_length(jname) > TRACELOG_TEXT_MAX || memchr(json_string_value(jname), 0, json_string_length(jname)))
            return bad_value(s, ctx, "name", "expected null or a name of 1 to 255 bytes");
        name = json_string_value(jname);
    }
    uint64_t id;
    if (jid) {
        if (get_u64(jid, UINT32_MAX, &id))
            return bad_value(s, ctx, "id", u64_expect(UINT32_MAX));
        if (name) {
            int rc = add_type(s, (uint32_t)id, name, ctx, "name");
            if (rc)
                return rc;
        }
    } else if (name) {
        int64_t found = ptlog_types_find_name(&s->types, name);
        if (found < 0) { /* a new name without an id: the next free id */
            id = s->types.n ? s->types.v[s->types.n - 1].id + 1ull : 0;
            if (id > UINT32_MAX)
                return bad_value(s, ctx, "id", "missing, and no free event type id is left");
            int rc = add_type(s, (uint32_t)id, name, ctx, "name");
            if (rc)
                return rc;
        } else {
            id = (uint64_t)found;
        }
    } else {
        return bad_value(s, ctx, "id", "missing (an event needs an \"id\" or a \"name\")");
    }
    ev->event_id = (uint32_t)id;

    const json_t *data = json_object_get(o, "data");
    if (data && !json_is_null(data)) {
        size_t n = json_is_string(data) ? json_string_length(data) : 1;
        if (!json_is_string(data) || n % 2)
            return bad_value(s, ctx, "data", "expected a string of hex digit pairs");
        if (n / 2 > s->data_cap) {
            unsigned char *p = realloc(s->data, n / 2);
            if (!p)
                return ptlog_nomem();
            s->data = p;
            s->data_cap = n / 2;
        }
        const char *h = json_string_value(data);
        for (size_t i = 0; i < n / 2; i++) {
            int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);
            if (hi < 0 || lo < 0)
                return bad_value(s, ctx, "data", "expected a string of hex digit pairs");
            s->data[i] = (unsigned char)(hi << 4 | lo);
        }
        ev->payload = s->data;
        ev->payload_len = (uint32_t)(n / 2);
    }
    s->index++;
    return 0;
}

/* ---- document ------------------------------------------------------------------------- */

static int doc_next(ptlog_src *base, tracelog_event *ev)
{
    json_src *s = (json_src *)base;
    if (s->index >= s->nevents)
        return 0;
    int rc = event_from(s, json_array_get(s->events, s->index), ev);
    return rc ? -rc : 1;
}

static int syntax_error(json_src *s, const json_error_t *e, uint64_t line)
{
    ptlog_msg(NULL, "%s:%llu:%d: %s", s->base.name, (unsigned long long)(line ? line : (uint64_t)e->line),
              e->column, e->text);
    return PTLOG_EXIT_INPUT;
}

static int doc_load(json_src *s)
{
    size_t cap = 1 << 20, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return ptlog_nomem();
    for (;;) {
        if (len == cap) {
            if (cap > JSON_DOC_MAX) {
                free(buf);
                ptlog_msg(s->base.name, "JSON document larger than 1 GiB: convert it to JSON Lines "
                                        "(one event per line) to read it as a stream");
                return PTLOG_EXIT_INPUT;
            }
            char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                return ptlog_nomem();
            }
            buf = p;
            cap *= 2;
        }
        long k = ptlog_in_read(s->in, buf + len, cap - len);
        if (k < 0) {
            free(buf);
            ptlog_msg(s->base.name, "cannot read: %s", strerror(errno));
            return PTLOG_EXIT_INPUT;
        }
        if (k == 0)
            break;
        len += (size_t)k;
    }
    json_error_t err;
    s->root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
    free(buf);
    if (!s->root)
        return syntax_error(s, &err, 0);
    if (!json_is_object(s->root)) {
        ptlog_msg(s->base.name, "expected a JSON object {\"events\": [...], ...}");
        return PTLOG_EXIT_INPUT;
    }
    int rc = parse_header(s, s->root);
    if (rc)
        return rc;
    s->events = json_object_get(s->root, "events");
    if (!json_is_array(s->events))
        return bad_value(s, NULL, "events", "expected an array of events");
    s->nevents = json_array_size(s->events);
    s->base.total_events = s->nevents;
    return 0;
}

/* ---- lines ------------------------------------------------------------------------------ */

/* Next non-blank line parsed, in *out (NULL at the end). */
static int read_line(json_src *s, json_t **out)
{
    *out = NULL;
    for (;;) {
        char *nl = s->pos < s->len ? memchr(s->buf + s->pos, '\n', s->len - s->pos) : NULL;
        if (!nl && !s->eof) {
            if (s->pos > 0) { /* keep the partial line at the start */
                memmove(s->buf, s->buf + s->pos, s->len - s->pos);
                s->len -= s->pos;
                s->pos = 0;
            }
            if (s->len == s->cap) {
                if (s->cap >= JSON_LINE_MAX) {
                    char w[512];
                    ptlog_msg(where(s, w, sizeof w), "line longer than 64 MiB");
                    return PTLOG_EXIT_INPUT;
                }
                size_t cap = s->cap ? s->cap * 2 : 1 << 20;
                char *p = realloc(s->buf, cap);
                if (!p)
                    return ptlog_nomem();
                s->buf = p;
                s->cap = cap;
            }
            long k = ptlog_in_read(s->in, s->buf + s->len, s->cap - s->len);
            if (k < 0) {
                ptlog_msg(s->base.name, "cannot read: %s", strerror(errno));
                return PTLOG_EXIT_INPUT;
            }
            if (k == 0)
                s->eof = 1;
            s->len += (size_t)k;
            continue;
        }
        if (s->pos >= s->len)
            return 0;
        size_t end = nl ? (size_t)(nl - s->buf) : s->len;
        const char *line = s->buf + s->pos;
        size_t n = end - s->pos;
        s->pos = nl ? end + 1 : s->len;
        s->line++;
        if (strspn(line, " \t\r") >= n)
            continue; /* blank line */
        json_error_t err;
        *out = json_loadb(line, n, JSON_REJECT_DUPLICATES, &err);
        if (!*out)
            return syntax_error(s, &err, s->line);
        return 0;
    }
}

static int lines_next(ptlog_src *base, tracelog_event *ev)
{
    json_src *s = (json_src *)base;
    for (;;) {
        json_t *o = s->pending;
        int rc = 0;
        s->pending = NULL;
        if (o)
            s->line = s->pending_line;
        else if ((rc = read_line(s, &o)))
            return -rc;
        if (!o)
            return 0;
        if (json_is_object(o) && json_object_get(o, "status")) {
            rc = parse_header(s, o); /* the last line: status and the full type table */
            json_decref(o);
            if (rc)
                return -rc;
            continue;
        }
        if (json_is_object(o) && (json_object_get(o, "format") || json_object_get(o, "attributes"))) {
            json_decref(o);
            char w[512];
            ptlog_msg(where(s, w, sizeof w), "a header line (with \"format\" or \"attributes\") must come first");
            return -PTLOG_EXIT_INPUT;
        }
        rc = event_from(s, o, ev);
        json_decref(o);
        return rc ? -rc : 1;
    }
}

static int lines_start(json_src *s)
{
    json_t *o;
    int rc = read_line(s, &o);
    if (rc || !o)
        return rc;
    if (json_is_object(o) && (json_object_get(o, "format") || json_object_get(o, "attributes"))) {
        rc = parse_header(s, o);
        json_decref(o);
        return rc;
    }
    s->pending = o; /* no header: the first line is already an event */
    s->pending_line = s->line;
    return 0;
}

/* ---- source interface ---------------------------------------------------------------------- */

static const char *js_type_name(ptlog_src *base, uint32_t id)
{
    return ptlog_types_name(&((json_src *)base)->types, id);
}

static size_t js_type_count(ptlog_src *base) { return ((json_src *)base)->types.n; }

static void js_type_at(ptlog_src *base, size_t i, uint32_t *id, const char **name)
{
    json_src *s = (json_src *)base;
    *id = s->types.v[i].id;
    *name = s->types.v[i].name;
}

static void js_get_status(ptlog_src *base, tracelog_log_status *st) { *st = ((json_src *)base)->status; }

static int js_finish(ptlog_src *base)
{
    (void)base;
    return PTLOG_EXIT_OK;
}

static void js_close(ptlog_src *base)
{
    json_src *s = (json_src *)base;
    json_decref(s->root);
    json_decref(s->pending);
    ptlog_types_free(&s->types);
    free(s->data);
    free(s->buf);
    ptlog_in_close(s->in);
    free(s->in);
    free(s);
}

int ptlog_json_src_open(ptlog_in *in, int lines, ptlog_src **out)
{
    json_src *s = calloc(1, sizeof *s);
    if (!s)
        return ptlog_nomem();
    ptlog_src *b = &s->base;
    s->in = in;
    s->lines = lines;
    b->name = in->name;
    b->format_major = TRACELOG_FORMAT_MAJOR;
    b->format_minor = TRACELOG_FORMAT_MINOR;
    b->meta.stream_full_policy = TRACELOG_POLICY_LOOP;
    b->meta.log_full_policy = TRACELOG_POLICY_APPEND;
    b->upfront = !lines; /* a loaded document knows its types and status up front */
    b->next = lines ? lines_next : doc_next;
    b->type_name = js_type_name;
    b->type_count = js_type_count;
    b->type_at = js_type_at;
    b->get_status = js_get_status;
    b->seek_time = NULL;
    b->finish = js_finish;
    b->close = js_close;
    int rc = lines ? lines_start(s) : doc_load(s);
    if (rc) {
        s->in = NULL; /* the caller still owns in on failure */
        json_decref(s->root);
        json_decref(s->pending);
        ptlog_types_free(&s->types);
        free(s->data);
        free(s->buf);
        free(s);
        return rc;
    }
    *out = b;
    return 0;
}
