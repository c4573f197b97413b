/*
 * Kernel thread ids (format 1.1, format-spec 5.7): the writer records each
 * thread's kernel tid once, in THREADS blocks, and the reader gives every
 * event the kernel tid of the latest definition before it, on a file and on
 * a pipe, after rewind and seek; a reused thread handle starts a new
 * definition; logs of format 1.0 read with kernel tid 0; malformed THREADS
 * blocks are reported (BAD_THREADS, ignored as a whole) and never crash; a LOOP log that runs out of room
 * for definitions counts and reports them, and keeps room for names.
 * Thread names (format 1.2): given to the writer, renamed without ending a
 * chunk, written once, read back per event and per definition, on a file
 * and on a pipe; bad names are ignored with BAD_THREAD_NAME; a 1.1 log
 * reads without names.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/chunk.h"
#include "format/format.h"
#include "format/meta.h"
#include "format/threads.h"
#include "tl_test.h"
#include "writer/io.h"
#include "xproc/proc.h"

static tracelog_event ev_of(uint64_t ts, uint32_t pid, uint64_t tid, uint32_t ktid)
{
    tracelog_event ev;
    memset(&ev, 0, sizeof ev);
    ev.timestamp_ns = ts;
    ev.event_id = 1;
    ev.pid = pid;
    ev.tid = tid;
    ev.kernel_tid = ktid;
    return ev;
}

static tracelog_writer *new_writer(int fd, tracelog_policy policy, uint64_t log_size)
{
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.log_policy = policy;
    if (log_size)
        o.log_max_size = log_size;
    o.chunk_size = 4096;
    return tl_test_new_writer(fd, &o);
}

static void check_ktids(const tl_test_readout *r, const uint32_t *want, size_t n)
{
    if (!CHECK_EQ(r->events.n, n))
        return;
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(r->events.ev[i].kernel_tid == want[i], "event %zu: kernel tid %u, want %u", i,
                  r->events.ev[i].kernel_tid, want[i]);
}

/* A thread handle reused by another kernel thread in the middle of a chunk. */
static void test_reuse(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_APPEND, 0);
    tracelog_writer_define_event(w, 1, "e");
    const tracelog_event evs[] = {
        ev_of(1, 1, 100, 10), ev_of(2, 1, 100, 10), ev_of(3, 1, 100, 10),
        ev_of(4, 1, 100, 11), ev_of(5, 1, 100, 11), /* a new thread with the same pthread_t */
        ev_of(6, 2, 100, 20),                       /* same tid in another process */
        ev_of(7, 1, 100, 0),                        /* unknown: the table's tid */
        ev_of(8, 1, 300, 0),                        /* a thread never named */
    };
    const uint32_t want[] = {10, 10, 10, 11, 11, 20, 11, 0};
    for (size_t i = 0; i < sizeof evs / sizeof *evs; i++)
        CHECK_STATUS(tracelog_writer_append(w, &evs[i]), TRACELOG_OK);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);

    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    check_ktids(&r, want, 8);
    CHECK_EQ(r.info.chunks, 2); /* the handle's new kernel tid ended the first chunk */
    CHECK_EQ(r.nproblems, 0);
    CHECK(r.info.clean);
    tl_test_readout_free(&r);

    size_t len;
    uint8_t *bytes = tl_test_fd_slurp(fd, &len);
    tl_test_read_bytes_pipe(bytes, len, NULL, &r); /* forward only: definitions applied as they come */
    check_ktids(&r, want, 8);
    CHECK_EQ(r.nproblems, 0);
    tl_test_readout_free(&r);

    /* The definitions, in the order written: once per thread, not per event. */
    tracelog_reader *rd;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &rd, NULL), TRACELOG_OK)) {
        static const struct { uint32_t pid; uint64_t tid; uint32_t ktid; } defs[] = {
            {1, 100, 10}, {1, 100, 11}, {2, 100, 20}};
        CHECK_EQ(tracelog_reader_thread_count(rd), 3);
        for (size_t i = 0; i < 3; i++) {
            uint32_t pid = 0, ktid = 0;
            uint64_t tid = 0;
            CHECK_STATUS(tracelog_reader_thread(rd, i, &pid, &tid, &ktid), TRACELOG_OK);
            CHECK(pid == defs[i].pid && tid == defs[i].tid && ktid == defs[i].ktid);
        }
        CHECK_STATUS(tracelog_reader_thread(rd, 3, NULL, NULL, NULL), TRACELOG_E_INVAL);
        tracelog_reader_close(rd);
    }
    CHECK_EQ(tracelog_reader_thread_count(NULL), 0);
    free(bytes);
    close(fd);
}

/* Many chunks and handle reuses: rewind and seek (back too) give every event its kernel tid. */
static void test_rewind_and_seek(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_APPEND, 0);
    tracelog_writer_define_event(w, 1, "e");
    enum { N = 3000 };
    static uint32_t want[N];
    uint8_t pad[200] = {0};
    for (uint32_t i = 0; i < N; i++) {
        uint64_t tid = 0x7f00 + i % 3;
        want[i] = 1000 + (uint32_t)(i % 3) * 100 + i / 250; /* each handle reused every 250 events */
        tracelog_event ev = ev_of(1000 + i, 42, tid, want[i]);
        ev.payload = pad;
        ev.payload_len = sizeof pad; /* about 20 events per 4 KiB chunk */
        tracelog_writer_append(w, &ev);
        if (i % 97 == 0)
            tracelog_writer_flush(w);
    }
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    tracelog_reader *r;
    lseek(fd, 0, SEEK_SET);
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK)) {
        close(fd);
        return;
    }
    CHECK_EQ(tracelog_reader_thread_count(r), 3 * 12); /* 3 handles x 12 kernel threads each */
    for (int pass = 0; pass < 2; pass++) {
        tracelog_event ev;
        uint32_t i = 0, bad = 0;
        while (tracelog_reader_next(r, &ev) == TRACELOG_OK && i < N)
            bad += ev.kernel_tid != want[i++];
        CHECK_EQ(i, N);
        CHECK_EQ(bad, 0);
        CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    }
    static const uint32_t seeks[] = {2500, 10, 1777, 0, 2999, 251, 249};
    for (size_t k = 0; k < sizeof seeks / sizeof *seeks; k++) {
        tl_test_context("seek to event %u", seeks[k]);
        CHECK_STATUS(tracelog_reader_seek_time(r, 1000 + seeks[k]), TRACELOG_OK);
        tracelog_event ev;
        uint32_t bad = 0;
        for (uint32_t i = seeks[k]; i < seeks[k] + 30 && i < N; i++)
            bad += tracelog_reader_next(r, &ev) != TRACELOG_OK || ev.kernel_tid != want[i];
        CHECK_EQ(bad, 0);
    }
    tl_test_context(NULL);
    tracelog_reader_close(r);
    close(fd);
}

/* A log of format 1.0 has no thread table: every kernel tid reads 0. */
static void test_format_10(void)
{
    const char *src = getenv("TL_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/samples/golden/append.ptl", src ? src : "..");
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (!CHECK_MSG(fd >= 0, "cannot open %s", path))
        return;
    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.info.format_minor, 0);
    CHECK(r.events.n > 400);
    size_t nonzero = 0;
    for (size_t i = 0; i < r.events.n; i++)
        nonzero += r.events.ev[i].kernel_tid != 0;
    CHECK_EQ(nonzero, 0);
    tl_test_readout_free(&r);
    close(fd);
}

/* ---- crafted files ---------------------------------------------------------- */

typedef struct crafted {
    tl_buf file;
    uint32_t salt32;
    uint64_t seq;
    uint64_t last_block; /* offset of the last block added */
} crafted;

static void craft_block(crafted *c, uint16_t type, const void *payload, size_t len)
{
    tl_block_header h = {type, 0, c->seq++, (uint32_t)len, tl_block_payload_crc(c->salt32, payload, len)};
    size_t span = (size_t)tl_block_span((uint32_t)len);
    c->last_block = c->file.len;
    if (tl_buf_reserve(&c->file, span))
        TL_DIE("out of memory");
    memset(c->file.data + c->file.len, 0, span);
    tl_block_header_encode(&h, c->salt32, c->file.data + c->file.len);
    if (len)
        memcpy(c->file.data + c->file.len + TL_BLOCK_HEADER_SIZE, payload, len);
    c->file.len += span;
}

static void craft_start(crafted *c)
{
    memset(c, 0, sizeof *c);
    tl_file_header h = {.major = 1, .minor = 1, .header_size = TL_HEADER_SIZE, .salt = 0x1234567890abcdefull};
    c->salt32 = tl_salt32(h.salt);
    if (tl_buf_reserve(&c->file, TL_HEADER_SIZE))
        TL_DIE("out of memory");
    tl_header_encode(&h, c->file.data);
    c->file.len = TL_HEADER_SIZE;
    tracelog_metadata m;
    memset(&m, 0, sizeof m);
    m.stream_full_policy = TRACELOG_POLICY_LOOP;
    m.log_full_policy = TRACELOG_POLICY_APPEND;
    tl_buf p = {0};
    if (tl_meta_encode(&m, &p) != TRACELOG_OK)
        TL_DIE("metadata");
    craft_block(c, TL_BLOCK_METADATA, p.data, p.len);
    tl_buf_free(&p);
}

/* A chunk of one event of each of the threads (pid 1, tid 1), (pid 1, tid 2), (pid 1, tid 3). */
static void craft_chunk(crafted *c, uint64_t ts)
{
    tl_chunk_builder b;
    memset(&b, 0, sizeof b);
    tl_chunk_builder_reset(&b);
    for (uint64_t t = 1; t <= 3; t++) {
        tracelog_event ev = ev_of(ts + t, 1, t, 0);
        tl_chunk_add(&b, &ev);
    }
    tl_buf p = {0};
    if (tl_chunk_finish(&b, NULL, 0, &p) != TRACELOG_OK)
        TL_DIE("chunk");
    craft_block(c, TL_BLOCK_CHUNK, p.data, p.len);
    tl_buf_free(&p);
    tl_chunk_builder_free(&b);
}

/* CBOR helpers for hand-made THREADS payloads. */
static void put_entry(tl_buf *b, uint64_t pid, uint64_t tid, uint64_t ktid)
{
    tl_cbor_put_map(b, 3);
    tl_cbor_put_text(b, "pid");
    tl_cbor_put_uint(b, pid);
    tl_cbor_put_text(b, "tid");
    tl_cbor_put_uint(b, tid);
    tl_cbor_put_text(b, "ktid");
    tl_cbor_put_uint(b, ktid);
}

typedef struct crafted_case {
    const char *what;
    void (*payload)(tl_buf *b);
    uint32_t want[3];          /* kernel tids of the chunk's three events */
    tracelog_status problem;   /* TRACELOG_OK: none */
    uint32_t max_threads;      /* reader option, 0: default */
} crafted_case;

static void p_valid(tl_buf *b)
{
    tl_cbor_put_array(b, 3);
    put_entry(b, 1, 1, 5);
    /* keys in another order, and one a later version may add: ignored */
    tl_cbor_put_map(b, 4);
    tl_cbor_put_text(b, "ktid");
    tl_cbor_put_uint(b, 6);
    tl_cbor_put_text(b, "name");
    tl_cbor_put_text(b, "worker");
    tl_cbor_put_text(b, "tid");
    tl_cbor_put_uint(b, 2);
    tl_cbor_put_text(b, "pid");
    tl_cbor_put_uint(b, 1);
    put_entry(b, 1, 1, 7); /* a later entry replaces */
}
static void p_missing_ktid(tl_buf *b)
{
    tl_cbor_put_array(b, 3);
    put_entry(b, 1, 1, 5);
    tl_cbor_put_map(b, 2);
    tl_cbor_put_text(b, "pid");
    tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "tid");
    tl_cbor_put_uint(b, 2);
    put_entry(b, 1, 3, 9); /* after the bad entry: not applied */
}
static void p_not_a_map(tl_buf *b)
{
    tl_cbor_put_array(b, 2);
    put_entry(b, 1, 2, 6);
    tl_cbor_put_uint(b, 4);
}
static void p_ktid_zero(tl_buf *b)
{
    tl_cbor_put_array(b, 1);
    put_entry(b, 1, 1, 0);
}
static void p_ktid_too_large(tl_buf *b)
{
    tl_cbor_put_array(b, 1);
    put_entry(b, 1, 1, 1ull << 32);
}
static void p_pid_too_large(tl_buf *b)
{
    tl_cbor_put_array(b, 1);
    put_entry(b, 1ull << 32, 1, 5);
}
static void p_ktid_wrong_type(tl_buf *b)
{
    tl_cbor_put_array(b, 1);
    tl_cbor_put_map(b, 3);
    tl_cbor_put_text(b, "pid");
    tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "tid");
    tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "ktid");
    tl_cbor_put_text(b, "5");
}
static void p_bytes_after(tl_buf *b)
{
    tl_cbor_put_array(b, 1);
    put_entry(b, 1, 3, 8);
    tl_cbor_put_uint(b, 0);
}
static void p_not_an_array(tl_buf *b) { put_entry(b, 1, 1, 5); }
static void p_three(tl_buf *b)
{
    tl_cbor_put_array(b, 3);
    put_entry(b, 1, 1, 5);
    put_entry(b, 1, 2, 6);
    put_entry(b, 1, 3, 7);
}

static void read_both_ways(const crafted *c, const crafted_case *k, int after_chunk)
{
    tracelog_reader_options o;
    tracelog_reader_options_init(&o);
    if (k->max_threads)
        o.max_threads = k->max_threads;
    for (int pipe = 0; pipe < 2; pipe++) {
        tl_test_context("%s%s%s", k->what, after_chunk ? ", after the chunk" : "", pipe ? ", pipe" : "");
        tl_test_readout r;
        if (pipe)
            tl_test_read_bytes_pipe(c->file.data, c->file.len, &o, &r);
        else
            tl_test_read_bytes(c->file.data, c->file.len, &o, &r);
        CHECK_STATUS(r.open_status, TRACELOG_OK);
        if (after_chunk) { /* a definition names the threads of later chunks only */
            if (CHECK_EQ(r.events.n, 6)) {
                for (size_t i = 0; i < 3; i++) {
                    CHECK_EQ(r.events.ev[i].kernel_tid, 0);
                    CHECK_EQ(r.events.ev[3 + i].kernel_tid, k->want[i]);
                }
            }
        } else {
            check_ktids(&r, k->want, 3);
        }
        if (k->problem == TRACELOG_OK) {
            CHECK_EQ(r.nproblems, 0);
        } else if (CHECK_EQ(r.nproblems, 1)) {
            CHECK_STATUS(r.problems[0].code, k->problem);
            CHECK_EQ(r.problems[0].offset, c->last_block); /* the THREADS block */
        }
        tl_test_readout_free(&r);
    }
}

static void test_crafted(void)
{
    static const crafted_case cases[] = {
        {"valid, keys in any order, unknown key", p_valid, {7, 6, 0}, TRACELOG_OK, 0},
        /* a block with an invalid entry is ignored as a whole (5.7, as EVENT_TYPES) */
        {"entry without ktid", p_missing_ktid, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"entry not a map", p_not_a_map, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"ktid 0", p_ktid_zero, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"ktid above 2^32-1", p_ktid_too_large, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"pid above 2^32-1", p_pid_too_large, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"ktid of the wrong type", p_ktid_wrong_type, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"bytes after the array", p_bytes_after, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"not an array", p_not_an_array, {0, 0, 0}, TRACELOG_E_CORRUPT, 0},
        {"over the reader's max_threads", p_three, {5, 6, 0}, TRACELOG_E_LIMIT, 2},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        tl_buf p = {0};
        cases[i].payload(&p);
        for (int after_chunk = 0; after_chunk < 2; after_chunk++) {
            crafted c;
            craft_start(&c);
            if (after_chunk)
                craft_chunk(&c, 1000);
            craft_block(&c, TL_BLOCK_THREADS, p.data, p.len);
            uint64_t threads_block = c.last_block;
            craft_chunk(&c, 2000);
            c.last_block = threads_block;
            read_both_ways(&c, &cases[i], after_chunk);
            tl_buf_free(&c.file);
        }
        tl_buf_free(&p);
    }
    tl_test_context(NULL);
}

/* Flushes and closes a LOOP writer whose durable region ran out of room for thread definitions only. */
static void close_dropping_threads(tracelog_writer *w, tracelog_log_status *st)
{
    tracelog_writer_flush(w);
    tracelog_writer_get_status(w, st);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    CHECK(st->threads_dropped > 0);
    CHECK_EQ(st->types_dropped, 0);
}

/*
 * LOOP: a program that keeps starting threads fills the room the durable
 * region gives thread definitions (three quarters of it); the others are
 * counted and reported, and the names defined after them still fit.
 */
static void test_loop_full_of_threads(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_LOOP, 1); /* the smallest durable region: 8128 bytes */
    tracelog_writer_define_event(w, 1, "e");
    enum { THREADS = 2000 };
    for (uint32_t i = 0; i < THREADS; i++) {
        tracelog_event ev = ev_of(1000 + i, 7, 0x7f0000000000ull + i * 0x1000, 5000 + i);
        tracelog_writer_append(w, &ev);
        if (i % 50 == 49)
            tracelog_writer_flush(w);
    }
    char name[64];
    for (uint32_t id = 2; id < 40; id++) { /* 38 names of 40 bytes: about 2 KiB */
        snprintf(name, sizeof name, "defined.after.the.threads.number.%06u", id);
        CHECK_STATUS(tracelog_writer_define_event(w, id, name), TRACELOG_OK);
    }
    tracelog_event last = ev_of(999999, 7, 0x7f0000000000ull, 5000);
    last.event_id = 39;
    tracelog_writer_append(w, &last);
    tracelog_log_status st;
    close_dropping_threads(w, &st);

    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.status.threads_dropped, st.threads_dropped);
    CHECK_EQ(r.ntypes, 39);
    tracelog_reader *rd;
    lseek(fd, 0, SEEK_SET);
    size_t kept = 0;
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &rd, NULL), TRACELOG_OK)) {
        kept = tracelog_reader_thread_count(rd);
        tracelog_reader_close(rd);
    }
    CHECK_EQ(kept + st.threads_dropped, THREADS); /* every definition written or counted */
    CHECK(kept > 100);
    char said[64];
    snprintf(said, sizeof said, "%llu thread definitions", (unsigned long long)st.threads_dropped);
    int found = 0;
    for (size_t i = 0; i < r.nproblems; i++)
        found |= r.problems[i].code == TRACELOG_E_LIMIT && strstr(r.problems[i].message, said) != NULL;
    CHECK_MSG(found, "no problem says \"%s\"", said);
    /* the surviving events: a kernel tid if their thread was recorded, else 0; never another's */
    size_t wrong = 0;
    for (size_t i = 0; i < r.events.n; i++) {
        const tracelog_event *e = &r.events.ev[i];
        uint32_t want = 5000 + (uint32_t)((e->tid - 0x7f0000000000ull) / 0x1000);
        wrong += e->kernel_tid != 0 && e->kernel_tid != want;
    }
    CHECK_EQ(wrong, 0);
    tl_test_readout_free(&r);
    close(fd);
}

/* ---- thread names (format 1.2) ------------------------------------------------- */

typedef struct mem_src {
    const uint8_t *p;
    size_t len, pos;
} mem_src;

static long mem_read(void *ctx, void *buf, size_t n)
{
    mem_src *m = ctx;
    size_t k = m->len - m->pos < n ? m->len - m->pos : n;
    memcpy(buf, m->p + m->pos, k);
    m->pos += k;
    return (long)k;
}

/* The thread name of each event of the log in file[0..len) ("-" for none), read from fd or, piped, from memory. */
static size_t read_names(int fd, const uint8_t *file, size_t len, int piped, char (*names)[80], size_t max)
{
    tracelog_reader *r;
    mem_src m = {file, len, 0};
    lseek(fd, 0, SEEK_SET);
    tracelog_status st = piped ? tracelog_reader_open_read(mem_read, &m, NULL, &r, NULL)
                               : tracelog_reader_open(fd, NULL, &r, NULL);
    if (!CHECK_STATUS(st, TRACELOG_OK))
        return 0;
    size_t n = 0;
    tracelog_event ev;
    while (n < max && tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        const char *t = tracelog_reader_event_thread_name(r, &ev);
        snprintf(names[n++], sizeof names[0], "%u:%s", ev.kernel_tid, t ? t : "-");
    }
    CHECK_EQ(tracelog_reader_problem_count(r), 0);
    tracelog_reader_close(r);
    return n;
}

static void check_names(int fd, const char *const *want, size_t n)
{
    size_t len;
    uint8_t *file = tl_test_fd_slurp(fd, &len);
    for (int piped = 0; piped < 2; piped++) {
        char got[32][80];
        size_t k = read_names(fd, file, len, piped, got, 32);
        CHECK_EQ(k, n);
        for (size_t i = 0; i < k && i < n; i++)
            CHECK_MSG(strcmp(got[i], want[i]) == 0, "%s: event %zu: %s, want %s", piped ? "pipe" : "file", i,
                      got[i], want[i]);
    }
    free(file);
}

/*
 * Names given before and between events; a rename in the middle of a chunk
 * (no new chunk: the chunk's earlier events read the new name; a definition
 * not written yet is replaced, not followed by another); the same name again
 * writes nothing; a reused handle is a new thread, without a name; "" takes a
 * name away.
 */
static void test_names(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_APPEND, 0);
    tracelog_writer_define_event(w, 1, "e");
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 100, 10, "main"), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_append(w, &(tracelog_event){.timestamp_ns = 1, .event_id = 1, .pid = 1, .tid = 100,
                                                             .kernel_tid = 10}),
                 TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 200, 20, "worker-1"), TRACELOG_OK);
    tracelog_event evs[] = {ev_of(2, 1, 200, 20), ev_of(3, 1, 100, 0), ev_of(4, 1, 300, 30)};
    for (size_t i = 0; i < 3; i++)
        CHECK_STATUS(tracelog_writer_append(w, &evs[i]), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 200, 20, "worker-1b"), TRACELOG_OK); /* a rename */
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 200, 20, "worker-1b"), TRACELOG_OK); /* nothing */
    CHECK_STATUS(tracelog_writer_flush(w), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 100, 10, "main"), TRACELOG_OK);      /* nothing */
    tracelog_event later[] = {ev_of(5, 1, 200, 20), ev_of(6, 1, 100, 11) /* reused handle */,
                              ev_of(7, 1, 300, 30)};
    for (size_t i = 0; i < 3; i++)
        CHECK_STATUS(tracelog_writer_append(w, &later[i]), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 300, 30, "io"), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_flush(w), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 300, 30, ""), TRACELOG_OK); /* no name any more */
    CHECK_STATUS(tracelog_writer_append(w, &later[2]), TRACELOG_OK);
    /* Refused, and the writer goes on. */
    char long_name[TRACELOG_THREAD_NAME_MAX + 2];
    memset(long_name, 'x', sizeof long_name - 1);
    long_name[sizeof long_name - 1] = 0;
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 300, 30, long_name), TRACELOG_E_INVAL);
    long_name[TRACELOG_THREAD_NAME_MAX] = 0;
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 400, 40, long_name), TRACELOG_OK); /* 64 bytes: fits */
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 300, 0, "x"), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_name_thread(w, 1, 300, 30, NULL), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_name_thread(NULL, 1, 300, 30, "x"), TRACELOG_E_INVAL);
    CHECK_STATUS(tracelog_writer_append(w, &(tracelog_event){.timestamp_ns = 9, .event_id = 1, .pid = 1, .tid = 400}),
                 TRACELOG_OK);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);

    static const char *const want[] = {"10:main", "20:worker-1b", "10:main", "30:-", /* chunk 1 */
                                       "20:worker-1b", "11:-", "30:io",              /* chunks 2, 3 */
                                       "30:-", "40:xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
    check_names(fd, want, sizeof want / sizeof *want);

    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.info.chunks, 4); /* at the flushes, the reused handle (before its event), the close; not the rename */
    CHECK_EQ(r.info.format_minor, 2);
    CHECK_EQ(r.nproblems, 0);
    tl_test_readout_free(&r);
    /* The definitions: one per name given or thread seen, in order; the repeated names wrote nothing, and
       "worker-1b" replaced "worker-1", given in the same chunk (its definition was not written yet). */
    const struct { uint64_t tid; uint32_t ktid; const char *name; } defs[] = {
        {100, 10, "main"}, {200, 20, "worker-1b"}, {300, 30, NULL}, {100, 11, NULL},
        {300, 30, "io"},   {300, 30, NULL},        {400, 40, long_name}};
    tracelog_reader *rd;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &rd, NULL), TRACELOG_OK)) {
        size_t n = sizeof defs / sizeof *defs;
        CHECK_EQ(tracelog_reader_thread_count(rd), n);
        for (size_t i = 0; i < n && i < tracelog_reader_thread_count(rd); i++) {
            uint64_t tid;
            uint32_t ktid;
            tracelog_reader_thread(rd, i, NULL, &tid, &ktid);
            const char *name = tracelog_reader_thread_name(rd, i);
            CHECK_MSG(tid == defs[i].tid && ktid == defs[i].ktid &&
                          (name && defs[i].name ? strcmp(name, defs[i].name) == 0 : name == defs[i].name),
                      "definition %zu: %llu %u %s", i, (unsigned long long)tid, ktid, name ? name : "(none)");
        }
        CHECK(tracelog_reader_thread_name(rd, n) == NULL);
        CHECK(tracelog_reader_event_thread_name(rd, NULL) == NULL);
        tracelog_reader_close(rd);
    }
    CHECK(tracelog_reader_thread_name(NULL, 0) == NULL);
    close(fd);
}

/*
 * A thread renamed at every event (a review: valid JSON of 1.1 M such events converted to a log that
 * dropped 51,424 definitions past the limit, with exit 0): one definition a chunk, none dropped.
 */
static void test_names_every_event(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_APPEND, 0);
    tracelog_writer_define_event(w, 1, "e");
    enum { EVENTS = 200000 };
    for (uint32_t i = 0; i < EVENTS; i++) {
        CHECK_STATUS(tracelog_writer_name_thread(w, 7, 0x7f00, 700, i % 2 ? "b" : "a"), TRACELOG_OK);
        tracelog_event ev = ev_of(1000 + i, 7, 0x7f00, 700);
        tracelog_writer_append(w, &ev);
    }
    tracelog_log_status st;
    tracelog_writer_get_status(w, &st);
    CHECK_EQ(st.threads_dropped, 0);
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);
    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.nproblems, 0);
    CHECK_EQ(r.events.n, EVENTS);
    CHECK_MSG(r.info.chunks < 1000, "%llu chunks", (unsigned long long)r.info.chunks);
    tl_test_readout_free(&r);
    tracelog_reader *rd;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &rd, NULL), TRACELOG_OK)) {
        CHECK(tracelog_reader_thread_count(rd) <= 1000); /* at most one a chunk */
        tracelog_reader_close(rd);
    }
    close(fd);
}

/* LOOP: renames go to the durable region like any definition; those that do not fit are counted. */
static void test_names_loop(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_LOOP, 1); /* the smallest durable region */
    tracelog_writer_define_event(w, 1, "e");
    enum { RENAMES = 1000 };
    char name[32];
    for (uint32_t i = 0; i < RENAMES; i++) {
        snprintf(name, sizeof name, "worker-%u", i);
        CHECK_STATUS(tracelog_writer_name_thread(w, 7, 0x7f00, 700, name), TRACELOG_OK);
        tracelog_event ev = ev_of(1000 + i, 7, 0x7f00, 700);
        tracelog_writer_append(w, &ev);
        tracelog_writer_flush(w); /* a rename a chunk: renames within one replace each other */
    }
    CHECK_STATUS(tracelog_writer_define_event(w, 2, "defined.after.the.renames"), TRACELOG_OK);
    tracelog_log_status st;
    close_dropping_threads(w, &st);

    tracelog_reader *rd;
    lseek(fd, 0, SEEK_SET);
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &rd, NULL), TRACELOG_OK))
        return;
    size_t kept = tracelog_reader_thread_count(rd);
    CHECK_EQ(kept + st.threads_dropped, RENAMES); /* every rename written or counted */
    CHECK(kept > 50);
    const char *last_kept = tracelog_reader_thread_name(rd, kept - 1);
    snprintf(name, sizeof name, "worker-%zu", kept - 1);
    CHECK_MSG(last_kept && strcmp(last_kept, name) == 0, "last definition kept: %s", last_kept ? last_kept : "-");
    CHECK(tracelog_reader_event_name(rd, 2) != NULL);
    /* Every event surviving in the ring has the thread's kernel tid and the last name that fitted. */
    tracelog_event ev;
    size_t wrong = 0, events = 0;
    while (tracelog_reader_next(rd, &ev) == TRACELOG_OK) {
        const char *t = tracelog_reader_event_thread_name(rd, &ev);
        wrong += ev.kernel_tid != 700 || !t || strcmp(t, name) != 0;
        events++;
    }
    CHECK(events > 0);
    CHECK_EQ(wrong, 0);
    tracelog_reader_close(rd);
    close(fd);
}

/* Names a reader ignores (not text, too long, a NUL, empty): the definitions still give kernel tids. */
static void p_bad_names(tl_buf *b)
{
    tl_cbor_put_array(b, 3);
    tl_cbor_put_map(b, 4);
    tl_cbor_put_text(b, "pid"), tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "tid"), tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "ktid"), tl_cbor_put_uint(b, 5);
    tl_cbor_put_text(b, "name"), tl_cbor_put_uint(b, 3);
    tl_cbor_put_map(b, 4);
    tl_cbor_put_text(b, "pid"), tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "tid"), tl_cbor_put_uint(b, 2);
    tl_cbor_put_text(b, "ktid"), tl_cbor_put_uint(b, 6);
    tl_cbor_put_text(b, "name");
    tl_cbor_put_text(b, "01234567890123456789012345678901234567890123456789012345678901234"); /* 65 */
    tl_cbor_put_map(b, 4);
    tl_cbor_put_text(b, "pid"), tl_cbor_put_uint(b, 1);
    tl_cbor_put_text(b, "tid"), tl_cbor_put_uint(b, 3);
    tl_cbor_put_text(b, "ktid"), tl_cbor_put_uint(b, 7);
    tl_cbor_put_text(b, "name"), tl_cbor_put_text(b, "");
}

/*
 * A crafted log of one THREADS block (payload made by `payload`) and a chunk of threads 1..3, read
 * through a pipe: each event has kernel tid 4 + tid and no thread name. The open reader in *out,
 * the THREADS block's offset in *threads_block.
 */
static int read_unnamed(void (*payload)(tl_buf *), crafted *c, mem_src *m, tracelog_reader **out,
                        uint64_t *threads_block)
{
    craft_start(c);
    tl_buf p = {0};
    payload(&p);
    craft_block(c, TL_BLOCK_THREADS, p.data, p.len);
    *threads_block = c->last_block;
    craft_chunk(c, 100);
    tl_buf_free(&p);
    *m = (mem_src){c->file.data, c->file.len, 0};
    if (!CHECK_STATUS(tracelog_reader_open_read(mem_read, m, NULL, out, NULL), TRACELOG_OK))
        return 0;
    tracelog_event ev;
    size_t n = 0;
    while (tracelog_reader_next(*out, &ev) == TRACELOG_OK) {
        CHECK_EQ(ev.kernel_tid, 4 + ev.tid);
        CHECK(tracelog_reader_event_thread_name(*out, &ev) == NULL);
        n++;
    }
    CHECK_EQ(n, 3);
    return 1;
}

static void test_bad_names(void)
{
    crafted c;
    mem_src m;
    tracelog_reader *r;
    uint64_t threads_block;
    if (read_unnamed(p_bad_names, &c, &m, &r, &threads_block)) {
        tracelog_problem pr;
        if (CHECK_EQ(tracelog_reader_problem_count(r), 1)) { /* one per block */
            tracelog_reader_problem(r, 0, &pr);
            CHECK_STR_EQ(tracelog_reader_problem_condition(r, 0), "BAD_THREAD_NAME");
            CHECK_EQ(pr.offset, threads_block);
            CHECK(strstr(pr.message, "not text") != NULL);
        }
        tracelog_reader_close(r);
    }
    tl_buf_free(&c.file);
}

/* A 1.1 log (crafted: minor 1, definitions without names) reads without names, by the 1.2 reader. */
static void test_names_in_1_1_log(void)
{
    crafted c;
    mem_src m;
    tracelog_reader *r;
    uint64_t threads_block;
    if (read_unnamed(p_three, &c, &m, &r, &threads_block)) {
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        CHECK_EQ(info.format_minor, 1);
        CHECK_EQ(tracelog_reader_thread_count(r), 3);
        CHECK(tracelog_reader_thread_name(r, 0) == NULL);
        CHECK_EQ(tracelog_reader_problem_count(r), 0);
        tracelog_reader_close(r);
    }
    tl_buf_free(&c.file);
}

/* ---- the thread namer: where a recorder's names come from -------------------- */

static int namer_calls, namer_suffix;

/* Kernel thread k is named "t<k>" (with a suffix once renamed); odd ones have ended (no name). */
static void fake_namer(void *ctx, uint32_t pid, uint64_t tid, uint32_t ktid, char *buf, size_t cap)
{
    (void)ctx, (void)pid, (void)tid;
    namer_calls++;
    if (ktid % 2 == 0)
        snprintf(buf, cap, namer_suffix ? "t%u-%d" : "t%u", ktid, namer_suffix);
}

static void append_thread(tracelog_writer *w, uint64_t ts, uint64_t tid, uint32_t ktid)
{
    tracelog_event ev = ev_of(ts, 1, tid, ktid);
    CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
}

/*
 * The namer names each thread when the writer first defines it (one call
 * per new thread, none for a known one); tl_writer_rename_threads asks again
 * for every thread, where a rename makes a definition and an unchanged name
 * none; a thread the namer cannot name stays unnamed.
 */
static void test_name_threads(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_APPEND, 0);
    tl_writer_set_thread_namer(w, fake_namer, NULL);
    tracelog_writer_define_event(w, 1, "e");
    namer_calls = 0;
    append_thread(w, 1, 100, 10);
    append_thread(w, 2, 200, 11);
    append_thread(w, 3, 100, 10); /* known: not asked again */
    append_thread(w, 4, 300, 12); /* new */
    CHECK_EQ(namer_calls, 3);
    CHECK_STATUS(tracelog_writer_flush(w), TRACELOG_OK);
    namer_calls = 0;
    CHECK_STATUS(tl_writer_rename_threads(w), TRACELOG_OK); /* same names: nothing written */
    CHECK_EQ(namer_calls, 3);
    namer_suffix = 2;
    CHECK_STATUS(tl_writer_rename_threads(w), TRACELOG_OK); /* renamed */
    namer_suffix = 0;
    append_thread(w, 5, 100, 10);
    append_thread(w, 6, 300, 12);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    static const char *const want[] = {"10:t10", "11:-", "10:t10", "12:t12", "10:t10-2", "12:t12-2"};
    check_names(fd, want, sizeof want / sizeof *want);
    tracelog_reader *rd;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_STATUS(tracelog_reader_open(fd, NULL, &rd, NULL), TRACELOG_OK)) {
        /* t10, 11, t12, t10-2, t12-2: the unchanged names wrote nothing */
        CHECK_EQ(tracelog_reader_thread_count(rd), 5);
        tracelog_reader_close(rd);
    }
    close(fd);
}

typedef struct live_thread {
    pid_t ktid;
    int up[2], down[2];
} live_thread;

static void *run_live(void *arg)
{
    live_thread *t = arg;
    prctl(PR_SET_NAME, "db-writer", 0, 0, 0);
    t->ktid = (pid_t)syscall(SYS_gettid);
    if (write(t->up[1], "r", 1) != 1)
        return NULL;
    char c;
    if (read(t->down[0], &c, 1) != 1)
        return NULL;
    return NULL;
}

static void proc_namer(void *ctx, uint32_t pid, uint64_t tid, uint32_t ktid, char *buf, size_t cap)
{
    (void)ctx, (void)tid;
    tl_proc_thread_comm((pid_t)pid, (pid_t)ktid, buf, cap);
}

/* With tl_proc_thread_comm, the name source the recorder uses: a live thread's comm. */
static void test_name_threads_from_proc(void)
{
    live_thread t;
    if (pipe(t.up) || pipe(t.down))
        TL_DIE("pipe");
    pthread_t th;
    if (pthread_create(&th, NULL, run_live, &t))
        TL_DIE("pthread_create");
    char c;
    if (read(t.up[0], &c, 1) != 1)
        TL_DIE("read");
    int fd = tl_test_tmpfd();
    tracelog_writer *w = new_writer(fd, TRACELOG_POLICY_APPEND, 0);
    tl_writer_set_thread_namer(w, proc_namer, NULL);
    tracelog_writer_define_event(w, 1, "e");
    tracelog_event ev = ev_of(1, (uint32_t)getpid(), 0x7f00, (uint32_t)t.ktid);
    CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    if (write(t.down[1], "q", 1) != 1)
        TL_DIE("write");
    pthread_join(th, NULL);
    char want[80];
    snprintf(want, sizeof want, "%d:db-writer", (int)t.ktid);
    const char *const wants[] = {want};
    check_names(fd, wants, 1);
    close(fd);
    close(t.up[0]), close(t.up[1]), close(t.down[0]), close(t.down[1]);
}

int main(void)
{
    TL_TEST_RUN(test_reuse);
    TL_TEST_RUN(test_rewind_and_seek);
    TL_TEST_RUN(test_format_10);
    TL_TEST_RUN(test_crafted);
    TL_TEST_RUN(test_loop_full_of_threads);
    TL_TEST_RUN(test_names);
    TL_TEST_RUN(test_names_every_event);
    TL_TEST_RUN(test_names_loop);
    TL_TEST_RUN(test_bad_names);
    TL_TEST_RUN(test_names_in_1_1_log);
    TL_TEST_RUN(test_name_threads);
    TL_TEST_RUN(test_name_threads_from_proc);
    return tl_test_finish();
}
