/*
 * Write, then read back: for each log policy (APPEND, UNTIL_FULL, LOOP) and
 * compression levels 0 and 1, the events, metadata, event types and status
 * that come back are those written; UNTIL_FULL keeps exactly the first events
 * within its budget and LOOP exactly the last ones; seek_time and rewind
 * position the reader where they promise, and set_end_time stops it early
 * without leaving out an event before its time. A writer switched to raw chunks
 * and back (tl_writer_set_raw, what a flusher that falls behind does) loses
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/format.h"
#include "writer/io.h"
#include "tl_test.h"

#define N_EVENTS 2500 /* about 400 KB of events: a hundred 4 KiB chunks */
#define BUDGET (48u << 10)

static void check_types(const tl_test_readout *r)
{
    /* The table comes back sorted by id, and tl_test_type_ids is. */
    if (!CHECK_EQ(r->ntypes, TL_TEST_NTYPES))
        return;
    for (size_t i = 0; i < TL_TEST_NTYPES; i++) {
        CHECK_EQ(r->type_ids[i], tl_test_type_ids[i]);
        CHECK_STR_EQ(r->type_names[i], tl_test_type_names[i]);
    }
}

/* The reader's lookups, on a reader of the same file. */
static void check_lookups(tracelog_reader *r)
{
    for (size_t i = 0; i < TL_TEST_NTYPES; i++)
        CHECK_STR_EQ(tracelog_reader_event_name(r, tl_test_type_ids[i]), tl_test_type_names[i]);
    CHECK(tracelog_reader_event_name(r, 4) == NULL);
    uint32_t id;
    const char *name;
    CHECK_STATUS(tracelog_reader_event_type(r, TL_TEST_NTYPES, &id, &name), TRACELOG_E_INVAL);
    tracelog_problem p;
    CHECK_STATUS(tracelog_reader_problem(r, tracelog_reader_problem_count(r), &p), TRACELOG_E_INVAL);
}

/* Reads from the current position to the end and compares with want[0..n). */
static void check_rest(tracelog_reader *r, const tracelog_event *want, size_t n)
{
    tl_test_events got = {0};
    tracelog_event ev;
    tracelog_status st;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK && got.n <= n)
        tl_test_events_push(&got, &ev);
    CHECK_STATUS(st, TRACELOG_END);
    CHECK_EVENTS_EQ(got.ev, got.n, want, n);
    CHECK_KERNEL_TIDS_EQ(got.ev, got.n, want, n);
    tl_test_events_free(&got);
}

/* Index of the first event at or after ts (events[] never goes back in time). */
static size_t first_at_or_after(const tl_test_events *e, uint64_t ts)
{
    size_t i = 0;
    while (i < e->n && e->ev[i].timestamp_ns < ts)
        i++;
    return i;
}

/* Reads from the current position to the end: the events got must be want[0..k) for some k >= at_least. */
static size_t check_prefix(tracelog_reader *r, const tracelog_event *want, size_t n, size_t at_least)
{
    tl_test_events got = {0};
    tracelog_event ev;
    tracelog_status st;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK && got.n < n + 1)
        tl_test_events_push(&got, &ev);
    CHECK_STATUS(st, TRACELOG_END);
    size_t k = got.n;
    CHECK_MSG(k >= at_least && k <= n, "%zu events, want %zu to %zu", k, at_least, n);
    CHECK_EVENTS_EQ(got.ev, k <= n ? k : n, want, k <= n ? k : n);
    tl_test_events_free(&got);
    return k;
}

/*
 * tracelog_reader_set_end_time: every event before the end time comes out, in order, and reading
 * stops early (a few chunks past it at most); with seek_time, a window; it holds across rewind and
 * seek; UINT64_MAX reads to the end again.
 */
static void check_end_times(tracelog_reader *r, const tl_test_events *all)
{
    size_t n = all->n, mid = n / 2;
    const tracelog_event *e = all->ev;
    uint64_t ends[] = {e[mid].timestamp_ns, e[n / 10].timestamp_ns + 1, e[0].timestamp_ns, 0};
    for (size_t i = 0; i < sizeof ends / sizeof ends[0]; i++) {
        tl_test_context("end time %zu", i);
        size_t before = first_at_or_after(all, ends[i]);
        CHECK_STATUS(tracelog_reader_set_end_time(r, ends[i]), TRACELOG_OK);
        CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
        size_t k = check_prefix(r, e, n, before);
        CHECK_MSG(k < n, "stopped early: %zu of %zu events read", k, n);
        CHECK_MSG(k - before < 400, "%zu events read past the end time (a chunk holds about 60)", k - before);
        /* A window: from the first event at or after a quarter's time to the end time. */
        size_t from = before / 4;
        if (before > 0 && CHECK_STATUS(tracelog_reader_seek_time(r, e[from].timestamp_ns), TRACELOG_OK))
            check_prefix(r, e + from, n - from, before - from);
    }
    tl_test_context("end time lifted");
    CHECK_STATUS(tracelog_reader_set_end_time(r, UINT64_MAX), TRACELOG_OK);
    CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    check_rest(r, e, n);
    CHECK_STATUS(tracelog_reader_set_end_time(r, e[n - 1].timestamp_ns + 1), TRACELOG_OK); /* after the last */
    CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    check_rest(r, e, n);
    CHECK_STATUS(tracelog_reader_set_end_time(r, UINT64_MAX), TRACELOG_OK);
    CHECK_STATUS(tracelog_reader_set_end_time(NULL, 0), TRACELOG_E_INVAL);
    tl_test_context(NULL);
}

static void check_seek_and_rewind(int fd, const tl_test_events *all)
{
    tracelog_reader *r;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK))
        return;
    tl_test_read_ahead_from_env(r);
    check_lookups(r);
    size_t n = all->n, mid = n / 2;
    const tracelog_event *e = all->ev;
    uint64_t targets[] = {
        e[mid].timestamp_ns,          /* an event's exact time */
        e[mid].timestamp_ns + 1,      /* between two events */
        e[n - 1].timestamp_ns,        /* the last event's time */
        e[0].timestamp_ns,            /* the first event's time */
        e[0].timestamp_ns - 1,        /* before the first */
        0,
    };
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        tl_test_context("seek_time target %zu", i);
        size_t j = first_at_or_after(all, targets[i]);
        CHECK(j < n);
        if (CHECK_STATUS(tracelog_reader_seek_time(r, targets[i]), TRACELOG_OK))
            check_rest(r, e + j, n - j);
    }
    /* After the last event: nothing left. */
    tl_test_context("seek_time after the last event");
    tracelog_event ev;
    CHECK_STATUS(tracelog_reader_seek_time(r, e[n - 1].timestamp_ns + 1), TRACELOG_OK);
    CHECK_STATUS(tracelog_reader_next(r, &ev), TRACELOG_END);
    CHECK_STATUS(tracelog_reader_seek_time(r, UINT64_MAX), TRACELOG_OK);
    CHECK_STATUS(tracelog_reader_next(r, &ev), TRACELOG_END);

    check_end_times(r, all);

    /* Rewind after a seek, then twice more after full passes: identical each time. */
    for (int pass = 0; pass < 3; pass++) {
        tl_test_context("rewind, pass %d", pass);
        CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
        check_rest(r, e, n);
    }
    /* Rewind in the middle of a chunk. */
    tl_test_context("rewind mid-chunk");
    CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    for (size_t i = 0; i < 3; i++)
        CHECK_STATUS(tracelog_reader_next(r, &ev), TRACELOG_OK);
    CHECK_STATUS(tracelog_reader_rewind(r), TRACELOG_OK);
    check_rest(r, e, n);
    tl_test_context(NULL);
    tracelog_reader_close(r);
}

/* What every log read back must satisfy, whatever its policy. */
static void check_common(const tl_test_log_spec *spec, const tl_test_log_result *res,
                         const tl_test_readout *out, size_t file_size)
{
    CHECK_STATUS(out->open_status, TRACELOG_OK);
    CHECK_STATUS(out->next_status, TRACELOG_END);
    CHECK_METADATA_EQ(&out->meta, &res->meta);
    check_types(out);
    CHECK_LOG_STATUS_EQ(&out->status, &res->status);
    CHECK_EQ(out->status.events_recorded, spec->n_events); /* set by set_status */
    CHECK_EQ(out->status.stream_overruns, 3);
    CHECK_EQ(out->info.clean, 1);
    CHECK_EQ(out->info.seekable, 1);
    CHECK_EQ(out->info.format_major, TRACELOG_FORMAT_MAJOR);
    CHECK_EQ(out->info.format_minor, TRACELOG_FORMAT_MINOR);
    CHECK_EQ(out->info.log_policy, spec->policy);
    CHECK_EQ(out->info.file_size, file_size);
    CHECK_EQ(out->info.events, out->events.n);
    CHECK_EQ(out->info.problems, 0);
    CHECK_EQ(out->nproblems, 0);
    if (out->events.n) {
        CHECK_EQ(out->info.first_ts, out->events.ev[0].timestamp_ns);
        CHECK_EQ(out->info.last_ts, out->events.ev[out->events.n - 1].timestamp_ns);
    }
    if (spec->compression_level == 0)
        CHECK_EQ(out->info.stored_bytes, out->info.raw_bytes);
    else
        CHECK(out->info.stored_bytes < out->info.raw_bytes);
    if (out->nproblems)
        tl_test_readout_dump(out);
}

static void check_append(const tl_test_log_spec *spec, const tl_test_log_result *res,
                         const tl_test_readout *out)
{
    tl_test_events want = {0};
    tl_test_gen_events(spec->seed, 0, spec->n_events, spec->payload_max, &want);
    CHECK_EVENTS_EQ(out->events.ev, out->events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out->events.ev, out->events.n, want.ev, want.n);
    CHECK_EQ(res->appended_ok, spec->n_events);
    CHECK_EQ(out->status.events_written, spec->n_events);
    CHECK_EQ(out->status.log_overruns, 0);
    CHECK_EQ(out->status.log_full, 0);
    CHECK(out->info.chunks >= 50); /* many chunks, as intended */
    tl_test_events_free(&want);
}

static void check_until_full(const tl_test_log_spec *spec, const tl_test_log_result *res,
                             const tl_test_readout *out, const uint8_t *file, size_t size)
{
    size_t k = out->events.n;
    CHECK(k > 0);
    CHECK(k < spec->n_events / 2); /* far more was written than fits */
    /* Exactly the first k events. */
    tl_test_events want = {0};
    tl_test_gen_events(spec->seed, 0, k, spec->payload_max, &want);
    CHECK_EVENTS_EQ(out->events.ev, out->events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out->events.ev, out->events.n, want.ev, want.n);
    tl_test_events_free(&want);
    CHECK_EQ(out->status.events_written, k);
    CHECK_EQ(out->status.events_written + out->status.log_overruns, spec->n_events);
    CHECK_EQ(out->status.log_full, 1);
    CHECK(res->appended_full > 0);
    CHECK_EQ(res->appended_ok + res->appended_full, spec->n_events);

    /* The budget counts chunk blocks: they fit in it, and the log stopped only
       when the next chunk (at most a chunk_size body plus its headers,
       padding and compression overhead) did not. */
    tl_test_block *b;
    size_t nb = tl_test_scan_blocks(file, size, &b, NULL, NULL);
    uint64_t chunk_bytes = 0;
    for (size_t i = 0; i < nb; i++)
        if (b[i].type == TL_BLOCK_CHUNK)
            chunk_bytes += b[i].span;
    free(b);
    CHECK(chunk_bytes <= spec->log_max_size);
    CHECK(chunk_bytes + tl_block_span(spec->chunk_size + 32 + 64) > spec->log_max_size);
    /* The rest of the file is small: header, metadata, types, status, trailer. */
    CHECK(size <= spec->log_max_size + (64u << 10));
}

/* Ring geometry as the writer plans it (format-spec: LOOP layout). */
static void planned_ring(const tl_test_log_spec *spec, uint64_t *seg, uint64_t *count)
{
    *seg = (spec->log_max_size / 8) & ~(uint64_t)4095;
    if (*seg < 4096)
        *seg = 4096;
    *count = spec->log_max_size / *seg;
    if (*count < 2)
        *count = 2;
}

/* The durable region as spec 7.3 sizes it, with the overhead allowance max(16 KiB, L/8). */
static uint64_t planned_durable(uint64_t L, uint64_t ring, uint64_t *allowance)
{
    *allowance = L / 8 > 16384 ? L / 8 : 16384;
    uint64_t d = *allowance < 262144 ? *allowance : 262144;
    if (L / 256 > d)
        d = L / 256;
    d -= TL_HEADER_SIZE + (ring > L ? ring - L : 0);
    return d & ~(uint64_t)7;
}

static void check_loop(const tl_test_log_spec *spec, const tl_test_readout *out,
                       const uint8_t *file, size_t size)
{
    size_t n = spec->n_events, k = out->events.n;
    CHECK(k > 0);
    CHECK(k < n);
    /* Exactly the last k events. */
    tl_test_events want = {0};
    tl_test_gen_events(spec->seed, n - k, k, spec->payload_max, &want);
    CHECK_EVENTS_EQ(out->events.ev, out->events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out->events.ev, out->events.n, want.ev, want.n);
    tl_test_events_free(&want);
    CHECK_EQ(out->status.events_written, n);
    CHECK_EQ(out->status.log_overruns, n - k);
    CHECK_EQ(out->status.log_full, 1); /* the ring wrapped: POSIX calls a LOOP log full once it overwrites */

    uint64_t seg, count;
    planned_ring(spec, &seg, &count);
    uint64_t allowance, durable = planned_durable(spec->log_max_size, seg * count, &allowance);
    tl_file_header h;
    size_t need;
    tracelog_error err;
    if (CHECK_STATUS(tl_header_decode(file, size, &h, &need, &err), TRACELOG_OK)) {
        CHECK_EQ(h.layout, TL_LAYOUT_RING);
        CHECK_EQ(h.segment_size, seg);
        CHECK_EQ(h.segment_count, count);
        CHECK_EQ(h.ring_offset, TL_HEADER_SIZE + durable);
    }
    CHECK(size <= TL_HEADER_SIZE + durable + seg * count);
    CHECK(size <= spec->log_max_size + allowance);
    CHECK(seg * count <= spec->log_max_size);
    /* Every segment but the one being written still holds chunks. */
    CHECK(out->info.chunks >= count - 1);
}

static void roundtrip(tracelog_policy policy, int level)
{
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, policy, N_EVENTS);
    spec.compression_level = level;
    spec.seed = 100 + (uint64_t)policy * 10 + (uint64_t)level;
    spec.log_max_size = policy == TRACELOG_POLICY_LOOP ? 64u << 10 : BUDGET;
    spec.flush_every = 700; /* status blocks between chunks */
    tl_test_context("policy %d, level %d", policy, level);

    int fd = tl_test_tmpfd();
    tl_test_log_result res;
    if (tl_test_write_log_fd(fd, &spec, &res) == 0) {
        size_t size;
        uint8_t *file = tl_test_fd_slurp(fd, &size);
        tl_test_readout out;
        tl_test_read_fd(fd, NULL, &out);
        check_common(&spec, &res, &out, size);
        if (policy == TRACELOG_POLICY_APPEND)
            check_append(&spec, &res, &out);
        else if (policy == TRACELOG_POLICY_UNTIL_FULL)
            check_until_full(&spec, &res, &out, file, size);
        else
            check_loop(&spec, &out, file, size);
        if (out.events.n)
            check_seek_and_rewind(fd, &out.events);
        tl_test_readout_free(&out);
        free(file);
    }
    tl_test_log_result_free(&res);
    close(fd);
    tl_test_context(NULL);
}

static void test_append(void)
{
    roundtrip(TRACELOG_POLICY_APPEND, 0);
    roundtrip(TRACELOG_POLICY_APPEND, 1);
}

static void test_until_full(void)
{
    roundtrip(TRACELOG_POLICY_UNTIL_FULL, 0);
    roundtrip(TRACELOG_POLICY_UNTIL_FULL, 1);
}

static void test_loop(void)
{
    roundtrip(TRACELOG_POLICY_LOOP, 0);
    roundtrip(TRACELOG_POLICY_LOOP, 1);
}

/*
 * LOOP logs of many lengths: wherever the last chunk, the final status
 * block and the trailer fall relative to a segment's end, the log keeps the
 * last events and its status counts exactly the others as overruns.
 */
static void test_loop_ends(void)
{
    tl_test_log_spec spec;
    tl_test_log_spec_init(&spec, TRACELOG_POLICY_LOOP, 0);
    spec.log_max_size = 16u << 10; /* 4 segments of 4 KiB */
    spec.compression_level = 0;
    unsigned long failures_before = tl_test_failures();
    for (size_t n = 150; n < 450; n++) {
        tl_test_context("LOOP log of %zu events", n);
        spec.n_events = n;
        spec.seed = n;
        tl_test_log_result res;
        if (tl_test_write_log_mem(&spec, &res) == 0) {
            tl_test_readout out;
            tl_test_read_bytes(res.bytes, res.len, NULL, &out);
            CHECK_EQ(out.info.clean, 1);
            size_t k = out.events.n;
            tl_test_events want = {0};
            tl_test_gen_events(spec.seed, n - (k < n ? k : n), k < n ? k : n, spec.payload_max, &want);
            CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
            CHECK_KERNEL_TIDS_EQ(out.events.ev, out.events.n, want.ev, want.n);
            tl_test_events_free(&want);
            CHECK_EQ(out.status.events_written, n);
            CHECK_EQ(out.status.log_overruns, n - k);
            CHECK_EQ(out.nproblems, 0);
            tl_test_readout_free(&out);
        }
        tl_test_log_result_free(&res);
        if (tl_test_failures() != failures_before)
            break; /* one length tells the story */
    }
    tl_test_context(NULL);
}

/*
 * A LOOP log with more event-type names than a ring segment holds: the
 * names live in the durable region (16,320 bytes for this log size, spec
 * 7.3), so every event, every name and every kernel tid can be read back
 * (the thread definitions fit in the three quarters of the region they may
 * use). Ring trailers repeat no names, so the trailer fits a segment.
 */
static void test_loop_many_types(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.log_policy = TRACELOG_POLICY_LOOP;
    o.log_max_size = 16u << 10; /* 4 KiB segments */
    o.chunk_size = 4096;
    tracelog_writer *w;
    tracelog_error err;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, &o, &w, &err), TRACELOG_OK)) {
        close(fd);
        return;
    }
    char name[64];
    for (uint32_t id = 0; id < 200; id++) {
        snprintf(name, sizeof name, "type.number.%u.with.a.rather.long.name", id);
        CHECK_STATUS(tracelog_writer_define_event(w, id, name), TRACELOG_OK);
    }
    tl_test_events want = {0};
    tl_test_gen_events(9, 0, 100, 0, &want);
    for (size_t i = 0; i < want.n; i++)
        CHECK_STATUS(tracelog_writer_append(w, &want.ev[i]), TRACELOG_OK);
    CHECK_STATUS(tracelog_writer_close(w, &err), TRACELOG_OK); /* ring trailers carry no names: they fit */

    tl_test_readout out;
    tl_test_read_fd(fd, NULL, &out);
    CHECK_EQ(out.ntypes, 200);
    CHECK_EVENTS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_KERNEL_TIDS_EQ(out.events.ev, out.events.n, want.ev, want.n);
    CHECK_EQ(out.nproblems, 0);
    CHECK_EQ(out.info.clean, 1);
    if (out.ntypes == 200)
        CHECK_STR_EQ(out.type_names[199], "type.number.199.with.a.rather.long.name");
    tl_test_readout_free(&out);
    tl_test_events_free(&want);
    close(fd);
}

/* Writes events with the writer switched to raw chunks for the middle third; returns the file size. */
static long write_switching(int fd, const tl_test_events *all, int switching)
{
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.chunk_size = 4096;
    tracelog_writer *w;
    tracelog_error err;
    if (!CHECK(tracelog_writer_create(fd, NULL, &opt, &w, &err) == TRACELOG_OK))
        return -1;
    for (size_t i = 0; i < TL_TEST_NTYPES; i++)
        tracelog_writer_define_event(w, tl_test_type_ids[i], tl_test_type_names[i]);
    for (size_t i = 0; i < all->n; i++) {
        if (switching && (i == all->n / 3 || i == 2 * all->n / 3))
            tl_writer_set_raw(w, i == all->n / 3);
        CHECK(tracelog_writer_append(w, &all->ev[i]) == TRACELOG_OK);
    }
    CHECK(tracelog_writer_close(w, &err) == TRACELOG_OK);
    return lseek(fd, 0, SEEK_END);
}

static void test_raw_switch(void)
{
    tl_test_events all = {0};
    tl_test_gen_events(7, 0, N_EVENTS, 64, &all);
    long size[2];
    for (int switching = 0; switching <= 1; switching++) {
        FILE *f = tmpfile();
        if (!CHECK(f != NULL))
            break;
        size[switching] = write_switching(fileno(f), &all, switching);
        tl_test_readout out;
        tl_test_read_fd(fileno(f), NULL, &out);
        CHECK_EQ(out.info.clean, 1);
        CHECK_EVENTS_EQ(out.events.ev, out.events.n, all.ev, all.n);
        tl_test_readout_free(&out);
        fclose(f);
    }
    CHECK(size[1] > size[0] + size[0] / 8); /* a third of the chunks went out uncompressed */
    tl_test_events_free(&all);
}

/*
 * set_end_time on a log whose timestamps go back (three runs of events, the third earlier than the first):
 * no chunk is left out while a later one holds an earlier event; a pipe is NOT_SEEKABLE.
 */
static void test_end_time_out_of_order(void)
{
    static const uint64_t starts[3][3] = {{10000, 1000000, 5000}, {10000, 1000000, 2000000}, {10000, 1000000, 2000000}};
    static const uint64_t ends[3] = {500000, 1500000, 20000};
    static const size_t want_at_least[3] = {3000, 2000, 1000}, want_at_most[3] = {3000, 2400, 1400};
    for (int c = 0; c < 3; c++) {
        tl_test_context("case %d", c);
        tl_test_events all = {0};
        tl_test_gen_events(3, 0, 3000, 16, &all);
        for (size_t i = 0; i < all.n; i++)
            all.ev[i].timestamp_ns = starts[c][i / 1000] + i % 1000;
        FILE *f = tmpfile();
        if (!CHECK(f != NULL) || write_switching(fileno(f), &all, 0) < 0)
            break;
        tracelog_reader *r;
        tracelog_error err;
        if (CHECK_STATUS(tracelog_reader_open(fileno(f), NULL, &r, &err), TRACELOG_OK)) {
            tl_test_read_ahead_from_env(r);
            CHECK_STATUS(tracelog_reader_set_end_time(r, ends[c]), TRACELOG_OK);
            size_t k = check_prefix(r, all.ev, all.n, want_at_least[c]);
            CHECK_MSG(k <= want_at_most[c], "%zu events read, at most %zu expected", k, want_at_most[c]);
            tracelog_reader_close(r);
        }
        fclose(f);
        tl_test_events_free(&all);
    }
    tl_test_context("a pipe");
    int p[2];
    if (CHECK(pipe(p) == 0)) {
        tl_test_log_spec spec;
        tl_test_log_spec_init(&spec, TRACELOG_POLICY_APPEND, 10);
        tl_test_log_result res;
        if (tl_test_write_log_mem(&spec, &res) == 0) {
            CHECK(write(p[1], res.bytes, res.len) == (ssize_t)res.len);
            close(p[1]);
            tracelog_reader *r;
            tracelog_error err;
            if (CHECK_STATUS(tracelog_reader_open(p[0], NULL, &r, &err), TRACELOG_OK)) {
                CHECK_STATUS(tracelog_reader_set_end_time(r, 0), TRACELOG_E_NOT_SEEKABLE);
                tracelog_reader_close(r);
            }
        } else {
            close(p[1]);
        }
        tl_test_log_result_free(&res);
        close(p[0]);
    }
    tl_test_context(NULL);
}

int main(void)
{
    TL_TEST_RUN(test_append);
    TL_TEST_RUN(test_until_full);
    TL_TEST_RUN(test_loop);
    TL_TEST_RUN(test_loop_ends);
    TL_TEST_RUN(test_loop_many_types);
    TL_TEST_RUN(test_raw_switch);
    TL_TEST_RUN(test_end_time_out_of_order);
    return tl_test_finish();
}
