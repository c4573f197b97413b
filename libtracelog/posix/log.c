/*
 * A stream's log (Trace Log option), as the standard sees it: the recorder
 * (recorder/recorder.h) drains the stream into the log; this file maps the
 * stream's attributes to the recorder's params, says what the log
 * describes (its metadata, its event types and their schemas), and maps
 * the recorder's status to the standard's (posix_trace_flush,
 * posix_trace_get_status).
 *
 * A controller's log describes the traced process (its pid, executable and
 * name: format-spec 5.2 `process`), whose names it reads from the process's
 * named map, an untrusted input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "posix/internal.h"
#include "posix/thread_ids.h"
#include "posix/event.h"
#include "posix/log.h"
#include "posix/names.h"
#include "posix/process.h"

#define DEFERRED_MAX 64
#define REFUSED_KEPT 256 /* threads whose refused names are counted once */

/* What the recorder asks of the POSIX layer (its client). */
typedef struct log_client {
    trace_attr_t attr;     /* the stream's, as resolved at creation */
    tl_remote *remote;     /* a controller's log: the traced process */
    tl_names *names;       /* its named map, once attached (tl_posix_remote_names) */
    _Atomic uint64_t *names_refused; /* the handle's count of malformed thread names (it outlives us) */
    _Atomic int *names_error;        /* the handle's: why the process's map was first refused, or 0 */
    uint32_t names_logged; /* user names already given to the writer */
    /* Names a controller opened before the process (define_or_defer), defined once the process has.
       Bounded: beyond, such a name is defined without the schema the process may give it later. */
    trace_event_id_t deferred[DEFERRED_MAX];
    size_t ndeferred;
    uint64_t refused[REFUSED_KEPT]; /* (pid, kernel tid) of the threads whose names were refused */
    size_t nrefused;
} log_client;

static tracelog_policy policy_of(int posix_policy)
{
    switch (posix_policy) {
    case POSIX_TRACE_LOOP: return TRACELOG_POLICY_LOOP;
    case POSIX_TRACE_UNTIL_FULL: return TRACELOG_POLICY_UNTIL_FULL;
    case POSIX_TRACE_FLUSH: return TRACELOG_POLICY_FLUSH;
    default: return TRACELOG_POLICY_APPEND;
    }
}

static uint64_t ns_of(struct timespec ts) { return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec; }

static void describe(void *ctx, tracelog_metadata *m)
{
    const log_client *lc = ctx;
    const trace_attr_t *a = &lc->attr;
    tracelog_metadata_init(m); /* this host; this process, unless the log is a controller's */
    tl_copy_text(m->trace_name, sizeof m->trace_name, a->__name);
    if (lc->remote) { /* the traced process, not its controller; named after it unless the caller named the trace */
        tl_remote_identity id;
        tl_remote_identity_known(lc->remote, &id);
        m->pid = id.pid;
        tl_copy_text(m->program, sizeof m->program, id.program);
        if (!a->__name[0])
            tl_copy_text(m->trace_name, sizeof m->trace_name, id.name);
    }
    tl_copy_text(m->generation_version, sizeof m->generation_version, a->__genversion);
    m->creation_time_ns = ns_of(a->__create_time);
    m->clock_resolution_ns = ns_of(a->__clock_res);
    m->max_data_size = a->__max_data_size;
    m->stream_min_size = a->__stream_size;
    m->log_max_size = a->__log_size;
    m->stream_full_policy = policy_of(a->__stream_policy);
    m->log_full_policy = policy_of(a->__log_policy);
    m->inherited = a->__inheritance == POSIX_TRACE_INHERITED;
}

/* Defines id in the log, with its schema if it has one. */
static void define(tracelog_writer *w, trace_event_id_t id, const char *name)
{
    tracelog_writer_define_event_schema(w, id, name, tl_posix_event_schema(id, name), NULL);
}

/*
 * Defines user id of map `names` (NULL: the process's own) with the schema
 * the map holds for it: a controller's log, or one a child sharing the map
 * through an inherited stream opened typed, has it only there. The text is
 * another process's: a schema the writer refuses (malformed, over a limit)
 * leaves the name without one, and the log's readers show bytes.
 */
static void define_user(tracelog_writer *w, const tl_names *names, trace_event_id_t id, const char *name)
{
    char *schema = NULL;
    if (tl_names_schema_of(names, id, &schema) != 0 ||
        tracelog_writer_define_event_schema(w, id, name, schema, NULL) != TRACELOG_OK)
        define(w, id, name);
    free(schema);
}

/*
 * Defines user id unless a controller opened it (to filter it) before the
 * process did: then not yet, since the process may still open it typed, and
 * a name the log defined without its schema would stay so. 0, or 1: retry
 * before the next chunk (no event of it can come before: the process has not
 * got its id yet).
 */
static int define_or_defer(tracelog_writer *w, const tl_names *names, trace_event_id_t id, int may_defer)
{
    char name[TRACE_EVENT_NAME_MAX + 1], *schema = NULL;
    int e = tl_names_schema_of(names, id, &schema);
    free(schema);
    if (e == EAGAIN && may_defer)
        return 1;
    if (tl_names_name_of(names, id, name, sizeof name) == 0)
        define_user(w, names, id, name);
    return 0;
}

/* The system events and the unnamed user event, which every log names. */
static void define_fixed(const log_client *lc, tracelog_writer *w)
{
    for (trace_event_id_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++)
        define(w, id, tl_posix_system_name(id));
    char name[TRACE_EVENT_NAME_MAX + 1];
    tl_posix_name_of(POSIX_TRACE_UNNAMED_USEREVENT, name, sizeof name);
    tracelog_writer_define_event(w, POSIX_TRACE_UNNAMED_USEREVENT, name);
    if (lc->remote)
        define(w, TL_PROCESS_END_EVENT, TL_PROCESS_END_NAME);
}

/*
 * The traced process's named map (a controller's log): 0, or EAGAIN, the
 * handle told why the first time it is refused. That stays: a later try
 * that succeeds may find a map made anew (its process ended and removed its
 * own), without the names the log has missed.
 */
static int remote_names(log_client *lc)
{
    int refused = 0, none = 0, e = tl_posix_remote_names(lc->remote, &lc->names, &refused);
    if (refused)
        atomic_compare_exchange_strong(lc->names_error, &none, refused);
    return e;
}

/* Names registered since the last call (by the traced process, for a controller's log). */
static void define_types(void *ctx, tracelog_writer *w, int first)
{
    log_client *lc = ctx;
    if (first)
        define_fixed(lc, w);
    if (lc->remote && remote_names(lc))
        return; /* it has opened no name we can read yet */
    const tl_names *names = lc->names; /* NULL: the process's own */
    size_t kept = 0;
    for (size_t i = 0; i < lc->ndeferred; i++)
        if (define_or_defer(w, names, lc->deferred[i], 1))
            lc->deferred[kept++] = lc->deferred[i];
    lc->ndeferred = kept;
    uint32_t n = tl_names_count(names);
    for (; lc->names_logged < n; lc->names_logged++) {
        trace_event_id_t id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + lc->names_logged;
        if (define_or_defer(w, names, id, lc->ndeferred < DEFERRED_MAX))
            lc->deferred[lc->ndeferred++] = id;
    }
}

/*
 * Counts thread (pid, kernel_tid)'s malformed name once: the writer asks
 * again for an unnamed thread at each write-out (its rename pass). Beyond
 * REFUSED_KEPT threads, each refusal counts.
 */
static void count_refused(log_client *lc, uint32_t pid, uint32_t kernel_tid)
{
    uint64_t key = (uint64_t)pid << 32 | kernel_tid;
    for (size_t i = 0; i < lc->nrefused; i++)
        if (lc->refused[i] == key)
            return;
    if (lc->nrefused < REFUSED_KEPT)
        lc->refused[lc->nrefused++] = key;
    atomic_fetch_add(lc->names_refused, 1);
}

/*
 * A thread that ended before its events were written: its name at its
 * first event. Ours from our own table; another process's (the traced
 * process of a controller's log, a child recording into our inherited
 * stream, which shares our map) from the name map, written by that process:
 * a malformed entry is counted, and the thread goes unnamed.
 */
static void thread_name(void *ctx, uint32_t pid, uint32_t kernel_tid, char *name, size_t cap)
{
    log_client *lc = ctx;
    if (!lc->remote && pid == (uint32_t)tl_posix_pid()) {
        tl_posix_thread_first_name(kernel_tid, name, cap);
        return;
    }
    if (lc->remote && remote_names(lc))
        return; /* no map we can read */
    if (tl_names_thread_name(lc->names, pid, kernel_tid, name, cap) == EILSEQ)
        count_refused(lc, pid, kernel_tid);
}

static void release(void *ctx)
{
    log_client *lc = ctx;
    tl_names_detach(lc->names);
    free(lc);
}

int tl_log_open(tl_trace *t, int fd)
{
    log_client *lc = calloc(1, sizeof *lc);
    if (!lc)
        return ENOMEM;
    *lc = (log_client){.attr = t->attr,
                       .remote = t->active.remote,
                       .names_refused = &t->active.names_refused,
                       .names_error = &t->active.names_error};
    /* Mapped now: a process that ends before its log's writer is made takes its map's name with it. */
    if (lc->remote)
        remote_names(lc);
    const trace_attr_t *a = &t->attr;
    tl_recorder_params p = {
        .fd = fd,
        .background = a->__stream_policy == POSIX_TRACE_FLUSH,
        .flush_interval_ns = (uint64_t)a->__flush_interval_ms * 1000000u,
        .inherited = a->__inheritance == POSIX_TRACE_INHERITED,
        .remote = t->active.remote,
        .ids = {.error = POSIX_TRACE_ERROR,
                .stop = POSIX_TRACE_STOP,
                .overflow = POSIX_TRACE_OVERFLOW,
                .process_end = TL_PROCESS_END_EVENT},
        .client = {.ctx = lc,
                   .describe = describe,
                   .define_types = define_types,
                   .thread_name = thread_name,
                   .release = release},
    };
    tracelog_writer_options_init(&p.writer);
    p.writer.log_policy = policy_of(a->__log_policy);
    p.writer.log_max_size = a->__log_size ? a->__log_size : 1;
    int e = tl_recorder_open(&t->active.log, t->active.stream, &p);
    if (!e)
        tl_posix_crash_watch(t->active.log);
    return e;
}

void tl_log_abandon(tl_recorder *r)
{
    tl_posix_crash_unwatch(r);
    tl_recorder_abandon(r);
}

int tl_log_close(tl_recorder *r)
{
    tl_posix_crash_unwatch(r);
    return tl_recorder_close(r);
}

int tl_posix_log_full_status(int log_policy, const tracelog_log_status *ls)
{
    /* A LOOP log that overwrote events has used up its space: it is full from then on, like a LOOP stream. */
    int wrapped = log_policy == POSIX_TRACE_LOOP && ls->log_overruns > 0;
    return ls->log_full || wrapped ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
}

void tl_log_get_status(tl_trace *t, struct posix_trace_status_info *si)
{
    tl_recorder_status st;
    tl_recorder_get_status(t->active.log, &st);
    si->posix_stream_flush_status = st.flushing ? POSIX_TRACE_FLUSHING : POSIX_TRACE_NOT_FLUSHING;
    si->posix_stream_flush_error = st.error;
    /* Read and reset in one step: of two concurrent calls, one reports a new overrun. */
    uint64_t reported = atomic_exchange(&t->active.log_overruns_reported, st.log.log_overruns);
    si->posix_log_overrun_status = st.log.log_overruns > reported ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    si->posix_log_full_status = tl_posix_log_full_status(t->attr.__log_policy, &st.log);
}

int posix_trace_flush(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_ACTIVE_LOG, &t);
    if (e)
        return e;
    uint64_t caller = (uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0));
    tracelog_event start = tl_posix_system_event(POSIX_TRACE_FLUSH_START, NULL, 0, caller);
    tracelog_event stop = tl_posix_system_event(POSIX_TRACE_FLUSH_STOP, NULL, 0, caller);
    e = tl_recorder_flush(t->active.log, &start, &stop);
    tl_posix_release(t);
    return e;
}
