/*
 * The open scan of a ring (LOOP) log (format-spec/ptl-format.md 8.5): the
 * durable region, then the segments, oldest first. It finds where each
 * segment's data starts (a SEGMENT block of the current lap, or past an
 * older lap's blocks), where the ring's data ends, and which blocks were
 * lost (a segment's end, the durable region's end, gaps in the sequence
 * numbers), and lists the chunks in sequence order.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "format/format.h"
#include "format/segment.h"
#include "reader/internal.h"

/* What the head of a ring segment holds. */
enum { HEAD_OK, HEAD_BAD, HEAD_STALE };

typedef struct segment_ref {
    uint32_t index;
    uint64_t first_seq; /* sort key: the seq its data starts at */
    uint64_t bound;     /* blocks of seq <= bound before its data are an older lap's */
    int head;           /* HEAD_*: of a ring with SEGMENT blocks (HEAD_OK otherwise) */
    uint64_t lap;       /* from its SEGMENT block (HEAD_OK only) */
    uint64_t last_seq;  /* newest block its first (dry) walk found */
    int left;           /* that walk found the writer's end of the segment: the writer moved on */
} segment_ref;

static int by_first_seq(const void *a, const void *b)
{
    uint64_t x = ((const segment_ref *)a)->first_seq, y = ((const segment_ref *)b)->first_seq;
    return x < y ? -1 : x > y;
}

static int by_chunk_seq(const void *a, const void *b)
{
    uint64_t x = ((const chunk_ref *)a)->seq, y = ((const chunk_ref *)b)->seq;
    return x < y ? -1 : x > y;
}

/* How the blocks of a region (a ring segment or the durable region) ended. */
typedef struct region_end {
    uint64_t limit;    /* end of the region's bytes in the file */
    uint64_t run;      /* leading blocks whose seqs are 0, 1, 2, ...: in the durable region,
                          the history of a ring before its first ring block */
    int closed;        /* a PADDING block or an older lap's block ends them: the writer moved on */
    int padded;        /* a PADDING block ends them */
    int marked;        /* the END marker of their last block ends them (headed ring) */
    uint64_t torn_at;  /* bytes from here to limit hold no valid block (0: none) */
    uint64_t first_at; /* offset of the first block taken (UINT64_MAX: none) */
    uint64_t first_seq; /* and its seq */
    uint64_t data_end; /* end of the last block taken (the region's start if none) */
    tracelog_status why;
} region_end;

/* Runs of consecutive sequence numbers found in a ring, each with the offset of its first block. */
typedef struct seq_run {
    uint64_t first, last, offset;
} seq_run;

typedef struct seq_runs {
    seq_run *run;
    size_t n, cap;
    uint64_t *excused; /* gaps that start or end at these seqs were reported where they are */
    size_t nexcused, excused_cap;
} seq_runs;

static tracelog_status note_seq(seq_runs *s, uint64_t seq, uint64_t offset)
{
    if (s->n && s->run[s->n - 1].last + 1 == seq) {
        s->run[s->n - 1].last = seq;
        return TRACELOG_OK;
    }
    seq_run *p = tl_grow(s->run, &s->cap, s->n + 1, sizeof *p);
    if (!p)
        return TRACELOG_E_NOMEM;
    s->run = p;
    s->run[s->n++] = (seq_run){seq, seq, offset};
    return TRACELOG_OK;
}

static int by_run_first(const void *a, const void *b)
{
    uint64_t x = ((const seq_run *)a)->first, y = ((const seq_run *)b)->first;
    return x < y ? -1 : x > y;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int excused(const seq_runs *s, uint64_t seq)
{
    return s->nexcused && bsearch(&seq, s->excused, s->nexcused, sizeof seq, by_u64);
}

static tracelog_status excuse(seq_runs *s, uint64_t seq)
{
    uint64_t *p = tl_grow(s->excused, &s->excused_cap, s->nexcused + 1, sizeof *p);
    if (!p)
        return TRACELOG_E_NOMEM;
    s->excused = p;
    s->excused[s->nexcused++] = seq;
    return TRACELOG_OK;
}

/*
 * A ring writer numbers every block it writes, durable or not, PADDING
 * included: from the oldest segment's first block on, every number up to
 * the newest must have been found. A missing one is a block lost to damage
 * (a segment's last blocks, the newest event types) that the scan could not
 * see, since what ends a segment looks like the end of the data. Gaps
 * already reported as a lost segment end (which the gap starts after) or a
 * bad segment head (which it ends at) are not reported again.
 */
static void check_ring_seqs(tracelog_reader *r, seq_runs *s, uint64_t oldest)
{
    if (s->n == 0) /* no block found: nothing to check (and qsort must not get NULL) */
        return;
    qsort(s->run, s->n, sizeof *s->run, by_run_first);
    if (s->nexcused > 1)
        qsort(s->excused, s->nexcused, sizeof *s->excused, by_u64);
    uint64_t next = oldest; /* the smallest number not yet found */
    for (size_t i = 0; i < s->n; i++) {
        const seq_run *run = &s->run[i];
        if (run->last < next)
            continue;
        if (run->first > next && !excused(s, next) && !excused(s, run->first))
            tl_reader_problem(r, TL_COND_SEQUENCE_BREAK, run->offset, 0, "ring: blocks %llu to %llu missing before this one",
                              (unsigned long long)next, (unsigned long long)(run->first - 1));
        next = run->last + 1;
    }
}

enum {
    WALK_DRY = 1,        /* find the blocks only: no problem reported, nothing handled or noted */
    WALK_SKIP_STALE = 2, /* blocks of seq <= *last_seq before the first one taken are an older lap's */
    WALK_MARKED = 4,     /* a headed ring's segment: END markers are never taken (7.5) */
};

/*
 * Blocks of one region, in order, while their sequence numbers increase;
 * their seqs go to seqs. With WALK_SKIP_STALE, an older lap's block met
 * before the region's data is stepped over 8 bytes at a time, its length
 * not trusted: the newer blocks written over it need not start where it
 * ends. The bytes before the first block taken are then the caller's to
 * report.
 */
static tracelog_status scan_segment(tracelog_reader *r, uint64_t start, uint64_t end, uint64_t *last_seq,
                                    region_end *how, seq_runs *seqs, int mode)
{
    uint64_t pos = start;
    tl_block_header h;
    memset(how, 0, sizeof *how);
    how->limit = end;
    how->first_at = UINT64_MAX;
    how->data_end = start;
    while (pos < end) {
        uint64_t from = pos, limit = end;
        tracelog_status why;
        scan_result s = tl_reader_scan_block(r, &pos, &limit, how->first_at == UINT64_MAX ? !(mode & WALK_SKIP_STALE) : 1,
                                             &h, &why);
        if (s == SCAN_ERROR)
            return TRACELOG_E_IO;
        if (s == SCAN_END) {
            if (limit > from) { /* bytes up to the limit, none of them a block */
                how->torn_at = from;
                how->why = why;
            }
            break;
        }
        /* An END marker is no block: right after the last block taken, with
           its seq, it is the writer's end of the data; anywhere else an older
           write's, stepped over before the data, the end of it after. */
        if ((mode & WALK_MARKED) && h.type == TL_BLOCK_END) {
            if (how->first_at == UINT64_MAX) {
                pos += 8;
                continue;
            }
            how->closed = 1;
            how->marked = pos == how->data_end && h.seq == *last_seq;
            break;
        }
        /* What follows the newest block of a segment is what the previous lap
           left there: skipped bytes are damage only if newer blocks follow. */
        if (h.seq <= *last_seq && (pos != start || (mode & WALK_SKIP_STALE))) {
            if (how->first_at == UINT64_MAX && (mode & WALK_SKIP_STALE)) {
                pos += 8;
                continue;
            }
            how->closed = 1;
            break;
        }
        if (!(mode & WALK_DRY) && (how->first_at != UINT64_MAX || !(mode & WALK_SKIP_STALE)))
            tl_reader_report_skip(r, from, pos, why, 0);
        if (how->first_at == UINT64_MAX) {
            how->first_at = pos;
            how->first_seq = h.seq;
        }
        *last_seq = h.seq;
        how->data_end = pos + tl_block_span(h.payload_len);
        if (!(mode & WALK_DRY) && note_seq(seqs, h.seq, pos) != TRACELOG_OK)
            return TRACELOG_E_NOMEM;
        if (h.type == TL_BLOCK_PADDING) { /* the writer's end of the segment */
            how->closed = how->padded = 1;
            break;
        }
        if (h.seq == how->run)
            how->run++;
        if (!(mode & WALK_DRY)) {
            tracelog_status st = tl_reader_index_block(r, pos, &h);
            if (st != TRACELOG_OK)
                return st;
        }
        pos += tl_block_span(h.payload_len);
    }
    return TRACELOG_OK;
}

/*
 * Must the file reach into the ring's last segment? Yes if the writer went
 * round the ring: a segment holds newer blocks than a later one (segs sorted
 * by first_seq), or the oldest segment does not follow the durable region's
 * blocks (all blocks written before a first lap's segment 0 are durable
 * ones, seqs 0, 1, 2, ...), or a SEGMENT block says so. With no segment in
 * the file, yes if the durable region's seqs have a gap: blocks went to a
 * ring the file does not hold.
 */
static int ring_wrapped(const segment_ref *segs, size_t n, uint64_t durable_run, uint64_t durable_last)
{
    if (n == 0)
        return durable_last >= durable_run;
    for (size_t i = 0; i < n; i++)
        if ((i > 0 && segs[i].index < segs[i - 1].index) || (segs[i].head == HEAD_OK && segs[i].lap > 0))
            return 1;
    return segs[0].first_seq > durable_run;
}

/*
 * The end of a ring's data (8.5). A ring still on its first lap ends where
 * its newest block ends, as a sequential log does: bytes after that block
 * are a torn tail. A ring the writer went round has had every segment
 * written, so its file reaches into the last segment, whose blocks end with
 * a PADDING block, an older lap's block, the end of the file if the writer
 * is in that segment, or fewer than 32 bytes before the end of the geometry;
 * otherwise the file was cut short. It also reaches as far as any SEGMENT
 * block says earlier laps wrote (need_end). In a headed ring the newest
 * segment's last block is followed by its END marker, or is a PADDING block
 * (7.5): otherwise the last write was torn, whatever the lap, and the bytes
 * after the last block taken are that torn write's and an older lap's.
 * newest is the scan of the region holding the newest blocks (marked: a
 * headed segment's), last that of the last segment (NULL if it holds no
 * block), head_cut the offset of a segment that starts less than 32 bytes
 * before the end of the file (0 if none).
 */
static void check_ring_end(tracelog_reader *r, int wrapped, const region_end *newest, int marked,
                           const region_end *last, uint64_t head_cut, uint64_t need_end)
{
    uint64_t size = r->src.size;
    if (!wrapped && head_cut) {
        tl_reader_report_skip(r, head_cut, size, TRACELOG_E_TRUNCATED, 1);
    } else if (marked) {
        if (newest->first_at != UINT64_MAX && !newest->marked && !newest->padded) {
            r->torn_tail = 1;
            tl_reader_problem(r, TL_COND_TORN_TAIL, newest->data_end, newest->limit - newest->data_end,
                              "log ends with an incomplete or damaged block (no END marker after the ring's newest block)");
        }
    } else if (!wrapped && newest->torn_at && newest->limit == size) {
        tl_reader_report_skip(r, newest->torn_at, size, newest->why, 1);
    }
    if (!wrapped)
        return;
    uint64_t ring_end = r->hdr.ring_offset + (uint64_t)r->hdr.segment_count * r->hdr.segment_size;
    if (size >= need_end &&
        (size + TL_BLOCK_HEADER_SIZE > ring_end || (last && (last->closed || last == newest))))
        return;
    r->torn_tail = 1;
    tl_reader_problem(r, TL_COND_RING_CUT_SHORT, size, 0, "ring ends early: file shorter than its geometry, up to %llu bytes missing",
                      (unsigned long long)(ring_end - size));
}

static uint64_t segment_start(const tracelog_reader *r, uint32_t index)
{
    return r->hdr.ring_offset + (uint64_t)index * r->hdr.segment_size;
}

static uint64_t segment_end(const tracelog_reader *r, uint32_t index)
{
    uint64_t end = segment_start(r, index) + r->hdr.segment_size;
    return end < r->src.size ? end : r->src.size;
}

/* Where a segment's walk starts: past a damaged head, which is no block of it. */
static uint64_t data_start(const tracelog_reader *r, const segment_ref *s)
{
    return segment_start(r, s->index) + (s->head == HEAD_BAD ? 8 : 0);
}

/*
 * The head of segment i of a ring with SEGMENT blocks: HEAD_OK and its
 * SEGMENT block's seq, lap and extent when it starts with a valid one of
 * this segment, else HEAD_BAD. -1 on an I/O error.
 */
static int read_segment_head(tracelog_reader *r, uint32_t i, segment_ref *s, uint64_t *need_end)
{
    uint8_t buf[TL_SEGMENT_SPAN];
    tl_block_header h;
    tl_segment_info info;
    uint64_t off = segment_start(r, i);
    ssize_t k = tl_source_read(&r->src, off, buf, sizeof buf);
    if (k < 0)
        return -1;
    *s = (segment_ref){.index = i, .head = HEAD_BAD};
    if (k == (ssize_t)sizeof buf && tl_block_header_decode(buf, r->salt32, r->opt.ignore_checksums, &h) == TL_BLOCK_OK &&
        h.type == TL_BLOCK_SEGMENT && tl_segment_decode(buf + TL_BLOCK_HEADER_SIZE, h.payload_len, &info) == 0 &&
        (r->opt.ignore_checksums ||
         tl_block_payload_crc(r->salt32, buf + TL_BLOCK_HEADER_SIZE, h.payload_len) == h.payload_crc) &&
        info.index == i) {
        s->head = HEAD_OK;
        s->first_seq = h.seq;
        s->lap = info.lap;
        if (off + info.extent > *need_end)
            *need_end = off + info.extent;
    }
    return 0;
}

/*
 * Finds the segments that start inside the file, each with the seq its
 * blocks start at, reporting those whose start is damaged (8.5 step 2).
 * With SEGMENT blocks, a segment whose head is damaged is still used from
 * its first valid block, and its blocks are walked once (dry) to learn how
 * they end.
 */
static tracelog_status find_segments(tracelog_reader *r, int headed, uint64_t nseg, segment_ref *segs, size_t *n,
                                     uint64_t *head_cut, uint64_t *need_end)
{
    for (uint32_t i = 0; i < nseg; i++) {
        uint64_t off = segment_start(r, i);
        uint8_t buf[TL_BLOCK_HEADER_SIZE];
        tl_block_header h;
        ssize_t k = tl_source_read(&r->src, off, buf, sizeof buf);
        if (k < 0)
            return TRACELOG_E_IO;
        if (k < (ssize_t)sizeof buf) {
            *head_cut = off; /* the file ends inside this segment's first block header */
            continue;
        }
        if (tl_reader_all_zero(buf, sizeof buf))
            continue; /* never written */
        segment_ref *s = &segs[*n];
        if (!headed) {
            if (tl_block_header_decode(buf, r->salt32, r->opt.ignore_checksums, &h) == TL_BLOCK_OK) {
                *s = (segment_ref){.index = i, .first_seq = h.seq, .bound = h.seq ? h.seq - 1 : 0};
                (*n)++;
            } else {
                tl_reader_problem(r, TL_COND_BAD_SEGMENT_START, off, r->hdr.segment_size, "ring segment %u has no valid first block", i);
            }
            continue;
        }
        if (read_segment_head(r, i, s, need_end) < 0)
            return TRACELOG_E_IO;
        region_end how;
        uint64_t last = s->head == HEAD_OK && s->first_seq ? s->first_seq - 1 : 0;
        tracelog_status st = scan_segment(r, data_start(r, s), segment_end(r, i), &last, &how, NULL,
                                          WALK_DRY | WALK_MARKED | (s->head == HEAD_OK ? 0 : WALK_SKIP_STALE));
        if (st != TRACELOG_OK)
            return st;
        if (how.first_at == UINT64_MAX) { /* not one valid block */
            tl_reader_problem(r, TL_COND_BAD_SEGMENT_HEADER, off, segment_end(r, i) - off,
                              "ring segment %u: no SEGMENT block, and no block after it", i);
            continue;
        }
        if (s->head != HEAD_OK)
            s->first_seq = how.first_seq;
        s->bound = s->first_seq ? s->first_seq - 1 : 0;
        s->last_seq = last;
        /* Only a PADDING block says the writer moved on: a segment filled to
           its last 32 bytes may still be the one it is in. */
        s->left = how.padded;
        (*n)++;
    }
    return TRACELOG_OK;
}

static int by_index(const void *a, const void *b)
{
    uint32_t x = ((const segment_ref *)a)->index, y = ((const segment_ref *)b)->index;
    return x < y ? -1 : x > y;
}

/* The segment with the newest SEGMENT block: the highest (lap, index). NULL if none. */
static const segment_ref *newest_head(const segment_ref *segs, size_t n)
{
    const segment_ref *top = NULL;
    for (size_t k = 0; k < n; k++)
        if (segs[k].head == HEAD_OK && (!top || segs[k].lap > top->lap || (segs[k].lap == top->lap && segs[k].index > top->index)))
            top = &segs[k];
    return top;
}

/*
 * Segment i's head is an older lap's (its SEGMENT block of the current lap
 * was lost: 8.5) when
 *  - its lap is below the one the newest SEGMENT block implies for it (the
 *    writer passes the segments in order), or
 *  - the segment before it, p, has a block newer than that head, and p ends
 *    with a PADDING block (the writer enters a segment only after ending
 *    the one before it so) or segment i holds blocks newer than p's; its
 *    blocks must then also be newer than p's.
 * The head and the blocks before the segment's data are then skipped. segs
 * is in index order.
 */
static void raise_bounds(const tracelog_reader *r, segment_ref *segs, size_t n)
{
    const segment_ref *top = newest_head(segs, n);
    uint64_t top_lap = top ? top->lap : 0;
    uint32_t top_index = top ? top->index : 0;
    for (size_t k = 0; k < n; k++) {
        segment_ref *s = &segs[k];
        int stale = 0;
        segment_ref key = {.index = s->index ? s->index - 1 : r->hdr.segment_count - 1};
        const segment_ref *p = bsearch(&key, segs, n, sizeof *segs, by_index);
        if (p && p->last_seq >= s->first_seq && (p->left || s->last_seq > p->last_seq)) {
            s->bound = p->last_seq;
            stale = 1;
        }
        /* (An index above top's has a lower lap than top's, so top_lap - 1 does not wrap.) */
        if (s->head == HEAD_OK && top && s->lap < (s->index <= top_index ? top_lap : top_lap - 1)) {
            if (s->bound < s->first_seq)
                s->bound = s->first_seq;
            stale = 1;
        }
        if (!stale)
            continue;
        s->first_seq = s->bound + 1; /* its data, if any, is newer */
        if (s->head == HEAD_OK)
            s->head = HEAD_STALE;
    }
}

/*
 * Reports a segment whose head is not its SEGMENT block of the current lap,
 * with the bytes before its data; the seqs lost with them are that loss.
 */
static tracelog_status report_head(tracelog_reader *r, const segment_ref *s, const region_end *how, seq_runs *seqs)
{
    uint64_t off = segment_start(r, s->index);
    uint64_t to = how->first_at == UINT64_MAX ? how->limit : how->first_at;
    tl_reader_problem(r, TL_COND_BAD_SEGMENT_HEADER, off, to - off,
                      s->head == HEAD_STALE ? "ring segment %u starts with an older lap's blocks" :
                                    "ring segment %u has no valid SEGMENT block", s->index);
    return how->first_at == UINT64_MAX ? TRACELOG_OK : excuse(seqs, how->first_seq);
}

/*
 * A segment the writer left (a newer one follows) ends with a PADDING block
 * or within 32 bytes of its end: if its blocks stop before, its end was lost
 * (8.5). The missing seqs are that loss, not another SEQUENCE_BREAK.
 */
static tracelog_status check_segment_end(tracelog_reader *r, const segment_ref *s, const region_end *how,
                                         uint64_t last_seq, seq_runs *seqs)
{
    uint64_t full = segment_start(r, s->index) + r->hdr.segment_size;
    if (how->first_at == UINT64_MAX || how->padded || how->data_end + TL_BLOCK_HEADER_SIZE > full)
        return TRACELOG_OK;
    tl_reader_problem(r, TL_COND_SEGMENT_END_LOST, how->data_end, how->limit - how->data_end,
                      "ring segment %u: its last blocks are lost (no PADDING block after block %llu)", s->index,
                      (unsigned long long)last_seq);
    return excuse(seqs, last_seq + 1);
}

/*
 * The durable region is never rewritten, so in a headed ring the bytes after
 * its last block are zeros (7.3): other bytes there are its last blocks,
 * lost (a torn or damaged write), whether or not newer blocks show the gap
 * in their seqs. Reported where they are, once: not again as a torn tail.
 */
static tracelog_status check_durable_end(tracelog_reader *r, region_end *durable)
{
    if (!durable->torn_at)
        return TRACELOG_OK;
    /* The scan looks at 32 bytes: fewer zeros may end the region before the ring. */
    uint8_t buf[TL_BLOCK_HEADER_SIZE];
    uint64_t at = durable->torn_at, n = durable->limit - at;
    ssize_t k = tl_source_read(&r->src, at, buf, n < sizeof buf ? (size_t)n : sizeof buf);
    if (k < 0)
        return TRACELOG_E_IO;
    durable->torn_at = 0;
    if (tl_reader_all_zero(buf, (size_t)k))
        return TRACELOG_OK;
    tl_reader_problem(r, TL_COND_DURABLE_END_LOST, at, n,
                      "ring: the durable region's last blocks are lost (bytes that are neither a block nor zeros)");
    return TRACELOG_OK;
}

/* The durable region, then the segments, oldest (smallest first seq) first. */
static tracelog_status scan_regions(tracelog_reader *r, seq_runs *seqs)
{
    uint64_t last = 0;
    uint64_t durable_end = r->hdr.ring_offset < r->src.size ? r->hdr.ring_offset : r->src.size;
    region_end durable;
    tracelog_status st = scan_segment(r, r->hdr.header_size, durable_end, &last, &durable, seqs, 0);
    if (st != TRACELOG_OK)
        return st;
    int headed = (r->hdr.compat_flags & TL_COMPAT_SEGMENT_HEADERS) != 0;
    if (headed && (st = check_durable_end(r, &durable)) != TRACELOG_OK)
        return st;
    /* Only segments that start inside the file can hold blocks: the header's
       count is not trusted for the allocation. */
    uint64_t nseg = 0;
    if (r->hdr.ring_offset < r->src.size)
        nseg = (r->src.size - r->hdr.ring_offset + r->hdr.segment_size - 1) / r->hdr.segment_size;
    if (nseg > r->hdr.segment_count)
        nseg = r->hdr.segment_count;
    segment_ref *segs = calloc(nseg ? nseg : 1, sizeof *segs);
    if (!segs)
        return TRACELOG_E_NOMEM;
    size_t n = 0;
    uint64_t head_cut = 0, need_end = 0;
    st = find_segments(r, headed, nseg, segs, &n, &head_cut, &need_end);
    if (st == TRACELOG_OK && headed)
        raise_bounds(r, segs, n);
    if (n > 1)
        qsort(segs, n, sizeof *segs, by_first_seq);
    region_end newest = durable, last_seg;
    const region_end *last_scan = NULL;
    for (size_t i = 0; i < n && st == TRACELOG_OK; i++) {
        uint64_t prev = segs[i].bound;
        st = scan_segment(r, data_start(r, &segs[i]), segment_end(r, segs[i].index), &prev, &newest, seqs,
                          (headed ? WALK_MARKED : 0) | (segs[i].head == HEAD_OK ? 0 : WALK_SKIP_STALE));
        if (st == TRACELOG_OK && segs[i].head != HEAD_OK)
            st = report_head(r, &segs[i], &newest, seqs);
        if (st == TRACELOG_OK && headed && i + 1 < n)
            st = check_segment_end(r, &segs[i], &newest, prev, seqs);
        if (segs[i].index == r->hdr.segment_count - 1) {
            last_seg = newest;
            last_scan = i == n - 1 ? &newest : &last_seg;
        }
    }
    if (st == TRACELOG_OK)
        check_ring_end(r, ring_wrapped(segs, n, durable.run, last), &newest, headed && n > 0, last_scan, head_cut,
                       need_end);
    if (st == TRACELOG_OK && n > 0)
        check_ring_seqs(r, seqs, segs[0].first_seq);
    free(segs);
    return st;
}

tracelog_status tl_reader_scan_ring(tracelog_reader *r)
{
    seq_runs seqs = {0};
    tracelog_status st = scan_regions(r, &seqs);
    free(seqs.run);
    free(seqs.excused);
    /* A segment whose first block was lost in a crash still starts with the
       previous lap's blocks, so it sorts too early, yet newer blocks written
       further into it may have survived: order chunks by sequence number,
       which is the order they were written in. */
    if (st == TRACELOG_OK && r->nchunks > 1)
        qsort(r->chunks, r->nchunks, sizeof *r->chunks, by_chunk_seq);
    return st;
}
