/* A small id -> name table, sorted by id (event types of JSON inputs and merges). */
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
    return 0;
}

const char *ptlog_types_name(const ptlog_types *t, uint32_t id)
{
    size_t i = slot(t, id);
    return i < t->n && t->v[i].id == id ? t->v[i].name : NULL;
}

int64_t ptlog_types_find_name(const ptlog_types *t, const char *name)
{
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
    memset(t, 0, sizeof *t);
}
