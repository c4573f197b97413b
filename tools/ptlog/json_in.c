/*
 * Event sources over a JSON document and over JSON Lines, both streamed:
 * memory stays bounded whatever the number of events (one value of at most
 * 64 MiB is held at a time, found in linear time). Schema in README.md.
 *
 * Events are parsed by a fast path that accepts only plainly written
 * objects (what ptlog writes, typed events' fields included); anything
 * else goes through jansson, which
 * also produces the error messages. Every value is checked; errors name the
 * file, line and column (syntax) or the event index and key (values).
 * The input's buffer, positions, values' extents and plain values are
 * json_scan.c's; this file turns them into a log's attributes and events.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/text.h"
#include "json_scan.h"
#include "ptlog.h"

/*
 * The bytes of ptlog's own event lines from "pid" to "truncation" (the
 * thread and the call site) as the last line read had them, and their
 * values: consecutive events of one thread at one call site repeat them,
 * and bytes equal to these are not read again (own_object).
 */
#define SPAN_MAX 192 /* the longest plain span fits: a thread name of 64 bytes, ids written as "0x..." */
typedef struct span_memo {
    size_t len;         /* 0: none */
    char text[SPAN_MAX];
    uint64_t v[5];      /* pid, tid, address, truncation, ktid (raw_event's v[1..5]) */
    ptrdiff_t tname_at; /* the thread name's offset in text, -1: none */
    size_t tname_len;
} span_memo;

typedef struct json_src {
    ptlog_src base;
    ptlog_json_scan scan; /* the input, its buffer and the position in it */
    tracelog_event_types *types;
    ptlog_idmap schema_of;     /* id -> index in schemas of its latest schema */
    tracelog_schema **schemas; /* every schema read (pointers stay valid until close) */
    size_t nschemas, schemas_cap;
    size_t schema_bytes; /* canonical text of every schema kept (PTLOG_SCHEMA_BYTES_MAX) */
    tracelog_log_status status;
    unsigned char *data;
    size_t data_cap;
    uint64_t index;      /* of the next event */
    char tname[TRACELOG_THREAD_NAME_MAX + 1]; /* the thread name of the event returned last ("": none) */
    span_memo span;
    const char *last_name; /* the name the table gave last_id when an event last named it, or NULL */
    size_t last_name_len;
    uint32_t last_id;
    int ts_relative;     /* format.ts "relative": events' ts count from ts_origin */
    uint64_t ts_origin;
    /* document */
    int state;           /* DOC_* */
    int first_event;
    unsigned seen;       /* top-level keys seen (SEEN_*) */
    /* lines */
    json_t *pending;     /* an event line read while looking for the header */
    uint64_t pending_line;
} json_src;

enum { DOC_HEAD, DOC_EVENTS, DOC_TAIL, DOC_DONE };
enum { SEEN_FORMAT = 1, SEEN_ATTRIBUTES = 2, SEEN_TYPES = 4, SEEN_STATUS = 8, SEEN_EVENTS = 16 };

/* "FILE" or "FILE:LINE" for messages. */
static const char *where(json_src *s, char *buf, size_t n)
{
    if (!s->scan.lines)
        return s->base.name;
    snprintf(buf, n, "%s:%llu", s->base.name, (unsigned long long)s->scan.line);
    return buf;
}

/* The context of messages about the event being read: "event N", made only when a message is printed. */
static const char this_event[] = "event N";

static int bad_value(json_src *s, const char *what, const char *key, const char *expected)
{
    char w[512], ctx[32];
    if (what == this_event) {
        snprintf(ctx, sizeof ctx, "event %llu", (unsigned long long)s->index);
        what = ctx;
    }
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

static int hexval(int c);

/*
 * The exact bytes of a text that is not valid UTF-8: the "KEY_hex" sibling
 * of a text key (README.md, "JSON schema"). 1 to cap - 1 bytes without NUL,
 * written NUL-terminated to dst; -1 if v is not such a string.
 */
static int hex_text(const json_t *v, char *dst, size_t cap, size_t *len)
{
    if (!json_is_string(v))
        return -1;
    const char *h = json_string_value(v);
    size_t n = json_string_length(v);
    if (n == 0 || n % 2 || n / 2 >= cap)
        return -1;
    for (size_t i = 0; i < n / 2; i++) {
        int hi = hexval(h[2 * i]), lo = hexval(h[2 * i + 1]);
        if (hi < 0 || lo < 0 || (hi | lo) == 0)
            return -1;
        dst[i] = (char)(hi << 4 | lo);
    }
    dst[n / 2] = 0;
    *len = n / 2;
    return 0;
}

static int hex_text_error(json_src *s, const char *ctx, const char *key, size_t cap)
{
    char msg[96];
    snprintf(msg, sizeof msg, "expected hex digit pairs of 1 to %zu bytes, none of them 00", cap - 1);
    return bad_value(s, ctx, key, msg);
}

static int text_field(json_src *s, const json_t *obj, const char *key, const char *path, char *dst, size_t cap)
{
    char hex_key[64], hex_path[96];
    snprintf(hex_key, sizeof hex_key, "%s_hex", key);
    const json_t *hex = json_object_get(obj, hex_key);
    if (hex) { /* the exact bytes win over the text shown for them */
        size_t len;
        snprintf(hex_path, sizeof hex_path, "%s_hex", path);
        return hex_text(hex, dst, cap, &len) ? hex_text_error(s, NULL, hex_path, cap) : 0;
    }
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
    if (!json_is_string(v) || tracelog_policy_parse(json_string_value(v), &p) != TRACELOG_OK || p == bad)
        return bad_value(s, NULL, path,
                         bad == TRACELOG_POLICY_APPEND ? "expected \"loop\", \"until_full\" or \"flush\""
                                                       : "expected \"loop\", \"until_full\" or \"append\"");
    *dst = p;
    return 0;
}

/* attributes.clock_calibration (format 1.1): all four keys, mult not 0, shift at most 63. */
static int parse_calibration(json_src *s, const json_t *c, tracelog_metadata *m)
{
    if (!json_is_object(c))
        return bad_value(s, NULL, "attributes.clock_calibration", "expected an object");
    static const char *const keys[] = {"tsc_base", "ns_base", "mult", "shift"};
    uint64_t v[4];
    for (int i = 0; i < 4; i++) {
        char path[64];
        snprintf(path, sizeof path, "attributes.clock_calibration.%s", keys[i]);
        const json_t *x = json_object_get(c, keys[i]);
        uint64_t max = i == 3 ? 63 : UINT64_MAX;
        if (!x || get_u64(x, max, &v[i]))
            return bad_value(s, NULL, path, i == 3 ? "expected an integer from 0 to 63" : u64_expect(max));
        if (i == 2 && v[i] == 0)
            return bad_value(s, NULL, path, "expected a positive integer");
    }
    m->clock_tsc_base = v[0];
    m->clock_ns_base = v[1];
    m->clock_mult = v[2];
    m->clock_shift = (uint32_t)v[3];
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
    const json_t *cal = json_object_get(a, "clock_calibration");
    if (!rc && cal)
        rc = parse_calibration(s, cal, m);
    return rc;
}

static int add_type(json_src *s, uint32_t id, const char *name, const char *ctx, const char *key)
{
    if (tracelog_event_types_count(s->types) >= PTLOG_TYPES_MAX && !tracelog_event_types_name(s->types, id))
        return bad_value(s, ctx, key, "more than 65,536 event types (the most a .ptl log holds, format-spec 9.1)");
    tracelog_status st = tracelog_event_types_add(s->types, id, name);
    if (st == TRACELOG_E_NOMEM)
        return ptlog_nomem();
    if (st != TRACELOG_OK) { /* the name was checked: the id has another one */
        char msg[400];
        snprintf(msg, sizeof msg, "event type %u is named both \"%.120s\" and \"%.120s\"", id,
                 tracelog_event_types_name(s->types, id), name);
        return bad_value(s, ctx, key, msg);
    }
    return 0;
}

/* An entry's "schema": parsed, kept for id; an invalid text names its byte. */
static int add_schema(json_src *s, uint32_t id, const json_t *text, const char *ctx)
{
    if (!json_is_string(text) || memchr(json_string_value(text), 0, json_string_length(text)))
        return bad_value(s, ctx, "schema", "expected a schema text (format-spec 5.6)");
    tracelog_schema *schema;
    tracelog_error err;
    tracelog_status st = tracelog_schema_parse(json_string_value(text), &schema, &err);
    if (st == TRACELOG_E_NOMEM)
        return ptlog_nomem();
    if (st != TRACELOG_OK)
        return bad_value(s, ctx, "schema", err.message);
    /* The same schema again (status lines repeat the table): kept once. Every one kept stays valid
       (handed out), so what a stream of changes may keep is bounded. */
    size_t have = ptlog_idmap_get(&s->schema_of, id);
    const char *canon = tracelog_schema_text(schema);
    if (have != SIZE_MAX && strcmp(tracelog_schema_text(s->schemas[have]), canon) == 0) {
        tracelog_schema_free(schema);
        return 0;
    }
    size_t bytes = strlen(canon);
    if (bytes > PTLOG_SCHEMA_BYTES_MAX - s->schema_bytes) {
        tracelog_schema_free(schema);
        return bad_value(s, ctx, "schema", "more than 4 MiB of schema text in all (the most a .ptl log holds, "
                                           "format-spec 9.1)");
    }
    s->schema_bytes += bytes;
    tracelog_schema **v = tl_grow(s->schemas, &s->schemas_cap, s->nschemas + 1, sizeof *v);
    if (!v) {
        tracelog_schema_free(schema);
        return ptlog_nomem();
    }
    s->schemas = v;
    s->schemas[s->nschemas] = schema;
    if (ptlog_idmap_put(&s->schema_of, id, s->nschemas++))
        return ptlog_nomem();
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
        const json_t *name = json_object_get(t, "name"), *hex = json_object_get(t, "name_hex");
        uint64_t id;
        char bytes[TRACELOG_TEXT_MAX + 1];
        size_t len;
        if (!json_is_object(t))
            return bad_value(s, ctx, "id", "expected an object {\"id\":..., \"name\":...}");
        if (get_u64(json_object_get(t, "id"), UINT32_MAX, &id))
            return bad_value(s, ctx, "id", u64_expect(UINT32_MAX));
        if (hex && hex_text(hex, bytes, sizeof bytes, &len))
            return hex_text_error(s, ctx, "name_hex", sizeof bytes);
        if (!hex && (!json_is_string(name) || json_string_length(name) == 0 ||
                     json_string_length(name) > TRACELOG_TEXT_MAX ||
                     memchr(json_string_value(name), 0, json_string_length(name))))
            return bad_value(s, ctx, "name", "expected a name of 1 to 255 bytes");
        int rc = add_type(s, (uint32_t)id, hex ? bytes : json_string_value(name), ctx, "name");
        const json_t *schema = json_object_get(t, "schema");
        if (!rc && schema && !json_is_null(schema))
            rc = add_schema(s, (uint32_t)id, schema, ctx);
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
    if (!rc)
        rc = u64_field(s, o, "types_dropped", "status.types_dropped", UINT64_MAX, &st->types_dropped);
    if (!rc)
        rc = u64_field(s, o, "threads_dropped", "status.threads_dropped", UINT64_MAX, &st->threads_dropped);
    const json_t *full = json_object_get(o, "log_full");
    if (!rc && full) {
        if (!json_is_boolean(full))
            return bad_value(s, NULL, "status.log_full", "expected true or false");
        st->log_full = json_is_true(full);
    }
    return rc;
}

/* format.ts (how events' ts are written: "ns", "text", "relative") and format.ts_origin_ns (README.md). */
static int parse_ts_form(json_src *s, const json_t *f)
{
    const json_t *form = json_object_get(f, "ts");
    const char *text = json_is_string(form) ? json_string_value(form) : NULL;
    if (!form || json_is_null(form))
        return 0;
    if (!text || (strcmp(text, "ns") != 0 && strcmp(text, "text") != 0 && strcmp(text, "relative") != 0))
        return bad_value(s, NULL, "format.ts", "expected \"ns\", \"text\" or \"relative\"");
    s->ts_relative = strcmp(text, "relative") == 0;
    if (s->ts_relative && !json_object_get(f, "ts_origin_ns"))
        return bad_value(s, NULL, "format.ts_origin_ns", "missing (relative timestamps count from it)");
    return u64_field(s, f, "ts_origin_ns", "format.ts_origin_ns", UINT64_MAX, &s->ts_origin);
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
    return rc ? rc : parse_ts_form(s, f);
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

/* An event's fields before the checks shared by both parsers. */
#define NUM_FIELDS 6 /* the integer fields of an event */

typedef struct raw_event {
    uint64_t v[NUM_FIELDS]; /* ts, pid, tid, address, truncation, ktid */
    int has_ts, has_id;
    int ts_negative;     /* a relative ts below 0: v[0] holds its magnitude */
    uint64_t id;
    const char *name;    /* NULL: absent or null */
    size_t name_len;
    const char *data;    /* hex digits, NULL: absent or null */
    size_t data_len;
    const char *tname;   /* the thread's name (format 1.2), NULL: absent or null */
    size_t tname_len;
} raw_event;

static const char *const num_keys[NUM_FIELDS] = {"ts", "pid", "tid", "address", "truncation", "ktid"};
static const uint64_t num_max[NUM_FIELDS] = {UINT64_MAX, UINT32_MAX, UINT64_MAX, UINT64_MAX, 2, UINT32_MAX};

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

static int resolve_type(json_src *s, const char *ctx, const raw_event *r, uint32_t *out)
{
    char name[TRACELOG_TEXT_MAX + 1];
    /* The usual case: the same type as the event before. A table entry is never renamed (add_type refuses
       it), so the name it gave stays right; equal to it, r's name is a valid one. */
    if (r->name && r->has_id && s->last_name && r->id == s->last_id && r->name_len == s->last_name_len &&
        memcmp(r->name, s->last_name, r->name_len) == 0) {
        *out = s->last_id;
        return 0;
    }
    if (r->name) {
        if (r->name_len == 0 || r->name_len > TRACELOG_TEXT_MAX || memchr(r->name, 0, r->name_len))
            return bad_value(s, ctx, "name", "expected null or a name of 1 to 255 bytes");
        memcpy(name, r->name, r->name_len);
        name[r->name_len] = 0;
    }
    if (r->has_id) {
        if (r->id > UINT32_MAX)
            return bad_value(s, ctx, "id", u64_expect(UINT32_MAX));
        *out = (uint32_t)r->id;
        if (!r->name)
            return 0;
        int rc = add_type(s, *out, name, ctx, "name");
        s->last_id = *out;
        s->last_name = rc ? NULL : tracelog_event_types_name(s->types, *out);
        s->last_name_len = s->last_name ? strlen(s->last_name) : 0;
        return rc;
    }
    if (!r->name)
        return bad_value(s, ctx, "id", "missing (an event needs an \"id\" or a \"name\")");
    if (tracelog_event_types_find(s->types, name, out))
        return 0;
    /* a new name without an id: the next free id */
    uint32_t last = 0;
    size_t n = tracelog_event_types_count(s->types);
    if (n)
        tracelog_event_types_at(s->types, n - 1, &last, NULL);
    uint64_t id = n ? last + 1ull : 0;
    if (id > UINT32_MAX)
        return bad_value(s, ctx, "id", "missing, and no free event type id is left");
    *out = (uint32_t)id;
    return add_type(s, *out, name, ctx, "name");
}

/* Hex digit values, -1 for other bytes. */
static signed char hex_table[256];

static void init_hex_table(void)
{
    for (int c = 0; c < 256; c++)
        hex_table[c] = (signed char)hexval(c);
}

/* Decodes n bytes from 2n hex digits; 0, or -1 when one is not a hex digit (out is then undefined). */
static int unhex(const char *hex, size_t n, unsigned char *out)
{
    const unsigned char *h = (const unsigned char *)hex;
    int bad = 0; /* negative once a digit was not one: checked once, after the loop */
    for (size_t i = 0; i < n; i++) {
        int hi = hex_table[h[2 * i]], lo = hex_table[h[2 * i + 1]];
        bad |= hi | lo;
        out[i] = (unsigned char)((unsigned)hi << 4 | (unsigned)lo);
    }
    return bad < 0 ? -1 : 0;
}

/* The event's thread name: 1..64 bytes without NUL, and only with the kernel tid that a .ptl log names it by. */
static int take_tname(json_src *s, const char *ctx, const raw_event *r, const tracelog_event *ev)
{
    s->tname[0] = 0;
    if (!r->tname)
        return 0;
    if (r->tname_len == 0 || r->tname_len > TRACELOG_THREAD_NAME_MAX || memchr(r->tname, 0, r->tname_len))
        return bad_value(s, ctx, "tname", "expected null or a thread name of 1 to 64 bytes without NUL");
    if (!ev->kernel_tid)
        return bad_value(s, ctx, "tname", "a thread name needs the thread's \"ktid\" (a .ptl log names threads by it)");
    memcpy(s->tname, r->tname, r->tname_len);
    s->tname[r->tname_len] = 0;
    return 0;
}

/*
 * An event's ts into r->v[0] (README.md, "JSON schema"): an integer or
 * "0x..."/decimal string, a "SECONDS.NNNNNNNNN" text (9 digits), or with
 * format.ts "relative" an integer that may be negative. 0 or -1.
 */
static int get_ts(const json_src *s, const json_t *v, raw_event *r)
{
    const char *t = json_is_string(v) ? json_string_value(v) : NULL;
    const char *dot = t ? strchr(t, '.') : NULL;
    if (dot) {
        uint64_t sec = 0, ns = 0;
        size_t n = (size_t)(dot - t);
        if (n == 0 || n > 11 || strspn(t, "0123456789") != n || strlen(dot + 1) != 9 ||
            strspn(dot + 1, "0123456789") != 9)
            return -1;
        for (size_t i = 0; i < n; i++)
            sec = sec * 10 + (uint64_t)(t[i] - '0');
        for (size_t i = 1; i <= 9; i++)
            ns = ns * 10 + (uint64_t)(dot[i] - '0');
        if (sec > (UINT64_MAX - ns) / 1000000000u)
            return -1;
        r->v[0] = sec * 1000000000u + ns;
        return 0;
    }
    if (s->ts_relative && json_is_integer(v) && json_integer_value(v) < 0) {
        r->ts_negative = 1;
        r->v[0] = 0 - (uint64_t)json_integer_value(v);
        return 0;
    }
    if (s->ts_relative && t && t[0] == '-') { /* "-DIGITS": before the origin by more than 2^63 ns */
        errno = 0;
        char *end;
        r->ts_negative = 1;
        r->v[0] = strtoull(t + 1, &end, 10);
        return t[1] >= '0' && t[1] <= '9' && !*end && !errno ? 0 : -1;
    }
    return get_u64(v, UINT64_MAX, &r->v[0]);
}

/* The absolute ts of r: relative ones count from format.ts_origin_ns. 0 or -1 (out of range). */
static int absolute_ts(const json_src *s, const raw_event *r, uint64_t *ts)
{
    if (!s->ts_relative) {
        *ts = r->v[0];
        return 0;
    }
    if (r->ts_negative ? r->v[0] > s->ts_origin : r->v[0] > UINT64_MAX - s->ts_origin)
        return -1;
    *ts = r->ts_negative ? s->ts_origin - r->v[0] : s->ts_origin + r->v[0];
    return 0;
}

static int build_event(json_src *s, const raw_event *r, tracelog_event *ev)
{
    const char *ctx = this_event;
    memset(ev, 0, sizeof *ev);
    if (!r->has_ts)
        return bad_value(s, ctx, "ts", "missing (integer nanoseconds since the epoch)");
    for (size_t i = 0; i < NUM_FIELDS; i++)
        if (r->v[i] > num_max[i])
            return bad_value(s, ctx, num_keys[i], u64_expect(num_max[i]));
    if (absolute_ts(s, r, &ev->timestamp_ns))
        return bad_value(s, ctx, "ts", "relative time out of range of format.ts_origin_ns");
    ev->pid = (uint32_t)r->v[1];
    ev->tid = r->v[2];
    ev->address = r->v[3];
    ev->truncation = (uint32_t)r->v[4];
    ev->kernel_tid = (uint32_t)r->v[5];
    int rc = take_tname(s, ctx, r, ev);
    if (!rc)
        rc = resolve_type(s, ctx, r, &ev->event_id);
    if (rc)
        return rc;
    if (r->data && r->data_len) {
        size_t n = r->data_len / 2;
        if (r->data_len % 2)
            return bad_value(s, ctx, "data", "expected a string of hex digit pairs");
        if (n > PTLOG_PAYLOAD_MAX) {
            char msg[160];
            snprintf(msg, sizeof msg, "payload of %zu bytes is over the limit of %u bytes (16 MiB - 75, the largest "
                     "a .ptl event holds)", n, (unsigned)PTLOG_PAYLOAD_MAX);
            return bad_value(s, ctx, "data", msg);
        }
        if (n > s->data_cap) {
            unsigned char *p = realloc(s->data, n);
            if (!p)
                return ptlog_nomem();
            s->data = p;
            s->data_cap = n;
        }
        if (unhex(r->data, n, s->data))
            return bad_value(s, ctx, "data", "expected a string of hex digit pairs");
        ev->payload = s->data;
        ev->payload_len = (uint32_t)n;
    }
    s->index++;
    return 0;
}

/*
 * An event's text key (name, tname) into *text and *len: the exact bytes of
 * its KEY_hex sibling when there is one (into bytes, of cap), else its
 * string; left NULL when absent or null. 0 or the exit code of a bad value.
 */
static int event_text(json_src *s, const char *ctx, const json_t *o, const char *key, const char *expected,
                      char *bytes, size_t cap, const char **text, size_t *len)
{
    char hex_key[16];
    snprintf(hex_key, sizeof hex_key, "%s_hex", key);
    const json_t *hex = json_object_get(o, hex_key), *v = json_object_get(o, key);
    if (hex) {
        if (hex_text(hex, bytes, cap, len))
            return hex_text_error(s, ctx, hex_key, cap);
        *text = bytes;
        return 0;
    }
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_string(v))
        return bad_value(s, ctx, key, expected);
    *text = json_string_value(v);
    *len = json_string_length(v);
    return 0;
}

/* The general path: any JSON value, checked key by key. */
static int event_from_json(json_src *s, const json_t *o, tracelog_event *ev)
{
    const char *ctx = this_event;
    if (!json_is_object(o))
        return bad_value(s, ctx, "ts", "expected an event object");
    raw_event r;
    memset(&r, 0, sizeof r);
    const json_t *ts = json_object_get(o, "ts");
    if (ts && get_ts(s, ts, &r))
        return bad_value(s, ctx, "ts", s->ts_relative ? "expected integer nanoseconds since format.ts_origin_ns"
                                                       : "expected integer nanoseconds since the epoch, or "
                                                         "\"SECONDS.NNNNNNNNN\"");
    r.has_ts = ts != NULL;
    for (size_t i = 1; i < NUM_FIELDS; i++) {
        const json_t *v = json_object_get(o, num_keys[i]);
        if (v && get_u64(v, UINT64_MAX, &r.v[i]))
            return bad_value(s, ctx, num_keys[i], u64_expect(num_max[i]));
    }
    const json_t *jid = json_object_get(o, "id");
    char bytes[TRACELOG_TEXT_MAX + 1], tname[TRACELOG_THREAD_NAME_MAX + 1]; /* exact names, from KEY_hex */
    if (jid) {
        if (get_u64(jid, UINT64_MAX, &r.id))
            return bad_value(s, ctx, "id", u64_expect(UINT32_MAX));
        r.has_id = 1;
    }
    int rc = event_text(s, ctx, o, "name", "expected null or a name of 1 to 255 bytes", bytes, sizeof bytes,
                        &r.name, &r.name_len);
    if (!rc)
        rc = event_text(s, ctx, o, "tname", "expected null or a thread name of 1 to 64 bytes without NUL", tname,
                        sizeof tname, &r.tname, &r.tname_len);
    if (rc)
        return rc;
    const json_t *data = json_object_get(o, "data");
    if (data && !json_is_null(data)) {
        if (!json_is_string(data))
            return bad_value(s, ctx, "data", "expected a string of hex digit pairs");
        r.data = json_string_value(data);
        r.data_len = json_string_length(data);
    }
    return build_event(s, &r, ev);
}

/* ---- fast path: flat objects of known keys (their values read by json_scan.c) ---------------- */

/* A plain string (ptlog_json_plain_string) into *str and *len, or null (left NULL): past it, or NULL. */
static const char *plain_text_or_null(const char *p, const char *end, const char **str, size_t *len)
{
    if (end - p >= 4 && memcmp(p, "null", 4) == 0)
        return p + 4;
    return p < end && *p == '"' ? ptlog_json_plain_string(p, end, str, len) : NULL;
}

/* The keys of an event object that the fast path knows, and their index (NUM_FIELDS integers, then the others). */
static const struct {
    char name[12];
    unsigned char len;
    signed char key;
} event_keys[] = {
    {"ts", 2, 0},  {"pid", 3, 1},           {"tid", 3, 2},          {"address", 7, 3},        {"truncation", 10, 4},
    {"ktid", 4, 5}, {"id", 2, NUM_FIELDS}, {"name", 4, NUM_FIELDS + 1}, {"data", 4, NUM_FIELDS + 2},
    {"fields", 6, NUM_FIELDS + 3}, {"fields_size", 11, NUM_FIELDS + 4}, {"tname", 5, NUM_FIELDS + 5},
};

/* The index of key[0..klen), or -1. */
static int event_key(const char *key, size_t klen)
{
    for (size_t i = 0; i < sizeof event_keys / sizeof event_keys[0]; i++)
        if (event_keys[i].len == klen && memcmp(event_keys[i].name, key, klen) == 0)
            return event_keys[i].key;
    return -1;
}

/* An event object at p (after blanks), parsed into *r: its end, or NULL when not plain enough (use jansson). */
static const char *fast_object(const char *p, const char *end, raw_event *r)
{
    unsigned seen = 0;
    memset(r, 0, sizeof *r);
    if (p == end || *p++ != '{')
        return NULL;
    p = ptlog_json_skip_blank(p, end);
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        const char *key;
        size_t klen;
        if (p == end || *p != '"' || !(p = ptlog_json_plain_string(p, end, &key, &klen)))
            return NULL;
        p = ptlog_json_skip_blank(p, end);
        if (p == end || *p++ != ':')
            return NULL;
        int k = event_key(key, klen);
        p = ptlog_json_skip_blank(p, end);
        if (k < 0 || (seen & (1u << k)))
            return NULL; /* unknown or repeated key */
        seen |= 1u << k;
        if (k < NUM_FIELDS) {
            if (!(p = ptlog_json_plain_u64(p, end, &r->v[k])))
                return NULL;
            if (k == 0)
                r->has_ts = 1;
        } else if (k == NUM_FIELDS) {
            if (!(p = ptlog_json_plain_u64(p, end, &r->id)))
                return NULL;
            r->has_id = 1;
        } else if (k == NUM_FIELDS + 3 || k == NUM_FIELDS + 4) {
            if (!(p = ptlog_json_plain_value(p, end, 0)))
                return NULL;
        } else {
            const char **str = k == NUM_FIELDS + 1 ? &r->name : k == NUM_FIELDS + 2 ? &r->data : &r->tname;
            size_t *len = k == NUM_FIELDS + 1 ? &r->name_len : k == NUM_FIELDS + 2 ? &r->data_len : &r->tname_len;
            if (!(p = plain_text_or_null(p, end, str, len)))
                return NULL;
        }
        p = ptlog_json_skip_blank(p, end);
        if (p < end && *p == ',') {
            p = ptlog_json_skip_blank(p + 1, end);
            continue;
        }
        return p < end && *p == '}' ? p + 1 : NULL;
    }
}

/* The literal lit[0..n) at p: p past it, or NULL. Inlined with a constant n: a compare or two, no call. */
static inline const char *literal(const char *p, const char *end, const char *lit, size_t n)
{
    return (size_t)(end - p) >= n && memcmp(p, lit, n) == 0 ? p + n : NULL;
}
#define LITERAL(p, end, lit) literal(p, end, lit, sizeof(lit) - 1)

/* A value that is most often lit (`{}`, `null`): compared, else read as any plain value, whose blanks hold no
   newline when one_line (a line of JSON Lines read before its end was found). */
static inline const char *usual_value(const char *p, const char *end, const char *lit, size_t n, int one_line)
{
    const char *q = literal(p, end, lit, n);
    if (q)
        return q;
    q = ptlog_json_plain_value(p, end, 0);
    return q && one_line && memchr(p, '\n', (size_t)(q - p)) ? NULL : q;
}

/*
 * An event object exactly as ptlog writes it (json_out.c): its keys in that
 * order, without blanks. Read in one straight pass of literal compares, with
 * no key looked up; what differs in any way (another order, blanks, a
 * name_hex) is left to fast_object, which takes the keys as they come.
 * one_line: p is a line of JSON Lines whose end is not known yet, so a
 * newline inside the object ends the line there (the object is refused).
 */
static const char *own_object(const char *p, const char *end, raw_event *r, span_memo *m, int one_line)
{
    const char *q;
    /* What the keys below may leave unset, one by one: a memset of r is a rep stos, slow to start */
    r->has_id = r->has_ts = 1;
    r->ts_negative = 0;
    r->v[5] = 0;
    r->name = r->data = r->tname = NULL;
    r->name_len = r->data_len = r->tname_len = 0;
    if (!(p = LITERAL(p, end, "{\"name\":")) || !(p = plain_text_or_null(p, end, &r->name, &r->name_len)) ||
        !(p = LITERAL(p, end, ",\"id\":")) || !(p = ptlog_json_plain_u64(p, end, &r->id)) ||
        !(p = LITERAL(p, end, ",\"ts\":")) || !(p = ptlog_json_plain_u64(p, end, &r->v[0])))
        return NULL;
    const char *span = p;
    if (m->len && (size_t)(end - p) >= m->len && memcmp(p, m->text, m->len) == 0) {
        /* The same bytes as the last line's, up to the same "data" (checked below): the same values */
        memcpy(&r->v[1], m->v, sizeof m->v);
        if (m->tname_at >= 0) {
            r->tname = m->text + m->tname_at;
            r->tname_len = m->tname_len;
        }
        p += m->len;
    } else {
        if (!(p = LITERAL(p, end, ",\"pid\":")) || !(p = ptlog_json_plain_u64(p, end, &r->v[1])) ||
            !(p = LITERAL(p, end, ",\"tid\":")) || !(p = ptlog_json_plain_u64(p, end, &r->v[2])))
            return NULL;
        if ((q = LITERAL(p, end, ",\"ktid\":")) && !(p = ptlog_json_plain_u64(q, end, &r->v[5])))
            return NULL;
        if ((q = LITERAL(p, end, ",\"tname\":")) && !(p = plain_text_or_null(q, end, &r->tname, &r->tname_len)))
            return NULL;
        if (!(p = LITERAL(p, end, ",\"address\":")) || !(p = ptlog_json_plain_u64(p, end, &r->v[3])) ||
            !(p = LITERAL(p, end, ",\"truncation\":")) || !(p = ptlog_json_plain_u64(p, end, &r->v[4])))
            return NULL;
        m->len = 0;
        if ((size_t)(p - span) <= sizeof m->text) {
            m->len = (size_t)(p - span);
            memcpy(m->text, span, m->len);
            memcpy(m->v, &r->v[1], sizeof m->v);
            m->tname_at = r->tname ? r->tname - span : -1;
            m->tname_len = r->tname_len;
        }
    }
    if (!(p = LITERAL(p, end, ",\"data\":")) || !(p = plain_text_or_null(p, end, &r->data, &r->data_len)) ||
        !(p = LITERAL(p, end, ",\"fields\":")) || !(p = usual_value(p, end, "{}", 2, one_line)) ||
        !(p = LITERAL(p, end, ",\"fields_size\":")) || !(p = usual_value(p, end, "null", 4, one_line)))
        return NULL;
    return LITERAL(p, end, "}");
}

/* An event object at p (after blanks) as own_object or else fast_object read it: its end, or NULL (use jansson). */
static const char *fast_event(const char *p, const char *end, raw_event *r, span_memo *m)
{
    const char *e = own_object(p, end, r, m, 0);
    return e ? e : fast_object(p, end, r);
}

/* 1: the whole of p[0..n) is an event object parsed into *r; 0: not plain enough, use jansson. */
static int fast_parse(const char *p, size_t n, raw_event *r, span_memo *m)
{
    const char *end = p + n;
    if (!ptlog_json_fast_paths)
        return 0;
    p = fast_event(ptlog_json_skip_blank(p, end), end, r, m);
    return p && ptlog_json_skip_blank(p, end) == end;
}

static int doc_member_value(json_src *s, const char *key)
{
    static const struct { const char *key; unsigned bit; } known[] = {
        {"format", SEEN_FORMAT}, {"attributes", SEEN_ATTRIBUTES}, {"event_types", SEEN_TYPES},
        {"status", SEEN_STATUS}, {"events", SEEN_EVENTS},
    };
    unsigned bit = 0;
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (strcmp(key, known[i].key) == 0)
            bit = known[i].bit;
    uint64_t line, col;
    ptlog_json_position(&s->scan, s->scan.pos, &line, &col);
    if (bit & s->seen)
        return ptlog_json_syntax_at(&s->scan, line, col, "duplicate key in the document");
    s->seen |= bit;
    if (bit == SEEN_ATTRIBUTES && s->state == DOC_TAIL) {
        ptlog_msg(s->base.name, "\"attributes\" must come before \"events\" (documents are read as a stream)");
        return PTLOG_EXIT_INPUT;
    }
    if (bit == SEEN_EVENTS) {
        int c, rc = ptlog_json_expect_char(&s->scan, "[", "'[' (the events array)", &c);
        if (rc)
            return rc;
        s->state = DOC_EVENTS;
        s->first_event = 1;
        return 0;
    }
    size_t start, len;
    json_t *v;
    int rc = ptlog_json_scan_value(&s->scan, &start, &len);
    if (!rc)
        rc = ptlog_json_load_value(&s->scan, start, len, &v);
    if (rc || !bit) {
        if (!rc)
            json_decref(v);
        return rc;
    }
    json_t *wrap = json_object();
    if (!wrap || json_object_set_new(wrap, key, v)) {
        json_decref(wrap);
        return ptlog_nomem();
    }
    rc = parse_header(s, wrap);
    json_decref(wrap);
    return rc;
}

/* After the closing '}': only blanks may follow. */
static int doc_end(json_src *s)
{
    int err;
    if (ptlog_json_peek(&s->scan, &err) >= 0 || err) {
        uint64_t line, col;
        ptlog_json_position(&s->scan, s->scan.pos, &line, &col);
        return err ? err : ptlog_json_syntax_at(&s->scan, line, col, "unexpected data after the JSON document");
    }
    s->state = DOC_DONE;
    return 0;
}

/* After a member: ',' (returns -1: another member follows) or '}' and the end. */
static int doc_after_member(json_src *s)
{
    int c, rc = ptlog_json_expect_char(&s->scan, ",}", "',' or '}'", &c);
    if (rc)
        return rc;
    return c == '}' ? doc_end(s) : -1;
}

/* Reads members until the events array opens or the document ends. */
static int doc_members(json_src *s, int first)
{
    for (;;) {
        int err, c = ptlog_json_peek(&s->scan, &err);
        if (err)
            return err;
        if (first && c == '}') {
            ptlog_json_advance(&s->scan, s->scan.pos + 1);
            return doc_end(s);
        }
        first = 0;
        size_t start, len;
        json_t *k;
        if (c != '"') {
            uint64_t line, col;
            ptlog_json_position(&s->scan, s->scan.pos, &line, &col);
            return ptlog_json_syntax_at(&s->scan, line, col,
                                        c < 0 ? "unexpected end of input, expected a key" : "expected a key");
        }
        int rc = ptlog_json_scan_value(&s->scan, &start, &len);
        if (!rc)
            rc = ptlog_json_load_value(&s->scan, start, len, &k);
        if (rc)
            return rc;
        char key[64];
        tl_copy_text(key, sizeof key, json_string_value(k)); /* longer keys are unknown ones anyway */
        json_decref(k);
        if ((rc = ptlog_json_expect_char(&s->scan, ":", "':'", &c)) || (rc = doc_member_value(s, key)))
            return rc;
        if (s->state == DOC_EVENTS)
            return 0;
        rc = doc_after_member(s);
        if (rc >= 0)
            return rc;
    }
}

static int doc_next(ptlog_src *base, tracelog_event *ev)
{
    json_src *s = (json_src *)base;
    while (s->state == DOC_EVENTS) {
        int c, rc;
        if (s->first_event) {
            int err;
            c = ptlog_json_peek(&s->scan, &err);
            if (err)
                return -err;
            if (c == ']')
                ptlog_json_advance(&s->scan, s->scan.pos + 1);
            s->first_event = 0;
        } else {
            if ((rc = ptlog_json_expect_char(&s->scan, ",]", "',' or ']'", &c)))
                return -rc;
        }
        if (c == ']') {
            s->state = DOC_TAIL;
            rc = doc_after_member(s);
            if (rc < 0)
                rc = doc_members(s, 0);
            if (rc)
                return -rc;
            break;
        }
        raw_event r;
        int err;
        if (ptlog_json_peek(&s->scan, &err) == '{' && ptlog_json_fast_paths) { /* the common case: a plain event whole in the buffer, parsed in place */
            const char *e = fast_event(s->scan.buf + s->scan.pos, s->scan.buf + s->scan.len, &r, &s->span);
            if (e) {
                ptlog_json_advance(&s->scan, (size_t)(e - s->scan.buf));
                rc = build_event(s, &r, ev);
                return rc ? -rc : 1;
            }
        }
        if (err)
            return -err;
        size_t start, len;
        if ((rc = ptlog_json_scan_value(&s->scan, &start, &len)))
            return -rc;
        if (fast_parse(s->scan.buf + start, len, &r, &s->span)) {
            ptlog_json_advance(&s->scan, start + len);
            rc = build_event(s, &r, ev);
        } else {
            json_t *o;
            rc = ptlog_json_load_value(&s->scan, start, len, &o);
            if (!rc) {
                rc = event_from_json(s, o, ev);
                json_decref(o);
            }
        }
        return rc ? -rc : 1;
    }
    return 0;
}

static int doc_start(json_src *s)
{
    s->scan.line = 1;
    int c, rc = ptlog_json_expect_char(&s->scan, "{", "'{' (a JSON object)", &c);
    if (!rc)
        rc = doc_members(s, 1);
    return rc;
}

/* ---- lines ------------------------------------------------------------------------------------------ */

static int is_header(const json_t *o)
{
    return json_is_object(o) && (json_object_get(o, "format") || json_object_get(o, "attributes"));
}

int ptlog_json_fast_paths = 1;

/* 1 when the next line is a line of ptlog's own (own_object) whole in the buffer: parsed into *r and
   consumed, without searching for its end first. */
static int own_line(json_src *s, raw_event *r)
{
    const char *line = s->scan.buf + s->scan.pos, *end = s->scan.buf + s->scan.len;
    if (!ptlog_json_fast_paths || s->scan.pos >= s->scan.len || *line != '{')
        return 0;
    const char *e = own_object(line, end, r, &s->span, 1);
    return e && e < end && *e == '\n' && ptlog_json_take_line(&s->scan, (size_t)(e - s->scan.buf));
}

static int lines_next(ptlog_src *base, tracelog_event *ev)
{
    json_src *s = (json_src *)base;
    for (;;) {
        json_t *o = s->pending;
        int rc;
        s->pending = NULL;
        if (o) {
            s->scan.line = s->pending_line;
        } else {
            size_t start, len;
            raw_event r;
            if (own_line(s, &r)) {
                rc = build_event(s, &r, ev);
                return rc ? -rc : 1;
            }
            if ((rc = ptlog_json_next_line(&s->scan, &start, &len)))
                return -rc;
            if (len == 0)
                return 0;
            if (fast_parse(s->scan.buf + start, len, &r, &s->span)) {
                rc = build_event(s, &r, ev);
                return rc ? -rc : 1;
            }
            if ((rc = ptlog_json_load_line(&s->scan, start, len, &o)))
                return -rc;
        }
        /* Checked before the status line: attributes read after events were written would be lost. */
        if (is_header(o)) {
            json_decref(o);
            char w[512];
            ptlog_msg(where(s, w, sizeof w), "a header line (with \"format\" or \"attributes\") must come first");
            return -PTLOG_EXIT_INPUT;
        }
        if (json_is_object(o) && json_object_get(o, "status")) {
            rc = parse_header(s, o); /* the last line: status and the full type table */
            json_decref(o);
            if (rc)
                return -rc;
            continue;
        }
        rc = event_from_json(s, o, ev);
        json_decref(o);
        return rc ? -rc : 1;
    }
}

static int lines_start(json_src *s)
{
    size_t start, len;
    json_t *o;
    s->scan.long_line_quiet = 1;
    int rc = ptlog_json_next_line(&s->scan, &start, &len);
    s->scan.long_line_quiet = 0;
    /* A first line over the limit of a line that is a JSON document on one line (jq -c of a large log):
       the limit binds its values, not the line. Its "events" key lies in the 64 MiB held, or a value
       before it is over the limit. */
    if (rc && s->scan.too_long) {
        start = s->scan.pos;
        len = s->scan.len - start;
        if (!ptlog_looks_like_document((const unsigned char *)s->scan.buf + start, len))
            return ptlog_json_line_too_long(&s->scan);
    } else if (rc || len == 0) {
        return rc;
    }
    /* A JSON document on one line whose "events" come after the first 4 KiB that detection looks
       at (many event types, jq -c): read as the document it is, streamed value by value (its events
       were once dropped without a word). */
    if (ptlog_looks_like_document((const unsigned char *)s->scan.buf + start, len)) {
        s->scan.lines = 0;
        s->scan.pos = start;
        s->scan.scanned = 0;
        s->base.next = doc_next;
        return doc_start(s);
    }
    if ((rc = ptlog_json_load_line(&s->scan, start, len, &o)))
        return rc;
    if (is_header(o)) {
        rc = parse_header(s, o);
        json_decref(o);
        return rc;
    }
    s->pending = o; /* no header: the first line is already an event */
    s->pending_line = s->scan.line;
    return 0;
}

/* ---- source interface ---------------------------------------------------------------------- */

static const char *js_type_name(ptlog_src *base, uint32_t id)
{
    json_src *s = (json_src *)base;
    if (s->last_name && id == s->last_id) /* the type of the event just read, most often */
        return s->last_name;
    return tracelog_event_types_name(s->types, id);
}

static const tracelog_schema *js_type_schema(ptlog_src *base, uint32_t id)
{
    json_src *s = (json_src *)base;
    size_t i = ptlog_idmap_get(&s->schema_of, id);
    return i == SIZE_MAX ? NULL : s->schemas[i];
}

static void free_schemas(json_src *s)
{
    for (size_t i = 0; i < s->nschemas; i++)
        tracelog_schema_free(s->schemas[i]);
    free(s->schemas);
    ptlog_idmap_free(&s->schema_of);
}

static size_t js_type_count(ptlog_src *base) { return tracelog_event_types_count(((json_src *)base)->types); }

static void js_type_at(ptlog_src *base, size_t i, uint32_t *id, const char **name)
{
    tracelog_event_types_at(((json_src *)base)->types, i, id, name);
}

static void js_get_status(ptlog_src *base, tracelog_log_status *st) { *st = ((json_src *)base)->status; }

static const char *js_thread_name(ptlog_src *base, const tracelog_event *ev)
{
    (void)ev; /* the event returned last: its tname is kept until the next */
    const json_src *s = (const json_src *)base;
    return s->tname[0] ? s->tname : NULL;
}

static int js_finish(ptlog_src *base)
{
    (void)base;
    return PTLOG_EXIT_OK;
}

static void js_close(ptlog_src *base)
{
    json_src *s = (json_src *)base;
    json_decref(s->pending);
    tracelog_event_types_free(s->types);
    free_schemas(s);
    free(s->data);
    free(s->scan.buf);
    ptlog_in_close(s->scan.in);
    free(s->scan.in);
    free(s);
}

int ptlog_json_src_open(ptlog_in *in, int lines, ptlog_src **out)
{
    json_src *s = calloc(1, sizeof *s);
    if (!s)
        return ptlog_nomem();
    init_hex_table();
    ptlog_src *b = &s->base;
    s->scan.in = in;
    s->scan.name = in->name;
    s->scan.lines = lines;
    b->name = in->name;
    b->format_major = TRACELOG_FORMAT_MAJOR;
    b->format_minor = TRACELOG_FORMAT_MINOR;
    b->meta.stream_full_policy = TRACELOG_POLICY_LOOP;
    b->meta.log_full_policy = TRACELOG_POLICY_APPEND;
    b->upfront = 0; /* streamed: types and status may come after the events */
    b->next = lines ? lines_next : doc_next;
    b->type_name = js_type_name;
    b->type_schema = js_type_schema;
    b->type_count = js_type_count;
    b->type_at = js_type_at;
    b->get_status = js_get_status;
    b->thread_name = js_thread_name;
    b->seek_time = NULL;
    b->end_time = NULL;
    b->finish = js_finish;
    b->close = js_close;
    s->types = tracelog_event_types_new();
    int rc = s->types ? ptlog_json_skip_bom(&s->scan) : ptlog_nomem();
    if (!rc)
        rc = lines ? lines_start(s) : doc_start(s);
    if (rc) {
        s->scan.in = NULL; /* the caller still owns in on failure */
        json_decref(s->pending);
        tracelog_event_types_free(s->types);
        free_schemas(s);
        free(s->data);
        free(s->scan.buf);
        free(s);
        return rc;
    }
    *out = b;
    return 0;
}
