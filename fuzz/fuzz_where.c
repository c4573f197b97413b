/*
 * fuzz_where: ptlog's --where expressions (tools/ptlog/where.c). An
 * expression is a command-line argument: untrusted input, parsed by a
 * recursive-descent parser and evaluated on every event of a log. The
 * input's first byte picks one of two modes.
 *
 * As typed (even): the input's bytes after the first, up to a NUL, are the
 * expression. ptlog_where_parse succeeds, or returns PTLOG_EXIT_USAGE after
 * one message; a parsed expression matches events of the test schema and
 * untyped ones (payloads from the rest of the input, cut at every length
 * the input picks) with 0 or 1, and its clone (what each formatter thread
 * uses) gives the same verdicts.
 *
 * Built (odd): the input's choices (taken from its end) build an expression
 * of comparisons on the test schema's fields: integers at each type's edges
 * and anywhere, in decimal and hex, signed; floats in exponent form; quoted
 * strings with escapes; enum and flags names, true and false; !, &&, ||
 * and parentheses. It is rendered as text, must parse, and
 * ptlog_where_match must agree on each event with the reference evaluation
 * of this file, which decodes each field with the public tracelog_fields
 * API, compares integers exactly (__int128) and follows README.md's "Field
 * conditions": a comparison with a field the payload does not hold, or with
 * a value of another kind than the field's, is unknown; ! of unknown is
 * unknown; && and || decide as soon as one side does; only true keeps the
 * event. where.c reads numbers straight from the payload's bytes and turns
 * an integer comparison into one range check (int_range), which the
 * reference does not. Half the values are the field's own value in the
 * payload or one next to it, so that the edges of every comparison are met
 * (made `<` true at equality in int_range, the fuzzer fails within seconds).
 *
 * FUZZ_WHERE_VERBOSE=1 shows ptlog's messages; FUZZ_WHERE_SHOW=1 prints each
 * built expression with the payload's length and the reference's verdict.
 */
#define _GNU_SOURCE
#include <math.h>

#include "fuzz_helpers.h"
#include "ptlog.h"

#define TYPED_ID 40
#define UNTYPED_ID 41

/* Every kind of field: integers of each size and sign, floats, text, the named kinds, raw bytes, a variable tail. */
static const char SCHEMA[] = "u8 a; i8 b; u16 c; i16 d; u32 e; i32 f; u64 g; i64 h; f32 x; f64 y; char[6] s; bool t; "
                             "enum8 k {IDLE=0, BUSY=1, GONE=200}; flags8 fl {R=0x1, W=0x2}; ptr p; bytes[4] raw; "
                             "char[] tail";

static tracelog_schema *schema;
static size_t nfields;
static tracelog_field_info info[32];
static const char *field_name[32];

static const tracelog_schema *ts_type_schema(ptlog_src *s, uint32_t id)
{
    (void)s;
    return id == TYPED_ID ? schema : NULL;
}

static const char *ts_type_name(ptlog_src *s, uint32_t id)
{
    (void)s;
    return id == TYPED_ID ? "net.rx" : id == UNTYPED_ID ? "tick" : NULL;
}

static size_t ts_type_count(ptlog_src *s)
{
    (void)s;
    return 2;
}

static void ts_type_at(ptlog_src *s, size_t i, uint32_t *id, const char **name)
{
    *id = i == 0 ? TYPED_ID : UNTYPED_ID;
    *name = ts_type_name(s, *id);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    tracelog_error err;
    if (tracelog_schema_parse(SCHEMA, &schema, &err) != TRACELOG_OK) {
        fprintf(stderr, "fuzz_where: the test schema does not parse: %s\n", err.message);
        abort();
    }
    nfields = tracelog_schema_field_count(schema);
    FUZZ_CHECK_SYS(nfields <= sizeof info / sizeof info[0]);
    for (size_t i = 0; i < nfields; i++) {
        FUZZ_CHECK_SYS(tracelog_schema_field(schema, i, &info[i]) == TRACELOG_OK);
        field_name[i] = info[i].name;
    }
    ptlog_msg_silence(getenv("FUZZ_WHERE_VERBOSE") == NULL);
    return 0;
}

/* ---- the built expression and its reference evaluation ---------------------------------- */

enum { UNKNOWN = -1, FALSE = 0, TRUE = 1 };
enum { E_CMP, E_NOT, E_AND, E_OR };
enum { V_INT, V_FLOAT, V_TEXT }; /* V_TEXT: a "string", or a bare name but true and false */
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
static const char *const OP_TEXT[] = {"==", "!=", "<", "<=", ">", ">="};

#define NODES_MAX 64
#define TEXT_MAX 8192

typedef struct expr {
    int kind, a, b;
    size_t field; /* E_CMP: an index into the schema, or nfields for a name it does not have */
    int op, vkind;
    int neg;        /* V_INT: the value, sign and magnitude */
    uint64_t mag;
    double num;     /* V_FLOAT (V_INT: as the parser's strtod reads it) */
    char text[24];  /* V_TEXT: the value's bytes; a bare name's text */
    size_t text_len;
    int bare;       /* written as a bare name (true and false too) */
} expr;

typedef struct built {
    expr e[NODES_MAX];
    int n;
    char text[TEXT_MAX];
    size_t len;
} built;

static void put(built *b, const char *s)
{
    size_t n = strlen(s);
    FUZZ_CHECK_SYS(b->len + n < TEXT_MAX);
    memcpy(b->text + b->len, s, n + 1);
    b->len += n;
}

static uint64_t edge_value(fuzz_fdp *f)
{
    static const uint64_t edges[] = {0,          1,          0x7f,       0x80,       0xff,       0x100,
                                     0x7fff,     0x8000,     0xffff,     0x10000,    0x7fffffff, 0x80000000u,
                                     0xffffffffu, 0x100000000ull, INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX};
    uint64_t pick = fuzz_fdp_range(f, 0, sizeof edges / sizeof edges[0] + 1);
    if (pick < sizeof edges / sizeof edges[0])
        return edges[pick] + fuzz_fdp_range(f, 0, 2) - 1; /* the edge, or one off it (wrapping is fine) */
    return fuzz_fdp_u64(f);
}

/* The payload the events carry (zeros past the input's bytes): built expressions compare fields with values near their own. */
static uint8_t payload[512];

/* A value at or next to x's field's own value in the payload, in the field's kind; 0 when the field has none. */
static int near_value(fuzz_fdp *f, expr *x)
{
    if (x->field >= nfields || info[x->field].variable)
        return 0;
    const tracelog_field_info *fi = &info[x->field];
    const uint8_t *p = payload + fi->offset;
    int step = (int)fuzz_fdp_range(f, 0, 2) - 1; /* -1, 0, +1 */
    if (fi->type == TRACELOG_FIELD_F32 || fi->type == TRACELOG_FIELD_F64) {
        double d;
        if (fi->size == 4) {
            float v;
            memcpy(&v, p, 4);
            d = v;
        } else {
            memcpy(&d, p, 8);
        }
        if (!isfinite(d) || fpclassify(d) == FP_SUBNORMAL)
            return 0;
        x->vkind = V_FLOAT;
        x->num = step ? nextafter(d, step * INFINITY) : d;
        if (!isfinite(x->num) || fpclassify(x->num) == FP_SUBNORMAL)
            x->num = d;
        return 1;
    }
    if (fi->type == TRACELOG_FIELD_CHAR) {
        size_t n = strnlen((const char *)p, fi->size < sizeof x->text ? fi->size : sizeof x->text - 1);
        x->vkind = V_TEXT;
        memcpy(x->text, p, n);
        x->text_len = n;
        if (n && step) /* one byte more or less at the end */
            x->text[n - 1] = (char)(x->text[n - 1] + step);
        for (size_t i = 0; i < n; i++) /* the characters a quoted string can hold */
            if ((unsigned char)x->text[i] < 32 && x->text[i] != '\n' && x->text[i] != '\t')
                x->text[i] = '?';
        return 1;
    }
    if (fi->type == TRACELOG_FIELD_BYTES || fi->type == TRACELOG_FIELD_EVENTSET || fi->size > 8)
        return 0;
    uint64_t u = 0;
    for (uint32_t i = 0; i < fi->size; i++)
        u |= (uint64_t)p[i] << 8 * i;
    __int128 v = u;
    if (fi->type >= TRACELOG_FIELD_I8 && fi->type <= TRACELOG_FIELD_I64 && fi->size < 8 && (u >> (8 * fi->size - 1) & 1))
        v = (__int128)u - ((__int128)1 << (8 * fi->size));
    else if (fi->type >= TRACELOG_FIELD_I8 && fi->type <= TRACELOG_FIELD_I64 && fi->size == 8)
        v = (int64_t)u;
    v += step;
    if (v < -(__int128)UINT64_MAX || v > (__int128)UINT64_MAX)
        v -= step;
    x->vkind = V_INT;
    x->neg = v < 0;
    x->mag = (uint64_t)(v < 0 ? -v : v);
    x->num = x->neg ? -(double)x->mag : (double)x->mag;
    return 1;
}

/* A value for x's field, of a kind chosen from the input: the field's own value or one next to it, an edge, any. */
static void make_value(fuzz_fdp *f, expr *x)
{
    static const char *const names[] = {"IDLE", "BUSY", "GONE", "R", "W", "true", "false", "nope", "R_W"};
    if (fuzz_fdp_range(f, 0, 2) == 0 && near_value(f, x))
        return;
    switch (fuzz_fdp_range(f, 0, 3)) {
    case 0: /* an integer */
        x->vkind = V_INT;
        x->neg = fuzz_fdp_bool(f);
        x->mag = edge_value(f);
        x->neg = x->neg && x->mag != 0;
        x->num = x->neg ? -(double)x->mag : (double)x->mag;
        break;
    case 1: { /* a float, in exponent form (an integer-looking text would be read as an integer) */
        uint64_t bits = fuzz_fdp_u64(f);
        double d;
        memcpy(&d, &bits, sizeof d);
        if (!isfinite(d) || fpclassify(d) == FP_SUBNORMAL) /* strtod: ERANGE on subnormals */
            d = (double)(int64_t)bits / 1024.0;
        x->vkind = V_FLOAT;
        x->num = d;
        break;
    }
    case 2: { /* a quoted string */
        const uint8_t *p;
        size_t n = fuzz_fdp_bytes(f, fuzz_fdp_range(f, 0, 8), &p);
        x->vkind = V_TEXT;
        x->text_len = 0;
        for (size_t i = 0; i < n; i++) {
            char c = (char)(p[i] % 96 + 32); /* printable, or \n and \t through escapes below */
            x->text[x->text_len++] = c == 127 ? '\n' : c;
        }
        break;
    }
    default: { /* a bare name: true and false are the numbers 1 and 0 */
        const char *nm = names[fuzz_fdp_range(f, 0, sizeof names / sizeof names[0] - 1)];
        x->bare = 1;
        x->text_len = strlen(nm);
        memcpy(x->text, nm, x->text_len + 1);
        x->vkind = V_TEXT;
        if (strcmp(nm, "true") == 0 || strcmp(nm, "false") == 0) {
            x->vkind = V_INT;
            x->mag = nm[0] == 't';
            x->num = (double)x->mag;
        }
        break;
    }
    }
}

static void render_value(built *b, fuzz_fdp *f, const expr *x)
{
    char buf[96];
    if (x->bare) {
        put(b, x->text);
        return;
    }
    if (x->vkind == V_INT) {
        if (fuzz_fdp_bool(f))
            snprintf(buf, sizeof buf, "%s0x%llx", x->neg ? "-" : "", (unsigned long long)x->mag);
        else
            snprintf(buf, sizeof buf, "%s%llu", x->neg ? "-" : "", (unsigned long long)x->mag);
        put(b, buf);
        return;
    }
    if (x->vkind == V_FLOAT) {
        snprintf(buf, sizeof buf, "%.17e", x->num);
        put(b, buf);
        return;
    }
    put(b, "\"");
    for (size_t i = 0; i < x->text_len; i++) {
        char c = x->text[i];
        char one[3] = {c, 0, 0};
        put(b, c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : c == '\t' ? "\\t" : one);
    }
    put(b, "\"");
}

/* Builds node trees depth first; returns the root's index, rendering as it goes. */
static int build(built *b, fuzz_fdp *f, int depth)
{
    FUZZ_CHECK_SYS(b->n < NODES_MAX);
    int id = b->n++;
    expr *x = &b->e[id];
    memset(x, 0, sizeof *x);
    int kind = depth >= 5 || b->n > NODES_MAX - 3 ? E_CMP : (int)fuzz_fdp_range(f, 0, 5);
    int paren = fuzz_fdp_range(f, 0, 3) == 0;
    if (paren)
        put(b, "(");
    if (kind == E_NOT) {
        x->kind = E_NOT;
        put(b, "!");
        put(b, fuzz_fdp_bool(f) ? " " : "");
        int a = build(b, f, depth + 1);
        b->e[id].a = a;
    } else if (kind == E_AND || kind == E_OR) {
        x->kind = kind;
        put(b, "(");
        int a = build(b, f, depth + 1);
        put(b, kind == E_AND ? " && " : "||");
        int c = build(b, f, depth + 1);
        put(b, ")");
        b->e[id].a = a;
        b->e[id].b = c;
    } else {
        x->kind = E_CMP;
        x->field = (size_t)fuzz_fdp_range(f, 0, nfields);
        x->op = (int)fuzz_fdp_range(f, 0, 5);
        make_value(f, x);
        put(b, x->field < nfields ? field_name[x->field] : "nosuch");
        put(b, fuzz_fdp_bool(f) ? " " : "");
        put(b, OP_TEXT[x->op]);
        put(b, fuzz_fdp_bool(f) ? " " : "");
        render_value(b, f, x);
    }
    if (paren)
        put(b, ")");
    return id;
}

/* The reference's own comparisons, written again on purpose: an oracle sharing where.c's code would share its bugs. */
static int order(int c, int op)
{
    switch (op) {
    case OP_EQ: return c == 0;
    case OP_NE: return c != 0;
    case OP_LT: return c < 0;
    case OP_LE: return c <= 0;
    case OP_GT: return c > 0;
    default: return c >= 0;
    }
}

static int cmp_text(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    return c ? (c < 0 ? -1 : 1) : an < bn ? -1 : an > bn;
}

static int cmp_double(double a, double b) { return a < b ? -1 : a > b; }

/* The reference verdict of comparison x on fields fl (NULL: an untyped event). */
static int ref_compare(const expr *x, const tracelog_fields *fl)
{
    if (!fl || x->field >= nfields || x->field >= fl->present)
        return UNKNOWN;
    size_t i = x->field;
    size_t tlen = x->text_len;
    switch (info[i].type) {
    case TRACELOG_FIELD_BYTES:
    case TRACELOG_FIELD_EVENTSET:
        return UNKNOWN;
    case TRACELOG_FIELD_CHAR: {
        const char *t;
        size_t n;
        if (x->vkind != V_TEXT)
            return UNKNOWN;
        FUZZ_ASSERT(tracelog_fields_string(fl, i, &t, &n) == TRACELOG_OK);
        return order(cmp_text(t, n, x->text, tlen), x->op);
    }
    case TRACELOG_FIELD_F32:
    case TRACELOG_FIELD_F64: {
        double d;
        if (x->vkind == V_TEXT)
            return UNKNOWN;
        FUZZ_ASSERT(tracelog_fields_double(fl, i, &d) == TRACELOG_OK);
        return isnan(d) ? UNKNOWN : order(cmp_double(d, x->num), x->op);
    }
    default:
        break;
    }
    if (x->vkind == V_TEXT) { /* an integer, bool, enum, flags or address field as dump shows it */
        char text[256];
        size_t n;
        if (tracelog_fields_format(fl, i, text, sizeof text, &n) != TRACELOG_OK || n >= sizeof text)
            return UNKNOWN;
        return order(cmp_text(text, n, x->text, tlen), x->op);
    }
    __int128 v;
    int is_signed = info[i].type >= TRACELOG_FIELD_I8 && info[i].type <= TRACELOG_FIELD_I64;
    if (is_signed) {
        int64_t s;
        FUZZ_ASSERT(tracelog_fields_int(fl, i, &s) == TRACELOG_OK);
        v = s;
    } else {
        uint64_t u;
        FUZZ_ASSERT(tracelog_fields_uint(fl, i, &u) == TRACELOG_OK, "field %s", field_name[i]);
        v = u;
    }
    if (x->vkind == V_FLOAT) { /* the field's value as a double against the number */
        double d = v < 0 ? -(double)(uint64_t)-v : (double)(uint64_t)v;
        return order(cmp_double(d, x->num), x->op);
    }
    __int128 c = x->neg ? -(__int128)x->mag : (__int128)x->mag;
    return order(v < c ? -1 : v > c, x->op);
}

static int ref_eval(const built *b, int id, const tracelog_fields *fl)
{
    const expr *x = &b->e[id];
    int l, r;
    switch (x->kind) {
    case E_NOT:
        l = ref_eval(b, x->a, fl);
        return l == UNKNOWN ? UNKNOWN : !l;
    case E_AND:
        l = ref_eval(b, x->a, fl);
        r = ref_eval(b, x->b, fl);
        return l == FALSE || r == FALSE ? FALSE : l == UNKNOWN || r == UNKNOWN ? UNKNOWN : TRUE;
    case E_OR:
        l = ref_eval(b, x->a, fl);
        r = ref_eval(b, x->b, fl);
        return l == TRUE || r == TRUE ? TRUE : l == UNKNOWN || r == UNKNOWN ? UNKNOWN : FALSE;
    default:
        return ref_compare(x, fl);
    }
}

/* ---- both modes ----------------------------------------------------------------------- */

/* The source a log of the test schema's type and an untyped one would be, as where.c sees it. */
static void init_src(ptlog_src *s)
{
    memset(s, 0, sizeof *s);
    s->name = "fuzz";
    s->type_name = ts_type_name;
    s->type_schema = ts_type_schema;
    s->type_count = ts_type_count;
    s->type_at = ts_type_at;
}

/* An event of type id whose payload is the first len bytes of `payload`. */
static tracelog_event event_of(uint32_t id, size_t len)
{
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.event_id = id;
    ev.payload = payload;
    ev.payload_len = (uint32_t)len;
    return ev;
}

/* The payloads the input gives: its bytes (then zeros) at lengths it picks, the schema's size first. */
static size_t payload_len_of(fuzz_fdp *f, size_t round)
{
    size_t full = tracelog_schema_size(schema);
    return round == 0 ? full + 8 : (size_t)fuzz_fdp_range(f, 0, full + 8);
}

static void as_typed(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t tlen = nul ? (size_t)(nul - data) : size;
    char *text = malloc(tlen + 1);
    FUZZ_CHECK_SYS(text != NULL);
    memcpy(text, data, tlen);
    text[tlen] = 0;
    unsigned long mark = ptlog_msg_count();
    ptlog_where *w = NULL;
    int rc = ptlog_where_parse(text, &w);
    free(text);
    if (rc != 0) {
        FUZZ_ASSERT(rc == PTLOG_EXIT_USAGE && w == NULL, "parse: %d", rc);
        FUZZ_ASSERT(ptlog_msg_count() == mark + 1, "%lu messages", ptlog_msg_count() - mark);
        return;
    }
    FUZZ_DEEP();
    ptlog_where *c = ptlog_where_clone(w);
    FUZZ_ASSERT(c != NULL);
    ptlog_src src;
    init_src(&src);
    const uint8_t *rest = nul ? nul + 1 : data + size;
    size_t rest_len = (size_t)(data + size - rest);
    memset(payload, 0, sizeof payload);
    memcpy(payload, rest, rest_len < sizeof payload ? rest_len : sizeof payload);
    fuzz_fdp f;
    fuzz_fdp_init(&f, rest, rest_len);
    for (size_t round = 0; round < 6; round++) {
        tracelog_event ev = event_of(round % 3 == 2 ? UNTYPED_ID : TYPED_ID, payload_len_of(&f, round));
        int m = ptlog_where_match(w, &src, &ev);
        FUZZ_ASSERT(m == 0 || m == 1, "match: %d", m);
        FUZZ_ASSERT(ptlog_where_match(c, &src, &ev) == m, "the clone disagrees");
    }
    (void)ptlog_where_check(w, &src); /* the log's schemas against the names: any answer, no crash */
    ptlog_where_free(c);
    ptlog_where_free(w);
}

static void as_built(const uint8_t *data, size_t size)
{
    fuzz_fdp f;
    fuzz_fdp_init(&f, data, size);
    size_t full = tracelog_schema_size(schema);
    const uint8_t *p;
    size_t n = fuzz_fdp_bytes(&f, full + 8, &p);
    memset(payload, 0, sizeof payload);
    memcpy(payload, p, n);
    static built b;
    b.n = 0;
    b.len = 0;
    b.text[0] = 0;
    int root = build(&b, &f, 0);
    ptlog_where *w = NULL;
    int rc = ptlog_where_parse(b.text, &w);
    FUZZ_ASSERT(rc == 0, "a built expression does not parse: %s", b.text);
    FUZZ_DEEP();
    ptlog_src src;
    init_src(&src);
    size_t lens[4] = {full + 8, full, (size_t)fuzz_fdp_range(&f, 0, full + 8), full};
    for (size_t round = 0; round < 4; round++) {
        size_t len = lens[round];
        uint32_t id = round == 3 ? UNTYPED_ID : TYPED_ID;
        tracelog_event ev = event_of(id, len);
        tracelog_fields fl;
        const tracelog_fields *flp = NULL;
        if (id == TYPED_ID) {
            tracelog_fields_decode(schema, payload, len, &fl);
            flp = &fl;
        }
        int want = ref_eval(&b, root, flp) == TRUE;
        int got = ptlog_where_match(w, &src, &ev);
        if (getenv("FUZZ_WHERE_SHOW"))
            fprintf(stderr, "%s [%zu bytes]: %d\n", b.text, len, want);
        FUZZ_ASSERT(got == want, "%s on a %zu-byte payload: where.c says %d, the reference %d", b.text, len, got, want);
    }
    ptlog_where_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] & 1)
        as_built(data + 1, size - 1);
    else
        as_typed(data + 1, size - 1);
    return 0;
}
