/*
 * I/O errors at the POSIX level (promise 3 of format-spec "Security and
 * durability promises"): a stream with log whose writes fail.
 *
 * Each case runs in a forked child with SIGXFSZ at its DEFAULT disposition
 * (exceeding RLIMIT_FSIZE kills a process that does not block it), which
 * reports what it saw through a pipe; the parent checks the report, that
 * the child exited normally (was not killed by SIGXFSZ), and reads the log
 * the child left with posix_trace_open.
 *
 *  - RLIMIT_FSIZE reached by an explicit posix_trace_flush (stream LOOP, log
 *    APPEND): flush returns EFBIG; posix_trace_get_status reports
 *    posix_stream_flush_error EFBIG once, then 0 (read and reset); the
 *    stream keeps working (events are still taken out of the stream, none
 *    lost); later flushes and shutdown return EFBIG; the file never exceeds
 *    the limit and reads back with every event of every completed flush,
 *    exactly, in order, and nothing else.
 *  - the same limit reached by the background flusher of the FLUSH policy:
 *    the program is not killed, the status reports EFBIG once; the dead log
 *    is not fed an ERROR event every flusher period.
 *  - the limit reached by the last writes of shutdown (final status, trailer),
 *    for limits from 1 byte past the synced size to past all that shutdown
 *    writes (about 65 limits): shutdown returns 0 or EFBIG, every synced
 *    event is in the log.
 *  - the limit reached when the log starts (create_withlog writes the
 *    header): create_withlog fails with EFBIG, the child lives.
 *  - the disk filling up under a log (the library's descriptor is replaced
 *    by /dev/full, whose writes fail with ENOSPC): flush returns ENOSPC, the
 *    status reports it once, what was written before reads back.
 *  - /dev/full as the log: create_withlog fails cleanly with ENOSPC (APPEND,
 *    UNTIL_FULL: the header cannot be written) or EINVAL (LOOP needs a
 *    regular file).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

#define DATA_LEN 64           /* bytes per event: sequence number, then bytes derived from it */
#define SEQ_NAME "faults:seq"
#define MAX_FLUSHES 4096

/* ---- events and files ------------------------------------------------------ */

static void payload_of(uint32_t seq, unsigned char *p)
{
    uint64_t x = seq * 0x9E3779B97F4A7C15ull + 1;
    memcpy(p, &seq, sizeof seq);
    for (size_t i = sizeof seq; i < DATA_LEN; i++) {
        x ^= x << 13; /* incompressible, so the log grows with every event */
        x ^= x >> 7;
        x ^= x << 17;
        p[i] = (unsigned char)x;
    }
}

static void record_seq(trace_event_id_t id, uint32_t seq)
{
    unsigned char p[DATA_LEN];
    payload_of(seq, p);
    posix_trace_event(id, p, sizeof p);
}

static char log_path[512];

static void make_path(const char *what)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(log_path, sizeof log_path, "%s/tl-posix-faults-%s-%d.ptl", tmp && *tmp ? tmp : "/tmp", what,
             (int)getpid());
}

static void set_fsize_limit(rlim_t limit)
{
    struct rlimit rl = {limit, RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        _exit(90);
}

static off_t file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? st.st_size : -1;
}

/* A stream with log on fd: stream policy sp, log policy APPEND, events of DATA_LEN bytes. */
static int create_log(int fd, int sp, trace_id_t *trid, trace_event_id_t *id)
{
    trace_attr_t a;
    pt_attr(&a, sp, 1u << 20, DATA_LEN);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    int e = posix_trace_create_withlog(0, &a, fd, trid);
    if (e)
        return e;
    if (posix_trace_eventid_open(SEQ_NAME, id) != 0 || posix_trace_start(*trid) != 0)
        _exit(91);
    return 0;
}

/*
 * What a log holds: the sequence numbers of its SEQ_NAME events, in order.
 * *exact is cleared if one of them does not carry exactly its payload.
 * Returns the posix_trace_open error.
 */
static int read_log(const char *path, uint32_t **seqs, size_t *n, int *exact)
{
    *seqs = NULL;
    *n = 0;
    *exact = 1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    trace_id_t pre;
    int e = posix_trace_open(fd, &pre);
    if (e) {
        close(fd);
        return e;
    }
    pt_events l = {0};
    CHECK_ERR(pt_read_all(pre, 0, &l), 0);
    *seqs = malloc((l.n + 1) * sizeof **seqs);
    if (!*seqs)
        TL_DIE("out of memory");
    trace_event_id_t seq_id = 0;
    int have_id = 0;
    for (size_t i = 0; i < l.n; i++) {
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
        uint32_t seq = 0;
        if (ev->len >= sizeof seq)
            memcpy(&seq, ev->data, sizeof seq);
        payload_of(seq, want);
        if (ev->len != DATA_LEN || memcmp(ev->data, want, DATA_LEN) != 0 ||
            ev->info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED)
            *exact = 0;
        (*seqs)[(*n)++] = seq;
    }
    pt_events_free(&l);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
    return 0;
}

/* seqs is 0, 1, ..., n-1. */
static int is_prefix(const uint32_t *seqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (seqs[i] != i)
            return 0;
    return 1;
}

/* ---- children ----------------------------------------------------------------- */

typedef struct report {
    int create_error;
    uint32_t flushes_ok;         /* completed flushes before the first failure */
    uint32_t covered;            /* events recorded before the last completed flush */
    uint32_t recorded_at_fail;   /* events recorded before the failed flush */
    int fail_error;              /* what the failed flush returned (0: none failed) */
    int status1, status2;        /* posix_stream_flush_error read twice after the failure */
    int later_flush;             /* a flush after the failure */
    int status3;                 /* flush_error after that flush */
    uint64_t delivered_before, delivered_after; /* around events traced after the failure */
    uint64_t lost_before, lost_after;
    int shutdown_error;
    long long synced_size;       /* log file size after a sync */
    long long size_at_end;       /* log file size after shutdown */
    uint64_t idle_delivered1, idle_delivered2; /* FLUSH: with nothing traced, some flusher periods apart */
} report;

/* Runs fn(arg, &report) in a child; returns 0 if it exited with 0 and reported, else prints why. */
static int run_child(void (*fn)(const void *arg, report *r), const void *arg, report *r)
{
    int p[2];
    if (pipe(p) != 0)
        TL_DIE("pipe: %s", strerror(errno));
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0)
        TL_DIE("fork: %s", strerror(errno));
    if (pid == 0) {
        close(p[0]);
        signal(SIGXFSZ, SIG_DFL); /* the default disposition: terminate */
        alarm(30);
        report rep;
        memset(&rep, 0, sizeof rep);
        fn(arg, &rep);
        _exit(write(p[1], &rep, sizeof rep) == (ssize_t)sizeof rep ? 0 : 92);
    }
    close(p[1]);
    memset(r, 0, sizeof *r);
    ssize_t got = read(p[0], r, sizeof *r);
    close(p[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && got == (ssize_t)sizeof *r;
    CHECK_MSG(ok, "child %s %d (SIGXFSZ is %d), report of %zd bytes",
              WIFSIGNALED(status) ? "killed by signal" : "exited with", WIFSIGNALED(status) ? WTERMSIG(status)
                                                                                          : WEXITSTATUS(status),
              SIGXFSZ, got);
    return ok ? 0 : -1;
}

#define BATCH 40
#define FSIZE_LIMIT 40000 /* not a multiple of anything the writer aligns to */

/* Batches of BATCH events, a posix_trace_flush after each, until one fails. */
static void child_explicit(const void *arg, report *r)
{
    (void)arg;
    int fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    set_fsize_limit(FSIZE_LIMIT);
    trace_id_t trid;
    trace_event_id_t id;
    if ((r->create_error = create_log(fd, POSIX_TRACE_LOOP, &trid, &id)))
        return;
    uint32_t seq = 0;
    while (seq < MAX_FLUSHES * BATCH) {
        for (int i = 0; i < BATCH; i++)
            record_seq(id, seq++);
        int e = posix_trace_flush(trid);
        if (e) {
            r->fail_error = e;
            r->recorded_at_fail = seq;
            break;
        }
        r->flushes_ok++;
        r->covered = seq;
    }
    struct posix_trace_status_info si;
    posix_trace_get_status(trid, &si);
    r->status1 = si.posix_stream_flush_error;
    posix_trace_get_status(trid, &si);
    r->status2 = si.posix_stream_flush_error;
    /* The stream keeps working: events are traced and taken out of the stream. */
    tracelog_trace_stats st;
    tracelog_trace_get_stats(trid, &st);
    r->delivered_before = st.events_delivered;
    r->lost_before = st.events_lost;
    for (int i = 0; i < BATCH; i++)
        record_seq(id, seq++);
    r->later_flush = posix_trace_flush(trid);
    tracelog_trace_get_stats(trid, &st);
    r->delivered_after = st.events_delivered;
    r->lost_after = st.events_lost;
    posix_trace_get_status(trid, &si);
    r->status3 = si.posix_stream_flush_error;
    r->shutdown_error = posix_trace_shutdown(trid);
    r->size_at_end = file_size(fd);
    close(fd);
}

static void test_efbig_explicit_flush(void)
{
    make_path("explicit");
    report r;
    if (run_child(child_explicit, NULL, &r) == 0) {
        CHECK_ERR(r.create_error, 0);
        CHECK_ERR(r.fail_error, EFBIG);
        CHECK_MSG(r.flushes_ok >= 2, "only %u flushes before the limit", r.flushes_ok);
        CHECK_ERR(r.status1, EFBIG); /* reported by the status ... */
        CHECK_ERR(r.status2, 0);     /* ... once: read and reset */
        CHECK_ERR(r.later_flush, EFBIG);
        CHECK_ERR(r.status3, 0);     /* the same dead log is not reported again */
        /* BATCH events, FLUSH_STOP of the failed flush, FLUSH_START/STOP of the later one (+ ERROR) */
        CHECK_MSG(r.delivered_after - r.delivered_before >= BATCH,
                  "the stream was not drained after the failure: %llu events taken out",
                  (unsigned long long)(r.delivered_after - r.delivered_before));
        CHECK_EQ(r.lost_after, r.lost_before);
        CHECK_ERR(r.shutdown_error, EFBIG);
        CHECK_MSG(r.size_at_end > 0 && r.size_at_end <= FSIZE_LIMIT, "log of %lld bytes, limit %d",
                  r.size_at_end, FSIZE_LIMIT);
    }
    uint32_t *seqs;
    size_t n;
    int exact;
    CHECK_ERR(read_log(log_path, &seqs, &n, &exact), 0);
    CHECK_MSG(exact, "an event came back altered");
    CHECK_MSG(is_prefix(seqs, n), "events are not 0, 1, 2, ...");
    CHECK_MSG(n >= r.covered, "%zu events in the log, %u were flushed", n, r.covered);
    CHECK_MSG(n <= r.recorded_at_fail, "%zu events in the log, only %u recorded before the failure", n,
              r.recorded_at_fail);
    free(seqs);
    unlink(log_path);
}

/* The FLUSH policy: the background flusher writes the log; no explicit flush until the error shows. */
static void child_flusher(const void *arg, report *r)
{
    (void)arg;
    int fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    set_fsize_limit(FSIZE_LIMIT);
    trace_id_t trid;
    trace_event_id_t id;
    if ((r->create_error = create_log(fd, POSIX_TRACE_FLUSH, &trid, &id)))
        return;
    struct posix_trace_status_info si = {0};
    struct timespec pause = {0, 1000000};
    uint32_t seq = 0;
    /* Bounded by the child's alarm: the flusher must get to the limit eventually. */
    while (si.posix_stream_flush_error == 0) {
        for (int i = 0; i < BATCH; i++)
            record_seq(id, seq++);
        nanosleep(&pause, NULL);
        posix_trace_get_status(trid, &si);
    }
    r->status1 = si.posix_stream_flush_error;
    r->recorded_at_fail = seq;
    /* More events for the flusher to take to the dead log, then a few flusher periods. */
    for (int i = 0; i < BATCH; i++)
        record_seq(id, seq++);
    /* Wait until the flusher has taken them (on a loaded machine that can take
       many periods), then let a few more periods pass with nothing traced. */
    struct timespec periods = {0, 20000000};
    tracelog_trace_stats st;
    for (int i = 0; i < 250; i++) {
        nanosleep(&periods, NULL);
        tracelog_trace_get_stats(trid, &st);
        if (st.events_buffered == 0)
            break;
    }
    r->idle_delivered1 = st.events_delivered;
    for (int i = 0; i < 5; i++)
        nanosleep(&periods, NULL);
    tracelog_trace_get_stats(trid, &st);
    r->idle_delivered2 = st.events_delivered;
    posix_trace_get_status(trid, &si);
    r->status2 = si.posix_stream_flush_error;
    r->later_flush = posix_trace_flush(trid);
    r->shutdown_error = posix_trace_shutdown(trid);
    r->size_at_end = file_size(fd);
    close(fd);
}

static void test_efbig_background_flusher(void)
{
    make_path("flusher");
    report r;
    if (run_child(child_flusher, NULL, &r) == 0) {
        CHECK_ERR(r.create_error, 0);
        CHECK_ERR(r.status1, EFBIG);
        CHECK_ERR(r.status2, 0);
        /* Nothing traced between the two snapshots: a dead log must not breed ERROR events. */
        CHECK_EQ(r.idle_delivered2, r.idle_delivered1);
        CHECK_ERR(r.later_flush, EFBIG);
        CHECK_ERR(r.shutdown_error, EFBIG);
        CHECK_MSG(r.size_at_end > 0 && r.size_at_end <= FSIZE_LIMIT, "log of %lld bytes, limit %d",
                  r.size_at_end, FSIZE_LIMIT);
    }
    /* FLUSH may drop events when the stream fills: increasing, exact, nothing recorded after the error. */
    uint32_t *seqs;
    size_t n;
    int exact;
    CHECK_ERR(read_log(log_path, &seqs, &n, &exact), 0);
    CHECK_MSG(exact, "an event came back altered");
    int increasing = 1;
    for (size_t i = 1; i < n; i++)
        increasing &= seqs[i] > seqs[i - 1];
    CHECK_MSG(increasing, "sequence numbers do not increase");
    CHECK_MSG(n == 0 || seqs[n - 1] < r.recorded_at_fail, "an event recorded after the failure is in the log");
    free(seqs);
    unlink(log_path);
}

#define SYNCED 300

/* SYNCED events made durable, then the limit set `extra` bytes past the file's size, then shutdown. */
static void child_shutdown(const void *arg, report *r)
{
    rlim_t extra = *(const rlim_t *)arg;
    int fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    trace_id_t trid;
    trace_event_id_t id;
    if ((r->create_error = create_log(fd, POSIX_TRACE_LOOP, &trid, &id)))
        return;
    for (uint32_t seq = 0; seq < SYNCED; seq++)
        record_seq(id, seq);
    posix_trace_stop(trid); /* its STOP event goes out with the sync: shutdown has no event left */
    r->fail_error = tracelog_trace_sync(trid);
    r->covered = SYNCED;
    r->synced_size = file_size(fd);
    set_fsize_limit(extra == RLIM_INFINITY ? RLIM_INFINITY : (rlim_t)r->synced_size + extra);
    r->shutdown_error = posix_trace_shutdown(trid);
    r->size_at_end = file_size(fd);
    close(fd);
}

static void test_efbig_at_shutdown(void)
{
    make_path("shutdown");
    /* How many bytes shutdown writes without a limit: the sweep covers 1 byte to all of them. */
    rlim_t extra = RLIM_INFINITY;
    report r;
    if (run_child(child_shutdown, &extra, &r) != 0)
        return;
    CHECK_ERR(r.shutdown_error, 0);
    rlim_t written = (rlim_t)(r.size_at_end - r.synced_size);
    CHECK_MSG(written > 0, "shutdown wrote nothing");
    rlim_t step = written / 64 + 1;
    unsigned killed = 0, failed = 0, clean = 0;
    for (extra = 1; extra <= written + step; extra += step) {
        tl_test_context("limit %u bytes past the synced log", (unsigned)extra);
        if (run_child(child_shutdown, &extra, &r) != 0) {
            killed++;
            continue;
        }
        CHECK_ERR(r.create_error, 0);
        CHECK_ERR(r.fail_error, 0);
        CHECK_MSG(r.shutdown_error == 0 || r.shutdown_error == EFBIG, "shutdown: %s",
                  pt_errname(r.shutdown_error));
        failed += r.shutdown_error != 0;
        clean += r.shutdown_error == 0;
        uint32_t *seqs;
        size_t n;
        int exact;
        CHECK_ERR(read_log(log_path, &seqs, &n, &exact), 0);
        CHECK_MSG(exact && n == SYNCED && is_prefix(seqs, n), "%zu of %d synced events, exact %d", n, SYNCED,
                  exact);
        free(seqs);
    }
    tl_test_context(NULL);
    printf("shutdown over the limit: %u children returned EFBIG, %u closed cleanly, %u killed\n", failed, clean,
           killed);
    CHECK_MSG(failed > 0 && clean > 0, "the sweep must cover limits that cut the close and limits that do not");
    unlink(log_path);
}

/* The limit below the header: create_withlog fails, the program lives. */
static void child_create(const void *arg, report *r)
{
    rlim_t limit = *(const rlim_t *)arg;
    int fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    set_fsize_limit(limit);
    trace_id_t trid;
    trace_event_id_t id;
    r->create_error = create_log(fd, POSIX_TRACE_LOOP, &trid, &id);
    if (!r->create_error)
        r->shutdown_error = posix_trace_shutdown(trid);
    r->size_at_end = file_size(fd);
    close(fd);
}

static void test_efbig_at_create(void)
{
    make_path("create");
    static const rlim_t limits[] = {0, 1, 40};
    for (size_t i = 0; i < sizeof limits / sizeof *limits; i++) {
        tl_test_context("RLIMIT_FSIZE %u", (unsigned)limits[i]);
        report r;
        if (run_child(child_create, &limits[i], &r) == 0) {
            CHECK_ERR(r.create_error, EFBIG);
            CHECK_MSG(r.size_at_end <= (long long)limits[i], "file of %lld bytes", r.size_at_end);
        }
    }
    tl_test_context(NULL);
    unlink(log_path);
}

/* The library's own descriptor of the log at path (it keeps a duplicate of the caller's). */
static int library_fd(int own, const char *path)
{
    struct stat want, st;
    if (stat(path, &want) != 0)
        return -1;
    for (int fd = 3; fd < 1024; fd++)
        if (fd != own && fstat(fd, &st) == 0 && st.st_dev == want.st_dev && st.st_ino == want.st_ino)
            return fd;
    return -1;
}

/* The disk fills up: the library's descriptor is replaced by /dev/full after a few flushes. */
static void child_enospc(const void *arg, report *r)
{
    (void)arg;
    int fd = open(log_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    trace_id_t trid;
    trace_event_id_t id;
    if ((r->create_error = create_log(fd, POSIX_TRACE_LOOP, &trid, &id)))
        return;
    uint32_t seq = 0;
    for (int f = 0; f < 3; f++) {
        for (int i = 0; i < BATCH; i++)
            record_seq(id, seq++);
        if (posix_trace_flush(trid) != 0)
            return;
        r->flushes_ok++;
        r->covered = seq;
    }
    int lib = library_fd(fd, log_path), full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (lib < 0 || full < 0 || dup3(full, lib, O_CLOEXEC) != lib)
        _exit(93);
    close(full);
    for (int i = 0; i < BATCH; i++)
        record_seq(id, seq++);
    r->recorded_at_fail = seq;
    r->fail_error = posix_trace_flush(trid);
    struct posix_trace_status_info si;
    posix_trace_get_status(trid, &si);
    r->status1 = si.posix_stream_flush_error;
    posix_trace_get_status(trid, &si);
    r->status2 = si.posix_stream_flush_error;
    r->later_flush = posix_trace_flush(trid);
    r->shutdown_error = posix_trace_shutdown(trid);
    close(fd);
}

static void test_enospc_during_flush(void)
{
    make_path("enospc");
    report r;
    if (run_child(child_enospc, NULL, &r) == 0) {
        CHECK_ERR(r.create_error, 0);
        CHECK_EQ(r.flushes_ok, 3);
        CHECK_ERR(r.fail_error, ENOSPC);
        CHECK_ERR(r.status1, ENOSPC);
        CHECK_ERR(r.status2, 0);
        CHECK_ERR(r.later_flush, ENOSPC);
        CHECK_ERR(r.shutdown_error, ENOSPC);
    }
    uint32_t *seqs;
    size_t n;
    int exact;
    CHECK_ERR(read_log(log_path, &seqs, &n, &exact), 0);
    CHECK_MSG(exact && is_prefix(seqs, n) && n == r.covered, "%zu events (%u flushed), exact %d", n, r.covered,
              exact);
    free(seqs);
    unlink(log_path);
}

/* /dev/full as the log: refused at creation, with nothing left behind. */
static void test_dev_full(void)
{
    int fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (fd < 0) {
        printf("no /dev/full: skipped\n");
        return;
    }
    static const int policies[] = {POSIX_TRACE_APPEND, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_LOOP};
    static const int want[] = {ENOSPC, ENOSPC, EINVAL};
    for (int round = 0; round < 2; round++) /* twice: nothing of a failed creation stays in use */
        for (size_t i = 0; i < 3; i++) {
            trace_attr_t a;
            pt_attr(&a, 0, 0, 0);
            posix_trace_attr_setlogfullpolicy(&a, policies[i]);
            trace_id_t trid;
            int e = posix_trace_create_withlog(0, &a, fd, &trid);
            CHECK_ERR(e, want[i]);
            if (!e)
                posix_trace_shutdown(trid);
        }
    /* All TRACE_SYS_MAX streams can still be created. */
    trace_id_t ids[TRACE_SYS_MAX];
    size_t made = 0;
    while (made < TRACE_SYS_MAX && posix_trace_create(0, NULL, &ids[made]) == 0)
        made++;
    CHECK_EQ(made, TRACE_SYS_MAX);
    for (size_t i = 0; i < made; i++)
        pt_shutdown(ids[i]);
    close(fd);
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 240 : 60);
    PT_RUN(test_efbig_explicit_flush);
    PT_RUN(test_efbig_background_flusher);
    PT_RUN(test_efbig_at_shutdown);
    PT_RUN(test_efbig_at_create);
    PT_RUN(test_enospc_during_flush);
    PT_RUN(test_dev_full);
    return pt_finish();
}
