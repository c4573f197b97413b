/* The THREADS payload and the (pid, pthread tid) -> kernel tid map. */
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

int tl_thread_map_set(tl_thread_map *m, uint32_t pid, uint64_t tid, uint32_t ktid)
{
    if (2 * (m->n + 1) > m->cap && grow(m))
        return -1;
    tl_thread_def *s = slot(m, pid, tid);
    if (!s->ktid)
        m->n++;
    *s = (tl_thread_def){tid, pid, ktid};
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

tracelog_status tl_threads_encode_entry(const tl_thread_def *d, tl_buf *out)
{
    PUT(tl_cbor_put_map(out, 3));
    PUT(tl_cbor_put_text(out, "pid") || tl_cbor_put_uint(out, d->pid));
    PUT(tl_cbor_put_text(out, "tid") || tl_cbor_put_uint(out, d->tid));
    PUT(tl_cbor_put_text(out, "ktid") || tl_cbor_put_uint(out, d->ktid));
    return TRACELOG_OK;
}

tracelog_status tl_threads_decode(tl_cbor_in *in, tl_thread_sink sink, void *ctx, const char **why)
{
    tl_cbor_item arr;
    if (tl_cbor_next(in, &arr) || arr.kind != TL_CBOR_ARRAY)
        CORRUPT("threads: not a CBOR array");
    for (uint64_t i = 0; i < arr.u; i++) {
        tl_cbor_item map, k, v;
        if (tl_cbor_next(in, &map) || map.kind != TL_CBOR_MAP)
            CORRUPT("threads: entry is not a map");
        uint64_t pid = UINT64_MAX, ktid = 0, tid = 0;
        int have_tid = 0;
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
            else if (tl_cbor_skip(in, &v))
                CORRUPT("threads: bad value");
        }
        if (pid > UINT32_MAX || !have_tid || ktid == 0 || ktid > UINT32_MAX)
            CORRUPT("threads: entry without a valid pid, tid and ktid");
        tl_thread_def d = {tid, (uint32_t)pid, (uint32_t)ktid};
        tracelog_status st = sink(ctx, &d);
        if (st != TRACELOG_OK) {
            *why = "threads: entry refused";
            return st;
        }
    }
    return TRACELOG_OK;
}
