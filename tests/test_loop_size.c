/*
 * A LOOP log fits its log size (issue 9 item 2, format-spec 7.3): with the
 * writer's automatic geometry the whole file stays within log_max_size plus
 * max(16 KiB, log_max_size / 8), for every log size from 1 byte to 1 GiB,
 * however many laps the ring makes; event-type names that do not fit in the
 * durable region are counted (types_dropped) and reported by the reader,
 * never dropped silently; and the POSIX layer lets the writer size the
 * region (a 64 KiB LOOP log was a 320 KiB file).
 *
 * The large logs are written through a tl_io that only records how far the
 * file extends (nothing is stored): the bound is about offsets.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <trace.h>
#include <unistd.h>

#include "format/format.h"
#include "tl_test.h"
#include "writer/io.h"

/* ---- a file that keeps its bytes only while small ------------------------ */

#define KEEP_MAX (32u << 20)

typedef struct fake_file {
    uint64_t extent; /* the file's size: the end of the furthest write */
    uint8_t *bytes;  /* kept while the file stays within KEEP_MAX */
    int dropped;     /* 1 once a write went past KEEP_MAX */
} fake_file;

static int fake_write(void *ctx, const void *buf, size_t n, uint64_t off)
{
    fake_file *f = ctx;
    if (off + n > f->extent)
        f->extent = off + n;
    if (f->bytes && off + n <= KEEP_MAX)
        memcpy(f->bytes + off, buf, n);
    else
        f->dropped = 1;
    return 0;
}

static int fake_sync(void *ctx) { (void)ctx; return 0; }
static int fake_truncate(void *ctx, uint64_t len) { ((fake_file *)ctx)->extent = len; return 0; }

static tracelog_writer *open_fake(fake_file *f, uint64_t log_size, int keep)
{
    memset(f, 0, sizeof *f);
    if (keep && !(f->bytes = calloc(1, KEEP_MAX)))
        TL_DIE("out of memory");
    tl_io io = {fake_write, fake_sync, fake_truncate, f, 1, NULL};
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = TRACELOG_POLICY_LOOP;
    opt.log_max_size = log_size;
    opt.compression_level = 0; /* the ring fills at the speed of memcpy */
    tracelog_writer *w = NULL;
    tracelog_error err;
    if (!CHECK_STATUS(tl_writer_create_io(&io, NULL, &opt, &w, &err), TRACELOG_OK))
        TL_DIE("cannot create the writer: %s", err.message);
    return w;
}

static uint64_t allowance(uint64_t log_size) { return log_size / 8 > 16384 ? log_size / 8 : 16384; }

/* Ring geometry from the header the writer wrote. */
static void header_of(const fake_file *f, tl_file_header *h)
{
    size_t need;
    tracelog_error err;
    if (tl_header_decode(f->bytes, TL_HEADER_SIZE, h, &need, &err) != TRACELOG_OK)
        TL_DIE("the writer's header does not decode: %s", err.message);
}

/*
 * Appends events of `payload` bytes until `laps` times the log size has
 * gone through the writer, flushing now and then as a flusher would.
 */
static void fill(tracelog_writer *w, uint64_t log_size, double laps, uint32_t payload)
{
    static uint8_t data[8192];
    tracelog_event ev = {0};
    ev.pid = 1;
    ev.tid = 2;
    ev.payload = data;
    ev.payload_len = payload;
    uint64_t total = (uint64_t)((double)log_size * laps) + 65536, i = 0;
    for (uint64_t sent = 0; sent < total; sent += payload + 8, i++) {
        ev.timestamp_ns = 1000 + i;
        ev.event_id = (uint32_t)(i % 4);
        data[0] = (uint8_t)i;
        if (tracelog_writer_append(w, &ev) != TRACELOG_OK)
            TL_DIE("append failed");
        if (i % 509 == 0)
            tracelog_writer_flush(w);
    }
}

static void test_file_fits_log_size(void)
{
    static const uint64_t sizes[] = {
        1, 100, 4095, 4096, 8191, 8192, 12345, 16384, 40000, 65536, 100000, 1u << 18,
        (1u << 20) + 7, 3u << 20, 16u << 20, 64u << 20, 256u << 20, 1u << 30,
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        uint64_t L = sizes[i];
        tl_test_context("log size %llu", (unsigned long long)L);
        fake_file f;
        tracelog_writer *w = open_fake(&f, L, 1);
        tracelog_writer_define_event(w, 0, "zero");
        tracelog_writer_define_event(w, 1, "one");
        tl_file_header h;
        header_of(&f, &h);
        uint64_t largest = h.ring_offset + (uint64_t)h.segment_size * h.segment_count;
        CHECK_MSG(largest <= L + allowance(L), "geometry allows %llu bytes for a log size of %llu",
                  (unsigned long long)largest, (unsigned long long)L);
        /* three laps (one above 64 MiB): the ring is full and has wrapped */
        fill(w, L, L > (64u << 20) ? 1.05 : 3, L < 65536 ? 200 : 4000);
        tracelog_log_status st;
        tracelog_writer_get_status(w, &st);
        CHECK(st.log_full);
        CHECK(st.log_overruns > 0);
        tracelog_error err;
        CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
        CHECK_MSG(f.extent <= L + allowance(L), "file of %llu bytes for a log size of %llu",
                  (unsigned long long)f.extent, (unsigned long long)L);
        CHECK(f.extent <= largest);
        CHECK(f.extent + h.segment_size > largest); /* the ring was used to its end */
        if (!f.dropped) { /* kept whole: it reads back, clean, names and all */
            tl_test_readout r;
            tl_test_read_bytes(f.bytes, f.extent, NULL, &r);
            CHECK_STATUS(r.open_status, TRACELOG_OK);
            CHECK(r.info.clean);
            CHECK_EQ(r.nproblems, 0);
            CHECK_EQ(r.ntypes, 2);
            CHECK(r.events.n > 0);
            tl_test_readout_free(&r);
        }
        free(f.bytes);
    }
    tl_test_context(NULL);
}

/* The examples of format-spec 7.3's table, to the byte. */
static void test_spec_examples(void)
{
    static const struct { uint64_t L; uint32_t seg, count; uint64_t durable; } ex[] = {
        {1, 4096, 2, 8128},
        {64u << 10, 8192, 8, 16320},
        {1u << 20, 131072, 8, 131008},
        {64u << 20, 8u << 20, 8, 262080},
        {1u << 30, 16u << 20, 64, 4194240},
    };
    for (size_t i = 0; i < sizeof ex / sizeof *ex; i++) {
        tl_test_context("log size %llu", (unsigned long long)ex[i].L);
        fake_file f;
        tracelog_writer *w = open_fake(&f, ex[i].L, 1);
        tl_file_header h;
        header_of(&f, &h);
        CHECK_EQ(h.segment_size, ex[i].seg);
        CHECK_EQ(h.segment_count, ex[i].count);
        CHECK_EQ(h.ring_offset, TL_HEADER_SIZE + ex[i].durable);
        tracelog_writer_abandon(w);
        free(f.bytes);
    }
    tl_test_context(NULL);
}

/*
 * Many long names: those that fit in the durable region are all named in
 * the log, the others are counted in types_dropped and the reader says so;
 * together they are every name defined.
 */
static void test_many_names(void)
{
    static const uint64_t sizes[] = {1, 65536, 1u << 20, 4u << 20};
    const uint32_t ntypes = 3000; /* names of 200 bytes: about 640 KB of EVENT_TYPES */
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        uint64_t L = sizes[i];
        tl_test_context("log size %llu", (unsigned long long)L);
        fake_file f;
        tracelog_writer *w = open_fake(&f, L, 1);
        char name[201];
        tracelog_event ev = {0};
        for (uint32_t id = 0; id < ntypes; id++) {
            snprintf(name, sizeof name, "%-199u|", id);
            CHECK_STATUS(tracelog_writer_define_event(w, id, name), TRACELOG_OK);
            ev.timestamp_ns = 1000 + id;
            ev.event_id = id;
            tracelog_writer_append(w, &ev);
            if (id % 100 == 99)
                tracelog_writer_flush(w); /* names go out in batches, as a flusher writes them */
        }
        tracelog_log_status st;
        tracelog_writer_flush(w);
        tracelog_writer_get_status(w, &st);
        tracelog_error err;
        CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
        CHECK(f.extent <= L + allowance(L));
        CHECK(!f.dropped);
        CHECK(st.types_dropped > 0); /* 640 KB of names cannot fit in 256 KiB */
        tl_test_readout r;
        tl_test_read_bytes(f.bytes, f.extent, NULL, &r);
        CHECK_STATUS(r.open_status, TRACELOG_OK);
        CHECK_EQ(r.status.types_dropped, st.types_dropped);
        CHECK_EQ(r.ntypes + r.status.types_dropped, ntypes);
        int names_right = 1;
        for (size_t k = 0; k < r.ntypes; k++) {
            snprintf(name, sizeof name, "%-199u|", r.type_ids[k]);
            names_right &= strcmp(r.type_names[k], name) == 0;
        }
        CHECK(names_right);
        /* the durable region is used up: a batch is split where it stops fitting, not dropped
           whole, so what is left could not hold one more block of one name (about 260 bytes) */
        tl_file_header h;
        header_of(&f, &h);
        uint64_t used = h.ring_offset;
        while (used > TL_HEADER_SIZE && f.bytes[used - 1] == 0)
            used--;
        CHECK_MSG(h.ring_offset - used < 260, "%llu bytes of the durable region left unused",
                  (unsigned long long)(h.ring_offset - used));
        CHECK_EQ(tl_test_readout_problems(&r, TRACELOG_E_LIMIT), 1);
        int said = 0;
        char count[32];
        snprintf(count, sizeof count, "%llu event-type names", (unsigned long long)st.types_dropped);
        for (size_t k = 0; k < r.nproblems; k++)
            said |= strstr(r.problems[k].message, count) != NULL;
        CHECK_MSG(said, "no problem says \"%s\"", count);
        tl_test_readout_free(&r);
        free(f.bytes);
    }
    tl_test_context(NULL);
}

/* A log whose names all fit reports nothing; a sequential log never drops names. */
static void test_names_that_fit(void)
{
    fake_file f;
    tracelog_writer *w = open_fake(&f, 1, 1); /* the smallest ring: 16 KiB - 64 for names */
    char name[64];
    for (uint32_t id = 0; id < 200; id++) {
        snprintf(name, sizeof name, "subsystem:event_%u", id);
        tracelog_writer_define_event(w, id, name);
    }
    tracelog_event ev = {0};
    tracelog_writer_append(w, &ev);
    tracelog_error err;
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK);
    tl_test_readout r;
    tl_test_read_bytes(f.bytes, f.extent, NULL, &r);
    CHECK_EQ(r.ntypes, 200);
    CHECK_EQ(r.status.types_dropped, 0);
    CHECK_EQ(r.nproblems, 0);
    CHECK(r.info.clean);
    tl_test_readout_free(&r);
    free(f.bytes);
}

/* The POSIX layer: a 64 KiB LOOP log, and one with the default size, as files on disk. */
static void test_posix_loop_file(void)
{
    static const size_t sizes[] = {64u << 10, 0 /* default */};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        tl_test_context("posix log size %zu", sizes[i]);
        char path[] = "/tmp/tl_loop_size_XXXXXX";
        int fd = mkstemp(path);
        if (!CHECK(fd >= 0))
            return;
        unlink(path);
        trace_attr_t attr;
        posix_trace_attr_init(&attr);
        posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_LOOP);
        if (sizes[i])
            posix_trace_attr_setlogsize(&attr, sizes[i]);
        size_t log_size = 0;
        posix_trace_attr_getlogsize(&attr, &log_size);
        trace_id_t trid;
        trace_event_id_t id;
        posix_trace_eventid_open("loop_size_test", &id);
        if (!CHECK_EQ(posix_trace_create_withlog(0, &attr, fd, &trid), 0)) {
            close(fd);
            return;
        }
        posix_trace_start(trid);
        char payload[100];
        /* 64 KiB log: 4 laps; default size: 5 events (the file stays small too) */
        unsigned n = sizes[i] ? 4 * (unsigned)(log_size / 100) : 5;
        uint64_t x = 88172645463325252ull;
        for (unsigned k = 0; k < n; k++) {
            for (size_t b = 0; b < sizeof payload; b++) { /* incompressible, so that the ring fills */
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                payload[b] = (char)x;
            }
            posix_trace_event(id, payload, sizeof payload);
            if (k % 200 == 199)
                posix_trace_flush(trid);
        }
        CHECK_EQ(posix_trace_shutdown(trid), 0);
        struct stat sb;
        fstat(fd, &sb);
        printf("   POSIX LOOP log, log size %zu: file of %lld bytes\n", log_size, (long long)sb.st_size);
        CHECK_MSG((uint64_t)sb.st_size <= log_size + allowance(log_size), "file of %lld bytes for a log size of %zu",
                  (long long)sb.st_size, log_size);
        if (!sizes[i]) /* 5 events: the durable region (256 KiB) and one segment's start */
            CHECK_MSG(sb.st_size < (300 << 10), "file of %lld bytes for 5 events", (long long)sb.st_size);
        tl_test_readout r;
        lseek(fd, 0, SEEK_SET);
        tl_test_read_fd(fd, NULL, &r);
        CHECK(r.info.clean);
        CHECK(r.events.n > 0);
        if (sizes[i])
            CHECK(r.status.log_full); /* the ring wrapped: the file is as large as it gets */
        CHECK_EQ(r.status.types_dropped, 0);
        tl_test_readout_free(&r);
        posix_trace_attr_destroy(&attr);
        close(fd);
    }
    tl_test_context(NULL);
}

int main(void)
{
    TL_TEST_RUN(test_file_fits_log_size);
    TL_TEST_RUN(test_spec_examples);
    TL_TEST_RUN(test_many_names);
    TL_TEST_RUN(test_names_that_fit);
    TL_TEST_RUN(test_posix_loop_file);
    return tl_test_finish();
}
