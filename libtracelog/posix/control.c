/*
 * The controller's side of a stream: creation (the stream, its log), start,
 * stop, clear, shutdown, attributes, status and filters. The stream itself
 * (stream/) knows nothing of POSIX: this is where the standard's system
 * events and their data are made.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix/internal.h"
#include "posix/event.h"
#include "posix/log.h"
#include "posix/names.h"
#include "posix/process.h"
#include "posix/read.h"
#include "posix/wanted.h"

#define CALLER ((uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

/* The events the stream makes itself are the standard's system events. */
static const tl_stream_markers posix_markers = {
    .overflow = POSIX_TRACE_OVERFLOW,
    .resume = POSIX_TRACE_RESUME,
    .stop = POSIX_TRACE_STOP,   /* data: int 1, stopped automatically */
    .start = POSIX_TRACE_START, /* data: the filter */
};

static void get_filter(tl_stream *s, trace_event_set_t *set)
{
    uint64_t words[TL_FILTER_WORDS];
    tl_stream_get_filter(s, words);
    memcpy(set->__bits, words, sizeof words);
}

/*
 * What the system events we record go through: for another process's
 * stream, a consumer's checked copy of the geometry (that process may have
 * changed the mapping's); for ours, NULL: the stream itself.
 */
static tl_consumer *recorder(tl_trace *t)
{
    if (!t->active.remote)
        return NULL;
    return t->active.log ? tl_recorder_consumer(t->active.log) : t->active.consumer;
}

static void record_system(tl_trace *t, trace_event_id_t id, const void *data, size_t len, uint64_t caller)
{
    tracelog_event ev = tl_posix_system_event(id, data, len, caller);
    tl_consumer *via = recorder(t);
    if (via)
        tl_consumer_record_system(via, &ev);
    else
        tl_stream_record_system(t->active.stream, &ev);
}

/* Every event the stream lost, over its consumer's checked lane count (a traced process may change the mapping's). */
/*
 * Runs fn(t, arg) under the SIGBUS guard of a controller's stream buffer
 * (tl_remote_guard: EFAULT once the traced process has shrunk it); for a
 * stream of our own, just fn(t, arg). fn takes no lock and allocates nothing.
 */
typedef struct guarded_op {
    tl_trace *t;
    void *arg;
    int (*fn)(tl_trace *, void *);
} guarded_op;

static int run_op(void *p)
{
    guarded_op *g = p;
    return g->fn(g->t, g->arg);
}

static int guarded(tl_trace *t, int (*fn)(tl_trace *, void *), void *arg)
{
    guarded_op g = {t, arg, fn};
    return tl_remote_guard(t->active.remote, run_op, &g);
}

static int consumer_overruns(tl_trace *t, void *out)
{
    *(uint64_t *)out = tl_consumer_overruns(t->active.consumer);
    return 0;
}

/* Once the buffer is lost, the overruns last read and one for the loss (how many events it held is unknown). */
uint64_t tl_posix_overruns(tl_trace *t)
{
    if (t->active.log)
        return tl_recorder_overruns(t->active.log);
    uint64_t n;
    if (guarded(t, consumer_overruns, &n) == EFAULT)
        return atomic_load_explicit(&t->active.overruns_seen, memory_order_relaxed) + 1;
    atomic_store_explicit(&t->active.overruns_seen, n, memory_order_relaxed); /* get_status may run on two threads */
    return n;
}

/* Another process than ours: a stream it records into and we control (xproc/traced.c). */
static int is_other_process(pid_t pid) { return pid != 0 && pid != getpid(); }

/*
 * Fills t->attr from the caller's attributes with the choices left open
 * resolved. remote: a stream another process records into, whose producers
 * wait for room only when the controller asked for it: by default a traced
 * process never waits for its controller (docs/design/cross-process.md, 2).
 */
static int resolve_attr(const trace_attr_t *in, int with_log, int remote, trace_attr_t *out)
{
    if (in && in->__magic != TL_ATTR_MAGIC)
        return EINVAL;
    if (in)
        *out = *in;
    else
        posix_trace_attr_init(out);
    if (out->__stream_policy == 0)
        out->__stream_policy = with_log ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP;
    if (out->__stream_policy == POSIX_TRACE_FLUSH && !with_log)
        return EINVAL;
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    out->__create_time = now;
    /* Report the sizes actually used, as the standard asks. */
    size_t min_stream = 4u * tl_rec_size((uint32_t)out->__max_data_size);
    if (out->__stream_size < min_stream)
        out->__stream_size = min_stream;
    out->__flush_interval_ms = tl_posix_flush_interval_ms(out);
    int waits = out->__stream_policy == POSIX_TRACE_FLUSH && (!remote || out->__flush_wait_us > 0);
    out->__flush_wait_us = waits ? (int)tl_posix_flush_wait_us(out) : 0;
    if (out->__flush_wait_us == 0)
        out->__flush_wait_us = -1; /* resolved: never waits */
    return 0;
}

static int check_log_fd(int fd, int log_policy)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
        return EBADF;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return EBADF;
    /* A ring is rewritten in place: it needs a regular file without O_APPEND. */
    if (log_policy == POSIX_TRACE_LOOP && (!S_ISREG(st.st_mode) || (fl & O_APPEND)))
        return EINVAL;
    return 0;
}

/*
 * An inherited stream of our own: in a named buffer, so that a child made
 * by posix_spawn can open it (spawn.c); our names move to a named map for
 * the same reason. Forked children share the mapping as before.
 */
static int make_named_stream(tl_trace *t, const tl_stream_params *p)
{
    uint64_t bytes = tl_stream_bytes(p);
    if (bytes == 0) /* too large to be addressed: as for any other stream, no memory for these parameters */
        return ENOMEM;
    int e = tl_xproc_buffer_create((uint32_t)geteuid(), (uint32_t)getegid(), (uint32_t)getpid(), bytes,
                                   &t->active.named);
    if (e)
        return e;
    t->active.stream = tl_stream_create_in(t->active.named.map, t->active.named.size, p);
    if (!t->active.stream)
        return ENOMEM;
    if (tl_xproc_ensure_ctl() == 0)
        tl_posix_names_share();
    return 0;
}

/* The stream, and what reads it: the log, or the consumer of the getnext functions. */
static int make_stream(tl_trace *t, int with_log, int fd)
{
    tl_stream_params p = {.policy = (uint32_t)t->attr.__stream_policy, /* same values as TRACELOG_POLICY_* */
                          .stream_size = t->attr.__stream_size,
                          .max_data = (uint32_t)t->attr.__max_data_size,
                          .max_sys_data = 2 * sizeof(trace_event_set_t), /* FILTER: old and new filter */
                          .wait_us = tl_posix_flush_wait_us(&t->attr),
                          .markers = posix_markers};
    if (t->active.remote) {
        int e = tl_remote_make_stream(t->active.remote, &p, &t->active.stream);
        if (e)
            return e;
    } else if (t->attr.__inheritance == POSIX_TRACE_INHERITED) {
        int e = make_named_stream(t, &p);
        if (e)
            return e;
    } else {
        t->active.stream = tl_stream_create(&p);
        if (!t->active.stream)
            return ENOMEM;
        t->active.stream_bytes = tl_stream_bytes(&p);
    }
    /* What each thread's buffer actually holds (POSIX: report the size used). */
    t->attr.__stream_size = tl_stream_lane_size(t->active.stream);
    if (with_log)
        return tl_log_open(t, fd);
    if (!(t->active.consumer = tl_consumer_new(t->active.stream)))
        return ENOMEM;
    tl_remote_watch_consumer(t->active.remote, t->active.consumer, t->attr.__inheritance == POSIX_TRACE_INHERITED);
    return 0;
}

static void free_trace(tl_trace *t)
{
    if (t->active.stream && !t->active.log)
        tl_remote_consumer_free(t->active.remote, t->active.consumer);
    if (t->active.remote) {
        tl_posix_remote_names_release(t->active.remote, &t->active.remote_names);
        tl_remote_close(t->active.remote); /* the stream lives in its buffer */
    } else if (t->active.named.name[0]) {
        if (t->active.stream)
            tl_stream_destroy(t->active.stream, t->active.named.size); /* our mapping's pages released, the range kept */
        else
            munmap(t->active.named.map, t->active.named.size);
        tl_shmobj_unlink(t->active.named.name);
    } else if (t->active.stream) {
        tl_stream_destroy(t->active.stream, t->active.stream_bytes);
    }
    free(t);
}

static int announce(tl_trace *t, trace_id_t *trid)
{
    int e = tl_remote_announce(t->active.remote, t->attr.__inheritance == POSIX_TRACE_INHERITED);
    if (e) {
        posix_trace_shutdown(*trid);
        *trid = 0;
    }
    return e;
}

#define EXIT_WAIT_MS 10000 /* exit() waits at most this long for shutdowns under way on other threads */

/*
 * At exit, streams are shut down (POSIX: as if by posix_trace_shutdown),
 * which writes their logs out; a stream another thread is shutting down is
 * its to finish, and exit waits for it (bounded: that thread may be stuck).
 */
static void at_exit(void)
{
    tl_posix_cancel_off(); /* a cancellation pending on the exiting thread must not turn exit() into its end alone */
    trace_id_t trids[TRACE_SYS_MAX];
    size_t n = tl_posix_own_trids(trids, TRACE_SYS_MAX, TL_ACTIVE_KINDS);
    for (size_t i = 0; i < n; i++)
        posix_trace_shutdown(trids[i]);
    for (int ms = 0; tl_posix_shutdowns_under_way() > 0 && ms < EXIT_WAIT_MS; ms++)
        usleep(1000);
    /* Cancellation stays off: the process is ending, and the rest of exit() (stdio's flush) must not
       end only this thread. */
}

static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static void install_exit_hook(void) { atexit(at_exit); }

static int create(pid_t pid, const trace_attr_t *attr, int with_log, int fd, trace_id_t *trid)
{
    if (!trid)
        return EINVAL;
    tl_posix_process_init(); /* a forked child keeps or leaves the stream: the fork handlers decide */
    tl_trace *t = calloc(1, sizeof *t);
    if (!t)
        return ENOMEM;
    t->kind = with_log ? TL_ACTIVE_LOG : TL_ACTIVE;
    int e = is_other_process(pid) ? tl_remote_open(pid, &t->active.remote) : 0;
    if (!e && t->active.remote) /* made now if it has none (our child before exec): the names it opens go there */
        tl_posix_remote_names(t->active.remote, &t->active.remote_names, NULL);
    if (!e)
        e = resolve_attr(attr, with_log, t->active.remote != NULL, &t->attr);
    if (!e && with_log)
        e = check_log_fd(fd, t->attr.__log_policy);
    if (!e)
        e = make_stream(t, with_log, fd);
    if (!e)
        e = tl_posix_register(t, trid);
    if (e) {
        if (t->active.log)
            tl_log_abandon(t->active.log);
        t->active.log = NULL;
        free_trace(t);
        return e;
    }
    pthread_once(&exit_once, install_exit_hook);
    if (t->active.remote) /* it records from its next trace call on */
        return announce(t, trid);
    tl_posix_publish(t->slot, t->active.stream);
    return 0;
}

int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr, trace_id_t *restrict trid)
{
    pthread_testcancel();
    tl_posix_cancel_off();
    int e = create(pid, attr, 0, -1, trid);
    tl_posix_cancel_on();
    return e;
}

int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int file_desc,
                               trace_id_t *restrict trid)
{
    pthread_testcancel();
    tl_posix_cancel_off();
    int e = create(pid, attr, 1, file_desc, trid);
    tl_posix_cancel_on();
    return e;
}

/* caller: the program address of the posix_trace_start call. */
static int start_op(tl_trace *t, void *caller)
{
    trace_event_set_t filter;
    get_filter(t->active.stream, &filter);
    tracelog_event start = tl_posix_system_event(POSIX_TRACE_START, &filter, sizeof filter, *(uint64_t *)caller);
    tl_consumer *via = recorder(t);
    return via ? tl_consumer_start(via, &start) : tl_stream_start(t->active.stream, &start);
}

int posix_trace_start(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock); /* serialises start/stop/filter changes */
    uint64_t caller = CALLER;
    guarded(t, start_op, &caller);
    if (!t->active.remote)
        tl_posix_wanted_set(t->slot, 1); /* after the stream runs: its events pass from now on */
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return 0;
}

static int stop_op(tl_trace *t, void *marker)
{
    tl_consumer *via = recorder(t);
    return via ? tl_consumer_stop(via, marker) : tl_stream_stop(t->active.stream, marker);
}

/* 1 if the stream was running; not if it was stopped already, by the user or by itself (UNTIL_FULL, full). */
static int stop_stream(tl_trace *t, uint64_t caller)
{
    int automatic = 0;
    tracelog_event stop = tl_posix_system_event(POSIX_TRACE_STOP, &automatic, sizeof automatic, caller);
    if (t->active.log)
        return tl_recorder_stop(t->active.log, &stop);
    return guarded(t, stop_op, &stop) == 1;
}

int posix_trace_stop(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock);
    /* After the stream stopped (shutdown withdraws the slot instead). A full UNTIL_FULL stream
       ignores the stop and starts again once drained: it stays wanted. */
    if (stop_stream(t, CALLER) && !t->active.remote)
        tl_posix_wanted_set(t->slot, 0);
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return 0;
}

static int clear_op(tl_trace *t, void *unused)
{
    (void)unused;
    tl_consumer_clear(t->active.consumer);
    return 0;
}

static int empty_filter_op(tl_trace *t, void *caller);

int posix_trace_clear(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock);
    /* The log is left as it is: POSIX leaves APPEND unspecified, and what was
       already flushed is never destroyed by tracelog (format-spec: durability). */
    if (t->active.log)
        tl_recorder_clear(t->active.log);
    else
        guarded(t, clear_op, NULL);
    uint64_t caller = CALLER;
    guarded(t, empty_filter_op, &caller);
    atomic_store(&t->active.overruns_reported, tl_posix_overruns(t));
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return 0;
}

int posix_trace_shutdown(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_posix_shutdown_begins();
    if (tl_posix_unregister(t)) { /* wakes blocked readers (EINVAL) and waits for them */
        tl_posix_shutdown_ends();
        return EINVAL;
    }
    stop_stream(t, CALLER);
    if (t->active.log)
        e = tl_log_close(t->active.log);
    t->active.log = NULL;
    free_trace(t);
    tl_posix_shutdown_ends();
    tl_posix_cancel_on();
    return e;
}

int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr)
{
    tl_trace *t;
    if (!attr)
        return EINVAL;
    int e = tl_posix_acquire(trid, TL_ANY_KIND, &t);
    if (e)
        return e;
    *attr = t->attr;
    tl_posix_release(t);
    return 0;
}

static void prerecorded_status(tl_trace *t, struct posix_trace_status_info *si)
{
    const tracelog_log_status *ls = &t->pre.status;
    si->posix_stream_status = POSIX_TRACE_SUSPENDED;
    si->posix_stream_full_status = POSIX_TRACE_NOT_FULL;
    si->posix_stream_overrun_status = ls->stream_overruns ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    si->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
    si->posix_stream_flush_error = ls->flush_error;
    si->posix_log_overrun_status = ls->log_overruns ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    si->posix_log_full_status = tl_posix_log_full_status(t->attr.__log_policy, ls);
}

static int notice_end_op(tl_trace *t, void *unused)
{
    (void)unused;
    return tl_posix_notice_end(t);
}

static int stream_status_op(tl_trace *t, void *out)
{
    struct posix_trace_status_info *si = out;
    si->posix_stream_status = tl_stream_running(t->active.stream) ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
    si->posix_stream_full_status = tl_stream_full(t->active.stream) ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
    return 0;
}

int tl_posix_running(tl_trace *t)
{
    struct posix_trace_status_info si;
    return guarded(t, stream_status_op, &si) == 0 && si.posix_stream_status == POSIX_TRACE_RUNNING;
}

int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *si)
{
    tl_trace *t;
    if (!si)
        return EINVAL;
    int e = tl_posix_acquire(trid, TL_ANY_KIND, &t);
    if (e)
        return e;
    memset(si, 0, sizeof *si);
    if (t->kind == TL_PRERECORDED) {
        prerecorded_status(t, si); /* a completed log: nothing is reset */
        tl_posix_release(t);
        return 0;
    }
    if (t->active.remote && !t->active.log) { /* with a log, the log notices the end */
        tl_lock_take(t->read_lock);
        guarded(t, notice_end_op, NULL);
        tl_lock_give(t->read_lock);
    }
    if (guarded(t, stream_status_op, si) == EFAULT) { /* its buffer is lost: as an ended process's */
        si->posix_stream_status = POSIX_TRACE_SUSPENDED;
        si->posix_stream_full_status = POSIX_TRACE_NOT_FULL;
    }
    /* Read and reset in one step: of two concurrent calls, one reports a new overrun. */
    uint64_t overruns = tl_posix_overruns(t);
    uint64_t reported = atomic_exchange(&t->active.overruns_reported, overruns);
    si->posix_stream_overrun_status = overruns > reported ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    si->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
    if (t->active.log)
        tl_log_get_status(t, si);
    tl_posix_release(t);
    return 0;
}

static int get_filter_op(tl_trace *t, void *set)
{
    get_filter(t->active.stream, set);
    return 0;
}

int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
    tl_trace *t;
    if (!set)
        return EINVAL;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    if (guarded(t, get_filter_op, set) == EFAULT)
        memset(set, 0, sizeof *set); /* its buffer is lost: nothing passes */
    tl_posix_release(t);
    return 0;
}

typedef struct filter_args {
    const trace_event_set_t *set;
    int how;
    uint64_t caller;
} filter_args;

static int set_filter_op(tl_trace *t, void *arg)
{
    const filter_args *a = arg;
    tl_stream *s = t->active.stream;
    trace_event_set_t both[2]; /* old, new: the data of POSIX_TRACE_FILTER */
    get_filter(s, &both[0]);
    uint64_t words[TL_FILTER_WORDS];
    for (int w = 0; w < TL_FILTER_WORDS; w++) {
        uint64_t old = both[0].__bits[w], arg_w = a->set->__bits[w];
        words[w] = a->how == POSIX_TRACE_SET_EVENTSET ? arg_w
                   : a->how == POSIX_TRACE_ADD_EVENTSET ? old | arg_w
                                                        : old & ~arg_w;
        both[1].__bits[w] = words[w];
    }
    tl_stream_set_filter(s, words);
    if (!t->active.remote)
        tl_posix_wanted_refresh(); /* after the stream's filter: an id let through passes from now on */
    if (tl_stream_running(s))
        record_system(t, POSIX_TRACE_FILTER, both, sizeof both, a->caller);
    return 0;
}

/*
 * posix_trace_clear reinitialises the stream "as if it were returning from
 * posix_trace_create()", but for its names and its status: the filter is
 * empty again. A filter that was not is changed as set_filter changes it
 * (a FILTER event when running).
 */
static int empty_filter_op(tl_trace *t, void *caller)
{
    trace_event_set_t now, none;
    get_filter(t->active.stream, &now);
    posix_trace_eventset_empty(&none);
    if (memcmp(&now, &none, sizeof none) == 0)
        return 0;
    filter_args a = {&none, POSIX_TRACE_SET_EVENTSET, *(const uint64_t *)caller};
    return set_filter_op(t, &a);
}

int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
    tl_trace *t;
    if (!set || how < POSIX_TRACE_SET_EVENTSET || how > POSIX_TRACE_SUB_EVENTSET)
        return EINVAL;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock);
    filter_args a = {set, how, CALLER};
    guarded(t, set_filter_op, &a);
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return 0;
}

/* The id name has for t's stream: 0, EINPROGRESS (another process's, which has not opened it: left to it), or an errno. */
static int filter_id(tl_trace *t, const char *name, int keep, trace_event_id_t *id)
{
    if (!t->active.remote)
        return tl_posix_name_open(name, id); /* our own order: the id is the one we record with */
    tl_names *names;
    int e = tl_posix_trace_names(t, &names);
    if (!e)
        e = tl_names_filter_by_name(names, tl_remote_stream_id(t->active.remote), name, keep, id);
    /* Its map holds as many waiting names as it can (their streams may be long gone): the name gets
       its id now, as posix_trace_trid_eventid_open gives it, and the process's later names the next ones. */
    if (e == ENOSPC)
        e = tl_names_open(names, name, id);
    tl_posix_trace_names_done(t);
    return e;
}

int tracelog_trace_filter_name(trace_id_t trid, const char *name, int how)
{
    if (!name || (how != POSIX_TRACE_ADD_EVENTSET && how != POSIX_TRACE_SUB_EVENTSET))
        return EINVAL;
    if (strnlen(name, TRACE_EVENT_NAME_MAX + 1) > TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock); /* the handle's view of the names, and filter changes */
    trace_event_id_t id;
    e = filter_id(t, name, how == POSIX_TRACE_SUB_EVENTSET, &id);
    if (!e) {
        trace_event_set_t set;
        posix_trace_eventset_empty(&set);
        posix_trace_eventset_add(id, &set);
        filter_args a = {&set, how, CALLER};
        guarded(t, set_filter_op, &a);
    }
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return e == EINPROGRESS ? 0 : e;
}
