/*
 * Payload schemas: parsing into a layout, the canonical text, and reading
 * fields out of payloads (format-spec/ptl-format.md section 5.6).
 *
 * The parser is a single left-to-right pass over the text with one byte of
 * look-ahead: it never backtracks, so its time is linear in the text's
 * length, and every allocation is bounded by the limits of
 * include/tracelog/schema.h.
 */
#include "format/schema.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/buf.h"
#include "common/bytes.h"
#include "common/error.h"
#include "format/double_text.h"

typedef struct item {
    const char *name;
    uint64_t value;
} item;

typedef struct field {
    const char *name;
    tracelog_field_type type;
    uint32_t offset, size, count;
    uint32_t first_item, nitems;
    int variable;
    const struct keyword *kw;
} field;

struct tracelog_schema {
    field *fields;
    size_t nfields;
    item *items;
    size_t nitems;
    char *names;  /* every field and value name, each NUL-terminated */
    char *text;   /* canonical form, NUL-terminated */
    size_t text_len;
    uint32_t size;
    int variable;
};

/* ---- type keywords -------------------------------------------------------- */

enum kw_kind {
    KW_SCALAR, /* u32 */
    KW_ARRAY,  /* char[N], char[] */
    KW_WORDS,  /* eventset[N] */
    KW_NAMED,  /* enum8 x {A=0} */
};

typedef struct keyword {
    const char *word;
    tracelog_field_type type;
    uint8_t elem_size; /* bytes of one element, also its alignment */
    uint8_t kind;
} keyword;

static const keyword keywords[] = {
    {"u8", TRACELOG_FIELD_U8, 1, KW_SCALAR},
    {"u16", TRACELOG_FIELD_U16, 2, KW_SCALAR},
    {"u32", TRACELOG_FIELD_U32, 4, KW_SCALAR},
    {"u64", TRACELOG_FIELD_U64, 8, KW_SCALAR},
    {"i8", TRACELOG_FIELD_I8, 1, KW_SCALAR},
    {"i16", TRACELOG_FIELD_I16, 2, KW_SCALAR},
    {"i32", TRACELOG_FIELD_I32, 4, KW_SCALAR},
    {"i64", TRACELOG_FIELD_I64, 8, KW_SCALAR},
    {"f32", TRACELOG_FIELD_F32, 4, KW_SCALAR},
    {"f64", TRACELOG_FIELD_F64, 8, KW_SCALAR},
    {"bool", TRACELOG_FIELD_BOOL, 1, KW_SCALAR},
    {"ptr", TRACELOG_FIELD_PTR, 8, KW_SCALAR},
    {"char", TRACELOG_FIELD_CHAR, 1, KW_ARRAY},
    {"bytes", TRACELOG_FIELD_BYTES, 1, KW_ARRAY},
    {"eventset", TRACELOG_FIELD_EVENTSET, 8, KW_WORDS},
    {"enum8", TRACELOG_FIELD_ENUM, 1, KW_NAMED},
    {"enum16", TRACELOG_FIELD_ENUM, 2, KW_NAMED},
    {"enum32", TRACELOG_FIELD_ENUM, 4, KW_NAMED},
    {"flags8", TRACELOG_FIELD_FLAGS, 1, KW_NAMED},
    {"flags16", TRACELOG_FIELD_FLAGS, 2, KW_NAMED},
    {"flags32", TRACELOG_FIELD_FLAGS, 4, KW_NAMED},
};

#define NKEYWORDS (sizeof keywords / sizeof *keywords)

static const keyword *find_keyword(const char *s, size_t n)
{
    for (size_t i = 0; i < NKEYWORDS; i++)
        if (strlen(keywords[i].word) == n && memcmp(keywords[i].word, s, n) == 0)
            return &keywords[i];
    return NULL;
}

const char *tracelog_field_type_name(tracelog_field_type type)
{
    switch (type) {
    case TRACELOG_FIELD_ENUM: return "enum";
    case TRACELOG_FIELD_FLAGS: return "flags";
    default: break;
    }
    for (size_t i = 0; i < NKEYWORDS; i++)
        if (keywords[i].type == type)
            return keywords[i].word;
    return NULL;
}

/* ---- parser ----------------------------------------------------------------- */

typedef struct parser {
    const char *s;
    size_t len, pos;
    tracelog_schema *sc;
    size_t names_len;          /* bytes of sc->names in use */
    size_t fields_cap, items_cap;
    uint64_t end;              /* end of the last fixed-size field */
    uint32_t align;            /* largest alignment so far */
    tl_buf text;               /* canonical form, built as fields are parsed */
    tracelog_error *err;
} parser;

static tracelog_status fail(parser *p, size_t pos, tracelog_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static tracelog_status fail(parser *p, size_t pos, tracelog_status code, const char *fmt, ...)
{
    char why[120];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return tl_fail(p->err, code, 0, pos, "schema byte %zu: %s", pos, why);
}

static tracelog_status no_memory(parser *p)
{
    return fail(p, p->pos, TRACELOG_E_NOMEM, "out of memory");
}

/* What stands at pos, for error messages: "'x'", "byte 0x0a", "the end". */
static const char *found(const parser *p, size_t pos, char buf[16])
{
    if (pos >= p->len)
        return "the end";
    unsigned char c = (unsigned char)p->s[pos];
    if (c > 0x20 && c < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02x", c);
    return buf;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static int is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

static int at(const parser *p, char c) { return p->pos < p->len && p->s[p->pos] == c; }

static void skip_space(parser *p)
{
    while (p->pos < p->len && is_space(p->s[p->pos]))
        p->pos++;
}

static tracelog_status expect(parser *p, char c, const char *after)
{
    char buf[16];
    if (!at(p, c))
        return fail(p, p->pos, TRACELOG_E_INVAL, "expected '%c' %s, found %s", c, after,
                    found(p, p->pos, buf));
    p->pos++;
    return TRACELOG_OK;
}

/* A name ([A-Za-z_][A-Za-z0-9_]*, 1..63 bytes), copied into sc->names. */
static tracelog_status parse_name(parser *p, const char *what, const char **out)
{
    char buf[16];
    size_t start = p->pos;
    if (start >= p->len || !is_name_start(p->s[start]))
        return fail(p, start, TRACELOG_E_INVAL, "expected %s, found %s", what, found(p, start, buf));
    while (p->pos < p->len && is_name_char(p->s[p->pos]))
        p->pos++;
    size_t n = p->pos - start;
    if (n > TRACELOG_SCHEMA_NAME_MAX)
        return fail(p, start, TRACELOG_E_LIMIT, "%s longer than %d bytes", what,
                    TRACELOG_SCHEMA_NAME_MAX);
    /* Names are disjoint pieces of the text, each followed by a byte or by the end:
       sc->names (len + 1 bytes) always has room. */
    char *dst = p->sc->names + p->names_len;
    memcpy(dst, p->s + start, n);
    dst[n] = 0;
    p->names_len += n + 1;
    *out = dst;
    return TRACELOG_OK;
}

static int digit_value(char c, unsigned base)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (base == 16 && c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (base == 16 && c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/*
 * A number: decimal digits, or "0x" and hex digits. Above max: `over` with
 * the message "<what> above <max>".
 */
static tracelog_status parse_number(parser *p, uint64_t max, tracelog_status over, const char *what,
                                    uint64_t *out)
{
    char buf[16];
    size_t start = p->pos;
    unsigned base = 10;
    if (p->pos + 1 < p->len && p->s[p->pos] == '0' && p->s[p->pos + 1] == 'x') {
        base = 16;
        p->pos += 2;
    }
    size_t first_digit = p->pos;
    uint64_t v = 0;
    int d;
    while (p->pos < p->len && (d = digit_value(p->s[p->pos], base)) >= 0) {
        if ((uint64_t)d > max || v > (max - (uint64_t)d) / base)
            return fail(p, start, over, "%s above %" PRIu64, what, max);
        v = v * base + (uint64_t)d;
        p->pos++;
    }
    if (p->pos == first_digit || (p->pos < p->len && is_name_char(p->s[p->pos])))
        return fail(p, p->pos, TRACELOG_E_INVAL, "expected %s digit, found %s",
                    base == 16 ? "a hex" : "a decimal", found(p, p->pos, buf));
    *out = v;
    return TRACELOG_OK;
}

static int put_text(tl_buf *b, const char *s) { return tl_buf_append(b, s, strlen(s)); }

/* v in decimal, or in hex with "0x". */
static int put_number(tl_buf *b, int hex, uint64_t v)
{
    char tmp[24];
    int n = hex ? snprintf(tmp, sizeof tmp, "0x%" PRIx64, v) : snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    return tl_buf_append(b, tmp, (size_t)n);
}

/* Appends the canonical text of f (the last field parsed). */
static int put_field(parser *p, const field *f)
{
    tl_buf *b = &p->text;
    const keyword *k = f->kw;
    if ((p->sc->nfields > 0 && put_text(b, "; ")) || put_text(b, k->word))
        return -1;
    if (k->kind == KW_ARRAY || k->kind == KW_WORDS) {
        if (put_text(b, "[") || (!f->variable && put_number(b, 0, f->count)) ||
            put_text(b, "]"))
            return -1;
    }
    if (put_text(b, " ") || put_text(b, f->name))
        return -1;
    if (k->kind != KW_NAMED)
        return 0;
    if (put_text(b, " {"))
        return -1;
    for (uint32_t i = 0; i < f->nitems; i++) {
        const item *it = &p->sc->items[f->first_item + i];
        if ((i > 0 && put_text(b, ", ")) || put_text(b, it->name) || put_text(b, "=") ||
            put_number(b, f->type == TRACELOG_FIELD_FLAGS, it->value))
            return -1;
    }
    return put_text(b, "}");
}

static tracelog_status push_item(parser *p, item it)
{
    tracelog_schema *sc = p->sc;
    item *n = tl_grow(sc->items, &p->items_cap, sc->nitems + 1, sizeof *n);
    if (!n)
        return no_memory(p);
    sc->items = n;
    sc->items[sc->nitems++] = it;
    return TRACELOG_OK;
}

/* "{NAME=VALUE, ...}" of an enum or flags field; p->pos is at '{'. */
static tracelog_status parse_items(parser *p, field *f)
{
    tracelog_schema *sc = p->sc;
    int is_flags = f->type == TRACELOG_FIELD_FLAGS;
    unsigned bits = 8u * f->kw->elem_size;
    uint64_t max = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
    tracelog_status st = expect(p, '{', "before the values");
    f->first_item = (uint32_t)sc->nitems;
    while (st == TRACELOG_OK) {
        char buf[16];
        skip_space(p);
        size_t item_pos = p->pos;
        if (f->nitems == TRACELOG_SCHEMA_ITEMS_MAX)
            return fail(p, item_pos, TRACELOG_E_LIMIT, "more than %d values in field '%s'",
                        TRACELOG_SCHEMA_ITEMS_MAX, f->name);
        if (sc->nitems == TRACELOG_SCHEMA_ALL_ITEMS_MAX)
            return fail(p, item_pos, TRACELOG_E_LIMIT, "more than %d values in the schema",
                        TRACELOG_SCHEMA_ALL_ITEMS_MAX);
        item it;
        st = parse_name(p, is_flags ? "a flag name" : "a value name", &it.name);
        if (st != TRACELOG_OK)
            return st;
        for (uint32_t i = 0; i < f->nitems; i++)
            if (strcmp(sc->items[f->first_item + i].name, it.name) == 0)
                return fail(p, item_pos, TRACELOG_E_INVAL, "value name '%s' repeated in '%s'",
                            it.name, f->name);
        skip_space(p);
        if ((st = expect(p, '=', "after a value name")) != TRACELOG_OK)
            return st;
        skip_space(p);
        size_t value_pos = p->pos;
        if ((st = parse_number(p, max, TRACELOG_E_INVAL, f->kw->word, &it.value)) != TRACELOG_OK)
            return st;
        if (is_flags && it.value == 0)
            return fail(p, value_pos, TRACELOG_E_INVAL, "flag '%s' has no bit set", it.name);
        if ((st = push_item(p, it)) != TRACELOG_OK)
            return st;
        f->nitems++;
        skip_space(p);
        if (at(p, ',')) {
            p->pos++;
            skip_space(p);
        } else if (!at(p, '}')) {
            return fail(p, p->pos, TRACELOG_E_INVAL, "expected ',' or '}', found %s",
                        found(p, p->pos, buf));
        }
        if (at(p, '}')) {
            p->pos++;
            return TRACELOG_OK;
        }
    }
    return st;
}

/* "[N]" or, for char/bytes, "[]"; p->pos is just after the keyword. */
static tracelog_status parse_count(parser *p, field *f)
{
    tracelog_status st = expect(p, '[', "after the type");
    if (st != TRACELOG_OK)
        return st;
    if (f->kw->kind == KW_ARRAY && at(p, ']')) {
        p->pos++;
        f->variable = 1;
        return TRACELOG_OK;
    }
    size_t count_pos = p->pos;
    uint64_t n;
    st = parse_number(p, TRACELOG_SCHEMA_SIZE_MAX / f->kw->elem_size, TRACELOG_E_LIMIT,
                      "array size", &n);
    if (st != TRACELOG_OK)
        return st;
    if (n == 0)
        return fail(p, count_pos, TRACELOG_E_INVAL, "array size 0");
    f->count = (uint32_t)n;
    return expect(p, ']', "after the array size");
}

/* Places f after the fields so far, as a C compiler would. */
static tracelog_status lay_out(parser *p, field *f, size_t field_pos)
{
    uint32_t align = f->kw->elem_size;
    if (f->variable) {
        f->offset = (uint32_t)p->end;
        p->sc->variable = 1;
    } else {
        uint64_t offset = (p->end + align - 1) / align * align;
        uint64_t size = (uint64_t)f->kw->elem_size * (f->kw->kind == KW_SCALAR ||
                                                      f->kw->kind == KW_NAMED ? 1 : f->count);
        if (offset + size > TRACELOG_SCHEMA_SIZE_MAX)
            return fail(p, field_pos, TRACELOG_E_LIMIT, "fields span more than %d bytes",
                        TRACELOG_SCHEMA_SIZE_MAX);
        f->offset = (uint32_t)offset;
        f->size = (uint32_t)size;
        p->end = offset + size;
    }
    if (align > p->align)
        p->align = align;
    return TRACELOG_OK;
}

static tracelog_status push_field(parser *p, const field *f)
{
    tracelog_schema *sc = p->sc;
    field *n = tl_grow(sc->fields, &p->fields_cap, sc->nfields + 1, sizeof *n);
    if (!n)
        return no_memory(p);
    sc->fields = n;
    if (put_field(p, f))
        return no_memory(p);
    sc->fields[sc->nfields++] = *f;
    return TRACELOG_OK;
}

static tracelog_status parse_field(parser *p)
{
    char buf[16];
    tracelog_schema *sc = p->sc;
    size_t start = p->pos;
    if (sc->nfields == TRACELOG_SCHEMA_FIELDS_MAX)
        return fail(p, start, TRACELOG_E_LIMIT, "more than %d fields", TRACELOG_SCHEMA_FIELDS_MAX);
    if (sc->variable)
        return fail(p, start, TRACELOG_E_INVAL,
                    "a field follows '%s', which must be the last (variable length)",
                    sc->fields[sc->nfields - 1].name);
    while (p->pos < p->len && is_name_char(p->s[p->pos]))
        p->pos++;
    field f = {0};
    f.kw = find_keyword(p->s + start, p->pos - start);
    if (!f.kw) {
        if (p->pos == start)
            return fail(p, start, TRACELOG_E_INVAL, "expected a type, found %s", found(p, start, buf));
        int n = (int)(p->pos - start < 20 ? p->pos - start : 20);
        return fail(p, start, TRACELOG_E_INVAL, "unknown type '%.*s%s'", n, p->s + start,
                    p->pos - start > 20 ? "..." : "");
    }
    f.type = f.kw->type;
    tracelog_status st = TRACELOG_OK;
    if (f.kw->kind == KW_ARRAY || f.kw->kind == KW_WORDS)
        st = parse_count(p, &f);
    if (st != TRACELOG_OK)
        return st;
    if (p->pos < p->len && !is_space(p->s[p->pos]))
        return fail(p, p->pos, TRACELOG_E_INVAL, "expected a space after the type, found %s",
                    found(p, p->pos, buf));
    skip_space(p);
    size_t name_pos = p->pos;
    if ((st = parse_name(p, "a field name", &f.name)) != TRACELOG_OK)
        return st;
    for (size_t i = 0; i < sc->nfields; i++)
        if (strcmp(sc->fields[i].name, f.name) == 0)
            return fail(p, name_pos, TRACELOG_E_INVAL, "field name '%s' repeated", f.name);
    if (f.kw->kind == KW_NAMED) {
        skip_space(p);
        if ((st = parse_items(p, &f)) != TRACELOG_OK)
            return st;
    }
    if ((st = lay_out(p, &f, start)) != TRACELOG_OK)
        return st;
    return push_field(p, &f);
}

static tracelog_status parse_fields(parser *p)
{
    char buf[16];
    skip_space(p);
    while (p->pos < p->len) {
        tracelog_status st = parse_field(p);
        if (st != TRACELOG_OK)
            return st;
        skip_space(p);
        if (p->pos == p->len)
            break;
        if (!at(p, ';'))
            return fail(p, p->pos, TRACELOG_E_INVAL, "expected ';' or the end, found %s",
                        found(p, p->pos, buf));
        p->pos++;
        skip_space(p);
    }
    return TRACELOG_OK;
}

void tracelog_schema_free(tracelog_schema *s)
{
    if (!s)
        return;
    free(s->fields);
    free(s->items);
    free(s->names);
    free(s->text);
    free(s);
}

tracelog_status tl_schema_parse(const char *text, size_t len, tracelog_schema **out,
                                tracelog_error *err)
{
    if (!out)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "schema: NULL argument");
    *out = NULL;
    if (!text && len)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "schema: NULL argument");
    parser p = {.s = text, .len = len, .align = 1, .err = err};
    if (len > TRACELOG_SCHEMA_TEXT_MAX)
        return fail(&p, TRACELOG_SCHEMA_TEXT_MAX, TRACELOG_E_LIMIT, "schema longer than %d bytes",
                    TRACELOG_SCHEMA_TEXT_MAX);
    p.sc = calloc(1, sizeof *p.sc);
    if (p.sc)
        p.sc->names = malloc(len + 1);
    if (!p.sc || !p.sc->names) {
        tracelog_schema_free(p.sc);
        return no_memory(&p);
    }
    tracelog_status st = parse_fields(&p);
    if (st == TRACELOG_OK && tl_buf_append(&p.text, "", 1))
        st = no_memory(&p);
    if (st != TRACELOG_OK) {
        tl_buf_free(&p.text);
        tracelog_schema_free(p.sc);
        return st;
    }
    tracelog_schema *sc = p.sc;
    sc->text = (char *)p.text.data;
    sc->text_len = p.text.len - 1;
    if (sc->variable)
        sc->size = sc->fields[sc->nfields - 1].offset;
    else
        sc->size = (uint32_t)((p.end + p.align - 1) / p.align * p.align);
    *out = sc;
    return TRACELOG_OK;
}

tracelog_status tracelog_schema_parse(const char *text, tracelog_schema **out, tracelog_error *err)
{
    if (!text) {
        if (out)
            *out = NULL;
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "schema: NULL argument");
    }
    /* strnlen: a text far over the limit is refused without reading all of it. */
    return tl_schema_parse(text, strnlen(text, TRACELOG_SCHEMA_TEXT_MAX + 1), out, err);
}

/* ---- the parsed schema ------------------------------------------------------ */

const char *tracelog_schema_text(const tracelog_schema *s) { return s ? s->text : NULL; }
size_t tl_schema_text_len(const tracelog_schema *s) { return s ? s->text_len : 0; }
size_t tracelog_schema_field_count(const tracelog_schema *s) { return s ? s->nfields : 0; }
uint32_t tracelog_schema_size(const tracelog_schema *s) { return s ? s->size : 0; }
int tracelog_schema_is_variable(const tracelog_schema *s) { return s ? s->variable : 0; }

tracelog_status tracelog_schema_field(const tracelog_schema *s, size_t index,
                                      tracelog_field_info *out)
{
    if (!s || !out || index >= s->nfields)
        return TRACELOG_E_INVAL;
    const field *f = &s->fields[index];
    *out = (tracelog_field_info){f->name, f->type, f->offset, f->size, f->count, f->nitems,
                                 f->variable};
    return TRACELOG_OK;
}

size_t tracelog_schema_find(const tracelog_schema *s, const char *name)
{
    if (!s || !name)
        return TRACELOG_SCHEMA_NO_FIELD;
    for (size_t i = 0; i < s->nfields; i++)
        if (strcmp(s->fields[i].name, name) == 0)
            return i;
    return TRACELOG_SCHEMA_NO_FIELD;
}

tracelog_status tracelog_schema_item(const tracelog_schema *s, size_t index, size_t item_index,
                                     const char **name, uint64_t *value)
{
    if (!s || index >= s->nfields || item_index >= s->fields[index].nitems)
        return TRACELOG_E_INVAL;
    const item *it = &s->items[s->fields[index].first_item + item_index];
    if (name)
        *name = it->name;
    if (value)
        *value = it->value;
    return TRACELOG_OK;
}

const char *tracelog_schema_enum_name(const tracelog_schema *s, size_t index, uint64_t value)
{
    if (!s || index >= s->nfields || s->fields[index].type != TRACELOG_FIELD_ENUM)
        return NULL;
    const field *f = &s->fields[index];
    for (uint32_t i = 0; i < f->nitems; i++)
        if (s->items[f->first_item + i].value == value)
            return s->items[f->first_item + i].name;
    return NULL;
}

/* ---- decoding ----------------------------------------------------------------- */

tracelog_status tracelog_fields_decode(const tracelog_schema *s, const void *payload, size_t len,
                                       tracelog_fields *out)
{
    if (!s || !out || (!payload && len))
        return TRACELOG_E_INVAL;
    *out = (tracelog_fields){s, payload, len, s->nfields, 0};
    if (len >= s->size) {
        out->size_check = len > s->size && !s->variable;
        return out->size_check ? TRACELOG_E_CORRUPT : TRACELOG_OK;
    }
    /* Shorter: the fields that end within it (fields are in offset order). */
    size_t n = 0;
    while (n < s->nfields && !s->fields[n].variable &&
           (uint64_t)s->fields[n].offset + s->fields[n].size <= len)
        n++;
    out->present = n;
    out->size_check = -1;
    return TRACELOG_E_TRUNCATED;
}

/* Field index of the view, if it lies inside the payload. */
static tracelog_status field_at(const tracelog_fields *f, size_t index, const field **out)
{
    if (!f || !f->schema || index >= f->schema->nfields)
        return TRACELOG_E_INVAL;
    const field *fd = &f->schema->fields[index];
    /* Checked against len as well: the view is the caller's to modify. */
    if (index >= f->present || (uint64_t)fd->offset + fd->size > f->len || !f->data)
        return TRACELOG_E_TRUNCATED;
    *out = fd;
    return TRACELOG_OK;
}

static size_t field_len(const tracelog_fields *f, const field *fd)
{
    return fd->variable ? f->len - fd->offset : fd->size;
}

typedef enum num_kind { NUM_NONE, NUM_UNSIGNED, NUM_SIGNED, NUM_FLOAT } num_kind;

static num_kind kind_of(tracelog_field_type t)
{
    switch (t) {
    case TRACELOG_FIELD_U8: case TRACELOG_FIELD_U16: case TRACELOG_FIELD_U32:
    case TRACELOG_FIELD_U64: case TRACELOG_FIELD_BOOL: case TRACELOG_FIELD_PTR:
    case TRACELOG_FIELD_ENUM: case TRACELOG_FIELD_FLAGS:
        return NUM_UNSIGNED;
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32:
    case TRACELOG_FIELD_I64:
        return NUM_SIGNED;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        return NUM_FLOAT;
    default:
        return NUM_NONE;
    }
}

static uint64_t load_unsigned(const uint8_t *p, uint32_t size)
{
    switch (size) {
    case 1: return p[0];
    case 2: return tl_load16(p);
    case 4: return tl_load32(p);
    default: return tl_load64(p);
    }
}

/* Two's complement sign extension (the payload's integers are little-endian two's complement). */
static int64_t load_signed(const uint8_t *p, uint32_t size)
{
    uint64_t u = load_unsigned(p, size);
    unsigned shift = 64 - 8 * size;
    return shift ? (int64_t)(u << shift) >> shift : (int64_t)u;
}

static double load_float(const uint8_t *p, uint32_t size)
{
    if (size == 4) {
        uint32_t bits = tl_load32(p);
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    uint64_t bits = tl_load64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

tracelog_status tracelog_fields_int(const tracelog_fields *f, size_t index, int64_t *out)
{
    const field *fd;
    tracelog_status st = field_at(f, index, &fd);
    if (st != TRACELOG_OK)
        return st;
    const uint8_t *p = f->data + fd->offset;
    switch (kind_of(fd->type)) {
    case NUM_SIGNED:
        *out = load_signed(p, fd->size);
        return TRACELOG_OK;
    case NUM_UNSIGNED: {
        uint64_t u = load_unsigned(p, fd->size);
        if (u > INT64_MAX)
            return TRACELOG_E_LIMIT;
        *out = (int64_t)u;
        return TRACELOG_OK;
    }
    default:
        return TRACELOG_E_INVAL;
    }
}

tracelog_status tracelog_fields_uint(const tracelog_fields *f, size_t index, uint64_t *out)
{
    const field *fd;
    tracelog_status st = field_at(f, index, &fd);
    if (st != TRACELOG_OK)
        return st;
    const uint8_t *p = f->data + fd->offset;
    switch (kind_of(fd->type)) {
    case NUM_UNSIGNED:
        *out = load_unsigned(p, fd->size);
        return TRACELOG_OK;
    case NUM_SIGNED: {
        int64_t v = load_signed(p, fd->size);
        if (v < 0)
            return TRACELOG_E_LIMIT;
        *out = (uint64_t)v;
        return TRACELOG_OK;
    }
    default:
        return TRACELOG_E_INVAL;
    }
}

tracelog_status tracelog_fields_double(const tracelog_fields *f, size_t index, double *out)
{
    const field *fd;
    tracelog_status st = field_at(f, index, &fd);
    if (st != TRACELOG_OK)
        return st;
    const uint8_t *p = f->data + fd->offset;
    switch (kind_of(fd->type)) {
    case NUM_UNSIGNED: *out = (double)load_unsigned(p, fd->size); return TRACELOG_OK;
    case NUM_SIGNED: *out = (double)load_signed(p, fd->size); return TRACELOG_OK;
    case NUM_FLOAT: *out = load_float(p, fd->size); return TRACELOG_OK;
    default: return TRACELOG_E_INVAL;
    }
}

tracelog_status tracelog_fields_string(const tracelog_fields *f, size_t index, const char **text,
                                       size_t *len)
{
    const field *fd;
    tracelog_status st = field_at(f, index, &fd);
    if (st != TRACELOG_OK)
        return st;
    if (fd->type != TRACELOG_FIELD_CHAR || !text || !len)
        return TRACELOG_E_INVAL;
    const char *p = (const char *)f->data + fd->offset;
    size_t n = field_len(f, fd);
    const char *nul = memchr(p, 0, n);
    *text = p;
    *len = nul ? (size_t)(nul - p) : n;
    return TRACELOG_OK;
}

tracelog_status tracelog_fields_bytes(const tracelog_fields *f, size_t index,
                                      const uint8_t **bytes, size_t *len)
{
    const field *fd;
    tracelog_status st = field_at(f, index, &fd);
    if (st != TRACELOG_OK)
        return st;
    if (!bytes || !len)
        return TRACELOG_E_INVAL;
    *bytes = f->data + fd->offset;
    *len = field_len(f, fd);
    return TRACELOG_OK;
}

/* ---- text of a field ----------------------------------------------------------- */

/* snprintf-style output: counts every byte, stores what fits. */
typedef struct out {
    char *buf;
    size_t cap, len;
} out;

static void put(out *o, const char *s, size_t n)
{
    if (o->cap > 0 && o->len < o->cap - 1) {
        size_t room = o->cap - 1 - o->len;
        memcpy(o->buf + o->len, s, n < room ? n : room);
    }
    o->len += n;
}

static void put_str(out *o, const char *s) { put(o, s, strlen(s)); }

static void put_u64(out *o, uint64_t v)
{
    char tmp[20];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(o, tmp + i, sizeof tmp - i);
}

static void put_i64(out *o, int64_t v)
{
    if (v < 0)
        put(o, "-", 1);
    put_u64(o, v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
}

/* "0x" and v in lowercase hex. */
static void put_hex64(out *o, uint64_t v)
{
    static const char digits[] = "0123456789abcdef";
    char tmp[18];
    size_t i = sizeof tmp;
    do {
        tmp[--i] = digits[v & 15];
        v >>= 4;
    } while (v);
    tmp[--i] = 'x';
    tmp[--i] = '0';
    put(o, tmp + i, sizeof tmp - i);
}

/* The shortest text that reads back to the same value (format/double_text.c). */
static void put_float(out *o, double v, int is_f32)
{
    if (o->cap > o->len && o->cap - o->len > TL_DOUBLE_TEXT_MAX) { /* room: straight into the buffer */
        char *at = o->buf + o->len;
        o->len += is_f32 ? tl_float_text((float)v, at) : tl_double_text(v, at);
        return;
    }
    char tmp[TL_DOUBLE_TEXT_MAX];
    put(o, tmp, is_f32 ? tl_float_text((float)v, tmp) : tl_double_text(v, tmp));
}

static void put_flags(out *o, const tracelog_schema *s, const field *fd, uint64_t v)
{
    uint64_t rest = v;
    int any = 0;
    for (uint32_t i = 0; i < fd->nitems; i++) {
        const item *it = &s->items[fd->first_item + i];
        if ((v & it->value) != it->value)
            continue;
        if (any++)
            put_str(o, "|");
        put_str(o, it->name);
        rest &= ~it->value;
    }
    if (rest) {
        if (any++)
            put_str(o, "|");
        put_hex64(o, rest);
    }
    if (!any)
        put_str(o, "0");
}

/* Members of a little-endian bitmap as ranges: "[1-8, 32]". */
static void put_eventset(out *o, const uint8_t *p, size_t n)
{
    uint64_t bits = (uint64_t)n * 8;
    int any = 0;
    put_str(o, "[");
    for (uint64_t i = 0; i < bits;) {
        if (!(p[i / 8] >> (i % 8) & 1)) {
            i = p[i / 8] >> (i % 8) ? i + 1 : (i / 8 + 1) * 8; /* skip a byte with nothing left */
            continue;
        }
        uint64_t first = i;
        while (i < bits && (p[i / 8] >> (i % 8) & 1))
            i++;
        if (any++)
            put_str(o, ", ");
        put_u64(o, first);
        if (i - 1 > first) {
            put_str(o, "-");
            put_u64(o, i - 1);
        }
    }
    put_str(o, "]");
}

static void put_hex(out *o, const uint8_t *p, size_t n)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        char pair[2] = {digits[p[i] >> 4], digits[p[i] & 15]};
        put(o, pair, 2);
    }
}

static void put_value(out *o, const tracelog_fields *f, const field *fd)
{
    const uint8_t *p = f->data + fd->offset;
    size_t n = field_len(f, fd);
    switch (fd->type) {
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32:
    case TRACELOG_FIELD_I64:
        put_i64(o, load_signed(p, fd->size));
        return;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        put_float(o, load_float(p, fd->size), fd->size == 4);
        return;
    case TRACELOG_FIELD_BOOL:
        put_str(o, p[0] ? "true" : "false");
        return;
    case TRACELOG_FIELD_PTR:
        put_hex64(o, load_unsigned(p, fd->size));
        return;
    case TRACELOG_FIELD_ENUM: {
        uint64_t v = load_unsigned(p, fd->size);
        const char *name = tracelog_schema_enum_name(f->schema, (size_t)(fd - f->schema->fields), v);
        if (name)
            put_str(o, name);
        else
            put_u64(o, v);
        return;
    }
    case TRACELOG_FIELD_FLAGS:
        put_flags(o, f->schema, fd, load_unsigned(p, fd->size));
        return;
    case TRACELOG_FIELD_CHAR: {
        const void *nul = memchr(p, 0, n);
        put(o, (const char *)p, nul ? (size_t)((const uint8_t *)nul - p) : n);
        return;
    }
    case TRACELOG_FIELD_BYTES:
        put_hex(o, p, n);
        return;
    case TRACELOG_FIELD_EVENTSET:
        put_eventset(o, p, n);
        return;
    default: /* the unsigned integers */
        put_u64(o, load_unsigned(p, fd->size));
        return;
    }
}

_Static_assert(TRACELOG_DOUBLE_TEXT_MAX == TL_DOUBLE_TEXT_MAX, "the public room is the text's");

size_t tracelog_double_text(double v, char *text) { return tl_double_text(v, text); }

size_t tracelog_float_text(float v, char *text) { return tl_float_text(v, text); }

tracelog_status tracelog_fields_format(const tracelog_fields *f, size_t index, char *buf,
                                       size_t cap, size_t *len)
{
    const field *fd;
    tracelog_status st = field_at(f, index, &fd);
    if (st != TRACELOG_OK)
        return st;
    if (!buf && cap)
        return TRACELOG_E_INVAL;
    out o = {buf, cap, 0};
    put_value(&o, f, fd);
    if (cap)
        buf[o.len < cap - 1 ? o.len : cap - 1] = 0;
    if (len)
        *len = o.len;
    return TRACELOG_OK;
}
