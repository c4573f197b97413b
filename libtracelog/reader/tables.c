/*
 * What the small blocks define (format-spec/ptl-format.md section 5):
 * METADATA, EVENT_TYPES (names and schemas), THREADS, STATUS and TRAILER,
 * each checked as a whole and then applied to the reader, in file order
 * (a ring's in scan order: thread definitions are sorted by seq after the
 * scan). A bad table is a problem of its block; the others still apply.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/array.h"
#include "common/crc32c.h"
#include "format/cbor_io.h"
#include "format/event_types.h"
#include "format/meta.h"
#include "format/schema.h"
#include "format/threads.h"
#include "format/trailer.h"
#include "reader/internal.h"

/* ---- event types --------------------------------------------------------- */

static size_t ignored_slot(const tl_ignored_slot *v, size_t cap, uint32_t id)
{
    uint64_t key = (uint64_t)id + 1;
    size_t i = (size_t)(key * 0x9e3779b97f4a7c15ull >> 32) & (cap - 1);
    while (v[i].key && v[i].key != key)
        i = (i + 1) & (cap - 1);
    return i;
}

static uint64_t ignored_get(const tracelog_reader *r, uint32_t id)
{
    return r->ignored_cap ? r->ignored[ignored_slot(r->ignored, r->ignored_cap, id)].tag : 0;
}

/* Sets id's tag (0: none ignored). TRACELOG_E_NOMEM. */
static tracelog_status ignored_set(tracelog_reader *r, uint32_t id, uint64_t tag)
{
    if (!tag && !ignored_get(r, id))
        return TRACELOG_OK;
    if (2 * (r->ignored_n + 1) > r->ignored_cap) {
        size_t cap = r->ignored_cap ? 2 * r->ignored_cap : 64;
        tl_ignored_slot *v = calloc(cap, sizeof *v);
        if (!v)
            return TRACELOG_E_NOMEM;
        for (size_t i = 0; i < r->ignored_cap; i++)
            if (r->ignored[i].key)
                v[ignored_slot(v, cap, (uint32_t)(r->ignored[i].key - 1))] = r->ignored[i];
        free(r->ignored);
        r->ignored = v;
        r->ignored_cap = cap;
    }
    size_t i = ignored_slot(r->ignored, r->ignored_cap, id);
    r->ignored_n += !r->ignored[i].key;
    r->ignored[i] = (tl_ignored_slot){(uint64_t)id + 1, tag};
    return TRACELOG_OK;
}

/*
 * A tag of a schema value the reader ignores, so that the same value given
 * again to the same id (a TRAILER repeats the table) is reported once.
 */
static uint64_t ignored_tag(const tl_cbor_item *item)
{
    if (item->kind != TL_CBOR_TEXT)
        return 1;
    return (uint64_t)tl_crc32c(0, item->ptr, item->len) << 32 | (uint32_t)item->len | 2;
}

/* Reports an ignored schema, unless id's last ignored value was this one. */
static void ignored(tracelog_reader *r, uint32_t id, const tl_cbor_item *item, uint64_t *tag, tl_condition cond,
                    const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void ignored(tracelog_reader *r, uint32_t id, const tl_cbor_item *item, uint64_t *tag, tl_condition cond,
                    const char *fmt, ...)
{
    *tag = ignored_tag(item);
    if (ignored_get(r, id) == *tag)
        return;
    char message[sizeof ((tracelog_problem *)0)->message];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    tl_reader_problem(r, cond, r->types_block, 0, "%s", message);
}

/*
 * Schema text kept per log (canonical bytes of every schema taken, replaced
 * ones included): bounds what a file can make the reader hold in parsed
 * schemas, which take about 10 bytes per byte of text (format-spec 9.2).
 */

/*
 * The schema an entry gives its type (section 5.6.6) into *out: NULL when
 * it gives none or one the reader ignores, which is reported as a problem
 * of the block being decoded (the entry's name applies all the same) and
 * tagged in *tag (0 otherwise). TRACELOG_E_NOMEM only.
 */
static tracelog_status entry_schema(tracelog_reader *r, uint32_t id, const tl_cbor_item *item,
                                    tracelog_schema **out, uint64_t *tag)
{
    *out = NULL;
    *tag = 0;
    if (!item)
        return TRACELOG_OK;
    if (item->kind != TL_CBOR_TEXT) {
        ignored(r, id, item, tag, TL_COND_BAD_SCHEMA, "event type %u: schema is not text: ignored", id);
        return TRACELOG_OK;
    }
    tracelog_schema *s = NULL;
    tracelog_error err;
    tracelog_status st = tl_schema_parse((const char *)item->ptr, item->len, &s, &err);
    if (st == TRACELOG_E_NOMEM)
        return st;
    if (st != TRACELOG_OK) {
        ignored(r, id, item, tag, st == TRACELOG_E_LIMIT ? TL_COND_SCHEMA_TOO_LARGE : TL_COND_BAD_SCHEMA,
                "event type %u: schema ignored: %s", id, err.message);
        return TRACELOG_OK;
    }
    const tl_type_entry *known = tl_event_types_get(&r->types, id);
    if ((!known || !tl_schema_equal(known->schema, s)) &&
        r->types.schema_bytes + tl_schema_text_len(s) > TL_LOG_SCHEMA_BYTES_MAX) {
        ignored(r, id, item, tag, TL_COND_TOO_MANY_SCHEMA_BYTES,
                "event type %u: schema ignored: the log's schemas exceed %u bytes", id, TL_LOG_SCHEMA_BYTES_MAX);
        tracelog_schema_free(s);
        return TRACELOG_OK;
    }
    *out = s;
    return TRACELOG_OK;
}

static tracelog_status add_type(void *ctx, uint32_t id, const char *name, size_t len,
                                const tl_cbor_item *schema)
{
    tracelog_reader *r = ctx;
    if (r->types.n >= r->opt.max_event_types && !tl_event_types_get(&r->types, id))
        return TRACELOG_E_LIMIT;
    tracelog_schema *s;
    uint64_t tag;
    tracelog_status st = entry_schema(r, id, schema, &s, &tag);
    if (st == TRACELOG_OK)
        st = tl_event_types_set_typed(&r->types, id, name, len, s, 1);
    return st == TRACELOG_OK ? ignored_set(r, id, tag) : st;
}

/* ---- threads ------------------------------------------------------------- */

typedef struct threads_block {
    tracelog_reader *r;
    uint64_t seq, off;
    uint64_t entry;     /* index of the entry being applied */
    int name_reported;  /* a block's ignored names are one problem */
} threads_block;

/* An ignored name leaves its definition valid (spec 5.7): what a 1.1 reader, which skips the key, reads too. */
static void bad_name(threads_block *b, const tl_thread_entry *e)
{
    if (b->name_reported)
        return;
    b->name_reported = 1;
    tl_reader_problem(b->r, TL_COND_BAD_THREAD_NAME, b->off, 0, "threads: entry %llu (pid %u, ktid %u): name %s: ignored",
                      (unsigned long long)b->entry, e->d.pid, e->d.ktid, e->name_bad);
}

/* Keeps a definition; it applies from the set whose last chunk comes after it (6.10). */
static tracelog_status add_thread(void *ctx, const tl_thread_entry *e)
{
    threads_block *b = ctx;
    tracelog_reader *r = b->r;
    if (r->ndefs >= r->opt.max_threads)
        return TRACELOG_E_LIMIT;
    thread_def_at *p = tl_grow(r->defs, &r->defs_cap, r->ndefs + 1, sizeof *p);
    if (!p)
        return TRACELOG_E_NOMEM;
    r->defs = p;
    tl_thread_def d = e->d;
    if (e->name && !(d.name = tl_thread_names_intern(&r->names, e->name, e->name_len)))
        return TRACELOG_E_NOMEM;
    if (e->name_bad)
        bad_name(b, e);
    r->defs[r->ndefs] = (thread_def_at){d, b->seq, r->ndefs};
    r->ndefs++;
    b->entry++;
    return TRACELOG_OK;
}

static int by_def_seq(const void *a, const void *b)
{
    const thread_def_at *x = a, *y = b;
    if (x->seq != y->seq)
        return x->seq < y->seq ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

/* After the open scan: definitions in the order they were written (a ring's blocks are scanned out of it). */
void tl_reader_sort_defs(tracelog_reader *r)
{
    for (size_t i = 1; i < r->ndefs; i++)
        if (r->defs[i].seq < r->defs[i - 1].seq) {
            qsort(r->defs, r->ndefs, sizeof *r->defs, by_def_seq);
            return;
        }
}

/* A CBOR payload is first checked as a whole against the profile (spec 5.1), then interpreted. */
static int cbor_payload_ok(tracelog_reader *r, tl_condition cond, uint64_t off, const uint8_t *p, size_t len)
{
    if (tl_cbor_check(p, len) == 0)
        return 1;
    tl_reader_problem(r, cond, off, 0, "not one well-formed CBOR item of the format's profile");
    return 0;
}

void tl_reader_take_metadata(tracelog_reader *r, uint64_t off)
{
    const char *why = "";
    tracelog_metadata m;
    if (!cbor_payload_ok(r, TL_COND_BAD_METADATA, off, r->payload.data, r->payload.len))
        return;
    if (tl_meta_decode(r->payload.data, r->payload.len, tl_reader_layout_policy(r), &m, &why) != TRACELOG_OK) {
        tl_reader_problem(r, TL_COND_BAD_METADATA, off, 0, "%s", why);
        return;
    }
    if (!r->have_meta) {
        r->meta = m;
        r->have_meta = 1;
    }
}

/* The sink of a validation pass: the decoder has checked the entry; nothing is applied. */
static tracelog_status check_type(void *ctx, uint32_t id, const char *name, size_t len, const tl_cbor_item *schema)
{
    (void)ctx, (void)id, (void)name, (void)len, (void)schema;
    return TRACELOG_OK;
}

/* Why an event-type table stopped: a bad entry, the reader's limit, or memory. */
static tl_condition types_condition(tracelog_status st)
{
    return st == TRACELOG_E_LIMIT ? TL_COND_TOO_MANY_EVENT_TYPES
           : st == TRACELOG_E_NOMEM ? TL_COND_OUT_OF_MEMORY : TL_COND_BAD_EVENT_TYPES;
}

void tl_reader_take_types(tracelog_reader *r, uint64_t off)
{
    const char *why = "";
    r->types_block = off;
    tl_cbor_in in = {r->payload.data, r->payload.data + r->payload.len};
    if (!cbor_payload_ok(r, TL_COND_BAD_EVENT_TYPES, off, r->payload.data, r->payload.len))
        return;
    /* Valid as a whole or not at all: check every entry before applying any. */
    tl_cbor_in check = in;
    tracelog_status st = tl_types_decode(&check, check_type, r, &why);
    if (st == TRACELOG_OK)
        st = tl_types_decode(&in, add_type, r, &why);
    if (st != TRACELOG_OK)
        tl_reader_problem(r, types_condition(st), off, 0, "%s", why);
}

/* The final status is the newest one (highest seq) of the valid STATUS blocks and TRAILERs. */
static void keep_status(tracelog_reader *r, const tracelog_log_status *st, uint64_t seq)
{
    if (!r->have_status || seq > r->status_seq) {
        r->status = *st;
        r->status_seq = seq;
        r->have_status = 1;
    }
}

static tracelog_status check_thread(void *ctx, const tl_thread_entry *e)
{
    (void)ctx, (void)e;
    return TRACELOG_OK;
}

void tl_reader_take_threads(tracelog_reader *r, uint64_t off, uint64_t seq)
{
    const char *why = "";
    tl_cbor_in in = {r->payload.data, r->payload.data + r->payload.len};
    if (!cbor_payload_ok(r, TL_COND_BAD_THREADS, off, r->payload.data, r->payload.len))
        return;
    /* Valid as a whole or not at all, as EVENT_TYPES: check every entry before applying any. */
    tl_cbor_in check = in;
    threads_block b = {r, seq, off, 0, 0};
    tracelog_status st = tl_threads_decode(&check, check_thread, NULL, &why);
    if (st == TRACELOG_OK)
        st = tl_threads_decode(&in, add_thread, &b, &why);
    if (st == TRACELOG_E_LIMIT)
        tl_reader_problem(r, TL_COND_TOO_MANY_THREADS, off, 0, "threads: more definitions than the reader keeps (max_threads)");
    else if (st != TRACELOG_OK)
        tl_reader_problem(r, st == TRACELOG_E_NOMEM ? TL_COND_OUT_OF_MEMORY : TL_COND_BAD_THREADS, off, 0, "%s", why);
}

void tl_reader_take_status(tracelog_reader *r, uint64_t off, uint64_t seq)
{
    const char *why = "";
    tracelog_log_status st;
    tl_cbor_in in = {r->payload.data, r->payload.data + r->payload.len};
    if (!cbor_payload_ok(r, TL_COND_BAD_STATUS, off, r->payload.data, r->payload.len))
        return;
    if (tl_status_decode(&in, &st, &why) != TRACELOG_OK) {
        tl_reader_problem(r, TL_COND_BAD_STATUS, off, 0, "%s", why);
        return;
    }
    keep_status(r, &st, seq);
}

void tl_reader_take_trailer(tracelog_reader *r, uint64_t off, uint64_t seq)
{
    const char *why = "";
    tl_trailer_info t;
    r->types_block = off;
    /* Valid as a whole or not at all: a first pass checks it, a second applies its names. */
    if (tl_trailer_decode(r->payload.data, r->payload.len, &t, check_type, r, &why) != TRACELOG_OK) {
        tl_reader_problem(r, TL_COND_BAD_TRAILER, off, 0, "%s", why);
        return;
    }
    tracelog_status st = tl_trailer_decode(r->payload.data, r->payload.len, &t, add_type, r, &why);
    if (st != TRACELOG_OK) /* only the reader's own limits can stop a valid trailer's names */
        tl_reader_problem(r, types_condition(st), off, 0, "%s", why);
    if (t.have_status) /* a trailer without "status" leaves the status as it was */
        keep_status(r, &t.status, seq);
    r->have_trailer = 1;
    if (seq > r->trailer_seq)
        r->trailer_seq = seq;
}

/* Names the writer had no room for are a loss the final status tells of: said once, at the end of the scan. */
void tl_reader_report_drops(tracelog_reader *r)
{
    if (r->drops_reported || !r->have_status)
        return;
    r->drops_reported = 1;
    if (r->status.types_dropped)
        tl_reader_problem(r, TL_COND_TYPES_DROPPED, r->hdr.header_size, 0,
                          "%llu event-type names did not fit in the log (LOOP durable region full): events unnamed",
                          (unsigned long long)r->status.types_dropped);
    if (r->status.threads_dropped)
        tl_reader_problem(r, TL_COND_THREADS_DROPPED, r->hdr.header_size, 0,
                          "%llu thread definitions dropped (a LOOP log's durable region full, or over 1,048,576): "
                          "kernel tids lost", /* within a problem's 120 bytes, whatever the count */
                          (unsigned long long)r->status.threads_dropped);
}

