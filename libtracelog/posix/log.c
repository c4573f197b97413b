/*
 * Streams with a log: moving events from the stream to the log writer, by an
 * explicit posix_trace_flush, by the background flusher of the FLUSH policy,
 * and at shutdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "posix/internal.h"

#define FLUSHER_PERIOD_NS 2000000 /* the flusher drains the stream this often */
#define CRASH_LOCK_WAIT_MS 500    /* the crash handler waits this long for another thread's flush */

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

static tracelog_policy policy_of(int posix_policy)
{
    switch (posix_policy) {
    case POSIX_TRACE_LOOP: return TRACELOG_POLICY_LOOP;
    case POSIX_TRACE_UNTIL_FULL: return TRACELOG_POLICY_UNTIL_FULL;
    case POSIX_TRACE_FLUSH: return TRACELOG_POLICY_FLUSH;
    default: return TRACELOG_POLICY_APPEND;
    }
}

static void fill_metadata(const tl_trace *t, tracelog_metadata *m)
{
    const trace_attr_t *a = &t->attr;
    tracelog_metadata_init(m);
    snprintf(m->trace_name, sizeof m->trace_name, "%s", a->__name);
    snprintf(m->generation_version, sizeof m->generation_version, "%s", a->__genversion);
    m->creation_time_ns = (uint64_t)a->__create_time.tv_sec * 1000000000u + (uint64_t)a->__create_time.tv_nsec;
    snprintf(m->clock_source, sizeof m->clock_source, "CLOCK_MONOTONIC+offset");
    m->clock_resolution_ns = (uint64_t)a->__clock_res.tv_sec * 1000000000u + (uint64_t)a->__clock_res.tv_nsec;
    m->max_data_size = a->__max_data_size;
    m->stream_min_size = a->__stream_size;
    m->log_max_size = a->__log_size;
    m->stream_full_policy = policy_of(a->__stream_policy);
    m->log_full_policy = policy_of(a->__log_policy);
    m->inherited = a->__inheritance == POSIX_TRACE_INHERITED;
}

/* Names registered since the last drain, so that the log names every event it holds. */
static void log_new_names(tl_trace *t)
{
    uint32_t n = tl_posix_name_count();
    char name[TRACE_EVENT_NAME_MAX];
    for (; t->names_logged < n; t->names_logged++) {
        trace_event_id_t id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + t->names_logged;
        if (tl_posix_name_of(id, name, sizeof name) == 0)
            tracelog_writer_define_event(t->writer, id, name);
    }
}

/*
 * A write error stops the log for good (the writer's errors are sticky: every
 * later flush fails the same way), so it is reported once: in flush_error
 * and by one POSIX_TRACE_ERROR event. Reporting each later failure again
 * would make the background flusher feed the dead log an ERROR event every
 * period, and flush_error could never be read back to 0.
 */
static void note_error(tl_trace *t, int e)
{
    if (t->log_error)
        return;
    t->log_error = e;
    pthread_mutex_lock(&t->status_lock);
    if (!t->flush_error)
        t->flush_error = e;
    pthread_mutex_unlock(&t->status_lock);
    tl_stream_record(t->shm, t->shm->nlanes, POSIX_TRACE_ERROR, &e, sizeof e,
                           POSIX_TRACE_NOT_TRUNCATED, 0, 0, 0, 0);
}

/* The errno behind a writer status (0 for success and for a full log, which the log status reports). */
static int writer_errno(tl_trace *t, tracelog_status st)
{
    if (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL)
        return 0;
    tracelog_error err;
    tracelog_writer_last_error(t->writer, &err);
    return errno_of(st, &err);
}

void tl_posix_log_lock(tl_trace *t)
{
    pthread_mutex_lock(&t->log_lock);
    atomic_store_explicit(&t->log_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
}

void tl_posix_log_unlock(tl_trace *t)
{
    atomic_store_explicit(&t->log_owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&t->log_lock);
}

/*
 * Moves the stream's events to the writer, up to the first one recorded
 * after `until` (UINT64_MAX: all of them). Caller holds log_lock. Returns an
 * errno or 0.
 */
static int drain(tl_trace *t, uint64_t until)
{
    log_new_names(t);
    int e = 0;
    tl_out_event ev;
    while (tl_consumer_take_wait(&t->consumer, &ev) == TL_TAKE_EVENT) {
        tracelog_event out = {.timestamp_ns = ev.ts,
                              .event_id = ev.event_id,
                              .pid = ev.pid,
                              .kernel_tid = ev.ktid,
                              .tid = ev.tid,
                              .address = ev.addr,
                              .truncation = ev.truncation,
                              .payload_len = ev.len,
                              .payload = ev.data};
        tracelog_status st = tracelog_writer_append(t->writer, &out);
        if (st == TRACELOG_E_LOG_FULL && !t->log_stop_written) {
            /* An UNTIL_FULL log ends with POSIX_TRACE_STOP (auto != 0) where it filled up. */
            int automatic = 1;
            tracelog_event stop = {.timestamp_ns = ev.ts,
                                   .event_id = POSIX_TRACE_STOP,
                                   .payload_len = sizeof automatic,
                                   .payload = &automatic};
            tracelog_writer_append_final(t->writer, &stop);
            t->log_stop_written = 1;
        }
        if (!e)
            e = writer_errno(t, st);
        t->events_flushed++;
        if (ev.ts > until)
            break;
    }
    return e;
}

static void update_status(tl_trace *t)
{
    tracelog_log_status st = {0};
    st.events_recorded = t->consumer.delivered;
    st.stream_overruns = tl_stream_overruns(t->shm);
    pthread_mutex_lock(&t->status_lock);
    st.flush_error = t->flush_error;
    pthread_mutex_unlock(&t->status_lock);
    tracelog_writer_set_status(t->writer, &st);
}

/* Lets posix_trace_get_status answer without waiting for a flush in progress. Caller holds log_lock. */
static void publish_status(tl_trace *t)
{
    tracelog_log_status ls;
    tracelog_writer_get_status(t->writer, &ls);
    pthread_mutex_lock(&t->status_lock);
    t->log_snapshot = ls;
    pthread_mutex_unlock(&t->status_lock);
}

/*
 * Every write to the log happens with SIGXFSZ blocked in the writing thread,
 * so exceeding RLIMIT_FSIZE gives EFBIG instead of killing the process; the
 * SIGXFSZ our own write raised is then discarded. Calls nest.
 */
static void xfsz_block(sigset_t *old)
{
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, old);
}

static void xfsz_restore(const sigset_t *old)
{
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&xfsz, NULL, &zero) > 0)
        ; /* discard the SIGXFSZ our own write raised */
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Writes the status and the partial chunk out. Caller holds log_lock. */
static int write_out(tl_trace *t)
{
    update_status(t);
    t->written_at = t->consumer.delivered;
    return writer_errno(t, tracelog_writer_flush(t->writer));
}

static int flush_locked(tl_trace *t, int explicit_call)
{
    sigset_t old;
    xfsz_block(&old);
    atomic_store(&t->flushing, 1);
    if (explicit_call)
        tl_stream_record(t->shm, t->shm->nlanes, POSIX_TRACE_FLUSH_START, NULL, 0, 0, 0,
                               (uint64_t)pthread_self(), (uint32_t)tl_posix_pid(), tl_posix_kernel_tid());
    int e = drain(t, UINT64_MAX);
    int we = write_out(t);
    if (!e)
        e = we;
    if (e)
        note_error(t, e);
    publish_status(t);
    atomic_store(&t->flushing, 0);
    if (explicit_call) /* recorded after the flush: it goes out with the next one */
        tl_stream_record(t->shm, t->shm->nlanes, POSIX_TRACE_FLUSH_STOP, NULL, 0, 0, 0,
                               (uint64_t)pthread_self(), (uint32_t)tl_posix_pid(), tl_posix_kernel_tid());
    xfsz_restore(&old);
    return e;
}

int tl_posix_log_flush(tl_trace *t, int explicit_call)
{
    tl_posix_log_lock(t);
    int e = flush_locked(t, explicit_call);
    tl_posix_log_unlock(t);
    return e;
}

/*
 * log_lock for the crash handler: never one its own thread holds (it crashed
 * in the middle of writing: the writer is in no state to go on), and for at
 * most CRASH_LOCK_WAIT_MS from another thread.
 */
static int crash_lock(tl_trace *t)
{
    if (atomic_load_explicit(&t->log_owner, memory_order_relaxed) == (uintptr_t)pthread_self())
        return 0;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < CRASH_LOCK_WAIT_MS; i++) {
        if (pthread_mutex_trylock(&t->log_lock) == 0) {
            atomic_store_explicit(&t->log_owner, (uintptr_t)pthread_self(), memory_order_relaxed);
            return 1;
        }
        nanosleep(&ms, NULL);
    }
    return 0;
}

void tl_posix_log_crash_flush(tl_trace *t)
{
    if (!t->writer || !crash_lock(t))
        return;
    sigset_t old;
    xfsz_block(&old);
    /* Other threads may go on recording: what they record after the crash is not waited for. */
    int e = drain(t, tl_stream_now(t->shm));
    int we = write_out(t);
    if (e || we)
        note_error(t, e ? e : we);
    xfsz_restore(&old);
    tl_posix_log_unlock(t);
}

static void *flusher_main(void *arg)
{
    tl_trace *t = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL); /* signals are the application's business */
    uint64_t last_write = tl_clock_mono_ns();
    while (!atomic_load(&t->flusher_stop)) {
        uint32_t seq = atomic_load(&t->shm->flusher_seq);
        struct timespec period = {0, FLUSHER_PERIOD_NS};
        atomic_store(&t->shm->flusher_sleeping, 1);
        syscall(SYS_futex, &t->shm->flusher_seq, FUTEX_WAIT, seq, &period, NULL, 0);
        atomic_store(&t->shm->flusher_sleeping, 0);
        tl_posix_log_lock(t);
        atomic_store(&t->flushing, 1); /* an automatic flush of the FLUSH policy */
        int e = drain(t, UINT64_MAX);
        uint64_t now = tl_clock_mono_ns();
        if (now - last_write >= t->flush_interval_ns) {
            /* Bounds what an end without handler (_exit, SIGKILL) loses to about one interval;
               an idle stream writes nothing. */
            int we = t->consumer.delivered != t->written_at ? write_out(t) : 0;
            if (!e)
                e = we;
            last_write = now;
        }
        if (e)
            note_error(t, e);
        publish_status(t);
        atomic_store(&t->flushing, 0);
        tl_posix_log_unlock(t);
    }
    return NULL;
}

int tl_posix_log_start(tl_trace *t, int fd)
{
    t->log_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3); /* the caller's descriptor is never closed */
    if (t->log_fd < 0)
        return errno == EMFILE ? EMFILE : EBADF;
    tracelog_metadata meta;
    fill_metadata(t, &meta);
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = policy_of(t->attr.__log_policy);
    opt.log_max_size = t->attr.__log_size ? t->attr.__log_size : 1;
    opt.durable_size = 256u << 10; /* room for TRACE_USER_EVENT_MAX names of the longest length */
    tracelog_error err;
    sigset_t old;
    xfsz_block(&old); /* the header is written here */
    tracelog_status st = tracelog_writer_create(t->log_fd, &meta, &opt, &t->writer, &err);
    if (st != TRACELOG_OK) {
        xfsz_restore(&old);
        return st == TRACELOG_E_NOT_SEEKABLE ? EINVAL : errno_of(st, &err) ? errno_of(st, &err) : EINVAL;
    }
    char name[TRACE_EVENT_NAME_MAX];
    for (trace_event_id_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++)
        tracelog_writer_define_event(t->writer, id, tl_posix_system_name(id));
    tl_posix_name_of(POSIX_TRACE_UNNAMED_USEREVENT, name, sizeof name);
    tracelog_writer_define_event(t->writer, POSIX_TRACE_UNNAMED_USEREVENT, name);
    log_new_names(t);
    xfsz_restore(&old);
    t->flush_interval_ns = (uint64_t)t->attr.__flush_interval_ms * 1000000u;
    if (t->attr.__stream_policy == POSIX_TRACE_FLUSH) {
        if (pthread_create(&t->flusher, NULL, flusher_main, t) != 0) {
            tracelog_writer_abandon(t->writer);
            t->writer = NULL;
            return EAGAIN;
        }
        t->flusher_running = 1;
    }
    tl_posix_crash_watch(t);
    return 0;
}

static void stop_flusher(tl_trace *t)
{
    if (!t->flusher_running)
        return;
    atomic_store(&t->flusher_stop, 1);
    atomic_fetch_add(&t->shm->flusher_seq, 1);
    syscall(SYS_futex, &t->shm->flusher_seq, FUTEX_WAKE, 1, NULL, NULL, 0);
    pthread_join(t->flusher, NULL);
    t->flusher_running = 0;
}

void tl_posix_log_abandon(tl_trace *t)
{
    tl_posix_crash_unwatch(t);
    stop_flusher(t);
    tracelog_writer_abandon(t->writer);
    t->writer = NULL;
}

/*
 * FLUSH losses are marked by the next event recorded in their lane. Losses
 * with no event after them (the producer stopped) are marked here, at the
 * end: an OVERFLOW with the first lost event's timestamp, and no RESUME.
 */
static void mark_unfinished_losses(tl_trace *t)
{
    tl_shm *s = t->shm;
    uint64_t marked = 0;
    for (uint32_t i = 0; i <= s->nlanes; i++) {
        tl_lane *l = &tl_lanes(s)[i];
        if (!atomic_exchange(&l->lost, 0))
            continue;
        tracelog_event overflow = {.timestamp_ns = atomic_load(&l->lost_first_ts), .event_id = POSIX_TRACE_OVERFLOW};
        marked += tracelog_writer_append(t->writer, &overflow) == TRACELOG_OK;
    }
    if (!marked)
        return;
    /* Recorded, like the markers the consumer delivers: events_written never exceeds events_recorded. */
    tracelog_log_status st;
    tracelog_writer_get_status(t->writer, &st);
    st.events_recorded += marked;
    tracelog_writer_set_status(t->writer, &st);
}

int tl_posix_log_finish(tl_trace *t)
{
    tl_posix_crash_unwatch(t);
    stop_flusher(t);
    tl_posix_log_lock(t);
    sigset_t old;
    xfsz_block(&old); /* the close writes the trailer */
    int e = flush_locked(t, 0);
    mark_unfinished_losses(t);
    tracelog_error err;
    tracelog_status st = tracelog_writer_close(t->writer, &err);
    t->writer = NULL;
    xfsz_restore(&old);
    if (!e)
        e = errno_of(st, &err);
    tl_posix_log_unlock(t);
    return e;
}

int posix_trace_flush(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_ACTIVE_LOG, &t);
    if (e)
        return e;
    e = tl_posix_log_flush(t, 1);
    tl_posix_release(t);
    return e;
}
