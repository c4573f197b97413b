/*
 * Units of the .ptl format, in memory: CRC-32C, varints and zigzag, the file
 * header, block headers, event chunks, and the CBOR payloads (metadata,
 * status, event types). Every decoder is given a buffer of exactly the bytes
 * it may read, so that ASan catches any read past them.
 */
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "format/chunk.h"
#include "format/format.h"
#include "format/event_types.h"
#include "format/meta.h"
#include "tl_columns.h"
#include "tl_test.h"

/* A copy of src in a buffer of exactly len bytes (at least 1 allocated). */
static uint8_t *exact(const void *src, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (!p)
        TL_DIE("out of memory");
    if (len)
        memcpy(p, src, len);
    return p;
}

/* ---- CRC-32C ---------------------------------------------------------------- */

/* Bit-at-a-time CRC-32C straight from the definition (reflected 0x82F63B78). */
static uint32_t crc32c_reference(uint32_t crc, const uint8_t *p, size_t len)
{
    crc = ~crc;
    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1)));
    }
    return ~crc;
}

static void test_crc32c(void)
{
    CHECK_EQ(tl_crc32c(0, "123456789", 9), 0xE3069283u);
    CHECK_EQ(tl_crc32c(0, "", 0), 0u);
    /* Known answer from RFC 3720 (iSCSI) B.4: 32 bytes of zeros. */
    uint8_t zeros[32] = {0};
    CHECK_EQ(tl_crc32c(0, zeros, sizeof zeros), 0x8A9136AAu);
    /* Continuing a CRC equals computing it in one go. */
    CHECK_EQ(tl_crc32c(tl_crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);

    /* Every length 0..100 at every alignment 0..7 agrees with the definition
       (the fast paths work on 8-byte words and have byte tails). */
    uint8_t data[128];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 37 + 11);
    int ok = 1;
    for (size_t align = 0; align < 8; align++)
        for (size_t len = 0; len <= 100 && ok; len++) {
            uint8_t *p = exact(data + align, len);
            uint32_t seed = (uint32_t)(len * 0x01000193u);
            ok = CHECK_EQ(tl_crc32c(seed, p, len), crc32c_reference(seed, p, len));
            free(p);
        }

    /* Long inputs go through three interleaved stripes combined at the end (crc32c.c): every
       length around one and several rounds of 3 x 512 bytes, and a whole chunk, agree too. */
    size_t big = 200000;
    uint8_t *buf = malloc(big);
    for (size_t i = 0; i < big; i++)
        buf[i] = (uint8_t)((i * 2654435761u) >> 13);
    static const size_t lens[] = {1535, 1536, 1537, 1543, 1544, 3071, 3072, 3080, 4609, 65536, 131072 + 5, 200000};
    for (size_t i = 0; i < sizeof lens / sizeof lens[0] && ok; i++)
        ok = CHECK_EQ(tl_crc32c(7, buf + 1, lens[i] - 1), crc32c_reference(7, buf + 1, lens[i] - 1));
    free(buf);
}

/* ---- varints and zigzag --------------------------------------------------------- */

static void test_varint_roundtrip(void)
{
    static const struct { uint64_t v; size_t len; } cases[] = {
        {0, 1}, {1, 1}, {127, 1}, {128, 2}, {255, 2}, {16383, 2}, {16384, 3},
        {UINT32_MAX, 5}, {1ull << 35, 6}, {(1ull << 56) - 1, 8}, {1ull << 62, 9},
        {(1ull << 63) - 1, 9}, {1ull << 63, 10}, {UINT64_MAX - 1, 10}, {UINT64_MAX, 10},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_test_context("value %llu", (unsigned long long)cases[i].v);
        uint8_t buf[TL_VARINT_MAX];
        size_t n = tl_put_varint(buf, cases[i].v);
        CHECK_EQ(n, cases[i].len);
        uint8_t *p = exact(buf, n);
        const uint8_t *q = p;
        uint64_t out = 0;
        CHECK_EQ_INT(tl_get_varint(&q, p + n, &out), 0);
        CHECK_EQ(out, cases[i].v);
        CHECK(q == p + n);
        /* One byte short is refused and does not move the cursor. */
        q = p;
        CHECK_EQ_INT(tl_get_varint(&q, p + n - 1, &out), -1);
        CHECK(q == p);
        free(p);
    }
}

static void expect_varint_rejected(const uint8_t *bytes, size_t len, const char *what)
{
    tl_test_context("%s", what);
    uint8_t *p = exact(bytes, len);
    const uint8_t *q = p;
    uint64_t out = 12345;
    CHECK_EQ_INT(tl_get_varint(&q, p + len, &out), -1);
    CHECK(q == p);
    free(p);
}

static void test_varint_rejects(void)
{
    expect_varint_rejected(NULL, 0, "empty input");
    const uint8_t cont[] = {0x80};
    expect_varint_rejected(cont, 1, "continuation, then the end");
    const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    expect_varint_rejected(eleven, sizeof eleven, "11 bytes (longer than 10)");
    const uint8_t ten_cont[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x81, 0x00};
    expect_varint_rejected(ten_cont, sizeof ten_cont, "10th byte continues");
    const uint8_t overflow[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02};
    expect_varint_rejected(overflow, sizeof overflow, "2^64 (overflows 64 bits)");
    const uint8_t overflow2[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x7f};
    expect_varint_rejected(overflow2, sizeof overflow2, "127 << 63 (overflows 64 bits)");
    tl_test_context(NULL);

    /* The largest 10-byte varint is accepted. */
    const uint8_t max[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    uint8_t *p = exact(max, sizeof max);
    const uint8_t *q = p;
    uint64_t out = 0;
    CHECK_EQ_INT(tl_get_varint(&q, p + sizeof max, &out), 0);
    CHECK_EQ(out, UINT64_MAX);
    free(p);
}

static void test_zigzag(void)
{
    static const struct { int64_t s; uint64_t u; } cases[] = {
        {0, 0}, {-1, 1}, {1, 2}, {-2, 3}, {2, 4}, {63, 126}, {-64, 127},
        {INT64_MAX, UINT64_MAX - 1}, {INT64_MIN, UINT64_MAX},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_EQ(tl_zigzag(cases[i].s), cases[i].u);
        CHECK_EQ_INT(tl_unzigzag(cases[i].u), cases[i].s);
    }
    /* Small magnitudes stay small: one varint byte for -64..63. */
    uint8_t buf[TL_VARINT_MAX];
    CHECK_EQ(tl_put_varint(buf, tl_zigzag(-64)), 1);
    CHECK_EQ(tl_put_varint(buf, tl_zigzag(64)), 2);
}

/* ---- file header ------------------------------------------------------------------ */

static tl_file_header sample_header(void)
{
    tl_file_header h;
    memset(&h, 0, sizeof h);
    h.major = TRACELOG_FORMAT_MAJOR;
    h.minor = TRACELOG_FORMAT_MINOR;
    h.header_size = TL_HEADER_SIZE;
    h.salt = 0x0123456789ABCDEFull;
    h.created_ns = TL_TEST_TS_BASE;
    return h;
}

/* Decodes buf[0..len) from an exactly sized copy. */
static tracelog_status decode_header(const uint8_t *buf, size_t len, tl_file_header *h,
                                     size_t *need, tracelog_error *err)
{
    uint8_t *p = exact(buf, len);
    size_t dummy_need;
    tracelog_error dummy_err;
    tracelog_status st = tl_header_decode(p, len, h, need ? need : &dummy_need,
                                                err ? err : &dummy_err);
    free(p);
    return st;
}

/* Re-seals a hand-edited 64-byte header. */
static void reseal(uint8_t buf[TL_HEADER_SIZE])
{
    tl_store32(buf + 60, tl_crc32c(0, buf, 60));
}

static void check_header_fields(const tl_file_header *a, const tl_file_header *b)
{
    CHECK_EQ(a->major, b->major);
    CHECK_EQ(a->minor, b->minor);
    CHECK_EQ(a->header_size, b->header_size);
    CHECK_EQ(a->incompat_flags, b->incompat_flags);
    CHECK_EQ(a->compat_flags, b->compat_flags);
    CHECK_EQ(a->salt, b->salt);
    CHECK_EQ(a->created_ns, b->created_ns);
    CHECK_EQ(a->layout, b->layout);
    CHECK_EQ(a->segment_size, b->segment_size);
    CHECK_EQ(a->ring_offset, b->ring_offset);
    CHECK_EQ(a->segment_count, b->segment_count);
}

static void test_header_roundtrip(void)
{
    tl_file_header h = sample_header(), d;
    uint8_t buf[TL_HEADER_SIZE];
    tl_header_encode(&h, buf);
    CHECK_MEM_EQ(buf, TL_FILE_MAGIC, TL_FILE_MAGIC_LEN);
    CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, NULL), TRACELOG_OK);
    check_header_fields(&d, &h);

    /* A ring (LOOP) header keeps its geometry. */
    h.layout = TL_LAYOUT_RING;
    h.segment_size = 8192;
    h.segment_count = 8;
    h.ring_offset = TL_HEADER_SIZE + (64u << 10);
    tl_header_encode(&h, buf);
    CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, NULL), TRACELOG_OK);
    check_header_fields(&d, &h);

    /* Later minor versions and unknown compatible features are readable. */
    h = sample_header();
    h.minor = 1;
    h.compat_flags = 0xffffffffu;
    tl_header_encode(&h, buf);
    CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, NULL), TRACELOG_OK);
    check_header_fields(&d, &h);

    /* header_size is always written as 64, whatever the caller put in it. */
    h = sample_header();
    h.header_size = 999;
    tl_header_encode(&h, buf);
    CHECK_EQ(tl_load32(buf + 12), TL_HEADER_SIZE);
}

static void test_header_larger_size(void)
{
    /* A later version's 72-byte header: the reader checks the CRC at its end. */
    tl_file_header h = sample_header(), d;
    uint8_t buf[72];
    memset(buf, 0, sizeof buf);
    tl_header_encode(&h, buf);
    tl_store32(buf + 12, 72);
    tl_store32(buf + 60, 0xA5A5A5A5u); /* a new field where v1.0 has its CRC */
    tl_store32(buf + 68, tl_crc32c(0, buf, 68));
    CHECK_STATUS(decode_header(buf, 72, &d, NULL, NULL), TRACELOG_OK);
    CHECK_EQ(d.header_size, 72);
    CHECK_EQ(d.salt, h.salt);
    size_t need = 0;
    CHECK_STATUS(decode_header(buf, 64, &d, &need, NULL), TRACELOG_E_TRUNCATED);
    CHECK_EQ(need, 72);

    /* The largest accepted header. */
    uint8_t *big = calloc(1, TL_HEADER_SIZE_MAX);
    if (!big)
        TL_DIE("out of memory");
    tl_header_encode(&h, big);
    tl_store32(big + 12, TL_HEADER_SIZE_MAX);
    tl_store32(big + TL_HEADER_SIZE_MAX - 4, tl_crc32c(0, big, TL_HEADER_SIZE_MAX - 4));
    CHECK_STATUS(decode_header(big, TL_HEADER_SIZE_MAX, &d, NULL, NULL), TRACELOG_OK);
    free(big);
}

static void test_header_rejects(void)
{
    tl_file_header h = sample_header(), d;
    uint8_t good[TL_HEADER_SIZE], buf[TL_HEADER_SIZE];
    tl_header_encode(&h, good);
    tracelog_error err;

    /* Bad magic, byte by byte. */
    for (size_t i = 0; i < TL_FILE_MAGIC_LEN; i++) {
        tl_test_context("magic byte %zu", i);
        memcpy(buf, good, sizeof buf);
        buf[i] ^= 0x01;
        CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, &err), TRACELOG_E_BAD_MAGIC);
        CHECK_EQ(err.code, TRACELOG_E_BAD_MAGIC);
        CHECK(err.message[0] != 0);
    }
    tl_test_context(NULL);
    /* A short file that does not start like a .ptl log is not "truncated". */
    CHECK_STATUS(decode_header((const uint8_t *)"PK", 2, &d, NULL, NULL), TRACELOG_E_BAD_MAGIC);

    /* Every truncation of a valid header. */
    for (size_t len = 0; len < TL_HEADER_SIZE; len++) {
        tl_test_context("header cut to %zu bytes", len);
        size_t need = 0;
        CHECK_STATUS(decode_header(good, len, &d, &need, &err), TRACELOG_E_TRUNCATED);
        CHECK(need > len);
        if (len >= 16)
            CHECK_EQ(need, TL_HEADER_SIZE);
    }
    tl_test_context(NULL);

    /* Major versions other than 1. */
    for (uint16_t major = 0; major <= 2; major += 2) {
        h = sample_header();
        h.major = major;
        tl_header_encode(&h, buf);
        CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, &err), TRACELOG_E_UNSUPPORTED_VERSION);
    }

    /* Unknown incompatible features (bit 0, keyed chunks, is known since 1.1), alone or beside a known one. */
    static const uint32_t incompat[] = {2u, 0x80000000u, TL_INCOMPAT_KEYED_CHUNKS | 2u};
    for (size_t i = 0; i < sizeof incompat / sizeof incompat[0]; i++) {
        h = sample_header();
        h.incompat_flags = incompat[i];
        tl_header_encode(&h, buf);
        CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, NULL), TRACELOG_E_UNSUPPORTED_VERSION);
    }

    /* Checksum: every byte after the fields checked before the CRC. */
    for (size_t i = 10; i < TL_HEADER_SIZE; i++) {
        if (i >= 12 && i < 16)
            continue; /* header_size: see below */
        tl_test_context("byte %zu flipped", i);
        memcpy(buf, good, sizeof buf);
        buf[i] ^= 0x10;
        CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, &err), TRACELOG_E_CHECKSUM);
    }
    tl_test_context(NULL);

    /* header_size: below 64, not a multiple of 8, above 4096. */
    static const uint32_t sizes[] = {0, 56, 60, 65, 68, 100, TL_HEADER_SIZE_MAX + 8, UINT32_MAX};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        tl_test_context("header_size %u", sizes[i]);
        memcpy(buf, good, sizeof buf);
        tl_store32(buf + 12, sizes[i]);
        reseal(buf);
        CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, NULL), TRACELOG_E_CORRUPT);
    }
    tl_test_context(NULL);

    /* Layouts: ring fields in a sequential log, bad ring geometry, unknown layout. */
    struct { uint8_t layout; uint32_t seg_size, seg_count; uint64_t ring_off; tracelog_status want; } g[] = {
        {TL_LAYOUT_SEQUENTIAL, 4096, 0, 0, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_SEQUENTIAL, 0, 2, 0, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_SEQUENTIAL, 0, 0, 4096, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_RING, 4096, 2, 4096, TRACELOG_OK},
        {TL_LAYOUT_RING, 4088, 2, 4096, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_RING, 4100, 2, 4096, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_RING, 4096, 1, 4096, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_RING, 4096, 2, 32, TRACELOG_E_CORRUPT},
        {TL_LAYOUT_RING, 4096, 2, 4100, TRACELOG_E_CORRUPT},
        {2, 0, 0, 0, TRACELOG_E_UNSUPPORTED_VERSION},
    };
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++) {
        tl_test_context("layout case %zu", i);
        h = sample_header();
        h.layout = g[i].layout;
        h.segment_size = g[i].seg_size;
        h.segment_count = g[i].seg_count;
        h.ring_offset = g[i].ring_off;
        tl_header_encode(&h, buf);
        CHECK_STATUS(decode_header(buf, sizeof buf, &d, NULL, NULL), g[i].want);
    }
}

/* ---- block header ------------------------------------------------------------------ */

static void test_block_header(void)
{
    const uint32_t salt32 = tl_salt32(0x0123456789ABCDEFull);
    tl_block_header h = {TL_BLOCK_CHUNK, 0, 0x123456789ull, 1000, 0xDEADBEEFu}, d;
    uint8_t good[TL_BLOCK_HEADER_SIZE], buf[TL_BLOCK_HEADER_SIZE];
    tl_block_header_encode(&h, salt32, good);
    CHECK_MEM_EQ(good, TL_BLOCK_SYNC, 4);
    CHECK_EQ(tl_load32(good + 24), 0); /* reserved */
    memset(&d, 0, sizeof d);
    CHECK_EQ(tl_block_header_decode(good, salt32, 0, &d), TL_BLOCK_OK);
    CHECK_EQ(d.type, h.type);
    CHECK_EQ(d.flags, h.flags);
    CHECK_EQ(d.seq, h.seq);
    CHECK_EQ(d.payload_len, h.payload_len);
    CHECK_EQ(d.payload_crc, h.payload_crc);

    /* Extreme field values survive. */
    tl_block_header x = {0xffff, 0xffff, UINT64_MAX, UINT32_MAX, UINT32_MAX};
    tl_block_header_encode(&x, salt32, buf);
    CHECK_EQ(tl_block_header_decode(buf, salt32, 0, &d), TL_BLOCK_OK);
    CHECK_EQ(d.type, 0xffff);
    CHECK_EQ(d.flags, 0xffff);
    CHECK_EQ(d.seq, UINT64_MAX);
    CHECK_EQ(d.payload_len, UINT32_MAX);
    CHECK_EQ(d.payload_crc, UINT32_MAX);

    for (size_t i = 0; i < 4; i++) {
        tl_test_context("sync byte %zu", i);
        memcpy(buf, good, sizeof buf);
        buf[i] ^= 0x20;
        CHECK_EQ(tl_block_header_decode(buf, salt32, 0, &d), TL_BLOCK_BAD_SYNC);
        CHECK_EQ(tl_block_header_decode(buf, salt32, 1, &d), TL_BLOCK_BAD_SYNC);
    }
    /* Every other byte, the reserved word and the CRC included, is checksummed. */
    for (size_t i = 4; i < TL_BLOCK_HEADER_SIZE; i++) {
        tl_test_context("byte %zu", i);
        memcpy(buf, good, sizeof buf);
        buf[i] ^= 0x01;
        CHECK_EQ(tl_block_header_decode(buf, salt32, 0, &d), TL_BLOCK_BAD_CRC);
        CHECK_EQ(tl_block_header_decode(buf, salt32, 1, &d), TL_BLOCK_OK);
    }
    tl_test_context(NULL);
    /* A block of another file (another salt) does not validate. */
    CHECK_EQ(tl_block_header_decode(good, salt32 ^ 1, 0, &d), TL_BLOCK_BAD_CRC);
    CHECK(tl_block_payload_crc(salt32, "abc", 3) != tl_block_payload_crc(salt32 ^ 1, "abc", 3));
    CHECK_EQ(tl_block_payload_crc(salt32, "abc", 3), tl_crc32c(salt32, "abc", 3));

    /* Spans: header plus payload padded to 8. */
    CHECK_EQ(tl_block_span(0), 32);
    CHECK_EQ(tl_block_span(1), 40);
    CHECK_EQ(tl_block_span(8), 40);
    CHECK_EQ(tl_block_span(9), 48);
    CHECK_EQ(tl_block_span(UINT32_MAX), 32 + 0x100000000ull);
}

/* ---- chunks ------------------------------------------------------------------------ */

static uint8_t big_payload[300];

/* Hand-picked events covering every field kind and edge. */
static size_t edge_events(tracelog_event *e)
{
    static const uint8_t hello[] = "hello";
    uint64_t x = 42; /* an LCG: bytes that do not compress */
    for (size_t i = 0; i < sizeof big_payload; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        big_payload[i] = (uint8_t)(x >> 56);
    }
    size_t n = 0;
    e[n++] = (tracelog_event){1000, 1, 0, 0, 0, 0, 0, 0, NULL};
    /* Backwards in time, every column changes. */
    e[n++] = (tracelog_event){900, 2, 77, 0, 5, 0x401000, 1, 5, hello};
    /* Same time, nothing changes but the id; empty payload with a pointer. */
    e[n++] = (tracelog_event){900, UINT32_MAX, 77, 0, 5, 0x401000, 2, 0, hello};
    /* Largest values (the deltas wrap around). */
    e[n++] = (tracelog_event){UINT64_MAX - 1, 3, UINT32_MAX, 0, UINT64_MAX, UINT64_MAX, 0, 300, big_payload};
    /* All the way back down. */
    e[n++] = (tracelog_event){0, 0, 0, 0, 0, 0, 0, 0, NULL};
    e[n++] = (tracelog_event){5, 4, 1, 0, 1, 1, 2, 1, hello};
    e[n++] = (tracelog_event){5, 4, 1, 0, 1, 0, 0, 0, NULL};
    return n;
}

/*
 * Decodes an exactly sized copy of payload. Raw chunks' events point into
 * that copy: the caller frees *copy once done with the events.
 */
static tracelog_status decode_copy(const tl_buf *payload, uint32_t max_raw, tl_chunk_events *ce,
                                   uint8_t **copy)
{
    static ZSTD_DCtx *d; /* one for the whole program (freed at exit) */
    if (!d && !(d = ZSTD_createDCtx()))
        TL_DIE("out of memory");
    *copy = exact(payload->data, payload->len);
    const char *why = "";
    tracelog_status st = tl_chunk_decode(*copy, payload->len, d, max_raw, ce, &why);
    if (st != TRACELOG_OK)
        CHECK(why && why[0]); /* every refusal says why */
    return st;
}

/* decode_copy for callers that do not look at the events. */
static tracelog_status decode_exact(const tl_buf *payload, uint32_t max_raw, tl_chunk_events *ce)
{
    uint8_t *copy;
    tracelog_status st = decode_copy(payload, max_raw, ce, &copy);
    free(copy);
    return st;
}

/* The keyed body of format 1.1, as the writer makes it. */
static tracelog_status make_keyed(const tracelog_event *e, size_t n, ZSTD_CCtx *c, int level, tl_buf *out)
{
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    tracelog_status st = TRACELOG_OK;
    for (size_t i = 0; i < n && st == TRACELOG_OK; i++)
        st = tl_chunk_add(&b, &e[i]);
    if (st == TRACELOG_OK)
        st = tl_chunk_finish(&b, c, level, out);
    tl_chunk_builder_free(&b);
    return st;
}

/* Both chunk bodies a reader reads: the keyed one (1.1) and the column one (1.0). */
typedef struct body_kind {
    const char *name;
    uint8_t format;
    tracelog_status (*make)(const tracelog_event *e, size_t n, ZSTD_CCtx *c, int level, tl_buf *out);
} body_kind;

static const body_kind bodies[] = {
    {"keyed body", TL_BODY_KEYED, make_keyed},
    {"column body", TL_BODY_COLUMNS, tl_test_columns_chunk},
};
#define NBODIES (sizeof bodies / sizeof bodies[0])

/*
 * Builds a chunk of e[0..n) with body kind k, finishes it at level, decodes
 * it and compares. want_codec < 0: either codec (zstd only if smaller).
 */
static void chunk_roundtrip_body(const body_kind *k, const tracelog_event *e, size_t n, int level,
                                 int want_codec)
{
    ZSTD_CCtx *c = level > 0 ? ZSTD_createCCtx() : NULL;
    tl_buf out = {0};
    CHECK_STATUS(k->make(e, n, c, level, &out), TRACELOG_OK);

    tl_chunk_header h;
    uint64_t min = UINT64_MAX, max = 0;
    for (size_t i = 0; i < n; i++) {
        min = e[i].timestamp_ns < min ? e[i].timestamp_ns : min;
        max = e[i].timestamp_ns > max ? e[i].timestamp_ns : max;
    }
    if (CHECK_EQ_INT(tl_chunk_header_decode(out.data, out.len, &h), 0)) {
        CHECK_EQ(h.event_count, n);
        CHECK_EQ(h.min_ts, min);
        CHECK_EQ(h.max_ts, max);
        CHECK_EQ(h.body_format, k->format);
        if (want_codec >= 0)
            CHECK_EQ(h.codec, want_codec);
        if (h.codec == TL_CODEC_NONE)
            CHECK_EQ(out.len, TL_CHUNK_HEADER_SIZE + h.raw_size);
        else
            CHECK(out.len < TL_CHUNK_HEADER_SIZE + h.raw_size);
    }

    tl_chunk_events ce;
    memset(&ce, 0, sizeof ce);
    uint8_t *copy;
    if (CHECK_STATUS(decode_copy(&out, UINT32_MAX, &ce, &copy), TRACELOG_OK))
        CHECK_EVENTS_EQ(ce.events, ce.count, e, n);
    free(copy);
    tl_chunk_events_free(&ce);

    /* A declared size above the reader's limit is refused before anything is allocated. */
    memset(&ce, 0, sizeof ce);
    CHECK_STATUS(decode_exact(&out, h.raw_size - 1, &ce), TRACELOG_E_LIMIT);
    CHECK(ce.cur.raw.cap == 0 && ce.events == NULL);
    CHECK_STATUS(decode_exact(&out, 0, &ce), TRACELOG_E_LIMIT);
    tl_chunk_events_free(&ce);

    tl_buf_free(&out);
    ZSTD_freeCCtx(c);
}

/* chunk_roundtrip_body with each body kind. */
static void chunk_roundtrip(const tracelog_event *e, size_t n, int level, int want_codec)
{
    for (size_t k = 0; k < NBODIES; k++)
        chunk_roundtrip_body(&bodies[k], e, n, level, want_codec);
}

static void test_chunk_edges(void)
{
    tracelog_event e[16];
    size_t n = edge_events(e);
    tl_test_context("raw");
    chunk_roundtrip(e, n, 0, TL_CODEC_NONE);
    tl_test_context("level 1");
    chunk_roundtrip(e, n, 1, -1);
    for (size_t k = 1; k <= n; k++) {
        tl_test_context("first %zu edge events", k);
        chunk_roundtrip(e, k, 0, TL_CODEC_NONE);
        chunk_roundtrip(e + k - 1, 1, 0, TL_CODEC_NONE); /* each alone */
    }
}

static void test_chunk_incompressible(void)
{
    /* Random payloads do not compress: stored raw even when compression is asked for. */
    static uint8_t noise[10][300];
    tracelog_event e[10];
    uint64_t x = 7;
    for (size_t i = 0; i < 10; i++) {
        for (size_t j = 0; j < 300; j++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            noise[i][j] = (uint8_t)(x >> 56);
        }
        e[i] = (tracelog_event){1000 + i, (uint32_t)i, 1, 0, 2, 3, 0, 300, noise[i]};
    }
    chunk_roundtrip(e, 10, 1, TL_CODEC_NONE);
}

static void test_chunk_generated(void)
{
    tl_test_events l = {0};
    tl_test_gen_events(7, 0, 400, 0, &l);
    tl_test_context("raw");
    chunk_roundtrip(l.ev, l.n, 0, TL_CODEC_NONE);
    tl_test_context("zstd level 1");
    chunk_roundtrip(l.ev, l.n, 1, TL_CODEC_ZSTD);
    tl_test_context("zstd level 19");
    chunk_roundtrip(l.ev, l.n, 19, TL_CODEC_ZSTD);
    tl_test_events_free(&l);
}

static void test_chunk_builder_reuse(void)
{
    /* After reset, a chunk does not depend on the events of the one before. */
    tl_test_events l = {0};
    tl_test_gen_events(3, 0, 60, 0, &l);
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    tl_buf first = {0}, second = {0};
    for (size_t i = 0; i < 30; i++)
        tl_chunk_add(&b, &l.ev[i]);
    CHECK_STATUS(tl_chunk_finish(&b, NULL, 0, &first), TRACELOG_OK);
    tl_chunk_builder_reset(&b);
    for (size_t i = 30; i < 60; i++)
        tl_chunk_add(&b, &l.ev[i]);
    CHECK_STATUS(tl_chunk_finish(&b, NULL, 0, &second), TRACELOG_OK);

    tl_chunk_events ce;
    memset(&ce, 0, sizeof ce);
    uint8_t *copy;
    if (CHECK_STATUS(decode_copy(&second, UINT32_MAX, &ce, &copy), TRACELOG_OK))
        CHECK_EVENTS_EQ(ce.events, ce.count, l.ev + 30, 30);
    free(copy);
    if (CHECK_STATUS(decode_copy(&first, UINT32_MAX, &ce, &copy), TRACELOG_OK))
        CHECK_EVENTS_EQ(ce.events, ce.count, l.ev, 30);
    free(copy);
    tl_chunk_events_free(&ce);
    tl_buf_free(&first);
    tl_buf_free(&second);

    /* Bad events are refused. */
    tracelog_event bad = l.ev[0];
    bad.truncation = 3;
    CHECK_STATUS(tl_chunk_add(&b, &bad), TRACELOG_E_INVAL);
    bad = l.ev[0];
    bad.payload_len = 4;
    bad.payload = NULL;
    CHECK_STATUS(tl_chunk_add(&b, &bad), TRACELOG_E_INVAL);
    tl_chunk_builder_free(&b);
    tl_test_events_free(&l);
}

static void chunk_rejects(const body_kind *k)
{
    tl_test_events l = {0};
    tl_test_gen_events(5, 0, 40, 0, &l);
    tl_buf raw = {0}, z = {0};
    ZSTD_CCtx *c = ZSTD_createCCtx();
    CHECK_STATUS(k->make(l.ev, l.n, NULL, 0, &raw), TRACELOG_OK);
    CHECK_STATUS(k->make(l.ev, l.n, c, 3, &z), TRACELOG_OK);
    tl_chunk_events ce;
    memset(&ce, 0, sizeof ce);

    struct { const char *what; size_t off; int width; uint64_t value; } edits[] = {
        {"event count 0", 16, 4, 0},
        {"min_ts > max_ts", 0, 8, UINT64_MAX},
        {"codec 2", 24, 1, 2},
        {"body format 2", 25, 1, 2},
        {"raw size below the body's table", 20, 4, 8},
        {"more events than bytes", 16, 4, 1000000},
    };
    for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
        tl_test_context("%s: %s", k->name, edits[i].what);
        tl_buf t = {0};
        tl_buf_append(&t, raw.data, raw.len);
        if (edits[i].width == 8)
            tl_store64(t.data + edits[i].off, edits[i].value);
        else if (edits[i].width == 4)
            tl_store32(t.data + edits[i].off, (uint32_t)edits[i].value);
        else
            t.data[edits[i].off] = (uint8_t)edits[i].value;
        CHECK_STATUS(decode_exact(&t, UINT32_MAX, &ce), TRACELOG_E_CORRUPT);
        tl_buf_free(&t);
    }

    /* Cut short: a raw body must have exactly its declared size; a zstd frame must be whole. */
    for (size_t cut = 1; cut <= 9; cut += 4) {
        tl_test_context("%s: raw chunk minus %zu bytes", k->name, cut);
        tl_buf t = {raw.data, raw.len - cut, raw.len};
        CHECK_STATUS(decode_exact(&t, UINT32_MAX, &ce), TRACELOG_E_CORRUPT);
        tl_test_context("%s: zstd chunk minus %zu bytes", k->name, cut);
        t = (tl_buf){z.data, z.len - cut, z.len};
        CHECK_STATUS(decode_exact(&t, UINT32_MAX, &ce), TRACELOG_E_CORRUPT);
    }
    tl_test_context(NULL);

    /* Any single damaged byte of the body is either decoded into some events or
       refused as CORRUPT, never read out of bounds (ASan). */
    for (size_t i = TL_CHUNK_HEADER_SIZE; i < raw.len; i++) {
        tl_test_context("%s: raw body byte %zu", k->name, i);
        tl_buf t = {0};
        tl_buf_append(&t, raw.data, raw.len);
        t.data[i] ^= 0xff;
        tracelog_status st = decode_exact(&t, UINT32_MAX, &ce);
        CHECK(st == TRACELOG_OK || st == TRACELOG_E_CORRUPT);
        if (st == TRACELOG_OK)
            CHECK_EQ(ce.count, l.n);
        tl_buf_free(&t);
    }
    tl_test_context(NULL);
    tl_chunk_events_free(&ce);
    ZSTD_freeCCtx(c);
    tl_buf_free(&raw);
    tl_buf_free(&z);
    tl_test_events_free(&l);
}

static void test_chunk_rejects(void)
{
    for (size_t k = 0; k < NBODIES; k++)
        chunk_rejects(&bodies[k]);
}

/* ---- CBOR payloads ----------------------------------------------------------------- */

static void put_raw(tl_buf *b, const void *p, size_t n) { tl_buf_append(b, p, n); }

static tracelog_status decode_meta_exact(const tl_buf *b, tracelog_metadata *m)
{
    uint8_t *p = exact(b->data, b->len);
    const char *why = "";
    tracelog_status st = tl_meta_decode(p, b->len, TRACELOG_POLICY_APPEND, m, &why);
    free(p);
    return st;
}

static void meta_roundtrip(const tracelog_metadata *m)
{
    tl_buf b = {0};
    tracelog_metadata d;
    if (CHECK_STATUS(tl_meta_encode(m, &b), TRACELOG_OK) &&
        CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_OK))
        CHECK_METADATA_EQ(&d, m);
    tl_buf_free(&b);
}

static void test_metadata(void)
{
    tracelog_metadata m;
    tl_test_metadata(&m, TRACELOG_POLICY_LOOP, 1u << 20);
    meta_roundtrip(&m);

    /* Every valid policy pair and both inheritance values. */
    static const tracelog_policy stream_p[] = {TRACELOG_POLICY_LOOP, TRACELOG_POLICY_UNTIL_FULL,
                                               TRACELOG_POLICY_FLUSH};
    static const tracelog_policy log_p[] = {TRACELOG_POLICY_LOOP, TRACELOG_POLICY_UNTIL_FULL,
                                            TRACELOG_POLICY_APPEND};
    for (size_t s = 0; s < 3; s++)
        for (size_t l = 0; l < 3; l++) {
            tl_test_context("policies %d/%d", stream_p[s], log_p[l]);
            m.stream_full_policy = stream_p[s];
            m.log_full_policy = log_p[l];
            m.inherited = (int)((s + l) % 2);
            meta_roundtrip(&m);
        }
    tl_test_context(NULL);

    /* Longest texts, extreme numbers, empty texts. */
    tl_test_metadata(&m, TRACELOG_POLICY_UNTIL_FULL, UINT64_MAX);
    memset(m.trace_name, 'n', TRACELOG_TEXT_MAX);
    memset(m.clock_id, 'c', sizeof m.clock_id - 1);
    memset(m.os_name, 'o', sizeof m.os_name - 1);
    m.creation_time_ns = UINT64_MAX;
    m.max_data_size = UINT64_MAX;
    m.pid = UINT32_MAX;
    m.program[0] = 0;
    m.hostname[0] = 0;
    meta_roundtrip(&m);

    /* Policies that do not exist for that side are refused by the encoder. */
    tl_buf b = {0};
    tl_test_metadata(&m, TRACELOG_POLICY_APPEND, 0);
    m.stream_full_policy = TRACELOG_POLICY_APPEND;
    CHECK_STATUS(tl_meta_encode(&m, &b), TRACELOG_E_INVAL);
    tl_test_metadata(&m, TRACELOG_POLICY_APPEND, 0);
    m.log_full_policy = TRACELOG_POLICY_FLUSH;
    CHECK_STATUS(tl_meta_encode(&m, &b), TRACELOG_E_INVAL);
    m.log_full_policy = (tracelog_policy)0;
    CHECK_STATUS(tl_meta_encode(&m, &b), TRACELOG_E_INVAL);

    /* Every strict prefix of a valid encoding is refused. */
    tl_test_metadata(&m, TRACELOG_POLICY_LOOP, 4096);
    b.len = 0;
    tl_meta_encode(&m, &b);
    tracelog_metadata d;
    for (size_t len = 0; len < b.len; len++) {
        tl_test_context("metadata cut to %zu of %zu bytes", len, b.len);
        tl_buf t = {b.data, len, len};
        CHECK_STATUS(decode_meta_exact(&t, &d), TRACELOG_E_CORRUPT);
    }
    tl_test_context(NULL);
    /* Bytes after the map are refused. */
    put_raw(&b, "\x00", 1);
    CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_E_CORRUPT);
    tl_buf_free(&b);
}

static void test_metadata_unknown_and_bad(void)
{
    /* Unknown keys (any value, nested ones included) are ignored. */
    tl_buf b = {0};
    tl_cbor_put_map(&b, 4);
    tl_cbor_put_text(&b, "trace_name");
    tl_cbor_put_text(&b, "x");
    tl_cbor_put_text(&b, "future_field");
    tl_cbor_put_array(&b, 3);
    tl_cbor_put_uint(&b, 1);
    tl_cbor_put_map(&b, 1);
    tl_cbor_put_text(&b, "a");
    put_raw(&b, "\x24", 1);         /* -5 */
    put_raw(&b, "\x42\x01\x02", 3); /* bytes 01 02 */
    tl_cbor_put_text(&b, "host");
    tl_cbor_put_map(&b, 2);
    tl_cbor_put_text(&b, "hostname");
    tl_cbor_put_text(&b, "h1");
    tl_cbor_put_text(&b, "future_host_field");
    tl_cbor_put_bool(&b, 1);
    tl_cbor_put_text(&b, "process");
    tl_cbor_put_map(&b, 1);
    tl_cbor_put_text(&b, "pid");
    tl_cbor_put_uint(&b, 9);
    tracelog_metadata d;
    if (CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_OK)) {
        CHECK_STR_EQ(d.trace_name, "x");
        CHECK_STR_EQ(d.hostname, "h1");
        CHECK_EQ(d.pid, 9);
        CHECK_STR_EQ(d.program, ""); /* absent: empty */
    }

    /* A key is known in its own map only: elsewhere it is an unknown key, its value skipped. */
    tl_test_context("keys in the wrong map");
    b.len = 0;
    tl_cbor_put_map(&b, 3);
    tl_cbor_put_text(&b, "pid"); /* belongs to "process" */
    tl_cbor_put_uint(&b, 1ull << 40);
    tl_cbor_put_text(&b, "host");
    tl_cbor_put_map(&b, 2);
    tl_cbor_put_text(&b, "trace_name"); /* belongs to the top-level map */
    tl_cbor_put_uint(&b, 5);            /* a wrong type would be refused in its own map */
    tl_cbor_put_text(&b, "host");       /* a nested host map is skipped */
    tl_cbor_put_map(&b, 1);
    tl_cbor_put_text(&b, "hostname");
    tl_cbor_put_text(&b, "inner");
    tl_cbor_put_text(&b, "process");
    tl_cbor_put_map(&b, 1);
    tl_cbor_put_text(&b, "machine"); /* belongs to "host" */
    tl_cbor_put_text(&b, "m");
    if (CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_OK)) {
        CHECK_EQ(d.pid, 0);
        CHECK_STR_EQ(d.trace_name, "");
        CHECK_STR_EQ(d.hostname, "");
        CHECK_STR_EQ(d.machine, "");
    }
    tl_test_context(NULL);

    /* Bad values of known keys. */
    struct { const char *key; const char *text; int is_uint; uint64_t u; } bad[] = {
        {"clock_id", "0123456789012345678901234567890123", 0, 0}, /* longer than the field */
        {"stream_full_policy", "append", 0, 0},
        {"log_full_policy", "flush", 0, 0},
        {"log_full_policy", "sometimes", 0, 0},
        {"inheritance", "maybe", 0, 0},
        {"trace_name", NULL, 1, 5},                               /* a number where text is due */
        {"max_data_size", "12", 0, 0},                            /* text where a number is due */
        {"pid", NULL, 1, 1ull << 32},                             /* in the "process" map */
        {"host", "not a map", 0, 0},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_test_context("bad %s", bad[i].key);
        b.len = 0;
        tl_cbor_put_map(&b, 1);
        if (strcmp(bad[i].key, "pid") == 0) {
            tl_cbor_put_text(&b, "process");
            tl_cbor_put_map(&b, 1);
        }
        tl_cbor_put_text(&b, bad[i].key);
        if (bad[i].is_uint)
            tl_cbor_put_uint(&b, bad[i].u);
        else
            tl_cbor_put_text(&b, bad[i].text);
        CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_E_CORRUPT);
    }
    /* A text holding a NUL cannot be stored in a C string field. */
    tl_test_context("NUL in text");
    b.len = 0;
    tl_cbor_put_map(&b, 1);
    tl_cbor_put_text(&b, "trace_name");
    put_raw(&b, "\x63" "a\0b", 4);
    CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_E_CORRUPT);
    tl_test_context("not a map");
    b.len = 0;
    tl_cbor_put_array(&b, 0);
    CHECK_STATUS(decode_meta_exact(&b, &d), TRACELOG_E_CORRUPT);
    tl_buf_free(&b);
}

static tracelog_status decode_status_exact(const tl_buf *b, tracelog_log_status *st)
{
    uint8_t *p = exact(b->data, b->len);
    tl_cbor_in in = {p, p + b->len};
    const char *why = "";
    tracelog_status s = tl_status_decode(&in, st, &why);
    if (s == TRACELOG_OK)
        CHECK(in.p == in.end); /* consumed exactly the map */
    free(p);
    return s;
}

/* Policy names: each parses back to its policy; nothing else parses. */
static void test_policy_names(void)
{
    const tracelog_policy all[] = {TRACELOG_POLICY_LOOP, TRACELOG_POLICY_UNTIL_FULL, TRACELOG_POLICY_FLUSH,
                                   TRACELOG_POLICY_APPEND};
    for (size_t i = 0; i < 4; i++) {
        tracelog_policy p = (tracelog_policy)0;
        CHECK_STATUS(tracelog_policy_parse(tracelog_policy_name(all[i]), &p), TRACELOG_OK);
        CHECK_EQ(p, all[i]);
    }
    const char *bad[] = {"", "LOOP", "until-full", "until_full ", "append\n", "flushx"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        tracelog_policy p = TRACELOG_POLICY_LOOP;
        CHECK_STATUS(tracelog_policy_parse(bad[i], &p), TRACELOG_E_INVAL);
        CHECK_EQ(p, TRACELOG_POLICY_LOOP);
    }
    tracelog_policy p;
    CHECK_STATUS(tracelog_policy_parse(NULL, &p), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_policy_parse("loop", NULL), TRACELOG_E_INVAL);
    CHECK(tracelog_policy_name((tracelog_policy)99) == NULL);
}

static void test_status(void)
{
    tracelog_log_status cases[] = {
        {0, 0, 0, 0, 0, 0, 0, 0},
        {UINT64_MAX, 12345, 1, 1ull << 40, 28, 1, 0, 9},
        {7, 6, UINT64_MAX, 0, INT32_MAX, 0, UINT64_MAX, 0}, /* 1.1: types_dropped, threads_dropped */
    };
    tl_buf b = {0};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_test_context("status case %zu", i);
        b.len = 0;
        tracelog_log_status d;
        if (CHECK_STATUS(tl_status_encode(&cases[i], &b), TRACELOG_OK) &&
            CHECK_STATUS(decode_status_exact(&b, &d), TRACELOG_OK))
            CHECK_LOG_STATUS_EQ(&d, &cases[i]);
    }

    /* Unknown keys ignored; bad values refused. */
    tl_test_context("unknown key");
    b.len = 0;
    tl_cbor_put_map(&b, 3);
    tl_cbor_put_text(&b, "events_written");
    tl_cbor_put_uint(&b, 5);
    tl_cbor_put_text(&b, "future_counter");
    tl_cbor_put_array(&b, 2);
    tl_cbor_put_uint(&b, 1);
    tl_cbor_put_text(&b, "x");
    tl_cbor_put_text(&b, "log_full");
    tl_cbor_put_bool(&b, 1);
    tracelog_log_status d;
    if (CHECK_STATUS(decode_status_exact(&b, &d), TRACELOG_OK)) {
        CHECK_EQ(d.events_written, 5);
        CHECK_EQ(d.log_full, 1);
        CHECK_EQ(d.events_recorded, 0);
    }
    struct { const char *key; int kind; uint64_t u; } bad[] = {
        {"flush_error", 0, (uint64_t)INT32_MAX + 1},
        {"log_full", 0, 1},            /* a number, not a bool */
        {"events_written", 1, 0},      /* text */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tl_test_context("bad %s", bad[i].key);
        b.len = 0;
        tl_cbor_put_map(&b, 1);
        tl_cbor_put_text(&b, bad[i].key);
        if (bad[i].kind == 0)
            tl_cbor_put_uint(&b, bad[i].u);
        else
            tl_cbor_put_text(&b, "1");
        CHECK_STATUS(decode_status_exact(&b, &d), TRACELOG_E_CORRUPT);
    }
    tl_buf_free(&b);
}

/* Collects the entries given to the event-types sink. */
typedef struct type_sink {
    size_t n;
    uint32_t ids[8];
    char names[8][TRACELOG_TEXT_MAX + 1];
    tracelog_status refuse_with; /* returned for the second entry */
} type_sink;

static tracelog_status collect_type(void *ctx, uint32_t id, const char *name, size_t len,
                                    const tl_cbor_item *schema)
{
    type_sink *s = ctx;
    (void)schema; /* schemas: tests/test_typed_log.c */
    if (s->n == 1 && s->refuse_with != TRACELOG_OK)
        return s->refuse_with;
    if (s->n >= 8 || len > TRACELOG_TEXT_MAX)
        return TRACELOG_E_LIMIT;
    s->ids[s->n] = id;
    memcpy(s->names[s->n], name, len);
    s->names[s->n][len] = 0;
    s->n++;
    return TRACELOG_OK;
}

static tracelog_status decode_types_exact(const tl_buf *b, type_sink *sink)
{
    uint8_t *p = exact(b->data, b->len);
    tl_cbor_in in = {p, p + b->len};
    const char *why = "";
    tracelog_status st = tl_types_decode(&in, collect_type, sink, &why);
    free(p);
    return st;
}

static void test_event_types(void)
{
    char longest[TRACELOG_TEXT_MAX + 1];
    memset(longest, 'L', TRACELOG_TEXT_MAX);
    longest[TRACELOG_TEXT_MAX] = 0;
    const tl_type_entry e[] = {{1, "a", NULL}, {UINT32_MAX, "max id", NULL}, {0, "zero", NULL}, {7, longest, NULL}};
    tl_buf b = {0};
    type_sink s;
    memset(&s, 0, sizeof s);
    CHECK_STATUS(tl_types_encode(e, 4, &b), TRACELOG_OK);
    if (CHECK_STATUS(decode_types_exact(&b, &s), TRACELOG_OK) && CHECK_EQ(s.n, 4))
        for (size_t i = 0; i < 4; i++) {
            CHECK_EQ(s.ids[i], e[i].id);
            CHECK_STR_EQ(s.names[i], e[i].name);
        }

    /* Unknown keys in entries are ignored, whatever their value and position. */
    b.len = 0;
    tl_cbor_put_array(&b, 2);
    tl_cbor_put_map(&b, 4);
    tl_cbor_put_text(&b, "id");
    tl_cbor_put_uint(&b, 7);
    tl_cbor_put_text(&b, "color");
    tl_cbor_put_text(&b, "red");
    tl_cbor_put_text(&b, "name");
    tl_cbor_put_text(&b, "seven");
    tl_cbor_put_text(&b, "schema");
    tl_cbor_put_map(&b, 1);
    tl_cbor_put_text(&b, "fields");
    tl_cbor_put_array(&b, 2);
    tl_cbor_put_uint(&b, 1);
    put_raw(&b, "\x20", 1); /* -1 */
    tl_cbor_put_map(&b, 2);
    tl_cbor_put_text(&b, "name");
    tl_cbor_put_text(&b, "eight");
    tl_cbor_put_text(&b, "id");
    tl_cbor_put_uint(&b, 8);
    memset(&s, 0, sizeof s);
    if (CHECK_STATUS(decode_types_exact(&b, &s), TRACELOG_OK) && CHECK_EQ(s.n, 2)) {
        CHECK_EQ(s.ids[0], 7);
        CHECK_STR_EQ(s.names[0], "seven");
        CHECK_EQ(s.ids[1], 8);
        CHECK_STR_EQ(s.names[1], "eight");
    }

    /* Bad entries. */
    enum { NO_NAME, NO_ID, BIG_ID, EMPTY_NAME, NUL_NAME, LONG_NAME, NOT_MAP, UINT_KEY, TEXT_ID, NCASES };
    for (int c = 0; c < NCASES; c++) {
        tl_test_context("bad entry case %d", c);
        b.len = 0;
        tl_cbor_put_array(&b, 1);
        if (c == NOT_MAP) {
            tl_cbor_put_uint(&b, 5);
        } else {
            tl_cbor_put_map(&b, c == NO_NAME || c == NO_ID ? 1 : 2);
            if (c != NO_ID) {
                tl_cbor_put_text(&b, "id");
                if (c == TEXT_ID)
                    tl_cbor_put_text(&b, "1");
                else
                    tl_cbor_put_uint(&b, c == BIG_ID ? 1ull << 32 : 1);
            }
            if (c != NO_NAME) {
                if (c == UINT_KEY)
                    tl_cbor_put_uint(&b, 3);
                else
                    tl_cbor_put_text(&b, "name");
                if (c == EMPTY_NAME)
                    tl_cbor_put_text(&b, "");
                else if (c == NUL_NAME)
                    put_raw(&b, "\x63" "a\0b", 4);
                else if (c == LONG_NAME) {
                    char name[TRACELOG_TEXT_MAX + 2];
                    memset(name, 'x', TRACELOG_TEXT_MAX + 1);
                    name[TRACELOG_TEXT_MAX + 1] = 0;
                    tl_cbor_put_text(&b, name);
                } else
                    tl_cbor_put_text(&b, "ok");
            }
        }
        memset(&s, 0, sizeof s);
        CHECK_STATUS(decode_types_exact(&b, &s), TRACELOG_E_CORRUPT);
        CHECK_EQ(s.n, 0);
    }
    tl_test_context(NULL);

    /* Not an array; a sink that refuses an entry stops decoding with its status. */
    b.len = 0;
    tl_cbor_put_map(&b, 0);
    memset(&s, 0, sizeof s);
    CHECK_STATUS(decode_types_exact(&b, &s), TRACELOG_E_CORRUPT);
    b.len = 0;
    tl_types_encode(e, 4, &b);
    memset(&s, 0, sizeof s);
    s.refuse_with = TRACELOG_E_LIMIT;
    CHECK_STATUS(decode_types_exact(&b, &s), TRACELOG_E_LIMIT);
    CHECK_EQ(s.n, 1);
    tl_buf_free(&b);
}

int main(void)
{
    TL_TEST_RUN(test_crc32c);
    TL_TEST_RUN(test_policy_names);
    TL_TEST_RUN(test_varint_roundtrip);
    TL_TEST_RUN(test_varint_rejects);
    TL_TEST_RUN(test_zigzag);
    TL_TEST_RUN(test_header_roundtrip);
    TL_TEST_RUN(test_header_larger_size);
    TL_TEST_RUN(test_header_rejects);
    TL_TEST_RUN(test_block_header);
    TL_TEST_RUN(test_chunk_edges);
    TL_TEST_RUN(test_chunk_incompressible);
    TL_TEST_RUN(test_chunk_generated);
    TL_TEST_RUN(test_chunk_builder_reuse);
    TL_TEST_RUN(test_chunk_rejects);
    TL_TEST_RUN(test_metadata);
    TL_TEST_RUN(test_metadata_unknown_and_bad);
    TL_TEST_RUN(test_status);
    TL_TEST_RUN(test_event_types);
    return tl_test_finish();
}
