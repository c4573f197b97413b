/*
 * bench_codec: how fast tracelog encodes, compresses and decodes events, and
 * how small the log is, for a realistic stream of 16-byte-payload events;
 * next to `zstd -b1` on the same events stored as naive fixed-size records.
 *
 * Everything runs on one thread pinned to one CPU; every figure is the median
 * of several runs (with min and max), timed with CLOCK_MONOTONIC. The events
 * are generated in memory before any timing starts. See bench/README.md for
 * the method and the event generator, and `bench_codec --help` for options.
 *
 * Exit status: 0 when every self-check passed (decoded events equal the
 * encoded ones, counts and sizes agree), 1 when one failed, 2 on bad usage.
 * Targets that are missed are reported, not turned into a failure.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include "codec_workload.h"
#include "format/chunk.h"
#include "tracelog.h"
#include "writer/io.h"

/* Targets of issue 11 ("Codec": the format 1.1 chunk body), on this 2-core machine. */
#define TARGET_ENCODE_EPS 15e6
#define TARGET_DECODE_EPS 30e6
#define TARGET_BYTES_PER_EVENT 5.5

#define NAIVE_RECORD_SIZE 48 /* 8 ts + 4 id + 4 pid + 8 tid + 8 addr + 16 payload */

/* ---- options ----------------------------------------------------------- */

typedef struct options {
    uint64_t events;
    int runs;
    int cpu;            /* -1: the last CPU we may run on */
    uint64_t seed;
    const char *dir;    /* where the log and the naive record file go */
    const char *json;   /* NULL: no JSON */
    int zstd_seconds;   /* zstd -i#; 0: skip the zstd baseline */
    int keep;           /* keep the files in dir */
    int smoke;
    unsigned stages;    /* STAGE_* bits to run */
} options;

enum { STAGE_ENCODE = 1, STAGE_DECODE = 2, STAGE_CHUNK = 4, STAGE_ZSTD = 8, STAGE_ALL = 15 };

static void usage(FILE *f)
{
    fprintf(f,
            "usage: bench_codec [options]\n"
            "  --events N      events per run (default 10M; K and M suffixes)\n"
            "  --runs N        timed runs per measure, median reported (default 5, min 1)\n"
            "  --cpu N         CPU to pin to (default: the last allowed CPU)\n"
            "  --seed N        event generator seed (default 1)\n"
            "  --dir DIR       directory for the log and baseline files (default .)\n"
            "  --json FILE     also write the results as JSON to FILE\n"
            "  --zstd-time S   seconds for `zstd -b1 -i S` (default 3; 0 skips zstd)\n"
            "  --keep          keep the files written in DIR\n"
            "  --smoke         tiny sizes for CI: 100K events, 3 runs, zstd -i1\n"
            "  --only LIST     run only these measures (comma-separated: encode, decode,\n"
            "                  chunk, zstd), e.g. under perf record\n");
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -1;
    uint64_t mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1000, end++;
    else if (*end == 'M' || *end == 'm')
        mul = 1000000, end++;
    if (*end || v > UINT64_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

static int parse_stages(const char *list, unsigned *out)
{
    static const char *names[] = {"encode", "decode", "chunk", "zstd"};
    *out = 0;
    while (*list) {
        size_t len = strcspn(list, ",");
        unsigned i = 0;
        while (i < 4 && (strlen(names[i]) != len || strncmp(names[i], list, len)))
            i++;
        if (i == 4)
            return -1;
        *out |= 1u << i;
        list += len + (list[len] == ',');
    }
    return *out ? 0 : -1;
}

static int parse_options(int argc, char **argv, options *o)
{
    *o = (options){.events = 10000000, .runs = 5, .cpu = -1, .seed = 1, .dir = ".",
                   .zstd_seconds = 3, .stages = STAGE_ALL};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t n;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(a, "--smoke")) {
            o->smoke = 1;
            o->events = 100000;
            o->runs = 3;
            o->zstd_seconds = 1;
            continue;
        } else if (!strcmp(a, "--keep")) {
            o->keep = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "bench_codec: %s needs a value (or is unknown)\n", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--dir")) {
            o->dir = v;
        } else if (!strcmp(a, "--json")) {
            o->json = v;
        } else if (!strcmp(a, "--only")) {
            if (parse_stages(v, &o->stages)) {
                fprintf(stderr, "bench_codec: --only: bad list '%s'\n", v);
                return -1;
            }
        } else if (parse_u64(v, &n)) {
            fprintf(stderr, "bench_codec: %s: bad number '%s'\n", a, v);
            return -1;
        } else if (!strcmp(a, "--events") && n > 0 && n <= UINT32_MAX) {
            o->events = n;
        } else if (!strcmp(a, "--runs") && n >= 1 && n <= 1000) {
            o->runs = (int)n;
        } else if (!strcmp(a, "--cpu") && n < CPU_SETSIZE) {
            o->cpu = (int)n;
        } else if (!strcmp(a, "--seed")) {
            o->seed = n;
        } else if (!strcmp(a, "--zstd-time") && n <= 60) {
            o->zstd_seconds = (int)n;
        } else {
            fprintf(stderr, "bench_codec: bad option or value: %s %s\n", a, v);
            return -1;
        }
    }
    return 0;
}

/* ---- failures and timing ----------------------------------------------- */

static int g_failed;

__attribute__((format(printf, 1, 2))) static void check_failed(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_codec: CHECK FAILED: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    g_failed = 1;
}

__attribute__((format(printf, 1, 2), noreturn)) static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("bench_codec: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pins the process (and the zstd child it starts later) to one CPU. */
static int pin_cpu(int want)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set))
        die("sched_getaffinity: %s", strerror(errno));
    int cpu = want;
    if (cpu < 0)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                cpu = c;
    if (cpu < 0 || !CPU_ISSET(cpu, &set))
        die("CPU %d is not available to this process", want);
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set))
        die("sched_setaffinity(%d): %s", cpu, strerror(errno));
    return cpu;
}

/* A measure: one value per run (events/s), summarised as median, min, max. */
/*
 * CPU time of this process over wall time: below 1 when another process
 * shared our CPU during a run (the machine was not quiet), so that a slow run
 * can be told apart from a slow library.
 */
static double cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct stat3 {
    double median, min, max;
    int runs;         /* 0: not measured */
    double cpu_share; /* lowest CPU time / wall time over the runs */
    double cpu_rate;  /* median of events per second of CPU time */
} stat3;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stat3 summarise(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    return (stat3){med, v[0], v[n - 1], n, 1.0, 0.0};
}

/* Every field and payload byte equal. */
static int event_equal(const tracelog_event *a, const tracelog_event *b)
{
    return a->timestamp_ns == b->timestamp_ns && a->event_id == b->event_id && a->pid == b->pid &&
           a->tid == b->tid && a->address == b->address && a->truncation == b->truncation &&
           a->payload_len == b->payload_len &&
           (a->payload_len == 0 || memcmp(a->payload, b->payload, a->payload_len) == 0);
}

/* ---- writer runs ------------------------------------------------------- */

/* An output channel that keeps nothing: it only counts the bytes. */
typedef struct null_sink {
    uint64_t end;
} null_sink;

static int null_write(void *ctx, const void *buf, size_t n, uint64_t off)
{
    null_sink *s = ctx;
    (void)buf;
    if (off == UINT64_MAX)
        off = s->end;
    if (off + n > s->end)
        s->end = off + n;
    return 0;
}

/* Like the descriptor channel: blocks arrive as pieces (no framing copy). */
static int null_writev(void *ctx, const struct iovec *iov, int n, uint64_t off)
{
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += iov[i].iov_len;
    return null_write(ctx, NULL, len, off);
}

static int null_sync(void *ctx) { (void)ctx; return 0; }
static int null_truncate(void *ctx, uint64_t len) { ((null_sink *)ctx)->end = len; return 0; }

static void define_types(tracelog_writer *w)
{
    for (int t = 0; t < EV_TYPES; t++)
        if (tracelog_writer_define_event(w, g_types[t].id, g_types[t].name) != TRACELOG_OK)
            die("tracelog_writer_define_event failed");
}

static void append_all(tracelog_writer *w, const workload *wl)
{
    for (size_t i = 0; i < wl->n; i++) {
        tracelog_status st = tracelog_writer_append(w, &wl->ev[i]);
        if (st != TRACELOG_OK)
            die("tracelog_writer_append: %s", tracelog_strerror(st));
    }
}

static void close_writer(tracelog_writer *w)
{
    tracelog_error err;
    if (tracelog_writer_close(w, &err) != TRACELOG_OK)
        die("tracelog_writer_close: %s", err.message);
}

/* Encodes and compresses the whole workload into a null sink; returns seconds, *bytes = log size. */
static double run_encode_null(const workload *wl, int level, uint64_t *bytes)
{
    null_sink sink = {0};
    tl_io io = {null_write, null_sync, null_truncate, &sink, 1, null_writev};
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.compression_level = level;
    tracelog_writer *w;
    tracelog_error err;
    double t0 = now_s();
    if (tl_writer_create_io(&io, NULL, &opt, &w, &err) != TRACELOG_OK)
        die("tl_writer_create_io: %s", err.message);
    define_types(w);
    append_all(w, wl);
    close_writer(w);
    double t = now_s() - t0;
    *bytes = sink.end;
    return t;
}

/* Writes the workload to path as an APPEND log with default options. */
static double run_encode_file(const workload *wl, const char *path, int level, uint64_t *bytes)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die("%s: %s", path, strerror(errno));
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.compression_level = level;
    tracelog_writer *w;
    tracelog_error err;
    double t0 = now_s();
    if (tracelog_writer_create(fd, NULL, &opt, &w, &err) != TRACELOG_OK)
        die("tracelog_writer_create: %s", err.message);
    define_types(w);
    append_all(w, wl);
    close_writer(w);
    double t = now_s() - t0;
    struct stat st;
    if (fstat(fd, &st))
        die("fstat %s: %s", path, strerror(errno));
    close(fd);
    *bytes = (uint64_t)st.st_size;
    return t;
}

/* ---- reader runs ------------------------------------------------------- */

static tracelog_reader *open_reader(const char *path)
{
    tracelog_reader *r;
    tracelog_error err;
    if (tracelog_reader_open_path(path, NULL, &r, &err) != TRACELOG_OK)
        die("tracelog_reader_open_path %s: %s", path, err.message);
    return r;
}

/* Decodes the whole log, folding every field; returns seconds. */
static double run_decode(const char *path, const workload *wl)
{
    double t0 = now_s();
    tracelog_reader *r = open_reader(path);
    tracelog_event ev;
    uint64_t acc = 0, n = 0;
    tracelog_status st;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        acc = fold_event(acc, &ev);
        n++;
    }
    tracelog_reader_close(r);
    double t = now_s() - t0;
    if (st != TRACELOG_END)
        check_failed("%s: tracelog_reader_next: %s", path, tracelog_strerror(st));
    if (n != wl->n || acc != wl->checksum)
        check_failed("%s: decoded %" PRIu64 " events (checksum %016" PRIx64 "), encoded %zu "
                      "(checksum %016" PRIx64 ")", path, n, acc, wl->n, wl->checksum);
    return t;
}

/* Untimed: every decoded event equals the generated one; the log is clean. */
static void verify_log(const char *path, const workload *wl)
{
    tracelog_reader *r = open_reader(path);
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    if (!info.clean || info.problems || info.events != wl->n)
        check_failed("%s: clean=%d problems=%" PRIu64 " events=%" PRIu64 " (want 1, 0, %zu)",
                     path, info.clean, info.problems, info.events, wl->n);
    tracelog_event ev;
    size_t i = 0;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        if (i >= wl->n || !event_equal(&ev, &wl->ev[i])) {
            check_failed("%s: event %zu differs from the one written", path, i);
            break;
        }
        i++;
    }
    if (i != wl->n)
        check_failed("%s: read %zu events, wrote %zu", path, i, wl->n);
    for (int t = 0; t < EV_TYPES; t++) {
        const char *name = tracelog_reader_event_name(r, g_types[t].id);
        if (!name || strcmp(name, g_types[t].name))
            check_failed("%s: event type %u is not named %s", path, g_types[t].id, g_types[t].name);
    }
    tracelog_reader_close(r);
}

/* ---- chunk layer (pure encode/decode, no I/O, no checksums) ------------ */

typedef struct chunk_set {
    tl_buf *payloads;
    size_t n, cap;
} chunk_set;

static void chunk_set_add(chunk_set *s, const tl_buf *payload)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 64;
        s->payloads = realloc(s->payloads, s->cap * sizeof *s->payloads);
        if (!s->payloads)
            die("out of memory");
    }
    tl_buf *b = &s->payloads[s->n++];
    *b = (tl_buf){0};
    if (tl_buf_append(b, payload->data, payload->len))
        die("out of memory");
}

static void chunk_set_free(chunk_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        tl_buf_free(&s->payloads[i]);
    free(s->payloads);
    *s = (chunk_set){0};
}

/*
 * Cuts the workload into chunks exactly as the writer does (a chunk is
 * finished when the next event might not fit in chunk_size) and finishes each
 * one at `level`. Keeps the payloads in keep when it is not NULL.
 * Returns seconds; *stored = chunk payload bytes.
 */
static double run_chunk_encode(const workload *wl, ZSTD_CCtx *cctx, int level, chunk_set *keep,
                               uint64_t *stored)
{
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    tl_chunk_builder b = {0};
    tl_buf out = {0};
    uint64_t total = 0;
    double t0 = now_s();
    tl_chunk_builder_reset(&b);
    for (size_t i = 0; i <= wl->n; i++) {
        int last = i == wl->n;
        if (b.count && (last || !tl_chunk_fits(&b, &wl->ev[i], opt.chunk_size))) {
            if (tl_chunk_finish(&b, cctx, level, &out) != TRACELOG_OK)
                die("tl_chunk_finish failed");
            total += out.len;
            if (keep)
                chunk_set_add(keep, &out);
            tl_chunk_builder_reset(&b);
        }
        if (!last && tl_chunk_add(&b, &wl->ev[i]) != TRACELOG_OK)
            die("tl_chunk_add failed");
    }
    double t = now_s() - t0;
    tl_chunk_builder_free(&b);
    tl_buf_free(&out);
    *stored = total;
    return t;
}

/* Decodes every chunk, folding every field; returns seconds. */
static double run_chunk_decode(const chunk_set *s, ZSTD_DCtx *dctx, const workload *wl, int verify)
{
    tl_chunk_events ce = {0};
    uint64_t acc = 0, n = 0;
    double t0 = now_s();
    for (size_t c = 0; c < s->n; c++) {
        const char *why = "";
        tracelog_status st = tl_chunk_decode(s->payloads[c].data, s->payloads[c].len, dctx,
                                                   64u << 20, &ce, &why);
        if (st != TRACELOG_OK) {
            check_failed("chunk %zu does not decode: %s", c, why);
            break;
        }
        for (uint32_t i = 0; i < ce.count; i++, n++) {
            if (verify && (n >= wl->n || !event_equal(&ce.events[i], &wl->ev[n]))) {
                check_failed("chunk layer: event %" PRIu64 " differs", n);
                verify = 0;
            }
            acc = fold_event(acc, &ce.events[i]);
        }
    }
    double t = now_s() - t0;
    tl_chunk_events_free(&ce);
    if (n != wl->n || acc != wl->checksum)
        check_failed("chunk layer: decoded %" PRIu64 " events, encoded %zu (or checksum differs)",
                     n, wl->n);
    return t;
}

/* ---- the zstd baseline ------------------------------------------------- */

/* The naive record: 8 ts + 4 id + 4 pid + 8 tid + 8 addr + 16 payload, little-endian. */
static void write_naive(const workload *wl, const char *path)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        die("%s: %s", path, strerror(errno));
    uint8_t rec[NAIVE_RECORD_SIZE];
    for (size_t i = 0; i < wl->n; i++) {
        const tracelog_event *e = &wl->ev[i];
        put64(rec, e->timestamp_ns);
        put32(rec + 8, e->event_id);
        put32(rec + 12, e->pid);
        put64(rec + 16, e->tid);
        put64(rec + 24, e->address);
        memcpy(rec + 32, e->payload, PAYLOAD_SIZE);
        if (fwrite(rec, sizeof rec, 1, f) != 1)
            die("%s: write failed", path);
    }
    if (fclose(f))
        die("%s: %s", path, strerror(errno));
}

typedef struct zstd_result {
    int ok;
    uint64_t src, dst;
    double ratio, comp_mbs, decomp_mbs; /* MB = 10^6 bytes, as zstd prints them */
    double cpu_share;                   /* the zstd process's CPU time / wall time */
} zstd_result;

/*
 * Runs argv, returns its stdout+stderr (malloc'd, NUL-terminated) or NULL;
 * *status = wait status, *share = its CPU time / wall time.
 */
static char *run_capture(char *const argv[], int *status, double *share)
{
    double t0 = now_s();
    int fds[2];
    if (pipe(fds))
        return NULL;
    pid_t pid = fork();
    if (pid < 0)
        return NULL;
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(fds[1]);
    size_t len = 0, cap = 4096;
    char *out = malloc(cap);
    ssize_t k;
    while (out && (k = read(fds[0], out + len, cap - len - 1)) != 0) {
        if (k < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        len += (size_t)k;
        if (cap - len < 2) {
            char *p = realloc(out, cap *= 2);
            if (!p)
                free(out);
            out = p;
        }
    }
    close(fds[0]);
    struct rusage ru = {0};
    while (wait4(pid, status, 0, &ru) < 0 && errno == EINTR) {
    }
    double cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                 (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
    *share = cpu / (now_s() - t0);
    if (out)
        out[len] = 0;
    return out;
}

/*
 * zstd -b prints progress lines separated by '\r'; the last complete one is
 *   " |-name :  SRC ->  DST (xRATIO),  C MB/s,  D MB/s".
 */
static int parse_zstd(const char *out, zstd_result *z)
{
    const char *best = NULL;
    for (const char *p = strstr(out, "->"); p; p = strstr(p + 2, "->"))
        if (strstr(p, "MB/s,"))
            best = p;
    if (!best)
        return -1;
    const char *line = best;
    while (line > out && line[-1] != '\r' && line[-1] != '\n')
        line--;
    const char *colon = strchr(line, ':');
    unsigned long long src, dst;
    if (!colon || sscanf(colon + 1, " %llu -> %llu (x%lf), %lf MB/s, %lf MB/s", &src, &dst,
                         &z->ratio, &z->comp_mbs, &z->decomp_mbs) != 5)
        return -1;
    z->src = src;
    z->dst = dst;
    z->ok = 1;
    return 0;
}

static zstd_result run_zstd(const char *path, int seconds)
{
    zstd_result z = {0};
    char level[] = "-b1", iters[16];
    snprintf(iters, sizeof iters, "-i%d", seconds);
    char *argv[] = {"zstd", level, iters, (char *)path, NULL};
    int status = 0;
    double share = 0;
    char *out = run_capture(argv, &status, &share);
    if (!out || !WIFEXITED(status) || WEXITSTATUS(status) == 127) {
        fprintf(stderr, "bench_codec: zstd not runnable: baseline skipped\n");
    } else if (WEXITSTATUS(status) != 0 || parse_zstd(out, &z)) {
        check_failed("zstd -b1 failed or printed something unexpected:\n%s", out);
    }
    z.cpu_share = share;
    free(out);
    return z;
}

/* ---- machine description ----------------------------------------------- */

typedef struct machine {
    char cpu_model[128];
    long ncpus;
    char kernel[256];
} machine;

static void describe_machine(machine *m)
{
    snprintf(m->cpu_model, sizeof m->cpu_model, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon && !strncmp(line, "model name", 10)) {
            colon += 1 + strspn(colon + 1, " \t");
            colon[strcspn(colon, "\n")] = 0;
            snprintf(m->cpu_model, sizeof m->cpu_model, "%s", colon);
            break;
        }
    }
    if (f)
        fclose(f);
    m->ncpus = sysconf(_SC_NPROCESSORS_ONLN);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(m->kernel, sizeof m->kernel, "%s %s %s", u.sysname, u.release, u.machine);
    else
        snprintf(m->kernel, sizeof m->kernel, "unknown");
}

/* ---- report ------------------------------------------------------------ */

typedef struct results {
    stat3 encode, encode_file, encode_raw, decode, decode_raw;
    stat3 chunk_encode_z, chunk_encode_raw, chunk_decode_z, chunk_decode_raw;
    uint64_t log_bytes, log_bytes_raw, naive_bytes; /* 0: not written */
    zstd_result zstd;
} results;

static const char *verdict(const options *o, int measured, int met)
{
    if (!measured)
        return "-";
    return o->smoke ? "n/a (smoke)" : met ? "met" : "MISSED";
}

static void fmt_stat(char *buf, size_t size, stat3 s)
{
    if (s.runs)
        snprintf(buf, size, "%.2f [%.2f-%.2f] M ev/s", s.median / 1e6, s.min / 1e6, s.max / 1e6);
    else
        snprintf(buf, size, "not run");
}

static void print_rate(const char *what, stat3 s)
{
    if (s.runs)
        printf("  %-44s %6.2f [%6.2f-%6.2f] %5.0f %7.2f %4.0f%%\n", what, s.median / 1e6,
               s.min / 1e6, s.max / 1e6, s.median * NAIVE_RECORD_SIZE / 1e6, s.cpu_rate / 1e6,
               100 * s.cpu_share);
}

static void print_size(const char *what, uint64_t bytes, double n)
{
    if (bytes)
        printf("  %-46s %6.3f B/ev (%" PRIu64 " bytes, x%.2f vs 48-byte records)\n", what,
               (double)bytes / n, bytes, NAIVE_RECORD_SIZE * n / (double)bytes);
}

static void print_report(const options *o, int cpu, const machine *m, const workload *wl,
                         const results *r)
{
    double n = (double)wl->n;
    double bpe = (double)r->log_bytes / n;
    const zstd_result *z = &r->zstd;
    printf("\nbench_codec: %zu events of %d-byte payloads (seed %" PRIu64 "), median of %d runs, "
           "pinned to CPU %d\n", wl->n, PAYLOAD_SIZE, o->seed, o->runs, cpu);
    printf("machine: %s, %ld CPUs, %s; zstd library %s\n", m->cpu_model, m->ncpus, m->kernel,
           ZSTD_versionString());
    if (wl->n > 1)
        printf("workload: %d event types, %d threads, mean interval %.0f ns\n\n", EV_TYPES,
               NTHREADS, (double)(wl->ev[wl->n - 1].timestamp_ns - wl->ev[0].timestamp_ns) /
                             (double)(wl->n - 1));
    printf("  %-16s %-30s %-19s %-8s %s\n", "measure", "tracelog median [min-max]",
           "zstd -b1 (48 B/ev)", "target", "verdict");
    char zc[32] = "not run", zd[32] = "not run", zs[32] = "not run";
    if (z->ok) {
        snprintf(zc, sizeof zc, "%.2f M ev/s", z->comp_mbs / NAIVE_RECORD_SIZE);
        snprintf(zd, sizeof zd, "%.2f M ev/s", z->decomp_mbs / NAIVE_RECORD_SIZE);
        snprintf(zs, sizeof zs, "%.2f B/ev", (double)z->dst / n);
    }
    char tc[48], td[48], ts[48] = "not run";
    fmt_stat(tc, sizeof tc, r->encode);
    fmt_stat(td, sizeof td, r->decode);
    if (r->log_bytes)
        snprintf(ts, sizeof ts, "%.2f B/ev", bpe);
    printf("  %-16s %-30s %-19s %-8s %s\n", "encode+compress", tc, zc, ">= 15 M",
           verdict(o, r->encode.runs, r->encode.median >= TARGET_ENCODE_EPS));
    printf("  %-16s %-30s %-19s %-8s %s\n", "decode", td, zd, ">= 30 M",
           verdict(o, r->decode.runs, r->decode.median >= TARGET_DECODE_EPS));
    printf("  %-16s %-30s %-19s %-8s %s\n", "size on disk", ts, zs, "<= 5.5 B",
           verdict(o, r->log_bytes != 0, bpe <= TARGET_BYTES_PER_EVENT));
    if (z->ok)
        printf("  zstd -b1 -i%d: %.1f MB/s compress, %.1f MB/s decompress, ratio x%.3f, "
               "CPU share %.0f%%\n", o->zstd_seconds, z->comp_mbs, z->decomp_mbs, z->ratio,
               100 * z->cpu_share);

    printf("\n  details: M events/s median [min-max] and MB/s (of 48-byte records) in wall time;\n"
           "  M events per CPU-second (median); lowest CPU share of a run (CPU time / wall time:\n"
           "  below ~97%% another process shared the CPU and the wall-time figures are low)\n");
    printf("  %-44s %-22s %5s %7s %5s\n", "", "M ev/s [min-max]", "MB/s", "cpu M/s", "share");
    print_rate("writer -> null sink, zstd 1 (target row)", r->encode);
    print_rate("writer -> file in page cache, zstd 1", r->encode_file);
    print_rate("writer -> null sink, chunks uncompressed", r->encode_raw);
    print_rate("chunk layer encode, zstd 1 (no I/O, no CRC)", r->chunk_encode_z);
    print_rate("chunk layer encode, uncompressed", r->chunk_encode_raw);
    print_rate("reader <- file, zstd 1 (target row)", r->decode);
    print_rate("reader <- file, chunks uncompressed", r->decode_raw);
    print_rate("chunk layer decode, zstd 1 (no I/O, no CRC)", r->chunk_decode_z);
    print_rate("chunk layer decode, uncompressed", r->chunk_decode_raw);
    print_size("log file, zstd 1 (target row)", r->log_bytes, n);
    print_size("log file, chunks uncompressed", r->log_bytes_raw, n);
    print_size("naive record file", r->naive_bytes, n);
}

static void json_stat(FILE *f, const char *name, stat3 s, int last)
{
    if (s.runs)
        fprintf(f, "    \"%s\": {\"median\": %.0f, \"min\": %.0f, \"max\": %.0f, \"runs\": %d, "
                   "\"cpu_share\": %.3f, \"per_cpu_second\": %.0f}%s\n",
                name, s.median, s.min, s.max, s.runs, s.cpu_share, s.cpu_rate, last ? "" : ",");
    else
        fprintf(f, "    \"%s\": null%s\n", name, last ? "" : ",");
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static const char *json_bool(int measured, int v)
{
    return !measured ? "null" : v ? "true" : "false";
}

static void write_json(const char *path, const options *o, int cpu, const machine *m,
                       const workload *wl, const results *r)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("%s: %s", path, strerror(errno));
    double n = (double)wl->n, bpe = (double)r->log_bytes / n;
    const zstd_result *z = &r->zstd;
    fprintf(f, "{\n  \"benchmark\": \"codec\",\n  \"smoke\": %s,\n", o->smoke ? "true" : "false");
    fprintf(f, "  \"events\": %zu,\n  \"payload_bytes\": %d,\n  \"runs\": %d,\n  \"seed\": %" PRIu64
               ",\n  \"cpu\": %d,\n", wl->n, PAYLOAD_SIZE, o->runs, o->seed, cpu);
    fprintf(f, "  \"machine\": {\"cpu_model\": ");
    json_string(f, m->cpu_model);
    fprintf(f, ", \"cpus\": %ld, \"kernel\": ", m->ncpus);
    json_string(f, m->kernel);
    fprintf(f, ", \"compiler\": ");
    json_string(f, __VERSION__);
    fprintf(f, ", \"zstd_library\": \"%s\"},\n", ZSTD_versionString());
    fprintf(f, "  \"events_per_second\": {\n");
    json_stat(f, "encode", r->encode, 0);
    json_stat(f, "encode_file", r->encode_file, 0);
    json_stat(f, "encode_uncompressed", r->encode_raw, 0);
    json_stat(f, "chunk_encode", r->chunk_encode_z, 0);
    json_stat(f, "chunk_encode_uncompressed", r->chunk_encode_raw, 0);
    json_stat(f, "decode", r->decode, 0);
    json_stat(f, "decode_uncompressed", r->decode_raw, 0);
    json_stat(f, "chunk_decode", r->chunk_decode_z, 0);
    json_stat(f, "chunk_decode_uncompressed", r->chunk_decode_raw, 1);
    fprintf(f, "  },\n");
    if (r->log_bytes)
        fprintf(f, "  \"log_bytes\": %" PRIu64 ",\n  \"bytes_per_event\": %.4f,\n"
                   "  \"log_bytes_uncompressed\": %" PRIu64 ",\n",
                r->log_bytes, bpe, r->log_bytes_raw);
    fprintf(f, "  \"naive_record_bytes\": %d,\n", NAIVE_RECORD_SIZE);
    if (z->ok)
        fprintf(f, "  \"zstd_b1\": {\"seconds\": %d, \"src_bytes\": %" PRIu64 ", \"dst_bytes\": %"
                   PRIu64 ", \"ratio\": %.4f, \"compress_mb_s\": %.1f, \"decompress_mb_s\": %.1f, "
                   "\"compress_events_per_second\": %.0f, \"decompress_events_per_second\": %.0f, "
                   "\"bytes_per_event\": %.4f, \"cpu_share\": %.3f},\n",
                o->zstd_seconds, z->src, z->dst, z->ratio, z->comp_mbs, z->decomp_mbs,
                z->comp_mbs * 1e6 / NAIVE_RECORD_SIZE, z->decomp_mbs * 1e6 / NAIVE_RECORD_SIZE,
                (double)z->dst / n, z->cpu_share);
    else
        fprintf(f, "  \"zstd_b1\": null,\n");
    fprintf(f, "  \"targets\": {\"encode_events_per_second\": %.0f, \"decode_events_per_second\": "
               "%.0f, \"bytes_per_event\": %.1f},\n",
            TARGET_ENCODE_EPS, TARGET_DECODE_EPS, TARGET_BYTES_PER_EVENT);
    fprintf(f, "  \"met\": {\"encode\": %s, \"decode\": %s, \"size\": %s},\n",
            json_bool(r->encode.runs, r->encode.median >= TARGET_ENCODE_EPS),
            json_bool(r->decode.runs, r->decode.median >= TARGET_DECODE_EPS),
            json_bool(r->log_bytes != 0, bpe <= TARGET_BYTES_PER_EVENT));
    fprintf(f, "  \"checks_passed\": %s\n}\n", g_failed ? "false" : "true");
    if (fclose(f))
        die("%s: %s", path, strerror(errno));
}

/* ---- main -------------------------------------------------------------- */

/* Evaluates expr (seconds for n events) once untimed, then o->runs times. */
#define MEASURE(out, o, n, expr)                                        \
    do {                                                                \
        double v_[1000], c_[1000], share_ = 1.0;                        \
        (void)(expr);                                                   \
        for (int k_ = 0; k_ < (o)->runs; k_++) {                        \
            double c0_ = cpu_s(), w0_ = now_s();                        \
            v_[k_] = (double)(n) / (expr);                              \
            double cpu_ = cpu_s() - c0_, s_ = cpu_ / (now_s() - w0_);   \
            c_[k_] = (double)(n) / cpu_;                                \
            share_ = s_ < share_ ? s_ : share_;                         \
        }                                                               \
        (out) = summarise(v_, (o)->runs);                               \
        (out).cpu_share = share_;                                       \
        (out).cpu_rate = summarise(c_, (o)->runs).median;               \
    } while (0)

static void progress(const char *what) { fprintf(stderr, "bench_codec: %s\n", what); }

typedef struct paths {
    char log[PATH_MAX], raw[PATH_MAX], naive[PATH_MAX];
} paths;

/* Writer runs; also writes the two logs that the reader runs and the size figures use. */
static void stage_writer(const options *o, const workload *wl, const paths *p, results *r)
{
    uint64_t null_bytes = 0, bytes = 0;
    if (o->stages & STAGE_ENCODE) {
        progress("encode: writer -> null sink");
        MEASURE(r->encode, o, wl->n, run_encode_null(wl, 1, &null_bytes));
        MEASURE(r->encode_raw, o, wl->n, run_encode_null(wl, 0, &bytes));
        progress("encode: writer -> file");
        MEASURE(r->encode_file, o, wl->n, run_encode_file(wl, p->log, 1, &r->log_bytes));
    } else {
        run_encode_null(wl, 1, &null_bytes);
        run_encode_file(wl, p->log, 1, &r->log_bytes);
    }
    run_encode_file(wl, p->raw, 0, &r->log_bytes_raw);
    /* The null sink and the file saw the same bytes (only the salt and CRCs differ). */
    if (null_bytes != r->log_bytes)
        check_failed("the null sink received %" PRIu64 " bytes, the file has %" PRIu64,
                     null_bytes, r->log_bytes);
    verify_log(p->log, wl); /* also warms the page cache for the decode runs */
    verify_log(p->raw, wl);
}

static void stage_reader(const options *o, const workload *wl, const paths *p, results *r)
{
    progress("decode: reader");
    MEASURE(r->decode, o, wl->n, run_decode(p->log, wl));
    MEASURE(r->decode_raw, o, wl->n, run_decode(p->raw, wl));
}

static void stage_chunk(const options *o, const workload *wl, results *r)
{
    progress("chunk layer");
    ZSTD_CCtx *cctx = ZSTD_createCCtx();
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    if (!cctx || !dctx)
        die("out of memory");
    uint64_t stored;
    MEASURE(r->chunk_encode_z, o, wl->n, run_chunk_encode(wl, cctx, 1, NULL, &stored));
    MEASURE(r->chunk_encode_raw, o, wl->n, run_chunk_encode(wl, cctx, 0, NULL, &stored));
    chunk_set zset = {0}, rawset = {0};
    run_chunk_encode(wl, cctx, 1, &zset, &stored);
    run_chunk_encode(wl, cctx, 0, &rawset, &stored);
    run_chunk_decode(&zset, dctx, wl, 1);
    run_chunk_decode(&rawset, dctx, wl, 1);
    MEASURE(r->chunk_decode_z, o, wl->n, run_chunk_decode(&zset, dctx, wl, 0));
    MEASURE(r->chunk_decode_raw, o, wl->n, run_chunk_decode(&rawset, dctx, wl, 0));
    chunk_set_free(&zset);
    chunk_set_free(&rawset);
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
}

static void stage_zstd(const options *o, const workload *wl, const paths *p, results *r)
{
    write_naive(wl, p->naive);
    r->naive_bytes = (uint64_t)wl->n * NAIVE_RECORD_SIZE;
    if (o->zstd_seconds <= 0)
        return;
    progress("baseline: zstd -b1");
    r->zstd = run_zstd(p->naive, o->zstd_seconds);
    if (r->zstd.ok && r->zstd.src != r->naive_bytes)
        check_failed("zstd read %" PRIu64 " bytes, the naive file has %" PRIu64, r->zstd.src,
                     r->naive_bytes);
}

int main(int argc, char **argv)
{
    options o;
    if (parse_options(argc, argv, &o))
        return usage(stderr), 2;
    int cpu = pin_cpu(o.cpu);
    machine m;
    describe_machine(&m);
    paths p;
    snprintf(p.log, sizeof p.log, "%s/codec.ptl", o.dir);
    snprintf(p.raw, sizeof p.raw, "%s/codec-uncompressed.ptl", o.dir);
    snprintf(p.naive, sizeof p.naive, "%s/codec-naive.bin", o.dir);

    workload wl;
    progress("generating events");
    make_workload(&wl, o.events, o.seed);
    results r = {0};
    if (o.stages & (STAGE_ENCODE | STAGE_DECODE))
        stage_writer(&o, &wl, &p, &r);
    if (o.stages & STAGE_DECODE)
        stage_reader(&o, &wl, &p, &r);
    if (o.stages & STAGE_CHUNK)
        stage_chunk(&o, &wl, &r);
    if (o.stages & STAGE_ZSTD)
        stage_zstd(&o, &wl, &p, &r);
    if (!o.keep) {
        unlink(p.log);
        unlink(p.raw);
        unlink(p.naive);
    }

    print_report(&o, cpu, &m, &wl, &r);
    if (o.json)
        write_json(o.json, &o, cpu, &m, &wl, &r);
    printf("\nself-checks: %s\n", g_failed ? "FAILED" : "passed");
    free(wl.ev);
    free(wl.payloads);
    return g_failed ? 1 : 0;
}
