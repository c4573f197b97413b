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
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/text.h"
#include "ptlog.h"

#define JSON_VALUE_MAX (64u << 20) /* longest JSON Lines line or document value (README.md, Limits) */
#define JSON_BUF_MAX (JSON_VALUE_MAX + 4096u) /* such a value, its delimiter and some slack */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define JSON_BUF_INITIAL 64u /* fuzzing: values cross buffer refills even in small inputs */
#else
#define JSON_BUF_INITIAL (1u << 20)
#endif

typedef struct json_src {
    ptlog_src base;
    ptlog_in *in;
    int lines;
    tracelog_event_types *types;
    ptlog_idmap schema_of;     /* id -> index in schemas of its latest schema */
    tracelog_schema **schemas; /* every schema read (pointers stay valid until close) */
    size_t nschemas, schemas_cap;
    tracelog_log_status status;
    unsigned char *data;
    size_t data_cap;
    uint64_t index;      /* of the next event */
    const char *last_name; /* the name the table gave last_id when an event last named it, or NULL */
    uint32_t last_id;
    /* input buffer: bytes [0, len) of buf are input bytes [consumed, consumed + len) */
    char *buf;
    size_t len, pos, cap;
    uint64_t consumed;
    int eof;
    size_t scanned;      /* lines: bytes after pos already searched for a newline (linear time) */
    uint64_t line;       /* lines: number of the line last read; document: current line */
    uint64_t line_start; /* document: input offset of the current line */
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

/* An event's fields before the checks shared by both parsers. */
#define NUM_FIELDS 6 /* the integer fields of an event */

typedef struct raw_event {
    uint64_t v[NUM_FIELDS]; /* ts, pid, tid, address, truncation, ktid */
    int has_ts, has_id;
    uint64_t id;
    const char *name;    /* NULL: absent or null */
    size_t name_len;
    const char *data;    /* hex digits, NULL: absent or null */
    size_t data_len;
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
        /* The usual case: the same type as the event before. A table entry is never renamed (add_type
           refuses it), so the name it gave stays right. */
        if (s->last_name && s->last_id == *out && strcmp(s->last_name, name) == 0)
            return 0;
        int rc = add_type(s, *out, name, ctx, "name");
        s->last_id = *out;
        s->last_name = rc ? NULL : tracelog_event_types_name(s->types, *out);
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

/* "event N", the context of an event's messages: made for every event, so without printf. */
static const char *event_ctx(const json_src *s, char ctx[32])
{
    memcpy(ctx, "event ", 6);
    ctx[6 + ptlog_fmt_u64(s->index, ctx + 6)] = 0;
    return ctx;
}

/* Hex digit values, -1 for other bytes. */
static signed char hex_table[256];

static void init_hex_table(void)
{
    for (int c = 0; c < 256; c++)
        hex_table[c] = (signed char)hexval(c);
}

/* Decodes n bytes from 2n hex digits; 0, or -1 at a non-hex digit. */
static int unhex(const char *hex, size_t n, unsigned char *out)
{
    const unsigned char *h = (const unsigned char *)hex;
    for (size_t i = 0; i < n; i++) {
        int hi = hex_table[h[2 * i]], lo = hex_table[h[2 * i + 1]];
        if ((hi | lo) < 0)
            return -1;
        out[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

static int build_event(json_src *s, const raw_event *r, tracelog_event *ev)
{
    char ctx[32];
    event_ctx(s, ctx);
    memset(ev, 0, sizeof *ev);
    if (!r->has_ts)
        return bad_value(s, ctx, "ts", "missing (integer nanoseconds since the epoch)");
    for (size_t i = 0; i < NUM_FIELDS; i++)
        if (r->v[i] > num_max[i])
            return bad_value(s, ctx, num_keys[i], u64_expect(num_max[i]));
    ev->timestamp_ns = r->v[0];
    ev->pid = (uint32_t)r->v[1];
    ev->tid = r->v[2];
    ev->address = r->v[3];
    ev->truncation = (uint32_t)r->v[4];
    ev->kernel_tid = (uint32_t)r->v[5];
    int rc = resolve_type(s, ctx, r, &ev->event_id);
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

/* The general path: any JSON value, checked key by key. */
static int event_from_json(json_src *s, const json_t *o, tracelog_event *ev)
{
    char ctx[32];
    event_ctx(s, ctx);
    if (!json_is_object(o))
        return bad_value(s, ctx, "ts", "expected an event object");
    raw_event r;
    memset(&r, 0, sizeof r);
    for (size_t i = 0; i < NUM_FIELDS; i++) {
        const json_t *v = json_object_get(o, num_keys[i]);
        if (v && get_u64(v, UINT64_MAX, &r.v[i]))
            return bad_value(s, ctx, num_keys[i], u64_expect(num_max[i]));
        if (i == 0)
            r.has_ts = v != NULL;
    }
    const json_t *jid = json_object_get(o, "id"), *jname = json_object_get(o, "name");
    const json_t *jhex = json_object_get(o, "name_hex");
    char bytes[TRACELOG_TEXT_MAX + 1]; /* the exact name, from name_hex */
    if (jid) {
        if (get_u64(jid, UINT64_MAX, &r.id))
            return bad_value(s, ctx, "id", u64_expect(UINT32_MAX));
        r.has_id = 1;
    }
    if (jhex) {
        if (hex_text(jhex, bytes, sizeof bytes, &r.name_len))
            return hex_text_error(s, ctx, "name_hex", sizeof bytes);
        r.name = bytes;
    } else if (jname && !json_is_null(jname)) {
        if (!json_is_string(jname))
            return bad_value(s, ctx, "name", "expected null or a name of 1 to 255 bytes");
        r.name = json_string_value(jname);
        r.name_len = json_string_length(jname);
    }
    const json_t *data = json_object_get(o, "data");
    if (data && !json_is_null(data)) {
        if (!json_is_string(data))
            return bad_value(s, ctx, "data", "expected a string of hex digit pairs");
        r.data = json_string_value(data);
        r.data_len = json_string_length(data);
    }
    return build_event(s, &r, ev);
}

/* ---- fast path: flat objects of known keys, plain strings, integers ------------------------ */

static const char *skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}

/* 1 if none of the 8 bytes at p is a quote, a backslash, a control byte or non-ASCII (0 may be wrong). */
static int eight_plain(const char *p)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t x, quote, bslash;
    memcpy(&x, p, 8);
    quote = x ^ (ones * '"');
    bslash = x ^ (ones * '\\');
    /* (v - ones) & ~v has a high bit set where v has a zero byte; x - 0x2020... one where a byte of x is
       below 0x20 (and maybe above it: a false alarm, then the byte loop decides); x one where it is >= 0x80 */
    uint64_t bad = ((quote - ones) & ~quote) | ((bslash - ones) & ~bslash) | (x - ones * 0x20) | x;
    return (bad & high) == 0;
}

/* A string without escapes, control or non-ASCII bytes; p at the opening quote. */
static const char *plain_string(const char *p, const char *end, const char **str, size_t *len)
{
    const char *q = ++p;
    while (end - q >= 8 && eight_plain(q))
        q += 8;
    while (q < end && *q != '"') {
        unsigned char c = (unsigned char)*q;
        if (c == '\\' || c < 0x20 || c >= 0x80)
            return NULL;
        q++;
    }
    if (q == end)
        return NULL;
    *str = p;
    *len = (size_t)(q - p);
    return q + 1;
}

/* The value of the 8 decimal digits at p into *out: 1, or 0 if they are not all digits. */
static int eight_digits(const char *p, uint64_t *out)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t x;
    memcpy(&x, p, 8);
    /* every byte 0x30..0x39: high nibble 3, and adding 6 does not carry into it */
    if ((x & 0xF0F0F0F0F0F0F0F0ull) != 0x3030303030303030ull ||
        ((x + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) != 0x3030303030303030ull)
        return 0;
    /* pairs, then quads, then all eight (the first digit is the low byte) */
    x = (x & 0x0F0F0F0F0F0F0F0Full) * 2561 >> 8;
    x = (x & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
    *out = (x & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
    return 1;
#else
    (void)p;
    (void)out;
    return 0;
#endif
}

/* An integer in 0..INT64_MAX (what jansson accepts), or a plain u64 string. */
static const char *plain_u64(const char *p, const char *end, uint64_t *v)
{
    if (p < end && *p == '"') {
        const char *str;
        size_t len;
        const char *q = plain_string(p, end, &str, &len);
        char tmp[32];
        if (!q || len == 0 || len >= sizeof tmp)
            return NULL;
        memcpy(tmp, str, len);
        tmp[len] = 0;
        int base = 10;
        const char *d = tmp;
        if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X')) {
            base = 16;
            d += 2;
        }
        if (!*d || strspn(d, base == 16 ? "0123456789abcdefABCDEF" : "0123456789") != strlen(d))
            return NULL;
        errno = 0;
        unsigned long long x = strtoull(d, NULL, base);
        if (errno)
            return NULL;
        *v = x;
        return q;
    }
    if (p == end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9'))
        return NULL;
    const char *start = p;
    uint64_t x = 0, eight;
    while (p - start <= 8 && end - p >= 8 && eight_digits(p, &eight)) { /* 16 digits at most this way */
        x = x * 100000000u + eight;
        p += 8;
    }
    for (; p < end && *p >= '0' && *p <= '9'; p++) {
        if (p - start == 19)
            return NULL; /* larger than INT64_MAX: let jansson say so */
        x = x * 10 + (uint64_t)(*p - '0');
    }
    if (x > INT64_MAX || (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
        return NULL; /* jansson refuses what is above INT64_MAX: let it say so, as for any other line */
    *v = x;
    return p;
}

/*
 * A JSON number that jansson reads without a range error: an integer of at
 * most 18 digits, or a real of at most 24 characters with an exponent of at
 * most 2 digits (below 1e123). Others go to jansson, which decides.
 */
static const char *plain_number(const char *p, const char *end)
{
    const char *start = p, *digits;
    int real = 0;
    if (p < end && *p == '-')
        p++;
    if (p == end || *p < '0' || *p > '9')
        return NULL;
    if (*p == '0')
        p++;
    else
        while (p < end && *p >= '0' && *p <= '9')
            p++;
    if (p < end && *p == '.') {
        real = 1;
        digits = ++p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == digits)
            return NULL;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
        real = 1;
        if (++p < end && (*p == '+' || *p == '-'))
            p++;
        digits = p;
        while (p < end && *p >= '0' && *p <= '9')
            p++;
        if (p == digits || p - digits > 2)
            return NULL;
    }
    if (p - start > (real ? 24 : 18 + (*start == '-')))
        return NULL;
    return p;
}

#define PLAIN_MEMBERS_MAX 32 /* a larger object goes to jansson (its duplicate check) */

static const char *plain_value(const char *p, const char *end, int depth);

/* An object or array of plain values, without repeated keys; p at '{' or '['. */
static const char *plain_container(const char *p, const char *end, int depth)
{
    char close = *p == '{' ? '}' : ']';
    const char *keys[PLAIN_MEMBERS_MAX];
    size_t lens[PLAIN_MEMBERS_MAX], n = 0;
    p = skip_blank(p + 1, end);
    if (p < end && *p == close)
        return p + 1;
    for (;; n++) {
        if (close == '}') {
            if (n == PLAIN_MEMBERS_MAX || p == end || *p != '"' || !(p = plain_string(p, end, &keys[n], &lens[n])))
                return NULL;
            for (size_t i = 0; i < n; i++)
                if (lens[i] == lens[n] && memcmp(keys[i], keys[n], lens[n]) == 0)
                    return NULL; /* jansson refuses it (JSON_REJECT_DUPLICATES): let it say so */
            p = skip_blank(p, end);
            if (p == end || *p++ != ':')
                return NULL;
            p = skip_blank(p, end);
        }
        if (!(p = plain_value(p, end, depth + 1)))
            return NULL;
        p = skip_blank(p, end);
        if (p < end && *p == close)
            return p + 1;
        if (p == end || *p++ != ',')
            return NULL;
        p = skip_blank(p, end);
    }
}

/* A value made of plain strings, numbers, literals, arrays and objects, nested 4 deep at most. */
static const char *plain_value(const char *p, const char *end, int depth)
{
    const char *str;
    size_t len;
    if (p == end || depth > 4)
        return NULL;
    switch (*p) {
    case '"':
        return plain_string(p, end, &str, &len);
    case '{':
    case '[':
        return plain_container(p, end, depth);
    case 't':
        return end - p >= 4 && memcmp(p, "true", 4) == 0 ? p + 4 : NULL;
    case 'f':
        return end - p >= 5 && memcmp(p, "false", 5) == 0 ? p + 5 : NULL;
    case 'n':
        return end - p >= 4 && memcmp(p, "null", 4) == 0 ? p + 4 : NULL;
    default:
        return plain_number(p, end);
    }
}

/* The keys of an event object that the fast path knows, by index: NUM_FIELDS integers, then these. */
static int event_key(const char *key, size_t klen)
{
    /* fields and fields_size (typed events) are derived from data: checked as JSON, not read */
    static const char *const keys[] = {"ts", "pid",  "tid",  "address", "truncation", "ktid",
                                       "id", "name", "data", "fields",  "fields_size"};
    static const unsigned char lens[] = {2, 3, 3, 7, 10, 4, 2, 4, 4, 6, 11};
    for (int i = 0; i < NUM_FIELDS + 5; i++)
        if (lens[i] == klen && memcmp(keys[i], key, klen) == 0)
            return i;
    return -1;
}

/* An event object at p (after blanks), parsed into *r: its end, or NULL when not plain enough (use jansson). */
static const char *fast_object(const char *p, const char *end, raw_event *r)
{
    unsigned seen = 0;
    memset(r, 0, sizeof *r);
    if (p == end || *p++ != '{')
        return NULL;
    p = skip_blank(p, end);
    if (p < end && *p == '}')
        return p + 1;
    for (;;) {
        const char *key;
        size_t klen;
        if (p == end || *p != '"' || !(p = plain_string(p, end, &key, &klen)))
            return NULL;
        p = skip_blank(p, end);
        if (p == end || *p++ != ':')
            return NULL;
        p = skip_blank(p, end);
        int k = event_key(key, klen);
        if (k < 0 || (seen & (1u << k)))
            return NULL; /* unknown or repeated key */
        seen |= 1u << k;
        if (k < NUM_FIELDS) {
            if (!(p = plain_u64(p, end, &r->v[k])))
                return NULL;
            if (k == 0)
                r->has_ts = 1;
        } else if (k == NUM_FIELDS) {
            if (!(p = plain_u64(p, end, &r->id)))
                return NULL;
            r->has_id = 1;
        } else if (k >= NUM_FIELDS + 3) {
            if (!(p = plain_value(p, end, 0)))
                return NULL;
        } else if (end - p >= 4 && memcmp(p, "null", 4) == 0) {
            p += 4;
        } else {
            const char **str = k == NUM_FIELDS + 1 ? &r->name : &r->data;
            size_t *len = k == NUM_FIELDS + 1 ? &r->name_len : &r->data_len;
            if (p == end || *p != '"' || !(p = plain_string(p, end, str, len)))
                return NULL;
        }
        p = skip_blank(p, end);
        if (p < end && *p == ',') {
            p = skip_blank(p + 1, end);
            continue;
        }
        return p < end && *p == '}' ? p + 1 : NULL;
    }
}

/* 1: the whole of p[0..n) is an event object parsed into *r; 0: not plain enough, use jansson. */
static int fast_parse(const char *p, size_t n, raw_event *r)
{
    const char *end = p + n;
    p = fast_object(skip_blank(p, end), end, r);
    return p && skip_blank(p, end) == end;
}

/* ---- positions and syntax errors ----------------------------------------------------------------- */

/* Input line/column of byte at buffer position pos (document mode). */
static void position(const json_src *s, size_t pos, uint64_t *line, uint64_t *col)
{
    *line = s->line;
    *col = s->consumed + pos - s->line_start + 1;
}

/* Moves s->pos to pos, counting lines on the way. */
static void advance(json_src *s, size_t pos)
{
    if (!s->buf)
        return; /* nothing read yet */
    const char *p = s->buf + s->pos, *end = s->buf + pos;
    while ((p = memchr(p, '\n', (size_t)(end - p)))) {
        s->line++;
        s->line_start = s->consumed + (size_t)(p - s->buf) + 1;
        p++;
    }
    s->pos = pos;
}

static int syntax_at(json_src *s, uint64_t line, uint64_t col, const char *text)
{
    ptlog_msg(NULL, "%s:%llu:%llu: %s", s->base.name, (unsigned long long)line, (unsigned long long)col, text);
    return PTLOG_EXIT_INPUT;
}

/* A jansson error inside a value that starts at (line0, col0). */
static int syntax_in_value(json_src *s, const json_error_t *e, uint64_t line0, uint64_t col0)
{
    uint64_t line = line0 + (uint64_t)(e->line > 0 ? e->line - 1 : 0);
    uint64_t col = e->line <= 1 ? col0 + (uint64_t)(e->column > 0 ? e->column - 1 : 0) : (uint64_t)e->column;
    return syntax_at(s, line, col, e->text);
}

/* ---- buffer ------------------------------------------------------------------------------------------ */

/* Reads more input, keeping bytes from *keep on (which moves to the start). 0, 1 at EOF, or -exit code. */
static int refill(json_src *s, size_t *keep)
{
    if (s->eof)
        return 1;
    if (*keep > 0) {
        memmove(s->buf, s->buf + *keep, s->len - *keep);
        s->consumed += *keep;
        s->len -= *keep;
        s->pos -= *keep < s->pos ? *keep : s->pos;
        *keep = 0;
    }
    if (s->len == s->cap) {
        if (s->cap >= JSON_BUF_MAX) { /* the callers' own checks come first */
            ptlog_msg(s->base.name, "a value longer than the limit of 64 MiB (%s)",
                      s->lines ? "line" : "event or document member");
            return -PTLOG_EXIT_INPUT;
        }
        size_t cap = s->cap ? s->cap * 2 : JSON_BUF_INITIAL;
        if (cap > JSON_BUF_MAX)
            cap = JSON_BUF_MAX;
        char *p = realloc(s->buf, cap);
        if (!p)
            return -ptlog_nomem();
        s->buf = p;
        s->cap = cap;
    }
    long k = ptlog_in_read(s->in, s->buf + s->len, s->cap - s->len);
    if (k < 0) {
        ptlog_msg(s->base.name, "cannot read: %s", strerror(errno));
        return -PTLOG_EXIT_INPUT;
    }
    if (k == 0) {
        s->eof = 1;
        return 1;
    }
    s->len += (size_t)k;
    return 0;
}

/* ---- document -------------------------------------------------------------------------------------- */

/* Next non-blank byte (not consumed), or -1 at the end; *err set on failure. */
static int peek(json_src *s, int *err)
{
    *err = 0;
    for (;;) {
        size_t p = s->pos;
        while (p < s->len && (s->buf[p] == ' ' || s->buf[p] == '\t' || s->buf[p] == '\r' || s->buf[p] == '\n'))
            p++;
        advance(s, p);
        if (p < s->len)
            return (unsigned char)s->buf[p];
        size_t keep = s->pos;
        int r = refill(s, &keep);
        if (r < 0) {
            *err = -r;
            return -1;
        }
        if (r > 0)
            return -1;
    }
}

static int expect_char(json_src *s, const char *chars, const char *what, int *got)
{
    int err, c = peek(s, &err);
    if (err)
        return err;
    if (c < 0 || !strchr(chars, c)) {
        uint64_t line, col;
        position(s, s->pos, &line, &col);
        char text[96];
        snprintf(text, sizeof text, c < 0 ? "unexpected end of input, expected %s" : "expected %s", what);
        return syntax_at(s, line, col, text);
    }
    advance(s, s->pos + 1);
    *got = c;
    return 0;
}

/*
 * Finds the extent of the JSON value at the current position (strings,
 * brackets and scalars; the contents are checked later by a parser) and
 * consumes it: *start is its buffer position, *len its length.
 */
static int scan_value(json_src *s, size_t *start, size_t *len)
{
    int err;
    if (peek(s, &err) < 0) {
        if (err)
            return err;
        uint64_t line, col;
        position(s, s->pos, &line, &col);
        return syntax_at(s, line, col, "unexpected end of input, expected a value");
    }
    size_t begin = s->pos, p = s->pos;
    int depth = 0, in_str = 0, esc = 0;
    for (;;) {
        if (p - begin > JSON_VALUE_MAX) {
            uint64_t line, col;
            position(s, begin, &line, &col);
            return syntax_at(s, line, col, "value longer than the limit of 64 MiB");
        }
        if (p == s->len) {
            size_t keep = begin;
            int r = refill(s, &keep);
            p -= begin;
            begin = 0;
            if (r < 0)
                return -r;
            if (r > 0)
                break; /* the end: the parser reports what is missing */
            continue;
        }
        char c = s->buf[p++];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"') {
                in_str = 0;
                if (depth == 0)
                    break;
            }
            continue;
        }
        if (c == '"') {
            in_str = 1;
        } else if (c == '{' || c == '[') {
            depth++;
        } else if (c == '}' || c == ']') {
            if (depth == 0) { /* a scalar ended by its container */
                p--;
                break;
            }
            if (--depth == 0)
                break;
        } else if (depth == 0 && (c == ',' || c == ' ' || c == '\t' || c == '\r' || c == '\n')) {
            p--;
            break;
        }
    }
    *start = begin;
    *len = p - begin;
    return 0;
}

/* Parses a value of the document with jansson (errors with absolute positions). */
static int load_value(json_src *s, size_t start, size_t len, json_t **out)
{
    uint64_t line, col;
    position(s, start, &line, &col);
    json_error_t e;
    *out = json_loadb(s->buf + start, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
    advance(s, start + len);
    return *out ? 0 : syntax_in_value(s, &e, line, col);
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
    position(s, s->pos, &line, &col);
    if (bit & s->seen)
        return syntax_at(s, line, col, "duplicate key in the document");
    s->seen |= bit;
    if (bit == SEEN_ATTRIBUTES && s->state == DOC_TAIL) {
        ptlog_msg(s->base.name, "\"attributes\" must come before \"events\" (documents are read as a stream)");
        return PTLOG_EXIT_INPUT;
    }
    if (bit == SEEN_EVENTS) {
        int c, rc = expect_char(s, "[", "'[' (the events array)", &c);
        if (rc)
            return rc;
        s->state = DOC_EVENTS;
        s->first_event = 1;
        return 0;
    }
    size_t start, len;
    json_t *v;
    int rc = scan_value(s, &start, &len);
    if (!rc)
        rc = load_value(s, start, len, &v);
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
    if (peek(s, &err) >= 0 || err) {
        uint64_t line, col;
        position(s, s->pos, &line, &col);
        return err ? err : syntax_at(s, line, col, "unexpected data after the JSON document");
    }
    s->state = DOC_DONE;
    return 0;
}

/* After a member: ',' (returns -1: another member follows) or '}' and the end. */
static int doc_after_member(json_src *s)
{
    int c, rc = expect_char(s, ",}", "',' or '}'", &c);
    if (rc)
        return rc;
    return c == '}' ? doc_end(s) : -1;
}

/* Reads members until the events array opens or the document ends. */
static int doc_members(json_src *s, int first)
{
    for (;;) {
        int err, c = peek(s, &err);
        if (err)
            return err;
        if (first && c == '}') {
            advance(s, s->pos + 1);
            return doc_end(s);
        }
        first = 0;
        size_t start, len;
        json_t *k;
        if (c != '"') {
            uint64_t line, col;
            position(s, s->pos, &line, &col);
            return syntax_at(s, line, col, c < 0 ? "unexpected end of input, expected a key" : "expected a key");
        }
        int rc = scan_value(s, &start, &len);
        if (!rc)
            rc = load_value(s, start, len, &k);
        if (rc)
            return rc;
        char key[64];
        tl_copy_text(key, sizeof key, json_string_value(k)); /* longer keys are unknown ones anyway */
        json_decref(k);
        if ((rc = expect_char(s, ":", "':'", &c)) || (rc = doc_member_value(s, key)))
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
            c = peek(s, &err);
            if (err)
                return -err;
            if (c == ']')
                advance(s, s->pos + 1);
            s->first_event = 0;
        } else {
            if ((rc = expect_char(s, ",]", "',' or ']'", &c)))
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
        if (peek(s, &err) == '{') { /* the common case: a plain event whole in the buffer, parsed in place */
            const char *e = fast_object(s->buf + s->pos, s->buf + s->len, &r);
            if (e) {
                advance(s, (size_t)(e - s->buf));
                rc = build_event(s, &r, ev);
                return rc ? -rc : 1;
            }
        }
        if (err)
            return -err;
        size_t start, len;
        if ((rc = scan_value(s, &start, &len)))
            return -rc;
        if (fast_parse(s->buf + start, len, &r)) {
            advance(s, start + len);
            rc = build_event(s, &r, ev);
        } else {
            json_t *o;
            rc = load_value(s, start, len, &o);
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
    s->line = 1;
    int c, rc = expect_char(s, "{", "'{' (a JSON object)", &c);
    if (!rc)
        rc = doc_members(s, 1);
    return rc;
}

/* ---- lines ------------------------------------------------------------------------------------------ */

/* A JSON Lines line longer than JSON_VALUE_MAX (without its newline). */
static int line_too_long(json_src *s)
{
    ptlog_msg(NULL, "%s:%llu: line longer than the limit of 64 MiB", s->base.name, (unsigned long long)s->line + 1);
    return PTLOG_EXIT_INPUT;
}

/*
 * Next non-blank line, as *start and *len in the buffer (*len is 0 at the
 * end). The search for its newline resumes where the last refill stopped,
 * so a long line costs linear time however small the reads (pipes).
 */
static int next_line(json_src *s, size_t *start, size_t *len)
{
    for (;;) {
        size_t from = s->pos + s->scanned;
        char *nl = from < s->len ? memchr(s->buf + from, '\n', s->len - from) : NULL;
        size_t end = nl ? (size_t)(nl - s->buf) : s->len;
        if (end - s->pos > JSON_VALUE_MAX)
            return line_too_long(s);
        if (!nl && !s->eof) {
            s->scanned = s->len - s->pos;
            size_t keep = s->pos;
            int r = refill(s, &keep);
            if (r < 0)
                return -r;
            continue;
        }
        s->scanned = 0;
        if (s->pos >= s->len) {
            *len = 0;
            return 0;
        }
        *start = s->pos;
        *len = end - s->pos;
        s->pos = nl ? end + 1 : s->len;
        s->line++;
        /* not a blank line? (the buffer holds no NUL terminator: stay within the line) */
        for (size_t i = 0; i < *len; i++)
            if (!strchr(" \t\r", s->buf[*start + i]) || s->buf[*start + i] == 0)
                return 0;
    }
}

static int load_line(json_src *s, size_t start, size_t len, json_t **out)
{
    json_error_t e;
    *out = json_loadb(s->buf + start, len, JSON_REJECT_DUPLICATES, &e);
    if (*out)
        return 0;
    char w[512];
    snprintf(w, sizeof w, "%s:%llu:%d", s->base.name, (unsigned long long)s->line, e.column);
    ptlog_msg(NULL, "%s: %s", w, e.text);
    return PTLOG_EXIT_INPUT;
}

static int is_header(const json_t *o)
{
    return json_is_object(o) && (json_object_get(o, "format") || json_object_get(o, "attributes"));
}

static int lines_next(ptlog_src *base, tracelog_event *ev)
{
    json_src *s = (json_src *)base;
    for (;;) {
        json_t *o = s->pending;
        int rc;
        s->pending = NULL;
        if (o) {
            s->line = s->pending_line;
        } else {
            size_t start, len;
            if ((rc = next_line(s, &start, &len)))
                return -rc;
            if (len == 0)
                return 0;
            raw_event r;
            if (fast_parse(s->buf + start, len, &r)) {
                rc = build_event(s, &r, ev);
                return rc ? -rc : 1;
            }
            if ((rc = load_line(s, start, len, &o)))
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
    int rc = next_line(s, &start, &len);
    if (rc || len == 0)
        return rc;
    if ((rc = load_line(s, start, len, &o)))
        return rc;
    if (is_header(o)) {
        rc = parse_header(s, o);
        json_decref(o);
        return rc;
    }
    s->pending = o; /* no header: the first line is already an event */
    s->pending_line = s->line;
    return 0;
}

/* A UTF-8 byte-order mark at the very start is skipped, as detection does (README.md). */
static int skip_bom(json_src *s)
{
    while (s->len - s->pos < 3 && !s->eof) {
        size_t keep = s->pos;
        int r = refill(s, &keep);
        if (r < 0)
            return -r;
    }
    if (s->len - s->pos >= 3 && memcmp(s->buf + s->pos, "\xEF\xBB\xBF", 3) == 0)
        s->pos += 3;
    return 0;
}

/* ---- source interface ---------------------------------------------------------------------- */

static const char *js_type_name(ptlog_src *base, uint32_t id)
{
    return tracelog_event_types_name(((json_src *)base)->types, id);
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
    init_hex_table();
    ptlog_src *b = &s->base;
    s->in = in;
    s->lines = lines;
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
    b->seek_time = NULL;
    b->finish = js_finish;
    b->close = js_close;
    s->types = tracelog_event_types_new();
    int rc = s->types ? skip_bom(s) : ptlog_nomem();
    if (!rc)
        rc = lines ? lines_start(s) : doc_start(s);
    if (rc) {
        s->in = NULL; /* the caller still owns in on failure */
        json_decref(s->pending);
        tracelog_event_types_free(s->types);
        free_schemas(s);
        free(s->data);
        free(s->buf);
        free(s);
        return rc;
    }
    *out = b;
    return 0;
}
