/* Stream life cycle, status, filters and event-type queries (controller side). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix/internal.h"

#define ACTIVE_KINDS (1u << TL_ACTIVE | 1u << TL_ACTIVE_LOG)
#define ANY_KIND (ACTIVE_KINDS | 1u << TL_PRERECORDED)
#define CALLER ((uint64_t)(uintptr_t)__builtin_extract_return_addr(__builtin_return_address(0)))

void tl_posix_set_from_shm(const tl_shm *s, trace_event_set_t *set)
{
    for (int w = 0; w < TL_SET_WORDS; w++)
        set->__bits[w] = atomic_load(&((tl_shm *)s)->filter[w]);
}

static void record_system(tl_trace *t, trace_event_id_t id, const void *data, size_t len, uint64_t caller)
{
    tl_stream_record(t->shm, t->shm->nlanes, id, data, (uint32_t)len, POSIX_TRACE_NOT_TRUNCATED,
                           caller, (uint64_t)pthread_self(), (uint32_t)tl_posix_pid(), tl_posix_kernel_tid());
}

static int check_target(pid_t pid)
{
    if (pid == 0 || pid == getpid())
        return 0;
    if (kill(pid, 0) != 0)
        return errno == ESRCH ? ESRCH : EPERM;
    /* Tracing another process needs it to share its stream with us: not supported yet. */
    return EPERM;
}

/* Fills t->attr from the caller's attributes with the choices left open resolved. */
static int resolve_attr(const trace_attr_t *in, int with_log, trace_attr_t *out)
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

static void free_trace(tl_trace *t)
{
    if (t->shm) {
        tl_consumer_free(&t->consumer);
        tl_stream_destroy(t->shm);
    }
    if (t->log_fd > 0)
        close(t->log_fd);
    pthread_mutex_destroy(&t->read_lock);
    pthread_mutex_destroy(&t->log_lock);
    pthread_mutex_destroy(&t->status_lock);
    free(t);
}

static int create(pid_t pid, const trace_attr_t *attr, int with_log, int fd, trace_id_t *trid)
{
    if (!trid)
        return EINVAL;
    tl_trace *t = calloc(1, sizeof *t);
    if (!t)
        return ENOMEM;
    pthread_mutex_init(&t->read_lock, NULL);
    pthread_mutex_init(&t->log_lock, NULL);
    pthread_mutex_init(&t->status_lock, NULL);
    t->kind = with_log ? TL_ACTIVE_LOG : TL_ACTIVE;
    int e = check_target(pid);
    if (!e)
        e = resolve_attr(attr, with_log, &t->attr);
    if (!e && with_log)
        e = check_log_fd(fd, t->attr.__log_policy);
    if (!e) {
        tl_stream_params p = {(uint32_t)t->attr.__stream_policy, t->attr.__stream_size,
                              (uint32_t)t->attr.__max_data_size, 0};
        t->shm = tl_stream_create(&p);
        e = t->shm ? 0 : ENOMEM;
        if (t->shm) /* what each thread's buffer actually holds (POSIX: report the size used) */
            t->attr.__stream_size = t->shm->lane_size;
        if (!e && tl_consumer_init(&t->consumer, t->shm))
            e = ENOMEM;
    }
    if (!e && with_log)
        e = tl_posix_log_start(t, fd);
    if (!e)
        e = tl_posix_register(t, trid);
    if (e) {
        if (t->writer)
            tl_posix_log_abandon(t);
        free_trace(t);
        return e;
    }
    tl_posix_publish(t->slot, t->shm);
    return 0;
}

int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr, trace_id_t *restrict trid)
{
    return create(pid, attr, 0, -1, trid);
}

int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int file_desc,
                               trace_id_t *restrict trid)
{
    return create(pid, attr, 1, file_desc, trid);
}

int posix_trace_start(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_shm *s = t->shm;
    pthread_mutex_lock(&t->read_lock); /* serialises start/stop/filter changes */
    if (atomic_load(&s->state) == TL_SUSPENDED && !atomic_load(&s->autostopped)) {
        trace_event_set_t filter;
        tl_posix_set_from_shm(s, &filter);
        record_system(t, POSIX_TRACE_START, &filter, sizeof filter, CALLER);
        atomic_store(&s->state, TL_RUNNING);
    }
    pthread_mutex_unlock(&t->read_lock);
    tl_posix_release(t);
    return 0;
}

static void stop_stream(tl_trace *t, uint64_t caller)
{
    tl_shm *s = t->shm;
    uint32_t running = TL_RUNNING;
    if (atomic_compare_exchange_strong(&s->state, &running, TL_SUSPENDED)) {
        int automatic = 0;
        record_system(t, POSIX_TRACE_STOP, &automatic, sizeof automatic, caller);
    }
}

int posix_trace_stop(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    pthread_mutex_lock(&t->read_lock);
    stop_stream(t, CALLER);
    pthread_mutex_unlock(&t->read_lock);
    tl_posix_release(t);
    return 0;
}

int posix_trace_clear(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    pthread_mutex_lock(&t->read_lock);
    tl_stream_clear(t->shm);
    t->consumer.qhead = t->consumer.qlen = 0;
    t->consumer.batch = 0;
    t->overruns_reported = tl_stream_overruns(t->shm);
    pthread_mutex_unlock(&t->read_lock);
    /* The log is left as it is: POSIX leaves APPEND unspecified, and what was
       already flushed is never destroyed by tracelog (format-spec: durability). */
    tl_posix_release(t);
    return 0;
}

int posix_trace_shutdown(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_posix_unregister(t); /* wakes blocked readers (EINVAL) and waits for them */
    stop_stream(t, CALLER);
    if (t->kind == TL_ACTIVE_LOG)
        e = tl_posix_log_finish(t);
    free_trace(t);
    return e;
}

int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr)
{
    tl_trace *t;
    if (!attr)
        return EINVAL;
    int e = tl_posix_acquire(trid, ANY_KIND, &t);
    if (e)
        return e;
    *attr = t->attr;
    tl_posix_release(t);
    return 0;
}

/* A LOOP log that overwrote events has used up its space: it is full from then on, like a LOOP stream. */
static int log_full_status(const tl_trace *t, const tracelog_log_status *ls)
{
    int wrapped = t->attr.__log_policy == POSIX_TRACE_LOOP && ls->log_overruns > 0;
    return ls->log_full || wrapped ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
}

static void prerecorded_status(tl_trace *t, struct posix_trace_status_info *si)
{
    const tracelog_log_status *ls = &t->log_status;
    si->posix_stream_status = POSIX_TRACE_SUSPENDED;
    si->posix_stream_full_status = POSIX_TRACE_NOT_FULL;
    si->posix_stream_overrun_status = ls->stream_overruns ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    si->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
    si->posix_stream_flush_error = ls->flush_error;
    si->posix_log_overrun_status = ls->log_overruns ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    si->posix_log_full_status = log_full_status(t, ls);
}

int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *si)
{
    tl_trace *t;
    if (!si)
        return EINVAL;
    int e = tl_posix_acquire(trid, ANY_KIND, &t);
    if (e)
        return e;
    memset(si, 0, sizeof *si);
    if (t->kind == TL_PRERECORDED) {
        prerecorded_status(t, si); /* a completed log: nothing is reset */
        tl_posix_release(t);
        return 0;
    }
    tl_shm *s = t->shm;
    /* status_lock, not log_lock: a flush in progress must not make us wait
       (FLUSHING would never be seen). */
    pthread_mutex_lock(&t->status_lock);
    si->posix_stream_status = atomic_load(&s->state) == TL_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
    si->posix_stream_full_status = atomic_load(&s->full) ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
    uint64_t overruns = tl_stream_overruns(s);
    si->posix_stream_overrun_status = overruns > t->overruns_reported ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
    t->overruns_reported = overruns;
    si->posix_stream_flush_status = atomic_load(&t->flushing) ? POSIX_TRACE_FLUSHING : POSIX_TRACE_NOT_FLUSHING;
    if (t->kind == TL_ACTIVE_LOG) {
        const tracelog_log_status *ls = &t->log_snapshot;
        si->posix_stream_flush_error = t->flush_error;
        t->flush_error = 0;
        si->posix_log_overrun_status = ls->log_overruns > t->log_overruns_reported ? POSIX_TRACE_OVERRUN
                                                                                    : POSIX_TRACE_NO_OVERRUN;
        t->log_overruns_reported = ls->log_overruns;
        si->posix_log_full_status = log_full_status(t, ls);
    }
    pthread_mutex_unlock(&t->status_lock);
    tl_posix_release(t);
    return 0;
}

int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
    tl_trace *t;
    if (!set)
        return EINVAL;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_posix_set_from_shm(t->shm, set);
    tl_posix_release(t);
    return 0;
}

int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
    tl_trace *t;
    if (!set || how < POSIX_TRACE_SET_EVENTSET || how > POSIX_TRACE_SUB_EVENTSET)
        return EINVAL;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_shm *s = t->shm;
    pthread_mutex_lock(&t->read_lock);
    trace_event_set_t both[2]; /* old, new: the data of POSIX_TRACE_FILTER */
    tl_posix_set_from_shm(s, &both[0]);
    for (int w = 0; w < TL_SET_WORDS; w++) {
        uint64_t old = both[0].__bits[w], arg = set->__bits[w];
        both[1].__bits[w] = how == POSIX_TRACE_SET_EVENTSET ? arg
                            : how == POSIX_TRACE_ADD_EVENTSET ? old | arg : old & ~arg;
    }
    for (int w = 0; w < TL_SET_WORDS; w++)
        atomic_store(&s->filter[w], both[1].__bits[w]);
    if (atomic_load(&s->state) == TL_RUNNING)
        record_system(t, POSIX_TRACE_FILTER, both, sizeof both, CALLER);
    pthread_mutex_unlock(&t->read_lock);
    tl_posix_release(t);
    return 0;
}

int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict event_name,
                                  trace_event_id_t *restrict event)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, ACTIVE_KINDS, &t);
    if (e)
        return e;
    e = tl_posix_name_open(event_name, event);
    tl_posix_release(t);
    return e;
}

int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t event1, trace_event_id_t event2)
{
    (void)trid; /* ids are plain numbers, equal in every stream that knows them */
    return event1 == event2;
}

int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t event, char *event_name)
{
    tl_trace *t;
    if (!event_name)
        return EINVAL;
    int e = tl_posix_acquire(trid, ANY_KIND, &t);
    if (e)
        return e;
    if (t->kind == TL_PRERECORDED) {
        const char *name = tracelog_reader_event_name(t->reader, event);
        if (name)
            snprintf(event_name, TRACE_EVENT_NAME_MAX, "%s", name);
        e = name ? 0 : EINVAL;
    } else {
        e = tl_posix_name_of(event, event_name, TRACE_EVENT_NAME_MAX);
    }
    tl_posix_release(t);
    return e;
}

/* The n-th id of an active stream's type list: system ids, the unnamed user event, then user names. */
static int active_type_at(size_t n, trace_event_id_t *id)
{
    if (n < TL_SYSTEM_EVENTS) {
        *id = (trace_event_id_t)(n + 1);
        return 1;
    }
    n -= TL_SYSTEM_EVENTS;
    if (n <= tl_posix_name_count()) {
        *id = POSIX_TRACE_UNNAMED_USEREVENT + (trace_event_id_t)n;
        return 1;
    }
    return 0;
}

int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *restrict event,
                                         int *restrict unavailable)
{
    tl_trace *t;
    if (!event || !unavailable)
        return EINVAL;
    int e = tl_posix_acquire(trid, ANY_KIND, &t);
    if (e)
        return e;
    int found;
    if (t->kind == TL_PRERECORDED) {
        uint32_t id;
        found = tracelog_reader_event_type(t->reader, t->typelist_pos, &id, NULL) == TRACELOG_OK;
        if (found)
            *event = id;
    } else {
        found = active_type_at(t->typelist_pos, event);
    }
    t->typelist_pos += found;
    *unavailable = !found;
    tl_posix_release(t);
    return 0;
}

int posix_trace_eventtypelist_rewind(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, ANY_KIND, &t);
    if (e)
        return e;
    t->typelist_pos = 0;
    tl_posix_release(t);
    return 0;
}
