/*
 * I/O faults (promise 3, native API part): the N-th write or sync of the
 * writer fails, for N = 1, 2, ... until the program runs to its end.
 *
 * Faults: a write fails with ENOSPC, a write fails with EIO, a write stores
 * half of its bytes and then fails with ENOSPC (what a full disk does to a
 * large write), a sync (fdatasync) fails with EIO. For APPEND, UNTIL_FULL
 * and LOOP logs. Checked each time:
 *  - the call that hit the fault returns TRACELOG_E_IO (create: through its
 *    error record), and tracelog_writer_last_error() gives TRACELOG_E_IO with
 *    the injected errno;
 *  - the writer stays poisoned: append, define_event, set_status, flush,
 *    sync and close all return TRACELOG_E_IO afterwards (a sync that failed
 *    is never followed by one that claims success), and the writer never
 *    writes again;
 *  - the file as written opens (once create has succeeded) and holds exactly
 *    the events of every chunk written before the failure, in order (LOOP:
 *    ending with the last one written, without a hole).
 *
 * Then a real file that cannot grow: a child process with RLIMIT_FSIZE and
 * SIGXFSZ ignored (the library installs no signal handler; the POSIX layer
 * must see to SIGXFSZ) writes until the limit: the writer reports
 * TRACELOG_E_IO with EFBIG and the file reads back with every event written
 * before.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracelog.h"
#include "writer/io.h"

#define NEVENTS 400
#define T0 1700000000000000000ull
#define MAX_PAYLOAD 300

enum fault { WRITE_ENOSPC, WRITE_EIO, WRITE_SHORT, SYNC_EIO, NFAULTS };
static const char *const fault_names[NFAULTS] = {"write ENOSPC", "write EIO", "short write + ENOSPC",
                                                 "fdatasync EIO"};
static const int fault_errno[NFAULTS] = {ENOSPC, EIO, ENOSPC, EIO};

static int failures;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (!(cond)) {                                                     \
            if (failures++ < 10) {                                         \
                fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
                fprintf(stderr, __VA_ARGS__);                              \
                fputc('\n', stderr);                                       \
            }                                                              \
            return -1;                                                     \
        }                                                                  \
    } while (0)

static uint8_t payload_buf[MAX_PAYLOAD];

static tracelog_event make_event(unsigned i, uint8_t *payload)
{
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.timestamp_ns = T0 + (uint64_t)i * 1000;
    ev.event_id = 1 + i % 3;
    ev.pid = 100 + i / 50;
    ev.tid = 7000 + i % 2;
    ev.address = 0x400000 + (uint64_t)(i % 13) * 8;
    ev.payload_len = (i * 37) % (MAX_PAYLOAD + 1);
    for (uint32_t k = 0; k < ev.payload_len; k++)
        payload[k] = (uint8_t)(i ^ (k * 13));
    ev.payload = payload;
    return ev;
}

/* ---- a disk that fails ----------------------------------------------------- */

typedef struct faulty {
    uint8_t *img;
    size_t len, cap;
    enum fault fault;
    unsigned fail_at, writes, syncs;
    int failed;
    unsigned writes_after; /* writes attempted after the failure */
} faulty;

static void put(faulty *f, uint64_t off, const void *buf, size_t n)
{
    if (off + n > f->cap) {
        size_t cap = f->cap ? f->cap : 65536;
        while (cap < off + n)
            cap *= 2;
        f->img = realloc(f->img, cap);
        if (!f->img)
            abort();
        memset(f->img + f->cap, 0, cap - f->cap);
        f->cap = cap;
    }
    memcpy(f->img + off, buf, n);
    if (off + n > f->len)
        f->len = (size_t)(off + n);
}

static int f_write(void *ctx, const void *buf, size_t n, uint64_t off)
{
    faulty *f = ctx;
    if (f->failed)
        f->writes_after++;
    if (f->fault != SYNC_EIO && ++f->writes == f->fail_at) {
        f->failed = 1;
        if (f->fault == WRITE_SHORT)
            put(f, off, buf, n / 2);
        return fault_errno[f->fault];
    }
    put(f, off, buf, n); /* a later write succeeds: the writer must not try */
    return 0;
}

static int f_sync(void *ctx)
{
    faulty *f = ctx;
    if (f->fault == SYNC_EIO && ++f->syncs == f->fail_at) {
        f->failed = 1;
        return EIO;
    }
    return 0;
}

static int f_truncate(void *ctx, uint64_t len)
{
    faulty *f = ctx;
    if (len < f->len)
        f->len = (size_t)len;
    return 0;
}

/* ---- the program ------------------------------------------------------------ */

static void options(tracelog_policy policy, tracelog_writer_options *opt, tracelog_metadata *meta)
{
    tracelog_writer_options_init(opt);
    opt->log_policy = policy;
    opt->chunk_size = 4096;
    if (policy == TRACELOG_POLICY_UNTIL_FULL)
        opt->log_max_size = 24 * 1024;
    if (policy == TRACELOG_POLICY_LOOP) {
        opt->log_max_size = 16 * 1024;
        opt->segment_size = 4096;
    }
    tracelog_metadata_init(meta);
    strcpy(meta->trace_name, "fault-io");
}

static int ok_or_full(tracelog_status st) { return st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL; }

/* The writer is poisoned with e: every call says so, nothing is written. */
static int check_poisoned(tracelog_writer *w, faulty *f, int e)
{
    tracelog_error err;
    tracelog_writer_last_error(w, &err);
    CHECK(err.code == TRACELOG_E_IO && err.sys_errno == e, "last_error %s errno %d, injected %d",
          tracelog_status_name(err.code), err.sys_errno, e);
    CHECK(err.message[0] != 0, "empty message");
    tracelog_event ev = make_event(0, payload_buf);
    tracelog_log_status st = {0};
    tracelog_status r;
    CHECK((r = tracelog_writer_append(w, &ev)) == TRACELOG_E_IO, "append after the fault: %s", tracelog_status_name(r));
    CHECK((r = tracelog_writer_define_event(w, 9, "nine")) == TRACELOG_E_IO, "define_event after the fault: %s",
          tracelog_status_name(r));
    CHECK((r = tracelog_writer_set_status(w, &st)) == TRACELOG_E_IO, "set_status after the fault: %s",
          tracelog_status_name(r));
    CHECK((r = tracelog_writer_flush(w)) == TRACELOG_E_IO, "flush after the fault: %s", tracelog_status_name(r));
    CHECK((r = tracelog_writer_sync(w)) == TRACELOG_E_IO, "sync after the fault: %s", tracelog_status_name(r));
    tracelog_writer_last_error(w, &err);
    CHECK(err.sys_errno == e, "the error changed to errno %d", err.sys_errno);
    CHECK(f->writes_after == 0, "%u writes after the fault", f->writes_after);
    return 0;
}

/* The image holds events [.., end) of the chunks written, min_end <= end <= max_end. */
static int check_image(tracelog_policy policy, const faulty *f, uint64_t min_end, uint64_t max_end,
                       uint64_t overruns)
{
    int fd = memfd_create("fault-image", MFD_CLOEXEC);
    if (fd < 0 || (f->len && write(fd, f->img, f->len) != (ssize_t)f->len)) {
        perror("memfd");
        exit(1);
    }
    tracelog_reader *r;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open(fd, NULL, &r, &err);
    if (st != TRACELOG_OK)
        close(fd);
    CHECK(st == TRACELOG_OK, "open: %s (%s)", tracelog_status_name(st), err.message);
    int rc = 0;
    long prev = -1, first = -1;
    tracelog_event ev;
    uint8_t want_payload[MAX_PAYLOAD];
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        long idx = (long)((ev.timestamp_ns - T0) / 1000);
        tracelog_event want = make_event((unsigned)idx, want_payload);
        if (idx < 0 || idx >= NEVENTS || want.timestamp_ns != ev.timestamp_ns || want.payload_len != ev.payload_len ||
            memcmp(want.payload, ev.payload, ev.payload_len) != 0 || want.pid != ev.pid || want.tid != ev.tid ||
            want.address != ev.address || want.event_id != ev.event_id || (prev >= 0 && idx != prev + 1)) {
            rc = -1;
            break;
        }
        if (first < 0)
            first = idx;
        prev = idx;
    }
    tracelog_reader_close(r);
    close(fd);
    CHECK(rc == 0 && st == TRACELOG_END, "an altered, invented or misplaced event (after event %ld)", prev);
    CHECK((uint64_t)(prev + 1) >= min_end && (uint64_t)(prev + 1) <= max_end,
          "read up to event %ld, %llu..%llu were written", prev, (unsigned long long)min_end,
          (unsigned long long)max_end);
    if (policy == TRACELOG_POLICY_LOOP)
        CHECK(min_end == 0 || (first >= 0 && (uint64_t)first <= overruns), "LOOP: first event %ld, %llu overwritten",
              first, (unsigned long long)overruns);
    else
        CHECK(min_end == 0 || first == 0, "first event read: %ld", first);
    return 0;
}

/* One run; returns 1 if the fault was hit, 0 if the program ran to its end, -1 on failure. */
static int run(tracelog_policy policy, enum fault fault, unsigned n)
{
    faulty f;
    memset(&f, 0, sizeof f);
    f.fault = fault;
    f.fail_at = n;
    tl_io io = {f_write, f_sync, f_truncate, &f, 1, NULL};
    tracelog_writer_options opt;
    tracelog_metadata meta;
    options(policy, &opt, &meta);
    tracelog_writer *w = NULL;
    tracelog_error err;
    int e = fault_errno[fault];
    int rc = 0;
    tracelog_status st = tl_writer_create_io(&io, &meta, &opt, &w, &err);
    if (st != TRACELOG_OK) {
        CHECK(f.failed, "create failed without a fault: %s", tracelog_status_name(st));
        CHECK(st == TRACELOG_E_IO && err.code == TRACELOG_E_IO && err.sys_errno == e,
              "create: %s, error record %s errno %d", tracelog_status_name(st), tracelog_status_name(err.code),
              err.sys_errno);
        free(f.img);
        return 1;
    }
    st = tracelog_writer_define_event(w, 1, "one");
    for (unsigned i = 0; i < NEVENTS && ok_or_full(st); i++) {
        tracelog_event ev = make_event(i, payload_buf);
        st = tracelog_writer_append(w, &ev);
        if (ok_or_full(st) && i % 23 == 22)
            st = tracelog_writer_flush(w);
        if (ok_or_full(st) && i % 41 == 40)
            st = tracelog_writer_sync(w);
    }
    if (!ok_or_full(st)) {
        CHECK(f.failed, "a call failed without a fault: %s", tracelog_status_name(st));
        CHECK(st == TRACELOG_E_IO, "the call that hit the fault returned %s", tracelog_status_name(st));
        rc = check_poisoned(w, &f, e);
        tracelog_log_status ws;
        tracelog_writer_get_status(w, &ws);
        st = tracelog_writer_close(w, &err);
        CHECK(st == TRACELOG_E_IO && err.sys_errno == e, "close after the fault: %s errno %d",
              tracelog_status_name(st), err.sys_errno);
        CHECK(f.writes_after == 0, "close wrote after the fault");
        if (rc == 0)
            rc = check_image(policy, &f, ws.events_written, ws.events_written, ws.log_overruns);
        free(f.img);
        return rc ? -1 : 1;
    }
    tracelog_log_status ws;
    tracelog_writer_get_status(w, &ws);
    st = tracelog_writer_close(w, &err);
    if (f.failed) { /* the fault hit the close */
        CHECK(st == TRACELOG_E_IO && err.code == TRACELOG_E_IO && err.sys_errno == e, "close: %s errno %d",
              tracelog_status_name(st), err.sys_errno);
        CHECK(f.writes_after == 0, "close wrote after the fault");
        /* close flushed what was buffered first, then failed: any end between. */
        rc = check_image(policy, &f, ws.events_written, NEVENTS, UINT64_MAX);
        free(f.img);
        return rc ? -1 : 1;
    }
    CHECK(st == TRACELOG_OK, "close: %s", tracelog_status_name(st));
    free(f.img);
    return 0;
}

/* ---- RLIMIT_FSIZE on a real file ------------------------------------------------ */

static int fsize_child(const char *path, rlim_t limit, int report)
{
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {limit, limit};
    if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
        return 10;
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return 11;
    tracelog_writer_options opt;
    tracelog_metadata meta;
    options(TRACELOG_POLICY_APPEND, &opt, &meta);
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(fd, &meta, &opt, &w, &err) != TRACELOG_OK)
        return 12;
    tracelog_status st = TRACELOG_OK;
    for (unsigned i = 0; st == TRACELOG_OK; i++) {
        tracelog_event ev = make_event(i % NEVENTS, payload_buf);
        ev.timestamp_ns = T0 + (uint64_t)i * 1000;
        st = tracelog_writer_append(w, &ev);
        if (st == TRACELOG_OK && i % 10 == 9)
            st = tracelog_writer_flush(w);
    }
    tracelog_writer_last_error(w, &err);
    tracelog_log_status ws;
    tracelog_writer_get_status(w, &ws);
    int out[3] = {(int)st, err.sys_errno, (int)ws.events_written};
    if (write(report, out, sizeof out) != (ssize_t)sizeof out)
        return 13;
    tracelog_writer_close(w, NULL);
    return 0;
}

static int fsize_test(void)
{
    const char *tmp = getenv("TMPDIR");
    char path[512];
    snprintf(path, sizeof path, "%s/tl-fault-fsize-%d.ptl", tmp && *tmp ? tmp : "/tmp", (int)getpid());
    const rlim_t limit = 50000; /* not a multiple of anything the writer aligns to */
    int p[2];
    if (pipe(p) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        _exit(fsize_child(path, limit, p[1]));
    }
    close(p[1]);
    int out[3] = {0, 0, 0}, status;
    ssize_t got = read(p[0], out, sizeof out);
    close(p[0]);
    waitpid(pid, &status, 0);
    int rc = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != (ssize_t)sizeof out) {
        fprintf(stderr, "FAIL RLIMIT_FSIZE: child %s %d\n", WIFSIGNALED(status) ? "killed by signal" : "exit",
                WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        unlink(path);
        failures++;
        return -1;
    }
    if (out[0] != TRACELOG_E_IO || out[1] != EFBIG) {
        fprintf(stderr, "FAIL RLIMIT_FSIZE: writer returned %s errno %d, want TRACELOG_E_IO EFBIG\n",
                tracelog_status_name((tracelog_status)out[0]), out[1]);
        failures++;
        rc = -1;
    }
    struct stat sb;
    if (rc == 0 && (stat(path, &sb) != 0 || (rlim_t)sb.st_size > limit)) {
        fprintf(stderr, "FAIL RLIMIT_FSIZE: file size %lld over the limit\n", (long long)sb.st_size);
        failures++;
        rc = -1;
    }
    tracelog_reader *r;
    tracelog_error err;
    if (rc == 0 && tracelog_reader_open_path(path, NULL, &r, &err) != TRACELOG_OK) {
        fprintf(stderr, "FAIL RLIMIT_FSIZE: open: %s\n", err.message);
        failures++;
        rc = -1;
    } else if (rc == 0) {
        tracelog_event ev;
        int n = 0;
        while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
            if (ev.timestamp_ns != T0 + (uint64_t)n * 1000)
                break;
            n++;
        }
        tracelog_reader_close(r);
        if (n != out[2]) {
            fprintf(stderr, "FAIL RLIMIT_FSIZE: %d events read in order, %d written\n", n, out[2]);
            failures++;
            rc = -1;
        } else {
            printf("RLIMIT_FSIZE %llu: TRACELOG_E_IO/EFBIG after %d events, file of %lld bytes reads back whole\n",
                   (unsigned long long)limit, n, (long long)sb.st_size);
        }
    }
    unlink(path);
    return rc;
}

int main(void)
{
    static const struct { const char *name; tracelog_policy policy; } policies[] = {
        {"APPEND", TRACELOG_POLICY_APPEND},
        {"UNTIL_FULL", TRACELOG_POLICY_UNTIL_FULL},
        {"LOOP", TRACELOG_POLICY_LOOP},
    };
    unsigned total = 0;
    for (size_t p = 0; p < 3; p++)
        for (int fault = 0; fault < NFAULTS; fault++) {
            unsigned n, hit = 0, bad = 0;
            for (n = 1;; n++) {
                int r = run(policies[p].policy, (enum fault)fault, n);
                if (r == 0)
                    break;
                hit++;
                if (r < 0)
                    bad++;
            }
            total += hit;
            printf("%-10s %-21s fault points 1..%u: %u hit, %u failed\n", policies[p].name, fault_names[fault],
                   n - 1, hit, bad);
        }
    fsize_test();
    printf("I/O faults: %u fault points, %d failures\n", total, failures);
    return failures ? 1 : 0;
}
