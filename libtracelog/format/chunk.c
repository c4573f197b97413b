#include "format/chunk.h"

#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"

void tracelog_chunk_builder_reset(tl_chunk_builder *b)
{
    b->flags.len = b->ts.len = b->ids.len = b->pids.len = 0;
    b->tids.len = b->addrs.len = b->lens.len = b->data.len = 0;
    b->count = 0;
    b->min_ts = UINT64_MAX;
    b->max_ts = 0;
    b->prev_ts = b->prev_tid = b->prev_addr = 0;
    b->prev_pid = 0;
}

void tracelog_chunk_builder_free(tl_chunk_builder *b)
{
    tl_buf *bufs[] = {&b->flags, &b->ts, &b->ids, &b->pids, &b->tids,
                      &b->addrs, &b->lens, &b->data, &b->scratch};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        tl_buf_free(bufs[i]);
}

size_t tracelog_chunk_event_bound(const tracelog_event *ev)
{
    return 1 + 5 * TL_VARINT_MAX + (size_t)ev->payload_len;
}

static void put_varint(tl_buf *b, uint64_t v) { b->len += tl_put_varint(b->data + b->len, v); }

tracelog_status tracelog_chunk_add(tl_chunk_builder *b, const tracelog_event *ev)
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

size_t tracelog_chunk_raw_size(const tl_chunk_builder *b)
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
    size_t raw = tracelog_chunk_raw_size(b) - b->ts.len + ts_len;
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

tracelog_status tracelog_chunk_finish(tl_chunk_builder *b, ZSTD_CCtx *cctx, int level, tl_buf *out)
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

int tracelog_chunk_header_decode(const uint8_t *p, size_t len, tl_chunk_header *h)
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

void tracelog_chunk_events_free(tl_chunk_events *ce)
{
    tl_buf_free(&ce->raw);
    free(ce->events);
    ce->events = NULL;
    ce->cap = 0;
    ce->count = 0;
}

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)

static tracelog_status decode_columns(const tl_chunk_header *h, const uint8_t *body,
                                      tl_chunk_events *out, const char **why)
{
    const uint8_t *end = body + h->raw_size;
    const uint8_t *col[7], *col_end[7];
    const uint8_t *p = body + TL_CHUNK_TABLE_SIZE;
    const uint8_t *flags = p;
    if ((size_t)(end - p) < h->event_count)
        CORRUPT("column table exceeds the chunk");
    p += h->event_count;
    for (int i = 0; i < TL_CHUNK_COLUMNS; i++) {
        uint32_t n = tl_load32(body + 4 * i);
        if (n > (size_t)(end - p))
            CORRUPT("column table exceeds the chunk");
        col[i] = p;
        col_end[i] = p + n;
        p += n;
    }
    col[6] = p; /* payload bytes: the rest of the body */
    col_end[6] = end;

    uint64_t ts = h->min_ts, tid = 0, addr = 0;
    uint32_t pid = 0;
    tracelog_event *ev = out->events;
    for (uint32_t i = 0; i < h->event_count; i++, ev++) {
        uint8_t f = flags[i];
        uint64_t v;
        if (f & ~TL_REC_KNOWN || (f & TL_REC_TRUNC_MASK) == TL_REC_TRUNC_MASK)
            CORRUPT("bad record flags");
        if (tl_get_varint(&col[0], col_end[0], &v))
            CORRUPT("bad timestamp column");
        ts += (uint64_t)tl_unzigzag(v);
        if (ts < h->min_ts || ts > h->max_ts)
            CORRUPT("timestamp outside the chunk's range");
        if (tl_get_varint(&col[1], col_end[1], &v) || v > UINT32_MAX)
            CORRUPT("bad event id column");
        ev->event_id = (uint32_t)v;
        if (f & TL_REC_PID) {
            if (tl_get_varint(&col[2], col_end[2], &v) || v > UINT32_MAX)
                CORRUPT("bad pid column");
            pid = (uint32_t)v;
        }
        if ((f & TL_REC_TID) && tl_get_varint(&col[3], col_end[3], &tid))
            CORRUPT("bad thread id column");
        if (f & TL_REC_ADDR) {
            if (tl_get_varint(&col[4], col_end[4], &v))
                CORRUPT("bad address column");
            addr += (uint64_t)tl_unzigzag(v);
        }
        if (tl_get_varint(&col[5], col_end[5], &v) || v > (uint64_t)(col_end[6] - col[6]))
            CORRUPT("bad payload length");
        ev->timestamp_ns = ts;
        ev->pid = pid;
        ev->tid = tid;
        ev->address = addr;
        ev->truncation = (f & TL_REC_TRUNC_MASK) >> TL_REC_TRUNC_SHIFT;
        ev->payload_len = (uint32_t)v;
        ev->payload = col[6];
        col[6] += v;
    }
    for (int i = 0; i < 7; i++)
        if (col[i] != col_end[i])
            CORRUPT("column longer than its events");
    out->count = h->event_count;
    return TRACELOG_OK;
}

tracelog_status tracelog_chunk_decode(const uint8_t *payload, size_t len, ZSTD_DCtx *dctx,
                                      uint32_t max_raw, tl_chunk_events *out, const char **why)
{
    tl_chunk_header h;
    out->count = 0;
    if (tracelog_chunk_header_decode(payload, len, &h))
        CORRUPT("bad chunk header");
    if (h.raw_size > max_raw) {
        *why = "uncompressed chunk larger than the reader's limit";
        return TRACELOG_E_LIMIT;
    }
    const uint8_t *stored = payload + TL_CHUNK_HEADER_SIZE;
    size_t stored_len = len - TL_CHUNK_HEADER_SIZE;
    const uint8_t *body = stored;
    if (h.codec == TL_CODEC_ZSTD) {
        unsigned long long fcs = ZSTD_getFrameContentSize(stored, stored_len);
        if (fcs != h.raw_size)
            CORRUPT("zstd frame size differs from the declared size");
        out->raw.len = 0;
        if (tl_buf_reserve(&out->raw, h.raw_size))
            return TRACELOG_E_NOMEM;
        size_t n = ZSTD_decompressDCtx(dctx, out->raw.data, h.raw_size, stored, stored_len);
        if (ZSTD_isError(n) || n != h.raw_size)
            CORRUPT("zstd frame does not decompress");
        body = out->raw.data;
    }
    if (h.event_count > out->cap) {
        tracelog_event *e = realloc(out->events, sizeof *e * h.event_count);
        if (!e)
            return TRACELOG_E_NOMEM;
        out->events = e;
        out->cap = h.event_count;
    }
    return decode_columns(&h, body, out, why);
}
