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

/* ---- plans: a schema's fields resolved once --------------------------------------- */

/* The bytes field fp's value may take in one reservation (ptlog_plan's rooms), past what it writes; 0: not so. */
static uint32_t value_room(const ptlog_field_plan *fp)
{
    switch (fp->type) {
    case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32: case TRACELOG_FIELD_U64:
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64:
        return 32; /* a sign or quotes, 20 digits, and the 8 bytes the short form writes at once */
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        return TRACELOG_DOUBLE_TEXT_MAX;
    case TRACELOG_FIELD_CHAR:
        return fp->size && fp->size < 256 ? fp->size + 2 : PTLOG_PLAIN_TEXT_ROOM;
    default:
        return 0;
    }
}

#define PLAN_ROOM_MAX (16u << 10) /* well under what ptlog_out_room gives at once */

/* The plan's rooms: each field's head in whole blocks of 16 and its value, and the braces. */
static void plan_rooms(ptlog_plan *p)
{
    uint64_t dump = 16, json = 16;
    for (size_t i = 0; i < p->n; i++) {
        const ptlog_field_plan *fp = &p->f[i];
        uint32_t v = value_room(fp);
        if (!v || dump > PLAN_ROOM_MAX || json > PLAN_ROOM_MAX) {
            p->dump_room = p->json_room = 0;
            return;
        }
        dump += (fp->dump_len + 15u) / 16 * 16 + v;
        json += (fp->json_len + 15u) / 16 * 16 + v;
    }
    p->dump_room = dump <= PLAN_ROOM_MAX ? (uint32_t)dump : 0;
    p->json_room = json <= PLAN_ROOM_MAX ? (uint32_t)json : 0;
}

/* "PREFIXNAME": (at most 1 + 6 + 63 + 2 bytes) */
static void chrome_head(ptlog_field_plan *fp, int end, const char *prefix, const char *name, size_t n)
{
    char *h = fp->chrome_head[end];
    size_t k = strlen(prefix);
    h[0] = '"';
    memcpy(h + 1, prefix, k);
    memcpy(h + 1 + k, name, n);
    memcpy(h + 1 + k + n, "\":", 2);
    fp->chrome_len[end] = (uint8_t)(3 + k + n);
}

static void make_plan(ptlog_plan *p, const tracelog_schema *s)
{
    for (size_t i = 0; i < p->n; i++) {
        tracelog_field_info info;
        tracelog_schema_field(s, i, &info); /* cannot fail: i < the field count */
        ptlog_field_plan *fp = &p->f[i];
        size_t n = strlen(info.name); /* at most TRACELOG_SCHEMA_NAME_MAX */
        fp->type = info.type;
        fp->offset = info.offset;
        fp->size = info.variable ? 0 : info.size;
        fp->name = info.name;
        fp->name_len = n;
        memcpy(fp->dump_head, i ? ", " : " ", i ? 2 : 1);
        memcpy(fp->dump_head + (i ? 2 : 1), info.name, n);
        memcpy(fp->dump_head + (i ? 2 : 1) + n, " = ", 3);
        fp->dump_len = (uint8_t)((i ? 2 : 1) + n + 3);
        memcpy(fp->json_head, ",\"", 2);
        memcpy(fp->json_head + 2, info.name, n);
        memcpy(fp->json_head + 2 + n, "\":", 2);
        fp->json_len = (uint8_t)(n + 4);
        if (i == 0) { /* no comma before the first */
            memmove(fp->json_head, fp->json_head + 1, fp->json_len - 1u);
            fp->json_len--;
        }
        chrome_head(fp, 0, ptlog_chrome_reserved_key(info.name) ? "field_" : "", info.name, n);
        chrome_head(fp, 1, "end_", info.name, n);
    }
    plan_rooms(p);
}

/* ptlog_plan_of (ptlog.h) the first time s is seen. */
const ptlog_plan *ptlog_plan_make(ptlog_plans *ps, const tracelog_schema *s)
{
    size_t i;
    ptlog_plan *v = realloc(ps->v, (ps->index.n + 1) * sizeof *v);
    if (!v)
        return NULL;
    ps->v = v;
    ptlog_plan *p = &v[ps->index.n];
    p->schema = s;
    p->n = tracelog_schema_field_count(s);
    p->f = malloc((p->n ? p->n : 1) * sizeof *p->f);
    if (!p->f)
        return NULL;
    make_plan(p, s);
    if ((i = ptlog_by_schema_add(&ps->index, s)) == SIZE_MAX) {
        free(p->f);
        return NULL;
    }
    return &ps->v[i];
}

void ptlog_plans_free(ptlog_plans *ps)
{
    for (size_t i = 0; i < ps->index.n; i++)
        free(ps->v[i].f);
    free(ps->v);
    ptlog_idmap_free(&ps->index.map);
    memset(ps, 0, sizeof *ps);
}

uint64_t ptlog_plan_load(const ptlog_field_plan *fp, const uint8_t *p)
{
    uint64_t u64 = ptlog_load_le(p, fp->size);
    int is_signed = fp->type >= TRACELOG_FIELD_I8 && fp->type <= TRACELOG_FIELD_I64;
    return is_signed ? ptlog_sign_extend(u64, fp->size) : u64;
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

char *ptlog_plain_text_at(char *o, const char *p, size_t *n)
{
    /* checked and copied in one pass (most are short: char[8], char[16]) */
    size_t max = *n < 256 ? *n : 256, i = 0;
    for (; i < max && ptlog_plain_ascii[(unsigned char)p[i]]; i++)
        o[i + 1] = p[i];
    if (i < *n && p[i]) { /* a byte to escape, or longer than 256 bytes: the caller's way */
        const char *nul = memchr(p, 0, *n);
        if (nul)
            *n = (size_t)(nul - p);
        return NULL;
    }
    *n = i;
    o[0] = '"';
    o[i + 1] = '"';
    return o + i + 2;
}

int ptlog_put_plain_text(ptlog_out *out, const char *p, size_t *n)
{
    char *o = ptlog_out_room(out, PTLOG_PLAIN_TEXT_ROOM), *end = ptlog_plain_text_at(o, p, n);
    if (!end)
        return 0; /* out->len moves only on success */
    out->len += (size_t)(end - o);
    return 1;
}

/* A char field's text, quoted as dump quotes text. */
static void put_char_field(ptlog_out *out, const char *p, size_t n)
{
    if (!ptlog_put_plain_text(out, p, &n))
        ptlog_out_quoted(out, p, n, ptlog_text_quote, 4);
}

/* One field's value; f is the event's fields (present past i). */
static void put_dump_value(ptlog_out *out, ptlog_src *src, const ptlog_field_plan *fp, const tracelog_fields *f,
                           size_t i, ptlog_name_writer put_name, void *ctx)
{
    const uint8_t *p = f->data + fp->offset;
    size_t n = fp->size ? fp->size : f->len - fp->offset;
    char *o;
    uint64_t v;
    switch (fp->type) {
    case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32: case TRACELOG_FIELD_U64:
        out->len += ptlog_fmt_u64(ptlog_plan_load(fp, p), ptlog_out_room(out, 20));
        break;
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64:
        v = ptlog_plan_load(fp, p);
        o = ptlog_out_room(out, 21);
        if ((int64_t)v < 0) {
            *o++ = '-';
            out->len++;
            v = 0 - v;
        }
        out->len += ptlog_fmt_u64(v, o);
        break;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        out->len += ptlog_plan_float_text(fp, p, ptlog_out_room(out, TRACELOG_DOUBLE_TEXT_MAX));
        break;
    case TRACELOG_FIELD_CHAR:
        put_char_field(out, (const char *)p, n);
        break;
    case TRACELOG_FIELD_BYTES:
        put_hex(out, p, n);
        break;
    case TRACELOG_FIELD_EVENTSET:
        put_event_set(out, src, p, n, put_name, ctx);
        break;
    default: /* bool, ptr, enum, flags */
        put_scalar(out, f, i);
        break;
    }
}

static inline __attribute__((always_inline)) char *integer_at(char *q, int neg, uint64_t mag, int json)
{
    int text = json && mag > PTLOG_JSON_SAFE_INT;
    *q = '"';
    q += text;
    *q = '-';
    q += neg;
    q += ptlog_fmt_u64(mag, q);
    *q = '"';
    return q + text;
}

char *ptlog_integer_at(char *q, int neg, uint64_t mag, int json) { return integer_at(q, neg, mag, json); }

/*
 * The fields of f whose plan has a room, in one reservation: dump's " { name = value, ... }", or
 * JSON's "name":value members. Inline with json a constant (dump here, JSON through
 * ptlog_plan_members): each keeps only its own branches.
 */
static inline __attribute__((always_inline)) void plan_fields(ptlog_out *out, const ptlog_plan *plan,
                                                              const tracelog_fields *f, int json)
{
    uint32_t room = json ? plan->json_room : plan->dump_room;
    char *o = ptlog_out_room(out, room), *q = o;
    if (!json) {
        memcpy(q, " {", 2);
        q += 2;
    }
    for (size_t i = 0; i < f->present; i++) {
        const ptlog_field_plan *fp = &plan->f[i];
        const uint8_t *p = f->data + fp->offset;
        size_t head = json ? fp->json_len : fp->dump_len, n = 0;
        ptlog_copy_blocks(q, json ? fp->json_head : fp->dump_head, head);
        q += head;
        const char *through = NULL; /* a text to write through the output: escaped, or a JSON string */
        char word[8];
        switch (fp->type) {
        case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32: case TRACELOG_FIELD_U64:
            q = integer_at(q, 0, ptlog_plan_load(fp, p), json);
            break;
        case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64: {
            uint64_t v = ptlog_plan_load(fp, p);
            q = integer_at(q, (int64_t)v < 0, (int64_t)v < 0 ? 0 - v : v, json);
            break;
        }
        case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
            n = ptlog_plan_float_text(fp, p, q);
            if (!json || (q[n - 1] != 'n' && q[n - 1] != 'f')) {
                q += n;
                break;
            }
            n = n < sizeof word ? n : sizeof word; /* nan, inf, -inf: not JSON numbers, strings */
            through = memcpy(word, q, n);
            break;
        default: /* char (plan_rooms lets no other type here) */
            n = fp->size ? fp->size : f->len - fp->offset;
            char *end = ptlog_plain_text_at(q, (const char *)p, &n);
            if (end)
                q = end;
            else
                through = (const char *)p;
            break;
        }
        if (!through)
            continue;
        out->len += (size_t)(q - o);
        if (json)
            ptlog_json_string(out, through, n);
        else
            ptlog_out_quoted(out, through, n, ptlog_text_quote, 4);
        o = q = ptlog_out_room(out, room);
    }
    if (!json) {
        memcpy(q, " }", 2);
        q += f->present ? 2 : 1;
        if (!f->present)
            q[-1] = '}';
    }
    out->len += (size_t)(q - o);
}

void ptlog_plan_members(ptlog_out *out, const ptlog_plan *plan, const tracelog_fields *f)
{
    plan_fields(out, plan, f, 1);
}

int ptlog_fields_dump(ptlog_out *out, ptlog_src *src, ptlog_plans *plans, const tracelog_event *ev,
                      ptlog_name_writer put_name, void *ctx)
{
    tracelog_fields f;
    if (!ptlog_event_fields(src, ev, &f))
        return 0;
    const ptlog_plan *plan = ptlog_plan_of(plans, f.schema);
    if (!plan)
        return 0; /* no memory for the plan: the payload as hex */
    put_size_flag(out, &f);
    if (f.present == 0 && f.size_check == 0)
        return 1; /* an empty schema and an empty payload: nothing to show */
    if (plan->dump_room) {
        plan_fields(out, plan, &f, 0);
        return 1;
    }
    memcpy(ptlog_out_room(out, 2), " {", 2);
    out->len += 2;
    for (size_t i = 0; i < f.present; i++) {
        const ptlog_field_plan *fp = &plan->f[i];
        ptlog_copy_blocks(ptlog_out_room(out, PTLOG_FIELD_HEAD), fp->dump_head, fp->dump_len);
        out->len += fp->dump_len;
        put_dump_value(out, src, fp, &f, i, put_name, ctx);
    }
    memcpy(ptlog_out_room(out, 2), " }", 2);
    out->len += f.present ? 2 : 1;
    if (!f.present)
        out->buf[out->len - 1] = '}';
    return 1;
}
