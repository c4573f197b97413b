/*
 * Event types of a stream (posix-trace.md §7): the names and ids an active
 * stream knows (the process's name map, names.c) or a pre-recorded one
 * holds (its log's type table), and the type list iteration.
 */
#include <errno.h>

#include "common/text.h"
#include "posix/internal.h"
#include "posix/names.h"
#include "posix/process.h"

/* caller: the program address of the posix_trace_eventid_open call. */
static int eventid_open(const char *restrict event_name, trace_event_id_t *restrict event_id, uint64_t caller);

int posix_trace_eventid_open(const char *restrict event_name, trace_event_id_t *restrict event_id)
{
    tl_posix_cancel_off(); /* the name map's lock is held across files opened */
    int e = eventid_open(event_name, event_id, (uint64_t)(uintptr_t)__builtin_return_address(0));
    tl_posix_cancel_on();
    return e;
}

static int eventid_open(const char *restrict event_name, trace_event_id_t *restrict event_id, uint64_t caller)
{
    tl_posix_process_init(); /* the map is copied or shared by the fork handlers */
    /* An instrumented process: from now on a controller can find it (design note, section 3.2). */
    if (tl_xproc_ensure_ctl() == 0)
        tl_posix_names_share(); /* ... and read our names */
    int e = tl_posix_name_open(event_name, event_id);
    if (!e) /* a controller's filter by name waits for it (tracelog_trace_filter_name) */
        tl_posix_remote_filters(*event_id, 0, caller);
    return e;
}

int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict event_name,
                                  trace_event_id_t *restrict event)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    tl_names *names;
    e = tl_posix_trace_names(t, &names);
    if (!e)
        e = tl_names_open(names, event_name, event);
    tl_posix_trace_names_done(t);
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
    int e = tl_posix_acquire(trid, TL_ANY_KIND, &t);
    if (e)
        return e;
    if (t->kind == TL_PRERECORDED) {
        tl_lock_take(t->read_lock); /* a log read from a pipe grows its type table as getnext reads */
        const char *name = tracelog_reader_event_name(t->pre.reader, event);
        if (name)
            tl_copy_text(event_name, TRACE_EVENT_NAME_MAX + 1, name);
        tl_lock_give(t->read_lock);
        e = name ? 0 : EINVAL;
    } else if (t->active.remote && event == TL_PROCESS_END_EVENT) {
        /* The traced process's end, which the read functions hand out on a controller's stream. */
        tl_copy_text(event_name, TRACE_EVENT_NAME_MAX + 1, TL_PROCESS_END_NAME);
    } else {
        tl_names *names;
        e = tl_posix_trace_names(t, &names);
        if (e == EAGAIN) /* the traced process has opened no name we can see yet */
            e = EINVAL;
        if (!e)
            e = tl_names_name_of(names, event, event_name, TRACE_EVENT_NAME_MAX + 1);
        tl_posix_trace_names_done(t);
    }
    tl_posix_release(t);
    return e;
}

int tl_posix_trace_names(tl_trace *t, tl_names **out)
{
    *out = NULL;
    if (!t->active.remote)
        return 0;
    tl_lock_take(&t->active.names_lock);
    int e = tl_posix_remote_names(t->active.remote, &t->active.remote_names, NULL);
    *out = t->active.remote_names;
    return e;
}

void tl_posix_trace_names_done(tl_trace *t)
{
    if (t->active.remote)
        tl_lock_give(&t->active.names_lock);
}

/* The n-th id of an active stream's type list: system ids, the unnamed user event, then user names. */
static int active_type_at(tl_trace *t, size_t n, trace_event_id_t *id)
{
    if (n < TL_SYSTEM_EVENTS) {
        *id = (trace_event_id_t)(n + 1);
        return 1;
    }
    n -= TL_SYSTEM_EVENTS;
    tl_names *names;
    uint32_t count = tl_posix_trace_names(t, &names) == 0 ? tl_names_count(names) : 0;
    tl_posix_trace_names_done(t);
    if (n <= count) {
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
    int e = tl_posix_acquire(trid, TL_ANY_KIND, &t);
    if (e)
        return e;
    int found;
    tl_lock_take(t->read_lock); /* the position, and a log's type table (getnext grows it from a pipe) */
    if (t->kind == TL_PRERECORDED) {
        uint32_t id;
        found = tracelog_reader_event_type(t->pre.reader, t->typelist_pos, &id, NULL) == TRACELOG_OK;
        if (found)
            *event = id;
    } else {
        found = active_type_at(t, t->typelist_pos, event);
    }
    t->typelist_pos += found;
    tl_lock_give(t->read_lock);
    *unavailable = !found;
    tl_posix_release(t);
    return 0;
}

int posix_trace_eventtypelist_rewind(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ANY_KIND, &t);
    if (e)
        return e;
    tl_lock_take(t->read_lock);
    t->typelist_pos = 0;
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return 0;
}
