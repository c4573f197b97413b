/*
 * The bounds of a chunk body, exactly at their edges (issue 9, "tests that
 * would not have noticed a bug"): deliberate off-by-one bugs in these
 * checks went unnoticed by the rest of the suite.
 *
 *  - An event whose payload length claims one byte more than the chunk
 *    still holds is refused at that event, with the events before it
 *    delivered exactly; the length that exactly fits is accepted. The chunk
 *    is decoded from a buffer of exactly its size, so under AddressSanitizer
 *    a delivered over-long payload (which the test reads) is a reported
 *    overflow, not a silent read past the end.
 *  - A chunk header whose event count is one more than its body can hold
 *    ((raw_size - 24) / 4 for a column body, (raw_size - 16) / 2 for a
 *    keyed one, format-spec 6.7) is refused; the largest count
 *    it can hold passes the header check. In a log, such a chunk is reported
 *    at its offset and skipped: the reader and `ptlog info` (with and
 *    without --quick) count the events of the other chunks only.
 *
 * The payload lengths are those of the format 1.0 column body (a lengths
 * column); the keyed body's payload area is checked at its edges by
 * test_chunk_keyed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "format/chunk.h"
#include "format/format.h"
#include "tl_columns.h"
#include "tl_test.h"

/* A copy of src in a buffer of exactly len bytes. */
static uint8_t *exact(const void *src, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        TL_DIE("out of memory");
    memcpy(p, src, len);
    return p;
}

/* ---- payload lengths ------------------------------------------------------------ */

#define NEV 5
static const uint32_t payload_sizes[NEV] = {3, 0, 10, 1, 5}; /* 19 bytes: every length stays a 1-byte varint */

static void make_events(tracelog_event ev[NEV], uint8_t data[NEV][16])
{
    for (size_t i = 0; i < NEV; i++) {
        for (size_t k = 0; k < sizeof data[i]; k++)
            data[i][k] = (uint8_t)(0x40 + 16 * i + k);
        ev[i] = (tracelog_event){.timestamp_ns = 1000 + i, .event_id = (uint32_t)i, .pid = 7, .tid = 0x1234,
                                 .address = 0x401000 + i, .payload_len = payload_sizes[i], .payload = data[i]};
    }
}

/* The uncompressed chunk (header + column body, format 1.0) of the events. */
static void build_raw_chunk(const tracelog_event ev[NEV], tl_buf *out)
{
    CHECK_STATUS(tl_test_columns_chunk(ev, NEV, NULL, 0, out), TRACELOG_OK);
}

/* The same events in a keyed body (format 1.1), as the writer makes them. */
static void build_keyed_chunk(const tracelog_event ev[NEV], tl_buf *out)
{
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    for (size_t i = 0; i < NEV; i++)
        CHECK_STATUS(tl_chunk_add(&b, &ev[i]), TRACELOG_OK);
    CHECK_STATUS(tl_chunk_finish(&b, NULL, 0, out), TRACELOG_OK);
    tl_chunk_builder_free(&b);
}

/* The most events the chunk header check lets a body of this size claim (format-spec 6.7). */
static uint32_t count_bound(const tl_chunk_header *h)
{
    if (h->body_format == TL_BODY_KEYED)
        return (h->raw_size - TL_KEYED_HEADER_SIZE) / 2;
    return (h->raw_size - TL_COLUMNS_TABLE_SIZE) / 4;
}

/* Offset in the chunk payload of the lengths column (the sixth varint column, format-spec 6.3). */
static size_t lengths_column(const uint8_t *chunk, uint32_t event_count)
{
    const uint8_t *body = chunk + TL_CHUNK_HEADER_SIZE;
    size_t off = TL_CHUNK_HEADER_SIZE + TL_COLUMNS_TABLE_SIZE + event_count;
    for (int i = 0; i < 5; i++)
        off += tl_load32(body + 4 * i);
    return off;
}

/* The same body as a zstd chunk (codec 1), so the decompressed path is checked too. */
static void to_zstd(const tl_buf *raw, tl_buf *out)
{
    size_t body = raw->len - TL_CHUNK_HEADER_SIZE;
    size_t cap = ZSTD_compressBound(body);
    out->len = 0;
    if (tl_buf_reserve(out, TL_CHUNK_HEADER_SIZE + cap))
        TL_DIE("out of memory");
    memcpy(out->data, raw->data, TL_CHUNK_HEADER_SIZE);
    size_t n = ZSTD_compress(out->data + TL_CHUNK_HEADER_SIZE, cap, raw->data + TL_CHUNK_HEADER_SIZE, body, 3);
    if (ZSTD_isError(n))
        TL_DIE("zstd: %s", ZSTD_getErrorName(n));
    out->data[24] = TL_CODEC_ZSTD;
    out->len = TL_CHUNK_HEADER_SIZE + n;
}

/*
 * Reads chunk[0..len) (copied to an exact buffer) with the cursor: events
 * before `bad` must come out exactly, event `bad` must be refused as a bad
 * payload length (bad == NEV: every event, then the end).
 */
static void expect_refused_at(const uint8_t *chunk, size_t len, const tracelog_event want[NEV], size_t bad)
{
    static ZSTD_DCtx *d;
    if (!d && !(d = ZSTD_createDCtx()))
        TL_DIE("out of memory");
    uint8_t *copy = exact(chunk, len);
    tl_chunk_cursor c;
    memset(&c, 0, sizeof c);
    const char *why = "";
    if (!CHECK_STATUS(tl_chunk_open(copy, len, d, UINT32_MAX, &c, &why), TRACELOG_OK)) {
        free(copy);
        tl_chunk_cursor_free(&c);
        return;
    }
    for (size_t i = 0; i < NEV; i++) {
        tracelog_event ev;
        tracelog_status st = tl_chunk_next(&c, &ev, &why);
        if (i == bad) {
            CHECK_STATUS(st, TRACELOG_E_CORRUPT);
            CHECK_STR_EQ(why, "bad payload length");
            break;
        }
        if (!CHECK_STATUS(st, TRACELOG_OK))
            break;
        uint8_t seen[64]; /* reading the payload is what ASan would catch if it overran */
        if (CHECK(ev.payload_len <= sizeof seen)) {
            memcpy(seen, ev.payload, ev.payload_len);
            CHECK_EVENT_EQ(&ev, &want[i]);
        }
    }
    if (bad == NEV) {
        tracelog_event ev;
        CHECK_STATUS(tl_chunk_next(&c, &ev, &why), TRACELOG_END);
    }
    /* The whole-chunk decoder refuses the chunk as a whole. */
    tl_chunk_events ce;
    memset(&ce, 0, sizeof ce);
    CHECK_STATUS(tl_chunk_decode(copy, len, d, UINT32_MAX, &ce, &why), bad == NEV ? TRACELOG_OK : TRACELOG_E_CORRUPT);
    tl_chunk_events_free(&ce);
    tl_chunk_cursor_free(&c);
    free(copy);
}

static void test_payload_length_one_past_the_body(void)
{
    tracelog_event ev[NEV];
    uint8_t data[NEV][16];
    make_events(ev, data);
    tl_buf raw = {0}, z = {0};
    build_raw_chunk(ev, &raw);
    size_t lens = lengths_column(raw.data, NEV);
    uint32_t remaining = 0;
    for (size_t i = 0; i < NEV; i++) {
        CHECK_EQ(raw.data[lens + i], payload_sizes[i]); /* the column as the spec lays it out */
        remaining += payload_sizes[i];
    }
    tl_test_context("unchanged chunk");
    expect_refused_at(raw.data, raw.len, ev, NEV);
    for (size_t k = 0; k < NEV; k++) {
        /* Event k claims every byte left, plus one. */
        tl_buf t = {0};
        tl_buf_append(&t, raw.data, raw.len);
        t.data[lens + k] = (uint8_t)(remaining + 1);
        tl_test_context("raw chunk, event %zu claims %u bytes, %u left", k, remaining + 1, remaining);
        expect_refused_at(t.data, t.len, ev, k);
        to_zstd(&t, &z);
        tl_test_context("zstd chunk, event %zu claims %u bytes, %u left", k, remaining + 1, remaining);
        expect_refused_at(z.data, z.len, ev, k);
        /* Exactly what is left is a valid length for the last event only (the others then
           leave the columns unbalanced): the bound itself is not off by one the other way. */
        if (k == NEV - 1) {
            t.data[lens + k] = (uint8_t)remaining;
            tl_test_context("raw chunk, last event claims exactly the %u bytes left", remaining);
            expect_refused_at(t.data, t.len, ev, NEV);
        }
        remaining -= payload_sizes[k];
        tl_buf_free(&t);
    }
    tl_test_context(NULL);
    tl_buf_free(&raw);
    tl_buf_free(&z);
}

/* ---- event counts ------------------------------------------------------------------ */

static void set_count(uint8_t *chunk, uint32_t n) { tl_store32(chunk + 16, n); }

static void event_count_bound(void (*build)(const tracelog_event ev[NEV], tl_buf *out))
{
    tracelog_event ev[NEV];
    uint8_t data[NEV][16];
    make_events(ev, data);
    tl_buf raw = {0};
    build(ev, &raw);
    tl_chunk_header h;
    if (!CHECK_EQ_INT(tl_chunk_header_decode(raw.data, raw.len, &h), 0))
        return;
    uint32_t bound = count_bound(&h);
    CHECK(bound > NEV);
    uint8_t *copy = exact(raw.data, raw.len);
    set_count(copy, bound);
    CHECK_EQ_INT(tl_chunk_header_decode(copy, raw.len, &h), 0); /* the most the body can hold */
    CHECK_EQ(h.event_count, bound);
    set_count(copy, bound + 1);
    CHECK_EQ_INT(tl_chunk_header_decode(copy, raw.len, &h), -1); /* one more: refused */
    set_count(copy, UINT32_MAX);
    CHECK_EQ_INT(tl_chunk_header_decode(copy, raw.len, &h), -1);
    /* Counts the header check lets through but the columns contradict: refused when read, no overrun. */
    ZSTD_DCtx *d = ZSTD_createDCtx();
    tl_chunk_events ce;
    memset(&ce, 0, sizeof ce);
    const char *why = "";
    for (uint32_t n = NEV + 1; n <= bound; n++) {
        tl_test_context("event count %u of %u", n, NEV);
        set_count(copy, n);
        CHECK_STATUS(tl_chunk_decode(copy, raw.len, d, UINT32_MAX, &ce, &why), TRACELOG_E_CORRUPT);
    }
    tl_test_context("event count %u of %u", NEV - 1, NEV);
    set_count(copy, NEV - 1);
    CHECK_STATUS(tl_chunk_decode(copy, raw.len, d, UINT32_MAX, &ce, &why), TRACELOG_E_CORRUPT);
    tl_test_context(NULL);
    tl_chunk_events_free(&ce);
    ZSTD_freeDCtx(d);
    free(copy);
    tl_buf_free(&raw);
}

static void test_event_count_bound(void)
{
    tl_test_context("column body");
    event_count_bound(build_raw_chunk);
    tl_test_context("keyed body");
    event_count_bound(build_keyed_chunk);
    tl_test_context(NULL);
}

/* Rewrites the block at b after its payload changed: payload CRC and header CRC. */
static void reseal(uint8_t *file, const tl_test_block *b, uint32_t salt32)
{
    uint8_t *payload = file + b->offset + TL_BLOCK_HEADER_SIZE;
    tl_block_header h = {b->type, b->flags, b->seq, b->payload_len, tl_block_payload_crc(salt32, payload, b->payload_len)};
    tl_block_header_encode(&h, salt32, file + b->offset);
}

/* `$PTLOG info [--quick] --json path`: its exit status and the "events" count (-1 if absent). */
static int ptlog_info_events(const char *ptlog, const char *path, int quick, long long *events)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' info %s--json '%s' 2>/dev/null", ptlog, quick ? "--quick " : "", path);
    FILE *p = popen(cmd, "r");
    if (!p)
        TL_DIE("popen failed");
    static char out[1 << 16];
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = 0;
    int status = pclose(p);
    const char *e = strstr(out, ",\"events\":");
    *events = e ? atoll(e + 10) : -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_event_count_in_a_log(void)
{
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_APPEND, 60);
    spec.seed = 99;
    spec.payload_max = 20;
    spec.flush_every = 20; /* three chunks */
    spec.compression_level = 0;
    tl_test_log_result res;
    if (tl_test_write_log_mem(&spec, &res))
        return;
    tl_test_block *blocks;
    uint32_t salt32;
    size_t nb = tl_test_scan_blocks(res.bytes, res.len, &blocks, &salt32, NULL);
    const tl_test_block *chunks[8];
    size_t nc = 0;
    for (size_t i = 0; i < nb && nc < 8; i++)
        if (blocks[i].type == TL_BLOCK_CHUNK)
            chunks[nc++] = &blocks[i];
    if (!CHECK_EQ(nc, 3)) {
        free(blocks);
        tl_test_log_result_free(&res);
        return;
    }
    /* The middle chunk claims one event more than its body can hold. */
    const tl_test_block *mid = chunks[1];
    uint8_t *payload = res.bytes + mid->offset + TL_BLOCK_HEADER_SIZE;
    tl_chunk_header h;
    CHECK_EQ_INT(tl_chunk_header_decode(payload, mid->payload_len, &h), 0);
    set_count(payload, count_bound(&h) + 1);
    reseal(res.bytes, mid, salt32);

    tl_test_events all = {0};
    tl_test_gen_events(spec.seed, 0, spec.n_events, spec.payload_max, &all);
    tl_test_events want = {0};
    for (size_t i = 0; i < all.n; i++)
        if (i < mid->first_event || i >= mid->first_event + mid->event_count)
            tl_test_events_push(&want, &all.ev[i]);

    tl_test_readout out;
    tl_test_read_bytes(res.bytes, res.len, NULL, &out);
    CHECK_STATUS(out.open_status, TRACELOG_OK);
    CHECK_STATUS(out.next_status, TRACELOG_END);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_EQ(out.info.events, want.n); /* the index counts the chunks it kept */
    CHECK_EQ(out.info.chunks, 2);
    if (CHECK_EQ(out.nproblems, 1)) {
        CHECK_EQ(out.problems[0].offset, mid->offset);
        CHECK_STATUS(out.problems[0].code, TRACELOG_E_CORRUPT);
    }
    tl_test_readout_free(&out);

    /* ptlog info: the same count, and exit 1 (recovered with loss). */
    const char *ptlog = getenv("PTLOG");
    if (ptlog && *ptlog) {
        const char *dir = getenv("TMPDIR");
        char path[4096];
        snprintf(path, sizeof path, "%s/tl-chunk-bounds.XXXXXX", dir && *dir ? dir : "/tmp");
        int fd = mkstemp(path);
        if (fd < 0)
            TL_DIE("mkstemp failed");
        tl_test_fd_set(fd, res.bytes, res.len);
        close(fd);
        long long events;
        CHECK_EQ_INT(ptlog_info_events(ptlog, path, 0, &events), 1);
        CHECK_EQ_INT(events, (long long)want.n);
        CHECK_EQ_INT(ptlog_info_events(ptlog, path, 1, &events), 1);
        CHECK_EQ_INT(events, (long long)want.n);
        unlink(path);
    } else {
        printf("note: PTLOG not set, ptlog info not checked\n");
    }
    tl_test_events_free(&want);
    tl_test_events_free(&all);
    free(blocks);
    tl_test_log_result_free(&res);
}

int main(void)
{
    TL_TEST_RUN(test_payload_length_one_past_the_body);
    TL_TEST_RUN(test_event_count_bound);
    TL_TEST_RUN(test_event_count_in_a_log);
    return tl_test_finish();
}
