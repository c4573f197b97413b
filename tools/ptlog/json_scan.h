/*
 * The JSON scanner (json_scan.c) of the JSON and JSON Lines sources: only
 * json_in.c includes this header; the rest of ptlog reads JSON inputs
 * through ptlog_json_src_open (ptlog.h).
 *
 * Errors are reported here, as a message on standard error, and returned as
 * an exit code (PTLOG_EXIT_INPUT, or that of ptlog_nomem), 0 meaning none.
 */
#ifndef PTLOG_JSON_SCAN_H
#define PTLOG_JSON_SCAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "ptlog.h"

/* The input of a JSON source, read through a buffer, and the position in it. */
typedef struct ptlog_json_scan {
    ptlog_in *in;
    const char *name;    /* of the input, for messages */
    int lines;           /* JSON Lines (else a document) */
    /* input buffer: bytes [0, len) of buf are input bytes [consumed, consumed + len) */
    char *buf;
    size_t len, pos, cap;
    uint64_t consumed;
    int eof;
    size_t scanned;      /* lines: bytes after pos already searched for a newline (linear time) */
    uint64_t line;       /* lines: number of the line last read; document: current line */
    uint64_t line_start; /* document: input offset of the current line */
    int long_line_quiet; /* lines: a line over the limit is no message, but too_long set (the first line's probe) */
    int too_long;
} ptlog_json_scan;

/* ---- the buffer, positions and syntax errors -------------------------------------------------- */

/* Input line/column of byte at buffer position pos (document mode). */
void ptlog_json_position(const ptlog_json_scan *s, size_t pos, uint64_t *line, uint64_t *col);
/* Moves s->pos to pos, counting lines on the way. */
void ptlog_json_advance(ptlog_json_scan *s, size_t pos);
/* "FILE:LINE:COLUMN: text" on standard error; PTLOG_EXIT_INPUT. */
int ptlog_json_syntax_at(ptlog_json_scan *s, uint64_t line, uint64_t col, const char *text);
/* Skips a UTF-8 byte-order mark at the very start, as detection does (README.md). */
int ptlog_json_skip_bom(ptlog_json_scan *s);

/* ---- values of a document ------------------------------------------------------------------------ */

/* Next non-blank byte (not consumed), or -1 at the end; *err set on failure. */
int ptlog_json_peek(ptlog_json_scan *s, int *err);
/* Consumes the next non-blank byte, one of chars, into *got; else a syntax error expecting what. */
int ptlog_json_expect_char(ptlog_json_scan *s, const char *chars, const char *what, int *got);
/* Finds and consumes the extent of the next value: *start (buffer position) and *len. */
int ptlog_json_scan_value(ptlog_json_scan *s, size_t *start, size_t *len);
/* Parses the value at [start, start + len) with jansson (errors with absolute positions). */
int ptlog_json_load_value(ptlog_json_scan *s, size_t start, size_t len, json_t **out);

/* ---- lines --------------------------------------------------------------------------------------- */

/* "FILE:LINE: line longer than the limit of 64 MiB" (the line after s->line); PTLOG_EXIT_INPUT. */
int ptlog_json_line_too_long(ptlog_json_scan *s);
/* Next non-blank line: *start and *len in the buffer (*len 0 at the end). */
int ptlog_json_next_line(ptlog_json_scan *s, size_t *start, size_t *len);
/* Consumes the line from s->pos to its '\n' at buffer position nl, which the caller found by parsing it in
   place, as ptlog_json_next_line would have: 1, or 0 (nothing done) when it is over the length limit. */
int ptlog_json_take_line(ptlog_json_scan *s, size_t nl);
/* Parses the line at [start, start + len) with jansson (errors as FILE:LINE:COLUMN). */
int ptlog_json_load_line(ptlog_json_scan *s, size_t start, size_t len, json_t **out);

/* ---- plain values, read in place (the fast path) ----------------------------------------------- */

/* Past the blanks (space, tab, CR, LF) at p. Inline: the fast path calls it around every key and value. */
static inline const char *ptlog_json_skip_blank(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
        p++;
    return p;
}
/*
 * Eight bytes at a time: p's 8 bytes as a little-endian word (the first
 * byte lowest) and masks with the high bit of each byte that stops a run,
 * so that the first such byte is the lowest bit set: a run's end is found
 * without a loop over its bytes.
 */
#define PTLOG_JSON_ONES 0x0101010101010101ull
#define PTLOG_JSON_HIGHS 0x8080808080808080ull

static inline uint64_t ptlog_json_word(const char *p)
{
    return ptlog_load_le((const unsigned char *)p, 8);
}
/* The high bit of every byte of v that is 0 (exactly: no borrow between bytes). */
static inline uint64_t ptlog_json_zero_bytes(uint64_t v)
{
    return ~(((v & ~PTLOG_JSON_HIGHS) + ~PTLOG_JSON_HIGHS) | v) & PTLOG_JSON_HIGHS;
}
/* The index of the first byte flagged in mask (not 0). */
static inline unsigned ptlog_json_first_flagged(uint64_t mask)
{
    return (unsigned)__builtin_ctzll(mask) / 8;
}

/* The readers below return the end of what they read, or NULL when it is not plain enough: jansson decides. */

/* A string without escapes, control or non-ASCII bytes; p at the opening quote. */
const char *ptlog_json_plain_string(const char *p, const char *end, const char **str, size_t *len);

/* Bytes that are not decimal digits: the high nibble must be 3, and adding 6 must not carry out of the
   low one. A byte of 0xFA or more carries into the next, but it is itself a non-digit, so the first
   non-digit is still the lowest byte flagged. */
static inline uint64_t ptlog_json_non_digits(uint64_t x)
{
    const uint64_t ones = PTLOG_JSON_ONES;
    uint64_t t = ((x & ones * 0xF0) ^ ones * 0x30) | (((x + ones * 0x06) & ones * 0xF0) ^ ones * 0x30);
    return ptlog_json_zero_bytes(t) ^ PTLOG_JSON_HIGHS;
}
/* The value of the n (1..8) digits that start the little-endian word x (the first digit lowest). */
static inline uint64_t ptlog_json_digits_value(uint64_t x, unsigned n)
{
    x = (x & PTLOG_JSON_ONES * 0x0F) << (64 - 8 * n); /* digits to the top; the zero bytes below: leading zeros */
    x = x * 2561 >> 8; /* pairs, then quads, then all eight */
    x = (x & 0x00FF00FF00FF00FFull) * 6553601 >> 16;
    return (x & 0x0000FFFF0000FFFFull) * 42949672960001ull >> 32;
}

/* A plain u64 string: "0x..." (hex) or decimal, at most 31 characters; p at the opening quote. */
const char *ptlog_json_u64_string(const char *p, const char *end, uint64_t *v);

/* An integer in 0..INT64_MAX (what jansson accepts), or a plain u64 string. Inline: the fast path reads
   seven on every event. */
static inline const char *ptlog_json_plain_u64(const char *p, const char *end, uint64_t *v)
{
    static const uint64_t pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    if (p < end && *p == '"')
        return ptlog_json_u64_string(p, end, v);
    if (p == end || *p < '0' || *p > '9' || (*p == '0' && p + 1 < end && p[1] >= '0' && p[1] <= '9'))
        return NULL;
    const char *start = p;
    uint64_t x = 0;
    for (;;) {
        if (end - p < 8) {
            for (; p < end && *p >= '0' && *p <= '9' && p - start < 20; p++)
                x = x * 10 + (uint64_t)(*p - '0');
            break;
        }
        uint64_t w = ptlog_json_word(p), stops = ptlog_json_non_digits(w);
        unsigned n = stops ? ptlog_json_first_flagged(stops) : 8;
        if (p - start + n > 19)
            return NULL; /* larger than INT64_MAX: let jansson say so */
        if (n)
            x = x * pow10[n] + ptlog_json_digits_value(w, n);
        p += n;
        if (n < 8)
            break;
    }
    if (p - start > 19 || x > INT64_MAX || (p < end && (*p == '.' || *p == 'e' || *p == 'E')))
        return NULL; /* jansson refuses what is above INT64_MAX: let it say so, as for any other line */
    *v = x;
    return p;
}
/* A value made of plain strings, numbers, literals, arrays and objects, nested 4 deep at most. */
const char *ptlog_json_plain_value(const char *p, const char *end, int depth);

#endif
