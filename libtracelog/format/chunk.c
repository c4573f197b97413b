#include "format/chunk.h"

#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"

void tl_chunk_builder_reset(tl_chunk_builder *b)
{
    b->flags.len = b->ts.len = b->ids.len = b->pids.len = 0;
    b->tids.len = b->addrs.len = b->lens.len = b->data.len = 0;
    b->count = 0;
    b->min_ts = UINT64_MAX;
    b->max_ts = 0;
    b->prev_ts = b->prev_tid = b->prev_addr = 0;
    b->prev_pid = 0;
}

void tl_chunk_builder_free(tl_chunk_builder *b)
{
    tl_buf *bufs[] = {&b->flags, &b->ts, &b->ids, &b->pids, &b->tids,
                      &b->addrs, &b->lens, &b->data, &b->scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        tl_buf_free(bufs[i]);
}

size_t tl_chunk_event_bound(const tracelog_event *ev)
{
    return 1 + 5 * TL_VARINT_MAX + (size_t)ev->payload_len;
}

static void put_varint(tl_buf *b, uint64_t v) { b->len += tl_put_varint(b->data + b->len, v); }

tracelog_status tl_chunk_add(tl_chunk_builder *b, const tracelog_event *ev)
{
    if (ev->truncation > TRACELOG_TRUNC_READ || (ev->payload_len && !ev->payload))
        return TRACELOG_E_INVAL;
    if (tl_buf_reserve(&b->flags, 1) || tl_buf_reserve(&b->ts, TL_VARINT_MAX) ||
        tl_buf_reserve(&b->ids, TL_VARINT_MAX) || tl_buf_reserve(&b->pids, TL_VARINT_MAX) ||
        tl_buf_reserve(&b->tids, TL_VARINT_MAX) || tl_buf_reserve(&b->addrs, TL_VARINT_MAX) ||
        tl_buf_reserve(&b->lens, TL_VARINT_MAX) || tl_buf_reserve(&b->data, ev->payload_len))
        return TRACELOG_E_NOMEM;
    if (b->count == 0) {
        b->prev_ts = b->first_ts = ev->timestamp_ns;
        b->min_ts = b->max_ts = ev->timestamp_ns;
    }
    uint8_t flags = (uint8_t)(ev->truncation << TL_REC_TRUNC_SHIFT);
    if (ev->pid != b->prev_pid) {
        flags |= TL_REC_PID;
        put_varint(&b->pids, ev->pid);
        b->prev_pid = ev->pid;
    }
    if (ev->tid != b->prev_tid) {
        flags |= TL_REC_TID;
        put_varint(&b->tids, ev->tid);
        b->prev_tid = ev->tid;
    }
    if (ev->address != b->prev_addr) {
        flags |= TL_REC_ADDR;
        put_varint(&b->addrs, tl_zigzag((int64_t)(ev->address - b->prev_addr)));
        b->prev_addr = ev->address;
    }
    b->flags.data[b->flags.len++] = flags;
    put_varint(&b->ts, tl_zigzag((int64_t)(ev->timestamp_ns - b->prev_ts)));
    b->prev_ts = ev->timestamp_ns;
    if (ev->timestamp_ns < b->min_ts)
        b->min_ts = ev->timestamp_ns;
    if (ev->timestamp_ns > b->max_ts)
        b->max_ts = ev->timestamp_ns;
    put_varint(&b->ids, ev->event_id);
    put_varint(&b->lens, ev->payload_len);
    if (ev->payload_len)
        memcpy(b->data.data + b->data.len, ev->payload, ev->payload_len);
    b->data.len += ev->payload_len;
    b->count++;
    return TRACELOG_OK;
}

size_t tl_chunk_raw_size(const tl_chunk_builder *b)
{
    return TL_CHUNK_TABLE_SIZE + b->flags.len + b->ts.len + b->ids.len + b->pids.len +
           b->tids.len + b->addrs.len + b->lens.len + b->data.len;
}

static tracelog_status assemble_body(tl_chunk_builder *b)
{
    /* The ts column was written relative to the first event; the format wants
       the first delta relative to min_ts, so re-encode the first varint. */
    const uint8_t *p = b->ts.data, *end = b->ts.data + b->ts.len;
    uint64_t first_rel;
    if (b->count == 0 || tl_get_varint(&p, end, &first_rel))
        return TRACELOG_E_INVAL;
    uint8_t head[TL_VARINT_MAX];
    size_t head_len = tl_put_varint(head, tl_zigzag((int64_t)(b->first_ts - b->min_ts)));
    size_t ts_len = head_len + (size_t)(end - p);

    const tl_buf *cols[] = {&b->ids, &b->pids, &b->tids, &b->addrs, &b->lens};
    tl_buf *s = &b->scratch;
    s->len = 0;
    size_t raw = tl_chunk_raw_size(b) - b->ts.len + ts_len;
    if (tl_buf_reserve(s, raw))
        return TRACELOG_E_NOMEM;
    uint8_t *o = s->data;
    tl_store32(o, (uint32_t)ts_len);
    for (int i = 0; i < 5; i++)
        tl_store32(o + 4 + 4 * i, (uint32_t)cols[i]->len);
    o += TL_CHUNK_TABLE_SIZE;
    memcpy(o, b->flags.data, b->flags.len);
    o += b->flags.len;
    memcpy(o, head, head_len);
    o += head_len;
    memcpy(o, p, (size_t)(end - p));
    o += end - p;
    for (int i = 0; i < 5; i++) {
        if (cols[i]->len)
            memcpy(o, cols[i]->data, cols[i]->len);
        o += cols[i]->len;
    }
    if (b->data.len)
        memcpy(o, b->data.data, b->data.len);
    o += b->data.len;
    s->len = (size_t)(o - s->data);
    return TRACELOG_OK;
}

tracelog_status tl_chunk_finish(tl_chunk_builder *b, ZSTD_CCtx *cctx, int level, tl_buf *out)
{
    tracelog_status st = assemble_body(b);
    if (st != TRACELOG_OK)
        return st;
    size_t raw = b->scratch.len;
    if (raw > UINT32_MAX)
        return TRACELOG_E_LIMIT;
    size_t bound = ZSTD_compressBound(raw);
    out->len = 0;
    if (tl_buf_reserve(out, TL_CHUNK_HEADER_SIZE + (bound > raw ? bound : raw)))
        return TRACELOG_E_NOMEM;
    uint8_t *h = out->data;
    memset(h, 0, TL_CHUNK_HEADER_SIZE);
    tl_store64(h, b->min_ts);
    tl_store64(h + 8, b->max_ts);
    tl_store32(h + 16, b->count);
    tl_store32(h + 20, (uint32_t)raw);
    h[24] = TL_CODEC_NONE;
    size_t stored = raw;
    if (level > 0 && cctx) {
        size_t z = ZSTD_compressCCtx(cctx, h + TL_CHUNK_HEADER_SIZE, bound, b->scratch.data, raw, level);
        if (!ZSTD_isError(z) && z < raw) {
            h[24] = TL_CODEC_ZSTD;
            stored = z;
        }
    }
    if (h[24] == TL_CODEC_NONE)
        memcpy(h + TL_CHUNK_HEADER_SIZE, b->scratch.data, raw);
    out->len = TL_CHUNK_HEADER_SIZE + stored;
    return TRACELOG_OK;
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
    if (h->min_ts > h->max_ts || h->event_count == 0 || h->codec > TL_CODEC_ZSTD)
        return -1;
    /* Each event takes at least 4 body bytes (flag, ts, id, length). */
    if (h->raw_size < TL_CHUNK_TABLE_SIZE || (h->raw_size - TL_CHUNK_TABLE_SIZE) / 4 < h->event_count)
        return -1;
    if (h->codec == TL_CODEC_NONE && len - TL_CHUNK_HEADER_SIZE != h->raw_size)
        return -1;
    return 0;
}

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)

/* Locates the columns of a decompressed body (format-spec section 6). */
static tracelog_status open_columns(tl_chunk_cursor *c, const uint8_t *body, const char **why)
{
    const uint8_t *end = body + c->h.raw_size;
    const uint8_t *p = body + TL_CHUNK_TABLE_SIZE;
    if ((size_t)(end - p) < c->h.event_count)
        CORRUPT("column table exceeds the chunk");
    c->flags = p;
    p += c->h.event_count;
    for (int i = 0; i < TL_CHUNK_COLUMNS; i++) {
        uint32_t n = tl_load32(body + 4 * i);
        if (n > (size_t)(end - p))
            CORRUPT("column table exceeds the chunk");
        c->col[i] = p;
        c->end[i] = p + n;
        p += n;
    }
    c->col[6] = p; /* payload bytes: the rest of the body */
    c->end[6] = end;
    /* Each event has at least one byte in the timestamp, id and length columns. */
    if ((size_t)(c->end[0] - c->col[0]) < c->h.event_count || (size_t)(c->end[1] - c->col[1]) < c->h.event_count ||
        (size_t)(c->end[5] - c->col[5]) < c->h.event_count)
        CORRUPT("column shorter than its events");
    c->index = 0;
    c->ts = c->h.min_ts;
    c->tid = c->addr = 0;
    c->pid = 0;
    return TRACELOG_OK;
}

tracelog_status tl_chunk_open(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx, uint32_t max_raw,
                                    tl_buf *raw, tl_chunk_cursor *c, const char **why)
{
    if (tl_chunk_header_decode(payload, len, &c->h))
        CORRUPT("bad chunk header");
    if (c->h.raw_size > max_raw) {
        *why = "uncompressed chunk larger than the reader's limit";
        return TRACELOG_E_LIMIT;
    }
    const uint8_t *stored = payload + TL_CHUNK_HEADER_SIZE;
    size_t stored_len = len - TL_CHUNK_HEADER_SIZE;
    if (c->h.codec == TL_CODEC_NONE)
        return open_columns(c, stored, why);
    /* Exactly one zstd frame, whose declared size is the chunk's: checked before allocating. */
    if (ZSTD_getFrameContentSize(stored, stored_len) != c->h.raw_size ||
        ZSTD_findFrameCompressedSize(stored, stored_len) != stored_len)
        CORRUPT("zstd frame size differs from the declared size");
    raw->len = 0;
    if (tl_buf_reserve(raw, c->h.raw_size))
        return TRACELOG_E_NOMEM;
    size_t n = ZSTD_decompressDCtx(dctx, raw->data, c->h.raw_size, stored, stored_len);
    if (ZSTD_isError(n) || n != c->h.raw_size)
        CORRUPT("zstd frame does not decompress");
    raw->len = n;
    return open_columns(c, raw->data, why);
}

tracelog_status tl_chunk_next(tl_chunk_cursor *c, tracelog_event *ev, const char **why)
{
    if (c->index == c->h.event_count) {
        for (int i = 0; i < 7; i++)
            if (c->col[i] != c->end[i])
                CORRUPT("column longer than its events");
        return TRACELOG_END;
    }
    uint8_t f = c->flags[c->index];
    uint64_t v;
    if (f & ~TL_REC_KNOWN || (f & TL_REC_TRUNC_MASK) == TL_REC_TRUNC_MASK)
        CORRUPT("bad record flags");
    if (tl_get_varint(&c->col[0], c->end[0], &v))
        CORRUPT("bad timestamp column");
    uint64_t ts = c->ts + (uint64_t)tl_unzigzag(v);
    if (ts < c->h.min_ts || ts > c->h.max_ts)
        CORRUPT("timestamp outside the chunk's range");
    if (tl_get_varint(&c->col[1], c->end[1], &v) || v > UINT32_MAX)
        CORRUPT("bad event id column");
    ev->event_id = (uint32_t)v;
    if (f & TL_REC_PID) {
        if (tl_get_varint(&c->col[2], c->end[2], &v) || v > UINT32_MAX)
            CORRUPT("bad pid column");
        c->pid = (uint32_t)v;
    }
    if ((f & TL_REC_TID) && tl_get_varint(&c->col[3], c->end[3], &c->tid))
        CORRUPT("bad thread id column");
    if (f & TL_REC_ADDR) {
        if (tl_get_varint(&c->col[4], c->end[4], &v))
            CORRUPT("bad address column");
        c->addr += (uint64_t)tl_unzigzag(v);
    }
    if (tl_get_varint(&c->col[5], c->end[5], &v) || v > (uint64_t)(c->end[6] - c->col[6]))
        CORRUPT("bad payload length");
    c->ts = ts;
    ev->timestamp_ns = ts;
    ev->pid = c->pid;
    ev->tid = c->tid;
    ev->address = c->addr;
    ev->truncation = (f & TL_REC_TRUNC_MASK) >> TL_REC_TRUNC_SHIFT;
    ev->payload_len = (uint32_t)v;
    ev->payload = c->col[6];
    c->col[6] += v;
    c->index++;
    return TRACELOG_OK;
}

void tl_chunk_events_free(tl_chunk_events *ce)
{
    tl_buf_free(&ce->raw);
    free(ce->events);
    ce->events = NULL;
    ce->cap = 0;
    ce->count = 0;
}

tracelog_status tl_chunk_decode(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx,
                                      uint32_t max_raw, tl_chunk_events *out, const char **why)
{
    tl_chunk_cursor c;
    out->count = 0;
    tracelog_status st = tl_chunk_open(payload, len, dctx, max_raw, &out->raw, &c, why);
    if (st != TRACELOG_OK)
        return st;
    if (c.h.event_count > out->cap) {
        tracelog_event *e = realloc(out->events, sizeof *e * c.h.event_count);
        if (!e)
            return TRACELOG_E_NOMEM;
        out->events = e;
        out->cap = c.h.event_count;
    }
    uint32_t n = 0;
    while ((st = tl_chunk_next(&c, &out->events[n], why)) == TRACELOG_OK)
        n++;
    if (st != TRACELOG_END)
        return st;
    out->count = n;
    return TRACELOG_OK;
}
