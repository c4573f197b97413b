/*
 * The recorder's life and its writes: open (the writer made at once, or for
 * a controller's child that has not exec'd its program yet, once it has),
 * flushes, sync, checkpoints, the crash flush, close; the status its users
 * read without waiting for a flush. The drains are in drain.c, the threads
 * in flusher.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "recorder/internal.h"
#include "common/text.h"
#include "writer/io.h"
#include "xproc/proc.h"

#define CRASH_LOCK_WAIT_MS 500 /* the crash handler waits this long for another thread's flush */

static int errno_of(tracelog_status st, const tracelog_error *err)
{
    switch (st) {
    case TRACELOG_OK: return 0;
    case TRACELOG_E_NOMEM: return ENOMEM;
    case TRACELOG_E_IO: return err && err->sys_errno ? err->sys_errno : EIO;
    case TRACELOG_E_LOG_FULL: return 0; /* recorded in the log status, not an error */
    default: return EINVAL;
    }
}

void tl_rec_lock(tl_recorder *r)
{
    atomic_fetch_add_explicit(&r->lock_waiters, 1, memory_order_relaxed);
    pthread_mutex_lock(&r->lock);
    atomic_fetch_sub_explicit(&r->lock_waiters, 1, memory_order_relaxed);
    tl_stream_thread_drains(1);
    atomic_store_explicit(&r->owner, (uintptr_t)pthread_self(), memory_order_relaxed);
}

void tl_rec_unlock(tl_recorder *r)
{
    tl_stream_thread_drains(0);
    atomic_store_explicit(&r->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&r->lock);
}

void tl_rec_xfsz_block(sigset_t *old)
{
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, old);
}

void tl_rec_xfsz_restore(const sigset_t *old)
{
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&xfsz, NULL, &zero) > 0)
        ; /* discard the SIGXFSZ our own write raised */
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

int tl_rec_guarded(tl_recorder *r, int (*fn)(void *), void *arg)
{
    return tl_remote_guard(r->params.remote, fn, arg);
}

static int read_counters(void *arg)
{
    tl_recorder *r = arg;
    r->delivered_seen = tl_stream_delivered(r->stream);
    r->overruns_seen = tl_consumer_overruns(r->consumer);
    return 0;
}

uint64_t tl_rec_recorded(const tl_recorder *r) { return r->delivered_seen + r->logged_itself; }

void tl_rec_counters(tl_recorder *r, uint64_t *delivered, uint64_t *overruns)
{
    tl_rec_guarded(r, read_counters, r);
    *delivered = tl_rec_recorded(r);
    *overruns = r->overruns_seen;
}

typedef struct record_args {
    tl_consumer *c;
    const tracelog_event *ev;
} record_args;

static int do_record(void *arg)
{
    record_args *a = arg;
    return tl_consumer_record_system(a->c, a->ev);
}

/* A system event of the recorder's side (flush markers, errors) into the stream. */
static void record(tl_recorder *r, const tracelog_event *ev)
{
    record_args a = {r->consumer, ev};
    tl_rec_guarded(r, do_record, &a);
}

/*
 * A write error stops the log for good (the writer's errors are sticky: every
 * later flush fails the same way), so it is reported once: in flush_error
 * and by one error event (ids.error). Reporting each later failure again
 * would make the background flusher feed the dead log an ERROR event every
 * period, and flush_error could never be read back to 0.
 */
void tl_rec_note_error(tl_recorder *r, int e)
{
    if (r->error)
        return;
    r->error = e;
    pthread_mutex_lock(&r->status_lock);
    if (!r->flush_error)
        r->flush_error = e;
    pthread_mutex_unlock(&r->status_lock);
    tracelog_event error = {.event_id = r->params.ids.error, .payload_len = sizeof e, .payload = &e};
    record(r, &error);
}

int tl_rec_writer_errno(tl_recorder *r, tracelog_status st)
{
    if (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL)
        return 0;
    tracelog_error err;
    tracelog_writer_last_error(r->writer, &err);
    return errno_of(st, &err);
}

void tl_rec_update_status(tl_recorder *r)
{
    tracelog_log_status st = {0};
    tl_rec_counters(r, &st.events_recorded, &st.stream_overruns);
    pthread_mutex_lock(&r->status_lock);
    st.flush_error = r->flush_error;
    pthread_mutex_unlock(&r->status_lock);
    tracelog_writer_set_status(r->writer, &st);
}

void tl_rec_publish_status(tl_recorder *r)
{
    tracelog_log_status ls;
    tracelog_writer_get_status(r->writer, &ls);
    pthread_mutex_lock(&r->status_lock);
    r->snapshot = ls;
    pthread_mutex_unlock(&r->status_lock);
}

/*
 * Writes the status and the partial chunk out; the first time after the
 * traced process's end was logged, with a trailer (a checkpoint): the log
 * reads back complete from then on, even if this controller never gets to
 * shut the stream down. rename_threads: the threads' names are read again first
 * (pthread_setname_np after a thread's first event); not in a crash, where
 * /proc is not to be read nor memory allocated. Caller holds the lock.
 */
int tl_rec_write_out(tl_recorder *r, int rename_threads)
{
    tl_rec_update_status(r);
    r->written_at = tl_rec_recorded(r);
    if (rename_threads)
        tl_writer_rename_threads(r->writer);
    if (r->end_logged && !r->end_checkpointed) {
        r->end_checkpointed = 1;
        return tl_rec_writer_errno(r, tracelog_writer_checkpoint(r->writer));
    }
    return tl_rec_writer_errno(r, tracelog_writer_flush(r->writer));
}

/* Caller holds the lock. */
int tl_rec_flush_locked(tl_recorder *r, const tracelog_event *before, const tracelog_event *after)
{
    int se = tl_rec_writer_ready(r, 1); /* a write is due: made now if it was waiting for the traced process */
    if (se) {
        tl_rec_note_error(r, se);
        return se;
    }
    sigset_t old;
    tl_rec_xfsz_block(&old);
    atomic_store(&r->flushing, 1);
    if (before)
        record(r, before);
    int e = tl_rec_drain(r, UINT64_MAX);
    int pe = tl_rec_log_process_end(r);
    if (!e)
        e = pe;
    int we = tl_rec_write_out(r, 1);
    if (!e)
        e = we;
    if (e)
        tl_rec_note_error(r, e);
    tl_rec_publish_status(r);
    atomic_store(&r->flushing, 0);
    if (after) /* recorded after the flush: it goes out with the next one */
        record(r, after);
    tl_rec_xfsz_restore(&old);
    return e;
}

int tl_recorder_flush(tl_recorder *r, const tracelog_event *before, const tracelog_event *after)
{
    tl_rec_lock(r);
    int e = tl_rec_flush_locked(r, before, after);
    tl_rec_unlock(r);
    return e;
}

int tl_recorder_sync(tl_recorder *r)
{
    tl_rec_lock(r);
    int e = tl_rec_flush_locked(r, NULL, NULL);
    if (!e) {
        tracelog_status st = tracelog_writer_sync(r->writer);
        if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL) {
            tracelog_error err;
            tracelog_writer_last_error(r->writer, &err);
            e = err.sys_errno ? err.sys_errno : EIO;
            pthread_mutex_lock(&r->status_lock);
            if (!r->flush_error)
                r->flush_error = e;
            pthread_mutex_unlock(&r->status_lock);
        }
    }
    tl_rec_unlock(r);
    return e;
}

int tl_recorder_checkpoint(tl_recorder *r)
{
    tl_rec_lock(r);
    int e = tl_rec_flush_locked(r, NULL, NULL);
    sigset_t old;
    tl_rec_xfsz_block(&old);
    int ce = r->writer ? tl_rec_writer_errno(r, tracelog_writer_checkpoint(r->writer)) : 0;
    tl_rec_xfsz_restore(&old);
    tl_rec_unlock(r);
    return e ? e : ce;
}

typedef struct stop_args {
    tl_recorder *r;
    const tracelog_event *marker;
} stop_args;

static int do_stop(void *arg)
{
    stop_args *a = arg;
    tl_consumer *via = tl_recorder_consumer(a->r);
    return via ? tl_consumer_stop(via, a->marker) : tl_stream_stop(a->r->stream, a->marker);
}

int tl_recorder_stop(tl_recorder *r, const tracelog_event *marker)
{
    tl_rec_lock(r);
    stop_args a = {r, marker};
    int stopped = tl_rec_guarded(r, do_stop, &a) == 1;
    tl_rec_unlock(r);
    return stopped;
}

static int do_clear(void *c)
{
    tl_consumer_clear(c);
    return 0;
}

void tl_recorder_clear(tl_recorder *r)
{
    tl_rec_lock(r);
    tl_rec_guarded(r, do_clear, r->consumer);
    r->grouped = 0; /* every tail moved: the groups adopt them before they take again */
    tl_rec_unlock(r);
}

void tl_recorder_get_status(tl_recorder *r, tl_recorder_status *st)
{
    st->flushing = atomic_load(&r->flushing);
    /* status_lock, not the recorder's lock: a flush in progress must not make us wait (flushing would never be seen). */
    pthread_mutex_lock(&r->status_lock);
    st->log = r->snapshot;
    st->error = r->flush_error;
    r->flush_error = 0;
    pthread_mutex_unlock(&r->status_lock);
}

tl_consumer *tl_recorder_consumer(tl_recorder *r) { return r->params.remote ? r->consumer : NULL; }

uint64_t tl_recorder_overruns(tl_recorder *r)
{
    uint64_t delivered, overruns;
    tl_rec_counters(r, &delivered, &overruns);
    return overruns;
}

typedef struct stats_args {
    const tl_consumer *c;
    tl_recorder_stats *st;
} stats_args;

static int consumer_stats(void *arg)
{
    stats_args *a = arg;
    a->st->events_lost = tl_consumer_overruns(a->c);
    a->st->events_buffered = tl_consumer_buffered(a->c);
    return 0;
}

/* Without the recorder's lock, like the standard's status: the counters are read as they are. */
void tl_recorder_get_stats(tl_recorder *r, tl_recorder_stats *st)
{
    *st = (tl_recorder_stats){.lanes = tl_consumer_lanes(r->consumer)};
    stats_args a = {r->consumer, st};
    if (tl_rec_guarded(r, consumer_stats, &a) == EFAULT) { /* the buffer is gone: nothing buffered, the loss counted */
        uint64_t delivered;
        tl_rec_counters(r, &delivered, &st->events_lost);
        st->events_buffered = 0;
    }
    pthread_mutex_lock(&r->status_lock);
    st->log_events_written = r->snapshot.events_written;
    st->log_events_lost = r->snapshot.log_overruns;
    pthread_mutex_unlock(&r->status_lock);
}

/*
 * The lock for the crash handler: never one its own thread holds (it crashed
 * in the middle of writing: the writer is in no state to go on), and for at
 * most CRASH_LOCK_WAIT_MS from another thread.
 */
static int crash_lock(tl_recorder *r)
{
    if (atomic_load_explicit(&r->owner, memory_order_relaxed) == (uintptr_t)pthread_self())
        return 0;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < CRASH_LOCK_WAIT_MS; i++) {
        if (pthread_mutex_trylock(&r->lock) == 0) {
            tl_stream_thread_drains(1);
            atomic_store_explicit(&r->owner, (uintptr_t)pthread_self(), memory_order_relaxed);
            return 1;
        }
        nanosleep(&ms, NULL);
    }
    return 0;
}

void tl_recorder_crash_flush(tl_recorder *r)
{
    if (!crash_lock(r))
        return;
    if (tl_rec_writer_ready(r, 1)) {
        tl_rec_unlock(r);
        return;
    }
    sigset_t old;
    tl_rec_xfsz_block(&old);
    tl_writer_set_thread_namer(r->writer, NULL, NULL); /* no /proc reads in a crash: new threads go unnamed */
    /* Other threads may go on recording: what they record after the crash is not waited for. */
    int e = tl_rec_drain(r, tl_consumer_now(r->consumer)); /* the consumer's copy of the clock: the buffer's may be gone */
    int we = tl_rec_write_out(r, 0);
    if (e || we)
        tl_rec_note_error(r, e ? e : we);
    tl_rec_xfsz_restore(&old);
    tl_rec_unlock(r);
}

static void free_recorder(tl_recorder *r)
{
    tl_remote_consumer_free(r->params.remote, r->consumer);
    free(r->arena);
    free(r->batch);
    if (r->params.fd >= 0)
        close(r->params.fd);
    if (r->params.client.release)
        r->params.client.release(r->params.client.ctx);
    pthread_mutex_destroy(&r->lock);
    pthread_mutex_destroy(&r->status_lock);
    free(r);
}

/* The event types registered since (by the traced process, for a controller's): before each chunk goes out, so that every event has its name before it (io.h). */
static void define_new_types(void *ctx, tracelog_writer *w)
{
    const tl_recorder *r = ctx;
    r->params.client.define_types(r->params.client.ctx, w, 0);
}

/*
 * A thread's name is its comm (pthread_setname_np, prctl), read from /proc
 * when the writer first defines the thread and again at each write. A
 * thread gone before it was first defined: the name its client remembers,
 * if any; gone by a later write: the name the writer has (a client's name
 * from the thread's first event would undo a rename seen since). For
 * another process's stream, only that process's threads: the pid of an
 * event is the traced process's to write, and its controller (perhaps root)
 * must not put other processes' names into the log on its word.
 */
static void name_thread(void *ctx, uint32_t pid, uint64_t tid, uint32_t kernel_tid, char *name, size_t cap)
{
    const tl_recorder *r = ctx;
    (void)tid;
    if (r->params.remote && pid != (uint32_t)tl_remote_pid(r->params.remote))
        return;
    const tl_recorder_client *client = &r->params.client;
    int defined = name[0] != 0; /* the writer has a name for it: a rename pass */
    if (tl_proc_thread_comm((pid_t)pid, (pid_t)kernel_tid, name, cap) != 0 && !defined && client->thread_name)
        client->thread_name(client->ctx, pid, kernel_tid, name, cap);
}

/* The clock's fields of the metadata (format 1.1): the conversion, for readers to audit. */
static void describe_clock(const tl_clock *clock, tracelog_metadata *m)
{
    tl_copy_text(m->clock_source, sizeof m->clock_source, tl_clock_source(clock));
    if (clock->kind != TL_CLOCK_TSC)
        return;
    m->clock_tsc_base = clock->tsc_base;
    m->clock_ns_base = (uint64_t)clock->ns_base;
    m->clock_mult = clock->mult;
    m->clock_shift = clock->shift;
}

/* The writer, with the header written and every event type known so far defined. */
static int start_writer(tl_recorder *r)
{
    const tl_recorder_client *client = &r->params.client;
    tracelog_metadata meta;
    client->describe(client->ctx, &meta);
    /* The consumer's copy of the clock: a controller's writer may be made once the traced process holds
       the buffer, which it may have shrunk (the stream's own fields are read under the guard only). */
    describe_clock(tl_consumer_clock(r->consumer), &meta);
    tracelog_error err;
    sigset_t old;
    tl_rec_xfsz_block(&old); /* the header is written here */
    tracelog_status st = tracelog_writer_create(r->params.fd, &meta, &r->params.writer, &r->writer, &err);
    if (st != TRACELOG_OK) {
        tl_rec_xfsz_restore(&old);
        r->writer = NULL;
        return st == TRACELOG_E_NOT_SEEKABLE ? EINVAL : errno_of(st, &err) ? errno_of(st, &err) : EINVAL;
    }
    tl_writer_set_thread_namer(r->writer, name_thread, r);
    client->define_types(client->ctx, r->writer, 1);
    tl_writer_set_type_definer(r->writer, define_new_types, r);
    tl_rec_xfsz_restore(&old);
    return 0;
}

/*
 * The writer, made when the log can say whose it is: at once, but for a
 * controller's child that has not exec'd its program yet, once it has (or
 * joined the stream, or ended), or when force says a write is due. Caller
 * holds the lock. 0 (r->writer exists), EAGAIN (not yet: nothing is to be
 * written), or the error that kept it from being made (every later call
 * gives it).
 */
int tl_rec_writer_ready(tl_recorder *r, int force)
{
    if (r->writer)
        return 0;
    if (r->start_error)
        return r->start_error;
    if (!force && r->params.remote && !tl_remote_identity_known(r->params.remote, NULL))
        return EAGAIN;
    int e = start_writer(r);
    if (e)
        r->start_error = e;
    return e;
}

int tl_recorder_open(tl_recorder **out, tl_stream *s, const tl_recorder_params *p)
{
    tl_recorder *r = calloc(1, sizeof *r);
    if (!r) {
        if (p->client.release)
            p->client.release(p->client.ctx);
        return ENOMEM;
    }
    r->params = *p;
    r->stream = s;
    r->params.remote = p->remote;
    r->end_wake_fd = -1;
    pthread_mutex_init(&r->lock, NULL);
    pthread_mutex_init(&r->status_lock, NULL);
    r->params.fd = fcntl(p->fd, F_DUPFD_CLOEXEC, 3); /* the caller's descriptor is never closed */
    int e = r->params.fd < 0 ? (errno == EMFILE ? EMFILE : EBADF) : 0;
    if (!e && !(r->consumer = tl_consumer_new(s)))
        e = ENOMEM;
    if (!e)
        tl_remote_watch_consumer(r->params.remote, r->consumer, p->inherited);
    if (!e && r->params.remote)
        e = tl_rec_batch_alloc(r);
    if (!e && (!r->params.remote || tl_remote_identity_known(r->params.remote, NULL)))
        e = start_writer(r); /* else made later (writer_ready): its process has not exec'd its program yet */
    if (!e && p->background)
        e = tl_rec_start_flusher(r);
    else if (!e && r->params.remote)
        e = tl_rec_start_end_watcher(r);
    if (e) {
        tracelog_writer_abandon(r->writer);
        free_recorder(r);
        return e;
    }
    *out = r;
    return 0;
}

void tl_recorder_abandon(tl_recorder *r)
{
    tl_rec_stop_flusher(r);
    tl_rec_stop_end_watcher(r);
    tracelog_writer_abandon(r->writer);
    free_recorder(r);
}

int tl_recorder_close(tl_recorder *r)
{
    tl_rec_stop_flusher(r);
    tl_rec_stop_end_watcher(r);
    tl_rec_lock(r);
    sigset_t old;
    tl_rec_xfsz_block(&old); /* the close writes the trailer */
    int e = tl_rec_flush_locked(r, NULL, NULL);
    if (r->writer)
        tl_rec_mark_unfinished_losses(r);
    tracelog_error err;
    tracelog_status st = tracelog_writer_close(r->writer, &err); /* NULL (never made): OK, e says why */
    r->writer = NULL;
    tl_rec_xfsz_restore(&old);
    if (!e)
        e = errno_of(st, &err);
    tl_rec_unlock(r);
    free_recorder(r);
    return e;
}

