/*
 * kill -9 (promise 2, process crash): a child process writes a log to a real
 * file, calling tracelog_writer_flush() every K events and reporting through
 * a pipe each flush that completed; the parent SIGKILLs it at a moment drawn
 * from a seeded generator (0..20 ms after the fork), then reads the file.
 *
 * Checked after each kill, with F the last flush the child reported:
 *  - once a flush was reported, the log opens;
 *  - every event read was appended, exactly (fields and payload), in the
 *    order appended, with no hole (a killed process loses at most the end);
 *  - every event covered by flush F is read, except those the log's own
 *    policy dropped: a LOOP log may have overwritten its oldest events, up
 *    to what it had overwritten at the end of the next flush (which the
 *    child may have done before the kill without reporting it). The parent
 *    knows those numbers by running the same writer program in memory.
 *  - a child that finished closes the log cleanly: everything is there.
 * 200 iterations over APPEND (stored and zstd), UNTIL_FULL and LOOP (the
 * ring wraps several times), flush intervals 1..40.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracelog.h"

#define ITERATIONS 200
#define NEVENTS 12000
#define T0 1700000000000000000ull
#define MAX_PAYLOAD 300
#define CLOSED_MARK UINT32_MAX

typedef struct config {
    const char *name;
    tracelog_policy policy;
    int level;
} config;

static const config configs[] = {
    {"APPEND/zstd", TRACELOG_POLICY_APPEND, 1},
    {"APPEND/stored", TRACELOG_POLICY_APPEND, 0},
    {"UNTIL_FULL", TRACELOG_POLICY_UNTIL_FULL, 1},
    {"LOOP", TRACELOG_POLICY_LOOP, 0},
};

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint8_t payload_buf[MAX_PAYLOAD];

/* Event i carries i in its timestamp; the payload is a function of i. */
static tracelog_event make_event(unsigned i, uint8_t *payload)
{
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.timestamp_ns = T0 + (uint64_t)i * 1000;
    ev.event_id = 1 + i % 3;
    ev.pid = 100 + i / 500;
    ev.tid = 7000 + i % 4;
    ev.address = 0x400000 + (uint64_t)(i % 13) * 8;
    ev.payload_len = (i * 37) % (MAX_PAYLOAD + 1);
    for (uint32_t k = 0; k < ev.payload_len; k++)
        payload[k] = (uint8_t)(i ^ (k * 13));
    ev.payload = payload;
    return ev;
}

static void options(const config *c, tracelog_writer_options *opt, tracelog_metadata *meta)
{
    tracelog_writer_options_init(opt);
    opt->log_policy = c->policy;
    opt->compression_level = c->level;
    opt->chunk_size = 8192;
    if (c->policy == TRACELOG_POLICY_UNTIL_FULL)
        opt->log_max_size = 100 * 1024;
    if (c->policy == TRACELOG_POLICY_LOOP) {
        opt->log_max_size = 64 * 1024;
        opt->segment_size = 4096;
    }
    tracelog_metadata_init(meta);
    strcpy(meta->trace_name, "kill9");
}

/*
 * The writer program, shared by the child and the parent's dry run: appends
 * NEVENTS events, flushing every k; after flush number n (1-based) completes,
 * calls on_flush(ctx, n, w), and stops (*stopped = 1) after flush stop_after.
 * Returns the last status.
 */
typedef void (*flush_hook)(void *ctx, uint32_t n, tracelog_writer *w);

static tracelog_status program(tracelog_writer *w, unsigned k, flush_hook on_flush, void *ctx, uint32_t stop_after,
                               int *stopped)
{
    *stopped = 0;
    tracelog_status st = tracelog_writer_define_event(w, 1, "one");
    uint32_t flushes = 0;
    for (unsigned i = 0; i < NEVENTS && (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL); i++) {
        tracelog_event ev = make_event(i, payload_buf);
        st = tracelog_writer_append(w, &ev);
        if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL)
            break;
        if (i % k == k - 1) {
            st = tracelog_writer_flush(w);
            if (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL) {
                on_flush(ctx, ++flushes, w);
                if (flushes == stop_after) {
                    *stopped = 1;
                    break;
                }
            }
        }
    }
    return st;
}

/* ---- the parent's dry run: the writer's counters after each flush ------- */

typedef struct counters {
    uint64_t written, overruns;
} counters;

typedef struct dry_run {
    counters *at; /* at[n]: after flush n; at[nflush + 1]: after close */
    uint32_t nflush;
    int closed; /* the run went to its close: at[nflush + 1] is the log's final state */
} dry_run;

static void record_flush(void *ctx, uint32_t n, tracelog_writer *w)
{
    dry_run *d = ctx;
    tracelog_log_status st;
    tracelog_writer_get_status(w, &st);
    d->at[n] = (counters){st.events_written, st.log_overruns};
    d->nflush = n;
}

/* Runs the program in memory up to flush stop_after, or to its close if it has fewer flushes. */
static int dry(const config *c, unsigned k, uint32_t stop_after, dry_run *d)
{
    tracelog_writer_options opt;
    tracelog_metadata meta;
    options(c, &opt, &meta);
    d->at = calloc(NEVENTS + 2, sizeof *d->at);
    d->nflush = 0;
    d->closed = 0;
    int fd = memfd_create("kill9-dry-run", MFD_CLOEXEC);
    tracelog_writer *w;
    tracelog_error err;
    if (!d->at || fd < 0 || tracelog_writer_create(fd, &meta, &opt, &w, &err) != TRACELOG_OK)
        return -1;
    int stopped;
    tracelog_status st = program(w, k, record_flush, d, stop_after, &stopped);
    if ((st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL) || stopped) {
        tracelog_writer_abandon(w);
        close(fd);
        return stopped ? 0 : -1;
    }
    /* After the last flush comes the close: its counters (a ring's trailer may
       overwrite one more segment) are read back from the log. */
    tracelog_reader *r;
    if (tracelog_writer_close(w, &err) != TRACELOG_OK || tracelog_reader_open(fd, NULL, &r, &err) != TRACELOG_OK) {
        close(fd);
        return -1;
    }
    tracelog_log_status fin;
    tracelog_reader_get_status(r, &fin);
    d->at[d->nflush + 1] = (counters){fin.events_written, fin.log_overruns};
    d->closed = 1;
    tracelog_reader_close(r);
    close(fd);
    return 0;
}

/* ---- the child ------------------------------------------------------------ */

static void report_flush(void *ctx, uint32_t n, tracelog_writer *w)
{
    (void)w;
    int fd = *(int *)ctx;
    if (write(fd, &n, sizeof n) != (ssize_t)sizeof n)
        _exit(3);
}

static void child(const config *c, unsigned k, const char *path, int report_fd)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        _exit(2);
    tracelog_writer_options opt;
    tracelog_metadata meta;
    options(c, &opt, &meta);
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(fd, &meta, &opt, &w, &err) != TRACELOG_OK)
        _exit(2);
    int stopped;
    tracelog_status st = program(w, k, report_flush, &report_fd, UINT32_MAX, &stopped);
    if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL)
        _exit(2);
    if (tracelog_writer_close(w, &err) != TRACELOG_OK)
        _exit(2);
    uint32_t mark = CLOSED_MARK;
    if (write(report_fd, &mark, sizeof mark) != (ssize_t)sizeof mark)
        _exit(3);
    _exit(0);
}

/* ---- the check ------------------------------------------------------------- */

static int check(const config *c, const char *path, const dry_run *d, uint32_t last, int closed, char *why,
                 size_t n)
{
    tracelog_reader *r = NULL;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open_path(path, NULL, &r, &err);
    if (st != TRACELOG_OK) {
        if (last == 0 && !closed)
            return 0; /* killed before anything was promised */
        snprintf(why, n, "open after flush %u: %s (%s)", last, tracelog_status_name(st), err.message);
        return -1;
    }
    /* Events that must be there: [must_from, must_to). */
    uint64_t must_from = 0, must_to = 0;
    if (closed) {
        tracelog_log_status fin;
        tracelog_reader_get_status(r, &fin);
        must_to = fin.events_written;
        must_from = c->policy == TRACELOG_POLICY_LOOP ? fin.log_overruns : 0;
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        if (!info.clean || info.problems) {
            snprintf(why, n, "finished child: clean %d, %llu problems", info.clean,
                     (unsigned long long)info.problems);
            tracelog_reader_close(r);
            return -1;
        }
    } else if (last > 0) {
        must_to = d->at[last].written;
        if (c->policy == TRACELOG_POLICY_LOOP)
            must_from = d->at[last + 1].overruns; /* overruns only grow */
    }
    int rc = 0;
    long prev = -1, first = -1;
    tracelog_event ev;
    uint8_t want_payload[MAX_PAYLOAD];
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        long idx = ev.timestamp_ns >= T0 ? (long)((ev.timestamp_ns - T0) / 1000) : -1;
        if (idx < 0 || idx >= NEVENTS) {
            snprintf(why, n, "an event that was never appended (timestamp %llu)", (unsigned long long)ev.timestamp_ns);
            rc = -1;
            break;
        }
        tracelog_event want = make_event((unsigned)idx, want_payload);
        if (want.timestamp_ns != ev.timestamp_ns || want.event_id != ev.event_id || want.pid != ev.pid ||
            want.tid != ev.tid || want.address != ev.address || want.truncation != ev.truncation ||
            want.payload_len != ev.payload_len || memcmp(want.payload, ev.payload, ev.payload_len) != 0) {
            snprintf(why, n, "event %ld altered", idx);
            rc = -1;
            break;
        }
        if (prev >= 0 && idx != prev + 1) {
            snprintf(why, n, "event %ld follows event %ld", idx, prev);
            rc = -1;
            break;
        }
        if (first < 0)
            first = idx;
        prev = idx;
    }
    if (rc == 0 && st != TRACELOG_END) {
        snprintf(why, n, "next: %s", tracelog_status_name(st));
        rc = -1;
    }
    if (rc == 0 && c->policy != TRACELOG_POLICY_LOOP && first > 0) {
        snprintf(why, n, "events 0..%ld missing", first - 1);
        rc = -1;
    }
    if (rc == 0 && must_to > must_from &&
        (first < 0 || (uint64_t)first > must_from || (uint64_t)prev + 1 < must_to)) {
        snprintf(why, n, "flush %u covered events %llu..%llu, read %ld..%ld", last, (unsigned long long)must_from,
                 (unsigned long long)must_to - 1, first, prev);
        rc = -1;
    }
    tracelog_reader_close(r);
    return rc;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tl-kill9-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char path[600];
    snprintf(path, sizeof path, "%s/log.ptl", dir);

    uint64_t rng = 0x6b696c6c39ull; /* fixed seed: the same kill delays every run */
    unsigned failures = 0, finished = 0, unopened = 0, by_config[4] = {0};
    unsigned long flushes_seen = 0;
    for (unsigned it = 0; it < ITERATIONS; it++) {
        const config *c = &configs[it % 4];
        unsigned k = 1 + (unsigned)(splitmix(&rng) % 40);
        useconds_t delay = (useconds_t)(splitmix(&rng) % 20001);
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) {
            perror("pipe");
            return 1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (pid == 0) {
            close(p[0]);
            child(c, k, path, p[1]);
        }
        close(p[1]);
        struct timespec ts = {0, (long)delay * 1000};
        nanosleep(&ts, NULL);
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        uint32_t last = 0, v;
        int closed = 0;
        while (read(p[0], &v, sizeof v) == (ssize_t)sizeof v) {
            if (v == CLOSED_MARK)
                closed = 1;
            else
                last = v;
        }
        close(p[0]);
        /* The same program in memory, up to the flush after the last one reported. */
        dry_run d;
        if (dry(c, k, closed ? UINT32_MAX : last + 1, &d) != 0) {
            fprintf(stderr, "FAIL %s k=%u: the in-memory run failed\n", c->name, k);
            failures++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
            fprintf(stderr, "FAIL %s k=%u: the child failed (exit %d)\n", c->name, k, WEXITSTATUS(status));
            failures++;
        } else if (last > d.nflush || (closed && !d.closed)) {
            fprintf(stderr, "FAIL %s k=%u: the child reported flush %u, the dry run had %u\n", c->name, k, last,
                    d.nflush);
            failures++;
        } else {
            char why[200];
            struct stat sb;
            if (stat(path, &sb) != 0 || sb.st_size < 64)
                unopened++;
            if (check(c, path, &d, last, closed, why, sizeof why) != 0) {
                fprintf(stderr, "FAIL %s k=%u, killed after %u us: %s\n", c->name, k, (unsigned)delay, why);
                failures++;
                char keep[700];
                snprintf(keep, sizeof keep, "%s/failed-%u.ptl", dir, it);
                if (rename(path, keep) == 0)
                    fprintf(stderr, "  log kept as %s\n", keep);
            }
        }
        finished += closed;
        flushes_seen += last;
        by_config[it % 4]++;
        free(d.at);
        unlink(path);
    }
    rmdir(dir);
    printf("kill -9: %u iterations (%u APPEND/zstd, %u APPEND/stored, %u UNTIL_FULL, %u LOOP), "
           "%u children finished before the kill, %u killed before the header was complete, "
           "%lu flushes reported in all, %u failures\n",
           ITERATIONS, by_config[0], by_config[1], by_config[2], by_config[3], finished, unopened, flushes_seen,
           failures);
    return failures ? 1 : 0;
}
