/*
 * The blocks of a log (format-spec/ptl-format.md 8.2-8.4): finding the next
 * valid block header (scanning forward 8 bytes at a time past damage),
 * reading and verifying a payload, handling a block (a chunk is listed, or
 * handed to the caller on a stream; a small block is applied through
 * tables.c), and the open scan of a sequential log.
 */
#include "common/array.h"
#include "format/chunk.h"
#include "format/format.h"
#include "reader/internal.h"

int tl_reader_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/*
 * Finds the next block whose header is valid at or after *pos and before
 * limit, and sets *pos to it. Bytes skipped on the way are [start, *pos) on
 * SCAN_BLOCK, and [start, limit) on SCAN_END; *why tells why the first one
 * failed. The callers decide whether skipped bytes are damage. A zero header
 * at start ends the scan with nothing skipped when quiet_zeros is set (unused
 * space of a ring or durable region).
 */
scan_result tl_reader_scan_block(tracelog_reader *r, uint64_t *pos, uint64_t *limit, int quiet_zeros,
                                 tl_block_header *h, tracelog_status *why)
{
    uint64_t start = *pos, p = *pos;
    uint8_t buf[TL_BLOCK_HEADER_SIZE];
    *why = TRACELOG_E_CORRUPT;
    for (; p < *limit; p += 8) {
        if (!r->src.seekable)
            tl_source_release(&r->src, p);
        ssize_t n = tl_source_read_near(&r->src, p, buf, sizeof buf);
        if (n < 0)
            return SCAN_ERROR;
        if (!r->src.seekable && r->src.eof && p + (uint64_t)n >= r->src.size)
            *limit = r->src.size;
        if ((size_t)n < sizeof buf) {
            *why = TRACELOG_E_TRUNCATED;
            break;
        }
        if (p == start && quiet_zeros && tl_reader_all_zero(buf, sizeof buf)) {
            *limit = start;
            return SCAN_END;
        }
        tl_block_check c = tl_block_header_decode(buf, r->salt32, r->opt.ignore_checksums, h);
        if (c == TL_BLOCK_BAD_CRC && p == start)
            *why = TRACELOG_E_CHECKSUM;
        if (c != TL_BLOCK_OK)
            continue;
        /* A stream's length is known only once it ends: wait for the whole
           block (as a file's size tells at once) before deciding it is
           complete. Oversized blocks are refused later, unread. */
        if (!r->src.seekable && h->payload_len <= r->opt.max_block_size) {
            uint8_t last;
            ssize_t k = tl_source_read(&r->src, p + tl_block_span(h->payload_len) - 1, &last, 1);
            if (k < 0)
                return SCAN_ERROR;
            if (k == 0)
                *limit = r->src.size;
        }
        if (p + tl_block_span(h->payload_len) > *limit) {
            *why = TRACELOG_E_TRUNCATED; /* the data ends inside this block: a write cut short */
            break;
        }
        *pos = p;
        return SCAN_BLOCK;
    }
    if (!r->src.seekable)
        *limit = r->src.size > start ? r->src.size : start;
    *pos = *limit;
    return SCAN_END;
}

void tl_reader_report_skip(tracelog_reader *r, uint64_t from, uint64_t to, tracelog_status why, int at_end)
{
    if (to <= from)
        return;
    if (at_end)
        r->torn_tail = 1;
    if (at_end)
        tl_reader_problem(r, TL_COND_TORN_TAIL, from, to - from, "log ends with an incomplete or damaged block (%s)",
                          tracelog_status_name(why));
    else
        tl_reader_problem(r, why == TRACELOG_E_CHECKSUM ? TL_COND_BLOCK_HEADER_CRC_MISMATCH : TL_COND_BLOCK_HEADER_MISSING,
                          from, to - from, "damaged data skipped (%s)", tracelog_status_name(why));
}

/* A small block's payload into r->payload, verified; a problem is recorded (TRACELOG_E_CORRUPT). */
static tracelog_status load_payload(tracelog_reader *r, uint64_t off, const tl_block_header *h)
{
    tl_loader l = tl_reader_loader(r);
    l.near = 1;
    tl_load_problem p;
    tracelog_status st = tl_load_payload(&l, off, h, &r->payload, &p);
    if (st == TRACELOG_E_CORRUPT)
        tl_reader_load_problem(r, off, &p);
    return st;
}

static tracelog_status add_chunk(tracelog_reader *r, const chunk_ref *c)
{
    chunk_ref *p = tl_grow(r->chunks, &r->chunks_cap, r->nchunks + 1, sizeof *p);
    if (!p)
        return TRACELOG_E_NOMEM;
    r->chunks = p;
    r->chunks[r->nchunks++] = *c;
    r->merged_chunks += (c->ch.flags & TL_CHUNK_MERGE_NEXT) != 0;
    r->stored_bytes += c->payload_len;
    r->raw_bytes += c->ch.raw_size + TL_CHUNK_HEADER_SIZE;
    return TRACELOG_OK;
}

/*
 * Handles one valid block during the open scan (seekable) or while
 * streaming: small blocks are read and applied now; chunks are listed
 * (seekable) or returned to the caller through *is_chunk (stream).
 */
tracelog_status tl_reader_handle_block(tracelog_reader *r, uint64_t off, const tl_block_header *h,
                                       chunk_ref *chunk_out, int *is_chunk)
{
    *is_chunk = 0;
    r->blocks++;
    /* Clean means the newest block is a valid trailer: one written before an
       exec is only a checkpoint once newer blocks follow it. */
    if (h->type != TL_BLOCK_PADDING && h->seq > r->max_seq)
        r->max_seq = h->seq;
    switch (h->type) {
    case TL_BLOCK_CHUNK: {
        uint8_t head[TL_CHUNK_HEADER_SIZE];
        chunk_ref c = {.offset = off, .seq = h->seq, .payload_len = h->payload_len};
        if (h->payload_len < TL_CHUNK_HEADER_SIZE ||
            tl_source_read_near(&r->src, off + TL_BLOCK_HEADER_SIZE, head, sizeof head) != (ssize_t)sizeof head ||
            tl_chunk_header_decode(head, h->payload_len, &c.ch)) {
            tl_reader_problem(r, TL_COND_BAD_CHUNK_HEADER, off, tl_block_span(h->payload_len), "bad chunk header");
            return TRACELOG_OK;
        }
        *chunk_out = c;
        *is_chunk = 1;
        return TRACELOG_OK;
    }
    case TL_BLOCK_METADATA:
    case TL_BLOCK_EVENT_TYPES:
    case TL_BLOCK_STATUS:
    case TL_BLOCK_TRAILER:
    case TL_BLOCK_THREADS: {
        tracelog_status st = load_payload(r, off, h);
        if (st == TRACELOG_E_CORRUPT)
            return TRACELOG_OK; /* recorded; the scan goes on */
        if (st != TRACELOG_OK)
            return st;
        if (h->type == TL_BLOCK_METADATA)
            tl_reader_take_metadata(r, off);
        else if (h->type == TL_BLOCK_EVENT_TYPES)
            tl_reader_take_types(r, off);
        else if (h->type == TL_BLOCK_STATUS)
            tl_reader_take_status(r, off, h->seq);
        else if (h->type == TL_BLOCK_THREADS)
            tl_reader_take_threads(r, off, h->seq);
        else
            tl_reader_take_trailer(r, off, h->seq);
        return TRACELOG_OK;
    }
    default: /* PADDING, or a type from a later minor version: skipped by length */
        return TRACELOG_OK;
    }
}

/* A seekable file's open scan: handles one valid block and lists it if it is a chunk. */
tracelog_status tl_reader_index_block(tracelog_reader *r, uint64_t off, const tl_block_header *h)
{
    chunk_ref c;
    int is_chunk;
    tracelog_status st = tl_reader_handle_block(r, off, h, &c, &is_chunk);
    return st == TRACELOG_OK && is_chunk ? add_chunk(r, &c) : st;
}

/* Sequence numbers of a sequential log increase by one from block to block. */
void tl_reader_check_seq(tracelog_reader *r, uint64_t off, uint64_t seq)
{
    if (r->have_last_seq && seq != r->last_seq + 1)
        tl_reader_problem(r, TL_COND_SEQUENCE_BREAK, off, 0, "blocks missing before this one (sequence %llu after %llu)",
                          (unsigned long long)seq, (unsigned long long)r->last_seq);
    r->last_seq = seq;
    r->have_last_seq = 1;
}

static tracelog_status scan_sequential(tracelog_reader *r);

tracelog_status tl_reader_scan_sequential(tracelog_reader *r)
{
    tl_source_near(&r->src, 1);
    tracelog_status st = scan_sequential(r);
    tl_source_near(&r->src, 0);
    return st;
}

static tracelog_status scan_sequential(tracelog_reader *r)
{
    uint64_t pos = r->hdr.header_size;
    tl_block_header h;
    for (;;) {
        uint64_t from = pos, limit = r->src.size;
        tracelog_status why;
        scan_result s = tl_reader_scan_block(r, &pos, &limit, 0, &h, &why);
        if (s == SCAN_ERROR)
            return TRACELOG_E_IO;
        tl_reader_report_skip(r, from, pos, why, s == SCAN_END);
        if (s == SCAN_END)
            return TRACELOG_OK;
        tl_reader_check_seq(r, pos, h.seq);
        tracelog_status st = tl_reader_index_block(r, pos, &h);
        if (st != TRACELOG_OK)
            return st;
        pos += tl_block_span(h.payload_len);
    }
}
