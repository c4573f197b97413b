/*
 * Minimal CBOR reading and writing. Reading implements the format's CBOR
 * profile (format-spec/ptl-format.md section 5.1) with our own pull decoder:
 * one data item head at a time, so hostile input can never make it
 * allocate: sizes declared in the input are only ever compared against the
 * bytes actually present. Writing uses libcbor's buffer encoders.
 */
#ifndef TRACELOG_CBOR_IO_H
#define TRACELOG_CBOR_IO_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

typedef enum tl_cbor_kind {
    TL_CBOR_UINT,
    TL_CBOR_NEGINT, /* value is -1 - u */
    TL_CBOR_BYTES,
    TL_CBOR_TEXT,
    TL_CBOR_ARRAY,  /* u = item count */
    TL_CBOR_MAP,    /* u = pair count */
    TL_CBOR_BOOL,   /* u = 0 or 1 */
    TL_CBOR_NULL,
    TL_CBOR_OTHER,  /* floats, undefined, unassigned simple values */
    TL_CBOR_TAG,    /* u = tag; the tagged item follows */
} tl_cbor_kind;

typedef struct tl_cbor_item {
    tl_cbor_kind kind;
    uint64_t u;
    const uint8_t *ptr; /* BYTES/TEXT content */
    size_t len;
} tl_cbor_item;

typedef struct tl_cbor_in {
    const uint8_t *p, *end;
} tl_cbor_in;

/* Deepest nesting of the profile: the top-level item has depth 1, what an array, map or tag holds one more. */
#define TL_CBOR_MAX_DEPTH 32

/* Reads the next item head (and a string's content). Items outside the profile are refused. 0 or -1. */
int tl_cbor_next(tl_cbor_in *in, tl_cbor_item *item);
/* Skips the rest of an item whose head is `item` (its content nested at most TL_CBOR_MAX_DEPTH - 1 levels). 0 or -1. */
int tl_cbor_skip(tl_cbor_in *in, const tl_cbor_item *item);
/* 0 if p[0..len) is exactly one data item, well-formed within the profile, nested at most TL_CBOR_MAX_DEPTH deep; -1 otherwise. */
int tl_cbor_check(const uint8_t *p, size_t len);
/* True if item is the text `key`. */
int tl_cbor_is_key(const tl_cbor_item *item, const char *key);

/* Bytes of the shortest head whose argument is v (1, 2, 3, 5 or 9). */
size_t tl_cbor_head_size(uint64_t v);

/* Writers append to b; each returns 0, or -1 when out of memory. */
int tl_cbor_put_uint(tl_buf *b, uint64_t v);
int tl_cbor_put_text(tl_buf *b, const char *s);
int tl_cbor_put_bool(tl_buf *b, int v);
int tl_cbor_put_map(tl_buf *b, size_t pairs);
int tl_cbor_put_array(tl_buf *b, size_t items);

#endif
