/* The THREADS payload, the (pid, pthread tid) -> definition map and the table of thread names. */
#include "format/threads.h"

#include <stdlib.h>
#include <string.h>

#define CORRUPT(reason) do { *why = reason; return TRACELOG_E_CORRUPT; } while (0)
#define PUT(expr) do { if (expr) return TRACELOG_E_NOMEM; } while (0)

static size_t hash(uint32_t pid, uint64_t tid)
{
    uint64_t k = tid ^ ((uint64_t)pid * 0x9E3779B97F4A7C15ull);
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

/* The slot of (pid, tid), or the free slot where it goes. cap > 0. */
static tl_thread_def *slot(const tl_thread_map *m, uint32_t pid, uint64_t tid)
{
    for (size_t i = hash(pid, tid) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        tl_thread_def *s = &m->slots[i];
        if (!s->ktid || (s->pid == pid && s->tid == tid))
            return s;
    }
}

uint32_t tl_thread_map_get(const tl_thread_map *m, uint32_t pid, uint64_t tid)
{
    return m->n ? slot(m, pid, tid)->ktid : 0;
}

const tl_thread_def *tl_thread_map_find(const tl_thread_map *m, uint32_t pid, uint64_t tid)
{
    if (!m->n)
        return NULL;
    const tl_thread_def *s = slot(m, pid, tid);
    return s->ktid ? s : NULL;
}

static int grow(tl_thread_map *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    if (cap > SIZE_MAX / 2 / sizeof *m->slots)
        return -1;
    tl_thread_map bigger = {calloc(cap, sizeof *m->slots), cap, 0};
    if (!bigger.slots)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].ktid)
            *slot(&bigger, m->slots[i].pid, m->slots[i].tid) = m->slots[i];
    bigger.n = m->n;
    free(m->slots);
    *m = bigger;
    return 0;
}

int tl_thread_map_put(tl_thread_map *m, const tl_thread_def *d)
{
    tl_thread_def *s = m->cap ? slot(m, d->pid, d->tid) : NULL;
    if (s && s->ktid) { /* replaced in place: the slots do not move (tl_writer_rename_threads walks them) */
        *s = *d;
        return 0;
    }
    if (2 * (m->n + 1) > m->cap && grow(m))
        return -1;
    *slot(m, d->pid, d->tid) = *d;
    m->n++;
    return 0;
}

void tl_thread_map_reset(tl_thread_map *m)
{
    if (m->n)
        memset(m->slots, 0, m->cap * sizeof *m->slots);
    m->n = 0;
}

void tl_thread_map_free(tl_thread_map *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

/* ---- names ------------------------------------------------------------------ */

static size_t text_hash(const void *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a: names are short */
    for (size_t i = 0; i < len; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 0x100000001b3ull;
    return (size_t)(h ^ h >> 32);
}

/* The slot of name[0..len), or the free slot where it goes. nslots > 0. */
static uint32_t *name_slot(const tl_thread_names *t, const void *name, size_t len)
{
    for (size_t i = text_hash(name, len) & (t->nslots - 1);; i = (i + 1) & (t->nslots - 1)) {
        uint32_t *s = &t->slots[i];
        if (!*s)
            return s;
        const char *known = t->v[*s - 1];
        if (strlen(known) == len && memcmp(known, name, len) == 0)
            return s;
    }
}

static int names_grow(tl_thread_names *t)
{
    size_t nslots = t->nslots ? 2 * t->nslots : 64;
    if (nslots > SIZE_MAX / 2 / sizeof *t->slots || t->n >= UINT32_MAX - 1)
        return -1;
    tl_thread_names bigger = {t->v, t->n, t->cap, calloc(nslots, sizeof *t->slots), nslots};
    if (!bigger.slots)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        *name_slot(&bigger, t->v[i], strlen(t->v[i])) = (uint32_t)(i + 1);
    free(t->slots);
    *t = bigger;
    return 0;
}

uint32_t tl_thread_names_intern(tl_thread_names *t, const void *name, size_t len)
{
    if (2 * (t->n + 1) > t->nslots && names_grow(t))
        return 0;
    uint32_t *s = name_slot(t, name, len);
    if (*s)
        return *s;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        char **v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return 0;
        t->v = v;
        t->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return 0;
    memcpy(copy, name, len);
    copy[len] = 0;
    t->v[t->n++] = copy;
    *s = (uint32_t)t->n;
    return *s;
}

const char *tl_thread_names_get(const tl_thread_names *t, uint32_t id)
{
    return id && id <= t->n ? t->v[id - 1] : NULL;
}

void tl_thread_names_free(tl_thread_names *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i]);
    free(t->v);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

const char *tl_thread_name_invalid(const void *name, size_t len)
{
    if (len == 0)
        return "empty";
    if (len > TL_THREAD_NAME_MAX)
        return "longer than 64 bytes";
    if (memchr(name, 0, len))
        return "holds a NUL byte";
    return NULL;
}

/* ---- the THREADS payload ------------------------------------------------------ */

tracelog_status tl_threads_encode_entry(const tl_thread_def *d, const char *name, tl_buf *out)
{
    int named = name && *name;
    PUT(tl_cbor_put_map(out, named ? 4 : 3));
    PUT(tl_cbor_put_text(out, "pid") || tl_cbor_put_uint(out, d->pid));
    PUT(tl_cbor_put_text(out, "tid") || tl_cbor_put_uint(out, d->tid));
    PUT(tl_cbor_put_text(out, "ktid") || tl_cbor_put_uint(out, d->ktid));
    if (named)
        PUT(tl_cbor_put_text(out, "name") || tl_cbor_put_text(out, name));
    return TRACELOG_OK;
}

/* The entry's "name" value v (format 1.2): kept if valid, else why it is ignored. */
static void take_name(tl_thread_entry *e, const tl_cbor_item *v)
{
    e->name = NULL;
    e->name_len = 0;
    e->name_bad = v->kind != TL_CBOR_TEXT ? "not text" : tl_thread_name_invalid(v->ptr, v->len);
    if (!e->name_bad) {
        e->name = v->ptr;
        e->name_len = v->len;
    }
}

/* Reads one entry's map into *e. */
static tracelog_status decode_entry(tl_cbor_in *in, tl_thread_entry *e, const char **why)
{
    tl_cbor_item map, k, v;
    if (tl_cbor_next(in, &map) || map.kind != TL_CBOR_MAP)
        CORRUPT("threads: entry is not a map");
    uint64_t pid = UINT64_MAX, ktid = 0, tid = 0;
    int have_tid = 0;
    *e = (tl_thread_entry){.name = NULL};
    for (uint64_t j = 0; j < map.u; j++) {
        if (tl_cbor_next(in, &k) || k.kind != TL_CBOR_TEXT || tl_cbor_next(in, &v))
            CORRUPT("threads: bad entry");
        if (tl_cbor_is_key(&k, "pid") && v.kind == TL_CBOR_UINT)
            pid = v.u;
        else if (tl_cbor_is_key(&k, "tid") && v.kind == TL_CBOR_UINT) {
            tid = v.u;
            have_tid = 1;
        } else if (tl_cbor_is_key(&k, "ktid") && v.kind == TL_CBOR_UINT)
            ktid = v.u;
        else if (tl_cbor_is_key(&k, "name"))
            take_name(e, &v); /* a value of another type is ignored with a problem, not skipped silently */
        if (tl_cbor_skip(in, &v)) /* the rest of a value the entry does not use (nothing for a scalar) */
            CORRUPT("threads: bad value");
    }
    if (pid > UINT32_MAX || !have_tid || ktid == 0 || ktid > UINT32_MAX)
        CORRUPT("threads: entry without a valid pid, tid and ktid");
    e->d = (tl_thread_def){tid, (uint32_t)pid, (uint32_t)ktid, 0};
    return TRACELOG_OK;
}

tracelog_status tl_threads_decode(tl_cbor_in *in, tl_thread_sink sink, void *ctx, const char **why)
{
    tl_cbor_item arr;
    if (tl_cbor_next(in, &arr) || arr.kind != TL_CBOR_ARRAY)
        CORRUPT("threads: not a CBOR array");
    for (uint64_t i = 0; i < arr.u; i++) {
        tl_thread_entry e;
        tracelog_status st = decode_entry(in, &e, why);
        if (st != TRACELOG_OK)
            return st;
        st = sink(ctx, &e);
        if (st != TRACELOG_OK) {
            *why = "threads: entry refused";
            return st;
        }
    }
    return TRACELOG_OK;
}
