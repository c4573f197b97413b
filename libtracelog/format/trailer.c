/* The TRAILER payload: status, event types and chunk index of a log as it stands. */
#include "format/trailer.h"

#include <string.h>

#include "common/bytes.h"
#include "format/format.h"
#include "format/meta.h"

#define TAIL_SIZE 16 /* trailer_offset and end magic */

static tracelog_status encode_map(const tl_trailer *t, tl_buf *out)
{
    if (tl_cbor_put_map(out, 2) || tl_cbor_put_text(out, "status"))
        return TRACELOG_E_NOMEM;
    tracelog_status st = tl_status_encode(t->status, out);
    if (st == TRACELOG_OK && tl_cbor_put_text(out, "event_types"))
        st = TRACELOG_E_NOMEM;
    if (st == TRACELOG_OK)
        st = tl_types_encode_head(t->ntypes, out);
    for (size_t i = 0; i < t->ntypes && st == TRACELOG_OK; i++)
        st = tl_types_encode_entry(tl_event_types_get(t->types, t->type_ids[i]), out);
    return st;
}

static void put_index_entry(uint8_t *o, const tl_index_entry *e)
{
    tl_store64(o, e->offset);
    tl_store64(o + 8, e->seq);
    tl_store64(o + 16, e->min_ts);
    tl_store64(o + 24, e->max_ts);
    tl_store32(o + 32, e->event_count);
    tl_store32(o + 36, 0);
}

tracelog_status tl_trailer_encode(const tl_trailer *t, tl_buf *out)
{
    uint8_t word[8] = {0};
    out->len = 0;
    if (tl_buf_append(out, word, 4))
        return TRACELOG_E_NOMEM;
    tracelog_status st = encode_map(t, out);
    if (st != TRACELOG_OK)
        return st;
    tl_store32(out->data, (uint32_t)(out->len - 4));
    if (tl_buf_append(out, word, tl_align8(out->len) - out->len))
        return TRACELOG_E_NOMEM;
    if (t->nindex > (SIZE_MAX - out->len - 8 - TAIL_SIZE) / TL_INDEX_ENTRY_SIZE)
        return TRACELOG_E_NOMEM;
    tl_store64(word, t->nindex);
    if (tl_buf_append(out, word, 8) || tl_buf_reserve(out, t->nindex * TL_INDEX_ENTRY_SIZE + TAIL_SIZE))
        return TRACELOG_E_NOMEM;
    for (size_t i = 0; i < t->nindex; i++, out->len += TL_INDEX_ENTRY_SIZE)
        put_index_entry(out->data + out->len, &t->index[i]);
    tl_store64(out->data + out->len, t->offset);
    memcpy(out->data + out->len + 8, TL_END_MAGIC, 8);
    out->len += TAIL_SIZE;
    return TRACELOG_OK;
}

/* Checks the binary layout around the CBOR part; sets *cbor_len. 0 or -1. */
static int check_layout(const uint8_t *p, size_t len, uint32_t *cbor_len)
{
    if (len < 4 + 8 + TAIL_SIZE || tl_load32(p) > len - 4 - 8 - TAIL_SIZE)
        return -1;
    uint32_t n = tl_load32(p);
    size_t idx = (size_t)tl_align8(4 + (uint64_t)n);
    if (idx + 8 + TAIL_SIZE > len)
        return -1;
    uint64_t count = tl_load64(p + idx);
    if (count > (len - idx - 8 - TAIL_SIZE) / TL_INDEX_ENTRY_SIZE ||
        idx + 8 + count * TL_INDEX_ENTRY_SIZE + TAIL_SIZE != len || memcmp(p + len - 8, TL_END_MAGIC, 8))
        return -1;
    *cbor_len = n;
    return 0;
}

tracelog_status tl_trailer_decode(const uint8_t *p, size_t len, tl_trailer_info *info,
                                  tl_type_sink sink, void *ctx, const char **why)
{
    uint32_t n;
    memset(info, 0, sizeof *info);
    *why = "trailer: bad layout";
    if (check_layout(p, len, &n))
        return TRACELOG_E_CORRUPT;
    if (tl_cbor_check(p + 4, n)) { /* the profile (spec 5.1): one well-formed map filling the n bytes */
        *why = "trailer: the CBOR part is not one well-formed item of the format's profile";
        return TRACELOG_E_CORRUPT;
    }
    tl_cbor_in in = {p + 4, p + 4 + n};
    tl_cbor_item map, k;
    if (tl_cbor_next(&in, &map) || map.kind != TL_CBOR_MAP)
        return TRACELOG_E_CORRUPT;
    for (uint64_t i = 0; i < map.u; i++) {
        tracelog_status st = TRACELOG_OK;
        if (tl_cbor_next(&in, &k) || k.kind != TL_CBOR_TEXT)
            return TRACELOG_E_CORRUPT;
        if (tl_cbor_is_key(&k, "status")) {
            st = tl_status_decode(&in, &info->status, why);
            info->have_status = st == TRACELOG_OK;
        } else if (tl_cbor_is_key(&k, "event_types")) {
            st = tl_types_decode(&in, sink, ctx, why);
        } else {
            tl_cbor_item v;
            if (tl_cbor_next(&in, &v) || tl_cbor_skip(&in, &v))
                st = TRACELOG_E_CORRUPT;
        }
        if (st != TRACELOG_OK)
            return st;
    }
    if (in.p != in.end) {
        *why = "trailer: bad layout";
        return TRACELOG_E_CORRUPT;
    }
    return TRACELOG_OK;
}
