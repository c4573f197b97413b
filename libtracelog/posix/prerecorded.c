/* Pre-recorded streams: a completed (or recovered) .ptl log opened for analysis. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/text.h"
#include "posix/internal.h"
#include "posix/process.h"

#define READ_AHEAD_ENV "TRACELOG_READ_AHEAD"

static void attr_from_log(const tracelog_metadata *m, trace_attr_t *a)
{
    posix_trace_attr_init(a);
    tl_copy_text(a->__name, sizeof a->__name, m->trace_name);
    tl_copy_text(a->__genversion, sizeof a->__genversion, m->generation_version);
    a->__create_time = tl_timespec(m->creation_time_ns);
    a->__clock_res = tl_timespec(m->clock_resolution_ns);
    a->__max_data_size = m->max_data_size;
    a->__stream_size = m->stream_min_size;
    a->__log_size = m->log_max_size;
    /* tracelog_policy and the POSIX_TRACE_* policy constants share their values. */
    a->__stream_policy = (int)m->stream_full_policy;
    a->__log_policy = (int)m->log_full_policy;
    a->__inheritance = m->inherited ? POSIX_TRACE_INHERITED : POSIX_TRACE_CLOSE_FOR_CHILD;
}

static int open_log(int file_desc, trace_id_t *trid);

int posix_trace_open(int file_desc, trace_id_t *trid)
{
    pthread_testcancel();
    tl_posix_cancel_off();
    int e = open_log(file_desc, trid);
    tl_posix_cancel_on();
    return e;
}

static int open_log(int file_desc, trace_id_t *trid)
{
    if (!trid)
        return EINVAL;
    tl_posix_process_init(); /* a forked child's handles are its parent's: its pid must be its own */
    int fl = fcntl(file_desc, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_WRONLY)
        return EINVAL; /* the standard lists no EBADF here */
    tl_trace *t = calloc(1, sizeof *t);
    if (!t)
        return ENOMEM;
    t->kind = TL_PRERECORDED;
    tracelog_status st = tracelog_reader_open(file_desc, NULL, &t->pre.reader, NULL);
    int e = st == TRACELOG_OK ? 0 : st == TRACELOG_E_NOMEM ? ENOMEM : EINVAL;
    if (!e) {
        attr_from_log(tracelog_reader_metadata(t->pre.reader), &t->attr);
        tracelog_reader_get_status(t->pre.reader, &t->pre.status);
        /* An opt-in for programs that do not call tracelog_trace_set_read_ahead: without its threads (a pipe,
           none to be had) reading is the same, so a failure here is not the open's */
        (void)tracelog_reader_set_read_ahead(
            t->pre.reader, (int)tl_posix_env_number(READ_AHEAD_ENV, 0, TRACELOG_READ_AHEAD_MAX, 0));
        e = tl_posix_register(t, trid);
    }
    if (e) {
        tracelog_reader_close(t->pre.reader);
        free(t);
    }
    return e;
}

int posix_trace_rewind(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_PRERECORDED, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock);
    tracelog_status st = tracelog_reader_rewind(t->pre.reader);
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    /* A log read from a pipe cannot go back. */
    return st == TRACELOG_OK ? 0 : EINVAL;
}

int posix_trace_close(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_PRERECORDED, &t);
    if (e)
        return e;
    if (tl_posix_unregister(t))
        return EINVAL;
    tracelog_reader_close(t->pre.reader); /* the caller's descriptor stays open */
    free(t);
    tl_posix_cancel_on();
    return 0;
}

int tracelog_trace_set_read_ahead(trace_id_t trid, int threads)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_PRERECORDED, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock); /* no getnext meanwhile: the change joins the threads loading for it */
    tracelog_status st = tracelog_reader_set_read_ahead(t->pre.reader, threads);
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return st == TRACELOG_OK ? 0 : st == TRACELOG_E_NOMEM ? EAGAIN : EINVAL;
}
