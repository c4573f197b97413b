/*
 * --follow (dump, convert --to jsonl; top FILE): a .ptl log read while its
 * writer appends to it, through the reader's follow mode
 * (tracelog_reader_open_follow). Events are output as their chunks land;
 * the output is flushed whenever nothing more is there yet. Following ends
 * (README.md, "Following a log"):
 *
 *   - at the trailer: the writer closed the log (exit 0, or 1 with damage);
 *     a trailer that more blocks follow within CLOSED_GRACE_MS is an exec's
 *     checkpoint, and following goes on;
 *   - when the writer is gone: the process the log names (or --writer-pid)
 *     has ended and the file has not grown for GONE_IDLE_MS (a controller
 *     such as ptlog record writes the trailer after its traced process
 *     ended). What was written is read, a block cut short reported as
 *     TORN_TAIL, and WRITER_GONE is reported: exit 1;
 *   - on SIGINT, SIGTERM or SIGHUP: what was output is flushed, exit 0
 *     (with 1 for damage seen so far); a block the writer is half way
 *     through is not damage and is not reported.
 *
 * Every wait is bounded (WAIT_STEP_MS) and returns early on those signals.
 * A LOOP log cannot be read forward: follow_ring.c reads its ring again.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "ptlog.h"

#define WAIT_STEP_MS PTLOG_FOLLOW_STEP_MS
#define CLOSED_GRACE_MS PTLOG_FOLLOW_CLOSED_MS
#define GONE_IDLE_MS PTLOG_FOLLOW_GONE_MS
#define HEADER_WAIT_MS 10000 /* a file without its header yet (just created) is waited for this long */

/* ---- signals ---------------------------------------------------------------------- */

static volatile sig_atomic_t interrupted;
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
static struct sigaction saved[3];
static int handling;

static void on_stop(int sig)
{
    (void)sig;
    interrupted = 1;
}

int ptlog_live_interrupted(void) { return interrupted; }

void ptlog_live_stop(void) { interrupted = 1; }

void ptlog_live_signals(int on)
{
    if (on == handling)
        return;
    handling = on;
    for (size_t i = 0; i < sizeof stop_signals / sizeof *stop_signals; i++) {
        if (!on) {
            sigaction(stop_signals[i], &saved[i], NULL);
            continue;
        }
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop; /* no SA_RESTART: a wait returns at once */
        sigemptyset(&sa.sa_mask);
        sigaction(stop_signals[i], &sa, &saved[i]);
    }
}

/* ---- is the writer still there? ----------------------------------------------------- */

/* The boot time, CLOCK_REALTIME seconds (/proc/stat btime); 0 if unknown. */
static uint64_t boot_time_s(void)
{
    char buf[4096];
    int fd = open("/proc/stat", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strstr(buf, "\nbtime ");
    return p ? strtoull(p + 7, NULL, 10) : 0;
}

/* When pid started, CLOCK_REALTIME ns (/proc/PID/stat field 22); 0 if unknown. */
static uint64_t start_time_ns(long pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* after the command name, which may hold anything */
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    long ticks_per_s = sysconf(_SC_CLK_TCK);
    uint64_t boot = boot_time_s();
    if (!p || ticks_per_s <= 0 || !boot)
        return 0;
    uint64_t ticks = strtoull(p + 1, NULL, 10);
    return boot * 1000000000ull + ticks * (1000000000ull / (uint64_t)ticks_per_s);
}

int ptlog_process_alive(long pid, uint64_t created_ns)
{
    if (pid <= 0)
        return 1; /* no pid: nothing says it is gone */
    if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
        return 0;
    /* Started well after the log was created: another process with a reused pid
       (boot time and ticks are coarse: 2 s of slack). */
    uint64_t started = start_time_ns(pid);
    return !started || !created_ns || started <= created_ns + 2000000000ull;
}

/* ---- the source ------------------------------------------------------------------- */

typedef enum follow_end {
    FOLLOWING,
    END_CLOSED,
    END_INTERRUPTED,
    END_WRITER_GONE,
    END_FILE_CHANGED,
} follow_end;

typedef struct follow_src {
    ptlog_src base;
    ptlog_src *inner; /* the .ptl source over the reader */
    tracelog_reader *r;
    long writer_pid;  /* --writer-pid, 0: the log's process */
    follow_end end;
    int stopped;      /* tracelog_reader_follow_stop was called: the rest is read to the end */
    int signals;      /* SIGINT, SIGTERM, SIGHUP are ours (from the first event on) */
    uint64_t idle_ms; /* time waited since the file last grew */
} follow_src;

long ptlog_follow_writer(const tracelog_metadata *m, long writer_pid)
{
    if (writer_pid)
        return writer_pid;
    char host[256];
    if (!m->pid || gethostname(host, sizeof host) != 0)
        return 0; /* not known yet (no metadata block read): the trailer or a signal */
    host[sizeof host - 1] = '\0'; /* truncated names are not terminated */
    if (strncmp(host, m->hostname, sizeof host) != 0)
        return 0; /* another machine's (or container's) process: the trailer or a signal */
    return (long)m->pid;
}

int ptlog_follow_gone(const char *name, long pid, int rc)
{
    ptlog_msg(name, "warning: the log was not closed and its writer is gone (process %ld ended): followed to the "
                    "end of what was written (WRITER_GONE)", pid);
    return rc > PTLOG_EXIT_LOSS ? rc : PTLOG_EXIT_LOSS;
}

static long writer_of(const follow_src *f)
{
    return ptlog_follow_writer(tracelog_reader_metadata(f->r), f->writer_pid);
}

/* Nothing more yet: 1 after waiting a step for more, 0 when following ends (f->end says why). */
static int wait_more(follow_src *f)
{
    ptlog_in_idle(); /* what was output goes out before we wait */
    tracelog_reader_info info;
    tracelog_reader_get_info(f->r, &info);
    long pid = writer_of(f);
    if (info.closed && f->idle_ms >= CLOSED_GRACE_MS)
        f->end = END_CLOSED;
    else if (pid && f->idle_ms >= GONE_IDLE_MS &&
             !ptlog_process_alive(pid, f->writer_pid ? 0 : tracelog_reader_metadata(f->r)->creation_time_ns))
        f->end = END_WRITER_GONE;
    if (f->end != FOLLOWING || interrupted) {
        if (interrupted && f->end == FOLLOWING)
            f->end = END_INTERRUPTED;
        return 0;
    }
    tracelog_status st = tracelog_reader_follow_wait(f->r, WAIT_STEP_MS);
    if (st == TRACELOG_OK) {
        f->idle_ms = 0;
    } else if (st == TRACELOG_END) {
        f->idle_ms += WAIT_STEP_MS; /* a signal cuts a step short: counted whole, it ends following anyway */
    } else if (st == TRACELOG_E_CORRUPT) {
        f->end = END_FILE_CHANGED;
        return 0;
    } else {
        ptlog_msg(f->base.name, "cannot follow: %s", strerror(errno));
        f->end = END_FILE_CHANGED;
        return 0;
    }
    return 1;
}

static int follow_next(ptlog_src *s, tracelog_event *ev)
{
    follow_src *f = (follow_src *)s;
    if (!f->signals) {
        /* Handled from the first event on, so over the handlers the output installed when it was
           opened (cleanup.c: those would remove the output rather than finish it). */
        ptlog_live_signals(1);
        f->signals = 1;
    }
    for (;;) {
        if (interrupted && !f->stopped) { /* also while a backlog is read: Ctrl-C ends at once */
            f->end = END_INTERRUPTED;
            return 0;
        }
        int rc = f->inner->next(f->inner, ev);
        if (rc != 0 || f->stopped)
            return rc;
        if (interrupted && f->end == FOLLOWING)
            f->end = END_INTERRUPTED;
        if (f->end == FOLLOWING && wait_more(f))
            continue;
        if (f->end == END_INTERRUPTED) /* the block being written is no damage: not read */
            return 0;
        tracelog_reader_follow_stop(f->r); /* the rest of the file is the end of the log */
        f->stopped = 1;
    }
}

static int follow_finish(ptlog_src *s)
{
    follow_src *f = (follow_src *)s;
    int rc = f->inner->finish(f->inner);
    if (f->end == END_WRITER_GONE)
        return ptlog_follow_gone(s->name, writer_of(f), rc);
    if (f->end == END_FILE_CHANGED && rc == PTLOG_EXIT_OK)
        rc = PTLOG_EXIT_LOSS;
    return rc;
}

static const char *follow_type_name(ptlog_src *s, uint32_t id)
{
    ptlog_src *in = ((follow_src *)s)->inner;
    return in->type_name(in, id);
}

static const tracelog_schema *follow_type_schema(ptlog_src *s, uint32_t id)
{
    ptlog_src *in = ((follow_src *)s)->inner;
    return in->type_schema ? in->type_schema(in, id) : NULL;
}

static size_t follow_type_count(ptlog_src *s)
{
    ptlog_src *in = ((follow_src *)s)->inner;
    return in->type_count(in);
}

static void follow_type_at(ptlog_src *s, size_t i, uint32_t *id, const char **name)
{
    ptlog_src *in = ((follow_src *)s)->inner;
    in->type_at(in, i, id, name);
}

static const char *follow_thread_name(ptlog_src *s, const tracelog_event *ev)
{
    ptlog_src *in = ((follow_src *)s)->inner;
    return in->thread_name ? in->thread_name(in, ev) : NULL;
}

static void follow_get_status(ptlog_src *s, tracelog_log_status *st)
{
    ptlog_src *in = ((follow_src *)s)->inner;
    in->get_status(in, st);
}

static void follow_close(ptlog_src *s)
{
    follow_src *f = (follow_src *)s;
    f->inner->close(f->inner);
    free(f);
    ptlog_live_signals(0);
}

/* ---- opening ---------------------------------------------------------------------- */

/* Waits (bounded, interruptible) until the file holds a header, then opens the reader on it. */
static int open_follow_reader(ptlog_in *in, tracelog_reader **r)
{
    tracelog_error err;
    for (unsigned waited = 0;; waited += 50) {
        memset(&err, 0, sizeof err);
        tracelog_status st = tracelog_reader_open_follow(in->fd, NULL, r, &err);
        if (st == TRACELOG_OK)
            return PTLOG_EXIT_OK;
        if (st != TRACELOG_E_TRUNCATED || waited >= HEADER_WAIT_MS || interrupted)
            return ptlog_ptl_open_error(in->name, st, &err);
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
    }
}

static int wrap(ptlog_in *in, tracelog_reader *r, const ptlog_follow_opts *o, ptlog_src **out)
{
    follow_src *f = calloc(1, sizeof *f);
    if (!f) {
        tracelog_reader_close(r);
        return ptlog_nomem();
    }
    int rc = ptlog_ptl_src_wrap(in, r, &f->inner);
    if (rc) {
        free(f);
        return rc;
    }
    f->r = r;
    f->writer_pid = o->writer_pid;
    ptlog_src *s = &f->base;
    /* The inner source's data, not its functions: each is given its own source, so a function
       this one does not forward stays NULL (optional) rather than called with the wrong one. */
    s->name = f->inner->name;
    s->meta = f->inner->meta;
    s->format_major = f->inner->format_major;
    s->format_minor = f->inner->format_minor;
    s->thread_name = follow_thread_name;
    s->next = follow_next;
    s->type_name = follow_type_name;
    s->type_schema = follow_type_schema;
    s->type_count = follow_type_count;
    s->type_at = follow_type_at;
    s->get_status = follow_get_status;
    s->finish = follow_finish;
    s->close = follow_close;
    *out = s;
    return PTLOG_EXIT_OK;
}

/* An empty file may be a log its writer has just created: waited for, as a short header is. */
static int wait_not_empty(const char *path)
{
    for (unsigned waited = 0; waited < HEADER_WAIT_MS && !interrupted; waited += 50) {
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 0)
            return 0;
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
    }
    return 0;
}

/* Whether r's open found no metadata block: a log whose writer has written its header, not yet that. */
static int lacks_metadata(tracelog_reader *r)
{
    for (size_t i = 0, n = tracelog_reader_problem_count(r); i < n; i++)
        if (strcmp(tracelog_reader_problem_condition(r, i), "NO_METADATA") == 0)
            return 1;
    return 0;
}

/*
 * A LOOP log's reader, once its metadata block is there (waited for as the header is): opened
 * between the two writes, the follower's output began with a log of no program (the composition
 * matrix's follow-loop row saw it under load).
 */
static tracelog_status open_ring(ptlog_in *in, tracelog_reader **r, tracelog_error *err)
{
    for (unsigned waited = 0;; waited += 50) {
        memset(err, 0, sizeof *err);
        tracelog_status st = tracelog_reader_open(in->fd, NULL, r, err);
        if (st != TRACELOG_OK || !lacks_metadata(*r) || waited >= HEADER_WAIT_MS || interrupted)
            return st;
        tracelog_reader_close(*r);
        *r = NULL;
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
    }
}

int ptlog_follow_src_open(const char *path, const ptlog_follow_opts *o, ptlog_src **out, tracelog_reader **reader)
{
    tracelog_reader *r = NULL;
    interrupted = 0;
    if (strcmp(path, "-") != 0)
        wait_not_empty(path);
    ptlog_in *in = malloc(sizeof *in);
    int rc = in ? ptlog_in_open(in, path) : ptlog_nomem();
    if (!rc && ptlog_detect(in->head, in->head_len) != PTLOG_FMT_PTL) {
        ptlog_msg(in->name, "only a .ptl log can be followed live (this input is not one)"); /* --follow, top */
        rc = PTLOG_EXIT_INPUT;
    }
    if (!rc && !in->seekable) { /* a pipe: read as it arrives already, and ended by its writer */
        rc = ptlog_ptl_src_open(in, out, &r);
    } else if (!rc && ptlog_in_is_ring(in)) { /* a LOOP log: its ring read again as it changes */
        tracelog_error err;
        tracelog_status st = open_ring(in, &r, &err);
        rc = st != TRACELOG_OK ? ptlog_ptl_open_error(in->name, st, &err) : ptlog_follow_ring_open(in, r, o, out);
    } else if (!rc) {
        rc = open_follow_reader(in, &r);
        if (!rc)
            rc = wrap(in, r, o, out);
    }
    if (rc) {
        if (in)
            ptlog_in_close(in);
        free(in);
    }
    if (reader) /* none for a ring: it is read again and again, each time by a new reader */
        *reader = rc || ptlog_in_is_ring(in) ? NULL : r;
    return rc;
}
