/*
 * .ptl output through the public writer API: the source's attributes, its
 * whole event-type table, the selected events and the stream-side status
 * counters. The new log is a sequential APPEND log whatever the source's
 * log policy (README.md, "Round trips"): its log policy, size and log-side
 * counters (events written, log overruns, log full) are its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

typedef struct ptl_sink {
    ptlog_src *src;
    ptlog_out *out;
    tracelog_writer *w;
    ptlog_idmap defined; /* ids given to the writer with a name */
    uint64_t count;
    /* The thread of the last event and the name given to the writer for it ("": none), so that
       events of the same thread cost a comparison; the writer writes a name once per change. */
    uint32_t last_pid, last_ktid;
    uint64_t last_tid;
    char last_tname[TRACELOG_THREAD_NAME_MAX + 1];
} ptl_sink;

/* Bytes of chunk needed so that any payload the source may hold fits in one chunk. */
uint32_t ptlog_chunk_size_for(const tracelog_metadata *m)
{
    const uint64_t max = 16u << 20; /* the writer's largest chunk: holds PTLOG_PAYLOAD_MAX */
    uint64_t want = 128u << 10;
    if (m->max_data_size > PTLOG_PAYLOAD_MAX)
        return (uint32_t)max;
    if (2 * m->max_data_size + 4096 > want)
        want = 2 * m->max_data_size + 4096;
    return (uint32_t)(want < max ? want : max);
}

/* Largest payload that fits a chunk of this size (format-spec 6.7: the limit - 75 bytes). */
static uint64_t payload_fit(uint32_t chunk_size) { return chunk_size - 75u; }

int ptlog_writer_error(const char *out_name, tracelog_writer *w, tracelog_status st)
{
    tracelog_error err;
    tracelog_writer_last_error(w, &err);
    if (st == TRACELOG_E_NOMEM)
        return ptlog_nomem();
    if (st == TRACELOG_E_IO || err.code == TRACELOG_E_IO) {
        ptlog_msg(out_name, "cannot write the output: %s", err.sys_errno ? strerror(err.sys_errno) : err.message);
        return PTLOG_EXIT_OUTPUT;
    }
    ptlog_msg(out_name, "cannot write the log: %s", err.code ? err.message : tracelog_strerror(st));
    return PTLOG_EXIT_OUTPUT;
}

int ptlog_writer_define(tracelog_writer *w, const char *in_name, const char *out_name, uint32_t id,
                        const char *name, const char *schema)
{
    tracelog_error err;
    tracelog_status st = tracelog_writer_define_event_schema(w, id, name, schema, &err);
    if (st == TRACELOG_OK)
        return 0;
    if (st == TRACELOG_E_NOMEM)
        return ptlog_nomem();
    /* A name change or a table over the format's limits: the input asks what no .ptl log can hold. */
    if (st == TRACELOG_E_INVAL || st == TRACELOG_E_LIMIT) {
        ptlog_msg(in_name, "cannot write event type \"%s\": %s", name, err.message);
        return PTLOG_EXIT_INPUT;
    }
    return ptlog_writer_error(out_name, w, st);
}

/*
 * Defines id as the source names it, once; at the end (last) again, for the types whose schema came
 * after their first event (a JSON document whose "event_types" follow its "events", as ptlog writes
 * one read from a pipe): the writer adds it. A schema or name that changed after the type's first event
 * cannot be written: a .ptl log gives a type one of each, so the conversion would not be exact.
 */
static int define_type(ptl_sink *k, uint32_t id, const char *name, int last)
{
    int known = ptlog_idmap_get(&k->defined, id) != SIZE_MAX;
    if (known && !last)
        return 0;
    const tracelog_schema *schema = k->src->type_schema ? k->src->type_schema(k->src, id) : NULL;
    const char *text = schema ? tracelog_schema_text(schema) : NULL;
    if (known) {
        tracelog_status st = tracelog_writer_define_event_schema(k->w, id, name, text, NULL);
        if (st == TRACELOG_E_INVAL) {
            ptlog_msg(k->src->name, "event type \"%s\" (id %u): its schema or name changed after its first event, "
                                    "and a .ptl log gives a type one of each",
                      name, id);
            return PTLOG_EXIT_INPUT;
        }
        if (st == TRACELOG_OK)
            return 0;
    }
    int rc = ptlog_writer_define(k->w, k->src->name, ptlog_out_name(k->out), id, name, text);
    if (rc || known)
        return rc;
    return ptlog_idmap_put(&k->defined, id, 1) ? ptlog_nomem() : 0;
}

/* The source's whole type table: at the start, and at the end (last) for types named or typed late. */
static int copy_types(ptl_sink *k, int last)
{
    size_t n = k->src->type_count(k->src);
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *name;
        k->src->type_at(k->src, i, &id, &name);
        int rc = define_type(k, id, name, last);
        if (rc)
            return rc;
    }
    return 0;
}

/* The source's name of ev's thread (format 1.2) goes to the writer when it changes (or is taken away). */
static int name_thread(ptl_sink *k, const tracelog_event *ev)
{
    if (!ev->kernel_tid || !k->src->thread_name)
        return 0;
    const char *tname = k->src->thread_name(k->src, ev);
    if (!tname)
        tname = "";
    if (ev->pid == k->last_pid && ev->tid == k->last_tid && ev->kernel_tid == k->last_ktid &&
        strcmp(tname, k->last_tname) == 0)
        return 0;
    tracelog_status st = tracelog_writer_name_thread(k->w, ev->pid, ev->tid, ev->kernel_tid, tname);
    if (st == TRACELOG_E_INVAL) { /* a source's name beyond what a log holds: its sources check it */
        ptlog_msg(k->src->name, "event %llu: thread name of %zu bytes (a log holds 1 to %d)",
                  (unsigned long long)k->count, strlen(tname), TRACELOG_THREAD_NAME_MAX);
        return PTLOG_EXIT_INPUT;
    }
    if (st != TRACELOG_OK)
        return ptlog_writer_error(ptlog_out_name(k->out), k->w, st);
    k->last_pid = ev->pid;
    k->last_tid = ev->tid;
    k->last_ktid = ev->kernel_tid;
    snprintf(k->last_tname, sizeof k->last_tname, "%s", tname);
    return 0;
}

static int ptl_event(void *ctx, const tracelog_event *ev, const char *name)
{
    ptl_sink *k = ctx;
    int named = name_thread(k, ev);
    if (named)
        return named;
    /* A type the source named since the start goes out before the chunk that uses it (one lookup
       per event: copying the whole table whenever it grew made many types cost quadratic time). */
    if (name) {
        int rc = define_type(k, ev->event_id, name, 0);
        if (rc)
            return rc;
    }
    tracelog_status st = tracelog_writer_append(k->w, ev);
    if (st == TRACELOG_E_INVAL) {
        uint32_t chunk = ptlog_chunk_size_for(&k->src->meta);
        if (ev->payload_len > payload_fit(chunk))
            ptlog_msg(k->src->name, "event %llu cannot be written: its payload of %u bytes is over the %llu bytes "
                      "that chunks sized for max_data_size %llu hold (declare a max_data_size of at least %u in "
                      "the input's attributes; the largest possible is %u)",
                      (unsigned long long)k->count, ev->payload_len, (unsigned long long)payload_fit(chunk),
                      (unsigned long long)k->src->meta.max_data_size, ev->payload_len, (unsigned)PTLOG_PAYLOAD_MAX);
        else
            ptlog_msg(k->src->name, "event %llu cannot be written: bad truncation value %u", (unsigned long long)k->count,
                      ev->truncation);
        return PTLOG_EXIT_INPUT;
    }
    if (st != TRACELOG_OK)
        return ptlog_writer_error(ptlog_out_name(k->out), k->w, st);
    k->count++;
    return 0;
}

int ptlog_write_ptl(ptlog_src *src, ptlog_out *out, ptlog_select *sel)
{
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.chunk_size = ptlog_chunk_size_for(&src->meta); /* log policy: APPEND (the default) */
    ptl_sink k = {.src = src, .out = out};
    int rc = ptlog_out_check_log_start(out);
    if (rc)
        return rc;
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(out->fd, &src->meta, &opt, &k.w, &err);
    if (st == TRACELOG_E_NOMEM)
        return ptlog_nomem();
    if (st != TRACELOG_OK) {
        ptlog_msg(ptlog_out_name(out), "cannot start the log: %s", err.message);
        return st == TRACELOG_E_IO ? PTLOG_EXIT_OUTPUT : PTLOG_EXIT_INPUT;
    }
    rc = copy_types(&k, 0);
    int src_rc = rc ? rc : ptlog_src_events(src, sel, ptl_event, &k);
    if (src_rc > PTLOG_EXIT_LOSS) {
        tracelog_writer_abandon(k.w);
        ptlog_idmap_free(&k.defined);
        return src_rc;
    }
    rc = copy_types(&k, 1); /* types named or typed only at the end (JSON) */
    ptlog_idmap_free(&k.defined);
    tracelog_log_status status;
    src->get_status(src, &status); /* the writer takes the stream-side counters only */
    if (!rc && (st = tracelog_writer_set_status(k.w, &status)) != TRACELOG_OK)
        rc = ptlog_writer_error(ptlog_out_name(out), k.w, st);
    if (rc) {
        tracelog_writer_abandon(k.w);
        return rc;
    }
    st = tracelog_writer_close(k.w, &err);
    if (st != TRACELOG_OK) {
        ptlog_msg(ptlog_out_name(out), "cannot write the output: %s", err.message);
        return st == TRACELOG_E_NOMEM ? PTLOG_EXIT_INTERNAL : PTLOG_EXIT_OUTPUT;
    }
    return src_rc;
}
