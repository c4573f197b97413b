/*
 * fuzz_cbor_meta: any bytes through the CBOR decoders of the METADATA,
 * EVENT_TYPES, STATUS and THREADS payloads (libtracelog/format/meta.h,
 * event_types.h, threads.h), each on the whole input.
 *
 * Properties:
 *  - decoding never crashes, reads out of bounds or allocates (the pull
 *    reader only compares declared sizes with the bytes present);
 *  - a failure is TRACELOG_E_CORRUPT with a reason (or the sink's status);
 *  - what decodes re-encodes, and the encoding decodes to the same value
 *    (struct for struct, entry for entry), and encoding is canonical:
 *    encode(decode(encode(x))) == encode(x).
 */
#define _GNU_SOURCE
#include "format/event_types.h"
#include "format/meta.h"
#include "format/schema.h"
#include "format/threads.h"
#include "fuzz_helpers.h"

static void check_meta(const uint8_t *data, size_t size)
{
    tracelog_metadata a, b;
    const char *why = NULL;
    tracelog_status st = tl_meta_decode(data, size, TRACELOG_POLICY_APPEND, &a, &why);
    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(st == TRACELOG_E_CORRUPT, "meta_decode: %s", tracelog_status_name(st));
        FUZZ_ASSERT(why != NULL && *why);
        return;
    }
    FUZZ_DEEP();
    tl_buf e1 = {0}, e2 = {0};
    FUZZ_ASSERT(tl_meta_encode(&a, &e1) == TRACELOG_OK, "decoded metadata does not encode");
    st = tl_meta_decode(e1.data, e1.len, TRACELOG_POLICY_APPEND, &b, &why);
    FUZZ_ASSERT(st == TRACELOG_OK, "re-encoded metadata does not decode: %s", why);
    FUZZ_ASSERT(fuzz_meta_equal(&a, &b), "metadata changed through encode/decode");
    FUZZ_ASSERT(tl_meta_encode(&b, &e2) == TRACELOG_OK);
    FUZZ_ASSERT(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0, "metadata encoding not canonical");
    tl_buf_free(&e1);
    tl_buf_free(&e2);
}

typedef struct type_list {
    tl_type_entry *e;
    size_t n, cap;
} type_list;

/* Keeps an entry; its schema only if it is text that parses (what a reader keeps). */
static tracelog_status collect_type(void *ctx, uint32_t id, const char *name, size_t len,
                                    const tl_cbor_item *schema)
{
    type_list *l = ctx;
    tracelog_schema *parsed = NULL;
    if (schema && schema->kind == TL_CBOR_TEXT &&
        tl_schema_parse((const char *)schema->ptr, schema->len, &parsed, NULL) != TRACELOG_OK)
        parsed = NULL;
    FUZZ_ASSERT(len >= 1 && len <= TRACELOG_TEXT_MAX);
    FUZZ_ASSERT(memchr(name, 0, len) == NULL);
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 16;
        l->e = realloc(l->e, l->cap * sizeof *l->e);
        FUZZ_CHECK_SYS(l->e != NULL);
    }
    char *copy = malloc(len + 1);
    FUZZ_CHECK_SYS(copy != NULL);
    memcpy(copy, name, len);
    copy[len] = 0;
    l->e[l->n++] = (tl_type_entry){id, copy, parsed};
    return TRACELOG_OK;
}

static void free_types(type_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->e[i].name);
        tracelog_schema_free((tracelog_schema *)l->e[i].schema);
    }
    free(l->e);
    memset(l, 0, sizeof *l);
}

static void check_types(const uint8_t *data, size_t size)
{
    type_list a = {0}, b = {0};
    const char *why = NULL;
    tl_cbor_in in = {data, data + size};
    tracelog_status st = tl_types_decode(&in, collect_type, &a, &why);
    FUZZ_ASSERT(in.p >= data && in.p <= data + size, "types_decode moved past its input");
    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(st == TRACELOG_E_CORRUPT, "types_decode: %s", tracelog_status_name(st));
        FUZZ_ASSERT(why != NULL && *why);
        free_types(&a);
        return;
    }
    FUZZ_DEEP();
    tl_buf e1 = {0}, e2 = {0};
    FUZZ_ASSERT(tl_types_encode(a.e, a.n, &e1) == TRACELOG_OK);
    tl_cbor_in in2 = {e1.data, e1.data + e1.len};
    st = tl_types_decode(&in2, collect_type, &b, &why);
    FUZZ_ASSERT(st == TRACELOG_OK, "re-encoded event types do not decode: %s", why);
    FUZZ_ASSERT(in2.p == e1.data + e1.len, "re-encoded event types: bytes left over");
    FUZZ_ASSERT(a.n == b.n, "%zu event types, %zu after encode/decode", a.n, b.n);
    for (size_t i = 0; i < a.n; i++)
        FUZZ_ASSERT(a.e[i].id == b.e[i].id && strcmp(a.e[i].name, b.e[i].name) == 0 &&
                        tl_schema_equal(a.e[i].schema, b.e[i].schema),
                    "event type %zu changed", i);
    FUZZ_ASSERT(tl_types_encode(b.e, b.n, &e2) == TRACELOG_OK);
    FUZZ_ASSERT(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0, "event types encoding not canonical");
    tl_buf_free(&e1);
    tl_buf_free(&e2);
    free_types(&a);
    free_types(&b);
}

static void check_status(const uint8_t *data, size_t size)
{
    tracelog_log_status a, b;
    const char *why = NULL;
    tl_cbor_in in = {data, data + size};
    tracelog_status st = tl_status_decode(&in, &a, &why);
    FUZZ_ASSERT(in.p >= data && in.p <= data + size, "status_decode moved past its input");
    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(st == TRACELOG_E_CORRUPT, "status_decode: %s", tracelog_status_name(st));
        FUZZ_ASSERT(why != NULL && *why);
        return;
    }
    FUZZ_DEEP();
    FUZZ_ASSERT(a.flush_error >= 0);
    FUZZ_ASSERT(a.log_full <= 1);
    tl_buf e1 = {0}, e2 = {0};
    FUZZ_ASSERT(tl_status_encode(&a, &e1) == TRACELOG_OK);
    tl_cbor_in in2 = {e1.data, e1.data + e1.len};
    st = tl_status_decode(&in2, &b, &why);
    FUZZ_ASSERT(st == TRACELOG_OK, "re-encoded status does not decode: %s", why);
    FUZZ_ASSERT(in2.p == e1.data + e1.len, "re-encoded status: bytes left over");
    FUZZ_ASSERT(memcmp(&a, &b, sizeof a) == 0, "status changed through encode/decode");
    FUZZ_ASSERT(tl_status_encode(&b, &e2) == TRACELOG_OK);
    FUZZ_ASSERT(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0, "status encoding not canonical");
    tl_buf_free(&e1);
    tl_buf_free(&e2);
}

typedef struct thread_list {
    tl_thread_def d[64];
    char name[64][TL_THREAD_NAME_MAX + 1]; /* "": none kept */
    size_t n;
} thread_list;

static tracelog_status collect_thread(void *ctx, const tl_thread_entry *e)
{
    thread_list *l = ctx;
    FUZZ_ASSERT(e->d.ktid != 0, "a thread entry with kernel tid 0 was accepted");
    FUZZ_ASSERT(!(e->name && e->name_bad), "a name both kept and ignored");
    FUZZ_ASSERT(!e->name || !tl_thread_name_invalid(e->name, e->name_len), "an invalid thread name was kept");
    if (l->n == 64)
        return TRACELOG_E_LIMIT; /* the sink's status comes back */
    l->d[l->n] = e->d;
    memset(l->name[l->n], 0, sizeof l->name[l->n]);
    if (e->name)
        memcpy(l->name[l->n], e->name, e->name_len);
    l->n++;
    return TRACELOG_OK;
}

static void encode_threads(const thread_list *l, tl_buf *out)
{
    FUZZ_ASSERT(tl_cbor_put_array(out, l->n) == 0);
    for (size_t i = 0; i < l->n; i++)
        FUZZ_ASSERT(tl_threads_encode_entry(&l->d[i], l->name[i], out) == TRACELOG_OK);
}

static void check_threads(const uint8_t *data, size_t size)
{
    static thread_list a, b;
    a.n = b.n = 0;
    const char *why = NULL;
    tl_cbor_in in = {data, data + size};
    tracelog_status st = tl_threads_decode(&in, collect_thread, &a, &why);
    FUZZ_ASSERT(in.p >= data && in.p <= data + size, "threads_decode moved past its input");
    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(st == TRACELOG_E_CORRUPT || st == TRACELOG_E_LIMIT, "threads_decode: %s",
                    tracelog_status_name(st));
        FUZZ_ASSERT(why != NULL && *why);
        return;
    }
    FUZZ_DEEP();
    tl_buf e1 = {0}, e2 = {0};
    encode_threads(&a, &e1);
    tl_cbor_in in2 = {e1.data, e1.data + e1.len};
    st = tl_threads_decode(&in2, collect_thread, &b, &why);
    FUZZ_ASSERT(st == TRACELOG_OK, "re-encoded threads do not decode: %s", why);
    FUZZ_ASSERT(in2.p == e1.data + e1.len, "re-encoded threads: bytes left over");
    FUZZ_ASSERT(a.n == b.n, "threads changed through encode/decode");
    for (size_t i = 0; i < a.n; i++)
        FUZZ_ASSERT(a.d[i].pid == b.d[i].pid && a.d[i].tid == b.d[i].tid && a.d[i].ktid == b.d[i].ktid &&
                        a.d[i].name == 0 && b.d[i].name == 0,
                    "thread %zu changed through encode/decode", i);
    FUZZ_ASSERT(memcmp(a.name, b.name, a.n * sizeof *a.name) == 0, "thread names changed through encode/decode");
    encode_threads(&b, &e2);
    FUZZ_ASSERT(e1.len == e2.len && memcmp(e1.data, e2.data, e1.len) == 0, "threads encoding not canonical");
    tl_buf_free(&e1);
    tl_buf_free(&e2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_meta(data, size);
    check_types(data, size);
    check_status(data, size);
    check_threads(data, size);
    return 0;
}
