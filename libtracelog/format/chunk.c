/*
 * What both chunk body formats share (format-spec/ptl-format.md 6.1, 6.2,
 * 6.7): the chunk header, the codecs, and the dispatch to the body's decoder
 * (chunk_columns.c for format 1.0 bodies, chunk_keyed_read.c for 1.1).
 */
#include "format/chunk.h"

#include <stdlib.h>
#include <string.h>

/* Fewest body bytes an event takes: the bound that event_count is checked against. */
static int count_fits(const tl_chunk_header *h)
{
    if (h->body_format == TL_BODY_COLUMNS) /* a flag, a timestamp, an id and a length */
        return h->raw_size >= TL_COLUMNS_TABLE_SIZE &&
               (h->raw_size - TL_COLUMNS_TABLE_SIZE) / 4 >= h->event_count;
    /* keyed: a key index byte and a timestamp byte */
    return h->raw_size >= TL_KEYED_HEADER_SIZE && (h->raw_size - TL_KEYED_HEADER_SIZE) / 2 >= h->event_count;
}

int tl_chunk_header_decode(const uint8_t *p, size_t len, tl_chunk_header *h)
{
    if (len < TL_CHUNK_HEADER_SIZE)
        return -1;
    h->min_ts = tl_load64(p);
    h->max_ts = tl_load64(p + 8);
    h->event_count = tl_load32(p + 16);
    h->raw_size = tl_load32(p + 20);
    h->codec = p[24];
    h->body_format = p[25];
    h->flags = p[TL_CHUNK_FLAGS_OFFSET];
    if (h->min_ts > h->max_ts || h->event_count == 0 || h->codec > TL_CODEC_ZSTD ||
        h->body_format > TL_BODY_KEYED || !count_fits(h))
        return -1;
    if (h->codec == TL_CODEC_NONE && len - TL_CHUNK_HEADER_SIZE != h->raw_size)
        return -1;
    return 0;
}

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)

static tracelog_status open_body(tl_chunk_cursor *c, const uint8_t *body, uint32_t max_raw,
                                 const char **why)
{
    c->index = 0;
    c->ts = c->h.min_ts;
    if (c->h.body_format == TL_BODY_KEYED)
        return tl_keyed_open(c, body, max_raw, why);
    return tl_columns_open(c, body, why);
}

tracelog_status tl_chunk_open(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx, uint32_t max_raw,
                              tl_chunk_cursor *c, const char **why)
{
    c->h.event_count = 0; /* a failed open leaves no events to read */
    c->index = 0;
    c->rebuilt.len = 0;
    tl_chunk_header h;
    if (tl_chunk_header_decode(payload, len, &h))
        CORRUPT("bad chunk header");
    if (h.raw_size > max_raw) {
        *why = "uncompressed chunk larger than the reader's limit";
        return TRACELOG_E_LIMIT;
    }
    const uint8_t *stored = payload + TL_CHUNK_HEADER_SIZE;
    size_t stored_len = len - TL_CHUNK_HEADER_SIZE;
    tracelog_status st;
    c->h = h;
    if (h.codec == TL_CODEC_NONE) {
        st = open_body(c, stored, max_raw, why);
    } else {
        /* Exactly one zstd frame, whose declared size is the chunk's: checked before allocating. */
        if (ZSTD_getFrameContentSize(stored, stored_len) != h.raw_size ||
            ZSTD_findFrameCompressedSize(stored, stored_len) != stored_len) {
            st = TRACELOG_E_CORRUPT;
            *why = "zstd frame size differs from the declared size";
        } else if (c->raw.len = 0, tl_buf_reserve(&c->raw, h.raw_size)) {
            st = TRACELOG_E_NOMEM;
        } else {
            size_t n = ZSTD_decompressDCtx(dctx, c->raw.data, h.raw_size, stored, stored_len);
            if (ZSTD_isError(n) || n != h.raw_size) {
                st = TRACELOG_E_CORRUPT;
                *why = "zstd frame does not decompress";
            } else {
                c->raw.len = n;
                st = open_body(c, c->raw.data, max_raw, why);
            }
        }
    }
    if (st != TRACELOG_OK)
        c->h.event_count = 0;
    return st;
}

void tl_chunk_cursor_free(tl_chunk_cursor *c)
{
    tl_buf_free(&c->raw);
    tl_buf_free(&c->rebuilt);
    free(c->keys);
    c->keys = NULL;
    c->keys_cap = 0;
}

void tl_chunk_events_free(tl_chunk_events *ce)
{
    tl_chunk_cursor_free(&ce->cur);
    free(ce->events);
    ce->events = NULL;
    ce->cap = 0;
    ce->count = 0;
}

tracelog_status tl_chunk_decode(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx,
                                uint32_t max_raw, tl_chunk_events *out, const char **why)
{
    tl_chunk_cursor *c = &out->cur;
    out->count = 0;
    tracelog_status st = tl_chunk_open(payload, len, dctx, max_raw, c, why);
    if (st != TRACELOG_OK)
        return st;
    if (c->h.event_count > out->cap) {
        tracelog_event *e = realloc(out->events, sizeof *e * c->h.event_count);
        if (!e)
            return TRACELOG_E_NOMEM;
        out->events = e;
        out->cap = c->h.event_count;
    }
    uint32_t n = 0;
    while ((st = tl_chunk_next(c, &out->events[n], why)) == TRACELOG_OK)
        n++;
    if (st != TRACELOG_END)
        return st;
    out->count = n;
    return TRACELOG_OK;
}
