/*
 * CBOR in and out for the metadata blocks: a pull decoder of the format's
 * profile (a head at a time, never allocating from declared sizes) and thin
 * writers over libcbor's encoders.
 */
#include "format/cbor_io.h"

#include <cbor.h>
#include <string.h>

/*
 * The decoder is our own, not libcbor's: it implements the format's CBOR
 * profile (format-spec/ptl-format.md section 5.1) exactly, where libcbor
 * 0.8's cbor_stream_decode refuses some well-formed items (the one-byte tags
 * 6 to 20, simple values) and accepts nothing we need beyond it.
 */

/* Reads the head at in->p: major type, additional information and argument. */
static int read_head(const tl_cbor_in *in, unsigned *major, unsigned *ai, uint64_t *arg, size_t *head)
{
    size_t left = (size_t)(in->end - in->p);
    if (left == 0)
        return -1;
    *major = in->p[0] >> 5;
    *ai = in->p[0] & 31;
    if (*ai < 24) {
        *arg = *ai;
        *head = 1;
        return 0;
    }
    if (*ai > 27) /* 28-30: not well-formed; 31: indefinite length or break, outside the profile */
        return -1;
    size_t n = (size_t)1 << (*ai - 24);
    if (left - 1 < n)
        return -1;
    *arg = 0;
    for (size_t i = 1; i <= n; i++)
        *arg = *arg << 8 | in->p[i];
    *head = 1 + n;
    return 0;
}

static tl_cbor_kind simple_kind(unsigned ai, uint64_t arg)
{
    if (ai >= 25)
        return TL_CBOR_OTHER; /* half, single and double floats */
    if (arg == 20 || arg == 21)
        return TL_CBOR_BOOL;
    return arg == 22 ? TL_CBOR_NULL : TL_CBOR_OTHER; /* undefined, unassigned simple values */
}

int tl_cbor_next(tl_cbor_in *in, tl_cbor_item *item)
{
    static const tl_cbor_kind kinds[] = {TL_CBOR_UINT, TL_CBOR_NEGINT, TL_CBOR_BYTES, TL_CBOR_TEXT,
                                         TL_CBOR_ARRAY, TL_CBOR_MAP, TL_CBOR_TAG};
    unsigned major, ai;
    uint64_t arg;
    size_t head;
    if (read_head(in, &major, &ai, &arg, &head))
        return -1;
    *item = (tl_cbor_item){major < 7 ? kinds[major] : simple_kind(ai, arg), arg, NULL, 0};
    if (major == 7 && ai == 24 && arg < 32) /* a two-byte head for a one-byte simple value: not well-formed */
        return -1;
    if (major == 7 && item->kind == TL_CBOR_BOOL)
        item->u = arg == 21;
    if (major == 2 || major == 3) {
        if (arg > (uint64_t)(in->end - in->p) - head)
            return -1;
        item->ptr = in->p + head;
        item->len = (size_t)arg;
        head += (size_t)arg;
    }
    in->p += head;
    return 0;
}

/* Items inside a container: array elements, map keys and values, or a tag's content; 0 for the rest. */
static int contained(const tl_cbor_item *item, uint64_t *n)
{
    *n = 0;
    if (item->kind == TL_CBOR_ARRAY)
        *n = item->u;
    else if (item->kind == TL_CBOR_TAG)
        *n = 1;
    else if (item->kind == TL_CBOR_MAP) {
        if (item->u > UINT64_MAX / 2)
            return -1;
        *n = 2 * item->u;
    }
    return 0;
}

static int skip_depth(tl_cbor_in *in, const tl_cbor_item *item, int depth)
{
    uint64_t n;
    if (contained(item, &n))
        return -1;
    if (n && depth >= TL_CBOR_MAX_DEPTH)
        return -1;
    /* Each nested item takes at least one byte, so a lying count ends at the buffer's end. */
    for (uint64_t i = 0; i < n; i++) {
        tl_cbor_item sub;
        if (tl_cbor_next(in, &sub) || skip_depth(in, &sub, depth + 1))
            return -1;
    }
    return 0;
}

int tl_cbor_skip(tl_cbor_in *in, const tl_cbor_item *item) { return skip_depth(in, item, 1); }

int tl_cbor_check(const uint8_t *p, size_t len)
{
    uint64_t left[TL_CBOR_MAX_DEPTH + 1]; /* left[d]: items still to read at depth d */
    int depth = 1;
    tl_cbor_in in = {p, p + len};
    left[1] = 1;
    while (depth > 0) {
        if (left[depth] == 0) {
            depth--;
            continue;
        }
        left[depth]--;
        tl_cbor_item it;
        uint64_t n;
        if (tl_cbor_next(&in, &it) || contained(&it, &n))
            return -1;
        if (n == 0)
            continue;
        if (depth == TL_CBOR_MAX_DEPTH) /* its content would be nested too deep */
            return -1;
        left[++depth] = n;
    }
    return in.p == in.end ? 0 : -1;
}

int tl_cbor_is_key(const tl_cbor_item *item, const char *key)
{
    size_t n = strlen(key);
    return item->kind == TL_CBOR_TEXT && item->len == n && memcmp(item->ptr, key, n) == 0;
}

size_t tl_cbor_head_size(uint64_t v)
{
    return v < 24 ? 1 : v <= UINT8_MAX ? 2 : v <= UINT16_MAX ? 3 : v <= UINT32_MAX ? 5 : 9;
}

typedef size_t (*head_encoder)(size_t, unsigned char *, size_t);

static int put_head(tl_buf *b, head_encoder enc, size_t v)
{
    if (tl_buf_reserve(b, 9))
        return -1;
    b->len += enc(v, b->data + b->len, 9);
    return 0;
}

int tl_cbor_put_uint(tl_buf *b, uint64_t v)
{
    if (tl_buf_reserve(b, 9))
        return -1;
    b->len += cbor_encode_uint(v, b->data + b->len, 9);
    return 0;
}

int tl_cbor_put_text(tl_buf *b, const char *s)
{
    size_t n = strlen(s);
    return put_head(b, cbor_encode_string_start, n) || tl_buf_append(b, s, n);
}

int tl_cbor_put_bool(tl_buf *b, int v)
{
    if (tl_buf_reserve(b, 1))
        return -1;
    b->len += cbor_encode_bool(v != 0, b->data + b->len, 1);
    return 0;
}

int tl_cbor_put_map(tl_buf *b, size_t pairs) { return put_head(b, cbor_encode_map_start, pairs); }
int tl_cbor_put_array(tl_buf *b, size_t items) { return put_head(b, cbor_encode_array_start, items); }
