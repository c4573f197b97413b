/* Open addressing with linear probing; grows at half full. */
#include <stdlib.h>

#include "ptlog.h"

static size_t hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (size_t)k;
}

size_t ptlog_idmap_get(const ptlog_idmap *m, uint64_t key)
{
    if (!m->cap)
        return SIZE_MAX;
    for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->used[i])
            return SIZE_MAX;
        if (m->keys[i] == key)
            return m->vals[i];
    }
}

static int grow(ptlog_idmap *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    ptlog_idmap bigger = {calloc(cap, sizeof(uint64_t)), calloc(cap, sizeof(size_t)), calloc(cap, 1), 0, cap};
    if (!bigger.keys || !bigger.vals || !bigger.used) {
        ptlog_idmap_free(&bigger);
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++)
        if (m->used[i])
            ptlog_idmap_put(&bigger, m->keys[i], m->vals[i]);
    ptlog_idmap_free(m);
    *m = bigger;
    return 0;
}

int ptlog_idmap_put(ptlog_idmap *m, uint64_t key, size_t val)
{
    if (2 * (m->n + 1) > m->cap && grow(m))
        return -1;
    size_t i = hash(key) & (m->cap - 1);
    while (m->used[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    if (!m->used[i])
        m->n++;
    m->used[i] = 1;
    m->keys[i] = key;
    m->vals[i] = val;
    return 0;
}

void ptlog_idmap_free(ptlog_idmap *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    m->keys = NULL;
    m->vals = NULL;
    m->used = NULL;
    m->n = m->cap = 0;
}

/* ptlog_by_schema_find when s is not the last one found (ptlog.h). */
size_t ptlog_by_schema_search(ptlog_by_schema *x, const tracelog_schema *s)
{
    size_t i = ptlog_idmap_get(&x->map, (uint64_t)(uintptr_t)s);
    if (i != SIZE_MAX) {
        x->last = s;
        x->last_index = i;
    }
    return i;
}

size_t ptlog_by_schema_add(ptlog_by_schema *x, const tracelog_schema *s)
{
    if (ptlog_idmap_put(&x->map, (uint64_t)(uintptr_t)s, x->n))
        return SIZE_MAX;
    x->last = s;
    return x->last_index = x->n++;
}
