/*
 * A LOOP (ring) log cut short - a copy stopped half way, a file truncated -
 * never reads back as a sound log (format-spec 8.5, issue 9 item 8):
 *
 *  - a ring the writer went round fills its geometry: a file that ends before
 *    its last segment reports "ring ends early" (TRACELOG_E_TRUNCATED, at the
 *    offset where the file ends) and is not clean;
 *  - a ring on its first lap ends like a sequential log: a block cut short at
 *    the end is a torn tail (TRACELOG_E_TRUNCATED);
 *  - whatever the cut, events that are gone are never gone silently (a
 *    problem, or at least "not clean" when the cut falls between two blocks,
 *    as a crash leaves a log), and the events read are events of the log,
 *    unaltered, in order;
 *  - complete logs, wherever the writer stopped in its ring, report nothing;
 *  - (format 1.1) a segment whose SEGMENT block is damaged, cut, or an older
 *    lap's is still read from its first block of the current lap: its events
 *    are delivered, no older lap's event is, and the head is reported;
 *  - (format 1.1) a torn newest write is a torn tail on any lap: the END
 *    marker written with every ring block says where the data ends.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/format.h"
#include "format/segment.h"
#include "tl_test.h"

typedef struct ring_log {
    tl_test_log_spec spec;
    tl_test_log_result res;
    tl_file_header hdr;
    tl_test_readout full; /* the uncut log, read back */
} ring_log;

/* A LOOP log of n events in 4 segments of 4 KiB, with a small durable region, flushed every flush_every events. */
static int make_ring_flushed(ring_log *l, size_t n, uint64_t seed, size_t flush_every)
{
    memset(l, 0, sizeof *l);
    tl_test_log_spec_init(&l->spec, TRACELOG_POLICY_LOOP, n);
    l->spec.log_max_size = 16u << 10;
    l->spec.durable_size = 4096;
    l->spec.compression_level = 0;
    l->spec.payload_max = 120;
    l->spec.flush_every = flush_every;
    l->spec.seed = seed;
    if (tl_test_write_log_mem(&l->spec, &l->res))
        return -1;
    size_t need;
    tracelog_error err;
    if (!CHECK_STATUS(tl_header_decode(l->res.bytes, l->res.len, &l->hdr, &need, &err), TRACELOG_OK) ||
        !CHECK_EQ(l->hdr.layout, TL_LAYOUT_RING) || !CHECK_EQ(l->hdr.segment_count, 4))
        return -1;
    tl_test_read_bytes(l->res.bytes, l->res.len, NULL, &l->full);
    return 0;
}

/* A LOOP log of n events in 4 segments of 4 KiB, with a small durable region. */
static int make_ring(ring_log *l, size_t n, uint64_t seed) { return make_ring_flushed(l, n, seed, 37); }

static void free_ring(ring_log *l)
{
    tl_test_log_result_free(&l->res);
    tl_test_readout_free(&l->full);
}

static uint64_t ring_end(const ring_log *l)
{
    return l->hdr.ring_offset + (uint64_t)l->hdr.segment_count * l->hdr.segment_size;
}

/* The problem whose message starts with prefix, or NULL. */
static const tracelog_problem *find_problem(const tl_test_readout *out, const char *prefix)
{
    for (size_t i = 0; i < out->nproblems; i++)
        if (strncmp(out->problems[i].message, prefix, strlen(prefix)) == 0)
            return &out->problems[i];
    return NULL;
}

/* got's events are events of want, unaltered, in the same order. */
static int is_subsequence(const tl_test_events *got, const tl_test_events *want)
{
    size_t j = 0;
    for (size_t i = 0; i < got->n; i++) {
        while (j < want->n && !tl_test_event_equal(&got->ev[i], &want->ev[j]))
            j++;
        if (j == want->n)
            return 0;
        j++;
    }
    return 1;
}

/* Complete logs report nothing, wherever the writer stopped: first lap, one lap, many laps. */
static void test_complete_rings(void)
{
    int wrapped = 0, first_lap = 0;
    for (size_t n = 10; n <= 700; n += 9) {
        tl_test_context("LOOP log of %zu events", n);
        ring_log l;
        if (make_ring(&l, n, n) == 0) {
            CHECK_EQ(l.full.nproblems, 0);
            CHECK_EQ(l.full.info.clean, 1);
            if (l.full.nproblems)
                tl_test_readout_dump(&l.full);
            wrapped += l.res.status.log_full != 0;
            first_lap += l.res.status.log_full == 0;
        }
        free_ring(&l);
    }
    tl_test_context(NULL);
    CHECK(wrapped > 10 && first_lap > 3); /* both kinds were covered */
}

/* The case: a ring that wrapped many times, cut in half. */
static void test_wrapped_ring_cut_in_half(void)
{
    ring_log l;
    if (make_ring(&l, 2000, 7) != 0 || !CHECK(l.res.status.log_full)) {
        free_ring(&l);
        return;
    }
    size_t half = l.res.len / 2;
    tl_test_readout out;
    tl_test_read_bytes(l.res.bytes, half, NULL, &out);
    const tracelog_problem *p = find_problem(&out, "ring ends early: file shorter than its geometry");
    if (CHECK(p != NULL)) {
        CHECK_EQ(p->code, TRACELOG_E_TRUNCATED);
        CHECK_EQ(p->offset, half);
        char want[120];
        snprintf(want, sizeof want, "ring ends early: file shorter than its geometry, up to %llu bytes missing",
                 (unsigned long long)(ring_end(&l) - half));
        CHECK_STR_EQ(p->message, want);
    }
    CHECK_EQ(out.info.clean, 0);
    CHECK(out.events.n < l.full.events.n);
    CHECK(is_subsequence(&out.events, &l.full.events));
    tl_test_readout_free(&out);
    free_ring(&l);
}

/* A ring on its first lap cut inside a block: a torn tail, as in a sequential log. */
static void test_first_lap_torn_tail(void)
{
    ring_log l;
    if (make_ring(&l, 60, 3) != 0 || !CHECK(!l.res.status.log_full) ||
        !CHECK(l.res.len > l.hdr.ring_offset + 100)) {
        free_ring(&l);
        return;
    }
    size_t len = l.res.len - 20; /* inside the trailer */
    tl_test_readout out;
    tl_test_read_bytes(l.res.bytes, len, NULL, &out);
    const tracelog_problem *p = find_problem(&out, "log ends with an incomplete or damaged block");
    if (CHECK(p != NULL)) {
        CHECK_EQ(p->code, TRACELOG_E_TRUNCATED);
        CHECK_EQ(p->offset + p->length, len);
    }
    CHECK_EQ(out.nproblems, 1);
    CHECK_EQ(out.info.clean, 0);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, l.full.events.ev, l.full.events.n);
    tl_test_readout_free(&out);
    free_ring(&l);
}

/*
 * Every cut of several logs (each 8 bytes, and 3 bytes into each 8): events
 * are never lost silently, and a wrapped ring cut before its last segment
 * says "ring ends early".
 */
static void test_every_cut(void)
{
    static const size_t counts[] = {60, 200, 260, 333, 517, 1000};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        ring_log l;
        if (make_ring(&l, counts[c], 100 + c) != 0) {
            free_ring(&l);
            continue;
        }
        uint64_t last_segment = l.hdr.ring_offset + (uint64_t)(l.hdr.segment_count - 1) * l.hdr.segment_size;
        unsigned long failures_before = tl_test_failures();
        int fd = memfd_create("ring_cut", 0); /* in memory: thousands of cuts, and the disk is shared */
        if (!CHECK(fd >= 0)) {
            free_ring(&l);
            continue;
        }
        for (size_t len = l.hdr.ring_offset; len < l.res.len; len += len % 8 ? 5 : 3) {
            tl_test_context("LOOP log of %zu events (%s), cut at %zu of %zu bytes", counts[c],
                            l.res.status.log_full ? "wrapped" : "first lap", len, l.res.len);
            tl_test_readout out;
            tl_test_fd_set(fd, l.res.bytes, len);
            tl_test_read_fd(fd, NULL, &out);
            CHECK_STATUS(out.open_status, TRACELOG_OK);
            CHECK(is_subsequence(&out.events, &l.full.events));
            if (out.events.n < l.full.events.n)
                CHECK(out.nproblems > 0 || !out.info.clean);
            if (l.res.status.log_full && len <= last_segment) {
                const tracelog_problem *p = find_problem(&out, "ring ends early");
                if (CHECK(p != NULL))
                    CHECK_EQ(p->offset, len);
                CHECK_EQ(out.info.clean, 0);
            }
            tl_test_readout_free(&out);
            if (tl_test_failures() != failures_before)
                break; /* one cut tells the story */
        }
        close(fd);
        free_ring(&l);
    }
    tl_test_context(NULL);
}

static uint64_t seg_start(const ring_log *l, uint32_t i)
{
    return l->hdr.ring_offset + (uint64_t)i * l->hdr.segment_size;
}

/* A wrapped ring with segment headers, or -1. */
static int make_wrapped(ring_log *l)
{
    if (make_ring(l, 1000, 11) != 0 || !CHECK(l->res.status.log_full) ||
        !CHECK(l->hdr.compat_flags & TL_COMPAT_SEGMENT_HEADERS) || !CHECK_EQ(l->full.nproblems, 0) ||
        !CHECK(l->res.len > seg_start(l, l->hdr.segment_count - 1))) {

        free_ring(l);
        return -1;
    }
    return 0;
}

/* out holds exactly a problem about segment i's head, at its start, of length len. */
static void check_head_reported(const tl_test_readout *out, uint32_t i, uint64_t off, uint64_t len, const char *what)
{
    char prefix[80];
    snprintf(prefix, sizeof prefix, "ring segment %u %s", i, what);
    const tracelog_problem *p = find_problem(out, prefix);
    if (!CHECK(p != NULL)) {
        tl_test_readout_dump(out);
        return;
    }
    CHECK_EQ(p->offset, off);
    CHECK_EQ(p->length, len);
    CHECK_EQ(out->nproblems, 1);
    CHECK_EQ(out->info.clean, 0);
}

/*
 * Every byte of every SEGMENT block damaged: a CRC says so, the segment is
 * read from the block after it, every event arrives, and the damage is one
 * problem covering the SEGMENT block (no second report of its lost seq).
 */
static void test_segment_header_every_byte(void)
{
    ring_log l;
    if (make_wrapped(&l) != 0)
        return;
    uint8_t *copy = malloc(l.res.len);
    if (!CHECK(copy != NULL)) {
        free_ring(&l);
        return;
    }
    for (uint32_t i = 0; i < l.hdr.segment_count; i++) {
        uint64_t o = seg_start(&l, i);
        for (size_t k = 0; k < TL_SEGMENT_SPAN; k++) {
            tl_test_context("segment %u, byte %zu of its SEGMENT block inverted", i, k);
            memcpy(copy, l.res.bytes, l.res.len);
            copy[o + k] ^= 0xFF;
            tl_test_readout out;
            tl_test_read_bytes(copy, l.res.len, NULL, &out);
            CHECK_STATUS(out.open_status, TRACELOG_OK);
            CHECK_EVENTS_EQ(out.events.ev, out.events.n, l.full.events.ev, l.full.events.n);
            check_head_reported(&out, i, o, TL_SEGMENT_SPAN, "has no valid SEGMENT block");
            tl_test_readout_free(&out);
        }
    }
    tl_test_context(NULL);
    free(copy);
    free_ring(&l);
}

/* Every cut inside a SEGMENT block: no event of another lap, and what is lost is never lost silently. */
static void test_segment_header_every_cut(void)
{
    ring_log l;
    if (make_wrapped(&l) != 0)
        return;
    for (uint32_t i = 0; i < l.hdr.segment_count; i++) {
        uint64_t o = seg_start(&l, i);
        for (size_t k = 0; k <= TL_SEGMENT_SPAN && o + k < l.res.len; k++) {
            tl_test_context("cut %zu bytes into segment %u", k, i);
            tl_test_readout out;
            tl_test_read_bytes(l.res.bytes, o + k, NULL, &out);
            CHECK_STATUS(out.open_status, TRACELOG_OK);
            CHECK(is_subsequence(&out.events, &l.full.events));
            CHECK(out.events.n < l.full.events.n);
            CHECK(out.nproblems > 0);
            CHECK_EQ(out.info.clean, 0);
            tl_test_readout_free(&out);
        }
    }
    tl_test_context(NULL);
    free_ring(&l);
}

/*
 * A torn segment start: the SEGMENT block of the newest lap did not reach
 * the disk, so the segment starts with an older lap's (rebuilt here with the
 * file's salt: lap - 1, a seq before the segment written before it). The
 * blocks after it are the current lap's: all delivered, the head reported.
 */
static void test_stale_segment_header(void)
{
    ring_log l;
    if (make_wrapped(&l) != 0)
        return;
    uint8_t *copy = malloc(l.res.len);
    uint32_t salt32 = tl_salt32(l.hdr.salt);
    int stale_seen = 0;
    for (uint32_t i = 0; copy && i < l.hdr.segment_count; i++) {
        uint64_t o = seg_start(&l, i);
        tl_block_header h;
        tl_segment_info s;
        memcpy(copy, l.res.bytes, l.res.len);
        if (!CHECK_EQ(tl_block_header_decode(copy + o, salt32, 0, &h), TL_BLOCK_OK) ||
            !CHECK_EQ(h.type, TL_BLOCK_SEGMENT) ||
            !CHECK_EQ(tl_segment_decode(copy + o + TL_BLOCK_HEADER_SIZE, h.payload_len, &s), 0))
            break;
        if (s.lap == 0)
            continue; /* no older lap to bring back */
        stale_seen = 1;
        tl_test_context("segment %u: lap %llu's SEGMENT block replaced by lap %llu's", i,
                        (unsigned long long)s.lap, (unsigned long long)s.lap - 1);
        s.lap--;
        h.seq -= 4 * l.hdr.segment_count; /* an older lap: below everything of the segment before it */
        tl_segment_encode(&s, copy + o + TL_BLOCK_HEADER_SIZE);
        h.payload_crc = tl_block_payload_crc(salt32, copy + o + TL_BLOCK_HEADER_SIZE, h.payload_len);
        tl_block_header_encode(&h, salt32, copy + o);
        tl_test_readout out;
        tl_test_read_bytes(copy, l.res.len, NULL, &out);
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, l.full.events.ev, l.full.events.n);
        check_head_reported(&out, i, o, TL_SEGMENT_SPAN, "starts with an older lap's blocks");
        tl_test_readout_free(&out);
    }
    tl_test_context(NULL);
    CHECK(stale_seen);
    free(copy);
    free_ring(&l);
}

/* The SEGMENT block at segment i of l's bytes, or -1. */
static int segment_block(const ring_log *l, uint32_t i, tl_block_header *h, tl_segment_info *s)
{
    uint64_t o = seg_start(l, i);
    if (o + TL_SEGMENT_SPAN > l->res.len ||
        tl_block_header_decode(l->res.bytes + o, tl_salt32(l->hdr.salt), 0, h) != TL_BLOCK_OK ||
        h->type != TL_BLOCK_SEGMENT)
        return -1;
    return tl_segment_decode(l->res.bytes + o + TL_BLOCK_HEADER_SIZE, h->payload_len, s);
}

/*
 * What the writer puts in its SEGMENT blocks (spec 7.4), wherever it
 * stopped: each segment it entered starts with one naming it; the laps are
 * those of a writer passing the segments in order (the newest head's lap up
 * to its index, one less after it); seqs increase in that order; an extent
 * is 0 on the first lap, else within the segment and within the file.
 */
static void test_segment_blocks_written(void)
{
    int laps_seen = 0;
    for (size_t n = 10; n <= 700; n += 23) {
        tl_test_context("LOOP log of %zu events", n);
        ring_log l;
        if (make_ring(&l, n, n) != 0) {
            free_ring(&l);
            continue;
        }
        CHECK(l.hdr.compat_flags & TL_COMPAT_SEGMENT_HEADERS);
        tl_block_header h[4];
        tl_segment_info s[4];
        uint32_t top = 0, used = 0;
        for (uint32_t i = 0; i < l.hdr.segment_count && seg_start(&l, i) < l.res.len; i++) {
            if (!CHECK_EQ(segment_block(&l, i, &h[i], &s[i]), 0))
                break;
            used = i + 1;
            CHECK_EQ(s[i].index, i);
            if (s[i].lap > s[top].lap || (s[i].lap == s[top].lap && i > top))
                top = i;
            if (s[i].lap == 0)
                CHECK_EQ(s[i].extent, 0);
            else
                CHECK(s[i].extent > TL_SEGMENT_SPAN && s[i].extent <= l.hdr.segment_size &&
                      seg_start(&l, i) + s[i].extent <= l.res.len);
        }
        for (uint32_t i = 0; i < used; i++) {
            CHECK_EQ(s[i].lap, i <= top ? s[top].lap : s[top].lap - 1);
            uint32_t next = (i + 1) % used;
            if (i != top && next != i)
                CHECK(h[next].seq > h[i].seq); /* written after it */
        }
        laps_seen |= s[top].lap > 1;
        free_ring(&l);
    }
    tl_test_context(NULL);
    CHECK(laps_seen);
}

/*
 * The end of a segment the writer left lost (its PADDING block and the block
 * before it damaged): SEGMENT_END_LOST at the end of the segment's last good
 * block, as one problem (no SEQUENCE_BREAK for the same blocks).
 */
static void test_segment_end_lost(void)
{
    ring_log l;
    if (make_wrapped(&l) != 0)
        return;
    uint32_t salt32 = tl_salt32(l.hdr.salt);
    int tested = 0;
    for (uint32_t i = 0; i < l.hdr.segment_count; i++) {
        /* The segment's blocks: find its PADDING and the block before it. */
        uint64_t o = seg_start(&l, i), pos = o, prev = 0, before = 0;
        tl_block_header h;
        while (pos + TL_BLOCK_HEADER_SIZE <= o + l.hdr.segment_size &&
               tl_block_header_decode(l.res.bytes + pos, salt32, 0, &h) == TL_BLOCK_OK && h.type != TL_BLOCK_PADDING) {
            before = prev;
            prev = pos;
            pos += tl_block_span(h.payload_len);
        }
        if (h.type != TL_BLOCK_PADDING || before <= o || pos + TL_BLOCK_HEADER_SIZE > l.res.len)
            continue; /* the newest segment (the writer is in it), or one filled to its end */
        tested++;
        tl_test_context("segment %u: its last block and PADDING block damaged", i);
        uint8_t *copy = malloc(l.res.len);
        if (!CHECK(copy != NULL))
            break;
        memcpy(copy, l.res.bytes, l.res.len);
        copy[prev + 9] ^= 0x40; /* the seqs: header CRCs fail */
        copy[pos + 9] ^= 0x40;
        tl_test_readout out;
        tl_test_read_bytes(copy, l.res.len, NULL, &out);
        char prefix[64];
        snprintf(prefix, sizeof prefix, "ring segment %u: its last blocks are lost", i);
        const tracelog_problem *p = find_problem(&out, prefix);
        if (CHECK(p != NULL)) {
            CHECK_EQ(p->code, TRACELOG_E_TRUNCATED);
            CHECK_EQ(p->offset, prev);
            uint64_t end = o + l.hdr.segment_size < l.res.len ? o + l.hdr.segment_size : l.res.len;
            CHECK_EQ(p->length, end - prev); /* to the segment's end, or the file's in the last segment */
        } else {
            tl_test_readout_dump(&out);
        }
        CHECK_EQ(out.nproblems, 1);
        CHECK_EQ(out.info.clean, 0);
        CHECK(is_subsequence(&out.events, &l.full.events));
        tl_test_readout_free(&out);
        free(copy);
    }
    tl_test_context(NULL);
    CHECK(tested > 0);
    free_ring(&l);
}

/* Reads bytes [0, len) of l's log, with byte `flip` (if below len) changed. */
static void read_cut(const ring_log *l, size_t len, uint64_t flip, tl_test_readout *out)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        TL_DIE("malloc");
    memcpy(copy, l->res.bytes, len);
    if (flip < len)
        copy[flip] ^= 0x40;
    tl_test_read_bytes(copy, len, NULL, out);
    free(copy);
}

/*
 * The 32-byte boundaries at the end of a ring segment (spec 8.5), on logs
 * where the writer's last block in a segment ended exactly 32 bytes before
 * the segment's end, so that its PADDING block fills the segment's last 32
 * bytes (found by trying event counts of rings flushed after every 1 to 3
 * events: the writer's own logs, nothing rebuilt):
 *
 *  - the last segment, not the newest, of a wrapped ring: the file cut where
 *    that PADDING block starts ends 32 bytes before the ring's geometry, so
 *    the ring was cut short (RING_CUT_SHORT at the cut, "up to 32 bytes
 *    missing"); cut one byte later (31 bytes before the end) it is not: a
 *    writer may leave the last 31 bytes unwritten;
 *  - any segment the writer left (not the newest): with that PADDING block
 *    damaged, its blocks stop exactly 32 bytes before its end, which is
 *    SEGMENT_END_LOST (a block ending fewer than 32 bytes before would not be).
 *
 * A reader off by one at either boundary calls the cut ring complete, or
 * the lost PADDING block nothing.
 */
static void test_ring_end_last_32_bytes(void)
{
    int size_tested = 0, extent_tested = 0, end_lost_tested = 0;
    for (size_t n = 200; n <= 1400 && (size_tested < 2 || extent_tested < 1 || end_lost_tested < 2); n += 11) {
        size_t flush_every = 1 + n % 3;
        ring_log l;
        if (make_ring_flushed(&l, n, n, flush_every) != 0 || !l.res.status.log_full || l.full.nproblems) {
            free_ring(&l);
            continue;
        }
        uint32_t salt32 = tl_salt32(l.hdr.salt), top = 0;
        tl_block_header h;
        tl_segment_info si, top_si = {0};
        for (uint32_t i = 0; i < l.hdr.segment_count; i++)
            if (segment_block(&l, i, &h, &si) == 0 &&
                (si.lap > top_si.lap || (si.lap == top_si.lap && i > top)))
                top = i, top_si = si;
        for (uint32_t i = 0; i < l.hdr.segment_count; i++) {
            uint64_t o = seg_start(&l, i), full = o + l.hdr.segment_size, pos = o;
            if (i == top || full > l.res.len)
                continue; /* the newest segment (the writer is in it), or one the file does not hold whole */
            while (pos + TL_BLOCK_HEADER_SIZE <= full &&
                   tl_block_header_decode(l.res.bytes + pos, salt32, 0, &h) == TL_BLOCK_OK &&
                   h.type != TL_BLOCK_PADDING)
                pos += tl_block_span(h.payload_len);
            if (pos != full - TL_BLOCK_HEADER_SIZE || h.type != TL_BLOCK_PADDING)
                continue;
            tl_test_readout out;
            if (i == l.hdr.segment_count - 1) {
                tl_test_context("LOOP log of %zu events flushed every %zu: cut 32 bytes before its end", n, flush_every);
                CHECK_EQ(full, ring_end(&l));
                read_cut(&l, full - 32, UINT64_MAX, &out);
                const tracelog_problem *p = find_problem(&out, "ring ends early");
                if (CHECK(p != NULL)) {
                    CHECK_EQ(p->offset, full - 32);
                    CHECK_EQ(p->length, 0);
                    CHECK(strstr(p->message, "up to 32 bytes missing") != NULL);
                } else {
                    tl_test_readout_dump(&out);
                }
                CHECK_EQ(out.info.clean, 0);
                CHECK(is_subsequence(&out.events, &l.full.events));
                tl_test_readout_free(&out);
                tl_test_context("LOOP log of %zu events flushed every %zu: cut 31 bytes before its end", n, flush_every);
                read_cut(&l, full - 31, UINT64_MAX, &out);
                p = find_problem(&out, "ring ends early");
                if (segment_block(&l, i, &h, &si) == 0 && si.extent > l.hdr.segment_size - 31) {
                    /* An earlier lap wrote the segment to its end (its SEGMENT block's extent): cut short all the same. */
                    extent_tested++;
                    if (CHECK(p != NULL))
                        CHECK(strstr(p->message, "up to 31 bytes missing") != NULL);
                } else {
                    size_tested++;
                    if (!CHECK(p == NULL))
                        tl_test_readout_dump(&out);
                }
                tl_test_readout_free(&out);
            }
            end_lost_tested++;
            tl_test_context("LOOP log of %zu events flushed every %zu: segment %u's PADDING block, in its last 32 "
                            "bytes, damaged", n, flush_every, i);
            read_cut(&l, l.res.len, pos + 9, &out); /* its seq: the header CRC fails */
            char prefix[64];
            snprintf(prefix, sizeof prefix, "ring segment %u: its last blocks are lost", i);
            const tracelog_problem *p = find_problem(&out, prefix);
            if (CHECK(p != NULL)) {
                CHECK_EQ(p->offset, pos);
                CHECK_EQ(p->length, 32);
            } else {
                tl_test_readout_dump(&out);
            }
            CHECK_EQ(out.info.clean, 0);
            tl_test_readout_free(&out);
        }
        free_ring(&l);
    }
    tl_test_context(NULL);
    printf("  cut rings: %d without an extent to the end, %d with; %d segments whose PADDING block fills their "
           "last 32 bytes\n", size_tested, extent_tested, end_lost_tested);
    CHECK(size_tested > 0);
    CHECK(extent_tested > 0);
    CHECK(end_lost_tested > 0);
}

/*
 * The offset of the ring's newest block, the TRAILER, which the writer
 * followed with its END marker (spec 7.5): the one segment whose blocks end
 * with an END marker carrying the last block's seq. 0 if none.
 */
static uint64_t newest_trailer(const ring_log *l, uint32_t salt32)
{
    uint64_t found = 0;
    for (uint32_t i = 0; i < l->hdr.segment_count; i++) {
        uint64_t o = seg_start(l, i), pos = o, prev = 0, prev_seq = 0;
        tl_block_header h;
        while (pos + TL_BLOCK_HEADER_SIZE <= o + l->hdr.segment_size && pos + TL_BLOCK_HEADER_SIZE <= l->res.len &&
               tl_block_header_decode(l->res.bytes + pos, salt32, 0, &h) == TL_BLOCK_OK && h.type != TL_BLOCK_PADDING) {
            if (h.type == TL_BLOCK_END) {
                if (prev && h.seq == prev_seq) {
                    if (!CHECK_EQ(found, 0)) /* one END marker of its block in the whole ring */
                        return 0;
                    found = prev;
                }
                break;
            }
            prev = pos;
            prev_seq = h.seq;
            pos += tl_block_span(h.payload_len);
        }
    }
    tl_block_header h;
    if (found && (!CHECK_EQ(tl_block_header_decode(l->res.bytes + found, salt32, 0, &h), TL_BLOCK_OK) ||
                  !CHECK_EQ(h.type, TL_BLOCK_TRAILER)))
        return 0;
    return found;
}

/*
 * The ring's newest write torn (spec 7.5): the TRAILER's write, with its END
 * marker, kept only its first k bytes (every k a multiple of 8), the rest
 * still what was there before: the END marker of the block before it, then
 * an older lap's bytes. A 1.0 ring cannot tell most of these from the end of
 * the data; here every one is a torn tail, never clean, and every event is
 * still read. The whole write reads clean; none of it, as a crash before
 * the TRAILER: not closed, nothing lost.
 */
static void test_newest_write_torn(void)
{
    ring_log l;
    if (make_wrapped(&l) != 0)
        return;
    uint32_t salt32 = tl_salt32(l.hdr.salt);
    uint64_t t = newest_trailer(&l, salt32);
    uint8_t *copy = malloc(l.res.len);
    if (!CHECK(t != 0) || !CHECK(copy != NULL)) {
        free(copy);
        free_ring(&l);
        return;
    }
    tl_block_header h;
    tl_block_header_decode(l.res.bytes + t, salt32, 0, &h);
    uint64_t write_len = tl_block_span(h.payload_len) + TL_BLOCK_HEADER_SIZE;
    uint8_t *before = malloc(write_len); /* what the write replaced */
    if (!CHECK(before != NULL)) {
        free(copy);
        free_ring(&l);
        return;
    }
    memset(before, 0xA5, write_len);
    tl_block_header end = {TL_BLOCK_END, 0, h.seq - 1, 0, tl_block_payload_crc(salt32, NULL, 0)};
    tl_block_header_encode(&end, salt32, before);
    for (uint64_t k = 0; k <= write_len; k += 8) {
        tl_test_context("the TRAILER's write at %llu kept %llu of its %llu bytes", (unsigned long long)t,
                        (unsigned long long)k, (unsigned long long)write_len);
        memcpy(copy, l.res.bytes, l.res.len);
        memcpy(copy + t + k, before + k, write_len - k);
        tl_test_readout out;
        tl_test_read_bytes(copy, l.res.len, NULL, &out);
        CHECK_STATUS(out.open_status, TRACELOG_OK);
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, l.full.events.ev, l.full.events.n);
        const tracelog_problem *p = find_problem(&out, "log ends with an incomplete or damaged block");
        if (k == write_len) {
            CHECK_EQ(out.nproblems, 0);
            CHECK_EQ(out.info.clean, 1);
        } else if (k == 0) {
            CHECK_EQ(out.nproblems, 0);
            CHECK_EQ(out.info.clean, 0);
        } else {
            if (CHECK(p != NULL))
                CHECK_EQ(p->offset, k < TL_BLOCK_HEADER_SIZE ? t : t + write_len - TL_BLOCK_HEADER_SIZE);
            else
                tl_test_readout_dump(&out);
            CHECK_EQ(out.info.clean, 0);
        }
        tl_test_readout_free(&out);
    }
    tl_test_context(NULL);
    free(before);
    free(copy);
    free_ring(&l);
}

/*
 * The durable region's last block damaged in a wrapped ring (format 1.1):
 * reported where it is, DURABLE_END_LOST from its start to the region's end,
 * not clean; and an intact region, filled or not, reports nothing.
 */
static void test_durable_end_lost(void)
{
    ring_log l;
    if (make_wrapped(&l) != 0)
        return;
    uint32_t salt32 = tl_salt32(l.hdr.salt);
    uint64_t pos = l.hdr.header_size, last = 0;
    tl_block_header h;
    while (pos + TL_BLOCK_HEADER_SIZE <= l.hdr.ring_offset &&
           tl_block_header_decode(l.res.bytes + pos, salt32, 0, &h) == TL_BLOCK_OK) {
        last = pos;
        pos += tl_block_span(h.payload_len);
    }
    uint8_t *copy = malloc(l.res.len);
    if (CHECK(last > l.hdr.header_size) && CHECK(copy != NULL)) {
        memcpy(copy, l.res.bytes, l.res.len);
        copy[last + 28] ^= 0x01; /* its header CRC */
        tl_test_readout out;
        tl_test_read_bytes(copy, l.res.len, NULL, &out);
        const tracelog_problem *p = find_problem(&out, "ring: the durable region's last blocks are lost");
        if (CHECK(p != NULL)) {
            CHECK_EQ(p->code, TRACELOG_E_TRUNCATED);
            CHECK_EQ(p->offset, last);
            CHECK_EQ(p->length, l.hdr.ring_offset - last);
        } else {
            tl_test_readout_dump(&out);
        }
        CHECK_EQ(out.info.clean, 0);
        tl_test_readout_free(&out);
    }
    free(copy);
    free_ring(&l);
}

/* The file's bytes now. */
static uint8_t *file_bytes(int fd, size_t *len)
{
    off_t size = lseek(fd, 0, SEEK_END);
    uint8_t *b = malloc(size > 0 ? (size_t)size : 1);
    if (!b || pread(fd, b, (size_t)size, 0) != size)
        TL_DIE("cannot read the log back");
    *len = (size_t)size;
    return b;
}

/*
 * A ring read while its writer goes on: a chunk the reader indexed may be
 * overwritten by one of a later lap, a valid block with the log's salt. Its
 * header was decoded again, its sequence number not compared: the later
 * chunk's events came out in the indexed one's place, ahead of time (a
 * plain dump of a live ring went backwards, a follower dropped what came
 * after). Now such a chunk is FILE_CHANGED, and what is read is the
 * indexed lap's events, in order.
 */
static void test_later_lap_in_place(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.log_policy = TRACELOG_POLICY_LOOP;
    o.log_max_size = 16u << 10;
    o.segment_size = 4096;
    o.durable_size = 4096;
    o.chunk_size = 4096;
    o.compression_level = 0;
    tracelog_writer *w = tl_test_new_writer(fd, &o);
    tracelog_writer_define_event(w, 1, "e");
    uint8_t payload[TL_TEST_PAYLOAD_MAX];
    tracelog_event ev;
    for (uint64_t i = 0; i < 2000; i++) { /* the first snapshot: a few laps in */
        tl_test_gen_event(7, i, 64, &ev, payload);
        ev.event_id = 1;
        tracelog_writer_append(w, &ev);
        if (i % 50 == 49)
            tracelog_writer_flush(w);
    }
    size_t len_a, len_b;
    uint8_t *a = file_bytes(fd, &len_a);
    for (uint64_t i = 2000; i < 2600; i++) { /* most of a lap more */
        tl_test_gen_event(7, i, 64, &ev, payload);
        ev.event_id = 1;
        tracelog_writer_append(w, &ev);
        if (i % 50 == 49)
            tracelog_writer_flush(w);
    }
    uint8_t *b = file_bytes(fd, &len_b);
    tracelog_writer_abandon(w);
    if (!CHECK_EQ(len_a, len_b)) /* a ring's file keeps its size */
        goto out;
    tl_test_readout want;
    tl_test_read_bytes(a, len_a, NULL, &want);
    if (pwrite(fd, a, len_a, 0) != (ssize_t)len_a)
        TL_DIE("pwrite");
    tracelog_reader *r;
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK))
        goto out_want;
    if (pwrite(fd, b, len_b, 0) != (ssize_t)len_b) /* the writer's later laps, in place */
        TL_DIE("pwrite");
    tl_test_events got = {0};
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
        tl_test_events_push(&got, &ev);
    CHECK_MSG(is_subsequence(&got, &want.events), "%zu events read: not the indexed ring's, in order", got.n);
    CHECK_MSG(tracelog_reader_problem_count(r) > 0, "the chunks overwritten were not reported");
    tracelog_reader_close(r);
    tl_test_events_free(&got);
out_want:
    tl_test_readout_free(&want);
out:
    free(a);
    free(b);
    close(fd);
}

int main(void)
{
    TL_TEST_RUN(test_complete_rings);
    TL_TEST_RUN(test_later_lap_in_place);
    TL_TEST_RUN(test_wrapped_ring_cut_in_half);
    TL_TEST_RUN(test_first_lap_torn_tail);
    TL_TEST_RUN(test_newest_write_torn);
    TL_TEST_RUN(test_durable_end_lost);
    TL_TEST_RUN(test_every_cut);
    TL_TEST_RUN(test_segment_header_every_byte);
    TL_TEST_RUN(test_segment_header_every_cut);
    TL_TEST_RUN(test_stale_segment_header);
    TL_TEST_RUN(test_segment_blocks_written);
    TL_TEST_RUN(test_segment_end_lost);
    TL_TEST_RUN(test_ring_end_last_32_bytes);
    return tl_test_finish();
}
