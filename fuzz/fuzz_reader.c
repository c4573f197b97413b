/*
 * fuzz_reader: any bytes, as a seekable .ptl file, through the whole reader
 * API (promise 1: no crash, leak, hang or out-of-bounds read, whatever the
 * file holds).
 *
 * The input is the file, byte for byte, written to a memfd. The reader runs
 * with the library's default limits and with block checksums ignored (so
 * that mutated blocks reach the decoders), then once more with checksums
 * checked. Properties:
 *  - open fails only with a documented code, described by the error record;
 *  - every event, every payload byte, the metadata, the event types, the
 *    status, the info and every problem can be read; a payload schema the
 *    reader kept is valid, and every typed event's fields decode and format;
 *  - a rewind gives the same events again (same count, same digest);
 *  - after seek_time(ts) the next event is at or after ts; for a log whose
 *    events never go back in time and that has no problem, exactly the
 *    events at or after ts follow;
 *  - with set_end_time(ts), the events before ts are those of a whole read,
 *    in the same order, whatever the file.
 *  - read in two ranges of chunks (tracelog_reader_read_range, cut at a
 *    chunk chosen from the input), a log without problems gives a whole
 *    read's events in its order; any log reads to an end;
 *  - read ahead on 1 to 3 threads gives the same events and problems, in
 *    the same order, as one thread (also after a rewind part way), for a
 *    log of two chunks or more.
 * The file header's own CRC is repaired first (fuzz_repair_header), so that
 * the header's fields are fuzzed too; the unrepaired bytes are opened as well.
 */
#define _GNU_SOURCE
#include "fuzz_helpers.h"

typedef struct pass_result {
    fuzz_hash all;       /* every event */
    fuzz_hash from_ts;   /* events with timestamp >= the seek target */
    fuzz_hash before_ts; /* the others */
    int monotonic;       /* timestamps never decrease */
} pass_result;

static uint64_t seek_target(const uint8_t *data, size_t size, const tracelog_reader_info *info)
{
    fuzz_hash x;
    fuzz_hash_init(&x);
    fuzz_hash_bytes(&x, data, size);
    switch (x.h % 4) {
    case 0: return 0;
    case 1: return info->first_ts;
    case 2: return info->last_ts;
    default:
        /* The range's size does not fit 64 bits when the timestamps span 0 .. 2^64 - 1. */
        if (info->last_ts > info->first_ts && info->last_ts - info->first_ts < UINT64_MAX)
            return info->first_ts + (x.h >> 2) % (info->last_ts - info->first_ts + 1);
        return x.h >> 2;
    }
}

static void text_ok(const char *s, size_t cap)
{
    FUZZ_ASSERT(memchr(s, 0, cap) != NULL, "text attribute not NUL-terminated");
}

/* A schema the reader kept is valid: its canonical text parses to itself. */
static void check_schema(const tracelog_schema *s)
{
    if (!s)
        return;
    tracelog_schema *again = NULL;
    tracelog_error err;
    FUZZ_ASSERT(tracelog_schema_parse(tracelog_schema_text(s), &again, &err) == TRACELOG_OK,
                "kept schema does not parse: %s", err.message);
    FUZZ_ASSERT(strcmp(tracelog_schema_text(again), tracelog_schema_text(s)) == 0);
    tracelog_schema_free(again);
}

/* Reads every field of a typed event as text (the payload is untrusted). */
static void decode_fields(const tracelog_reader *r, const tracelog_event *ev)
{
    const tracelog_schema *s = tracelog_reader_event_schema(r, ev->event_id);
    if (!s)
        return;
    tracelog_fields f;
    tracelog_status st = tracelog_fields_decode(s, ev->payload, ev->payload_len, &f);
    FUZZ_ASSERT(st == TRACELOG_OK || st == TRACELOG_E_TRUNCATED || st == TRACELOG_E_CORRUPT);
    for (size_t i = 0; i < f.present; i++) {
        char text[64];
        FUZZ_ASSERT(tracelog_fields_format(&f, i, text, sizeof text, NULL) == TRACELOG_OK);
    }
}

static void check_queries(tracelog_reader *r)
{
    const tracelog_metadata *m = tracelog_reader_metadata(r);
    FUZZ_ASSERT(m != NULL);
    text_ok(m->trace_name, sizeof m->trace_name);
    text_ok(m->generation_version, sizeof m->generation_version);
    text_ok(m->clock_id, sizeof m->clock_id);
    text_ok(m->clock_source, sizeof m->clock_source);
    text_ok(m->hostname, sizeof m->hostname);
    text_ok(m->os_name, sizeof m->os_name);
    text_ok(m->os_release, sizeof m->os_release);
    text_ok(m->machine, sizeof m->machine);
    text_ok(m->program, sizeof m->program);

    size_t n = tracelog_reader_event_type_count(r);
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id;
        const char *name;
        FUZZ_ASSERT(tracelog_reader_event_type(r, i, &id, &name) == TRACELOG_OK);
        FUZZ_ASSERT(name != NULL);
        size_t len = strlen(name);
        FUZZ_ASSERT(len >= 1 && len <= TRACELOG_TEXT_MAX, "event name of %zu bytes", len);
        FUZZ_ASSERT(i == 0 || id > prev, "event types not sorted by id");
        FUZZ_ASSERT(tracelog_reader_event_name(r, id) == name);
        check_schema(tracelog_reader_event_schema(r, id));
        prev = id;
    }
    FUZZ_ASSERT(tracelog_reader_event_type(r, n, NULL, NULL) == TRACELOG_E_INVAL);

    tracelog_log_status st;
    tracelog_reader_get_status(r, &st);
    FUZZ_ASSERT(st.flush_error >= 0);

    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    size_t np = tracelog_reader_problem_count(r);
    FUZZ_ASSERT(info.problems >= np);
    for (size_t i = 0; i < np; i++) {
        tracelog_problem p;
        FUZZ_ASSERT(tracelog_reader_problem(r, i, &p) == TRACELOG_OK);
        FUZZ_ASSERT(p.code >= TRACELOG_E_IO && p.code <= TRACELOG_E_READ_ONLY, "problem code %d", (int)p.code);
        FUZZ_ASSERT(memchr(p.message, 0, sizeof p.message) != NULL);
        FUZZ_ASSERT(p.offset <= info.file_size, "problem offset %llu past the end (%llu)",
                    (unsigned long long)p.offset, (unsigned long long)info.file_size);
        FUZZ_ASSERT(tracelog_reader_problem_condition(r, i) != NULL, "problem %zu has no named condition", i);
    }
    FUZZ_ASSERT(tracelog_reader_problem_condition(r, np) == NULL);
    /* Clean means closed with nothing lost (format-spec 8.6). */
    FUZZ_ASSERT(!info.clean || info.problems == 0, "clean with %llu problems", (unsigned long long)info.problems);
    tracelog_problem p;
    FUZZ_ASSERT(tracelog_reader_problem(r, np, &p) == TRACELOG_E_INVAL);
}

static void read_pass(tracelog_reader *r, uint64_t target, pass_result *out)
{
    fuzz_hash_init(&out->all);
    fuzz_hash_init(&out->from_ts);
    fuzz_hash_init(&out->before_ts);
    out->monotonic = 1;
    tracelog_event ev;
    tracelog_status st;
    uint64_t prev_ts = 0;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        FUZZ_ASSERT(ev.truncation <= TRACELOG_TRUNC_READ);
        FUZZ_ASSERT(ev.payload_len == 0 || ev.payload != NULL);
        if (out->all.count && ev.timestamp_ns < prev_ts)
            out->monotonic = 0;
        prev_ts = ev.timestamp_ns;
        fuzz_hash_event(&out->all, &ev);
        decode_fields(r, &ev);
        fuzz_hash_event(ev.timestamp_ns >= target ? &out->from_ts : &out->before_ts, &ev);
    }
    FUZZ_ASSERT(st == TRACELOG_END, "iteration ended with %s", tracelog_status_name(st));
    /* The end is sticky. */
    FUZZ_ASSERT(tracelog_reader_next(r, &ev) == TRACELOG_END);
}

/* Opens fd and runs every check; returns the open status. */
static tracelog_status exercise(int fd, const uint8_t *data, size_t size, int ignore_checksums)
{
    tracelog_reader_options opt = fuzz_reader_options(ignore_checksums);
    tracelog_reader *r = NULL;
    tracelog_error err;
    memset(&err, 0, sizeof err);
    tracelog_status st = tracelog_reader_open(fd, &opt, &r, &err);
    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(r == NULL);
        FUZZ_ASSERT(fuzz_open_error_ok(st), "open returned %s", tracelog_status_name(st));
        fuzz_check_error(&err, st);
        /* A property of the file has a named condition (format-spec 3.3); a failure of ours has none. */
        FUZZ_ASSERT((tracelog_reader_open_condition(&err) != NULL) ==
                        (st != TRACELOG_E_IO && st != TRACELOG_E_NOMEM && st != TRACELOG_E_INVAL),
                    "open %s: condition %s", tracelog_status_name(st),
                    tracelog_reader_open_condition(&err) ? tracelog_reader_open_condition(&err) : "(none)");
        return st;
    }
    FUZZ_ASSERT(r != NULL);
    FUZZ_DEEP();
    check_queries(r);

    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    FUZZ_ASSERT(info.seekable == 1);
    FUZZ_ASSERT(info.file_size == size);
    FUZZ_ASSERT(info.chunks <= info.blocks);
    FUZZ_ASSERT(info.first_ts <= info.last_ts || info.chunks == 0);
    uint64_t target = seek_target(data, size, &info);

    pass_result first, second;
    read_pass(r, target, &first);
    FUZZ_ASSERT(first.all.count <= info.events, "read %llu events, chunk headers count %llu",
                (unsigned long long)first.all.count, (unsigned long long)info.events);
    check_queries(r); /* problems found while reading are listed too */

    FUZZ_ASSERT(tracelog_reader_rewind(r) == TRACELOG_OK);
    read_pass(r, target, &second);
    FUZZ_ASSERT(second.all.count == first.all.count, "rewind: %llu events, first pass %llu",
                (unsigned long long)second.all.count, (unsigned long long)first.all.count);
    FUZZ_ASSERT(second.all.h == first.all.h, "rewind: different events");

    tracelog_reader_info after;
    tracelog_reader_get_info(r, &after);
    FUZZ_ASSERT(tracelog_reader_seek_time(r, target) == TRACELOG_OK);
    fuzz_hash tail;
    fuzz_hash_init(&tail);
    tracelog_event ev;
    tracelog_status next = tracelog_reader_next(r, &ev);
    if (next == TRACELOG_OK) {
        FUZZ_ASSERT(ev.timestamp_ns >= target, "seek_time(%llu) gave an event at %llu",
                    (unsigned long long)target, (unsigned long long)ev.timestamp_ns);
        fuzz_hash_event(&tail, &ev);
        next = fuzz_drain(r, &tail);
    }
    FUZZ_ASSERT(next == TRACELOG_END, "after seek: %s", tracelog_status_name(next));
    if (first.monotonic && after.problems == 0) {
        FUZZ_ASSERT(tail.count == first.from_ts.count, "seek_time(%llu): %llu events follow, %llu expected",
                    (unsigned long long)target, (unsigned long long)tail.count,
                    (unsigned long long)first.from_ts.count);
        FUZZ_ASSERT(tail.h == first.from_ts.h, "seek_time: different events follow");
    }

    /* Ended early at the target: every event before it, as a whole read gives them, whatever the log. */
    FUZZ_ASSERT(tracelog_reader_set_end_time(r, target) == TRACELOG_OK);
    FUZZ_ASSERT(tracelog_reader_rewind(r) == TRACELOG_OK);
    pass_result ended;
    read_pass(r, target, &ended);
    FUZZ_ASSERT(ended.before_ts.count == first.before_ts.count && ended.before_ts.h == first.before_ts.h,
                "set_end_time(%llu): %llu events before it, %llu in a whole read", (unsigned long long)target,
                (unsigned long long)ended.before_ts.count, (unsigned long long)first.before_ts.count);
    FUZZ_ASSERT(ended.all.count <= first.all.count);
    FUZZ_ASSERT(tracelog_reader_set_end_time(r, UINT64_MAX) == TRACELOG_OK);

    /* Two ranges one after the other: a whole read, when it found no problem. */
    uint64_t cut = info.chunks ? (target ^ size) % (info.chunks + 1) : 0;
    fuzz_hash ranges;
    fuzz_hash_init(&ranges);
    FUZZ_ASSERT(tracelog_reader_read_range(r, 0, cut) == TRACELOG_OK);
    FUZZ_ASSERT(fuzz_drain(r, &ranges) == TRACELOG_END);
    FUZZ_ASSERT(tracelog_reader_read_range(r, cut, info.chunks) == TRACELOG_OK);
    FUZZ_ASSERT(fuzz_drain(r, &ranges) == TRACELOG_END);
    FUZZ_ASSERT(tracelog_reader_read_range(r, cut + 1, cut) == TRACELOG_E_INVAL);
    if (after.problems == 0)
        FUZZ_ASSERT(ranges.count == first.all.count && ranges.h == first.all.h,
                    "ranges cut at chunk %llu: %llu events, %llu in a whole read", (unsigned long long)cut,
                    (unsigned long long)ranges.count, (unsigned long long)first.all.count);
    tracelog_reader_close(r);
    return TRACELOG_OK;
}

/* Every event, then every problem (code, offset, length, message), in order, of one pass over fd; *chunks: the
   log's chunks. */
static fuzz_hash pass_digest(int fd, int read_ahead, int rewind_first, uint64_t *chunks)
{
    tracelog_reader_options opt = fuzz_reader_options(1);
    tracelog_reader *r;
    tracelog_error err;
    fuzz_hash x;
    fuzz_hash_init(&x);
    FUZZ_ASSERT(tracelog_reader_open(fd, &opt, &r, &err) == TRACELOG_OK, "second open failed");
    FUZZ_ASSERT(tracelog_reader_set_read_ahead(r, read_ahead) == TRACELOG_OK);
    tracelog_event ev;
    if (rewind_first) { /* a few events, then back: the chunks loaded ahead are dropped and loaded again */
        for (int i = 0; i < 3 && tracelog_reader_next(r, &ev) == TRACELOG_OK; i++)
            ;
        FUZZ_ASSERT(tracelog_reader_rewind(r) == TRACELOG_OK);
    }
    FUZZ_ASSERT(fuzz_drain(r, &x) == TRACELOG_END);
    size_t np = tracelog_reader_problem_count(r);
    for (size_t i = 0; i < np; i++) {
        tracelog_problem p;
        FUZZ_ASSERT(tracelog_reader_problem(r, i, &p) == TRACELOG_OK);
        fuzz_hash_u64(&x, (uint64_t)p.code);
        fuzz_hash_u64(&x, p.offset);
        fuzz_hash_u64(&x, p.length);
        fuzz_hash_bytes(&x, p.message, strlen(p.message));
    }
    fuzz_hash_u64(&x, np);
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    *chunks = info.chunks;
    tracelog_reader_close(r);
    return x;
}

/*
 * Read ahead (chunks loaded by other threads: reader/read_ahead.c) gives the
 * same events and the same problems, in the same order, as one thread, for
 * any file: 1 to 3 threads (chosen from the input), straight and after a
 * rewind part way.
 */
static void check_read_ahead(int fd, const uint8_t *data, size_t size)
{
    fuzz_hash choice;
    fuzz_hash_init(&choice);
    fuzz_hash_bytes(&choice, data, size);
    int threads = 1 + (int)(choice.h % 3);
    uint64_t chunks;
    fuzz_hash alone = pass_digest(fd, 0, 0, &chunks);
    if (chunks < 2)
        return; /* nothing to load ahead: the threads would only start and stop */
    fuzz_hash ahead = pass_digest(fd, threads, 0, &chunks);
    fuzz_hash rewound_alone = pass_digest(fd, 0, 1, &chunks), rewound = pass_digest(fd, threads, 1, &chunks);
    FUZZ_ASSERT(ahead.count == alone.count && ahead.h == alone.h,
                "read ahead (%d threads): %llu events, %llu on one thread (or other events or problems)", threads,
                (unsigned long long)ahead.count, (unsigned long long)alone.count);
    FUZZ_ASSERT(rewound.count == rewound_alone.count && rewound.h == rewound_alone.h,
                "read ahead (%d threads) after a rewind: other events or problems", threads);
}

static void run(const uint8_t *data, size_t size)
{
    int fd = fuzz_memfd("fuzz_reader", data, size);
    tracelog_status st = exercise(fd, data, size, 1);
    if (st == TRACELOG_OK) {
        check_read_ahead(fd, data, size);
        exercise(fd, data, size, 0); /* checksums verified: the production path */
    }
    close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size);
    uint8_t *repaired = fuzz_repair_header(data, size);
    if (repaired) {
        run(repaired, size);
        free(repaired);
    }
    return 0;
}
