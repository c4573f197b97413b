/*
 * The event-type table and the EVENT_TYPES payload. The table is an array
 * sorted by id (binary search; ids usually come in increasing order, so an
 * insert is an append), with a hash index name -> lowest id built only when
 * a caller first looks a name up (the reader and the writer never do).
 */
#include "format/event_types.h"

#include <string.h>

#include "common/array.h"

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)
#define PUT(expr) do { if (expr) return TRACELOG_E_NOMEM; } while (0)

void tl_event_types_init(tracelog_event_types *t) { memset(t, 0, sizeof *t); }

void tl_event_types_clear(tracelog_event_types *t)
{
    for (size_t i = 0; i < t->n; i++)
        free((char *)t->v[i].name);
    for (size_t i = 0; i < t->nretired; i++)
        free(t->retired[i]);
    free(t->v);
    free(t->retired);
    free(t->by_name);
    tl_event_types_init(t);
}

/* Index of the first entry whose id is >= id. */
static size_t slot_of(const tracelog_event_types *t, uint32_t id)
{
    if (t->n && t->v[t->n - 1].id < id) /* the common case: a new largest id */
        return t->n;
    size_t lo = 0, hi = t->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

const tl_type_entry *tl_event_types_get(const tracelog_event_types *t, uint32_t id)
{
    size_t i = slot_of(t, id);
    return i < t->n && t->v[i].id == id ? &t->v[i] : NULL;
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
    for (size_t i = 0; i < t->n; i++)
        index_name(t, t->v[i].id, t->v[i].name);
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

tracelog_status tl_event_types_set(tracelog_event_types *t, uint32_t id, const char *name, size_t len,
                                   int rename)
{
    size_t i = slot_of(t, id);
    int exists = i < t->n && t->v[i].id == id;
    if (exists && strlen(t->v[i].name) == len && memcmp(t->v[i].name, name, len) == 0)
        return TRACELOG_OK; /* the usual repeat: a trailer restates the table */
    if (exists && !rename)
        return TRACELOG_E_INVAL;
    char *copy = malloc(len + 1);
    if (!copy)
        return TRACELOG_E_NOMEM;
    memcpy(copy, name, len);
    copy[len] = 0;
    if (exists)
        return rename_entry(t, &t->v[i], copy);
    tl_type_entry *v = tl_grow(t->v, &t->cap, t->n + 1, sizeof *v);
    if (!v) {
        free(copy);
        return TRACELOG_E_NOMEM;
    }
    t->v = v;
    memmove(v + i + 1, v + i, (t->n - i) * sizeof *v);
    v[i] = (tl_type_entry){id, copy};
    t->n++;
    index_new(t, id, copy);
    return TRACELOG_OK;
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

size_t tracelog_event_types_count(const tracelog_event_types *t) { return t ? t->n : 0; }

tracelog_status tracelog_event_types_at(const tracelog_event_types *t, size_t index, uint32_t *id,
                                        const char **name)
{
    if (!t || index >= t->n)
        return TRACELOG_E_INVAL;
    if (id)
        *id = t->v[index].id;
    if (name)
        *name = t->v[index].name;
    return TRACELOG_OK;
}

int tracelog_event_types_find(tracelog_event_types *t, const char *name, uint32_t *id)
{
    if (!t || !name)
        return 0;
    if (!t->by_name && t->n)
        build_index(t, t->n);
    if (!t->by_name) { /* empty, or no memory for the index: a scan finds the lowest id too */
        for (size_t i = 0; i < t->n; i++)
            if (strcmp(t->v[i].name, name) == 0) {
                if (id)
                    *id = t->v[i].id;
                return 1;
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

tracelog_status tl_types_encode_entry(uint32_t id, const char *name, tl_buf *out)
{
    PUT(tl_cbor_put_map(out, 2));
    PUT(tl_cbor_put_text(out, "id") || tl_cbor_put_uint(out, id));
    PUT(tl_cbor_put_text(out, "name") || tl_cbor_put_text(out, name));
    return TRACELOG_OK;
}

tracelog_status tl_types_encode(const tl_type_entry *e, size_t n, tl_buf *out)
{
    tracelog_status st = tl_types_encode_head(n, out);
    for (size_t i = 0; i < n && st == TRACELOG_OK; i++)
        st = tl_types_encode_entry(e[i].id, e[i].name, out);
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
        tl_cbor_item name = {TL_CBOR_NULL, 0, NULL, 0};
        for (uint64_t j = 0; j < map.u; j++) {
            if (tl_cbor_next(in, &k) || k.kind != TL_CBOR_TEXT || tl_cbor_next(in, &v))
                CORRUPT("event types: bad entry");
            if (tl_cbor_is_key(&k, "id") && v.kind == TL_CBOR_UINT)
                id = v.u;
            else if (tl_cbor_is_key(&k, "name") && v.kind == TL_CBOR_TEXT)
                name = v;
            else if (tl_cbor_skip(in, &v))
                CORRUPT("event types: bad value");
        }
        if (id > UINT32_MAX || name.kind != TL_CBOR_TEXT || name.len == 0 ||
            name.len > TRACELOG_TEXT_MAX || memchr(name.ptr, 0, name.len))
            CORRUPT("event types: entry without a valid id and name");
        tracelog_status st = sink(ctx, (uint32_t)id, (const char *)name.ptr, name.len);
        if (st != TRACELOG_OK) {
            *why = "event types: entry refused";
            return st;
        }
    }
    return TRACELOG_OK;
}
