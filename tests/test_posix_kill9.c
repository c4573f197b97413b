/*
 * kill -9 at the POSIX level (promise 2 of format-spec "Security and
 * durability promises"): a child traces into a log made with
 * posix_trace_create_withlog, calls posix_trace_flush (or
 * tracelog_trace_sync) after every K events and reports through a pipe how
 * many events each completed flush covered; the parent SIGKILLs it at a
 * moment drawn from a seeded generator (0..20 ms after its first flush was
 * reported; every tenth iteration at once, maybe before any flush) and
 * reads the log with posix_trace_open.
 *
 * Checked after each kill, with C the events covered by the last flush the
 * child reported:
 *  - once a flush was reported, the log opens;
 *  - the child's events come back as 0, 1, 2, ..., n-1: every one exactly
 *    as traced (payload, not truncated), in order, none twice, no hole,
 *    nothing invented (a killed process loses at most the end);
 *  - n >= C: every event a completed flush covered is there;
 *  - a child that got to the end and shut down left every event.
 * Iterations vary the stream policy (LOOP, or FLUSH with its background
 * flusher also writing), the flush call (posix_trace_flush, or
 * tracelog_trace_sync every fourth iteration) and K (1..64).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

#define ITERATIONS 100
#define NEVENTS 200000        /* more than a child can trace before it is killed */
#define DATA_LEN 24
#define SEQ_NAME "kill9:seq"
#define DONE_MARK UINT32_MAX  /* reported after a clean shutdown */

static uint64_t rng_state = 0x5EEDF00Dull;

static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void payload_of(uint32_t seq, unsigned char *p)
{
    uint64_t a = seq * 0x9E3779B97F4A7C15ull, b = ~a ^ seq;
    memcpy(p, &seq, 4);
    memcpy(p + 4, &a, 8);
    memcpy(p + 12, &b, 8);
    memcpy(p + 20, "k9!", 4);
}

typedef struct config {
    int stream_policy;
    int sync;    /* tracelog_trace_sync instead of posix_trace_flush */
    unsigned k;  /* events between flushes */
    unsigned delay_us;
} config;

static void child(const config *c, const char *path, int report)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    trace_attr_t a;
    pt_attr(&a, c->stream_policy, 1u << 20, DATA_LEN);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    trace_id_t trid;
    trace_event_id_t id;
    if (fd < 0 || posix_trace_create_withlog(0, &a, fd, &trid) != 0 ||
        posix_trace_eventid_open(SEQ_NAME, &id) != 0 || posix_trace_start(trid) != 0)
        _exit(90);
    for (uint32_t seq = 0; seq < NEVENTS; seq++) {
        unsigned char p[DATA_LEN];
        payload_of(seq, p);
        posix_trace_event(id, p, sizeof p);
        if ((seq + 1) % c->k != 0)
            continue;
        if ((c->sync ? tracelog_trace_sync(trid) : posix_trace_flush(trid)) != 0)
            _exit(91);
        uint32_t covered = seq + 1;
        if (write(report, &covered, sizeof covered) != (ssize_t)sizeof covered)
            _exit(92);
    }
    if (posix_trace_shutdown(trid) != 0)
        _exit(93);
    uint32_t done = DONE_MARK;
    _exit(write(report, &done, sizeof done) == (ssize_t)sizeof done ? 0 : 94);
}

typedef struct readout {
    int open_error;
    size_t n;          /* the child's events: 0 .. n-1 when ok */
    int ok;            /* exact, in order, no hole, nothing else */
    char why[160];
} readout;

static void read_log(const char *path, readout *out)
{
    memset(out, 0, sizeof *out);
    out->ok = 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        out->open_error = errno;
        return;
    }
    trace_id_t pre;
    out->open_error = posix_trace_open(fd, &pre);
    if (out->open_error) {
        close(fd);
        return;
    }
    pt_events l = {0};
    int e = pt_read_all(pre, 0, &l);
    if (e) {
        out->ok = 0;
        snprintf(out->why, sizeof out->why, "getnext: %s", pt_errname(e));
    }
    trace_event_id_t seq_id = 0;
    int have_id = 0;
    for (size_t i = 0; i < l.n && out->ok; i++) {
        const pt_event *ev = &l.ev[i];
        if (!have_id) {
            char name[TRACE_EVENT_NAME_MAX];
            if (posix_trace_eventid_get_name(pre, ev->info.posix_event_id, name) != 0 ||
                strcmp(name, SEQ_NAME) != 0)
                continue;
            seq_id = ev->info.posix_event_id;
            have_id = 1;
        }
        if (ev->info.posix_event_id != seq_id)
            continue;
        unsigned char want[DATA_LEN];
        payload_of((uint32_t)out->n, want);
        if (ev->len != DATA_LEN || memcmp(ev->data, want, DATA_LEN) != 0 ||
            ev->info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
            uint32_t got = 0;
            if (ev->len >= 4)
                memcpy(&got, ev->data, 4);
            out->ok = 0;
            snprintf(out->why, sizeof out->why, "event %zu of the log is not event %zu as traced (seq %u, %zu bytes)",
                     out->n, out->n, got, ev->len);
            break;
        }
        out->n++;
    }
    pt_events_free(&l);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
}

static const char *policy_name(int p) { return p == POSIX_TRACE_FLUSH ? "FLUSH" : "LOOP"; }

static void test_kill9(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/tl-posix-kill9-%d.ptl", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    unsigned killed = 0, finished = 0, no_flush = 0;
    uint64_t covered_total = 0, read_total = 0, beyond_total = 0;
    for (unsigned it = 0; it < ITERATIONS; it++) {
        config c = {it % 2 ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP, it % 4 == 3, 1 + (unsigned)(rnd() % 64),
                    (unsigned)(rnd() % 20001)};
        if (c.sync)
            c.k += 32; /* a sync is an fdatasync: fewer of them */
        tl_test_context("iteration %u: stream %s, %s every %u events, kill after %u us", it,
                        policy_name(c.stream_policy), c.sync ? "tracelog_trace_sync" : "posix_trace_flush", c.k,
                        c.delay_us);
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0)
            TL_DIE("pipe: %s", strerror(errno));
        fflush(NULL);
        pid_t pid = fork();
        if (pid < 0)
            TL_DIE("fork: %s", strerror(errno));
        if (pid == 0) {
            close(p[0]);
            child(&c, path, p[1]);
        }
        close(p[1]);
        /* Mostly killed after its first flush (waited for, so that no timing decides it), else at once. */
        uint32_t covered = 0, v;
        int early = it % 10 == 9;
        if (!early && read(p[0], &covered, sizeof covered) != (ssize_t)sizeof covered)
            covered = 0;
        struct timespec d = {0, early ? 0 : (long)c.delay_us * 1000};
        nanosleep(&d, NULL);
        kill(pid, SIGKILL);
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        /* Last complete report: 4-byte writes to a pipe are atomic. */
        int done = 0;
        while (read(p[0], &v, sizeof v) == (ssize_t)sizeof v) {
            if (v == DONE_MARK)
                done = 1;
            else
                covered = v;
        }
        close(p[0]);
        if (!CHECK_MSG(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                       "child exited with %d", WEXITSTATUS(status)))
            continue;
        killed += !done;
        finished += done;
        no_flush += covered == 0 && !done;

        readout r;
        read_log(path, &r);
        if (covered == 0 && !done) {
            /* Killed before its first flush: the log may hold nothing yet, but never garbage. */
            CHECK_MSG(r.open_error != 0 || r.ok, "%s", r.why);
            continue;
        }
        if (!CHECK_MSG(r.open_error == 0, "posix_trace_open: %s after a flush of %u events",
                       pt_errname(r.open_error), covered))
            continue;
        CHECK_MSG(r.ok, "%s", r.why);
        CHECK_MSG(r.n >= covered, "%zu events in the log, the last completed flush covered %u", r.n, covered);
        if (done)
            CHECK_EQ(r.n, NEVENTS);
        covered_total += covered;
        read_total += r.n;
        beyond_total += r.n - (r.n >= covered ? covered : r.n);
    }
    tl_test_context(NULL);
    unlink(path);
    printf("%u iterations: %u killed (%u before their first flush), %u finished; %llu events covered by "
           "flushes, %llu read back (%llu beyond the last reported flush)\n",
           ITERATIONS, killed, no_flush, finished, (unsigned long long)covered_total,
           (unsigned long long)read_total, (unsigned long long)beyond_total);
    CHECK_MSG(killed - no_flush >= ITERATIONS * 9 / 10 - finished, "only %u kills after a flush",
              killed - no_flush);
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 240 : 60);
    PT_RUN(test_kill9);
    return pt_finish();
}
