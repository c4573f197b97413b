/*
 * Typed payloads: the schema of an event (the one its log stores) and its
 * fields as dump shows them. The rules are in README.md ("Typed events").
 *
 * A type whose log stores no schema (format 1.0, JSON written before
 * schemas, or an ignored schema) is opaque, system events included: the
 * format says readers do not guess a schema from a name (ptl-format.md
 * 5.6.6), since nothing but the writer knows what a name's payload is.
 */
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

int ptlog_event_fields(ptlog_src *src, const tracelog_event *ev, tracelog_fields *f)
{
    const tracelog_schema *s = ptlog_event_schema(src, ev->event_id);
    if (!s)
        return 0;
    tracelog_fields_decode(s, ev->payload, ev->payload_len, f); /* cannot fail: s and f are set */
    return 1;
}

/* Calls fn with the text of field i (tracelog_fields_format), from a stack buffer when it fits. */
int ptlog_field_text(const tracelog_fields *f, size_t i, void (*fn)(void *ctx, const char *s, size_t n),
                     void *ctx)
{
    char small[128];
    size_t len;
    if (tracelog_fields_format(f, i, small, sizeof small, &len) != TRACELOG_OK)
        return -1;
    if (len < sizeof small) {
        fn(ctx, small, len);
        return 0;
    }
    char *big = malloc(len + 1);
    if (!big)
        return -1;
    tracelog_fields_format(f, i, big, len + 1, &len);
    fn(ctx, big, len);
    free(big);
    return 0;
}

static void put_raw(void *ctx, const char *s, size_t n)
{
    ptlog_out_write(ctx, s, n);
}

static void put_hex(ptlog_out *out, const uint8_t *p, size_t n)
{
    const size_t slice = 8192;
    for (size_t off = 0; off < n; off += slice) {
        size_t k = n - off < slice ? n - off : slice;
        ptlog_fmt_hexbytes(p + off, k, ptlog_out_room(out, 2 * slice));
        out->len += 2 * k;
    }
}

/* [a, b, event#9..event#31]: set ids by name, runs of unnamed ids as ranges. */
static void put_event_set(ptlog_out *out, ptlog_src *src, const uint8_t *p, size_t n,
                          ptlog_name_writer put_name, void *ctx)
{
    uint64_t bits = 8 * (uint64_t)n;
    const char *sep = "";
    ptlog_out_puts(out, "[");
    for (uint64_t id = 0; id < bits; id++) {
        if (!(p[id / 8] >> (id % 8) & 1))
            continue;
        const char *name = ptlog_src_type_name(src, (uint32_t)id);
        ptlog_out_puts(out, sep);
        sep = ", ";
        put_name(ctx, (uint32_t)id, name);
        if (name)
            continue;
        uint64_t last = id; /* a run of unnamed ids */
        while (last + 1 < bits && (p[(last + 1) / 8] >> ((last + 1) % 8) & 1) &&
               !ptlog_src_type_name(src, (uint32_t)(last + 1)))
            last++;
        if (last == id)
            continue;
        ptlog_out_puts(out, last == id + 1 ? ", " : "..");
        put_name(ctx, (uint32_t)last, NULL);
        id = last;
    }
    ptlog_out_puts(out, "]");
}

/* The text of scalar field i, formatted in place in out's buffer when it fits (most do). */
static void put_scalar(ptlog_out *out, const tracelog_fields *f, size_t i)
{
    enum { ROOM = 128 };
    size_t len;
    if (tracelog_fields_format(f, i, ptlog_out_room(out, ROOM), ROOM, &len) == TRACELOG_OK && len < ROOM) {
        out->len += len;
        return;
    }
    if (ptlog_field_text(f, i, put_raw, out))
        ptlog_out_puts(out, "?");
}

/* ", name = " (" name = " for the first field) in one copy. */
static void put_field_name(ptlog_out *out, const char *name, int first)
{
    size_t n = strlen(name);
    char *o = ptlog_out_room(out, n + 5);
    size_t k = first ? 1 : 2;
    memcpy(o, first ? " " : ", ", k);
    memcpy(o + k, name, n);
    memcpy(o + k + n, " = ", 3);
    out->len += k + n + 3;
}

/* " [short: 6 of 24 bytes]" or " [long: ...]" when the payload's size is not the schema's. */
static void put_size_flag(ptlog_out *out, const tracelog_fields *f)
{
    if (!f->size_check)
        return;
    char text[96];
    snprintf(text, sizeof text, " [%s: %zu of %s%u bytes]", f->size_check < 0 ? "short" : "long", f->len,
             tracelog_schema_is_variable(f->schema) ? "at least " : "", tracelog_schema_size(f->schema));
    ptlog_out_puts(out, text);
}

int ptlog_fields_dump(ptlog_out *out, ptlog_src *src, const tracelog_event *ev,
                      ptlog_name_writer put_name, void *ctx)
{
    tracelog_fields f;
    if (!ptlog_event_fields(src, ev, &f))
        return 0;
    put_size_flag(out, &f);
    if (f.present == 0 && f.size_check == 0)
        return 1; /* an empty schema and an empty payload: nothing to show */
    ptlog_out_puts(out, " {");
    for (size_t i = 0; i < f.present; i++) {
        tracelog_field_info info;
        tracelog_schema_field(f.schema, i, &info);
        put_field_name(out, info.name, i == 0);
        const char *text;
        const uint8_t *bytes;
        size_t n;
        switch (info.type) {
        case TRACELOG_FIELD_CHAR:
            tracelog_fields_string(&f, i, &text, &n);
            ptlog_out_quoted(out, text, n, ptlog_text_quote, 4);
            break;
        case TRACELOG_FIELD_BYTES:
            tracelog_fields_bytes(&f, i, &bytes, &n);
            put_hex(out, bytes, n);
            break;
        case TRACELOG_FIELD_EVENTSET:
            tracelog_fields_bytes(&f, i, &bytes, &n);
            put_event_set(out, src, bytes, n, put_name, ctx);
            break;
        default:
            put_scalar(out, &f, i);
            break;
        }
    }
    ptlog_out_puts(out, f.present ? " }" : "}");
    return 1;
}
