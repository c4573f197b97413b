/*
 * Shared helpers of the fuzz targets (fuzz/README.md).
 *
 *  - FUZZ_ASSERT(cond, ...): a property the target checks. A failure prints
 *    where and why, then aborts (libFuzzer records the input as a crash), or,
 *    under fuzz/standalone_main.c, names the input and makes the replay
 *    program exit non-zero.
 *  - fuzz_fdp: a FuzzedDataProvider in C. Structured values (sizes, flags,
 *    choices) are taken from the END of the input, raw bytes from the
 *    front, so that small mutations of the input change few decisions.
 *  - fuzz_memfd(): the input as a seekable in-memory file descriptor.
 *  - fuzz_hash: an order-sensitive digest of event sequences, so two passes
 *    over a log can be compared in constant memory.
 *
 * Every function is static: each target is one translation unit. Targets
 * define _GNU_SOURCE (memfd_create, pipe2) before including anything.
 */
#ifndef TRACELOG_FUZZ_HELPERS_H
#define TRACELOG_FUZZ_HELPERS_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/crc32c.h" /* internal: header repair below */
#include "tracelog.h"

/* The libFuzzer entry point every target defines. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Defined by fuzz/standalone_main.c only (a weak reference stays NULL in
 * libFuzzer programs): reports the failure and does not return.
 */
void fuzz_standalone_assert_failed(void) __attribute__((weak, noreturn));

static void fuzz_fail(const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 4, 5)));

static void fuzz_fail(const char *file, int line, const char *expr, const char *fmt, ...)
{
    fprintf(stderr, "FUZZ_ASSERT failed at %s:%d: %s", file, line, expr);
    if (fmt && *fmt) {
        va_list ap;
        va_start(ap, fmt);
        fputs(": ", stderr);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
    }
    fputc('\n', stderr);
    fflush(stderr);
    if (fuzz_standalone_assert_failed)
        fuzz_standalone_assert_failed();
    abort();
}

/* FUZZ_ASSERT(cond) without a message passes an empty format. */
#pragma GCC diagnostic ignored "-Wformat-zero-length"

#define FUZZ_ASSERT(cond, ...)                                          \
    do {                                                                \
        if (!(cond))                                                    \
            fuzz_fail(__FILE__, __LINE__, #cond, "" __VA_ARGS__);       \
    } while (0)

/*
 * FUZZ_DEEP(): the input got past the target's first gate (a mapping
 * accepted and an event taken, a log opened, a text parsed). Under the
 * replay driver a seed (a file named seed-*, but for seed-bad-*, which are
 * refused by design) that never gets there fails the replay: a seed
 * refused at the gate tests nothing but the refusal, which is what a format
 * or layout change makes of seeds nobody generated again
 * (fuzz/make-corpus.sh). A no-op in libFuzzer programs.
 */
void fuzz_standalone_deep(void) __attribute__((weak));
#define FUZZ_DEEP()                                                     \
    do {                                                                \
        if (fuzz_standalone_deep)                                       \
            fuzz_standalone_deep();                                     \
    } while (0)

/* Aborts on a failure of the harness itself (not of the code under test). */
#define FUZZ_CHECK_SYS(cond)                                            \
    do {                                                                \
        if (!(cond)) {                                                  \
            fprintf(stderr, "fuzz harness: %s failed: %s\n", #cond,     \
                    strerror(errno));                                   \
            abort();                                                    \
        }                                                               \
    } while (0)

/* ---- FuzzedDataProvider ---------------------------------------------- */

typedef struct fuzz_fdp {
    const uint8_t *data;
    size_t size;
} fuzz_fdp;

static inline void fuzz_fdp_init(fuzz_fdp *f, const uint8_t *data, size_t size)
{
    f->data = data;
    f->size = size;
}

static inline size_t fuzz_fdp_remaining(const fuzz_fdp *f) { return f->size; }

/* An integer in [lo, hi], from as few tail bytes as the range needs (lo if none left). */
static inline uint64_t fuzz_fdp_range(fuzz_fdp *f, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return lo;
    uint64_t span = hi - lo, v = 0;
    for (unsigned bits = 0; bits < 64 && (span >> bits) != 0 && f->size; bits += 8) {
        v = (v << 8) | f->data[f->size - 1];
        f->size--;
    }
    return span == UINT64_MAX ? lo + v : lo + v % (span + 1);
}

static inline uint64_t fuzz_fdp_u64(fuzz_fdp *f) { return fuzz_fdp_range(f, 0, UINT64_MAX); }
static inline uint32_t fuzz_fdp_u32(fuzz_fdp *f) { return (uint32_t)fuzz_fdp_range(f, 0, UINT32_MAX); }
static inline uint8_t fuzz_fdp_u8(fuzz_fdp *f) { return (uint8_t)fuzz_fdp_range(f, 0, 255); }
static inline int fuzz_fdp_bool(fuzz_fdp *f) { return (int)(fuzz_fdp_u8(f) & 1); }

/* Up to n bytes from the front; returns how many were available. */
static inline size_t fuzz_fdp_bytes(fuzz_fdp *f, size_t n, const uint8_t **out)
{
    if (n > f->size)
        n = f->size;
    *out = f->data;
    f->data += n;
    f->size -= n;
    return n;
}

/* ---- files ------------------------------------------------------------- */

/* A memfd holding data[0..size), positioned at 0. Aborts if the system refuses. */
static inline int fuzz_memfd(const char *name, const uint8_t *data, size_t size)
{
    int fd = memfd_create(name, MFD_CLOEXEC);
    FUZZ_CHECK_SYS(fd >= 0);
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(fd, data + done, size - done);
        if (k < 0 && errno == EINTR)
            continue;
        FUZZ_CHECK_SYS(k > 0);
        done += (size_t)k;
    }
    FUZZ_CHECK_SYS(lseek(fd, 0, SEEK_SET) == 0);
    return fd;
}

/* The whole content of fd (a regular file) into a malloc'd buffer; *len its size. */
static inline uint8_t *fuzz_slurp(int fd, size_t *len)
{
    off_t end = lseek(fd, 0, SEEK_END);
    FUZZ_CHECK_SYS(end >= 0);
    uint8_t *buf = malloc((size_t)end + 1);
    FUZZ_CHECK_SYS(buf != NULL);
    size_t done = 0;
    while (done < (size_t)end) {
        ssize_t k = pread(fd, buf + done, (size_t)end - done, (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        FUZZ_CHECK_SYS(k > 0);
        done += (size_t)k;
    }
    *len = done;
    return buf;
}

/* ---- digests of event sequences -------------------------------------- */

typedef struct fuzz_hash {
    uint64_t h;
    uint64_t count;
} fuzz_hash;

static inline void fuzz_hash_init(fuzz_hash *x)
{
    x->h = 0xcbf29ce484222325ull;
    x->count = 0;
}

static inline void fuzz_hash_bytes(fuzz_hash *x, const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = x->h;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    x->h = h;
}

static inline void fuzz_hash_u64(fuzz_hash *x, uint64_t v)
{
    uint8_t b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (uint8_t)(v >> (8 * i));
    fuzz_hash_bytes(x, b, sizeof b);
}

/* Digest of one event, every field and every payload byte (so that a
   sanitizer sees each byte read). */
static inline uint64_t fuzz_event_digest(const tracelog_event *ev)
{
    fuzz_hash x;
    fuzz_hash_init(&x);
    fuzz_hash_u64(&x, ev->timestamp_ns);
    fuzz_hash_u64(&x, ev->event_id);
    fuzz_hash_u64(&x, ev->pid);
    fuzz_hash_u64(&x, ev->tid);
    fuzz_hash_u64(&x, ev->address);
    fuzz_hash_u64(&x, ev->truncation);
    fuzz_hash_u64(&x, ev->payload_len);
    if (ev->payload_len)
        fuzz_hash_bytes(&x, ev->payload, ev->payload_len);
    return x.h;
}

static inline void fuzz_hash_event(fuzz_hash *x, const tracelog_event *ev)
{
    fuzz_hash_u64(x, fuzz_event_digest(ev));
    x->count++;
}

static inline int fuzz_event_equal(const tracelog_event *a, const tracelog_event *b)
{
    return a->timestamp_ns == b->timestamp_ns && a->event_id == b->event_id && a->pid == b->pid &&
           a->tid == b->tid && a->address == b->address && a->truncation == b->truncation &&
           a->payload_len == b->payload_len &&
           (a->payload_len == 0 || memcmp(a->payload, b->payload, a->payload_len) == 0);
}

/* ---- values -------------------------------------------------------------- */

/*
 * Two metadata records hold the same attributes. Compared field by field:
 * bytes after a text field's NUL are not part of the value (a decoder that
 * sees a key twice may leave the tail of the longer first value there).
 */
static inline int fuzz_meta_equal(const tracelog_metadata *a, const tracelog_metadata *b)
{
#define TEXT_EQ(f) (strncmp(a->f, b->f, sizeof a->f) == 0)
    return TEXT_EQ(trace_name) && TEXT_EQ(generation_version) && TEXT_EQ(clock_id) &&
           TEXT_EQ(clock_source) && TEXT_EQ(hostname) && TEXT_EQ(os_name) && TEXT_EQ(os_release) &&
           TEXT_EQ(machine) && TEXT_EQ(program) && a->creation_time_ns == b->creation_time_ns &&
           a->clock_resolution_ns == b->clock_resolution_ns && a->max_data_size == b->max_data_size &&
           a->stream_min_size == b->stream_min_size && a->log_max_size == b->log_max_size &&
           a->stream_full_policy == b->stream_full_policy && a->log_full_policy == b->log_full_policy &&
           a->inherited == b->inherited && a->pid == b->pid && a->clock_tsc_base == b->clock_tsc_base &&
           a->clock_ns_base == b->clock_ns_base && a->clock_mult == b->clock_mult && a->clock_shift == b->clock_shift;
#undef TEXT_EQ
}

/* ---- reading ------------------------------------------------------------ */

/*
 * The file header carries a CRC-32C that the reader always checks (the
 * fuzzing build only bypasses block checksums), which would keep a fuzzer
 * from ever reaching the header's fields. If data starts with a header
 * whose size field is sane and whose checksum is wrong, returns a malloc'd
 * copy with the checksum fixed (the caller frees it); otherwise NULL.
 */
static inline uint8_t *fuzz_repair_header(const uint8_t *data, size_t size)
{
    static const uint8_t magic[8] = {0x8b, 'P', 'T', 'L', '\r', '\n', 0x1a, '\n'};
    if (size < 16 || memcmp(data, magic, 8) != 0)
        return NULL;
    uint32_t hs = (uint32_t)data[12] | (uint32_t)data[13] << 8 | (uint32_t)data[14] << 16 |
                  (uint32_t)data[15] << 24;
    if (hs < 64 || hs > 4096 || hs % 8 || hs > size)
        return NULL;
    uint32_t crc = tl_crc32c(0, data, hs - 4);
    uint8_t want[4] = {(uint8_t)crc, (uint8_t)(crc >> 8), (uint8_t)(crc >> 16), (uint8_t)(crc >> 24)};
    if (memcmp(data + hs - 4, want, 4) == 0)
        return NULL;
    uint8_t *copy = malloc(size);
    FUZZ_CHECK_SYS(copy != NULL);
    memcpy(copy, data, size);
    memcpy(copy + hs - 4, want, 4);
    return copy;
}

/* Status codes tracelog_reader_open may return on a readable descriptor. */
static inline int fuzz_open_error_ok(tracelog_status st)
{
    return st == TRACELOG_E_BAD_MAGIC || st == TRACELOG_E_UNSUPPORTED_VERSION ||
           st == TRACELOG_E_TRUNCATED || st == TRACELOG_E_CHECKSUM || st == TRACELOG_E_CORRUPT ||
           st == TRACELOG_E_NOT_SEEKABLE;
}

/* err must describe st with a NUL-terminated, non-empty message. */
static inline void fuzz_check_error(const tracelog_error *err, tracelog_status st)
{
    FUZZ_ASSERT(err->code == st, "error record says %s, call returned %s",
                tracelog_status_name(err->code), tracelog_status_name(st));
    FUZZ_ASSERT(memchr(err->message, 0, sizeof err->message) != NULL);
    FUZZ_ASSERT(err->message[0] != 0, "empty error message for %s", tracelog_status_name(st));
}

/* Reader options of the fuzzers: the library's defaults, checksums as asked. */
static inline tracelog_reader_options fuzz_reader_options(int ignore_checksums)
{
    tracelog_reader_options opt;
    tracelog_reader_options_init(&opt);
    opt.ignore_checksums = ignore_checksums;
    return opt;
}

/*
 * Reads every remaining event of r into x. Returns the status that ended the
 * iteration (TRACELOG_END normally). A reader must end: the iteration is
 * capped far above any event count a fuzz input can encode.
 */
static inline tracelog_status fuzz_drain(tracelog_reader *r, fuzz_hash *x)
{
    tracelog_event ev;
    tracelog_status st;
    uint64_t guard = 0;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        FUZZ_ASSERT(ev.truncation <= TRACELOG_TRUNC_READ, "truncation %u", ev.truncation);
        FUZZ_ASSERT(ev.payload_len == 0 || ev.payload != NULL);
        fuzz_hash_event(x, &ev);
        FUZZ_ASSERT(++guard < (1ull << 32), "reader does not end");
    }
    return st;
}

#endif
