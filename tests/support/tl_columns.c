/*
 * The format 1.0 column body encoder (format-spec/ptl-format.md 6.3 to
 * 6.6). The library writes keyed bodies since format 1.1 and only reads
 * column bodies; the tests make them with this to check the reader on them.
 */
#include "tl_columns.h"

#include <string.h>

#include "common/bytes.h"

static void put_varint(tl_buf *b, uint64_t v) { b->len += tl_put_varint(b->data + b->len, v); }

static tracelog_status put_all(tl_buf *b, uint64_t v)
{
    if (tl_buf_reserve(b, TL_VARINT_MAX))
        return TRACELOG_E_NOMEM;
    put_varint(b, v);
    return TRACELOG_OK;
}

tracelog_status tl_test_columns_chunk(const tracelog_event *ev, size_t n, ZSTD_CCtx *cctx, int level,
                                      tl_buf *out)
{
    if (n == 0 || n > UINT32_MAX)
        return TRACELOG_E_INVAL;
    tl_buf col[6] = {{0}}; /* ts, id, pid, tid, addr, len */
    tl_buf flags = {0}, data = {0}, body = {0};
    uint64_t min = UINT64_MAX, max = 0, prev_tid = 0, prev_addr = 0;
    uint32_t prev_pid = 0;
    tracelog_status st = TRACELOG_OK;
    for (size_t i = 0; i < n; i++) {
        min = ev[i].timestamp_ns < min ? ev[i].timestamp_ns : min;
        max = ev[i].timestamp_ns > max ? ev[i].timestamp_ns : max;
    }
    uint64_t prev_ts = min;
    for (size_t i = 0; i < n && st == TRACELOG_OK; i++) {
        const tracelog_event *e = &ev[i];
        if (e->truncation > TRACELOG_TRUNC_READ || (e->payload_len && !e->payload))
            st = TRACELOG_E_INVAL;
        uint8_t f = (uint8_t)(e->truncation << TL_REC_TRUNC_SHIFT);
        if (st == TRACELOG_OK && e->pid != prev_pid) {
            f |= TL_REC_PID;
            st = put_all(&col[2], e->pid);
            prev_pid = e->pid;
        }
        if (st == TRACELOG_OK && e->tid != prev_tid) {
            f |= TL_REC_TID;
            st = put_all(&col[3], e->tid);
            prev_tid = e->tid;
        }
        if (st == TRACELOG_OK && e->address != prev_addr) {
            f |= TL_REC_ADDR;
            st = put_all(&col[4], tl_zigzag((int64_t)(e->address - prev_addr)));
            prev_addr = e->address;
        }
        if (st == TRACELOG_OK)
            st = put_all(&col[0], tl_zigzag((int64_t)(e->timestamp_ns - prev_ts)));
        prev_ts = e->timestamp_ns;
        if (st == TRACELOG_OK)
            st = put_all(&col[1], e->event_id);
        if (st == TRACELOG_OK)
            st = put_all(&col[5], e->payload_len);
        if (st == TRACELOG_OK && (tl_buf_append(&flags, &f, 1) || tl_buf_append(&data, e->payload, e->payload_len)))
            st = TRACELOG_E_NOMEM;
    }
    uint8_t table[TL_COLUMNS_TABLE_SIZE];
    for (int i = 0; i < 6; i++)
        tl_store32(table + 4 * i, (uint32_t)col[i].len);
    if (st == TRACELOG_OK && (tl_buf_append(&body, table, sizeof table) || tl_buf_append(&body, flags.data, flags.len)))
        st = TRACELOG_E_NOMEM;
    for (int i = 0; i < 6 && st == TRACELOG_OK; i++)
        if (tl_buf_append(&body, col[i].data, col[i].len))
            st = TRACELOG_E_NOMEM;
    if (st == TRACELOG_OK && tl_buf_append(&body, data.data, data.len))
        st = TRACELOG_E_NOMEM;
    size_t bound = ZSTD_compressBound(body.len);
    out->len = 0;
    if (st == TRACELOG_OK && tl_buf_reserve(out, TL_CHUNK_HEADER_SIZE + (bound > body.len ? bound : body.len)))
        st = TRACELOG_E_NOMEM;
    if (st == TRACELOG_OK) {
        uint8_t *h = out->data;
        memset(h, 0, TL_CHUNK_HEADER_SIZE);
        tl_store64(h, min);
        tl_store64(h + 8, max);
        tl_store32(h + 16, (uint32_t)n);
        tl_store32(h + 20, (uint32_t)body.len);
        h[25] = TL_BODY_COLUMNS;
        size_t stored = body.len;
        size_t z = level > 0 ? ZSTD_compressCCtx(cctx, h + TL_CHUNK_HEADER_SIZE, bound, body.data, body.len, level) : 0;
        if (level > 0 && !ZSTD_isError(z) && z < body.len) {
            h[24] = TL_CODEC_ZSTD;
            stored = z;
        } else if (body.len) {
            memcpy(h + TL_CHUNK_HEADER_SIZE, body.data, body.len);
        }
        out->len = TL_CHUNK_HEADER_SIZE + stored;
    }
    for (int i = 0; i < 6; i++)
        tl_buf_free(&col[i]);
    tl_buf_free(&flags);
    tl_buf_free(&data);
    tl_buf_free(&body);
    return st;
}
