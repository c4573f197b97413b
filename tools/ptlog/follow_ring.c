/*
 * --follow of a LOOP (ring) log (README.md, "Following a log"). Its writer
 * overwrites the oldest segments in place, so the file cannot be read
 * forward as it grows: following reads the ring again, whole (its block
 * headers, then the chunks after the last event printed), each time the
 * file changed (size or modification time, looked at every
 * PTLOG_FOLLOW_STEP_MS), and prints the events newer than the last one
 * printed: the ring's newest events, as they arrive. When the ring read
 * again no longer holds the last event printed, the writer lapped the
 * follower: the events between it and the next one were overwritten before
 * they could be read, and a warning says so (RING_LAPPED; the ring's
 * policy, not damage: exit status 0).
 *
 * A read of the ring while the writer writes may find a block half written
 * or overwritten: its problems are not reported; those of the last read,
 * once following ends at the trailer or with the writer gone, are. But a
 * chunk overwritten after the read began (the writer lapped the follower
 * while it read) lost events not printed yet: RING_LAPPED says so, from the
 * last event printed to the next one read. It may
 * also find a merge set of which only some chunks are written: that set is
 * read the next time (tracelog_reader_hold_open_set), since its other
 * chunks may hold earlier events, which would then never be printed (older
 * than the last one printed). Ends as a followed APPEND log does (follow.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "live.h"
#include "ptlog.h"

typedef struct ring_src {
    ptlog_src base;
    ptlog_in *in;          /* the file */
    tracelog_reader *r;    /* the latest read of the ring */
    long writer_pid;       /* --writer-pid, 0: the log's process */
    int signals;           /* SIGINT, SIGTERM, SIGHUP are ours (from the first event on) */
    int drained;           /* r has given every event it has */
    int final;             /* following ended: r is the last read, its problems are reported */
    int gone;              /* ended because the writer is gone */
    int have_last;
    uint64_t last_ts;      /* the newest event printed */
    uint64_t *at_last;     /* who the events printed with that timestamp are (event_identity) */
    uint64_t *skip;        /* of those, the ones r (read again) has not given yet */
    size_t nat_last, nskip, cap; /* cap: of both arrays (as many as the ring holds of one time) */
    size_t problems;       /* r's problems when it was opened, or when last looked at */
    int overwritten;       /* a chunk was overwritten during this read: events were lost */
    int rejoin;            /* r is a read again: does it still hold the last event printed? */
    struct timespec mtime; /* the file when r was read */
    off_t size;
    uint64_t idle_ms;      /* time waited since the file last changed */
} ring_src;

/* Who an event is, among events of one timestamp: a hash of everything but the time (FNV-1a). */
static uint64_t event_identity(const tracelog_event *ev)
{
    uint64_t fields[6] = {ev->event_id, ev->pid, ev->kernel_tid, ev->tid, ev->address,
                          (uint64_t)ev->truncation << 32 | ev->payload_len};
    uint64_t h = 0xcbf29ce484222325ull;
    const uint8_t *p = (const uint8_t *)fields;
    for (size_t i = 0; i < sizeof fields; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    for (uint32_t i = 0; i < ev->payload_len; i++)
        h = (h ^ ((const uint8_t *)ev->payload)[i]) * 0x100000001b3ull;
    return h;
}

/* Remembers id among the events printed with the last timestamp: 0, or -1 (out of memory). */
static int remember(ring_src *g, uint64_t id)
{
    if (g->nat_last == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 16;
        uint64_t *at = realloc(g->at_last, cap * sizeof *at), *skip = at ? realloc(g->skip, cap * sizeof *skip) : NULL;
        if (at)
            g->at_last = at;
        if (!skip)
            return -1;
        g->skip = skip;
        g->cap = cap;
    }
    g->at_last[g->nat_last++] = id;
    return 0;
}

/*
 * Whether ev is new (not printed by an earlier read): 1, and it is
 * remembered; 0; or -1 (out of memory). Events of the last timestamp printed
 * are told apart by who they are, not counted: the read again may lack one
 * of them (its chunk overwritten while a later chunk with another event of
 * that time stays) or give them in another order, and a count then skipped
 * an event never printed.
 */
static int take(ring_src *g, const tracelog_event *ev)
{
    if (g->have_last && ev->timestamp_ns < g->last_ts)
        return 0;
    uint64_t id = event_identity(ev);
    if (g->have_last && ev->timestamp_ns == g->last_ts) {
        for (size_t i = 0; i < g->nskip; i++)
            if (g->skip[i] == id) {
                g->skip[i] = g->skip[--g->nskip];
                return 0;
            }
        return remember(g, id) == 0 ? 1 : -1;
    }
    g->have_last = 1;
    g->last_ts = ev->timestamp_ns;
    g->nat_last = 0;
    g->nskip = 0;
    return remember(g, id) == 0 ? 1 : -1;
}

/* The events after after_ts (the last printed) and before before_ts were overwritten before they were read. */
static void lapped(const ring_src *g, uint64_t after_ts, uint64_t before_ts)
{
    ptlog_timecache tc;
    char after[64], before[64];
    ptlog_timecache_init(&tc, 0);
    after[ptlog_fmt_time(&tc, after_ts, after)] = '\0';
    before[ptlog_fmt_time(&tc, before_ts, before)] = '\0';
    ptlog_msg(g->base.name, "warning: the writer lapped the follower: the events after %s and before %s were "
                            "overwritten before they could be read (RING_LAPPED)", after, before);
}

/* The file's state now; 0, or -1 (errno set). */
static int file_state(const ring_src *g, struct timespec *mtime, off_t *size)
{
    struct stat st;
    if (fstat(g->in->fd, &st) != 0)
        return -1;
    *mtime = st.st_mtim;
    *size = st.st_size;
    return 0;
}

#define CLEAN_READ_TRIES 20 /* reads of the ring, 2 ms apart, until one finds its blocks whole */

/*
 * Problems of r in the ring's blocks (framing, segments, sequence, chunks, a
 * file that changed): those a read that raced the writer finds. Not those the
 * log's tables or status carry, which every read finds again (names or
 * thread ids a LOOP log dropped, a bad schema): a follower took those for a
 * race, read the ring 20 times at every change, and warned of laps that were
 * none.
 */
static size_t ring_problems(const tracelog_reader *r)
{
    static const char *const raced[] = {
        "BLOCK_HEADER_CRC_MISMATCH", "BLOCK_HEADER_MISSING", "TORN_TAIL",      "RING_CUT_SHORT",
        "SEQUENCE_BREAK",            "BAD_SEGMENT_START",    "BAD_SEGMENT_HEADER", "SEGMENT_END_LOST",
        "DURABLE_END_LOST",          "PAYLOAD_CRC_MISMATCH", "BAD_CHUNK_HEADER", "BAD_CHUNK_BODY",
        "BAD_EVENT",                 "CHUNK_TRAILING_DATA",  "FILE_CHANGED",     "READ_ERROR"};
    size_t n = 0, all = tracelog_reader_problem_count(r);
    for (size_t i = 0; i < all; i++) {
        const char *c = tracelog_reader_problem_condition(r, i);
        for (size_t k = 0; c && k < sizeof raced / sizeof *raced; k++)
            if (strcmp(c, raced[k]) == 0) {
                n++;
                break;
            }
    }
    return n;
}

/* Reads the ring again. 1: a new read in r; 0: not readable now (tried again later); or an exit code negated. */
static int reread(ring_src *g)
{
    struct timespec mtime;
    off_t size;
    tracelog_reader *r = NULL;
    tracelog_error err;
    tracelog_status st = TRACELOG_OK;
    /*
     * A read the writer raced (its scan met a block or a segment head being
     * written, then newer blocks after it) lacks what it could not read, and
     * says so at open: blocks missing, bytes skipped. A clean read of a live
     * ring finds nothing (a half-written newest block is no problem), so such
     * a read is made again; once the writer is done with that block, it reads
     * whole. A follower that took it printed the newer blocks' events, and
     * the missing ones, older, were never printed: 139,200 of them, without a
     * word, in one run of test_ptlog_follow's lapped follower.
     */
    for (int tries = 1;; tries++) {
        if (file_state(g, &mtime, &size) != 0) { /* before the read: a write during it means one more */
            ptlog_msg(g->base.name, "cannot follow: %s", strerror(errno));
            return -PTLOG_EXIT_INPUT;
        }
        memset(&err, 0, sizeof err);
        st = tracelog_reader_open(g->in->fd, NULL, &r, &err);
        if (st == TRACELOG_E_NOMEM)
            return -ptlog_nomem();
        if (st != TRACELOG_OK || g->final || tries == CLEAN_READ_TRIES || ring_problems(r) == 0)
            break;
        tracelog_reader_close(r);
        struct timespec nap = {0, 2000000};
        nanosleep(&nap, NULL);
    }
    if (st != TRACELOG_OK) { /* its header being written, or the file cut or replaced: tried again once it changes */
        g->mtime = mtime;
        g->size = size;
        return g->final ? -ptlog_ptl_open_error(g->base.name, st, &err) : 0;
    }
    /* A merge set written in part (the writer between its chunks) waits for its other chunks, whose
       events may come first; the last read, once following ended, gives what there is. */
    tracelog_reader_hold_open_set(r, !g->final);
    g->mtime = mtime;
    g->size = size;
    if (g->nat_last)
        memcpy(g->skip, g->at_last, g->nat_last * sizeof *g->skip);
    g->nskip = g->nat_last;
    if (g->have_last && tracelog_reader_seek_time(r, g->last_ts) != TRACELOG_OK) { /* then filtered one by one */
        tracelog_reader_rewind(r);
    }
    tracelog_reader_close(g->r);
    g->r = r;
    g->drained = 0;
    g->problems = tracelog_reader_problem_count(r);
    /* Problems at open in every try: damage, or a writer that raced each read. What the read lacks
       may be events not printed yet: said at the next event printed, as a lap is. */
    g->overwritten = !g->final && ring_problems(r) > 0;
    g->rejoin = g->have_last;
    return 1;
}

/*
 * ev, read from r: 1 to hand it out, 0 to skip it, or an exit code negated.
 * Events were lost, and the warning names them up to this event, when
 * - a read again does not hold the last event printed: its first event at
 *   or after that time comes later (the writer lapped the follower between
 *   two reads; the ring's oldest event said so only when the read saw the
 *   ring whole, not a segment of an older lap beside one being rewritten);
 * - a problem was found since the read began: a chunk the writer overwrote
 *   meanwhile (the index said otherwise).
 */
static int keep(ring_src *g, const tracelog_event *ev)
{
    size_t problems = tracelog_reader_problem_count(g->r);
    if (!g->final && problems > g->problems) {
        g->problems = problems;
        g->overwritten = 1;
    }
    if (g->rejoin && ev->timestamp_ns >= g->last_ts) {
        g->rejoin = 0;
        g->overwritten |= ev->timestamp_ns > g->last_ts;
    }
    uint64_t last_ts = g->last_ts;
    int had_last = g->have_last, t = take(g, ev);
    if (t < 0)
        return -ptlog_nomem();
    if (t && g->overwritten) {
        g->overwritten = 0;
        if (had_last)
            lapped(g, last_ts, ev->timestamp_ns);
    }
    return t;
}

/* Nothing new in r: waits until the file changes (1), or following ends (0: then g->final or interrupted). */
static int wait_change(ring_src *g)
{
    for (;;) {
        ptlog_in_idle(); /* what was output goes out before we wait */
        if (ptlog_live_interrupted())
            return 0;
        tracelog_reader_info info;
        tracelog_reader_get_info(g->r, &info);
        const tracelog_metadata *m = tracelog_reader_metadata(g->r);
        long pid = ptlog_follow_writer(m, g->writer_pid);
        if (info.closed && g->idle_ms >= PTLOG_FOLLOW_CLOSED_MS)
            g->final = 1;
        else if (pid && g->idle_ms >= PTLOG_FOLLOW_GONE_MS &&
                 !ptlog_process_alive(pid, g->writer_pid ? 0 : m->creation_time_ns))
            g->final = g->gone = 1;
        if (g->final)
            return 0;
        struct timespec nap = {0, PTLOG_FOLLOW_STEP_MS * 1000000L}, mtime;
        nanosleep(&nap, NULL); /* a signal cuts it short: looked at above */
        off_t size;
        if (file_state(g, &mtime, &size) == 0 &&
            (size != g->size || mtime.tv_sec != g->mtime.tv_sec || mtime.tv_nsec != g->mtime.tv_nsec)) {
            g->idle_ms = 0;
            return 1;
        }
        g->idle_ms += PTLOG_FOLLOW_STEP_MS;
    }
}

static int read_error(ring_src *g, tracelog_status st)
{
    if (st == TRACELOG_E_NOMEM)
        return -ptlog_nomem();
    ptlog_msg(g->base.name, "cannot read: %s", tracelog_strerror(st));
    return -PTLOG_EXIT_INPUT;
}

static int ring_next(ptlog_src *s, tracelog_event *ev)
{
    ring_src *g = (ring_src *)s;
    if (!g->signals) { /* as follow.c: over the output's handlers */
        ptlog_live_signals(1);
        g->signals = 1;
    }
    for (;;) {
        if (ptlog_live_interrupted() && !g->final)
            return 0;
        while (!g->drained) {
            tracelog_status st = tracelog_reader_next(g->r, ev);
            int k = st == TRACELOG_OK ? keep(g, ev) : 0;
            if (k < 0)
                return k;
            if (k)
                return 1;
            if (st == TRACELOG_END)
                g->drained = 1;
            else if (st != TRACELOG_OK)
                return read_error(g, st);
        }
        if (g->final) /* the last read is done */
            return 0;
        if (!wait_change(g) && !g->final)
            return 0; /* interrupted */
        int rc = reread(g); /* also the last read, once following ended */
        if (rc < 0)
            return rc;
        if (rc == 0 && g->final) /* the last read could not be made: the one before stands */
            return 0;
    }
}

static int ring_finish(ptlog_src *s)
{
    ring_src *g = (ring_src *)s;
    int rc = g->final && ptlog_report_problems(s->name, g->r) ? PTLOG_EXIT_LOSS : PTLOG_EXIT_OK;
    return g->gone ? ptlog_follow_gone(s->name, ptlog_follow_writer(tracelog_reader_metadata(g->r), g->writer_pid), rc)
                   : rc;
}

static const char *ring_type_name(ptlog_src *s, uint32_t id)
{
    return tracelog_reader_event_name(((ring_src *)s)->r, id);
}

static const tracelog_schema *ring_type_schema(ptlog_src *s, uint32_t id)
{
    return tracelog_reader_event_schema(((ring_src *)s)->r, id);
}

static size_t ring_type_count(ptlog_src *s) { return tracelog_reader_event_type_count(((ring_src *)s)->r); }

static void ring_type_at(ptlog_src *s, size_t i, uint32_t *id, const char **name)
{
    tracelog_reader_event_type(((ring_src *)s)->r, i, id, name);
}

static const char *ring_thread_name(ptlog_src *s, const tracelog_event *ev)
{
    return tracelog_reader_event_thread_name(((ring_src *)s)->r, ev); /* ev came from this read */
}

static void ring_get_status(ptlog_src *s, tracelog_log_status *st)
{
    tracelog_reader_get_status(((ring_src *)s)->r, st);
}

static void ring_close(ptlog_src *s)
{
    ring_src *g = (ring_src *)s;
    tracelog_reader_close(g->r);
    ptlog_in_close(g->in);
    free(g->in);
    free(g->at_last);
    free(g->skip);
    free(g);
    ptlog_live_signals(0);
}

int ptlog_follow_ring_open(ptlog_in *in, tracelog_reader *r, const ptlog_follow_opts *o, ptlog_src **out)
{
    ring_src *g = calloc(1, sizeof *g);
    if (!g) {
        tracelog_reader_close(r);
        return ptlog_nomem();
    }
    g->in = in;
    g->r = r;
    g->writer_pid = o->writer_pid;
    g->size = -1; /* the state of the first read is not known: the first wait reads the ring again */
    g->problems = tracelog_reader_problem_count(r);
    g->drained = ring_problems(r) > 0; /* a read the writer may have raced (reread): read again at once */
    ptlog_src *s = &g->base;
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    s->name = in->name;
    s->meta = *tracelog_reader_metadata(r);
    s->format_major = info.format_major;
    s->format_minor = info.format_minor;
    s->next = ring_next;
    s->type_name = ring_type_name;
    s->type_schema = ring_type_schema;
    s->type_count = ring_type_count;
    s->type_at = ring_type_at;
    s->get_status = ring_get_status;
    s->thread_name = ring_thread_name;
    s->finish = ring_finish;
    s->close = ring_close;
    *out = s;
    return PTLOG_EXIT_OK;
}
