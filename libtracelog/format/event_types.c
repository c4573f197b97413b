/*
 * The event-type table and the EVENT_TYPES payload. The table keeps its
 * entries sorted by id in blocks (event_types.h): a lookup is two binary
 * searches, and ids usually come in increasing order, so an insert is an
 * append to the last block. A hash index name -> lowest id is built only
 * when a caller first looks a name up (the reader and the writer never do).
 */
#include "format/event_types.h"

#include <string.h>

#include "common/array.h"
#include "format/schema.h"

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)
#define PUT(expr) do { if (expr) return TRACELOG_E_NOMEM; } while (0)

/* Entries per block: a split or an insert moves at most this many (24 bytes each). */
#define TL_TYPE_BLOCK_MAX 512

void tl_event_types_init(tracelog_event_types *t) { memset(t, 0, sizeof *t); }

void tl_event_types_clear(tracelog_event_types *t)
{
    for (size_t b = 0; b < t->nblocks; b++) {
        tl_type_block *k = &t->blocks[b];
        for (size_t i = 0; i < k->n; i++) {
            free((char *)k->e[i].name);
            tracelog_schema_free((tracelog_schema *)k->e[i].schema);
        }
        free(k->e);
    }
    for (size_t i = 0; i < t->nretired; i++)
        free(t->retired[i]);
    for (size_t i = 0; i < t->nretired_schemas; i++)
        tracelog_schema_free(t->retired_schemas[i]);
    free(t->blocks);
    free(t->retired);
    free(t->retired_schemas);
    free(t->by_name);
    tl_event_types_init(t);
}

/* The block that holds id or would: the last whose first id is <= id, else the first. The table is not empty. */
static size_t block_of(const tracelog_event_types *t, uint32_t id)
{
    size_t lo = 0, hi = t->nblocks;
    if (t->blocks[hi - 1].e[0].id <= id) /* the common case: at or past the last block's start */
        return hi - 1;
    while (lo < hi) { /* the first block whose first id is > id */
        size_t mid = lo + (hi - lo) / 2;
        if (t->blocks[mid].e[0].id <= id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo ? lo - 1 : 0;
}

/* Index in k of the first entry whose id is >= id. */
static size_t slot_in(const tl_type_block *k, uint32_t id)
{
    if (k->e[k->n - 1].id < id) /* the common case: a new largest id */
        return k->n;
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (k->e[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static tl_type_entry *find_entry(const tracelog_event_types *t, uint32_t id)
{
    if (!t->n)
        return NULL;
    const tl_type_block *k = &t->blocks[block_of(t, id)];
    size_t i = slot_in(k, id);
    return i < k->n && k->e[i].id == id ? &k->e[i] : NULL;
}

const tl_type_entry *tl_event_types_get(const tracelog_event_types *t, uint32_t id) { return find_entry(t, id); }

/* The entry at index (< t->n) in id order: the last block starting at or before it. */
static const tl_type_entry *entry_at(const tracelog_event_types *t, size_t index)
{
    size_t lo = 0, hi = t->nblocks;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->blocks[mid].before <= index)
            lo = mid;
        else
            hi = mid;
    }
    return &t->blocks[lo].e[index - t->blocks[lo].before];
}

/* ---- the name index --------------------------------------------------------- */

/* 64-bit FNV-1a. */
static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static void drop_index(tracelog_event_types *t)
{
    free(t->by_name);
    t->by_name = NULL;
    t->slots = t->slots_used = 0;
}

/* The slot holding name, or the empty slot where it goes. */
static tl_name_slot *probe(const tracelog_event_types *t, const char *name, uint64_t h)
{
    for (size_t i = (size_t)h & (t->slots - 1);; i = (i + 1) & (t->slots - 1)) {
        tl_name_slot *s = &t->by_name[i];
        if (!s->used)
            return s;
        if (s->hash == h && strcmp(tl_event_types_get(t, s->id)->name, name) == 0)
            return s;
    }
}

/* Notes that id is named name; keeps the lowest id of a name. The index must have a free slot. */
static void index_name(tracelog_event_types *t, uint32_t id, const char *name)
{
    uint64_t h = name_hash(name);
    tl_name_slot *s = probe(t, name, h);
    if (s->used && s->id < id)
        return;
    if (!s->used)
        t->slots_used++;
    *s = (tl_name_slot){h, id, 1};
}

/* (Re)builds the index with room for `want` names at half load. 0 or -1 (out of memory: no index). */
static int build_index(tracelog_event_types *t, size_t want)
{
    size_t slots = 64;
    while (slots < 2 * want)
        slots *= 2;
    drop_index(t);
    t->by_name = calloc(slots, sizeof *t->by_name);
    if (!t->by_name)
        return -1;
    t->slots = slots;
    for (size_t b = 0; b < t->nblocks; b++)
        for (size_t i = 0; i < t->blocks[b].n; i++)
            index_name(t, t->blocks[b].e[i].id, t->blocks[b].e[i].name);
    return 0;
}

/* Keeps the index (if there is one) up to date with a new entry; drops it when it cannot grow. */
static void index_new(tracelog_event_types *t, uint32_t id, const char *name)
{
    if (!t->by_name)
        return;
    if (2 * (t->slots_used + 1) > t->slots) {
        if (build_index(t, t->n + 1)) /* rebuilt from the entries, the new one included */
            drop_index(t);
        return;
    }
    index_name(t, id, name);
}

/* ---- changing the table ------------------------------------------------------- */

static tracelog_status rename_entry(tracelog_event_types *t, tl_type_entry *e, char *copy)
{
    char **r = tl_grow(t->retired, &t->retired_cap, t->nretired + 1, sizeof *r);
    if (!r) {
        free(copy);
        return TRACELOG_E_NOMEM;
    }
    t->retired = r;
    t->retired[t->nretired++] = (char *)e->name;
    e->name = copy;
    drop_index(t); /* the old name may be some slot's key: rebuilt at the next lookup */
    return TRACELOG_OK;
}

int tl_schema_equal(const tracelog_schema *a, const tracelog_schema *b)
{
    if (!a || !b)
        return a == b;
    return tl_schema_text_len(a) == tl_schema_text_len(b) &&
           memcmp(tracelog_schema_text(a), tracelog_schema_text(b), tl_schema_text_len(a)) == 0;
}

static int same_name(const tl_type_entry *e, const char *name, size_t len)
{
    return strlen(e->name) == len && memcmp(e->name, name, len) == 0;
}

/* Replaces e's schema, keeping the old one until the table is cleared (callers may hold it). */
static tracelog_status replace_schema(tracelog_event_types *t, tl_type_entry *e, tracelog_schema *schema)
{
    if (e->schema) {
        tracelog_schema **r = tl_grow(t->retired_schemas, &t->retired_schemas_cap,
                                      t->nretired_schemas + 1, sizeof *r);
        if (!r)
            return TRACELOG_E_NOMEM;
        t->retired_schemas = r;
        t->retired_schemas[t->nretired_schemas++] = (tracelog_schema *)e->schema;
    }
    e->schema = schema;
    t->schema_bytes += tl_schema_text_len(schema);
    return TRACELOG_OK;
}

/* A new block at position b (its entries' room allocated), the blocks from b on moved up. */
static tl_type_block *add_block(tracelog_event_types *t, size_t b, size_t before)
{
    tl_type_entry *e = malloc(TL_TYPE_BLOCK_MAX * sizeof *e);
    tl_type_block *v = e ? tl_grow(t->blocks, &t->blocks_cap, t->nblocks + 1, sizeof *v) : NULL;
    if (!v) {
        free(e);
        return NULL;
    }
    t->blocks = v;
    memmove(v + b + 1, v + b, (t->nblocks - b) * sizeof *v);
    t->nblocks++;
    v[b] = (tl_type_block){e, 0, TL_TYPE_BLOCK_MAX, before};
    return &v[b];
}

/*
 * Room for a new entry at index *i of block *b (as slot_in finds it), which
 * may move it to another block: a full block is split in halves, and an
 * entry past the end of the table starts a block of its own instead, so
 * that ids in increasing order fill their blocks. 0, or -1 out of memory.
 */
static int make_room(tracelog_event_types *t, size_t *b, size_t *i)
{
    tl_type_block *k = &t->blocks[*b];
    if (k->n < TL_TYPE_BLOCK_MAX)
        return 0;
    if (*b == t->nblocks - 1 && *i == k->n) {
        if (!add_block(t, *b + 1, t->n))
            return -1;
        ++*b;
        *i = 0;
        return 0;
    }
    size_t half = TL_TYPE_BLOCK_MAX / 2;
    tl_type_block *upper = add_block(t, *b + 1, k->before + half);
    if (!upper)
        return -1;
    k = &t->blocks[*b]; /* the block list may have moved */
    memcpy(upper->e, k->e + half, (k->n - half) * sizeof *k->e);
    upper->n = k->n - half;
    k->n = half;
    if (*i > half) {
        ++*b;
        *i -= half;
    }
    return 0;
}

static tracelog_status insert(tracelog_event_types *t, uint32_t id, const char *name, size_t len,
                              tracelog_schema *schema)
{
    char *copy = malloc(len + 1);
    if (!copy || (!t->nblocks && !add_block(t, 0, 0))) {
        free(copy);
        return TRACELOG_E_NOMEM;
    }
    size_t b = 0, i = 0; /* the first entry goes into the empty first block */
    if (t->n) {
        b = block_of(t, id);
        i = slot_in(&t->blocks[b], id);
    }
    if (make_room(t, &b, &i)) {
        free(copy);
        return TRACELOG_E_NOMEM;
    }
    memcpy(copy, name, len);
    copy[len] = 0;
    tl_type_block *k = &t->blocks[b];
    memmove(k->e + i + 1, k->e + i, (k->n - i) * sizeof *k->e);
    k->e[i] = (tl_type_entry){id, copy, schema};
    k->n++;
    for (size_t j = b + 1; j < t->nblocks; j++)
        t->blocks[j].before++;
    t->n++;
    t->schema_bytes += tl_schema_text_len(schema);
    index_new(t, id, copy);
    return TRACELOG_OK;
}

/* Sets id's name and, if `with_schema`, its schema (taken). */
static tracelog_status set_entry(tracelog_event_types *t, uint32_t id, const char *name, size_t len,
                                 int with_schema, tracelog_schema *schema, int rename)
{
    tl_type_entry *e = find_entry(t, id);
    if (!e) {
        tracelog_status st = insert(t, id, name, len, schema);
        if (st != TRACELOG_OK)
            tracelog_schema_free(schema);
        return st;
    }
    int name_differs = !same_name(e, name, len);
    int schema_differs = with_schema && !tl_schema_equal(e->schema, schema);
    tracelog_status st = TRACELOG_OK;
    if ((name_differs || schema_differs) && !rename)
        st = TRACELOG_E_INVAL;
    if (st == TRACELOG_OK && schema_differs) {
        st = replace_schema(t, e, schema);
        if (st == TRACELOG_OK)
            schema = NULL; /* the table's now */
    }
    if (st == TRACELOG_OK && name_differs) {
        char *copy = malloc(len + 1);
        if (!copy) {
            st = TRACELOG_E_NOMEM;
        } else {
            memcpy(copy, name, len);
            copy[len] = 0;
            st = rename_entry(t, e, copy);
        }
    }
    tracelog_schema_free(schema); /* equal to the entry's, or refused */
    return st;
}

tracelog_status tl_event_types_set(tracelog_event_types *t, uint32_t id, const char *name, size_t len,
                                   int rename)
{
    return set_entry(t, id, name, len, 0, NULL, rename);
}

tracelog_status tl_event_types_set_typed(tracelog_event_types *t, uint32_t id, const char *name,
                                         size_t len, tracelog_schema *schema, int rename)
{
    return set_entry(t, id, name, len, 1, schema, rename);
}

/* ---- the public table ----------------------------------------------------------- */

tracelog_event_types *tracelog_event_types_new(void) { return calloc(1, sizeof(tracelog_event_types)); }

void tracelog_event_types_free(tracelog_event_types *t)
{
    if (!t)
        return;
    tl_event_types_clear(t);
    free(t);
}

tracelog_status tracelog_event_types_add(tracelog_event_types *t, uint32_t id, const char *name)
{
    if (!t || !name)
        return TRACELOG_E_INVAL;
    size_t len = strlen(name);
    if (len == 0 || len > TRACELOG_TEXT_MAX)
        return TRACELOG_E_INVAL;
    return tl_event_types_set(t, id, name, len, 0);
}

const char *tracelog_event_types_name(const tracelog_event_types *t, uint32_t id)
{
    const tl_type_entry *e = t ? tl_event_types_get(t, id) : NULL;
    return e ? e->name : NULL;
}

const tracelog_schema *tracelog_event_types_schema(const tracelog_event_types *t, uint32_t id)
{
    const tl_type_entry *e = t ? tl_event_types_get(t, id) : NULL;
    return e ? e->schema : NULL;
}

size_t tracelog_event_types_count(const tracelog_event_types *t) { return t ? t->n : 0; }

tracelog_status tracelog_event_types_at(const tracelog_event_types *t, size_t index, uint32_t *id,
                                        const char **name)
{
    if (!t || index >= t->n)
        return TRACELOG_E_INVAL;
    const tl_type_entry *e = entry_at(t, index);
    if (id)
        *id = e->id;
    if (name)
        *name = e->name;
    return TRACELOG_OK;
}

int tracelog_event_types_find(tracelog_event_types *t, const char *name, uint32_t *id)
{
    if (!t || !name)
        return 0;
    if (!t->by_name && t->n)
        build_index(t, t->n);
    if (!t->by_name) { /* empty, or no memory for the index: a scan finds the lowest id too */
        for (size_t i = 0; i < t->n; i++) {
            const tl_type_entry *e = entry_at(t, i);
            if (strcmp(e->name, name) == 0) {
                if (id)
                    *id = e->id;
                return 1;
            }
        }
        return 0;
    }
    const tl_name_slot *s = probe(t, name, name_hash(name));
    if (s->used && id)
        *id = s->id;
    return s->used;
}

/* ---- EVENT_TYPES payload -------------------------------------------------------- */

tracelog_status tl_types_encode_head(size_t n, tl_buf *out)
{
    PUT(tl_cbor_put_array(out, n));
    return TRACELOG_OK;
}

tracelog_status tl_types_encode_entry(const tl_type_entry *e, tl_buf *out)
{
    PUT(tl_cbor_put_map(out, e->schema ? 3 : 2));
    PUT(tl_cbor_put_text(out, "id") || tl_cbor_put_uint(out, e->id));
    PUT(tl_cbor_put_text(out, "name") || tl_cbor_put_text(out, e->name));
    if (e->schema) /* canonical text (section 5.6.3), so that copies of a log keep it byte for byte */
        PUT(tl_cbor_put_text(out, "schema") || tl_cbor_put_text(out, tracelog_schema_text(e->schema)));
    return TRACELOG_OK;
}

tracelog_status tl_types_encode(const tl_type_entry *e, size_t n, tl_buf *out)
{
    tracelog_status st = tl_types_encode_head(n, out);
    for (size_t i = 0; i < n && st == TRACELOG_OK; i++)
        st = tl_types_encode_entry(&e[i], out);
    return st;
}

tracelog_status tl_types_decode(tl_cbor_in *in, tl_type_sink sink, void *ctx, const char **why)
{
    tl_cbor_item arr;
    if (tl_cbor_next(in, &arr) || arr.kind != TL_CBOR_ARRAY)
        CORRUPT("event types: not a CBOR array");
    for (uint64_t i = 0; i < arr.u; i++) {
        tl_cbor_item map, k, v;
        if (tl_cbor_next(in, &map) || map.kind != TL_CBOR_MAP)
            CORRUPT("event types: entry is not a map");
        uint64_t id = UINT64_MAX;
        tl_cbor_item name = {TL_CBOR_NULL, 0, NULL, 0}, schema;
        int has_schema = 0;
        for (uint64_t j = 0; j < map.u; j++) {
            if (tl_cbor_next(in, &k) || k.kind != TL_CBOR_TEXT || tl_cbor_next(in, &v))
                CORRUPT("event types: bad entry");
            if (tl_cbor_is_key(&k, "id") && v.kind == TL_CBOR_UINT) {
                id = v.u;
                continue;
            }
            if (tl_cbor_is_key(&k, "name") && v.kind == TL_CBOR_TEXT) {
                name = v;
                continue;
            }
            if (tl_cbor_is_key(&k, "schema")) { /* any kind: the sink reports one it cannot use */
                schema = v;
                has_schema = 1;
            }
            if (tl_cbor_skip(in, &v))
                CORRUPT("event types: bad value");
        }
        if (id > UINT32_MAX || name.kind != TL_CBOR_TEXT || name.len == 0 ||
            name.len > TRACELOG_TEXT_MAX || memchr(name.ptr, 0, name.len))
            CORRUPT("event types: entry without a valid id and name");
        tracelog_status st = sink(ctx, (uint32_t)id, (const char *)name.ptr, name.len,
                                  has_schema ? &schema : NULL);
        if (st != TRACELOG_OK) {
            *why = "event types: entry refused";
            return st;
        }
    }
    return TRACELOG_OK;
}
