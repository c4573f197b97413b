/*
 * Crash simulation (promise 2): the writer writes through a tl_io that keeps
 * an in-memory "disk" and the list of writes not yet made durable by a sync.
 * At its N-th operation (write or sync) the simulated machine or process
 * crashes, and the image the disk would show afterwards is read back with
 * the real reader.
 *
 * Machine crash (the sync promise): each write issued since the last
 * completed sync, the interrupted one included, independently
 *   - reached the disk whole,
 *   - was lost,
 *   - was lost but the file size grew (a zero-filled tail),
 *   - was torn at a 512-byte sector boundary (a prefix reached the disk),
 *   - was torn at an arbitrary length,
 *   - reached the disk with a stretch of garbage inside it.
 * Process crash (the flush promise): every completed write is in the page
 * cache and survives; only the interrupted write may be lost or torn.
 *
 * After each crash, with S = events written by the last completed sync
 * (machine) or flush/sync (process), checked against the events the program
 * appended (each event carries its index in its timestamp):
 *   - once a sync/flush has completed, the log opens and its metadata is there;
 *   - every event read is an event that was appended, exactly (all fields and
 *     payload bytes), and events come in the order they were appended, each
 *     at most once;
 *   - every event covered by the last completed sync/flush is read, unless
 *     the log's own policy dropped it (LOOP: overwritten by the ring before
 *     the crash; UNTIL_FULL: never written because the log was full);
 *   - process crash: what is read is a contiguous run (no hole).
 * N runs 1, 2, ... until a run ends without reaching the crash point, with
 * several crash seeds per N, for APPEND, UNTIL_FULL and LOOP logs, stored
 * and compressed. Deterministic: the program and the seeds are fixed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tracelog.h"
#include "writer/io.h"

#define NEVENTS 200
#define T0 1700000000000000000ull
#define MAX_PAYLOAD 300

enum mode { MACHINE, PROCESS };
enum fate { KEEP, DROP, DROP_EXTEND, TORN_SECTOR, TORN_ANY, GARBLE, NFATES };

static const char *const fate_names[NFATES] = {"kept", "lost", "lost+size", "torn@512", "torn", "garbled"};

/* ---- deterministic randomness ---------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* ---- the simulated disk -------------------------------------------------- */

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

static void bytes_put(bytes *b, uint64_t off, const void *src, size_t n)
{
    size_t end = (size_t)off + n;
    if (end > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < end)
            cap *= 2;
        b->p = realloc(b->p, cap);
        if (!b->p)
            abort();
        memset(b->p + b->cap, 0, cap - b->cap);
        b->cap = cap;
    }
    if (src)
        memcpy(b->p + off, src, n);
    if (end > b->len)
        b->len = end;
}

typedef struct pending {
    uint64_t off;
    size_t len;
    uint8_t *data;
} pending;

typedef struct sim {
    enum mode mode;
    bytes disk;     /* durable content */
    pending *pend;  /* writes since the last sync, in issue order */
    size_t npend, pend_cap;
    unsigned ops, crash_at;
    int crashed;
    uint64_t rng;
    bytes image;    /* what the disk shows after the crash */
    unsigned fates[NFATES];
} sim;

static void drop_pending(sim *s)
{
    for (size_t i = 0; i < s->npend; i++)
        free(s->pend[i].data);
    s->npend = 0;
}

static void add_pending(sim *s, const void *buf, size_t n, uint64_t off)
{
    if (s->npend == s->pend_cap) {
        s->pend_cap = s->pend_cap ? 2 * s->pend_cap : 64;
        s->pend = realloc(s->pend, s->pend_cap * sizeof *s->pend);
        if (!s->pend)
            abort();
    }
    pending *p = &s->pend[s->npend++];
    p->off = off;
    p->len = n;
    p->data = malloc(n ? n : 1);
    if (!p->data)
        abort();
    memcpy(p->data, buf, n);
}

/* What reached the disk of write p, by fate f. */
static void apply(sim *s, const pending *p, enum fate f)
{
    bytes *img = &s->image;
    size_t n;
    s->fates[f]++;
    switch (f) {
    case KEEP:
        bytes_put(img, p->off, p->data, p->len);
        return;
    case DROP:
        return;
    case DROP_EXTEND:
        if (p->off + p->len > img->len)
            bytes_put(img, img->len, NULL, (size_t)(p->off + p->len - img->len));
        return;
    case TORN_SECTOR: {
        /* The last 512-byte boundary inside the write (none: nothing reached the disk). */
        uint64_t end = p->off + p->len;
        uint64_t first = (p->off / 512 + 1) * 512;
        if (first >= end)
            return;
        uint64_t k = (end - first + 511) / 512;
        uint64_t cut = first + 512 * (splitmix(&s->rng) % k);
        bytes_put(img, p->off, p->data, (size_t)(cut - p->off));
        return;
    }
    case TORN_ANY:
        n = p->len ? (size_t)(splitmix(&s->rng) % p->len) : 0;
        bytes_put(img, p->off, p->data, n);
        return;
    case GARBLE: {
        bytes_put(img, p->off, p->data, p->len);
        if (p->len == 0)
            return;
        size_t a = (size_t)(splitmix(&s->rng) % p->len);
        size_t b = a + 1 + (size_t)(splitmix(&s->rng) % (p->len - a));
        for (size_t i = a; i < b; i++)
            img->p[p->off + i] = (uint8_t)splitmix(&s->rng);
        return;
    }
    default:
        abort();
    }
}

/* The crash: freezes the image the disk shows from now on. in_write: the
   last pending write is the interrupted one. */
static void crash(sim *s, int in_write)
{
    s->crashed = 1;
    s->image.len = 0;
    bytes_put(&s->image, 0, s->disk.p, s->disk.len);
    for (size_t i = 0; i < s->npend; i++) {
        enum fate f;
        if (getenv("TL_CRASH_SIM_TRACE"))
            fprintf(stderr, "  pending write %zu: [%llu, %llu)", i, (unsigned long long)s->pend[i].off,
                    (unsigned long long)(s->pend[i].off + s->pend[i].len));
        if (s->mode == MACHINE) {
            f = (enum fate)(splitmix(&s->rng) % NFATES);
        } else if (in_write && i + 1 == s->npend) {
            static const enum fate interrupted[] = {KEEP, DROP, TORN_ANY};
            f = interrupted[splitmix(&s->rng) % 3];
        } else {
            f = KEEP;
        }
        apply(s, &s->pend[i], f);
        if (getenv("TL_CRASH_SIM_TRACE"))
            fprintf(stderr, " %s\n", fate_names[f]);
    }
    drop_pending(s);
}

static int sim_write(void *ctx, const void *buf, size_t n, uint64_t off)
{
    sim *s = ctx;
    if (s->crashed)
        return EIO; /* the writer is gone: nothing it does reaches the image */
    add_pending(s, buf, n, off);
    if (++s->ops == s->crash_at) {
        crash(s, 1);
        return EIO;
    }
    return 0;
}

static int sim_sync(void *ctx)
{
    sim *s = ctx;
    if (s->crashed)
        return EIO;
    if (++s->ops == s->crash_at) {
        crash(s, 0);
        return EIO;
    }
    for (size_t i = 0; i < s->npend; i++)
        bytes_put(&s->disk, s->pend[i].off, s->pend[i].data, s->pend[i].len);
    drop_pending(s);
    return 0;
}

static int sim_truncate(void *ctx, uint64_t len)
{
    sim *s = ctx;
    if (s->crashed)
        return EIO;
    /* Only used by create, on an empty disk. */
    if (len < s->disk.len)
        s->disk.len = (size_t)len;
    return 0;
}

/* ---- the program ----------------------------------------------------------- */

typedef struct config {
    const char *name;
    tracelog_policy policy;
    int level;
} config;

static uint8_t payload_of[NEVENTS][MAX_PAYLOAD];

static tracelog_event make_event(unsigned i)
{
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.timestamp_ns = T0 + (uint64_t)i * 1000 + i % 3;
    ev.event_id = 1 + i % 3;
    ev.pid = 100 + i / 50;
    ev.tid = 7000 + i % 2;
    ev.kernel_tid = 3000 + i % 2 + (i / 60) * 2; /* a thread handle reused every 60 events */
    ev.address = 0x400000 + (uint64_t)(i % 13) * 8;
    ev.truncation = i % 7 == 0 ? TRACELOG_TRUNC_RECORD : TRACELOG_TRUNC_NONE;
    ev.payload_len = (i * 37) % (MAX_PAYLOAD + 1);
    for (uint32_t k = 0; k < ev.payload_len; k++)
        payload_of[i][k] = (uint8_t)(i ^ (k * 13));
    ev.payload = payload_of[i];
    return ev;
}

/* Between events: sync after events 6, 17, 28, ... and flush after 3, 14, 25, ... */
static int syncs_after(unsigned i) { return i % 11 == 6; }
static int flushes_after(unsigned i) { return i % 11 == 3; }

typedef struct run_result {
    int crashed;
    unsigned appended;        /* events whose append returned OK */
    /* Last completed checkpoints: events written and log overruns then. */
    int have_sync, have_flush;
    uint64_t sync_written, sync_overruns;
    uint64_t flush_written, flush_overruns;
    uint64_t crash_written, crash_overruns; /* writer's counters when it stopped */
    int crashed_in_close;     /* the crash hit one of close's writes or its sync */
} run_result;

static void checkpoint(tracelog_writer *w, uint64_t *written, uint64_t *overruns, int *have)
{
    tracelog_log_status st;
    tracelog_writer_get_status(w, &st);
    *written = st.events_written;
    *overruns = st.log_overruns;
    *have = 1;
}

static int ok_or_full(tracelog_status st) { return st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL; }

static void run_program(const config *c, sim *s, run_result *out)
{
    memset(out, 0, sizeof *out);
    tl_io io = {sim_write, sim_sync, sim_truncate, s, 1, NULL};
    tracelog_metadata meta;
    tracelog_metadata_init(&meta);
    strcpy(meta.trace_name, "crash-sim");
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = c->policy;
    opt.compression_level = c->level;
    opt.chunk_size = 4096;
    if (c->policy == TRACELOG_POLICY_UNTIL_FULL)
        opt.log_max_size = 12 * 1024;
    if (c->policy == TRACELOG_POLICY_LOOP) {
        opt.log_max_size = 16 * 1024;
        opt.segment_size = 4096;
        opt.durable_size = 4096;
    }
    tracelog_writer *w = NULL;
    tracelog_error err;
    if (tl_writer_create_io(&io, &meta, &opt, &w, &err) != TRACELOG_OK) {
        out->crashed = s->crashed;
        return;
    }
    tracelog_status st = tracelog_writer_define_event(w, 1, "one");
    if (st == TRACELOG_OK)
        st = tracelog_writer_define_event(w, 2, "two");
    for (unsigned i = 0; i < NEVENTS && ok_or_full(st); i++) {
        tracelog_event ev = make_event(i);
        st = tracelog_writer_append(w, &ev);
        if (st == TRACELOG_OK)
            out->appended++;
        if (i == NEVENTS / 2 && ok_or_full(st))
            st = tracelog_writer_define_event(w, 3, "three");
        if (syncs_after(i) && ok_or_full(st)) {
            st = tracelog_writer_sync(w);
            if (ok_or_full(st)) {
                checkpoint(w, &out->sync_written, &out->sync_overruns, &out->have_sync);
                checkpoint(w, &out->flush_written, &out->flush_overruns, &out->have_flush);
            }
        }
        if (flushes_after(i) && ok_or_full(st)) {
            st = tracelog_writer_flush(w);
            if (ok_or_full(st))
                checkpoint(w, &out->flush_written, &out->flush_overruns, &out->have_flush);
        }
    }
    tracelog_log_status now;
    tracelog_writer_get_status(w, &now);
    out->crash_written = now.events_written;
    out->crash_overruns = now.log_overruns;
    if (ok_or_full(st)) {
        unsigned close_from = s->ops;
        st = tracelog_writer_close(w, &err);
        out->crashed_in_close = s->crashed && s->crash_at > close_from;
        if (st == TRACELOG_OK) {
            /* A close is a sync: everything is covered. */
            out->sync_written = out->flush_written = out->crash_written;
            out->have_sync = out->have_flush = 1;
        }
    } else {
        tracelog_writer_abandon(w);
    }
    out->crashed = s->crashed;
    if (!s->crashed && st != TRACELOG_OK) {
        fprintf(stderr, "  program failed without a crash: %s\n", tracelog_status_name(st));
        out->crashed = -1;
    }
}

/* ---- the check ------------------------------------------------------------- */

/*
 * close_overruns: the log overruns of the whole program, close included (a
 * LOOP close may move its status and trailer to the next segment, which
 * overwrites that segment's events: what a crash inside close loses to the
 * ring is at most that).
 */
static int check_image(const config *c, enum mode mode, const uint8_t *img, size_t len, const run_result *rr,
                       uint64_t close_overruns, char *why, size_t why_len)
{
    int have = mode == MACHINE ? rr->have_sync : rr->have_flush;
    uint64_t covered = mode == MACHINE ? rr->sync_written : rr->flush_written;
    uint64_t covered_ov = mode == MACHINE ? rr->sync_overruns : rr->flush_overruns;
    /* Events the log itself may have dropped: LOOP overwrites the oldest. */
    uint64_t must_from = 0;
    if (c->policy == TRACELOG_POLICY_LOOP)
        must_from = covered_ov > rr->crash_overruns ? covered_ov : rr->crash_overruns;
    if (c->policy == TRACELOG_POLICY_LOOP && rr->crashed_in_close && close_overruns > must_from)
        must_from = close_overruns;

    int fd = memfd_create("crash-image", MFD_CLOEXEC);
    if (fd < 0 || (len && write(fd, img, len) != (ssize_t)len)) {
        snprintf(why, why_len, "memfd: %s", strerror(errno));
        return -1;
    }
    tracelog_reader *r = NULL;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open(fd, NULL, &r, &err);
    if (st != TRACELOG_OK) {
        close(fd);
        if (!have)
            return 0; /* nothing was promised yet */
        snprintf(why, why_len, "open after a completed %s: %s (%s)", mode == MACHINE ? "sync" : "flush",
                 tracelog_status_name(st), err.message);
        return -1;
    }
    int rc = 0;
    if (have && strcmp(tracelog_reader_metadata(r)->trace_name, "crash-sim") != 0) {
        snprintf(why, why_len, "metadata lost after a completed sync/flush");
        rc = -1;
    }
    tracelog_event ev;
    long prev = -1;
    uint64_t next_must = must_from; /* next index of [must_from, covered) still to be seen */
    while (rc == 0 && (st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        uint64_t d = ev.timestamp_ns - T0;
        long idx = ev.timestamp_ns >= T0 ? (long)(d / 1000) : -1;
        if (idx < 0 || idx >= (long)rr->appended) {
            snprintf(why, why_len, "an event that was never appended (timestamp %llu)",
                     (unsigned long long)ev.timestamp_ns);
            rc = -1;
            break;
        }
        tracelog_event want = make_event((unsigned)idx);
        if (want.timestamp_ns != ev.timestamp_ns || want.event_id != ev.event_id || want.pid != ev.pid ||
            want.tid != ev.tid || want.address != ev.address || want.truncation != ev.truncation ||
            want.payload_len != ev.payload_len || memcmp(want.payload, ev.payload, ev.payload_len) != 0) {
            snprintf(why, why_len, "event %ld altered", idx);
            rc = -1;
            break;
        }
        /* A process crash keeps every completed write, so the thread
           definitions written before a chunk are there with it (a machine
           crash may lose them and keep the chunk: then the damage shows). */
        if (mode == PROCESS && ev.kernel_tid != want.kernel_tid) {
            snprintf(why, why_len, "event %ld: kernel tid %u, want %u", idx, ev.kernel_tid, want.kernel_tid);
            rc = -1;
            break;
        }
        if (idx <= prev) {
            snprintf(why, why_len, "event %ld read after event %ld (out of order or repeated)", idx, prev);
            rc = -1;
            break;
        }
        if (mode == PROCESS && prev >= 0 && idx != prev + 1) {
            snprintf(why, why_len, "process crash: events %ld..%ld missing", prev + 1, idx - 1);
            rc = -1;
            break;
        }
        if ((uint64_t)idx > next_must && next_must < covered) {
            snprintf(why, why_len, "event %llu, covered by the last %s, is missing (event %ld read next)",
                     (unsigned long long)next_must, mode == MACHINE ? "sync" : "flush", idx);
            rc = -1;
            break;
        }
        if ((uint64_t)idx == next_must)
            next_must++;
        prev = idx;
    }
    if (rc == 0 && st != TRACELOG_END) {
        snprintf(why, why_len, "next: %s", tracelog_status_name(st));
        rc = -1;
    }
    if (rc == 0 && next_must < covered) {
        snprintf(why, why_len, "events %llu..%llu, covered by the last %s, are missing",
                 (unsigned long long)next_must, (unsigned long long)covered - 1, mode == MACHINE ? "sync" : "flush");
        rc = -1;
    }
    tracelog_reader_close(r);
    close(fd);
    return rc;
}

/* ---- driver ------------------------------------------------------------------ */

/*
 * TL_CRASH_SIM_ONLY="LOOP/stored:machine:81:5" runs that one run only (the
 * numbers a failure prints), tracing the fate of each pending write.
 */
static int selected(const config *c, enum mode mode, unsigned n, unsigned seed)
{
    const char *only = getenv("TL_CRASH_SIM_ONLY");
    if (!only)
        return 1;
    char want[128];
    snprintf(want, sizeof want, "%s:%s:%u:%u", c->name, mode == MACHINE ? "machine" : "process", n, seed);
    if (strcmp(only, want) != 0)
        return 0;
    setenv("TL_CRASH_SIM_TRACE", "1", 1);
    return 1;
}

/* With TL_CRASH_SIM_SAVE=DIR, the image of each failing run is saved there. */
static void save_image(const config *c, enum mode mode, unsigned n, unsigned seed, const bytes *img)
{
    const char *dir = getenv("TL_CRASH_SIM_SAVE");
    if (!dir)
        return;
    char path[512], name[64];
    snprintf(name, sizeof name, "%s", c->name);
    for (char *q = name; *q; q++)
        if (*q == '/')
            *q = '-';
    snprintf(path, sizeof path, "%s/crash-%s-%s-%u-%u.ptl", dir, name, mode == MACHINE ? "machine" : "process", n,
             seed);
    FILE *f = fopen(path, "wb");
    if (f) {
        fwrite(img->p, 1, img->len, f);
        fclose(f);
        fprintf(stderr, "  image saved as %s\n", path);
    }
}

/* The log overruns of the program run to its end, from the log it leaves. */
static uint64_t overruns_without_crash(const config *c)
{
    sim s;
    memset(&s, 0, sizeof s);
    s.mode = PROCESS;
    s.crash_at = UINT_MAX;
    run_result rr;
    run_program(c, &s, &rr);
    uint64_t overruns = 0;
    int fd = memfd_create("crash-reference", MFD_CLOEXEC);
    tracelog_reader *r = NULL;
    if (fd >= 0 && write(fd, s.disk.p, s.disk.len) == (ssize_t)s.disk.len &&
        tracelog_reader_open(fd, NULL, &r, NULL) == TRACELOG_OK) {
        tracelog_log_status st;
        tracelog_reader_get_status(r, &st);
        overruns = st.log_overruns;
        tracelog_reader_close(r);
    }
    if (fd >= 0)
        close(fd);
    drop_pending(&s);
    free(s.pend);
    free(s.disk.p);
    free(s.image.p);
    return overruns;
}

static int run_config(const config *c, enum mode mode, unsigned seeds, unsigned long *total_runs)
{
    unsigned n, runs = 0, failures = 0, max_crash = 0;
    uint64_t close_overruns = overruns_without_crash(c);
    unsigned fates[NFATES] = {0};
    int done = 0;
    for (n = 1; !done && n < 100000; n++) {
        for (unsigned seed = 0; seed < seeds; seed++) {
            if (!selected(c, mode, n, seed))
                continue;
            sim s;
            memset(&s, 0, sizeof s);
            s.mode = mode;
            s.crash_at = n;
            s.rng = 0x5eed0000ull + n * 1000003ull + seed;
            run_result rr;
            run_program(c, &s, &rr);
            runs++;
            if (rr.crashed < 0) {
                failures++;
            } else if (!rr.crashed) {
                done = 1; /* the program ends before op n: every crash point was tried */
            } else {
                max_crash = n;
                char why[200];
                if (check_image(c, mode, s.image.p, s.image.len, &rr, close_overruns, why, sizeof why) != 0) {
                    if (failures++ < 5)
                        fprintf(stderr, "FAIL %s, %s crash at op %u, seed %u: %s\n", c->name,
                                mode == MACHINE ? "machine" : "process", n, seed, why);
                    save_image(c, mode, n, seed, &s.image);
                }
            }
            for (int f = 0; f < NFATES; f++)
                fates[f] += s.fates[f];
            drop_pending(&s);
            free(s.pend);
            free(s.disk.p);
            free(s.image.p);
            if (done)
                break;
        }
    }
    printf("%-16s %-7s crash points 1..%u, %u runs, %u failures; pending writes:", c->name,
           mode == MACHINE ? "machine" : "process", max_crash, runs, failures);
    for (int f = 0; f < NFATES; f++)
        if (fates[f])
            printf(" %s %u", fate_names[f], fates[f]);
    printf("\n");
    *total_runs += runs;
    return failures ? 1 : 0;
}

int main(void)
{
    static const config configs[] = {
        {"APPEND/stored", TRACELOG_POLICY_APPEND, 0},
        {"APPEND/zstd", TRACELOG_POLICY_APPEND, 1},
        {"UNTIL_FULL/stored", TRACELOG_POLICY_UNTIL_FULL, 0},
        {"UNTIL_FULL/zstd", TRACELOG_POLICY_UNTIL_FULL, 1},
        {"LOOP/stored", TRACELOG_POLICY_LOOP, 0},
        {"LOOP/zstd", TRACELOG_POLICY_LOOP, 1},
    };
    /* TL_CRASH_SIM_SEEDS=K runs K times more seeds per crash point (longer searches). */
    const char *more = getenv("TL_CRASH_SIM_SEEDS");
    unsigned k = more && atoi(more) > 0 ? (unsigned)atoi(more) : 1;
    int failed = 0;
    unsigned long total = 0;
    for (size_t i = 0; i < sizeof configs / sizeof configs[0]; i++) {
        failed |= run_config(&configs[i], MACHINE, 6 * k, &total);
        failed |= run_config(&configs[i], PROCESS, 2 * k, &total);
    }
    printf("crash simulation: %lu runs, %s\n", total, failed ? "FAILED" : "all passed");
    return failed;
}
