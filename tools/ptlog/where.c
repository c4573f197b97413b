/*
 * --where EXPR: field conditions on typed events (README.md, "Field
 * conditions"). A small recursive-descent parser builds a tree once; each
 * comparison's field is looked up once per schema (not per event), and a
 * number compared with an integer or float field is read from the
 * payload's bytes where the schema puts it (the event's fields are decoded
 * only for text comparisons); an event is kept when the expression is true.
 *
 *   expr    := and ( "||" and )*
 *   and     := unary ( "&&" unary )*
 *   unary   := "!" unary | "(" expr ")" | compare
 *   compare := FIELD OP value          OP: == != < <= > >=
 *   value   := number | "string" | NAME
 *
 * Logic has three values, as SQL's: a comparison of a field the event does
 * not have (untyped event, no such field, field cut off, or a value of the
 * wrong kind) is unknown; ! of unknown is unknown; && and || are false and
 * true as soon as one side decides. Only a true expression keeps the event.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "ptlog.h"

#define WHERE_DEPTH_MAX 64  /* nesting of ! and parentheses */
#define WHERE_NODES_MAX 4096

enum { N_OR, N_AND, N_NOT, N_CMP };
enum { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
enum { V_NUMBER, V_STRING };
enum { UNKNOWN = -1, FALSE = 0, TRUE = 1 };

typedef struct node {
    int kind;
    int a, b;       /* children (N_OR, N_AND: both; N_NOT: a) */
    /* N_CMP */
    int op, vkind;
    int leaf;       /* index among comparisons */
    char *field;
    char *text;     /* V_STRING (also the text of a NAME) */
    size_t text_len;
    int bare;       /* the value was a NAME, not a "string" */
    double num;     /* V_NUMBER */
    int is_int;     /* the number is an integer: neg + mag exactly */
    int neg;
    uint64_t mag;
    int bound;      /* some event's schema had the field, */
    int fits;       /* and the value was one of its (ptlog_where_check: no typo, whatever the table holds now) */
} node;

/*
 * A comparison's field in one schema. A number compared with an integer or
 * float field is read straight from the payload bytes (fast): no decoding
 * of the event's fields, no lookup of the field per event.
 */
enum { SLOW, FAST_UNSIGNED, FAST_SIGNED, FAST_FLOAT };
typedef struct bound_leaf {
    size_t field;     /* index, or TRACELOG_SCHEMA_NO_FIELD */
    int fast;         /* SLOW: through tracelog_fields */
    uint32_t offset, size;
    /* An integer field against an integer: true when the field's key (its
       value, signed ones biased by 2^63 so that order is kept) is within
       lo .. lo + span, or outside it when `outside` (made by int_range). */
    int ranged, outside;
    uint64_t lo, span;
} bound_leaf;

/* Each comparison's field for one schema. */
typedef struct binding {
    const tracelog_schema *schema;
    bound_leaf *leaf; /* per leaf */
} binding;

struct ptlog_where {
    char *text; /* as given: a copy is parsed again (ptlog_where_clone) */
    node *nodes;
    size_t n, cap;
    int root;
    int leaves;
    ptlog_by_schema index; /* schema -> its binding in bindings */
    binding *bindings;
    /* The last schema for which the whole expression is one ranged comparison, and its leaf (in its
       binding's leaf array, which stays where it is): most events need nothing else. */
    const tracelog_schema *ranged_schema;
    const bound_leaf *ranged_leaf;
};

typedef struct parser {
    const char *text, *p;
    ptlog_where *w;
    int depth;
    const char *err;
    size_t err_col;
} parser;

static int fail(parser *ps, const char *at, const char *msg)
{
    if (!ps->err) {
        ps->err = msg;
        ps->err_col = (size_t)(at - ps->text) + 1;
    }
    return -1;
}

static void skip_blanks(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n')
        ps->p++;
}

static int is_name_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static int new_node(parser *ps, int kind)
{
    ptlog_where *w = ps->w;
    if (w->n == WHERE_NODES_MAX)
        return fail(ps, ps->p, "expression too long");
    node *v = tl_grow(w->nodes, &w->cap, w->n + 1, sizeof *v);
    if (!v)
        return fail(ps, ps->p, "out of memory");
    w->nodes = v;
    memset(&w->nodes[w->n], 0, sizeof *w->nodes);
    w->nodes[w->n].kind = kind;
    return (int)w->n++;
}

static char *copy_name(parser *ps, size_t *len)
{
    const char *start = ps->p;
    while (is_name_char(*ps->p))
        ps->p++;
    *len = (size_t)(ps->p - start);
    char *s = malloc(*len + 1);
    if (!s)
        return NULL;
    memcpy(s, start, *len);
    s[*len] = 0;
    return s;
}

static int parse_op(parser *ps, int *op)
{
    static const struct {
        const char *text;
        int op;
    } ops[] = {{"==", OP_EQ}, {"!=", OP_NE}, {"<=", OP_LE}, {">=", OP_GE}, {"<", OP_LT}, {">", OP_GT}};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        size_t n = strlen(ops[i].text);
        if (strncmp(ps->p, ops[i].text, n) == 0) {
            ps->p += n;
            *op = ops[i].op;
            return 0;
        }
    }
    return fail(ps, ps->p, "expected a comparison (== != < <= > >=)");
}

/* "text" with the escapes \" \\ \n \t; the quote at ps->p. */
static int parse_string(parser *ps, node *nd)
{
    const char *start = ps->p++;
    char *out = malloc(strlen(ps->p) + 1);
    size_t n = 0;
    if (!out)
        return fail(ps, start, "out of memory");
    for (;;) {
        char c = *ps->p;
        if (c == 0) {
            free(out);
            return fail(ps, start, "unterminated string");
        }
        ps->p++;
        if (c == '"')
            break;
        if (c == '\\') {
            char e = *ps->p++;
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
            if (e != '"' && e != '\\' && e != 'n' && e != 't') {
                free(out);
                return fail(ps, ps->p - 2, "unknown escape in string (use \\\" \\\\ \\n \\t)");
            }
        }
        out[n++] = c;
    }
    out[n] = 0; /* a C string up to its first NUL too (the messages, the value checks) */
    nd->vkind = V_STRING;
    nd->text = out;
    nd->text_len = n;
    return 0;
}

static int parse_number(parser *ps, node *nd)
{
    const char *start = ps->p;
    char *end;
    errno = 0;
    double d = strtod(start, &end);
    if (end == start || errno == ERANGE || isnan(d) || is_name_char(*end))
        return fail(ps, start, "expected a number, a \"string\" or a name");
    nd->vkind = V_NUMBER;
    nd->num = d;
    const char *digits = start + (*start == '-' || *start == '+');
    int base = digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X') ? 16 : 10;
    char *iend;
    errno = 0;
    unsigned long long mag = strtoull(digits, &iend, base);
    if (iend == end && errno == 0 && (*digits >= '0' && *digits <= '9')) {
        nd->is_int = 1;
        nd->neg = *start == '-' && mag != 0;
        nd->mag = mag;
    }
    ps->p = end;
    return 0;
}

static int parse_compare(parser *ps)
{
    skip_blanks(ps);
    if (!is_name_start(*ps->p))
        return fail(ps, ps->p, *ps->p ? "expected a field name, '!' or '('" : "unexpected end, expected a field name");
    int id = new_node(ps, N_CMP);
    if (id < 0)
        return -1;
    node *nd = &ps->w->nodes[id];
    size_t len;
    if (!(nd->field = copy_name(ps, &len)))
        return fail(ps, ps->p, "out of memory");
    nd->leaf = ps->w->leaves++;
    skip_blanks(ps);
    if (parse_op(ps, &nd->op))
        return -1;
    skip_blanks(ps);
    if (*ps->p == '"') {
        if (parse_string(ps, nd))
            return -1;
    } else if (is_name_start(*ps->p)) { /* an enum or flags name, or true/false */
        if (!(nd->text = copy_name(ps, &nd->text_len)))
            return fail(ps, ps->p, "out of memory");
        nd->vkind = V_STRING;
        nd->bare = 1;
        if (strcmp(nd->text, "true") == 0 || strcmp(nd->text, "false") == 0) {
            nd->vkind = V_NUMBER;
            nd->is_int = 1;
            nd->mag = nd->text[0] == 't';
            nd->num = (double)nd->mag;
        }
    } else if (parse_number(ps, nd)) {
        return -1;
    }
    return id;
}

static int parse_or(parser *ps);

static int parse_unary(parser *ps)
{
    skip_blanks(ps);
    if (ps->depth >= WHERE_DEPTH_MAX)
        return fail(ps, ps->p, "expression nested too deeply");
    if (*ps->p == '!' && ps->p[1] != '=') {
        ps->p++;
        ps->depth++;
        int a = parse_unary(ps);
        ps->depth--;
        if (a < 0)
            return -1;
        int id = new_node(ps, N_NOT);
        if (id >= 0)
            ps->w->nodes[id].a = a;
        return id;
    }
    if (*ps->p == '(') {
        const char *open = ps->p++;
        ps->depth++;
        int a = parse_or(ps);
        ps->depth--;
        if (a < 0)
            return -1;
        skip_blanks(ps);
        if (*ps->p != ')')
            return fail(ps, *ps->p ? ps->p : open, *ps->p ? "expected ')'" : "unclosed '('");
        ps->p++;
        return a;
    }
    return parse_compare(ps);
}

static int parse_binary(parser *ps, int kind)
{
    const char *tok = kind == N_OR ? "||" : "&&";
    int a = kind == N_OR ? parse_binary(ps, N_AND) : parse_unary(ps);
    for (;;) {
        if (a < 0)
            return -1;
        skip_blanks(ps);
        if (strncmp(ps->p, tok, 2) != 0)
            return a;
        ps->p += 2;
        int b = kind == N_OR ? parse_binary(ps, N_AND) : parse_unary(ps);
        if (b < 0)
            return -1;
        int id = new_node(ps, kind);
        if (id < 0)
            return -1;
        ps->w->nodes[id].a = a;
        ps->w->nodes[id].b = b;
        a = id;
    }
}

static int parse_or(parser *ps)
{
    return parse_binary(ps, N_OR);
}

void ptlog_where_free(ptlog_where *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->n; i++) {
        free(w->nodes[i].field);
        free(w->nodes[i].text);
    }
    for (size_t i = 0; i < w->index.n; i++)
        free(w->bindings[i].leaf);
    free(w->bindings);
    ptlog_idmap_free(&w->index.map);
    free(w->nodes);
    free(w->text);
    free(w);
}

ptlog_where *ptlog_where_clone(const ptlog_where *w)
{
    ptlog_where *c = NULL;
    return ptlog_where_parse(w->text, &c) == 0 ? c : NULL; /* parsed once already: only memory can fail */
}

int ptlog_where_parse(const char *text, ptlog_where **out)
{
    ptlog_where *w = calloc(1, sizeof *w);
    if (!w)
        return ptlog_nomem();
    w->text = strdup(text);
    if (!w->text) {
        free(w);
        return ptlog_nomem();
    }
    parser ps = {.text = text, .p = text, .w = w};
    w->root = parse_or(&ps);
    if (w->root >= 0) {
        skip_blanks(&ps);
        if (*ps.p)
            fail(&ps, ps.p, *ps.p == ')' ? "unmatched ')'" : "expected '&&', '||' or the end");
    }
    if (ps.err) {
        char shown[PTLOG_TEXT_SHOW_SIZE];
        ptlog_msg(NULL, "--where: column %zu: %s (in %s)", ps.err_col, ps.err,
                  ptlog_text_show(text, shown, sizeof shown));
        ptlog_where_free(w);
        return PTLOG_EXIT_USAGE;
    }
    *out = w;
    return 0;
}

#define KEY_BIAS ((uint64_t)1 << 63)

/*
 * The keys (see bound_leaf) for which the integer comparison nd is true, as
 * one range or the outside of one: the same verdicts as cmp_exact and order
 * give, with one subtraction and one comparison per event. The constant
 * lies below every key (an unsigned field against a negative number, a
 * signed one below INT64_MIN), above every key, or at key c.
 */
static void int_range(const node *nd, int is_signed, bound_leaf *l)
{
    int below, above = 0;
    uint64_t c = 0;
    if (is_signed) {
        below = nd->neg && nd->mag > KEY_BIAS;
        above = !nd->neg && nd->mag >= KEY_BIAS;
        c = (nd->neg ? 0 - nd->mag : nd->mag) ^ KEY_BIAS;
    } else {
        below = nd->neg;
        c = nd->mag;
    }
    uint64_t lo = 0, hi = UINT64_MAX; /* true for lo..hi */
    int none = 0;                     /* true for no key */
    int op = nd->op == OP_NE ? OP_EQ : nd->op;
    switch (op) {
    case OP_EQ: lo = hi = c; none = below || above; break;
    case OP_LT: hi = c - 1; none = below || (!above && c == 0); break;
    case OP_LE: hi = c; none = below; break;
    case OP_GT: lo = c + 1; none = above || (!below && c == UINT64_MAX); break;
    default: lo = c; none = above; break; /* OP_GE */
    }
    if ((op == OP_LT || op == OP_LE) && above)
        hi = UINT64_MAX;
    if ((op == OP_GT || op == OP_GE) && below)
        lo = 0;
    if (none) { /* never true: the outside of every key */
        lo = 0;
        hi = UINT64_MAX;
    }
    l->ranged = 1;
    l->lo = lo;
    l->span = hi - lo;
    l->outside = none != (nd->op == OP_NE);
}

static int value_fits(const node *nd, const tracelog_schema *sc, size_t i);

/* How comparison nd reads field i of s. */
static bound_leaf bind_leaf(const node *nd, const tracelog_schema *s)
{
    bound_leaf l = {tracelog_schema_find(s, nd->field), SLOW, 0, 0, 0, 0, 0, 0};
    tracelog_field_info fi;
    if (l.field == TRACELOG_SCHEMA_NO_FIELD || nd->vkind != V_NUMBER || tracelog_schema_field(s, l.field, &fi))
        return l;
    l.offset = fi.offset;
    l.size = fi.size;
    switch (fi.type) {
    case TRACELOG_FIELD_CHAR: case TRACELOG_FIELD_BYTES: case TRACELOG_FIELD_EVENTSET:
        break;
    case TRACELOG_FIELD_F32: case TRACELOG_FIELD_F64:
        l.fast = FAST_FLOAT;
        break;
    case TRACELOG_FIELD_I8: case TRACELOG_FIELD_I16: case TRACELOG_FIELD_I32: case TRACELOG_FIELD_I64:
        l.fast = FAST_SIGNED;
        break;
    default: /* unsigned, bool, ptr, enum and flags values as numbers */
        l.fast = FAST_UNSIGNED;
        break;
    }
    if (fi.variable || (fi.size != 1 && fi.size != 2 && fi.size != 4 && fi.size != 8))
        l.fast = SLOW;
    if (nd->is_int && (l.fast == FAST_UNSIGNED || l.fast == FAST_SIGNED))
        int_range(nd, l.fast == FAST_SIGNED, &l);
    return l;
}

/* The binding of every comparison for schema s, made once per schema. */
static const binding *bind(ptlog_where *w, const tracelog_schema *s)
{
    size_t i = ptlog_by_schema_find(&w->index, s);
    if (i != SIZE_MAX)
        return &w->bindings[i];
    binding *v = realloc(w->bindings, (w->index.n + 1) * sizeof *v);
    if (!v)
        return NULL;
    w->bindings = v;
    binding *b = &v[w->index.n];
    b->schema = s;
    b->leaf = malloc((size_t)(w->leaves ? w->leaves : 1) * sizeof *b->leaf);
    if (!b->leaf)
        return NULL;
    for (size_t k = 0; k < w->n; k++)
        if (w->nodes[k].kind == N_CMP) {
            node *nd = &w->nodes[k];
            size_t field = (b->leaf[nd->leaf] = bind_leaf(nd, s)).field;
            if (field != TRACELOG_SCHEMA_NO_FIELD) {
                nd->bound = 1;
                nd->fits |= nd->vkind != V_STRING || value_fits(nd, s, field);
            }
        }
    if ((i = ptlog_by_schema_add(&w->index, s)) == SIZE_MAX) {
        free(b->leaf);
        return NULL;
    }
    return &w->bindings[i];
}

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

/* -1, 0, 1: a (sign neg, magnitude mag) against b. */
static int cmp_exact(int aneg, uint64_t amag, int bneg, uint64_t bmag)
{
    if (aneg != bneg)
        return aneg ? -1 : 1;
    int c = amag < bmag ? -1 : amag > bmag;
    return aneg ? -c : c;
}

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
    int c = memcmp(a, b, an < bn ? an : bn);
    if (c)
        return c < 0 ? -1 : 1;
    return an < bn ? -1 : an > bn;
}

static int compare_double(const node *nd, double d)
{
    return isnan(d) ? UNKNOWN : order(d < nd->num ? -1 : d > nd->num, nd->op);
}

/* The integer (sign neg, magnitude mag) against nd's number. */
static int compare_integer(const node *nd, int neg, uint64_t mag)
{
    if (nd->is_int)
        return order(cmp_exact(neg, mag, nd->neg, nd->mag), nd->op);
    double d = neg ? -(double)mag : (double)mag;
    return order(d < nd->num ? -1 : d > nd->num, nd->op);
}

/* A ranged leaf (an integer field against an integer) on the field's bytes at p: TRUE or FALSE. */
static inline int eval_ranged(const bound_leaf *l, const uint8_t *p)
{
    uint64_t u = ptlog_load_le(p, l->size);
    if (l->fast == FAST_SIGNED)
        u = ptlog_sign_extend(u, l->size) ^ KEY_BIAS;
    return (u - l->lo <= l->span) != l->outside;
}

/* The verdict of a ranged leaf that is the whole expression, on ev's payload: absent fields are not true. */
static inline int match_ranged(const bound_leaf *l, const tracelog_event *ev)
{
    return (uint64_t)l->offset + l->size <= ev->payload_len && eval_ranged(l, (const uint8_t *)ev->payload + l->offset);
}

/* A fast leaf, on the payload bytes: the field's value is p[0 .. l->size). */
static int eval_fast(const node *nd, const bound_leaf *l, const uint8_t *p)
{
    if (l->ranged)
        return eval_ranged(l, p);
    if (l->fast == FAST_FLOAT)
        return compare_double(nd, ptlog_load_float(p, l->size));
    uint64_t u = ptlog_load_le(p, l->size);
    if (l->fast == FAST_SIGNED)
        u = ptlog_sign_extend(u, l->size);
    int neg = l->fast == FAST_SIGNED && (int64_t)u < 0;
    return compare_integer(nd, neg, neg ? 0 - u : u);
}

static int eval_compare(const node *nd, const tracelog_fields *f, size_t i)
{
    tracelog_field_info info;
    tracelog_schema_field(f->schema, i, &info);
    switch (info.type) {
    case TRACELOG_FIELD_CHAR: {
        const char *t;
        size_t n;
        if (nd->vkind != V_STRING || tracelog_fields_string(f, i, &t, &n))
            return UNKNOWN;
        return order(cmp_bytes(t, n, nd->text, nd->text_len), nd->op);
    }
    case TRACELOG_FIELD_BYTES:
    case TRACELOG_FIELD_EVENTSET:
        return UNKNOWN;
    case TRACELOG_FIELD_F32:
    case TRACELOG_FIELD_F64: {
        double d;
        if (nd->vkind != V_NUMBER || tracelog_fields_double(f, i, &d))
            return UNKNOWN;
        return compare_double(nd, d);
    }
    default:
        break;
    }
    if (nd->vkind == V_STRING) { /* enum / flags names, as dump shows them */
        char text[256];
        size_t n;
        if (tracelog_fields_format(f, i, text, sizeof text, &n) || n >= sizeof text)
            return UNKNOWN;
        return order(cmp_bytes(text, n, nd->text, nd->text_len), nd->op);
    }
    int is_signed = info.type >= TRACELOG_FIELD_I8 && info.type <= TRACELOG_FIELD_I64;
    int neg = 0;
    uint64_t mag;
    if (is_signed) {
        int64_t v;
        tracelog_fields_int(f, i, &v);
        neg = v < 0;
        mag = neg ? 0 - (uint64_t)v : (uint64_t)v;
    } else {
        tracelog_fields_uint(f, i, &mag);
    }
    return compare_integer(nd, neg, mag);
}

/* One event being matched: its fields decoded only when a comparison needs them. */
typedef struct match {
    const tracelog_event *ev;
    const binding *b; /* NULL: an untyped event */
    tracelog_fields f;
    int decoded;
} match;

static int eval_leaf(const node *nd, match *m)
{
    if (!m->b)
        return UNKNOWN;
    const bound_leaf *l = &m->b->leaf[nd->leaf];
    if (l->field == TRACELOG_SCHEMA_NO_FIELD)
        return UNKNOWN;
    if (l->fast) /* present when the payload holds it (fields are in offset order) */
        return (uint64_t)l->offset + l->size > m->ev->payload_len
                   ? UNKNOWN
                   : eval_fast(nd, l, (const uint8_t *)m->ev->payload + l->offset);
    if (!m->decoded) {
        tracelog_fields_decode(m->b->schema, m->ev->payload, m->ev->payload_len, &m->f);
        m->decoded = 1;
    }
    return l->field < m->f.present ? eval_compare(nd, &m->f, l->field) : UNKNOWN;
}

static int eval_tree(const ptlog_where *w, const node *nd, match *m);

/* A comparison at once, without the calls of the tree's walk (most expressions are one or two). */
static inline int eval(const ptlog_where *w, int id, match *m)
{
    const node *nd = &w->nodes[id];
    return nd->kind == N_CMP ? eval_leaf(nd, m) : eval_tree(w, nd, m);
}

static int eval_tree(const ptlog_where *w, const node *nd, match *m)
{
    int x, y;
    switch (nd->kind) {
    case N_NOT:
        x = eval(w, nd->a, m);
        return x == UNKNOWN ? UNKNOWN : !x;
    case N_AND:
        x = eval(w, nd->a, m);
        if (x == FALSE)
            return FALSE;
        y = eval(w, nd->b, m);
        return y == FALSE ? FALSE : x == UNKNOWN || y == UNKNOWN ? UNKNOWN : TRUE;
    default: /* N_OR */
        x = eval(w, nd->a, m);
        if (x == TRUE)
            return TRUE;
        y = eval(w, nd->b, m);
        return y == TRUE ? TRUE : x == UNKNOWN || y == UNKNOWN ? UNKNOWN : FALSE;
    }
}

/* ptlog_where_match but for the last ranged schema's events. */
static int match_other(ptlog_where *w, const tracelog_schema *s, const tracelog_event *ev)
{
    match m; /* m.f is set when m.decoded is */
    m.ev = ev;
    m.b = NULL;
    m.decoded = 0;
    if (s && !(m.b = bind(w, s)))
        return -1;
    const node *root = &w->nodes[w->root];
    if (m.b && root->kind == N_CMP && m.b->leaf[root->leaf].ranged) { /* the common one */
        w->ranged_schema = s;
        w->ranged_leaf = &m.b->leaf[root->leaf];
        return match_ranged(w->ranged_leaf, ev);
    }
    return eval(w, w->root, &m) == TRUE;
}

int ptlog_where_match(ptlog_where *w, ptlog_src *src, const tracelog_event *ev)
{
    const tracelog_schema *s = ptlog_event_schema(src, ev->event_id);
    if (s && s == w->ranged_schema)
        return match_ranged(w->ranged_leaf, ev);
    return match_other(w, s, ev);
}

/*
 * ---- the expression against the log's schemas ----------------------------------
 * A field that no schema of the log has, or a value that no enum or flags
 * field of that name can show, would make every comparison of it unknown
 * and the output silently empty: a misspelt name is a usage error instead,
 * with the close candidates (as an SQL binder reports an unknown column).
 */

#define SUGGEST_MAX 3  /* candidates named in a message */
#define ITEMS_SHOWN 12 /* values of an enum listed in full up to this many */

/* Edit distance of a and b (insert, delete, replace, swap of neighbours), at most 64 bytes each compared. */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 64 || m > 64)
        return SIZE_MAX;
    size_t d[65][65];
    for (size_t i = 0; i <= n; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[n][m];
}

/* The closest distinct candidates to a name: a message's "did you mean" list. */
typedef struct suggest {
    const char *want;
    size_t limit; /* farther candidates are not suggested */
    const char *best[SUGGEST_MAX];
    size_t dist[SUGGEST_MAX];
    size_t n;
} suggest;

static void suggest_init(suggest *s, const char *want)
{
    memset(s, 0, sizeof *s);
    s->want = want;
    size_t len = strlen(want);
    s->limit = len < 4 ? 1 : len < 9 ? 2 : 3;
}

static void suggest_add(suggest *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (strcmp(s->best[i], name) == 0)
            return;
    size_t d = distance(s->want, name);
    if (d > s->limit)
        return;
    if (s->n == SUGGEST_MAX && d >= s->dist[SUGGEST_MAX - 1])
        return;
    size_t i = s->n < SUGGEST_MAX ? s->n++ : SUGGEST_MAX - 1;
    for (; i > 0 && s->dist[i - 1] > d; i--) {
        s->best[i] = s->best[i - 1];
        s->dist[i] = s->dist[i - 1];
    }
    s->best[i] = name;
    s->dist[i] = d;
}

/* " (did you mean "a" or "b"?)", or "" without candidates. */
static void suggest_text(const suggest *s, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < s->n && len < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s\"%s\"", i == 0 ? " (did you mean " : i + 1 == s->n ? " or " : ", ",
                                s->best[i]);
    if (s->n && len < cap)
        snprintf(out + len, cap - len, "?)");
}

/* Is text the name of an item of enum or flags field i of schema sc? */
static int is_item(const tracelog_schema *sc, size_t i, const char *text, size_t n)
{
    tracelog_field_info info;
    tracelog_schema_field(sc, i, &info);
    for (uint32_t k = 0; k < info.item_count; k++) {
        const char *name;
        uint64_t value;
        if (tracelog_schema_item(sc, i, k, &name, &value) == TRACELOG_OK && strlen(name) == n &&
            memcmp(name, text, n) == 0)
            return 1;
    }
    return 0;
}

static int all_digits(const char *s, size_t n, int hex)
{
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!(c >= '0' && c <= '9') && !(hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))))
            return 0;
    }
    return 1;
}

/*
 * Can field i of schema sc show the text of string value nd, as dump shows
 * it? An enum: one of its names, or a number (a value without a name); a
 * flags field: names, 0x numbers or 0 joined by '|'; char fields any text;
 * a bool true or false. A NAME against a number field never: numbers are
 * shown with digits. Other strings against numbers are not judged here.
 */
static int value_fits(const node *nd, const tracelog_schema *sc, size_t i)
{
    tracelog_field_info info;
    tracelog_schema_field(sc, i, &info);
    const char *t = nd->text;
    size_t n = nd->text_len;
    switch (info.type) {
    case TRACELOG_FIELD_CHAR:
    case TRACELOG_FIELD_BYTES:
    case TRACELOG_FIELD_EVENTSET:
        return 1;
    case TRACELOG_FIELD_ENUM:
        return is_item(sc, i, t, n) || all_digits(t, n, 0);
    case TRACELOG_FIELD_FLAGS:
        for (size_t start = 0, k = 0; k <= n; k++) {
            if (k < n && t[k] != '|')
                continue;
            const char *part = t + start;
            size_t len = k - start;
            if (!is_item(sc, i, part, len) && !(len == 1 && part[0] == '0') &&
                !(len > 2 && part[0] == '0' && part[1] == 'x' && all_digits(part + 2, len - 2, 1)))
                return 0;
            start = k + 1;
        }
        return 1;
    case TRACELOG_FIELD_BOOL:
        return (n == 4 && memcmp(t, "true", 4) == 0) || (n == 5 && memcmp(t, "false", 5) == 0) || !nd->bare;
    default:
        return !nd->bare;
    }
}

/* The distinct values a message lists (names borrowed from the schemas). */
typedef struct value_list {
    const char *v[ITEMS_SHOWN];
    size_t n, total;
} value_list;

static void value_list_add(value_list *l, const char *name)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], name) == 0)
            return;
    l->total++; /* past ITEMS_SHOWN, a repeat is counted again: the list only says there are more */
    if (l->n < ITEMS_SHOWN)
        l->v[l->n++] = name;
}

/* Checks one comparison against every schema of src. 0, or PTLOG_EXIT_USAGE (printed). */
static int check_compare(const node *nd, ptlog_src *src, const char *log)
{
    if (nd->fits) /* an event's schema of a stream had it, though the last may not */
        return 0;
    size_t ntypes = src->type_count(src);
    const tracelog_schema *first = NULL;
    size_t first_i = 0;
    suggest fields, items;
    value_list values = {0};
    suggest_init(&fields, nd->field);
    suggest_init(&items, nd->vkind == V_STRING ? nd->text : "");
    for (size_t k = 0; k < ntypes; k++) {
        uint32_t id;
        const char *name;
        src->type_at(src, k, &id, &name);
        const tracelog_schema *sc = src->type_schema ? src->type_schema(src, id) : NULL;
        if (!sc)
            continue;
        size_t i = tracelog_schema_find(sc, nd->field);
        if (i == TRACELOG_SCHEMA_NO_FIELD) {
            size_t nf = tracelog_schema_field_count(sc);
            for (size_t f = 0; f < nf; f++) {
                tracelog_field_info info;
                if (tracelog_schema_field(sc, f, &info) == TRACELOG_OK)
                    suggest_add(&fields, info.name);
            }
            continue;
        }
        if (nd->vkind != V_STRING || value_fits(nd, sc, i))
            return 0;
        if (!first) {
            first = sc;
            first_i = i;
        }
        tracelog_field_info info;
        tracelog_schema_field(sc, i, &info);
        for (uint32_t it = 0; it < info.item_count; it++) {
            const char *iname;
            uint64_t value;
            if (tracelog_schema_item(sc, i, it, &iname, &value) == TRACELOG_OK) {
                suggest_add(&items, iname);
                value_list_add(&values, iname);
            }
        }
    }
    char hint[SUGGEST_MAX * (TRACELOG_SCHEMA_NAME_MAX + 8) + 32];
    if (!first && nd->bound) /* a field of an earlier schema of a stream: no typo */
        return 0;
    if (!first) {
        suggest_text(&fields, hint, sizeof hint);
        ptlog_msg(NULL, "--where: no event type of %s has a field \"%s\"%s", log, nd->field, hint);
        return PTLOG_EXIT_USAGE;
    }
    char shown[PTLOG_TEXT_SHOW_SIZE];
    const char *v = nd->bare ? nd->text : ptlog_text_show(nd->text, shown, sizeof shown);
    if (!nd->bare && !strchr(v, '"')) { /* a plain "string" keeps its quotes in the message */
        snprintf(shown, sizeof shown, "\"%s\"", nd->text);
        v = shown;
    }
    if (!values.n) {
        tracelog_field_info info;
        tracelog_schema_field(first, first_i, &info);
        ptlog_msg(NULL, "--where: %s is not a value of field \"%s\" (a %s field: compare it with %s)", v, nd->field,
                  tracelog_field_type_name(info.type),
                  info.type == TRACELOG_FIELD_BOOL ? "true or false" : "a number");
        return PTLOG_EXIT_USAGE;
    }
    char list[ITEMS_SHOWN * (TRACELOG_SCHEMA_NAME_MAX + 2) + 8];
    size_t len = 0;
    list[0] = 0;
    for (size_t i = 0; i < values.n; i++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", values.v[i]);
    if (values.total > values.n)
        snprintf(list + len, sizeof list - len, ", ...");
    suggest_text(&items, hint, sizeof hint);
    ptlog_msg(NULL, "--where: %s is not a value of field \"%s\"%s; its values: %s", v, nd->field, hint, list);
    return PTLOG_EXIT_USAGE;
}

int ptlog_where_check(const ptlog_where *w, ptlog_src *src)
{
    if (!src->type_count || !src->type_at)
        return 0;
    const char *log = strcmp(src->name, "merge") == 0 ? "the inputs" : src->name;
    for (size_t k = 0; k < w->n; k++)
        if (w->nodes[k].kind == N_CMP) {
            int rc = check_compare(&w->nodes[k], src, log);
            if (rc)
                return rc;
        }
    return 0;
}
