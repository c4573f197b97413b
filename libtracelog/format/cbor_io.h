/*
 * Minimal CBOR reading and writing on top of libcbor's allocation-free
 * streaming decoder and buffer encoders. The reader pulls one data item head
 * at a time, so hostile input can never make it allocate: sizes declared in
 * the input are only ever compared against the bytes actually present.
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
    TL_CBOR_OTHER,  /* floats, undefined, simple values: skipped */
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

/* Reads the next item head. Indefinite-length items are rejected. 0 or -1. */
int tl_cbor_next(tl_cbor_in *in, tl_cbor_item *item);
/* Skips the rest of an item whose head is `item` (nested up to 32 levels). 0 or -1. */
int tl_cbor_skip(tl_cbor_in *in, const tl_cbor_item *item);
/* True if item is the text `key`. */
int tl_cbor_is_key(const tl_cbor_item *item, const char *key);

/* Writers append to b; each returns 0, or -1 when out of memory. */
int tl_cbor_put_uint(tl_buf *b, uint64_t v);
int tl_cbor_put_text(tl_buf *b, const char *s);
int tl_cbor_put_bool(tl_buf *b, int v);
int tl_cbor_put_map(tl_buf *b, size_t pairs);
int tl_cbor_put_array(tl_buf *b, size_t items);

#endif
