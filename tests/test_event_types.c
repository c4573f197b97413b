/*
 * The event-type table (tracelog_event_types, format/event_types.h) that the
 * writer, the reader and ptlog share, and the TRAILER payload
 * (format/trailer.h): ordering, lookups by id and by name, renames, and a
 * trailer's encode/decode round trip and rejects.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/bytes.h"
#include "format/event_types.h"
#include "format/format.h"
#include "format/trailer.h"
#include "tl_test.h"

static void test_add_and_order(void)
{
    tracelog_event_types *t = tracelog_event_types_new();
    if (!CHECK(t))
        return;
    static const uint32_t ids[] = {40, 7, UINT32_MAX, 0, 12, 41};
    char name[32];
    for (size_t i = 0; i < sizeof ids / sizeof *ids; i++) {
        snprintf(name, sizeof name, "type %u", ids[i]);
        CHECK_STATUS(tracelog_event_types_add(t, ids[i], name), TRACELOG_OK);
    }
    CHECK_EQ(tracelog_event_types_count(t), 6);
    static const uint32_t sorted[] = {0, 7, 12, 40, 41, UINT32_MAX};
    for (size_t i = 0; i < 6; i++) {
        uint32_t id = 1;
        const char *n = NULL;
        CHECK_STATUS(tracelog_event_types_at(t, i, &id, &n), TRACELOG_OK);
        CHECK_EQ(id, sorted[i]);
        snprintf(name, sizeof name, "type %u", sorted[i]);
        CHECK_STR_EQ(n, name);
        CHECK(tracelog_event_types_name(t, sorted[i]) == n);
    }
    CHECK_STATUS(tracelog_event_types_at(t, 6, NULL, NULL), TRACELOG_E_INVAL);
    CHECK(tracelog_event_types_name(t, 8) == NULL);
    CHECK(tracelog_event_types_name(t, 1) == NULL);
    /* the same name again: a no-op; another name: refused, the first stays */
    CHECK_STATUS(tracelog_event_types_add(t, 7, "type 7"), TRACELOG_OK);
    CHECK_STATUS(tracelog_event_types_add(t, 7, "other"), TRACELOG_E_INVAL);
    CHECK_STR_EQ(tracelog_event_types_name(t, 7), "type 7");
    CHECK_EQ(tracelog_event_types_count(t), 6);
    /* names: 1 to TRACELOG_TEXT_MAX bytes */
    char longest[TRACELOG_TEXT_MAX + 2];
    memset(longest, 'n', sizeof longest - 1);
    longest[TRACELOG_TEXT_MAX + 1] = 0;
    CHECK_STATUS(tracelog_event_types_add(t, 100, longest), TRACELOG_E_INVAL);
    longest[TRACELOG_TEXT_MAX] = 0;
    CHECK_STATUS(tracelog_event_types_add(t, 100, longest), TRACELOG_OK);
    CHECK_STATUS(tracelog_event_types_add(t, 101, ""), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_event_types_add(t, 101, NULL), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_event_types_add(NULL, 101, "x"), TRACELOG_E_INVAL);
    CHECK_EQ(tracelog_event_types_count(NULL), 0);
    CHECK(tracelog_event_types_name(NULL, 7) == NULL);
    CHECK(!tracelog_event_types_find(NULL, "x", NULL));
    tracelog_event_types_free(t);
    tracelog_event_types_free(NULL);
}

static void test_find(void)
{
    tracelog_event_types *t = tracelog_event_types_new();
    uint32_t id = 0;
    CHECK(!tracelog_event_types_find(t, "a", &id)); /* empty */
    CHECK_STATUS(tracelog_event_types_add(t, 9, "a"), TRACELOG_OK);
    CHECK_STATUS(tracelog_event_types_add(t, 5, "b"), TRACELOG_OK);
    CHECK(tracelog_event_types_find(t, "a", &id) && id == 9);
    /* added after the index exists: the index follows, and keeps the lowest id of a name */
    CHECK_STATUS(tracelog_event_types_add(t, 3, "a"), TRACELOG_OK);
    CHECK_STATUS(tracelog_event_types_add(t, 11, "a"), TRACELOG_OK);
    CHECK(tracelog_event_types_find(t, "a", &id) && id == 3);
    CHECK(tracelog_event_types_find(t, "b", &id) && id == 5);
    CHECK(!tracelog_event_types_find(t, "c", &id));
    CHECK(tracelog_event_types_find(t, "b", NULL));
    /* many more names: the index grows (rebuilt) and still finds every one */
    char name[32];
    for (uint32_t i = 0; i < 5000; i++) {
        snprintf(name, sizeof name, "n%u", i);
        tracelog_event_types_add(t, 100000 - i, name);
    }
    int all = 1;
    for (uint32_t i = 0; i < 5000 && all; i++) {
        snprintf(name, sizeof name, "n%u", i);
        all = tracelog_event_types_find(t, name, &id) && id == 100000 - i;
    }
    CHECK_MSG(all, "a name added after the first lookup is not found at its id");
    CHECK(tracelog_event_types_find(t, "a", &id) && id == 3);
    tracelog_event_types_free(t);
}

/* The reader's use: a later definition renames, and the old name stays valid. */
static void test_rename(void)
{
    tracelog_event_types t;
    tl_event_types_init(&t);
    CHECK_STATUS(tl_event_types_set(&t, 4, "old", 3, 1), TRACELOG_OK);
    CHECK_STATUS(tl_event_types_set(&t, 2, "other", 5, 1), TRACELOG_OK);
    const char *old = tracelog_event_types_name(&t, 4);
    uint32_t id;
    CHECK(tracelog_event_types_find(&t, "old", &id) && id == 4);
    CHECK_STATUS(tl_event_types_set(&t, 4, "newer name", 5, 0), TRACELOG_E_INVAL);
    CHECK_STATUS(tl_event_types_set(&t, 4, "newer name", 5, 1), TRACELOG_OK); /* len 5: "newer" */
    CHECK_STR_EQ(tracelog_event_types_name(&t, 4), "newer");
    CHECK_STR_EQ(old, "old"); /* still readable (ASan would catch a use after free) */
    CHECK(!tracelog_event_types_find(&t, "old", &id));
    CHECK(tracelog_event_types_find(&t, "newer", &id) && id == 4);
    CHECK_EQ(tracelog_event_types_count(&t), 2);
    tl_event_types_clear(&t);
    CHECK_EQ(tracelog_event_types_count(&t), 0);
}

/* Ids in decreasing order end up sorted, and each is found. */
static void test_many_unordered(void)
{
    tracelog_event_types *t = tracelog_event_types_new();
    char name[32];
    const uint32_t n = 20000;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = (i % 2) ? i : n * 2 - i; /* alternately at the end and in the middle */
        snprintf(name, sizeof name, "e%u", id);
        tracelog_event_types_add(t, id, name);
    }
    CHECK_EQ(tracelog_event_types_count(t), n);
    uint32_t prev = 0;
    int ordered = 1, named = 1;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *nm;
        tracelog_event_types_at(t, i, &id, &nm);
        ordered &= i == 0 || id > prev;
        snprintf(name, sizeof name, "e%u", id);
        named &= strcmp(nm, name) == 0 && tracelog_event_types_name(t, id) == nm;
        prev = id;
    }
    CHECK(ordered);
    CHECK(named);
    tracelog_event_types_free(t);
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Checks every entry of t, in order, against the n sorted ids of want (named "e<id>"). */
static int table_matches(tracelog_event_types *t, const uint32_t *want, size_t n)
{
    char name[32];
    if (tracelog_event_types_count(t) != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *nm;
        if (tracelog_event_types_at(t, i, &id, &nm) != TRACELOG_OK || id != want[i])
            return 0;
        snprintf(name, sizeof name, "e%u", id);
        if (strcmp(nm, name) != 0 || tracelog_event_types_name(t, id) != nm)
            return 0;
    }
    return 1;
}

static int by_id(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/*
 * Ids in decreasing or shuffled order cost about what increasing ids cost:
 * 131,072 descending ids took the former table (one sorted array, an insert
 * a memmove of everything above it) 8-16 s; the blocks take milliseconds.
 * The entries come out sorted, and lookups agree, at every step.
 */
static void test_any_order_is_linear(void)
{
    const uint32_t n = 131072;
    uint32_t *ids = malloc(n * sizeof *ids), *sorted = malloc(n * sizeof *sorted);
    tracelog_event_types *t = tracelog_event_types_new();
    if (!CHECK(ids && sorted && t))
        goto out;
    char name[32];
    double start = cpu_seconds();
    for (uint32_t i = 0; i < n; i++) {
        snprintf(name, sizeof name, "e%u", n - i);
        tracelog_event_types_add(t, n - i, name);
    }
    double took = cpu_seconds() - start;
    CHECK_MSG(took < 2.0, "%u descending ids took %.2f s of CPU", n, took);
    for (uint32_t i = 0; i < n; i++)
        sorted[i] = i + 1;
    CHECK(table_matches(t, sorted, n));
    tracelog_event_types_free(t);

    /* a shuffle (a fixed LCG), checked against a sorted copy as it grows */
    t = tracelog_event_types_new();
    if (!CHECK(t))
        goto out;
    uint64_t x = 12345;
    for (uint32_t i = 0; i < n; i++)
        ids[i] = i * 7u;
    for (uint32_t i = n - 1; i > 0; i--) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        uint32_t j = (uint32_t)((x >> 33) % (i + 1)), tmp = ids[i];
        ids[i] = ids[j];
        ids[j] = tmp;
    }
    int ok = 1;
    start = cpu_seconds();
    for (uint32_t i = 0; i < n && ok; i++) {
        snprintf(name, sizeof name, "e%u", ids[i]);
        ok = tracelog_event_types_add(t, ids[i], name) == TRACELOG_OK && tracelog_event_types_name(t, ids[i]) &&
             !tracelog_event_types_name(t, ids[i] + 1) && tracelog_event_types_count(t) == i + 1u;
        if (ok && (i + 1) % 16384 == 0) {
            memcpy(sorted, ids, (i + 1) * sizeof *ids);
            qsort(sorted, i + 1, sizeof *sorted, by_id);
            ok = table_matches(t, sorted, i + 1);
        }
    }
    CHECK_MSG(ok, "the shuffled table went wrong");
    CHECK_STATUS(tracelog_event_types_at(t, n, NULL, NULL), TRACELOG_E_INVAL);
out:
    tracelog_event_types_free(t);
    free(ids);
    free(sorted);
}

/* ---- TRAILER ------------------------------------------------------------ */

typedef struct collected {
    uint32_t ids[8];
    char names[8][16];
    size_t n;
    int refuse_at; /* index whose entry the sink refuses, -1 for none */
} collected;

static tracelog_status collect(void *ctx, uint32_t id, const char *name, size_t len,
                               const tl_cbor_item *schema)
{
    (void)schema;
    collected *c = ctx;
    if ((int)c->n == c->refuse_at)
        return TRACELOG_E_LIMIT;
    if (c->n < 8 && len < 16) {
        c->ids[c->n] = id;
        memcpy(c->names[c->n], name, len);
        c->names[c->n][len] = 0;
    }
    c->n++;
    return TRACELOG_OK;
}

static void make_trailer(tl_buf *out, size_t ntypes, size_t nindex)
{
    static tracelog_log_status st = {10, 9, 1, 2, 5, 1, 3, 4};
    static const uint32_t order[] = {30, 2, 7};
    static const tl_index_entry index[] = {{64, 1, 100, 200, 5}, {512, 3, 150, 400, 7}};
    tracelog_event_types types;
    tl_event_types_init(&types);
    tracelog_event_types_add(&types, 2, "two");
    tracelog_event_types_add(&types, 7, "seven");
    tracelog_event_types_add(&types, 30, "thirty");
    tl_trailer t = {&st, &types, order, ntypes, index, nindex, 4096};
    out->len = 0;
    if (tl_trailer_encode(&t, out) != TRACELOG_OK)
        TL_DIE("trailer encoding failed");
    tl_event_types_clear(&types);
}

static void test_trailer_roundtrip(void)
{
    tl_buf b = {0};
    make_trailer(&b, 3, 2);
    CHECK_EQ(b.len % 8, 0);
    CHECK_MEM_EQ(b.data + b.len - 8, TL_END_MAGIC, 8);
    CHECK_EQ(tl_load64(b.data + b.len - 16), 4096);
    uint32_t n = tl_load32(b.data);
    size_t idx = (size_t)tl_align8(4 + (uint64_t)n);
    CHECK_EQ(tl_load64(b.data + idx), 2);
    CHECK_EQ(tl_load64(b.data + idx + 8 + 40), 512); /* second entry's offset */
    CHECK_EQ(tl_load32(b.data + idx + 8 + 40 + 32), 7);
    CHECK_EQ(b.len, idx + 8 + 2 * 40 + 16);
    tl_trailer_info info;
    collected c = {.refuse_at = -1};
    const char *why = "";
    CHECK_STATUS(tl_trailer_decode(b.data, b.len, &info, collect, &c, &why), TRACELOG_OK);
    CHECK(info.have_status);
    CHECK_EQ(info.status.events_recorded, 10);
    CHECK_EQ(info.status.log_overruns, 2);
    CHECK_EQ(info.status.flush_error, 5);
    CHECK_EQ(info.status.log_full, 1);
    CHECK_EQ(c.n, 3); /* in the order given */
    CHECK(c.ids[0] == 30 && c.ids[1] == 2 && c.ids[2] == 7);
    CHECK_STR_EQ(c.names[0], "thirty");
    /* no types, no index (as a ring writes it) */
    make_trailer(&b, 0, 0);
    memset(&c, 0, sizeof c);
    c.refuse_at = -1;
    CHECK_STATUS(tl_trailer_decode(b.data, b.len, &info, collect, &c, &why), TRACELOG_OK);
    CHECK_EQ(c.n, 0);
    CHECK(info.have_status);
    tl_buf_free(&b);
}

static void test_trailer_rejects(void)
{
    tl_buf b = {0};
    tl_trailer_info info;
    const char *why;
    collected c = {.refuse_at = -1};
    make_trailer(&b, 3, 2);
    uint8_t *copy = malloc(b.len);
    for (size_t cut = 0; cut < b.len; cut += 8) { /* every shorter (aligned) length */
        memcpy(copy, b.data, cut);
        CHECK_STATUS(tl_trailer_decode(copy, cut, &info, collect, &c, &why), TRACELOG_E_CORRUPT);
    }
    struct { size_t at; uint8_t x; const char *what; } flips[] = {
        {b.len - 1, 0x01, "end magic"},
        {0, 0x01, "cbor_len"},
        {(size_t)tl_align8(4 + (uint64_t)tl_load32(b.data)), 0x01, "index count"},
    };
    for (size_t i = 0; i < sizeof flips / sizeof *flips; i++) {
        tl_test_context("%s", flips[i].what);
        memcpy(copy, b.data, b.len);
        copy[flips[i].at] ^= flips[i].x;
        CHECK_STATUS(tl_trailer_decode(copy, b.len, &info, collect, &c, &why), TRACELOG_E_CORRUPT);
    }
    tl_test_context(NULL);
    /* a sink that refuses an entry: its status comes back, entries before it were passed */
    memset(&c, 0, sizeof c);
    c.refuse_at = 1;
    CHECK_STATUS(tl_trailer_decode(b.data, b.len, &info, collect, &c, &why), TRACELOG_E_LIMIT);
    CHECK_EQ(c.n, 1);
    /* n one byte short: the map runs past its n bytes */
    memcpy(copy, b.data, b.len);
    tl_store32(copy, tl_load32(copy) - 1);
    c.refuse_at = -1;
    CHECK_STATUS(tl_trailer_decode(copy, b.len, &info, collect, &c, &why), TRACELOG_E_CORRUPT);
    free(copy);
    tl_buf_free(&b);
}

int main(void)
{
    TL_TEST_RUN(test_add_and_order);
    TL_TEST_RUN(test_find);
    TL_TEST_RUN(test_rename);
    TL_TEST_RUN(test_many_unordered);
    TL_TEST_RUN(test_any_order_is_linear);
    TL_TEST_RUN(test_trailer_roundtrip);
    TL_TEST_RUN(test_trailer_rejects);
    return tl_test_finish();
}
