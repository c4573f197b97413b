/*
 * ptlog merge: a source (ptlog_src) that merges several inputs by timestamp
 * with a k-way heap, each input read as a stream (one decoded chunk in memory
 * per input); any sink of convert writes its events (.ptl by default). Event types are unified
 * by name: an input's id keeps its value unless the output already uses it
 * for another name, in which case it gets the next free id. A name whose
 * inputs give it different schemas (or a schema in one, none in another)
 * is refused, naming both inputs: keeping either would decode the other's
 * payloads with a layout they were not recorded with. Attributes come from
 * the first input; stream-side status counters are summed.
 */
#include <stdlib.h>
#include <string.h>

#include "common/array.h"
#include "common/heap.h"
#include "ptlog.h"

typedef struct input {
    ptlog_src *src;
    tracelog_event ev;  /* current event, valid while has_ev */
    int has_ev;
    ptlog_idmap map;    /* input id -> output id */
} input;

typedef struct type_origin {
    size_t input;
    uint32_t id;
} type_origin;

typedef struct merger {
    ptlog_src base;
    input *in;
    size_t n;
    tl_heap_key *heap;  /* inputs with a current event, by (its timestamp, index) */
    size_t nheap;
    tracelog_event_types *names; /* output id -> name */
    ptlog_idmap used;   /* output ids in use (named or not) */
    uint64_t next_id;
    type_origin *definer; /* the input and id that defined each output id, in definition order */
    size_t ndefiner, definer_cap;
    ptlog_idmap definer_of; /* output id -> index into definer */
    size_t pending;     /* input whose event was returned last: advanced on the next call */
} merger;

static int use_id(merger *m, uint64_t id)
{
    if (ptlog_idmap_put(&m->used, id, 1))
        return -1;
    if (id >= m->next_id)
        m->next_id = id + 1;
    return 0;
}

static const char *schema_text(ptlog_src *src, uint32_t id)
{
    const tracelog_schema *s = src->type_schema ? src->type_schema(src, id) : NULL;
    return s ? tracelog_schema_text(s) : NULL;
}

static int same_schema(const char *a, const char *b)
{
    return a == b || (a && b && strcmp(a, b) == 0);
}

/* Records that (in, id) defined output id oid. */
static int note_definer(merger *m, const input *in, uint32_t id, uint32_t oid)
{
    type_origin *v = tl_grow(m->definer, &m->definer_cap, m->ndefiner + 1, sizeof *v);
    if (!v)
        return -1;
    m->definer = v;
    m->definer[m->ndefiner] = (type_origin){(size_t)(in - m->in), id};
    return ptlog_idmap_put(&m->definer_of, oid, m->ndefiner++);
}

/* Refuses name when `in` gives it another schema than the input that defined oid. */
static int check_schema(merger *m, input *in, uint32_t id, const char *name, uint32_t oid)
{
    size_t k = ptlog_idmap_get(&m->definer_of, oid);
    if (k == SIZE_MAX)
        return 0;
    input *first = &m->in[m->definer[k].input];
    const char *a = schema_text(first->src, m->definer[k].id);
    const char *b = schema_text(in->src, id);
    if (same_schema(a, b))
        return 0;
    ptlog_msg(in->src->name, "event type \"%s\" has schema %s%s%s here but %s%s%s in %s: merge keeps one schema per name",
              name, b ? "\"" : "", b ? b : "none", b ? "\"" : "", a ? "\"" : "", a ? a : "none", a ? "\"" : "",
              first->src->name);
    return PTLOG_EXIT_INPUT;
}

/* Output id of (input, id), named in m->names when new. Exit code or 0. */
static int map_id(merger *m, input *in, uint32_t id, uint32_t *out)
{
    size_t v = ptlog_idmap_get(&in->map, id);
    if (v != SIZE_MAX) {
        *out = (uint32_t)v;
        return 0;
    }
    const char *name = in->src->type_name(in->src, id);
    uint32_t found;
    uint64_t oid;
    if (name && tracelog_event_types_find(m->names, name, &found)) {
        oid = found;
        int rc = check_schema(m, in, id, name, found);
        if (rc)
            return rc;
    } else {
        oid = ptlog_idmap_get(&m->used, id) == SIZE_MAX ? id : m->next_id;
        if (oid > UINT32_MAX) {
            ptlog_msg(in->src->name, "too many event types to merge");
            return PTLOG_EXIT_INPUT;
        }
        if (use_id(m, oid))
            return ptlog_nomem();
        if (name) {
            if (tracelog_event_types_add(m->names, (uint32_t)oid, name) != TRACELOG_OK ||
                note_definer(m, in, id, (uint32_t)oid))
                return ptlog_nomem(); /* oid is new and name valid: only memory can fail */
        }
    }
    if (ptlog_idmap_put(&in->map, id, (size_t)oid))
        return ptlog_nomem();
    *out = (uint32_t)oid;
    return 0;
}

/* Maps every named type of every input (also those without events). */
static int map_all_types(merger *m)
{
    for (size_t i = 0; i < m->n; i++) {
        ptlog_src *s = m->in[i].src;
        size_t n = s->type_count(s);
        for (size_t k = 0; k < n; k++) {
            uint32_t id, oid;
            const char *name;
            s->type_at(s, k, &id, &name);
            int rc = map_id(m, &m->in[i], id, &oid);
            if (rc)
                return rc;
        }
    }
    return 0;
}

/* Advances input i; pushes it on the heap if it has an event. */
static int advance(merger *m, size_t i, int push)
{
    input *in = &m->in[i];
    int r = in->src->next(in->src, &in->ev);
    if (r < 0)
        return -r;
    in->has_ev = r == 1;
    if (in->has_ev && push)
        tl_heap_push(m->heap, &m->nheap, (tl_heap_key){in->ev.timestamp_ns, (uint32_t)i});
    return 0;
}

/* Removes the heap's top input when it has no event left, else sifts its new event into place. */
static void reheap_top(merger *m)
{
    const input *in = &m->in[m->heap[0].id];
    if (!in->has_ev)
        tl_heap_pop(m->heap, &m->nheap);
    else
        tl_heap_replace(m->heap, m->nheap, (tl_heap_key){in->ev.timestamp_ns, m->heap[0].id});
}

static int merge_next(ptlog_src *s, tracelog_event *ev)
{
    merger *m = (merger *)s;
    /* The event returned last points into its input's chunk: that input moves on only now. */
    if (m->pending != SIZE_MAX) {
        int rc = advance(m, m->pending, 0);
        m->pending = SIZE_MAX;
        if (rc)
            return -rc;
        reheap_top(m);
    }
    if (m->nheap == 0) {
        int rc = map_all_types(m); /* types named late (streams) */
        return rc ? -rc : 0;
    }
    size_t i = m->heap[0].id;
    *ev = m->in[i].ev;
    int rc = map_id(m, &m->in[i], ev->event_id, &ev->event_id);
    if (rc)
        return -rc;
    m->pending = i;
    return 1;
}

/* The input that gave ev (the event returned last) still holds it: its thread's name is that input's. */
static const char *merge_thread_name(ptlog_src *s, const tracelog_event *ev)
{
    merger *m = (merger *)s;
    if (m->pending == SIZE_MAX)
        return NULL;
    ptlog_src *in = m->in[m->pending].src;
    return in->thread_name ? in->thread_name(in, ev) : NULL;
}

static const char *merge_type_name(ptlog_src *s, uint32_t id)
{
    return tracelog_event_types_name(((merger *)s)->names, id);
}

static const tracelog_schema *merge_type_schema(ptlog_src *s, uint32_t id)
{
    merger *m = (merger *)s;
    size_t k = ptlog_idmap_get(&m->definer_of, id);
    if (k == SIZE_MAX)
        return NULL;
    ptlog_src *in = m->in[m->definer[k].input].src;
    return in->type_schema ? in->type_schema(in, m->definer[k].id) : NULL;
}

static size_t merge_type_count(ptlog_src *s) { return tracelog_event_types_count(((merger *)s)->names); }

static void merge_type_at(ptlog_src *s, size_t i, uint32_t *id, const char **name)
{
    tracelog_event_types_at(((merger *)s)->names, i, id, name);
}

/* Stream-side counters are summed; the first flush error is kept. */
static void merge_get_status(ptlog_src *s, tracelog_log_status *sum)
{
    merger *m = (merger *)s;
    memset(sum, 0, sizeof *sum);
    for (size_t i = 0; i < m->n; i++) {
        tracelog_log_status st;
        m->in[i].src->get_status(m->in[i].src, &st);
        sum->events_recorded += st.events_recorded;
        sum->stream_overruns += st.stream_overruns;
        if (!sum->flush_error)
            sum->flush_error = st.flush_error;
    }
}

/* The inputs' schemas again, once read whole: a JSON input may give one after its type's first event. */
static int recheck_schemas(merger *m)
{
    for (size_t i = 0; i < m->n; i++) {
        ptlog_src *s = m->in[i].src;
        size_t n = s->type_count(s);
        for (size_t k = 0; k < n; k++) {
            uint32_t id;
            const char *name;
            s->type_at(s, k, &id, &name);
            size_t oid = ptlog_idmap_get(&m->in[i].map, id);
            int rc = oid != SIZE_MAX && name ? check_schema(m, &m->in[i], id, name, (uint32_t)oid) : 0;
            if (rc)
                return rc;
        }
    }
    return 0;
}

static int merge_finish(ptlog_src *s)
{
    merger *m = (merger *)s;
    int loss = 0;
    for (size_t i = 0; i < m->n; i++)
        loss |= m->in[i].src->finish(m->in[i].src) == PTLOG_EXIT_LOSS;
    int rc = recheck_schemas(m);
    return rc ? rc : loss ? PTLOG_EXIT_LOSS : PTLOG_EXIT_OK;
}

static void merge_close(ptlog_src *s)
{
    merger *m = (merger *)s;
    for (size_t i = 0; m->in && i < m->n; i++) {
        if (m->in[i].src)
            m->in[i].src->close(m->in[i].src);
        ptlog_idmap_free(&m->in[i].map);
    }
    free(m->in);
    free(m->heap);
    tracelog_event_types_free(m->names);
    ptlog_idmap_free(&m->used);
    ptlog_idmap_free(&m->definer_of);
    free(m->definer);
    free(m);
}

static int open_all(merger *m, char **paths)
{
    ptlog_read_ahead_share(m->n);
    for (size_t i = 0; i < m->n; i++) {
        int rc = ptlog_src_open(paths[i], PTLOG_FMT_AUTO, &m->in[i].src);
        if (rc)
            return rc;
    }
    return 0;
}

/* The merged attributes: the first input's, with the largest max_data_size of all. */
static void merge_describe(merger *m)
{
    ptlog_src *b = &m->base;
    b->name = "merge";
    b->meta = m->in[0].src->meta;
    b->format_major = m->in[0].src->format_major;
    b->format_minor = m->in[0].src->format_minor;
    b->upfront = 1;
    for (size_t i = 0; i < m->n; i++) {
        ptlog_src *in = m->in[i].src;
        if (in->meta.max_data_size > b->meta.max_data_size)
            b->meta.max_data_size = in->meta.max_data_size;
        b->upfront &= in->upfront;
        b->total_events += in->total_events;
    }
    b->next = merge_next;
    b->type_name = merge_type_name;
    b->type_schema = merge_type_schema;
    b->type_count = merge_type_count;
    b->type_at = merge_type_at;
    b->get_status = merge_get_status;
    b->thread_name = merge_thread_name;
    b->seek_time = NULL; /* --begin filters */
    b->end_time = NULL;
    b->finish = merge_finish;
    b->close = merge_close;
}

int ptlog_merge_src_open(char **paths, size_t n, ptlog_src **out)
{
    merger *m = calloc(1, sizeof *m);
    if (!m)
        return ptlog_nomem();
    m->n = n;
    m->pending = SIZE_MAX;
    m->in = calloc(n, sizeof *m->in);
    m->heap = calloc(n, sizeof *m->heap);
    m->names = tracelog_event_types_new();
    int rc = m->in && m->heap && m->names ? open_all(m, paths) : ptlog_nomem();
    if (!rc) {
        merge_describe(m);
        rc = map_all_types(m);
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = advance(m, i, 1);
    if (rc) {
        merge_close(&m->base);
        return rc;
    }
    *out = &m->base;
    return 0;
}
