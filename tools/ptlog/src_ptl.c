/* Event source over a .ptl log (the library's reader). */
#include <stdlib.h>
#include <string.h>

#include "live.h"
#include "ptlog.h"

typedef struct ptl_src {
    ptlog_src base;
    ptlog_in *in;
    int own_in; /* 0 for a clone: the source it was made from keeps in */
    tracelog_reader *r;
} ptl_src;

int ptlog_ptl_read_error(const char *name, tracelog_status st)
{
    if (st == TRACELOG_E_NOMEM)
        return ptlog_nomem();
    ptlog_msg(name, "cannot read: %s", tracelog_strerror(st));
    return PTLOG_EXIT_INPUT;
}

static int ptl_next(ptlog_src *s, tracelog_event *ev)
{
    ptl_src *p = (ptl_src *)s;
    tracelog_status st = tracelog_reader_next(p->r, ev);
    if (st == TRACELOG_OK)
        return 1;
    if (st == TRACELOG_END)
        return 0;
    return -ptlog_ptl_read_error(s->name, st);
}

static const char *ptl_type_name(ptlog_src *s, uint32_t id)
{
    return tracelog_reader_event_name(((ptl_src *)s)->r, id);
}

static const tracelog_schema *ptl_type_schema(ptlog_src *s, uint32_t id)
{
    return tracelog_reader_event_schema(((ptl_src *)s)->r, id);
}

static const char *ptl_thread_name(ptlog_src *s, const tracelog_event *ev)
{
    return tracelog_reader_event_thread_name(((ptl_src *)s)->r, ev);
}

static size_t ptl_type_count(ptlog_src *s) { return tracelog_reader_event_type_count(((ptl_src *)s)->r); }

static void ptl_type_at(ptlog_src *s, size_t i, uint32_t *id, const char **name)
{
    tracelog_reader_event_type(((ptl_src *)s)->r, i, id, name);
}

static void ptl_get_status(ptlog_src *s, tracelog_log_status *st)
{
    tracelog_reader_get_status(((ptl_src *)s)->r, st);
}

static int ptl_seek_time(ptlog_src *s, uint64_t ns)
{
    return tracelog_reader_seek_time(((ptl_src *)s)->r, ns) == TRACELOG_OK ? 0 : -1;
}

static void ptl_end_time(ptlog_src *s, uint64_t ns)
{
    (void)tracelog_reader_set_end_time(((ptl_src *)s)->r, ns); /* a seekable file: it cannot fail */
}

uint64_t ptlog_report_problems(const char *name, const tracelog_reader *r)
{
    size_t n = tracelog_reader_problem_count(r);
    for (size_t i = 0; i < n; i++) {
        tracelog_problem p;
        if (tracelog_reader_problem(r, i, &p) != TRACELOG_OK)
            break;
        /* the library's message may already name the code */
        const char *code = strstr(p.message, "TRACELOG_E_") ? NULL : tracelog_status_name(p.code);
        if (p.length)
            ptlog_msg(name, "warning: %llu bytes skipped at offset %llu: %s%s%s%s", (unsigned long long)p.length,
                      (unsigned long long)p.offset, p.message, code ? " (" : "", code ? code : "", code ? ")" : "");
        else
            ptlog_msg(name, "warning: at offset %llu: %s%s%s%s", (unsigned long long)p.offset, p.message,
                      code ? " (" : "", code ? code : "", code ? ")" : "");
    }
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    if (info.problems > n)
        ptlog_msg(name, "warning: %llu more problems not listed", (unsigned long long)(info.problems - n));
    return info.problems;
}

static int ptl_finish(ptlog_src *s)
{
    return ptlog_report_problems(s->name, ((ptl_src *)s)->r) ? PTLOG_EXIT_LOSS : PTLOG_EXIT_OK;
}

static void ptl_close(ptlog_src *s)
{
    ptl_src *p = (ptl_src *)s;
    tracelog_reader_close(p->r);
    if (p->own_in) {
        ptlog_in_close(p->in);
        free(p->in);
    }
    free(p);
}

tracelog_reader *ptlog_ptl_reader(ptlog_src *s)
{
    return s->next == ptl_next ? ((ptl_src *)s)->r : NULL;
}

int ptlog_ptl_src_clone(ptlog_src *s, ptlog_src **out)
{
    ptl_src *p = (ptl_src *)s;
    tracelog_reader *r;
    tracelog_error err;
    if (s->next != ptl_next || !p->in->seekable || tracelog_reader_open(p->in->fd, NULL, &r, &err) != TRACELOG_OK)
        return -1;
    if (ptlog_ptl_src_wrap(p->in, r, out))
        return -1;
    ((ptl_src *)*out)->own_in = 0;
    return 0;
}

int ptlog_ptl_open_error(const char *name, tracelog_status st, const tracelog_error *err)
{
    switch (st) {
    case TRACELOG_E_NOMEM:
        return ptlog_nomem();
    case TRACELOG_E_BAD_MAGIC:
        ptlog_msg(name, "not a .ptl log (bad magic)");
        break;
    case TRACELOG_E_TRUNCATED:
        ptlog_msg(name, "truncated: too short to hold a .ptl header");
        break;
    case TRACELOG_E_CHECKSUM:
        ptlog_msg(name, "damaged .ptl header (checksum mismatch)");
        break;
    case TRACELOG_E_UNSUPPORTED_VERSION:
        ptlog_msg(name, "unsupported .ptl version: %s", err->message);
        break;
    default:
        ptlog_msg(name, "cannot read the log: %s (%s)", err->message[0] ? err->message : tracelog_strerror(st),
                  tracelog_status_name(st));
        break;
    }
    return PTLOG_EXIT_INPUT;
}

/* The reader's source on a pipe: the detection head first, then the rest of the pipe. */
static long read_input(void *in, void *buf, size_t n) { return ptlog_in_read(in, buf, n); }

/*
 * The threads that load chunks ahead (tracelog_reader_set_read_ahead), for
 * all readers together: one per CPU this process may run on beyond the one
 * its own thread needs, at most READ_AHEAD_DEFAULT_MAX (the reader's own
 * thread loads chunks too when it would wait, and each thread holds a
 * decoded chunk). More threads than spare CPUs made dump --hex take 1.4 to
 * 1.6 times as long on 2 CPUs (bench/README.md, "typed output", session 6).
 * PTLOG_READ_AHEAD sets their number.
 */
#define READ_AHEAD_DEFAULT_MAX 3
static int read_ahead_left, read_ahead_each = -1; /* each: a reader's share (merge); -1: what is left */
static int read_ahead_set; /* by PTLOG_READ_AHEAD */

void ptlog_read_ahead_share(size_t readers)
{
    read_ahead_each = readers > 1 ? (int)((size_t)read_ahead_left / readers) : -1;
    if (read_ahead_each == 0)
        read_ahead_each = 1;
}

int ptlog_read_ahead_init(void)
{
    const char *v = getenv("PTLOG_READ_AHEAD");
    if (v && *v) { /* set but empty: the default, as when unset */
        if (ptlog_parse_threads(v, TRACELOG_READ_AHEAD_MAX, &read_ahead_left) == 0) {
            read_ahead_set = 1;
            return 0;
        }
        ptlog_msg("PTLOG_READ_AHEAD", "expected a number of threads from 0 to %d, not '%s'", TRACELOG_READ_AHEAD_MAX,
                  v);
        return PTLOG_EXIT_USAGE;
    }
    int spare = ptlog_cpus() - 1;
    read_ahead_left = spare < READ_AHEAD_DEFAULT_MAX ? spare : READ_AHEAD_DEFAULT_MAX;
    return 0;
}

/* Reading a file: chunks ahead when threads are left for it (otherwise on this thread alone). */
static void read_ahead(ptlog_in *in, tracelog_reader *r)
{
    int n = read_ahead_each >= 0 && read_ahead_each < read_ahead_left ? read_ahead_each : read_ahead_left;
    if (in->seekable && n > 0 && tracelog_reader_set_read_ahead(r, n) == TRACELOG_OK)
        read_ahead_left -= n;
}

int ptlog_ptl_src_open(ptlog_in *in, ptlog_src **out, tracelog_reader **reader)
{
    tracelog_reader *r;
    tracelog_error err;
    memset(&err, 0, sizeof err);
    tracelog_status st = in->seekable ? tracelog_reader_open(in->fd, NULL, &r, &err)
                                      : tracelog_reader_open_read(read_input, in, NULL, &r, &err);
    if (st != TRACELOG_OK)
        return ptlog_ptl_open_error(in->name, st, &err);
    read_ahead(in, r);
    int rc = ptlog_ptl_src_wrap(in, r, out);
    *reader = rc ? NULL : r;
    return rc;
}

/* The formatter threads take the spare CPUs (par.c): loading on the reading thread kept dump and JSON Lines
   1.3 times as fast as with a thread loading too (bench/README.md, session 9). */
static void ptl_yield_cpus(ptlog_src *s)
{
    if (!read_ahead_set)
        tracelog_reader_set_read_ahead(((ptl_src *)s)->r, 0);
}

int ptlog_ptl_src_wrap(ptlog_in *in, tracelog_reader *r, ptlog_src **out)
{
    ptl_src *p = calloc(1, sizeof *p);
    if (!p) {
        tracelog_reader_close(r);
        return ptlog_nomem();
    }
    p->r = r;
    p->own_in = 1;
    tracelog_reader_info info;
    tracelog_reader_get_info(p->r, &info);
    ptlog_src *s = &p->base;
    p->in = in;
    s->name = in->name;
    s->meta = *tracelog_reader_metadata(p->r);
    /* A log whose metadata block was lost has no policies: use the defaults
       (the loss itself is reported as a problem), so that it can be rewritten. */
    if (s->meta.stream_full_policy != TRACELOG_POLICY_LOOP && s->meta.stream_full_policy != TRACELOG_POLICY_UNTIL_FULL &&
        s->meta.stream_full_policy != TRACELOG_POLICY_FLUSH)
        s->meta.stream_full_policy = TRACELOG_POLICY_LOOP;
    if (s->meta.log_full_policy != TRACELOG_POLICY_LOOP && s->meta.log_full_policy != TRACELOG_POLICY_UNTIL_FULL &&
        s->meta.log_full_policy != TRACELOG_POLICY_APPEND)
        s->meta.log_full_policy = TRACELOG_POLICY_APPEND;
    s->format_major = info.format_major;
    s->format_minor = info.format_minor;
    s->seekable = info.seekable;
    s->upfront = info.seekable; /* the open scan read every small block */
    s->damaged = info.problems != 0;
    s->total_events = info.events;
    s->next = ptl_next;
    s->type_name = ptl_type_name;
    s->type_schema = ptl_type_schema;
    s->type_count = ptl_type_count;
    s->type_at = ptl_type_at;
    s->get_status = ptl_get_status;
    s->thread_name = ptl_thread_name;
    s->thread_names_stable = 1; /* borrowed from the reader until it is closed */
    s->type_names_stable = 1;   /* the same (tracelog_reader_event_name) */
    s->lookups_shared = info.seekable; /* the open scan read every table, and lookups search them in place */
    s->yield_cpus = ptl_yield_cpus;
    s->seek_time = info.seekable ? ptl_seek_time : NULL;
    s->end_time = info.seekable ? ptl_end_time : NULL;
    s->finish = ptl_finish;
    s->close = ptl_close;
    *out = s;
    return PTLOG_EXIT_OK;
}
