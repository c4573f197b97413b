/*
 * The log reader (format-spec/ptl-format.md section 8, "Reading").
 *
 * On a seekable file, open scans every block header (32 bytes each, payloads
 * of chunks are not read) and builds the chunk list in reading order: file
 * order for sequential logs, sequence order across segments for ring logs.
 * Chunk payloads are read, verified and decoded one merge set (spec 6.10)
 * at a time while iterating. On a stream, blocks are handled in file order
 * as they arrive, a set's chunks decoded as they come.
 *
 * Damage never stops reading: a block whose header checksum fails is skipped
 * by scanning forward, 8 bytes at a time, for the next valid header; a block
 * whose header is valid but whose payload is not is skipped whole (its
 * extent is trusted, which keeps the scan linear).
 *
 * This file holds the public entry points for opening, closing and the
 * queries; those of iteration are in iterate.c. internal.h says which file
 * holds each part.
 */
#include "tracelog/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "common/error.h"
#include "format/chunk.h"
#include "format/condition.h"
#include "format/event_types.h"
#include "format/format.h"
#include "format/threads.h"
#include "reader/internal.h"

void tracelog_reader_options_init(tracelog_reader_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->max_block_size = 64u << 20;
    opt->max_chunk_size = 64u << 20;
    opt->max_event_types = TL_LOG_EVENT_TYPES_MAX;
    opt->max_problems = 1000;
    opt->max_threads = TL_LOG_THREADS_MAX;
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    opt->ignore_checksums = 1;
#endif
}

/* ---- problems ---------------------------------------------------------- */

void tl_reader_problem(tracelog_reader *r, tl_condition cond, uint64_t off, uint64_t len, const char *fmt, ...)
{
    r->problem_total++;
    r->bytes_skipped += len;
    if (r->nproblems >= r->opt.max_problems)
        return;
    if (!r->problems) {
        r->problems = calloc(r->opt.max_problems, sizeof *r->problems);
        r->conditions = calloc(r->opt.max_problems, sizeof *r->conditions);
        if (!r->problems || !r->conditions) {
            free(r->problems);
            free(r->conditions);
            r->problems = NULL;
            r->conditions = NULL;
            return; /* details are best effort; the counters stay exact */
        }
    }
    r->conditions[r->nproblems] = (uint8_t)cond;
    tracelog_problem *p = &r->problems[r->nproblems++];
    p->code = tl_condition_status(cond);
    p->offset = off;
    p->length = len;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->message, sizeof p->message, fmt, ap);
    va_end(ap);
}

void tl_reader_load_problem(tracelog_reader *r, uint64_t off, const tl_load_problem *p)
{
    tl_reader_problem(r, p->cond, off, p->len, "%s", p->message);
}

/* ---- open ---------------------------------------------------------------- */

static tracelog_status read_header(tracelog_reader *r, tracelog_error *err)
{
    uint8_t buf[TL_HEADER_SIZE_MAX];
    size_t need = 16, have = 0;
    for (;;) {
        ssize_t n = tl_source_read(&r->src, have, buf + have, need - have);
        if (n < 0)
            return tl_fail(err, TRACELOG_E_IO, errno, 0, "cannot read: %s", strerror(errno));
        have += (size_t)n;
        size_t want;
        tracelog_status st = tl_header_decode(buf, have, &r->hdr, &want, err);
        if (st != TRACELOG_E_TRUNCATED || have < need || want <= have)
            return st;
        need = want; /* the header is longer than its first 16 bytes: read the rest */
    }
}

static void free_reader(tracelog_reader *r)
{
    tl_read_ahead_stop(r->ahead); /* first: its thread reads through r->src */
    tl_event_types_clear(&r->types);
    tl_thread_map_free(&r->threads);
    tl_thread_names_free(&r->names);
    free(r->defs);
    free(r->ignored);
    free(r->chunks);
    free(r->problems);
    free(r->conditions);
    free(r->reach);
    tl_merge_free(&r->set);
    tl_buf_free(&r->payload);
    ZSTD_freeDCtx(r->dctx);
    tl_source_free(&r->src);
    if (r->own_fd)
        close(r->src.fd);
    free(r);
}

/* A reader with its options, before its source is set. NULL when out of memory. */
static tracelog_reader *reader_new(const tracelog_reader_options *opt)
{
    tracelog_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (opt)
        r->opt = *opt;
    else
        tracelog_reader_options_init(&r->opt);
    if (r->opt.max_problems == 0)
        r->opt.max_problems = 1;
    r->threads_gen = 1; /* a key not looked up yet has 0 */
    return r;
}

/* Reads the header and indexes (or primes) the log of r's source. Frees r on failure. */
static tracelog_status reader_start(tracelog_reader *r, int source_errno, tracelog_reader **out,
                                    tracelog_error *err)
{
    r->dctx = ZSTD_createDCtx();
    tracelog_status st = TRACELOG_OK;
    if (source_errno)
        st = tl_fail(err, source_errno == EISDIR ? TRACELOG_E_INVAL : TRACELOG_E_IO, source_errno, 0, "%s",
                     strerror(source_errno));
    else if (!r->dctx)
        st = tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    else
        st = read_header(r, err);
    if (st == TRACELOG_OK) {
        r->salt32 = tl_salt32(r->hdr.salt);
        if (r->hdr.layout == TL_LAYOUT_RING && r->src.follow)
            st = tl_fail(err, TRACELOG_E_NOT_SEEKABLE, 0, 0,
                         "a LOOP (ring) log cannot be followed: its writer overwrites it in place");
        else if (r->hdr.layout == TL_LAYOUT_RING && !r->src.seekable)
            st = tl_fail(err, TRACELOG_E_NOT_SEEKABLE, 0, 0, "a LOOP (ring) log must be read from a seekable file");
    }
    if (st == TRACELOG_OK) {
        if (!r->src.seekable)
            st = tl_reader_stream_prime(r);
        else if (r->hdr.layout == TL_LAYOUT_RING)
            st = tl_reader_scan_ring(r);
        else
            st = tl_reader_scan_sequential(r);
        if (st != TRACELOG_OK)
            tl_fail(err, st, st == TRACELOG_E_IO ? errno : 0, TL_NO_OFFSET, "reading the log: %s",
                          st == TRACELOG_E_IO ? strerror(errno) : tracelog_strerror(st));
    }
    if (st != TRACELOG_OK) {
        free_reader(r);
        return st;
    }
    if (!r->have_meta) {
        if (!r->src.follow) /* a followed log's may be on its way: reported if it never came (follow.c) */
            tl_reader_problem(r, TL_COND_NO_METADATA, r->hdr.header_size, 0, "no valid metadata block: attributes unknown");
        /* The defaults of missing keys, so that callers always get valid policies. */
        r->meta.stream_full_policy = TRACELOG_POLICY_LOOP;
        r->meta.log_full_policy = tl_reader_layout_policy(r);
    }
    if (r->src.seekable) {
        tl_reader_report_drops(r);
        tl_reader_sort_defs(r);
    }
    *out = r;
    return TRACELOG_OK;
}

tracelog_status tracelog_reader_open(int fd, const tracelog_reader_options *opt,
                                     tracelog_reader **out, tracelog_error *err)
{
    if (!out || fd < 0)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "bad file descriptor or NULL out");
    *out = NULL;
    tracelog_reader *r = reader_new(opt);
    if (!r)
        return tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    return reader_start(r, tl_source_init(&r->src, fd), out, err);
}

tracelog_status tracelog_reader_open_follow(int fd, const tracelog_reader_options *opt, tracelog_reader **out,
                                            tracelog_error *err)
{
    if (!out || fd < 0)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "bad file descriptor or NULL out");
    *out = NULL;
    tracelog_reader *r = reader_new(opt);
    if (!r)
        return tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    int e = tl_source_init_follow(&r->src, fd);
    if (e == ESPIPE) {
        free_reader(r);
        return tl_fail(err, TRACELOG_E_NOT_SEEKABLE, 0, TL_NO_OFFSET,
                       "only a regular file can be followed (a pipe is read as it arrives: tracelog_reader_open)");
    }
    return reader_start(r, e, out, err);
}

tracelog_status tracelog_reader_open_read(tracelog_read_fn read, void *ctx, const tracelog_reader_options *opt,
                                          tracelog_reader **out, tracelog_error *err)
{
    if (!out || !read)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "NULL read function or out");
    *out = NULL;
    tracelog_reader *r = reader_new(opt);
    if (!r)
        return tl_fail(err, TRACELOG_E_NOMEM, 0, TL_NO_OFFSET, "out of memory");
    tl_source_init_read(&r->src, read, ctx);
    return reader_start(r, 0, out, err);
}

tracelog_status tracelog_reader_open_path(const char *path, const tracelog_reader_options *opt,
                                          tracelog_reader **out, tracelog_error *err)
{
    if (!path || !out)
        return tl_fail(err, TRACELOG_E_INVAL, 0, TL_NO_OFFSET, "NULL argument");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return tl_fail(err, TRACELOG_E_IO, errno, TL_NO_OFFSET, "%s: %s", path, strerror(errno));
    tracelog_status st = tracelog_reader_open(fd, opt, out, err);
    if (st != TRACELOG_OK) {
        close(fd);
        return st;
    }
    (*out)->own_fd = 1;
    return TRACELOG_OK;
}

tracelog_status tracelog_reader_set_read_ahead(tracelog_reader *r, int chunks)
{
    if (!r || chunks < 0 || chunks > TRACELOG_READ_AHEAD_MAX)
        return TRACELOG_E_INVAL;
    if (!r->src.seekable)
        return TRACELOG_E_NOT_SEEKABLE;
    if ((size_t)chunks == r->ahead_n)
        return TRACELOG_OK;
    tl_read_ahead_stop(r->ahead);
    r->ahead = NULL;
    r->ahead_n = 0;
    if (chunks == 0)
        return TRACELOG_OK;
    r->ahead = tl_read_ahead_start(r, (size_t)chunks);
    if (!r->ahead)
        return TRACELOG_E_NOMEM;
    r->ahead_n = (size_t)chunks;
    return TRACELOG_OK;
}

void tracelog_reader_close(tracelog_reader *r)
{
    if (r)
        free_reader(r);
}

/* ---- queries --------------------------------------------------------------- */

const tracelog_metadata *tracelog_reader_metadata(const tracelog_reader *r) { return r ? &r->meta : NULL; }

const tracelog_event_types *tracelog_reader_event_types(const tracelog_reader *r) { return r ? &r->types : NULL; }

const tracelog_schema *tracelog_reader_event_schema(const tracelog_reader *r, uint32_t id)
{
    return tracelog_event_types_schema(r ? &r->types : NULL, id);
}

size_t tracelog_reader_event_type_count(const tracelog_reader *r) { return tracelog_event_types_count(r ? &r->types : NULL); }

tracelog_status tracelog_reader_event_type(const tracelog_reader *r, size_t index, uint32_t *id,
                                           const char **name)
{
    return tracelog_event_types_at(r ? &r->types : NULL, index, id, name);
}

const char *tracelog_reader_event_name(const tracelog_reader *r, uint32_t id)
{
    return tracelog_event_types_name(r ? &r->types : NULL, id);
}

void tracelog_reader_get_info(const tracelog_reader *r, tracelog_reader_info *info)
{
    memset(info, 0, sizeof *info);
    if (!r)
        return;
    info->format_major = r->hdr.major;
    info->format_minor = r->hdr.minor;
    /* Clean: closed (the newest block is a valid trailer) and nothing known to be lost. */
    info->closed = r->have_trailer && r->trailer_seq == r->max_seq && !r->torn_tail;
    info->clean = info->closed && r->problem_total == 0;
    info->seekable = r->src.seekable;
    info->log_policy = r->meta.log_full_policy;
    info->file_size = r->src.size;
    info->blocks = r->blocks;
    info->chunks = r->nchunks;
    info->merged_chunks = r->merged_chunks;
    info->stored_bytes = r->stored_bytes;
    info->raw_bytes = r->raw_bytes;
    info->problems = r->problem_total;
    info->bytes_skipped = r->bytes_skipped;
    if (!r->src.seekable)
        return;
    for (size_t i = 0; i < r->nchunks; i++) {
        const tl_chunk_header *c = &r->chunks[i].ch;
        info->events += c->event_count;
        if (i == 0 || c->min_ts < info->first_ts)
            info->first_ts = c->min_ts;
        if (c->max_ts > info->last_ts)
            info->last_ts = c->max_ts;
    }
}

void tracelog_reader_get_status(const tracelog_reader *r, tracelog_log_status *st)
{
    memset(st, 0, sizeof *st);
    if (r && r->have_status)
        *st = r->status;
}

size_t tracelog_reader_thread_count(const tracelog_reader *r) { return r ? r->ndefs : 0; }

tracelog_status tracelog_reader_thread(const tracelog_reader *r, size_t index, uint32_t *pid, uint64_t *tid,
                                       uint32_t *kernel_tid)
{
    if (index >= tracelog_reader_thread_count(r))
        return TRACELOG_E_INVAL;
    const tl_thread_def *d = &r->defs[index].d;
    if (pid)
        *pid = d->pid;
    if (tid)
        *tid = d->tid;
    if (kernel_tid)
        *kernel_tid = d->ktid;
    return TRACELOG_OK;
}

const char *tracelog_reader_thread_name(const tracelog_reader *r, size_t index)
{
    if (index >= tracelog_reader_thread_count(r))
        return NULL;
    return tl_thread_names_get(&r->names, r->defs[index].d.name);
}

const char *tracelog_reader_event_thread_name(const tracelog_reader *r, const tracelog_event *ev)
{
    if (!r || !ev || !ev->kernel_tid)
        return NULL;
    /* The map holds the definitions that gave ev its kernel tid (those before its set's last chunk);
       the thread of the last event read (r->last, or the last lookup r->cache, both cleared whenever the
       map changes) is the common answer. */
    const tl_thread_def *d = r->last, *c = &r->cache;
    if (!d || d->pid != ev->pid || d->tid != ev->tid)
        d = c->ktid && c->pid == ev->pid && c->tid == ev->tid ? c : tl_thread_map_find(&r->threads, ev->pid, ev->tid);
    return d && d->ktid == ev->kernel_tid ? tl_thread_names_get(&r->names, d->name) : NULL;
}

size_t tracelog_reader_problem_count(const tracelog_reader *r) { return r ? r->nproblems : 0; }

tracelog_status tracelog_reader_problem(const tracelog_reader *r, size_t index, tracelog_problem *out)
{
    if (!r || !out || index >= r->nproblems)
        return TRACELOG_E_INVAL;
    *out = r->problems[index];
    return TRACELOG_OK;
}

const char *tracelog_reader_problem_condition(const tracelog_reader *r, size_t index)
{
    if (!r || index >= r->nproblems)
        return NULL;
    return tl_condition_name((tl_condition)r->conditions[index]);
}

const char *tracelog_reader_open_condition(const tracelog_error *err)
{
    if (!err)
        return NULL;
    return tl_condition_name(tl_header_condition(err->code, err->offset));
}
