/*
 * ptlog merge: a k-way merge by timestamp of several logs, each read as a
 * stream (one decoded chunk in memory per input). Event types are unified
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
    input *in;
    size_t n;
    size_t *heap;       /* indexes of inputs with a current event, min-heap by (ts, index) */
    size_t nheap;
    tracelog_event_types *names; /* output id -> name */
    ptlog_idmap used;   /* output ids in use (named or not) */
    uint64_t next_id;
    type_origin *definer; /* the input and id that defined each output id, in definition order */
    size_t ndefiner, definer_cap;
    ptlog_idmap definer_of; /* output id -> index into definer */
    tracelog_writer *w;
    ptlog_out *out;
} merger;

static int before(const merger *m, size_t a, size_t b)
{
    uint64_t x = m->in[a].ev.timestamp_ns, y = m->in[b].ev.timestamp_ns;
    return x < y || (x == y && a < b);
}

static void sift_down(merger *m, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < m->nheap && before(m, m->heap[l], m->heap[s]))
            s = l;
        if (r < m->nheap && before(m, m->heap[r], m->heap[s]))
            s = r;
        if (s == i)
            return;
        size_t t = m->heap[i];
        m->heap[i] = m->heap[s];
        m->heap[s] = t;
        i = s;
    }
}

static void sift_up(merger *m, size_t i)
{
    while (i > 0 && before(m, m->heap[i], m->heap[(i - 1) / 2])) {
        size_t p = (i - 1) / 2, t = m->heap[i];
        m->heap[i] = m->heap[p];
        m->heap[p] = t;
        i = p;
    }
}

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

/* Output id of (input, id); defines it in the writer when new. Exit code or 0. */
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
            int rc = ptlog_writer_define(m->w, in->src->name, ptlog_out_name(m->out), (uint32_t)oid, name,
                                         schema_text(in->src, id));
            if (rc)
                return rc;
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
    if (in->has_ev && push) {
        m->heap[m->nheap++] = i;
        sift_up(m, m->nheap - 1);
    }
    return 0;
}

static int run(merger *m)
{
    int rc = map_all_types(m);
    for (size_t i = 0; i < m->n && !rc; i++)
        rc = advance(m, i, 1);
    ptlog_progress prog;
    uint64_t total = 0, done = 0;
    for (size_t i = 0; i < m->n; i++)
        total += m->in[i].src->total_events;
    ptlog_progress_init(&prog, total);
    while (!rc && m->nheap > 0) {
        size_t i = m->heap[0];
        input *in = &m->in[i];
        tracelog_event ev = in->ev;
        rc = map_id(m, in, ev.event_id, &ev.event_id);
        if (rc)
            break;
        tracelog_status st = tracelog_writer_append(m->w, &ev);
        if (st != TRACELOG_OK) {
            rc = ptlog_writer_error(ptlog_out_name(m->out), m->w, st);
            break;
        }
        if ((++done & 0xffff) == 0)
            ptlog_progress_update(&prog, done);
        /* the payload was copied by append: the input may move on */
        rc = advance(m, i, 0);
        if (rc)
            break;
        if (in->has_ev) {
            sift_down(m, 0);
        } else {
            m->heap[0] = m->heap[--m->nheap];
            if (m->nheap)
                sift_down(m, 0);
        }
    }
    ptlog_progress_end(&prog);
    if (!rc)
        rc = map_all_types(m); /* types named late (streams) */
    return rc;
}

static int open_all(merger *m, char **paths)
{
    for (size_t i = 0; i < m->n; i++) {
        int rc = ptlog_src_open(paths[i], PTLOG_FMT_AUTO, &m->in[i].src);
        if (rc)
            return rc;
    }
    return 0;
}

static void sum_status(merger *m, tracelog_log_status *sum)
{
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

int ptlog_cmd_merge(char **paths, size_t n, const char *out_path)
{
    merger m;
    memset(&m, 0, sizeof m);
    m.n = n;
    m.in = calloc(n, sizeof *m.in);
    m.heap = calloc(n, sizeof *m.heap);
    m.names = tracelog_event_types_new();
    int rc = m.in && m.heap && m.names ? open_all(&m, paths) : ptlog_nomem();
    ptlog_out out;
    if (!rc)
        rc = ptlog_out_open(&out, out_path);
    if (rc)
        goto done;
    m.out = &out;
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    tracelog_metadata meta = m.in[0].src->meta;
    for (size_t i = 1; i < n; i++)
        if (m.in[i].src->meta.max_data_size > meta.max_data_size)
            meta.max_data_size = m.in[i].src->meta.max_data_size;
    opt.chunk_size = ptlog_chunk_size_for(&meta);
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(out.fd, &meta, &opt, &m.w, &err);
    if (st != TRACELOG_OK) {
        ptlog_msg(ptlog_out_name(&out), "cannot start the log: %s", err.message);
        rc = st == TRACELOG_E_NOMEM ? PTLOG_EXIT_INTERNAL : st == TRACELOG_E_IO ? PTLOG_EXIT_OUTPUT : PTLOG_EXIT_INPUT;
        ptlog_out_abort(&out);
        goto done;
    }
    rc = run(&m);
    int loss = 0;
    for (size_t i = 0; i < n && !rc; i++)
        loss |= m.in[i].src->finish(m.in[i].src) == PTLOG_EXIT_LOSS;
    if (!rc) {
        tracelog_log_status sum;
        sum_status(&m, &sum);
        tracelog_writer_set_status(m.w, &sum);
        st = tracelog_writer_close(m.w, &err);
        if (st != TRACELOG_OK) {
            ptlog_msg(ptlog_out_name(&out), "cannot write the output: %s", err.message);
            rc = PTLOG_EXIT_OUTPUT;
        }
    } else {
        tracelog_writer_abandon(m.w);
    }
    if (rc) {
        ptlog_out_abort(&out);
    } else {
        rc = ptlog_out_finish(&out);
        if (!rc && loss)
            rc = PTLOG_EXIT_LOSS;
    }
done:
    for (size_t i = 0; m.in && i < n; i++) {
        if (m.in[i].src)
            m.in[i].src->close(m.in[i].src);
        ptlog_idmap_free(&m.in[i].map);
    }
    free(m.in);
    free(m.heap);
    tracelog_event_types_free(m.names);
    ptlog_idmap_free(&m.used);
    ptlog_idmap_free(&m.definer_of);
    free(m.definer);
    return rc;
}
