/*
 * An id -> name table, sorted by id (event types of JSON inputs and merges),
 * with a hash index for name -> id. Ids are mostly added in increasing order
 * (appended); an id below the largest moves the entries after it.
 */
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

static size_t slot(const ptlog_types *t, uint32_t id)
{
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

/* 64-bit FNV-1a: the key of a name in the name index. */
static uint64_t name_key(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* Indexes name -> id, keeping the lowest id of a name (what a scan in id order finds). */
static int index_name(ptlog_types *t, uint32_t id, const char *name)
{
    uint64_t key = name_key(name);
    size_t have = ptlog_idmap_get(&t->by_name, key);
    if (have != SIZE_MAX) {
        const char *other = ptlog_types_name(t, (uint32_t)have);
        if (!other || strcmp(other, name) != 0) {
            t->name_collision = 1;
            return 0;
        }
        if (have < id)
            return 0;
    }
    if (ptlog_idmap_put(&t->by_name, key, id)) {
        t->name_collision = 1; /* the index is incomplete: find_name scans */
        return -1;
    }
    return 0;
}

int ptlog_types_add(ptlog_types *t, uint32_t id, const char *name)
{
    size_t i = slot(t, id);
    if (i < t->n && t->v[i].id == id)
        return strcmp(t->v[i].name, name) == 0 ? 0 : -2;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        ptlog_type *p = realloc(t->v, cap * sizeof *p);
        if (!p)
            return -1;
        t->v = p;
        t->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy)
        return -1;
    memmove(t->v + i + 1, t->v + i, (t->n - i) * sizeof *t->v);
    t->v[i] = (ptlog_type){id, copy};
    t->n++;
    return index_name(t, id, copy);
}

const char *ptlog_types_name(const ptlog_types *t, uint32_t id)
{
    size_t i = slot(t, id);
    return i < t->n && t->v[i].id == id ? t->v[i].name : NULL;
}

int64_t ptlog_types_find_name(const ptlog_types *t, const char *name)
{
    if (!t->name_collision) {
        size_t id = ptlog_idmap_get(&t->by_name, name_key(name));
        const char *found = id == SIZE_MAX ? NULL : ptlog_types_name(t, (uint32_t)id);
        return found && strcmp(found, name) == 0 ? (int64_t)id : -1;
    }
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->v[i].name, name) == 0)
            return t->v[i].id;
    return -1;
}

void ptlog_types_free(ptlog_types *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].name);
    free(t->v);
    ptlog_idmap_free(&t->by_name);
    memset(t, 0, sizeof *t);
}
