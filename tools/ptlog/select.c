/*
 * Event selection shared by dump, convert and filter: --event GLOB
 * (repeatable, fnmatch on the name), --pid, --tid (repeatable; a pthread_t
 * or a kernel thread id), --begin
 * (inclusive), --end (exclusive), --no-system, --limit, --where (where.c). Options of one kind
 * are alternatives (OR); different kinds must all match (AND).
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

static int push(void **v, size_t *n, size_t size, const void *item)
{
    void *p = realloc(*v, (*n + 1) * size);
    if (!p)
        return -1;
    memcpy((char *)p + *n * size, item, size);
    *v = p;
    (*n)++;
    return 0;
}

static int parse_u64(const char *s, uint64_t *v)
{
    char *end;
    errno = 0;
    int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
    if (*s == '-' || *s == '+' || *s == 0)
        return -1;
    unsigned long long x = strtoull(s, &end, base);
    if (errno || *end)
        return -1;
    *v = x;
    return 0;
}

int ptlog_select_option(ptlog_select *s, int opt, const char *arg)
{
    uint64_t v;
    switch (opt) {
    case PTLOG_OPT_EVENT: {
        char *copy = strdup(arg);
        if (!copy || push((void **)&s->globs, &s->nglobs, sizeof copy, &copy)) {
            free(copy);
            ptlog_nomem();
            return -1;
        }
        return 1;
    }
    case PTLOG_OPT_PID: {
        if (parse_u64(arg, &v) || v > UINT32_MAX) {
            ptlog_msg(NULL, "--pid: '%s' is not a process id", arg);
            return -1;
        }
        uint32_t pid = (uint32_t)v;
        if (push((void **)&s->pids, &s->npids, sizeof pid, &pid))
            return ptlog_nomem(), -1;
        return 1;
    }
    case PTLOG_OPT_TID:
        if (parse_u64(arg, &v)) {
            ptlog_msg(NULL, "--tid: '%s' is not a thread id (decimal or 0x hex)", arg);
            return -1;
        }
        if (push((void **)&s->tids, &s->ntids, sizeof v, &v))
            return ptlog_nomem(), -1;
        return 1;
    case PTLOG_OPT_BEGIN:
    case PTLOG_OPT_END: {
        ptlog_timearg *t = opt == PTLOG_OPT_BEGIN ? &s->begin : &s->end;
        if (ptlog_parse_time(arg, t)) {
            ptlog_msg(NULL, "%s: '%s' is not a time (use 2024-05-01T12:00:00.5Z, +1.5s, +250ms or "
                      "nanoseconds since the epoch)", opt == PTLOG_OPT_BEGIN ? "--begin" : "--end", arg);
            return -1;
        }
        return 1;
    }
    case PTLOG_OPT_LIMIT:
        if (parse_u64(arg, &v)) {
            ptlog_msg(NULL, "--limit: '%s' is not a count", arg);
            return -1;
        }
        s->limit = v;
        s->has_limit = 1;
        return 1;
    case PTLOG_OPT_NO_SYSTEM:
        s->no_system = 1;
        return 1;
    case PTLOG_OPT_WHERE:
        if (s->where) {
            ptlog_msg(NULL, "--where: given twice (join the conditions with &&)");
            return -1;
        }
        return ptlog_where_parse(arg, &s->where) ? -1 : 1;
    }
    return 0;
}

void ptlog_select_resolve(ptlog_select *s, uint64_t origin)
{
    if (s->resolved) /* a reading continued elsewhere (parts.c) keeps the log's first event */
        return;
    s->resolved = 1;
    s->origin = origin;
    if (s->begin.set) {
        s->have_begin = 1;
        s->begin_ns = s->begin.relative ? origin + s->begin.ns : s->begin.ns;
        if (s->begin.relative && s->begin_ns < origin)
            s->begin_ns = UINT64_MAX; /* overflow: nothing can be selected */
    }
    if (s->end.set) {
        s->have_end = 1;
        s->end_ns = s->end.relative ? origin + s->end.ns : s->end.ns;
        if (s->end.relative && s->end_ns < origin)
            s->end_ns = UINT64_MAX;
    }
}

static int name_selected(const ptlog_select *s, uint32_t id, const char *name)
{
    char unknown[32];
    if (!name) {
        memcpy(unknown, "event#", 6);
        unknown[6 + ptlog_fmt_u64(id, unknown + 6)] = 0;
    } else if (s->no_system && strncmp(name, "posix_trace_", 12) == 0) {
        return 0;
    }
    if (s->nglobs == 0)
        return 1;
    for (size_t i = 0; i < s->nglobs; i++)
        if (fnmatch(s->globs[i], name ? name : unknown, 0) == 0)
            return 1;
    return 0;
}

int ptlog_select_event(ptlog_select *s, const tracelog_event *ev, const char *name)
{
    if (s->npids) {
        size_t i = 0;
        while (i < s->npids && s->pids[i] != ev->pid)
            i++;
        if (i == s->npids)
            return 0;
    }
    if (s->ntids) {
        size_t i = 0;
        /* the pthread_t, or the kernel thread id (as dump shows it after "tid", and top, perf and gdb) */
        while (i < s->ntids && s->tids[i] != ev->tid && (!ev->kernel_tid || s->tids[i] != ev->kernel_tid))
            i++;
        if (i == s->ntids)
            return 0;
    }
    if (s->have_begin && ev->timestamp_ns < s->begin_ns)
        return 0;
    if (s->have_end && ev->timestamp_ns >= s->end_ns)
        return 0;
    if (s->nglobs == 0 && !s->no_system)
        return 1;
    uint32_t id = ev->event_id;
    if (id < 4096) {
        /* The verdict holds as long as the reader names the id the same way. */
        if (s->verdict[id] && s->verdict_name[id] == name)
            return s->verdict[id] == 1;
        int keep = name_selected(s, id, name);
        s->verdict[id] = keep ? 1 : 2;
        s->verdict_name[id] = name;
        return keep;
    }
    return name_selected(s, id, name);
}

int ptlog_select_keeps_all(const ptlog_select *s)
{
    return !s->npids && !s->ntids && !s->have_begin && !s->have_end && !s->nglobs && !s->no_system;
}

int ptlog_select_is_trivial(const ptlog_select *s)
{
    return !s->nglobs && !s->npids && !s->ntids && !s->no_system && !s->begin.set && !s->end.set &&
           !s->has_limit && !s->where;
}

void ptlog_select_free(ptlog_select *s)
{
    for (size_t i = 0; i < s->nglobs; i++)
        free(s->globs[i]);
    free(s->globs);
    free(s->pids);
    free(s->tids);
    ptlog_where_free(s->where);
    s->where = NULL;
    s->globs = NULL;
    s->pids = NULL;
    s->tids = NULL;
    s->nglobs = s->npids = s->ntids = 0;
}
