#include "format/cbor_io.h"

#include <cbor.h>
#include <string.h>

/* libcbor's streaming decoder reports each item through a callback; these
   callbacks store the one item into the tl_cbor_item passed as context. */
static void set_uint(void *ctx, uint64_t v) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_UINT, v, NULL, 0}; }
static void cb_u8(void *ctx, uint8_t v) { set_uint(ctx, v); }
static void cb_u16(void *ctx, uint16_t v) { set_uint(ctx, v); }
static void cb_u32(void *ctx, uint32_t v) { set_uint(ctx, v); }
static void cb_u64(void *ctx, uint64_t v) { set_uint(ctx, v); }
static void set_neg(void *ctx, uint64_t v) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_NEGINT, v, NULL, 0}; }
static void cb_n8(void *ctx, uint8_t v) { set_neg(ctx, v); }
static void cb_n16(void *ctx, uint16_t v) { set_neg(ctx, v); }
static void cb_n32(void *ctx, uint32_t v) { set_neg(ctx, v); }
static void cb_n64(void *ctx, uint64_t v) { set_neg(ctx, v); }
static void cb_bytes(void *ctx, cbor_data d, uint64_t n)
{
    *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_BYTES, n, d, (size_t)n};
}
static void cb_text(void *ctx, cbor_data d, uint64_t n)
{
    *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_TEXT, n, d, (size_t)n};
}
static void cb_array(void *ctx, uint64_t n) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_ARRAY, n, NULL, 0}; }
static void cb_map(void *ctx, uint64_t n) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_MAP, n, NULL, 0}; }
static void cb_tag(void *ctx, uint64_t t) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_TAG, t, NULL, 0}; }
static void cb_bool(void *ctx, bool v) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_BOOL, v, NULL, 0}; }
static void cb_null(void *ctx) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_NULL, 0, NULL, 0}; }
static void cb_other(void *ctx) { *(tl_cbor_item *)ctx = (tl_cbor_item){TL_CBOR_OTHER, 0, NULL, 0}; }
static void cb_f2(void *ctx, float v) { (void)v; cb_other(ctx); }
static void cb_f8(void *ctx, double v) { (void)v; cb_other(ctx); }
static void cb_bad(void *ctx) { *(tl_cbor_item *)ctx = (tl_cbor_item){(tl_cbor_kind)-1, 0, NULL, 0}; }

static const struct cbor_callbacks callbacks = {
    .uint8 = cb_u8, .uint16 = cb_u16, .uint32 = cb_u32, .uint64 = cb_u64,
    .negint8 = cb_n8, .negint16 = cb_n16, .negint32 = cb_n32, .negint64 = cb_n64,
    .byte_string = cb_bytes, .byte_string_start = cb_bad,
    .string = cb_text, .string_start = cb_bad,
    .array_start = cb_array, .indef_array_start = cb_bad,
    .map_start = cb_map, .indef_map_start = cb_bad,
    .tag = cb_tag,
    .float2 = cb_f2, .float4 = cb_f2, .float8 = cb_f8,
    .undefined = cb_other, .null = cb_null, .boolean = cb_bool,
    .indef_break = cb_bad,
};

int tl_cbor_next(tl_cbor_in *in, tl_cbor_item *item)
{
    if (in->p >= in->end)
        return -1;
    item->kind = (tl_cbor_kind)-1;
    struct cbor_decoder_result r = cbor_stream_decode(in->p, (size_t)(in->end - in->p), &callbacks, item);
    if (r.status != CBOR_DECODER_FINISHED || r.read == 0 || r.read > (size_t)(in->end - in->p))
        return -1;
    if ((int)item->kind < 0)
        return -1;
    in->p += r.read;
    return 0;
}

static int skip_depth(tl_cbor_in *in, const tl_cbor_item *item, int depth)
{
    if (depth > 32)
        return -1;
    uint64_t n;
    switch (item->kind) {
    case TL_CBOR_ARRAY: n = item->u; break;
    case TL_CBOR_MAP:
        if (item->u > UINT64_MAX / 2)
            return -1;
        n = 2 * item->u;
        break;
    case TL_CBOR_TAG: n = 1; break;
    default: return 0;
    }
    /* Each nested item takes at least one byte, so a lying count ends at the buffer's end. */
    for (uint64_t i = 0; i < n; i++) {
        tl_cbor_item sub;
        if (tl_cbor_next(in, &sub) || skip_depth(in, &sub, depth + 1))
            return -1;
    }
    return 0;
}

int tl_cbor_skip(tl_cbor_in *in, const tl_cbor_item *item) { return skip_depth(in, item, 0); }

int tl_cbor_is_key(const tl_cbor_item *item, const char *key)
{
    size_t n = strlen(key);
    return item->kind == TL_CBOR_TEXT && item->len == n && memcmp(item->ptr, key, n) == 0;
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
