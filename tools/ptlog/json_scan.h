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

/* Next non-blank line: *start and *len in the buffer (*len 0 at the end). */
int ptlog_json_next_line(ptlog_json_scan *s, size_t *start, size_t *len);
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
/* These return the end of what they read, or NULL when it is not plain enough: jansson decides. */
/* A string without escapes, control or non-ASCII bytes; p at the opening quote. */
const char *ptlog_json_plain_string(const char *p, const char *end, const char **str, size_t *len);
/* An integer in 0..INT64_MAX (what jansson accepts), or a plain u64 string. */
const char *ptlog_json_plain_u64(const char *p, const char *end, uint64_t *v);
/* A value made of plain strings, numbers, literals, arrays and objects, nested 4 deep at most. */
const char *ptlog_json_plain_value(const char *p, const char *end, int depth);

#endif
