/*
 * Typed payloads in logs (format-spec 5.3 and 5.6): the `schema` key of
 * EVENT_TYPES entries, the writer's tracelog_writer_define_event_schema, the
 * reader's tracelog_reader_event_schema, and what a reader does with a
 * schema it cannot use (ignores it, reports a problem, keeps the entry).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>
#include <stdio.h>

#include "common/buf.h"
#include "format/cbor_io.h"
#include "format/event_types.h"
#include "format/format.h"
#include "format/meta.h"
#include "format/schema.h"
#include "tl_test.h"

/* ---- the key in EVENT_TYPES ----------------------------------------------------- */

typedef struct seen {
    size_t n;
    uint32_t ids[8];
    int has_schema[8];
    tl_cbor_kind kind[8];
    char text[8][128];
} seen;

static tracelog_status collect(void *ctx, uint32_t id, const char *name, size_t len,
                               const tl_cbor_item *schema)
{
    seen *s = ctx;
    (void)name;
    (void)len;
    if (s->n == 8)
        return TRACELOG_E_LIMIT;
    s->ids[s->n] = id;
    s->has_schema[s->n] = schema != NULL;
    if (schema) {
        s->kind[s->n] = schema->kind;
        if (schema->kind == TL_CBOR_TEXT && schema->len < sizeof s->text[0]) {
            memcpy(s->text[s->n], schema->ptr, schema->len);
            s->text[s->n][schema->len] = 0;
        }
    }
    s->n++;
    return TRACELOG_OK;
}

static tracelog_status decode(const tl_buf *b, seen *s)
{
    memset(s, 0, sizeof *s);
    tl_cbor_in in = {b->data, b->data + b->len};
    const char *why = "";
    tracelog_status st = tl_types_decode(&in, collect, s, &why);
    if (st == TRACELOG_OK && in.p != in.end)
        st = TRACELOG_E_CORRUPT;
    return st;
}

static void put(tl_buf *b, int failed)
{
    if (failed)
        TL_DIE("out of memory");
    (void)b;
}

static void test_entry_encoding(void)
{
    tracelog_schema *s = NULL;
    CHECK_STATUS(tracelog_schema_parse("u32   len;char[4] x", &s, NULL), TRACELOG_OK);
    const tl_type_entry e[] = {{40, "typed", s}, {41, "plain", NULL}};
    tl_buf b = {0};
    CHECK_STATUS(tl_types_encode(e, 2, &b), TRACELOG_OK);
    seen got;
    if (CHECK_STATUS(decode(&b, &got), TRACELOG_OK) && CHECK_EQ(got.n, 2)) {
        CHECK(got.has_schema[0] && got.kind[0] == TL_CBOR_TEXT);
        CHECK_STR_EQ(got.text[0], "u32 len; char[4] x"); /* canonical, as the spec requires */
        CHECK(!got.has_schema[1]);
    }
    /* The typed entry is a map of three pairs, the plain one of two. */
    CHECK_EQ(b.data[1], 0xA3);
    tl_buf_free(&b);
    tracelog_schema_free(s);

    /* Hand-made entries: a repeated key (the last wins), a schema that is
       not text, and a nested value under it (skipped whole). */
    b = (tl_buf){0};
    put(&b, tl_cbor_put_array(&b, 3));
    put(&b, tl_cbor_put_map(&b, 4) || tl_cbor_put_text(&b, "id") || tl_cbor_put_uint(&b, 1) ||
                tl_cbor_put_text(&b, "schema") || tl_cbor_put_text(&b, "u8 first") ||
                tl_cbor_put_text(&b, "name") || tl_cbor_put_text(&b, "a") ||
                tl_cbor_put_text(&b, "schema") || tl_cbor_put_text(&b, "u8 last"));
    put(&b, tl_cbor_put_map(&b, 3) || tl_cbor_put_text(&b, "id") || tl_cbor_put_uint(&b, 2) ||
                tl_cbor_put_text(&b, "name") || tl_cbor_put_text(&b, "b") ||
                tl_cbor_put_text(&b, "schema") || tl_cbor_put_uint(&b, 7));
    put(&b, tl_cbor_put_map(&b, 3) || tl_cbor_put_text(&b, "schema") || tl_cbor_put_map(&b, 1) ||
                tl_cbor_put_text(&b, "k") || tl_cbor_put_array(&b, 2) || tl_cbor_put_uint(&b, 1) ||
                tl_cbor_put_text(&b, "v") || tl_cbor_put_text(&b, "id") || tl_cbor_put_uint(&b, 3) ||
                tl_cbor_put_text(&b, "name") || tl_cbor_put_text(&b, "c"));
    if (CHECK_STATUS(decode(&b, &got), TRACELOG_OK) && CHECK_EQ(got.n, 3)) {
        CHECK_STR_EQ(got.text[0], "u8 last");
        CHECK(got.has_schema[1] && got.kind[1] == TL_CBOR_UINT);
        CHECK(got.has_schema[2] && got.kind[2] == TL_CBOR_MAP);
        CHECK_EQ(got.ids[2], 3);
    }
    tl_buf_free(&b);
}

/* ---- writer and reader ---------------------------------------------------------- */

struct net_rx {
    uint32_t len;
    uint16_t port;
    char iface[16];
    double latency;
};

struct with_tail {
    uint32_t len;
    char text[];
};

enum { ID_RX = 40, ID_TAIL = 41, ID_PLAIN = 42 };

static void define_types(tracelog_writer *w)
{
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_define_event_schema(w, ID_RX, "net.rx",
                                                     " u32 len ;u16 port; char[16] iface;f64 latency",
                                                     &err),
                 TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, ID_TAIL, "with.tail", "u32 len; char[] text",
                                                     &err),
                 TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event(w, ID_PLAIN, "plain"), TRACELOG_OK);
    for (uint32_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++) {
        char name[32];
        snprintf(name, sizeof name, "system.%u", id);
        CHECK_STATUS(tracelog_writer_define_event_schema(w, id, name, tl_system_event_schema(id), &err),
                     TRACELOG_OK);
    }
}

static uint32_t append(tracelog_writer *w, uint64_t ts, uint32_t id, const void *p, size_t n)
{
    tracelog_event ev = {.timestamp_ns = ts, .event_id = id, .pid = 1, .tid = 2, .address = 3, .payload_len = (uint32_t)n, .payload = p};
    CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
    return id;
}

/* Writes the typed program's events; returns how many. */
static size_t write_events(tracelog_writer *w, size_t rounds)
{
    size_t n = 0;
    for (size_t i = 0; i < rounds; i++) {
        uint64_t ts = TL_TEST_TS_BASE + i * 10;
        struct net_rx rx;
        memset(&rx, 0, sizeof rx);
        rx.len = (uint32_t)(1000 + i);
        rx.port = 443;
        snprintf(rx.iface, sizeof rx.iface, "eth%zu", i % 4);
        rx.latency = 0.000231 * (double)(i + 1);
        append(w, ts, ID_RX, &rx, sizeof rx);
        uint8_t tail[64];
        struct with_tail *t = (struct with_tail *)tail;
        t->len = (uint32_t)(i % 20);
        memset(t->text, 'a' + (int)(i % 26), t->len);
        append(w, ts + 1, ID_TAIL, tail, sizeof *t + t->len);
        append(w, ts + 2, ID_RX, &rx, 13); /* short: cut after iface's 7th byte */
        int e = ENOSPC;
        append(w, ts + 3, POSIX_TRACE_ERROR, &e, sizeof e);
        append(w, ts + 4, ID_PLAIN, "xyz", 3);
        n += 5;
    }
    return n;
}

static void check_events(tracelog_reader *r, size_t n)
{
    const tracelog_schema *rx = tracelog_reader_event_schema(r, ID_RX);
    const tracelog_schema *tail = tracelog_reader_event_schema(r, ID_TAIL);
    const tracelog_schema *error = tracelog_reader_event_schema(r, POSIX_TRACE_ERROR);
    if (!CHECK(rx && tail && error))
        return;
    CHECK_STR_EQ(tracelog_schema_text(rx), "u32 len; u16 port; char[16] iface; f64 latency");
    CHECK(tracelog_reader_event_schema(r, ID_PLAIN) == NULL);
    CHECK(tracelog_reader_event_schema(r, 999) == NULL);
    tracelog_event ev;
    size_t got = 0, rounds = 0;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        got++;
        tracelog_fields f;
        uint64_t u;
        double d;
        const char *s;
        size_t len;
        char text[64];
        switch (ev.event_id) {
        case ID_RX:
            if (ev.payload_len == sizeof(struct net_rx)) {
                size_t i = rounds++;
                CHECK_STATUS(tracelog_fields_decode(rx, ev.payload, ev.payload_len, &f), TRACELOG_OK);
                CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(rx, "len"), &u), TRACELOG_OK);
                CHECK_EQ(u, 1000 + i);
                CHECK_STATUS(tracelog_fields_uint(&f, tracelog_schema_find(rx, "port"), &u), TRACELOG_OK);
                CHECK_EQ(u, 443);
                CHECK_STATUS(tracelog_fields_string(&f, tracelog_schema_find(rx, "iface"), &s, &len),
                             TRACELOG_OK);
                snprintf(text, sizeof text, "eth%zu", i % 4);
                CHECK(len == strlen(text) && memcmp(s, text, len) == 0);
                CHECK_STATUS(tracelog_fields_double(&f, 3, &d), TRACELOG_OK);
                CHECK(d == 0.000231 * (double)(i + 1));
            } else {
                CHECK_STATUS(tracelog_fields_decode(rx, ev.payload, ev.payload_len, &f),
                             TRACELOG_E_TRUNCATED);
                CHECK_EQ(f.present, 2);
            }
            break;
        case ID_TAIL:
            CHECK_STATUS(tracelog_fields_decode(tail, ev.payload, ev.payload_len, &f), TRACELOG_OK);
            CHECK_STATUS(tracelog_fields_uint(&f, 0, &u), TRACELOG_OK);
            CHECK_STATUS(tracelog_fields_string(&f, 1, &s, &len), TRACELOG_OK);
            CHECK_EQ(len, u);
            break;
        case POSIX_TRACE_ERROR:
            CHECK_STATUS(tracelog_fields_decode(error, ev.payload, ev.payload_len, &f), TRACELOG_OK);
            CHECK_STATUS(tracelog_fields_format(&f, 0, text, sizeof text, NULL), TRACELOG_OK);
            CHECK_STR_EQ(text, "ENOSPC");
            break;
        }
    }
    CHECK_EQ(got, n);
}

static void roundtrip(tracelog_policy policy, int compression)
{
    tl_test_context("policy %s, compression %d", tracelog_policy_name(policy), compression);
    int fd = tl_test_tmpfd();
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = policy;
    opt.compression_level = compression;
    opt.chunk_size = 4096;
    opt.log_max_size = 1u << 20;
    tracelog_writer *w = NULL;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, &opt, &w, &err), TRACELOG_OK))
        return;
    define_types(w);
    size_t n = write_events(w, 200);
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);

    tracelog_reader *r = NULL;
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        check_events(r, n);
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        CHECK(info.clean);
        CHECK_EQ(info.problems, 0); /* the trailer restates every schema: no conflict */
        for (uint32_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++) {
            const tracelog_schema *s = tracelog_reader_event_schema(r, id);
            if (CHECK(s != NULL))
                CHECK_STR_EQ(tracelog_schema_text(s), tl_system_event_schema(id));
        }
        /* The public table gives the same schemas. */
        CHECK(tracelog_event_types_schema(tracelog_reader_event_types(r), ID_RX) ==
              tracelog_reader_event_schema(r, ID_RX));
    }
    tracelog_reader_close(r);
    close(fd);
    tl_test_context(NULL);
}

static void test_roundtrip(void)
{
    roundtrip(TRACELOG_POLICY_APPEND, 0);
    roundtrip(TRACELOG_POLICY_APPEND, 1);
    roundtrip(TRACELOG_POLICY_UNTIL_FULL, 1);
    roundtrip(TRACELOG_POLICY_LOOP, 1);
}

static void test_define_errors(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = NULL;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, NULL, &w, &err), TRACELOG_OK))
        return;
    memset(&err, 0, sizeof err);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 50, "bad", "u32 len; u33 x", &err),
                 TRACELOG_E_INVAL);
    CHECK_EQ(err.offset, 9); /* the byte position in the schema */
    CHECK(strstr(err.message, "unknown type 'u33'") != NULL);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 50, "bad", "bytes[2000000] x", &err),
                 TRACELOG_E_LIMIT);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 50, "bad", "u8 x", NULL), TRACELOG_OK);
    /* The same definition again (another spelling of the schema): a no-op. */
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 50, "bad", "  u8   x ;", &err), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 50, "bad", "u16 x", &err), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event(w, 50, "bad"), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 50, "other", "u8 x", &err), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event(w, 51, "untyped"), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 51, "untyped", NULL, &err), TRACELOG_OK);
    /* A schema given after the type's first event (a converter whose input names it late): the log's
       table is the whole log's, so that event reads back typed too. Then it is the type's schema. */
    uint8_t seven = 7;
    append(w, TL_TEST_TS_BASE, 51, &seven, 1);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 51, "untyped", "u8 x", &err), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 51, "untyped", "u8 x", &err), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 51, "untyped", NULL, &err), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 51, "untyped", "u16 x", &err), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 51, "renamed", "u8 x", &err), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event_schema(w, 52, "", "u8 x", &err), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_define_event_schema(NULL, 52, "x", "u8 x", &err), TRACELOG_E_INVAL);
    /* The writer is still usable: a refused schema poisons nothing. */
    uint8_t one = 1;
    append(w, TL_TEST_TS_BASE, 50, &one, 1);
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    tracelog_reader *r = NULL;
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        const tracelog_schema *s = tracelog_reader_event_schema(r, 50);
        CHECK(s && strcmp(tracelog_schema_text(s), "u8 x") == 0);
        s = tracelog_reader_event_schema(r, 51);
        CHECK(s && strcmp(tracelog_schema_text(s), "u8 x") == 0);
        CHECK_STR_EQ(tracelog_reader_event_name(r, 51), "untyped");
        CHECK_EQ(tracelog_reader_problem_count(r), 0);
    }
    tracelog_reader_close(r);
    close(fd);
}

/* ---- a reader given schemas it cannot use ---------------------------------------- */

/* A sequential log built by hand: header, METADATA, then the given EVENT_TYPES payloads. */
typedef struct raw_log {
    tl_buf file;
    uint32_t salt32;
    uint64_t seq;
} raw_log;

static void raw_block(raw_log *l, uint16_t type, const tl_buf *payload)
{
    tl_block_header h = {type, 0, l->seq++, (uint32_t)payload->len,
                         tl_block_payload_crc(l->salt32, payload->data, payload->len)};
    uint8_t head[TL_BLOCK_HEADER_SIZE];
    tl_block_header_encode(&h, l->salt32, head);
    static const uint8_t zeros[8];
    if (tl_buf_append(&l->file, head, sizeof head) ||
        tl_buf_append(&l->file, payload->data, payload->len) ||
        tl_buf_append(&l->file, zeros, tl_block_span((uint32_t)payload->len) - sizeof head - payload->len))
        TL_DIE("out of memory");
}

static void raw_start(raw_log *l)
{
    memset(l, 0, sizeof *l);
    tl_file_header h = {.major = 1, .minor = 1, .header_size = TL_HEADER_SIZE,
                        .salt = 0x1234567890abcdefull, .created_ns = TL_TEST_TS_BASE};
    uint8_t head[TL_HEADER_SIZE];
    tl_header_encode(&h, head);
    l->salt32 = tl_salt32(h.salt);
    put(&l->file, tl_buf_append(&l->file, head, sizeof head));
    tracelog_metadata m;
    tracelog_metadata_init(&m);
    tl_buf meta = {0};
    if (tl_meta_encode(&m, &meta) != TRACELOG_OK)
        TL_DIE("metadata");
    raw_block(l, TL_BLOCK_METADATA, &meta);
    tl_buf_free(&meta);
}

/* An entry {id, name, schema: text of n bytes}. */
static void entry_text(tl_buf *b, uint32_t id, const char *name, const char *schema, size_t n)
{
    put(b, tl_cbor_put_map(b, 3) || tl_cbor_put_text(b, "id") || tl_cbor_put_uint(b, id) ||
               tl_cbor_put_text(b, "name") || tl_cbor_put_text(b, name) ||
               tl_cbor_put_text(b, "schema"));
    uint8_t head[3] = {0x79, (uint8_t)(n >> 8), (uint8_t)n}; /* text, 2-byte length */
    put(b, n > 0xffff || tl_buf_append(b, head, 3) || tl_buf_append(b, schema, n));
}

static int find_problem(tracelog_reader *r, tracelog_status code, uint64_t offset, const char *says)
{
    for (size_t i = 0; i < tracelog_reader_problem_count(r); i++) {
        tracelog_problem p;
        tracelog_reader_problem(r, i, &p);
        if (p.code == code && p.offset == offset && p.length == 0 && strstr(p.message, says))
            return 1;
    }
    return 0;
}

static void test_reader_ignores_bad_schemas(void)
{
    raw_log l;
    raw_start(&l);
    char long_name[80] = "u8 ";
    memset(long_name + 3, 'n', 64);
    long_name[67] = 0;
    tl_buf t = {0};
    put(&t, tl_cbor_put_array(&t, 7));
    entry_text(&t, 40, "bad.syntax", "u33 x", 5);
    put(&t, tl_cbor_put_map(&t, 3) || tl_cbor_put_text(&t, "id") || tl_cbor_put_uint(&t, 41) ||
                tl_cbor_put_text(&t, "name") || tl_cbor_put_text(&t, "not.text") ||
                tl_cbor_put_text(&t, "schema") || tl_cbor_put_uint(&t, 7));
    entry_text(&t, 42, "good", "u8   a", 6);
    entry_text(&t, 43, "over.limit", long_name, strlen(long_name));
    entry_text(&t, 44, "with.nul", "u8 a\0", 5);
    entry_text(&t, 45, "replaced", "u16 x", 5);
    entry_text(&t, 46, "empty", "", 0);
    uint64_t first = l.file.len;
    raw_block(&l, TL_BLOCK_EVENT_TYPES, &t);
    /* A later block: 45 again without a schema, 42 again with the canonical form. */
    t.len = 0;
    put(&t, tl_cbor_put_array(&t, 2) || tl_cbor_put_map(&t, 2) || tl_cbor_put_text(&t, "id") ||
                tl_cbor_put_uint(&t, 45) || tl_cbor_put_text(&t, "name") ||
                tl_cbor_put_text(&t, "replaced"));
    entry_text(&t, 42, "good", "u8 a", 4);
    raw_block(&l, TL_BLOCK_EVENT_TYPES, &t);
    tl_buf_free(&t);

    int fd = tl_test_tmpfd();
    tl_test_fd_set(fd, l.file.data, l.file.len);
    tracelog_reader *r = NULL;
    tracelog_error err;
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        CHECK_EQ(tracelog_reader_event_type_count(r), 7); /* every entry kept its name */
        CHECK_STR_EQ(tracelog_reader_event_name(r, 40), "bad.syntax");
        CHECK_STR_EQ(tracelog_reader_event_name(r, 44), "with.nul");
        CHECK(tracelog_reader_event_schema(r, 40) == NULL);
        CHECK(tracelog_reader_event_schema(r, 41) == NULL);
        CHECK(tracelog_reader_event_schema(r, 43) == NULL);
        CHECK(tracelog_reader_event_schema(r, 44) == NULL);
        CHECK(tracelog_reader_event_schema(r, 45) == NULL); /* the later entry has none */
        const tracelog_schema *good = tracelog_reader_event_schema(r, 42);
        CHECK(good && strcmp(tracelog_schema_text(good), "u8 a") == 0);
        const tracelog_schema *empty = tracelog_reader_event_schema(r, 46);
        CHECK(empty && tracelog_schema_field_count(empty) == 0);
        CHECK_EQ(tracelog_reader_problem_count(r), 4);
        CHECK(find_problem(r, TRACELOG_E_CORRUPT, first, "event type 40: schema ignored: schema byte 0: unknown type 'u33'"));
        CHECK(find_problem(r, TRACELOG_E_CORRUPT, first, "event type 41: schema is not text"));
        CHECK(find_problem(r, TRACELOG_E_LIMIT, first, "event type 43: schema ignored: schema byte 3"));
        CHECK(find_problem(r, TRACELOG_E_CORRUPT, first, "event type 44: schema ignored: schema byte 4"));
    }
    tracelog_reader_close(r);
    close(fd);
    tl_buf_free(&l.file);
}

static size_t count_problems(tracelog_reader *r, uint64_t offset)
{
    size_t n = 0;
    for (size_t i = 0; i < tracelog_reader_problem_count(r); i++) {
        tracelog_problem p;
        tracelog_reader_problem(r, i, &p);
        n += p.offset == offset;
    }
    return n;
}

/* One EVENT_TYPES block of entries {id, name, schema text}. */
static uint64_t types_block(raw_log *l, size_t n, const uint32_t *ids, const char *const *schemas)
{
    tl_buf t = {0};
    put(&t, tl_cbor_put_array(&t, n));
    for (size_t i = 0; i < n; i++)
        entry_text(&t, ids[i], ids[i] == 50 ? "fifty" : "fifty.one", schemas[i], strlen(schemas[i]));
    uint64_t off = l->file.len;
    raw_block(l, TL_BLOCK_EVENT_TYPES, &t);
    tl_buf_free(&t);
    return off;
}

/*
 * A bad schema given again to the same id (as a TRAILER repeats the table)
 * is reported once; another bad value, or the same one after a good schema,
 * is reported again (it changes what the reader keeps or why).
 */
static void test_bad_schema_reported_once(void)
{
    raw_log l;
    raw_start(&l);
    const uint32_t ids[] = {50, 51};
    const char *const b1[] = {"u33 x", "u99 y"};
    const char *const b2[] = {"u33 x", "u8 good"};
    const char *const b3[] = {"u33 x", "u99 y"};
    const char *const b4[] = {"u34 x", "u99 y"};
    uint64_t o1 = types_block(&l, 2, ids, b1); /* both reported */
    uint64_t o2 = types_block(&l, 2, ids, b2); /* 50 repeated: not reported; 51 good */
    uint64_t o3 = types_block(&l, 2, ids, b3); /* 50 repeated; 51 bad after good: reported */
    uint64_t o4 = types_block(&l, 2, ids, b4); /* 50 another bad value: reported; 51 repeated */
    int fd = tl_test_tmpfd();
    tl_test_fd_set(fd, l.file.data, l.file.len);
    tracelog_reader *r = NULL;
    tracelog_error err;
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        CHECK_EQ(tracelog_reader_problem_count(r), 4);
        CHECK_EQ(count_problems(r, o1), 2);
        CHECK_EQ(count_problems(r, o2), 0);
        CHECK(find_problem(r, TRACELOG_E_CORRUPT, o3, "event type 51: schema ignored"));
        CHECK_EQ(count_problems(r, o3), 1);
        CHECK(find_problem(r, TRACELOG_E_CORRUPT, o4, "event type 50: schema ignored: schema byte 0: unknown type 'u34'"));
        CHECK_EQ(count_problems(r, o4), 1);
        CHECK(tracelog_reader_event_schema(r, 50) == NULL);
        CHECK(tracelog_reader_event_schema(r, 51) == NULL);
    }
    tracelog_reader_close(r);
    close(fd);
    tl_buf_free(&l.file);
}

/* One block of payload p at the end of the log being built in f (seq: the block count so far). */
static void craft_block(tl_buf *f, uint32_t salt32, uint64_t *seq, uint16_t type, const tl_buf *p)
{
    tl_block_header h = {type, 0, (*seq)++, (uint32_t)p->len, tl_block_payload_crc(salt32, p->data, p->len)};
    size_t span = (size_t)tl_block_span((uint32_t)p->len);
    put(f, tl_buf_reserve(f, span));
    memset(f->data + f->len, 0, span);
    tl_block_header_encode(&h, salt32, f->data + f->len);
    memcpy(f->data + f->len + TL_BLOCK_HEADER_SIZE, p->data, p->len);
    f->len += span;
}

/*
 * More schema text than a reader keeps (4 MiB, format-spec 9.1). A writer
 * refuses it at definition (TRACELOG_E_LIMIT) and writes every schema it
 * took; a log made by another program that holds more is read with the
 * first ones in and the rest ignored with TRACELOG_E_LIMIT.
 */
static void test_schema_budget(void)
{
    enum { TYPES = 250, FIELDS = 250 };
    /* 18,498 bytes per schema (250 fields with 63-byte names): 250 of them are
       4.4 MiB, over the 4 MiB a reader keeps. */
    tl_buf text = {0};
    for (int i = 0; i < FIELDS; i++) {
        char field[96];
        int n = snprintf(field, sizeof field, "%sbytes[1] f%03d", i ? "; " : "", i);
        memset(field + n, 'x', 59);
        put(&text, tl_buf_append(&text, field, (size_t)n + 59));
    }
    put(&text, tl_buf_append(&text, "", 1));
    const char *schema = (const char *)text.data;
    CHECK_EQ(strlen(schema), 18498);
    size_t kept = (4u << 20) / strlen(schema);

    /* The writer: the first `kept` schemas, then TRACELOG_E_LIMIT; the name alone is still fine. */
    int fd = tl_test_tmpfd();
    tracelog_writer *w = NULL;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, NULL, &w, &err), TRACELOG_OK))
        return;
    for (uint32_t id = 100; id < 100 + TYPES; id++) {
        char name[16];
        snprintf(name, sizeof name, "t%u", id);
        tracelog_status want = id < 100 + kept ? TRACELOG_OK : TRACELOG_E_LIMIT;
        CHECK_STATUS(tracelog_writer_define_event_schema(w, id, name, schema, &err), want);
        if (want != TRACELOG_OK)
            CHECK_STATUS(tracelog_writer_define_event(w, id, name), TRACELOG_OK);
    }
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    tracelog_reader *r = NULL;
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        size_t with = 0;
        for (uint32_t id = 100; id < 100 + TYPES; id++)
            with += tracelog_reader_event_schema(r, id) != NULL;
        CHECK_EQ(with, kept);
        CHECK_EQ(tracelog_reader_event_type_count(r), TYPES);
        CHECK_EQ(tracelog_reader_problem_count(r), 0);
    }
    tracelog_reader_close(r);
    close(fd);

    /* A crafted log of TYPES typed EVENT_TYPES blocks, one type each. */
    tracelog_schema *parsed = NULL;
    if (!CHECK_STATUS(tracelog_schema_parse(schema, &parsed, &err), TRACELOG_OK))
        return;
    tl_file_header hdr = {.major = 1, .minor = 1, .header_size = TL_HEADER_SIZE, .salt = 0x1234567890abcdefull};
    uint32_t salt32 = tl_salt32(hdr.salt);
    tl_buf file = {0}, p = {0};
    uint64_t seq = 0;
    put(&file, tl_buf_reserve(&file, TL_HEADER_SIZE));
    tl_header_encode(&hdr, file.data);
    file.len = TL_HEADER_SIZE;
    tracelog_metadata m;
    tracelog_metadata_init(&m);
    CHECK_STATUS(tl_meta_encode(&m, &p), TRACELOG_OK);
    craft_block(&file, salt32, &seq, TL_BLOCK_METADATA, &p);
    for (uint32_t id = 100; id < 100 + TYPES; id++) {
        tl_type_entry e = {.id = id, .name = "t", .schema = parsed};
        p.len = 0;
        put(&p, tl_cbor_put_array(&p, 1));
        CHECK_STATUS(tl_types_encode_entry(&e, &p), TRACELOG_OK);
        craft_block(&file, salt32, &seq, TL_BLOCK_EVENT_TYPES, &p);
    }
    r = NULL;
    fd = tl_test_tmpfd();
    if (write(fd, file.data, file.len) != (ssize_t)file.len)
        TL_DIE("cannot write the crafted log");
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
        size_t with = 0;
        for (uint32_t id = 100; id < 100 + TYPES; id++)
            with += tracelog_reader_event_schema(r, id) != NULL;
        CHECK_EQ(with, kept);
        CHECK(tracelog_reader_event_schema(r, 100 + (uint32_t)kept - 1) != NULL);
        CHECK(tracelog_reader_event_schema(r, 100 + (uint32_t)kept) == NULL);
        CHECK_EQ(tracelog_reader_event_type_count(r), TYPES);
        CHECK_EQ(tracelog_reader_problem_count(r), TYPES - kept);
        tracelog_problem pr;
        if (CHECK_STATUS(tracelog_reader_problem(r, 0, &pr), TRACELOG_OK)) {
            CHECK_STATUS(pr.code, TRACELOG_E_LIMIT);
            CHECK(strstr(pr.message, "exceed 4194304 bytes") != NULL);
        }
    }
    tracelog_reader_close(r);
    close(fd);
    tracelog_schema_free(parsed);
    tl_buf_free(&p);
    tl_buf_free(&file);
    tl_buf_free(&text);
}

int main(void)
{
    TL_TEST_RUN(test_entry_encoding);
    TL_TEST_RUN(test_roundtrip);
    TL_TEST_RUN(test_define_errors);
    TL_TEST_RUN(test_reader_ignores_bad_schemas);
    TL_TEST_RUN(test_bad_schema_reported_once);
    TL_TEST_RUN(test_schema_budget);
    return tl_test_finish();
}
