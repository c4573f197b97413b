/*
 * The format 1.0 column body (format-spec/ptl-format.md 6.3 to 6.6): read
 * only. Writers of format 1.1 write the keyed body (chunk_keyed_write.c);
 * logs written before keep this one and are read forever.
 */
#include "format/chunk.h"

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)

tracelog_status tl_columns_open(tl_chunk_cursor *c, const uint8_t *body, const char **why)
{
    const uint8_t *end = body + c->h.raw_size;
    const uint8_t *p = body + TL_COLUMNS_TABLE_SIZE;
    if ((size_t)(end - p) < c->h.event_count)
        CORRUPT("column table exceeds the chunk");
    c->flags = p;
    p += c->h.event_count;
    for (int i = 0; i < 6; i++) {
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
    c->tid = c->addr = 0;
    c->pid = 0;
    return TRACELOG_OK;
}

tracelog_status tl_columns_next(tl_chunk_cursor *c, tracelog_event *ev, const char **why)
{
    c->last_key = NULL;
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
