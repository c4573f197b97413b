/*
 * Loading one chunk (format-spec/ptl-format.md 6.7, 8.7): its payload read
 * and verified, its body decompressed and opened in a merge slot. What it
 * finds wrong comes back as a problem for the caller to record, and it
 * touches nothing of the reader but through its tl_loader: so the read-ahead
 * thread (read_ahead.c) runs it on its own buffers while the caller's thread
 * delivers events, and the problems still reach the reader in file order.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "reader/internal.h"

static tracelog_status problem(tl_load_problem *p, tl_condition cond, uint64_t len, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static tracelog_status problem(tl_load_problem *p, tl_condition cond, uint64_t len, const char *fmt, ...)
{
    p->cond = cond;
    p->len = len;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    va_end(ap);
    return TRACELOG_E_CORRUPT;
}

/* The payload in buf (h->payload_len bytes) checked against the header's checksum. */
static tracelog_status check_payload(const tl_loader *l, const tl_block_header *h, const tl_buf *buf,
                                     tl_load_problem *p)
{
    if (!l->opt->ignore_checksums && tl_block_payload_crc(l->salt32, buf->data, h->payload_len) != h->payload_crc)
        return problem(p, TL_COND_PAYLOAD_CRC_MISMATCH, tl_block_span(h->payload_len),
                       "block payload checksum mismatch");
    return TRACELOG_OK;
}

/* Room in buf for n bytes, at least one, so that an empty payload still has a non-NULL base
   (the decoders compute data + len, undefined on NULL). */
static int make_room(tl_buf *buf, size_t n)
{
    buf->len = 0;
    return tl_buf_reserve(buf, n ? n : 1);
}

tracelog_status tl_load_payload(const tl_loader *l, uint64_t off, const tl_block_header *h, tl_buf *buf,
                                tl_load_problem *p)
{
    if (h->payload_len > l->opt->max_block_size)
        return problem(p, TL_COND_BLOCK_TOO_LARGE, tl_block_span(h->payload_len),
                       "block of %u bytes exceeds the reader's limit", h->payload_len);
    if (make_room(buf, h->payload_len))
        return TRACELOG_E_NOMEM;
    ssize_t n = (l->near ? tl_source_read_near : tl_source_read)(l->src, off + TL_BLOCK_HEADER_SIZE, buf->data,
                                                                 h->payload_len);
    if (n < 0)
        return TRACELOG_E_IO;
    if (n != (ssize_t)h->payload_len)
        return problem(p, TL_COND_FILE_CHANGED, 0, "cannot read block payload: the file shrank");
    buf->len = h->payload_len;
    return check_payload(l, h, buf, p);
}

/* The payload in buf (checked) opened in m's cursor. */
static tracelog_status open_chunk(const tl_loader *l, tl_merge_slot *m, const tl_block_header *h, tl_buf *buf,
                                  tl_load_problem *p)
{
    const char *why = "";
    tracelog_status st = tl_chunk_open(buf->data, buf->len, l->dctx, l->opt->max_chunk_size, &m->cur, &why);
    if (st == TRACELOG_E_NOMEM)
        return st;
    if (st != TRACELOG_OK)
        return problem(p, st == TRACELOG_E_LIMIT ? TL_COND_CHUNK_TOO_LARGE : TL_COND_BAD_CHUNK_BODY,
                       tl_block_span(h->payload_len), "chunk: %s", why);
    if (m->cur.h.codec == TL_CODEC_NONE && buf != &m->payload) { /* the file changed since the header was read */
        tl_buf t = m->payload;
        m->payload = *l->scratch;
        *l->scratch = t;
    }
    return TRACELOG_OK;
}

/* A stored (codec 0) chunk's cursor points into its payload, which the slot keeps; a compressed one's
   payload is needed only while it is decompressed. */
static tl_buf *payload_buf(const tl_loader *l, tl_merge_slot *m, uint8_t codec)
{
    return codec == TL_CODEC_NONE ? &m->payload : l->scratch;
}

tracelog_status tl_load_chunk(const tl_loader *l, tl_merge_slot *m, const tl_block_header *h, uint8_t codec,
                              tl_load_problem *p)
{
    tl_buf *buf = payload_buf(l, m, codec);
    tracelog_status st = tl_load_payload(l, m->off, h, buf, p);
    return st == TRACELOG_OK ? open_chunk(l, m, h, buf, p) : st;
}

/* Payloads up to this size are read with their header in one pread (a log of small flushes has many). */
#define ONE_READ_MAX (16u << 10)

tracelog_status tl_load_indexed(const tl_loader *l, const chunk_ref *c, tl_merge_slot *m, tl_load_problem *p)
{
    m->off = c->offset;
    m->seq = c->seq;
    tl_block_header h = {TL_BLOCK_CHUNK, 0, c->seq, c->payload_len, 0};
    /* The header was verified at open; read it again for the payload checksum, with the payload when small
       (the length is the one the open scan saw: a header that says otherwise is refused below). */
    int whole = c->payload_len <= ONE_READ_MAX && c->payload_len <= l->opt->max_block_size;
    size_t want = TL_BLOCK_HEADER_SIZE + (whole ? c->payload_len : 0);
    tl_buf *buf = payload_buf(l, m, c->ch.codec);
    if (make_room(buf, want))
        return TRACELOG_E_NOMEM;
    ssize_t n = tl_source_read(l->src, c->offset, buf->data, want);
    if (n < 0)
        return TRACELOG_E_IO;
    /* A ring's writer may have put a block of a later lap there since: valid, with the log's salt, but
       another chunk, whose newer events would come out in this one's place (out of order). */
    if (n < TL_BLOCK_HEADER_SIZE ||
        tl_block_header_decode(buf->data, l->salt32, l->opt->ignore_checksums, &h) != TL_BLOCK_OK ||
        h.type != TL_BLOCK_CHUNK || h.seq != c->seq || h.payload_len != c->payload_len)
        return problem(p, TL_COND_FILE_CHANGED, 0, "chunk header changed since open");
    if (!whole)
        return tl_load_chunk(l, m, &h, c->ch.codec, p);
    if (n != (ssize_t)want)
        return problem(p, TL_COND_FILE_CHANGED, 0, "cannot read block payload: the file shrank");
    memmove(buf->data, buf->data + TL_BLOCK_HEADER_SIZE, h.payload_len);
    buf->len = h.payload_len;
    tracelog_status st = check_payload(l, &h, buf, p);
    return st == TRACELOG_OK ? open_chunk(l, m, &h, buf, p) : st;
}
