/*
 * The payloads of the standard's system events, decoded for dump. One table
 * entry per event id gives the fields that libtracelog records
 * (libtracelog/posix/control.c, log.c; stream/consume.c, stream.c), with
 * the field names of the library's built-in schemas of these events
 * (libtracelog/format/system_schemas.c), which a later step of ptlog will
 * render for every typed event. A payload is decoded only when its event is
 * named as the standard names it and its size is exactly that layout's;
 * otherwise it is printed raw.
 *
 *   posix_trace_error        int error                     the errno of a failed log write
 *   posix_trace_start        trace_event_set_t event_filter the filter in force
 *   posix_trace_stop         int auto                       0: posix_trace_stop(); else full
 *   posix_trace_filter       trace_event_set_t old_event_filter, new_event_filter
 *   posix_trace_overflow, posix_trace_resume, posix_trace_flush_start,
 *   posix_trace_flush_stop   nothing
 *
 * An int is 4 bytes; a trace_event_set_t is a bitmap of event ids in 64-bit
 * words (17 of them with TRACE_USER_EVENT_MAX 1024): bit i of word w is id
 * 64 w + i. Both are read little-endian, as x86-64 and aarch64 write them.
 */
#define _GNU_SOURCE /* strerrorname_np */
#include <string.h>

#include "ptlog.h"

typedef enum sys_kind {
    SYS_ERRNO,      /* int: an errno value */
    SYS_STOP_AUTO,  /* int: 0 MANUAL (posix_trace_stop), otherwise AUTOMATIC (stream or log full) */
    SYS_EVENT_SET   /* trace_event_set_t */
} sys_kind;

typedef struct sys_field {
    const char *name;
    sys_kind kind;
} sys_field;

typedef struct sys_event {
    uint32_t id;
    const char *name;
    size_t nfields;
    sys_field fields[2];
} sys_event;

static const sys_event sys_events[] = {
    {1, "posix_trace_error", 1, {{"error", SYS_ERRNO}}},
    {2, "posix_trace_start", 1, {{"event_filter", SYS_EVENT_SET}}},
    {3, "posix_trace_stop", 1, {{"auto", SYS_STOP_AUTO}}},
    {4, "posix_trace_overflow", 0, {{0}}},
    {5, "posix_trace_resume", 0, {{0}}},
    {6, "posix_trace_filter", 2, {{"old_event_filter", SYS_EVENT_SET}, {"new_event_filter", SYS_EVENT_SET}}},
    {7, "posix_trace_flush_start", 0, {{0}}},
    {8, "posix_trace_flush_stop", 0, {{0}}},
};

#define EVENT_SET_MAX 8192 /* bytes: far more than any TRACE_USER_EVENT_MAX needs */

static const sys_event *sys_event_of(const tracelog_event *ev, const char *name)
{
    for (size_t i = 0; i < sizeof sys_events / sizeof *sys_events; i++)
        if (sys_events[i].id == ev->event_id)
            return name && strcmp(name, sys_events[i].name) == 0 ? &sys_events[i] : NULL;
    return NULL;
}

/* Bytes of each field, or 0 if the payload does not have the event's layout. */
static size_t field_size(const sys_event *e, uint32_t len)
{
    if (e->nfields == 0)
        return 0;
    if (e->fields[0].kind != SYS_EVENT_SET)
        return len == 4 ? 4 : 0;
    size_t each = len / e->nfields;
    return len % e->nfields == 0 && each % 8 == 0 && each > 0 && each <= EVENT_SET_MAX ? each : 0;
}

/* ENOSPC "No space left on device" (the number when it has no name). */
static void put_errno(ptlog_out *out, const unsigned char *p)
{
    int e = (int)(uint32_t)ptlog_load_le(p, 4);
    char text[320];
    const char *name = strerrorname_np(e);
    if (name)
        snprintf(text, sizeof text, "%s \"%s\"", name, strerror(e));
    else
        snprintf(text, sizeof text, "%d \"%s\"", e, strerror(e));
    ptlog_out_puts(out, text);
}

/* [a, b, event#9..event#31]: set ids by name, runs of unnamed ids as ranges. */
static void put_event_set(ptlog_out *out, ptlog_src *src, const unsigned char *p, size_t n,
                          ptlog_name_writer put_name, void *ctx)
{
    uint64_t bits = 8 * (uint64_t)n;
    const char *sep = "";
    ptlog_out_puts(out, "[");
    for (uint64_t id = 0; id < bits; id++) {
        if (!(p[id / 8] >> (id % 8) & 1))
            continue;
        const char *name = src->type_name(src, (uint32_t)id);
        ptlog_out_puts(out, sep);
        sep = ", ";
        put_name(ctx, (uint32_t)id, name);
        if (name)
            continue;
        uint64_t last = id; /* a run of unnamed ids */
        while (last + 1 < bits && (p[(last + 1) / 8] >> ((last + 1) % 8) & 1) &&
               !src->type_name(src, (uint32_t)(last + 1)))
            last++;
        if (last == id)
            continue;
        ptlog_out_puts(out, last == id + 1 ? ", " : "..");
        put_name(ctx, (uint32_t)last, NULL);
        id = last;
    }
    ptlog_out_puts(out, "]");
}

int ptlog_sysevent_format(ptlog_out *out, ptlog_src *src, const tracelog_event *ev, const char *name,
                          ptlog_name_writer put_name, void *ctx)
{
    const sys_event *e = sys_event_of(ev, name);
    size_t size = e ? field_size(e, ev->payload_len) : 0;
    if (!size)
        return 0;
    const unsigned char *p = ev->payload;
    ptlog_out_puts(out, " {");
    for (size_t i = 0; i < e->nfields; i++, p += size) {
        ptlog_out_puts(out, i ? ", " : " ");
        ptlog_out_puts(out, e->fields[i].name);
        ptlog_out_puts(out, " = ");
        switch (e->fields[i].kind) {
        case SYS_ERRNO:
            put_errno(out, p);
            break;
        case SYS_STOP_AUTO:
            ptlog_out_puts(out, ptlog_load_le(p, 4) ? "AUTOMATIC" : "MANUAL");
            break;
        case SYS_EVENT_SET:
            put_event_set(out, src, p, size, put_name, ctx);
            break;
        }
    }
    ptlog_out_puts(out, " }");
    return 1;
}
