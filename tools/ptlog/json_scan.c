/*
 * The JSON scanner of ptlog's JSON sources (json_in.c): the input buffer
 * (refilled as values cross its end, up to the 64 MiB limit of a value),
 * lines and columns for syntax errors (file:line:column), the extent of a
 * document's next value and the JSON Lines lines, each parsed by jansson,
 * and the fast path's plain values (strings without escapes, integers,
 * nested values of those), read in place.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "json_scan.h"
#include "ptlog.h"

#define JSON_VALUE_MAX (64u << 20) /* longest JSON Lines line or document value (README.md, Limits) */
#define JSON_BUF_MAX (JSON_VALUE_MAX + 4096u) /* such a value, its delimiter and some slack */
/*
 * Values in one line or document value that jansson builds as a tree (the
 * fast paths build none): about 130 bytes each there, so a 60 MB line of
 * empty arrays once took 2.7 GB. A log's header holds at most 65,536 event
 * types of 4 values each; an event at most 256 fields.
 */
#define JSON_NODES_MAX (1u << 19)
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define JSON_BUF_INITIAL 64u /* fuzzing: values cross buffer refills even in small inputs */
#else
#define JSON_BUF_INITIAL (1u << 20)
#endif

/* ---- positions and syntax errors ----------------------------------------------------------------- */

/* Input line/column of byte at buffer position pos (document mode). */
void ptlog_json_position(const ptlog_json_scan *s, size_t pos, uint64_t *line, uint64_t *col)
{
    *line = s->line;
    *col = s->consumed + pos - s->line_start + 1;
}

/* Moves s->pos to pos, counting lines on the way. */
void ptlog_json_advance(ptlog_json_scan *s, size_t pos)
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

int ptlog_json_syntax_at(ptlog_json_scan *s, uint64_t line, uint64_t col, const char *text)
{
    ptlog_msg(NULL, "%s:%llu:%llu: %s", s->name, (unsigned long long)line, (unsigned long long)col, text);
    return PTLOG_EXIT_INPUT;
}

/* A jansson error inside a value that starts at (line0, col0). */
static int syntax_in_value(ptlog_json_scan *s, const json_error_t *e, uint64_t line0, uint64_t col0)
{
    uint64_t line = line0 + (uint64_t)(e->line > 0 ? e->line - 1 : 0);
    uint64_t col = e->line <= 1 ? col0 + (uint64_t)(e->column > 0 ? e->column - 1 : 0) : (uint64_t)e->column;
    return ptlog_json_syntax_at(s, line, col, e->text);
}

/* ---- buffer ------------------------------------------------------------------------------------------ */

/* Reads more input, keeping bytes from *keep on (which moves to the start). 0, 1 at EOF, or -exit code. */
static int refill(ptlog_json_scan *s, size_t *keep)
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
            ptlog_msg(s->name, "a value longer than the limit of 64 MiB (%s)",
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
        ptlog_msg(s->name, "cannot read: %s", strerror(errno));
        return -PTLOG_EXIT_INPUT;
    }
    if (k == 0) {
        s->eof = 1;
        return 1;
    }
    s->len += (size_t)k;
    return 0;
}

/* A UTF-8 byte-order mark at the very start is skipped, as detection does (README.md). */
int ptlog_json_skip_bom(ptlog_json_scan *s)
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

/* ---- values of a document ---------------------------------------------------------------------- */

/* Next non-blank byte (not consumed), or -1 at the end; *err set on failure. */
int ptlog_json_peek(ptlog_json_scan *s, int *err)
{
    *err = 0;
    for (;;) {
        size_t p = s->pos;
        while (p < s->len && (s->buf[p] == ' ' || s->buf[p] == '\t' || s->buf[p] == '\r' || s->buf[p] == '\n'))
            p++;
        ptlog_json_advance(s, p);
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

int ptlog_json_expect_char(ptlog_json_scan *s, const char *chars, const char *what, int *got)
{
    int err, c = ptlog_json_peek(s, &err);
    if (err)
        return err;
    if (c < 0 || !strchr(chars, c)) {
        uint64_t line, col;
        ptlog_json_position(s, s->pos, &line, &col);
        char text[96];
        snprintf(text, sizeof text, c < 0 ? "unexpected end of input, expected %s" : "expected %s", what);
        return ptlog_json_syntax_at(s, line, col, text);
    }
    ptlog_json_advance(s, s->pos + 1);
    *got = c;
    return 0;
}

/*
 * Finds the extent of the JSON value at the current position (strings,
 * brackets and scalars; the contents are checked later by a parser) and
 * consumes it: *start is its buffer position, *len its length.
 */
int ptlog_json_scan_value(ptlog_json_scan *s, size_t *start, size_t *len)
{
    int err;
    if (ptlog_json_peek(s, &err) < 0) {
        if (err)
            return err;
        uint64_t line, col;
        ptlog_json_position(s, s->pos, &line, &col);
        return ptlog_json_syntax_at(s, line, col, "unexpected end of input, expected a value");
    }
    size_t begin = s->pos, p = s->pos;
    int depth = 0, in_str = 0, esc = 0;
    for (;;) {
        if (p - begin > JSON_VALUE_MAX) {
            uint64_t line, col;
            ptlog_json_position(s, begin, &line, &col);
            return ptlog_json_syntax_at(s, line, col, "value longer than the limit of 64 MiB");
        }
        if (p == s->len) {
            size_t keep = begin;
            int r = refill(s, &keep); /* keep: where begin's byte is now (refill at the end moves nothing) */
            p = p - begin + keep;
            begin = keep;
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

enum { JANSSON_OK, TOO_MANY_VALUES, NUL_BYTE };

/*
 * What [p, p + len) must not hand jansson, in one pass: more than JSON_NODES_MAX values (counted by
 * their openers and separators), or a NUL byte (jansson took one for a blank, or for the end), whose
 * offset goes to *nul.
 */
static int jansson_refuses(const char *p, size_t len, size_t *nul)
{
    size_t values = 1;
    int in_str = 0;
    for (size_t i = 0; i < len; i++) {
        char c = p[i];
        if (c == 0) {
            *nul = i;
            return NUL_BYTE;
        }
        if (in_str) {
            if (c == '\\')
                i++;
            else if (c == '"')
                in_str = 0;
        } else if (c == '"') {
            in_str = 1;
        } else if ((c == '[' || c == '{' || c == ',') && ++values > JSON_NODES_MAX) {
            return TOO_MANY_VALUES;
        }
    }
    return JANSSON_OK;
}

/* Parses a value of the document with jansson (errors with absolute positions). */
int ptlog_json_load_value(ptlog_json_scan *s, size_t start, size_t len, json_t **out)
{
    uint64_t line, col;
    ptlog_json_position(s, start, &line, &col);
    *out = NULL;
    size_t nul;
    switch (jansson_refuses(s->buf + start, len, &nul)) {
    case TOO_MANY_VALUES:
        return ptlog_json_syntax_at(s, line, col, "a value of more than 524,288 values (the limit: README, Limits)");
    case NUL_BYTE:
        ptlog_json_position(s, start + nul, &line, &col);
        return ptlog_json_syntax_at(s, line, col, "a NUL byte (JSON text has none)");
    }
    json_error_t e;
    *out = json_loadb(s->buf + start, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
    ptlog_json_advance(s, start + len);
    return *out ? 0 : syntax_in_value(s, &e, line, col);
}
/* ---- lines ------------------------------------------------------------------------------------------ */

/* A JSON Lines line longer than JSON_VALUE_MAX (without its newline). */
int ptlog_json_line_too_long(ptlog_json_scan *s)
{
    ptlog_msg(NULL, "%s:%llu: line longer than the limit of 64 MiB", s->name, (unsigned long long)s->line + 1);
    return PTLOG_EXIT_INPUT;
}

/*
 * Next non-blank line, as *start and *len in the buffer (*len is 0 at the
 * end). The search for its newline resumes where the last refill stopped,
 * so a long line costs linear time however small the reads (pipes).
 */
int ptlog_json_next_line(ptlog_json_scan *s, size_t *start, size_t *len)
{
    for (;;) {
        size_t from = s->pos + s->scanned;
        char *nl = from < s->len ? memchr(s->buf + from, '\n', s->len - from) : NULL;
        size_t end = nl ? (size_t)(nl - s->buf) : s->len;
        if (end - s->pos > JSON_VALUE_MAX) {
            s->too_long = 1;
            return s->long_line_quiet ? PTLOG_EXIT_INPUT : ptlog_json_line_too_long(s);
        }
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
        for (size_t i = 0; i < *len; i++) {
            char c = s->buf[*start + i];
            if (c != ' ' && c != '\t' && c != '\r')
                return 0;
        }
    }
}

int ptlog_json_take_line(ptlog_json_scan *s, size_t nl)
{
    if (nl - s->pos > JSON_VALUE_MAX)
        return 0;
    s->pos = nl + 1;
    s->scanned = 0;
    s->line++;
    return 1;
}

int ptlog_json_load_line(ptlog_json_scan *s, size_t start, size_t len, json_t **out)
{
    *out = NULL;
    size_t nul;
    switch (jansson_refuses(s->buf + start, len, &nul)) {
    case TOO_MANY_VALUES:
        ptlog_msg(NULL, "%s:%llu: a line of more than 524,288 values (the limit: README, Limits)", s->name,
                  (unsigned long long)s->line);
        return PTLOG_EXIT_INPUT;
    case NUL_BYTE:
        ptlog_msg(NULL, "%s:%llu:%zu: a NUL byte (JSON text has none)", s->name, (unsigned long long)s->line,
                  nul + 1);
        return PTLOG_EXIT_INPUT;
    }
    json_error_t e;
    *out = json_loadb(s->buf + start, len, JSON_REJECT_DUPLICATES, &e);
    if (*out)
        return 0;
    /* jansson sees the line alone: its "end of file" is the line's end (the file may go on) */
    char text[sizeof e.text + 16], *eof = strstr(e.text, "end of file");
    if (eof)
        snprintf(text, sizeof text, "%.*send of the line%s", (int)(eof - e.text), e.text, eof + strlen("end of file"));
    else
        snprintf(text, sizeof text, "%s", e.text);
    ptlog_msg(NULL, "%s:%llu:%d: %s", s->name, (unsigned long long)s->line, e.column > 0 ? e.column : 1, text);
    return PTLOG_EXIT_INPUT;
}

/* ---- plain values (the fast path): strings, integers, nested values ---------------------- */

/* Bytes that end a plain string: a quote, a backslash, a control byte (below 0x20) or non-ASCII. */
static uint64_t string_stops(uint64_t x)
{
    const uint64_t ones = PTLOG_JSON_ONES;
    return ptlog_json_zero_bytes(x ^ (ones * '"')) | ptlog_json_zero_bytes(x ^ (ones * '\\')) |
           ptlog_json_zero_bytes(x & (ones * 0xE0)) | (x & PTLOG_JSON_HIGHS);
}

/* A string without escapes, control or non-ASCII bytes; p at the opening quote. */
const char *ptlog_json_plain_string(const char *p, const char *end, const char **str, size_t *len)
{
    const char *q = ++p;
    for (;; q += 8) {
        if (end - q < 8) {
            while (q < end && *q != '"' && *q != '\\' && (unsigned char)*q >= 0x20 && (unsigned char)*q < 0x80)
                q++;
            break;
        }
        uint64_t stops = string_stops(ptlog_json_word(q));
        if (stops) {
            q += ptlog_json_first_flagged(stops);
            break;
        }
    }
    if (q == end || *q != '"')
        return NULL;
    *str = p;
    *len = (size_t)(q - p);
    return q + 1;
}

/* A plain u64 string: "0x..." (hex) or decimal, at most 31 characters. */
const char *ptlog_json_u64_string(const char *p, const char *end, uint64_t *v)
{
    const char *str;
    size_t len;
    const char *q = ptlog_json_plain_string(p, end, &str, &len);
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

/* An object or array of plain values, without repeated keys; p at '{' or '['. */
static const char *plain_container(const char *p, const char *end, int depth)
{
    char close = *p == '{' ? '}' : ']';
    const char *keys[PLAIN_MEMBERS_MAX];
    size_t lens[PLAIN_MEMBERS_MAX], n = 0;
    p = ptlog_json_skip_blank(p + 1, end);
    if (p < end && *p == close)
        return p + 1;
    for (;; n++) {
        if (close == '}') {
            if (n == PLAIN_MEMBERS_MAX || p == end || *p != '"' || !(p = ptlog_json_plain_string(p, end, &keys[n], &lens[n])))
                return NULL;
            for (size_t i = 0; i < n; i++)
                if (lens[i] == lens[n] && (!lens[n] || keys[i][0] == keys[n][0]) && memcmp(keys[i], keys[n], lens[n]) == 0)
                    return NULL; /* jansson refuses it (JSON_REJECT_DUPLICATES): let it say so */
            p = ptlog_json_skip_blank(p, end);
            if (p == end || *p++ != ':')
                return NULL;
            p = ptlog_json_skip_blank(p, end);
        }
        if (!(p = ptlog_json_plain_value(p, end, depth + 1)))
            return NULL;
        p = ptlog_json_skip_blank(p, end);
        if (p < end && *p == close)
            return p + 1;
        if (p == end || *p++ != ',')
            return NULL;
        p = ptlog_json_skip_blank(p, end);
    }
}

/* A value made of plain strings, numbers, literals, arrays and objects, nested 4 deep at most. */
const char *ptlog_json_plain_value(const char *p, const char *end, int depth)
{
    const char *str;
    size_t len;
    if (p == end || depth > 4)
        return NULL;
    switch (*p) {
    case '"':
        return ptlog_json_plain_string(p, end, &str, &len);
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
