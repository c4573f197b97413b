/*
 * fuzz_schema: the payload schema parser and field decoder
 * (include/tracelog/schema.h, libtracelog/format/schema.c).
 *
 * Input: schema text, then (after the first NUL byte, if any) a payload.
 *
 * Properties:
 *  - parsing ends with TRACELOG_OK, or TRACELOG_E_INVAL / TRACELOG_E_LIMIT
 *    with a position inside the text and a message naming it; the counted
 *    parser and the NUL-terminated one agree;
 *  - a parsed layout keeps the limits and C's rules: fields in offset
 *    order, each aligned to its type, none overlapping, the size a multiple
 *    of the largest alignment, names unique and found by name, a variable
 *    field only last;
 *  - the canonical text parses to the same layout and is a fixed point;
 *  - the payload, and prefixes of it, decode with every getter and the
 *    formatter: statuses as documented, nothing read outside the payload
 *    (each length gets a buffer of exactly that size), text that matches the
 *    reported length; a float's text reads back to its exact bits, and one
 *    digit fewer does not.
 */
#define _GNU_SOURCE
#include "format/schema.h"
#include "fuzz_helpers.h"

#include <math.h>

static uint32_t alignment_of(const tracelog_field_info *fi)
{
    switch (fi->type) {
    case TRACELOG_FIELD_CHAR:
    case TRACELOG_FIELD_BYTES:
        return 1;
    case TRACELOG_FIELD_EVENTSET:
        return 8;
    default:
        return fi->size;
    }
}

static void check_layout(const tracelog_schema *s)
{
    size_t n = tracelog_schema_field_count(s);
    FUZZ_ASSERT(n <= TRACELOG_SCHEMA_FIELDS_MAX);
    uint64_t end = 0, align = 1, items = 0;
    for (size_t i = 0; i < n; i++) {
        tracelog_field_info fi;
        FUZZ_ASSERT(tracelog_schema_field(s, i, &fi) == TRACELOG_OK);
        size_t len = strlen(fi.name);
        FUZZ_ASSERT(len >= 1 && len <= TRACELOG_SCHEMA_NAME_MAX);
        FUZZ_ASSERT(tracelog_schema_find(s, fi.name) == i, "field %zu '%s' not found by name", i, fi.name);
        FUZZ_ASSERT(tracelog_field_type_name(fi.type) != NULL);
        if (fi.variable) {
            FUZZ_ASSERT(i == n - 1, "variable field %zu of %zu", i, n);
            FUZZ_ASSERT(fi.size == 0 && fi.offset == end);
            FUZZ_ASSERT(fi.type == TRACELOG_FIELD_CHAR || fi.type == TRACELOG_FIELD_BYTES);
            continue;
        }
        uint32_t a = alignment_of(&fi);
        FUZZ_ASSERT(a == 1 || a == 2 || a == 4 || a == 8, "alignment %u", a);
        FUZZ_ASSERT(fi.offset % a == 0, "field %zu at %u, alignment %u", i, fi.offset, a);
        FUZZ_ASSERT(fi.offset >= end && fi.offset - end < a, "field %zu at %u after %llu", i,
                    fi.offset, (unsigned long long)end);
        FUZZ_ASSERT(fi.size >= 1);
        end = (uint64_t)fi.offset + fi.size;
        if (a > align)
            align = a;
        items += fi.item_count;
        FUZZ_ASSERT(fi.item_count <= TRACELOG_SCHEMA_ITEMS_MAX);
        for (uint32_t j = 0; j < fi.item_count; j++) {
            const char *name;
            uint64_t value;
            FUZZ_ASSERT(tracelog_schema_item(s, i, j, &name, &value) == TRACELOG_OK);
            FUZZ_ASSERT(fi.size == 8 || value >> (8 * fi.size) == 0, "value does not fit");
            FUZZ_ASSERT(fi.type == TRACELOG_FIELD_ENUM || value != 0);
        }
    }
    FUZZ_ASSERT(items <= TRACELOG_SCHEMA_ALL_ITEMS_MAX);
    FUZZ_ASSERT(end <= TRACELOG_SCHEMA_SIZE_MAX);
    uint32_t size = tracelog_schema_size(s);
    if (tracelog_schema_is_variable(s))
        FUZZ_ASSERT(size == end);
    else
        FUZZ_ASSERT(size >= end && size % align == 0 && size - end < align, "size %u, end %llu", size,
                    (unsigned long long)end);
}

static void check_same_layout(const tracelog_schema *a, const tracelog_schema *b)
{
    FUZZ_ASSERT(tracelog_schema_size(a) == tracelog_schema_size(b));
    FUZZ_ASSERT(tracelog_schema_is_variable(a) == tracelog_schema_is_variable(b));
    FUZZ_ASSERT(tracelog_schema_field_count(a) == tracelog_schema_field_count(b));
    for (size_t i = 0; i < tracelog_schema_field_count(a); i++) {
        tracelog_field_info x, y;
        tracelog_schema_field(a, i, &x);
        tracelog_schema_field(b, i, &y);
        FUZZ_ASSERT(strcmp(x.name, y.name) == 0 && x.type == y.type && x.offset == y.offset &&
                        x.size == y.size && x.count == y.count && x.item_count == y.item_count &&
                        x.variable == y.variable,
                    "field %zu differs after canonicalisation", i);
        for (uint32_t j = 0; j < x.item_count; j++) {
            const char *nx, *ny;
            uint64_t vx, vy;
            tracelog_schema_item(a, i, j, &nx, &vx);
            tracelog_schema_item(b, i, j, &ny, &vy);
            FUZZ_ASSERT(strcmp(nx, ny) == 0 && vx == vy, "item %u of field %zu differs", j, i);
        }
    }
}

/*
 * A float field's text reads back to the field's exact bits ("nan" for any
 * NaN), and printf's rounding to one digit fewer does not: the text is the
 * shortest (tests/test_double_text.c checks the digits in depth).
 */
static void check_float_text(const char *text, const uint8_t *p, uint32_t size)
{
    double v;
    float fv;
    if (size == 4) {
        memcpy(&fv, p, 4);
        v = fv;
    } else {
        memcpy(&v, p, 8);
    }
    if (isnan(v)) {
        FUZZ_ASSERT(strcmp(text, "nan") == 0, "NaN as \"%s\"", text);
        return;
    }
    char *end;
    double back = size == 4 ? strtof(text, &end) : strtod(text, &end);
    FUZZ_ASSERT(*end == 0 && memcmp(&back, &v, sizeof v) == 0, "f%u \"%s\" reads back as %a, not %a", 8 * size,
                text, back, v);
    if (isinf(v) || v == 0)
        return;
    int n = 0, zeros = 0; /* significant digits, and the zeros that end them (1500: 2) */
    for (const char *c = text + (*text == '-'); *c && *c != 'e'; c++) {
        if (*c == '.' || (*c == '0' && n == 0))
            continue;
        n++;
        zeros = *c == '0' ? zeros + 1 : 0;
    }
    n -= zeros;
    if (n < 2)
        return;
    char fewer[64];
    snprintf(fewer, sizeof fewer, "%.*e", n - 2, v);
    double again = size == 4 ? strtof(fewer, NULL) : strtod(fewer, NULL);
    FUZZ_ASSERT(memcmp(&again, &v, sizeof v) != 0, "\"%s\" but \"%s\" reads back too", text, fewer);
}

static void check_field(const tracelog_fields *f, size_t i)
{
    tracelog_field_info fi;
    tracelog_schema_field(f->schema, i, &fi);
    int present = i < f->present;
    tracelog_status absent = TRACELOG_E_TRUNCATED;

    const uint8_t *bytes;
    size_t n;
    tracelog_status st = tracelog_fields_bytes(f, i, &bytes, &n);
    FUZZ_ASSERT(st == (present ? TRACELOG_OK : absent));
    if (st == TRACELOG_OK) {
        FUZZ_ASSERT(bytes == f->data + fi.offset);
        FUZZ_ASSERT(fi.variable ? n == f->len - fi.offset : n == fi.size);
    }
    int64_t iv;
    uint64_t uv;
    double dv;
    int numeric = fi.type != TRACELOG_FIELD_CHAR && fi.type != TRACELOG_FIELD_BYTES &&
                  fi.type != TRACELOG_FIELD_EVENTSET;
    int integer = numeric && fi.type != TRACELOG_FIELD_F32 && fi.type != TRACELOG_FIELD_F64;
    st = tracelog_fields_int(f, i, &iv);
    FUZZ_ASSERT(!present ? st == absent
                         : integer ? st == TRACELOG_OK || st == TRACELOG_E_LIMIT : st == TRACELOG_E_INVAL);
    st = tracelog_fields_uint(f, i, &uv);
    FUZZ_ASSERT(!present ? st == absent
                         : integer ? st == TRACELOG_OK || st == TRACELOG_E_LIMIT : st == TRACELOG_E_INVAL);
    st = tracelog_fields_double(f, i, &dv);
    FUZZ_ASSERT(st == (!present ? absent : numeric ? TRACELOG_OK : TRACELOG_E_INVAL));
    const char *text;
    st = tracelog_fields_string(f, i, &text, &n);
    FUZZ_ASSERT(st == (!present ? absent : fi.type == TRACELOG_FIELD_CHAR ? TRACELOG_OK : TRACELOG_E_INVAL));
    if (st == TRACELOG_OK)
        FUZZ_ASSERT(text == (const char *)f->data + fi.offset && memchr(text, 0, n) == NULL);

    char small[8], big[256];
    size_t need = 0, need2 = 0;
    st = tracelog_fields_format(f, i, small, sizeof small, &need);
    FUZZ_ASSERT(st == (present ? TRACELOG_OK : absent));
    if (st != TRACELOG_OK)
        return;
    FUZZ_ASSERT(strlen(small) == (need < sizeof small ? need : sizeof small - 1));
    FUZZ_ASSERT(tracelog_fields_format(f, i, big, sizeof big, &need2) == TRACELOG_OK);
    FUZZ_ASSERT(need2 == need, "format length %zu then %zu", need, need2);
    FUZZ_ASSERT(memcmp(small, big, strlen(small)) == 0);
    FUZZ_ASSERT(strlen(big) == (need < sizeof big ? need : sizeof big - 1)); /* text has no NUL */
    if (fi.type == TRACELOG_FIELD_F32 || fi.type == TRACELOG_FIELD_F64)
        check_float_text(big, f->data + fi.offset, fi.size);
}

static void check_payload(const tracelog_schema *s, const uint8_t *data, size_t len)
{
    uint8_t *p = calloc(len ? len : 1, 1); /* exactly len bytes: ASan sees any read past them */
    FUZZ_CHECK_SYS(p != NULL);
    if (len)
        memcpy(p, data, len);
    tracelog_fields f;
    tracelog_status st = tracelog_fields_decode(s, p, len, &f);
    uint32_t size = tracelog_schema_size(s);
    int variable = tracelog_schema_is_variable(s);
    if (len < size)
        FUZZ_ASSERT(st == TRACELOG_E_TRUNCATED && f.size_check < 0);
    else if (len > size && !variable)
        FUZZ_ASSERT(st == TRACELOG_E_CORRUPT && f.size_check > 0);
    else
        FUZZ_ASSERT(st == TRACELOG_OK && f.size_check == 0);
    size_t n = tracelog_schema_field_count(s);
    FUZZ_ASSERT(f.present <= n && (len < size || f.present == n));
    for (size_t i = 0; i < n; i++) {
        tracelog_field_info fi;
        tracelog_schema_field(s, i, &fi);
        int fits = fi.variable ? len >= size : (uint64_t)fi.offset + fi.size <= len;
        FUZZ_ASSERT((i < f.present) == fits, "field %zu present %d, fits %d", i, i < f.present, fits);
        check_field(&f, i);
    }
    free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t text_len = nul ? (size_t)(nul - data) : size;
    const char *text = (const char *)data;

    tracelog_schema *s = NULL;
    tracelog_error err;
    memset(&err, 0, sizeof err);
    tracelog_status st = tl_schema_parse(text, text_len, &s, &err);

    /* The NUL-terminated entry point agrees. */
    char *copy = malloc(text_len + 1);
    FUZZ_CHECK_SYS(copy != NULL);
    memcpy(copy, text, text_len);
    copy[text_len] = 0;
    tracelog_schema *s2 = NULL;
    tracelog_error err2;
    FUZZ_ASSERT(tracelog_schema_parse(copy, &s2, &err2) == st);
    free(copy);

    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(st == TRACELOG_E_INVAL || st == TRACELOG_E_LIMIT, "parse: %s",
                    tracelog_status_name(st));
        FUZZ_ASSERT(s == NULL && s2 == NULL);
        FUZZ_ASSERT(err.code == st && err.offset <= text_len && err2.offset == err.offset);
        FUZZ_ASSERT(memchr(err.message, 0, sizeof err.message) != NULL);
        FUZZ_ASSERT(strncmp(err.message, "schema byte ", 12) == 0, "message \"%s\"", err.message);
        return 0;
    }
    FUZZ_ASSERT(s != NULL && s2 != NULL);
    FUZZ_DEEP();
    FUZZ_ASSERT(strcmp(tracelog_schema_text(s), tracelog_schema_text(s2)) == 0);
    tracelog_schema_free(s2);
    check_layout(s);

    const char *canonical = tracelog_schema_text(s);
    FUZZ_ASSERT(strlen(canonical) == tl_schema_text_len(s));
    FUZZ_ASSERT(tl_schema_text_len(s) <= TRACELOG_SCHEMA_TEXT_MAX);
    tracelog_schema *again = NULL;
    st = tracelog_schema_parse(canonical, &again, &err);
    FUZZ_ASSERT(st == TRACELOG_OK, "canonical form does not parse: %s (\"%s\")", err.message, canonical);
    FUZZ_ASSERT(strcmp(tracelog_schema_text(again), canonical) == 0, "canonical form not a fixed point");
    check_same_layout(s, again);
    tracelog_schema_free(again);

    /* The payload, then prefixes and an exact-size slice of it. */
    const uint8_t *payload = nul ? nul + 1 : data + size;
    size_t payload_len = nul ? size - text_len - 1 : 0;
    check_payload(s, payload, payload_len);
    check_payload(s, payload, payload_len / 2);
    uint32_t want = tracelog_schema_size(s);
    if (payload_len >= want && want != payload_len)
        check_payload(s, payload, want);
    tracelog_schema_free(s);
    return 0;
}
