/*
 * The event loop every sink runs (dump, json, chrome, ptl, info): a source's
 * events through the selection, in order, with progress.
 *
 * A source whose event types are complete up front (a seekable .ptl log,
 * whose open scan read every table; a merge of such logs) never changes
 * them while events flow, so the loop remembers each id's name and schema
 * instead of asking the source for every event (two searches of its table
 * per event).
 */
#include <stdlib.h>

#include "ptlog.h"

/* Fills id's slot (id < PTLOG_MEMO_IDS); the lookups are inline in ptlog.h. */
void ptlog_src_memo_fill(ptlog_src *s, uint32_t id)
{
    struct ptlog_type_memo *m = s->memo;
    m->name[id] = s->type_name(s, id);
    m->schema[id] = s->type_schema ? s->type_schema(s, id) : NULL;
    m->known[id] = 1;
}

static int run_events(ptlog_src *src, ptlog_select *sel,
                      int (*each)(void *ctx, const tracelog_event *ev, const char *name), void *ctx)
{
    tracelog_event ev;
    int rc = src->next(src, &ev);
    if (rc < 0)
        return -rc;
    if (rc == 0)
        return src->finish(src);
    /* Relative times count from the log's first event. */
    ptlog_select_resolve(sel, ev.timestamp_ns);
    if (sel->have_end && src->end_time) /* the chunks past --end are not read */
        src->end_time(src, sel->end_ns);
    if (sel->have_begin && ev.timestamp_ns < sel->begin_ns && src->seek_time &&
        src->seek_time(src, sel->begin_ns) == 0) {
        rc = src->next(src, &ev);
        if (rc < 0)
            return -rc;
    }
    ptlog_progress prog;
    ptlog_progress_init(&prog, src->total_events);
    uint64_t done = 0, kept = 0;
    uint64_t limit = sel->has_limit ? sel->limit : UINT64_MAX;
    int every = ptlog_select_keeps_all(sel); /* --where aside: no test per event */
    int code = 0;
    while (rc == 1 && kept < limit) {
        const char *name = ptlog_src_type_name(src, ev.event_id);
        int keep = ptlog_select_keep(sel, every, src, &ev, name);
        if (keep < 0) {
            code = ptlog_nomem();
            break;
        }
        if (keep) {
            sel->read = done; /* the events read before this one: how selective the selection is (par.c) */
            code = each(ctx, &ev, name);
            if (code)
                break;
            kept++;
        }
        if ((++done & 0xffff) == 0)
            ptlog_progress_update(&prog, done);
        rc = src->next(src, &ev);
    }
    ptlog_progress_end(&prog);
    if (code)
        return code;
    if (rc < 0)
        return -rc;
    return src->finish(src);
}

int ptlog_src_events(ptlog_src *src, ptlog_select *sel,
                     int (*each)(void *ctx, const tracelog_event *ev, const char *name), void *ctx)
{
    /* Without memory for the memo the source is asked every time: slower, same output. */
    /* --where against the log's schemas: before any output when the types are known up front, else once
       they all are (a misspelt field or value would otherwise select nothing, silently). */
    int where_bad = 0;
    if (sel->where && src->upfront) {
        where_bad = ptlog_where_check(sel->where, src);
        /* Damage may have taken the types that have the field: read on, so that it is reported. */
        if (where_bad && !src->damaged)
            return where_bad;
    }
    if (src->upfront && !src->memo)
        src->memo = calloc(1, sizeof *src->memo);
    int rc = run_events(src, sel, each, ctx);
    free(src->memo);
    src->memo = NULL;
    if (where_bad) /* said above; what was read is the damaged log's */
        return rc > PTLOG_EXIT_LOSS ? rc : PTLOG_EXIT_LOSS;
    if (sel->where && !src->upfront && rc <= PTLOG_EXIT_LOSS) {
        int bad = ptlog_where_check(sel->where, src);
        if (bad)
            return bad;
    }
    return rc;
}
