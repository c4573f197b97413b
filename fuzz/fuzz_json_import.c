/*
 * fuzz_json_import: any bytes through ptlog's JSON document and JSON Lines
 * importers (tools/ptlog/json_in.c), as `ptlog convert --from json|jsonl
 * --to ptl` does: bytes -> importer -> .ptl written to a memfd -> read back.
 *
 * Every input is imported twice, once as a document and once as JSON Lines
 * (both importers see every input, whatever the detection would say), from
 * a memfd or from a pipe (a choice from the input's last byte).
 *
 * Properties:
 *  - the fast paths agree with jansson: imported again with every event
 *    parsed by jansson (ptlog_json_fast_paths 0), the input ends with the
 *    same exit code after the same events and the same type table;
 *  - the importer never crashes, leaks or reads out of bounds; it ends with
 *    0 (success) or exit code 3 (invalid input) and, when it fails, says why
 *    in at least one message; success prints nothing;
 *  - every event it returns is well formed (truncation 0..2, payload present
 *    when its length is not 0);
 *  - when the import succeeds, the .ptl it wrote opens with checksums
 *    verified, has no problem, was closed cleanly, and holds exactly the
 *    events the importer returned (count and digest of every field and
 *    payload byte), the importer's attributes, every type it named, and
 *    the stream-side status counters it read;
 *  - that .ptl exported again to JSON (document or lines, ts as ns, text or
 *    relative: other choices) and imported again gives the same events and
 *    the same type table (the `ptl -> json -> ptl` round trip of
 *    tools/ptlog/README.md);
 *  - that .ptl dumped or exported to JSON through ptlog's batches of formatter
 *    threads (tools/ptlog/par.c) gives the bytes it gives on one thread;
 *  - that .ptl converted to Perfetto's protobuf trace is well formed: a
 *    sequence of Trace.packet fields whose every field (varint, fixed64,
 *    length-delimited within its packet) parses, with at least one
 *    track_event per event.
 *  - that .ptl converted to Chrome's JSON parses (jansson), with an i, B
 *    or E entry per event at least, and is byte for byte what the same
 *    log's JSON Lines convert to (names kept by address against names made
 *    for each event).
 *
 * The importer lives in the tool, so this target links the .c files of tools/ptlog
 * except cli.c, which holds main() (fuzz/CMakeLists.txt). Messages are
 * silenced and counted (ptlog_msg_silence, ptlog_msg_count).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <jansson.h>

#include "fuzz_helpers.h"
#include "ptlog.h"

/* ---- a source that digests what the importer returns --------------------- */

typedef struct digest_src {
    ptlog_src base;
    ptlog_src *in;
    fuzz_hash events;
} digest_src;

static int ds_next(ptlog_src *b, tracelog_event *ev)
{
    digest_src *d = (digest_src *)b;
    int rc = d->in->next(d->in, ev);
    FUZZ_ASSERT(rc == 1 || rc == 0 || rc == -PTLOG_EXIT_INPUT, "next returned %d", rc);
    if (rc == 1) {
        FUZZ_ASSERT(ev->truncation <= TRACELOG_TRUNC_READ, "truncation %u", ev->truncation);
        FUZZ_ASSERT(ev->payload_len == 0 || ev->payload != NULL);
        fuzz_hash_event(&d->events, ev);
    }
    return rc;
}

static const char *ds_type_name(ptlog_src *b, uint32_t id)
{
    digest_src *d = (digest_src *)b;
    return d->in->type_name(d->in, id);
}

static const tracelog_schema *ds_type_schema(ptlog_src *b, uint32_t id)
{
    digest_src *d = (digest_src *)b;
    return d->in->type_schema ? d->in->type_schema(d->in, id) : NULL;
}

static size_t ds_type_count(ptlog_src *b)
{
    digest_src *d = (digest_src *)b;
    return d->in->type_count(d->in);
}

static void ds_type_at(ptlog_src *b, size_t i, uint32_t *id, const char **name)
{
    digest_src *d = (digest_src *)b;
    d->in->type_at(d->in, i, id, name);
}

static void ds_get_status(ptlog_src *b, tracelog_log_status *st)
{
    digest_src *d = (digest_src *)b;
    d->in->get_status(d->in, st);
}

static const char *ds_thread_name(ptlog_src *b, const tracelog_event *ev)
{
    digest_src *d = (digest_src *)b;
    return d->in->thread_name ? d->in->thread_name(d->in, ev) : NULL;
}

static int ds_finish(ptlog_src *b)
{
    digest_src *d = (digest_src *)b;
    return d->in->finish(d->in);
}

static void ds_wrap(digest_src *d, ptlog_src *in)
{
    memset(d, 0, sizeof *d);
    d->base = *in; /* name, attributes, format version, flags */
    d->base.next = ds_next;
    d->base.type_name = ds_type_name;
    d->base.type_schema = ds_type_schema; /* every callback forwards: the copied ones expect the wrapped source */
    d->base.type_count = ds_type_count;
    d->base.type_at = ds_type_at;
    d->base.get_status = ds_get_status;
    d->base.thread_name = ds_thread_name;
    d->base.seek_time = NULL;
    d->base.end_time = NULL;
    d->base.finish = ds_finish;
    d->base.close = NULL; /* the caller closes d->in */
    d->in = in;
    fuzz_hash_init(&d->events);
}

/* ---- plumbing ------------------------------------------------------------- */

/*
 * Makes data readable at *path: a memfd (path "/proc/self/fd/N"), or a pipe
 * already filled and closed, made standard input (path "-", as `ptlog
 * convert -` reads it; a pipe cannot be reopened through /proc once its
 * write end is closed). Returns the memfd, or -1 for the pipe.
 */
static int input_open(const uint8_t *data, size_t size, int pipe, char *path, size_t n)
{
    if (!pipe) {
        int fd = fuzz_memfd("json-in", data, size);
        snprintf(path, n, "/proc/self/fd/%d", fd);
        return fd;
    }
    int p[2];
    FUZZ_CHECK_SYS(pipe2(p, O_CLOEXEC) == 0);
    if (size > 65536)
        FUZZ_CHECK_SYS(fcntl(p[1], F_SETPIPE_SZ, (int)size) >= (int)size);
    size_t done = 0;
    while (done < size) {
        ssize_t k = write(p[1], data + done, size - done);
        if (k < 0 && errno == EINTR)
            continue;
        FUZZ_CHECK_SYS(k > 0);
        done += (size_t)k;
    }
    close(p[1]);
    FUZZ_CHECK_SYS(dup2(p[0], STDIN_FILENO) == STDIN_FILENO);
    close(p[0]);
    snprintf(path, n, "-");
    return -1;
}

static void fd_path(int fd, char *buf, size_t n) { snprintf(buf, n, "/proc/self/fd/%d", fd); }

/* An output into fd (which the caller keeps): as ptlog_out_open("-") does, without standard output. */
static void out_on_fd(ptlog_out *o, int fd)
{
    memset(o, 0, sizeof *o);
    o->fd = fd;
    o->cap = 1u << 20;
    o->buf = malloc(o->cap);
    FUZZ_CHECK_SYS(o->buf != NULL);
}

/* The start of every export: the log at path (read as fmt) as ptlog's source, an output into a new memfd
   (returned), no selection. */
static int export_start(const char *path, ptlog_format fmt, const char *name, ptlog_src **src, ptlog_out *out,
                        ptlog_select *sel)
{
    int rc = ptlog_src_open(path, fmt, src);
    FUZZ_ASSERT(rc == 0, "ptlog cannot open the log it wrote (format %d): %d", (int)fmt, rc);
    int fd = memfd_create(name, MFD_CLOEXEC);
    FUZZ_CHECK_SYS(fd >= 0);
    out_on_fd(out, fd);
    memset(sel, 0, sizeof *sel);
    return fd;
}

/* What one import produced. */
typedef struct import_result {
    int rc;
    fuzz_hash events;
    tracelog_metadata meta;
    tracelog_log_status status;
    size_t ntypes;
    uint32_t *type_ids;
    char **type_names;
} import_result;

static void result_free(import_result *r)
{
    for (size_t i = 0; i < r->ntypes; i++)
        free(r->type_names[i]);
    free(r->type_ids);
    free(r->type_names);
    memset(r, 0, sizeof *r);
}

/* Messages printed since mark (a ptlog_msg_count() value); none of them may be empty. */
static unsigned long messages_since(unsigned long mark)
{
    unsigned long n = ptlog_msg_count() - mark;
    FUZZ_ASSERT(n == 0 || ptlog_msg_last()[0] != 0, "empty message");
    return n;
}

/* Imports the input at path (lines: JSON Lines) into a .ptl written to ptl_fd. */
static void import(const char *path, int lines, int ptl_fd, import_result *res)
{
    memset(res, 0, sizeof *res);
    ptlog_in *in = malloc(sizeof *in);
    FUZZ_CHECK_SYS(in != NULL);
    unsigned long mark = ptlog_msg_count();
    int rc = ptlog_in_open(in, path);
    if (rc) { /* only an empty input is refused here */
        FUZZ_ASSERT(rc == PTLOG_EXIT_INPUT && messages_since(mark) > 0, "ptlog_in_open: %d", rc);
        free(in);
        res->rc = rc;
        return;
    }
    (void)ptlog_detect(in->head, in->head_len);
    ptlog_src *src;
    rc = ptlog_json_src_open(in, lines, &src);
    if (rc) {
        FUZZ_ASSERT(rc == PTLOG_EXIT_INPUT, "open (%s) returned %d", lines ? "lines" : "document", rc);
        FUZZ_ASSERT(messages_since(mark) > 0, "open failed without a message");
        ptlog_in_close(in);
        free(in);
        res->rc = rc;
        return;
    }
    digest_src d;
    ds_wrap(&d, src);
    ptlog_out out;
    out_on_fd(&out, ptl_fd);
    ptlog_select sel;
    memset(&sel, 0, sizeof sel);
    rc = ptlog_write_ptl(&d.base, &out, &sel);
    if (rc == 0)
        ptlog_out_flush(&out);
    FUZZ_ASSERT(out.err == 0, "output error %d", out.err);
    free(out.buf);
    FUZZ_ASSERT(rc == 0 || rc == PTLOG_EXIT_INPUT, "import (%s) returned %d", lines ? "lines" : "document",
                rc);
    unsigned long messages = messages_since(mark);
    FUZZ_ASSERT((rc == 0) == (messages == 0), "exit %d after %lu messages", rc, messages);
    res->rc = rc;
    res->events = d.events;
    res->meta = src->meta;
    /* A .ptl written by ptlog is a sequential APPEND log (tools/ptlog/README.md, "Round trips"). */
    res->meta.log_full_policy = TRACELOG_POLICY_APPEND;
    res->meta.log_max_size = 0;
    src->get_status(src, &res->status);
    res->ntypes = src->type_count(src);
    res->type_ids = calloc(res->ntypes + 1, sizeof *res->type_ids);
    res->type_names = calloc(res->ntypes + 1, sizeof *res->type_names);
    FUZZ_CHECK_SYS(res->type_ids && res->type_names);
    for (size_t i = 0; i < res->ntypes; i++) {
        const char *name;
        src->type_at(src, i, &res->type_ids[i], &name);
        FUZZ_ASSERT(name != NULL && name[0] != 0 && strlen(name) <= TRACELOG_TEXT_MAX);
        res->type_names[i] = strdup(name);
        FUZZ_CHECK_SYS(res->type_names[i] != NULL);
        FUZZ_ASSERT(src->type_name(src, res->type_ids[i]) != NULL &&
                        strcmp(src->type_name(src, res->type_ids[i]), name) == 0,
                    "type %u: type_name and type_at disagree", res->type_ids[i]);
    }
    src->close(src); /* also closes and frees in */
}

/* The .ptl the import wrote holds what the importer returned, and nothing else. */
static void check_ptl(int ptl_fd, const import_result *res)
{
    tracelog_reader_options opt = fuzz_reader_options(0);
    tracelog_reader *r;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open(ptl_fd, &opt, &r, &err);
    FUZZ_ASSERT(st == TRACELOG_OK, "written log does not open: %s (%s)", tracelog_status_name(st),
                err.message);
    fuzz_hash got;
    fuzz_hash_init(&got);
    st = fuzz_drain(r, &got);
    FUZZ_ASSERT(st == TRACELOG_END, "written log: %s while reading", tracelog_status_name(st));
    FUZZ_ASSERT(got.count == res->events.count, "written log holds %llu events, the importer returned %llu",
                (unsigned long long)got.count, (unsigned long long)res->events.count);
    FUZZ_ASSERT(got.h == res->events.h, "written events differ from the imported ones");
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    FUZZ_ASSERT(info.clean && info.problems == 0 && tracelog_reader_problem_count(r) == 0,
                "written log: clean %d, %llu problems", info.clean, (unsigned long long)info.problems);
    FUZZ_ASSERT(info.events == res->events.count);
    FUZZ_ASSERT(fuzz_meta_equal(tracelog_reader_metadata(r), &res->meta), "attributes changed");
    for (size_t i = 0; i < res->ntypes; i++) {
        const char *name = tracelog_reader_event_name(r, res->type_ids[i]);
        FUZZ_ASSERT(name && strcmp(name, res->type_names[i]) == 0, "type %u \"%s\" written as \"%s\"",
                    res->type_ids[i], res->type_names[i], name ? name : "(none)");
    }
    FUZZ_ASSERT(tracelog_reader_event_type_count(r) == res->ntypes, "written log has %zu types, not %zu",
                tracelog_reader_event_type_count(r), res->ntypes);
    tracelog_log_status ls;
    tracelog_reader_get_status(r, &ls);
    FUZZ_ASSERT(ls.events_recorded == res->status.events_recorded &&
                    ls.stream_overruns == res->status.stream_overruns &&
                    ls.flush_error == res->status.flush_error && ls.events_written == res->events.count,
                "status counters changed");
    tracelog_reader_close(r);
}

/* The varint at *p (before end); 0 when cut or longer than 10 bytes. */
static int pb_read_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; *p < end && shift < 70; shift += 7) {
        unsigned char b = *(*p)++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return 1;
    }
    return 0;
}

/* Counts the fields of one TracePacket's bytes p[0..n); its track_event (field 11) count. */
static size_t pb_walk_packet(const unsigned char *p, size_t n)
{
    const unsigned char *end = p + n;
    size_t track_events = 0;
    while (p < end) {
        uint64_t tag, v;
        FUZZ_ASSERT(pb_read_varint(&p, end, &tag) && tag >> 3, "perfetto: bad field tag");
        switch (tag & 7) {
        case 0:
            FUZZ_ASSERT(pb_read_varint(&p, end, &v), "perfetto: cut varint");
            break;
        case 1:
            FUZZ_ASSERT(end - p >= 8, "perfetto: cut fixed64");
            p += 8;
            break;
        case 2:
            FUZZ_ASSERT(pb_read_varint(&p, end, &v) && v <= (uint64_t)(end - p), "perfetto: length past its packet");
            track_events += tag >> 3 == 11;
            p += v;
            break;
        default:
            FUZZ_ASSERT(0, "perfetto: wire type %u", (unsigned)(tag & 7));
        }
    }
    return track_events;
}

/* The whole content of the memfd fd (NUL-terminated, for the caller to free); its size in *n. */
static char *fd_content(int fd, size_t *n)
{
    off_t size = lseek(fd, 0, SEEK_END);
    FUZZ_CHECK_SYS(size >= 0);
    char *buf = malloc((size_t)size + 1);
    FUZZ_CHECK_SYS(buf != NULL && pread(fd, buf, (size_t)size, 0) == size);
    buf[size] = 0;
    *n = (size_t)size;
    return buf;
}

/* .ptl -> Perfetto: packets that parse, a track event per event at least. */
static void check_perfetto(int ptl_fd, const import_result *first)
{
    char path[64];
    fd_path(ptl_fd, path, sizeof path);
    ptlog_src *src;
    ptlog_out out;
    ptlog_select sel;
    unsigned long mark = ptlog_msg_count();
    int fd = export_start(path, PTLOG_FMT_PTL, "perfetto-out", &src, &out, &sel);
    int rc = ptlog_write_perfetto(src, &out, &sel);
    src->close(src);
    FUZZ_ASSERT(rc == 0 && messages_since(mark) == 0, "export to perfetto: %d", rc);
    FUZZ_ASSERT(ptlog_out_finish(&out) == 0);
    size_t size;
    unsigned char *buf = (unsigned char *)fd_content(fd, &size);
    const unsigned char *p = buf, *end = buf + size;
    size_t track_events = 0;
    while (p < end) {
        uint64_t tag, len;
        FUZZ_ASSERT(pb_read_varint(&p, end, &tag) && tag == (1 << 3 | 2), "perfetto: not a Trace.packet");
        FUZZ_ASSERT(pb_read_varint(&p, end, &len) && len <= (uint64_t)(end - p), "perfetto: packet past the end");
        track_events += pb_walk_packet(p, (size_t)len);
        p += len;
    }
    FUZZ_ASSERT(track_events >= first->events.count, "perfetto: %zu track events for %llu events", track_events,
                (unsigned long long)first->events.count);
    free(buf);
    close(fd);
}

/* The log at path, read as fmt, converted to Chrome's JSON: its bytes (for the caller to free). */
static char *chrome_of(const char *path, ptlog_format fmt, size_t *n)
{
    ptlog_src *src;
    ptlog_out out;
    ptlog_select sel;
    int fd = export_start(path, fmt, "chrome-out", &src, &out, &sel);
    unsigned long mark = ptlog_msg_count();
    int rc = ptlog_write_chrome(src, &out, &sel);
    src->close(src);
    FUZZ_ASSERT(rc == 0 && messages_since(mark) == 0, "export to chrome: %d", rc);
    FUZZ_ASSERT(ptlog_out_finish(&out) == 0);
    char *text = fd_content(fd, n);
    close(fd);
    return text;
}

/*
 * .ptl -> Chrome: a JSON document whose traceEvents hold an i, B or E entry per event at least. And the
 * same bytes from the log's JSON Lines: a .ptl source keeps its type and thread names in place until
 * close, which lets the writer recognise a name by its address (tracks.c, chrome.c); a JSON source makes
 * them again for each event, so every such shortcut is checked against the slow way.
 */
static void check_chrome(int ptl_fd, const import_result *first)
{
    char path[64];
    fd_path(ptl_fd, path, sizeof path);
    size_t n, n2;
    char *text = chrome_of(path, PTLOG_FMT_PTL, &n);

    ptlog_src *src;
    ptlog_out out;
    ptlog_select sel;
    unsigned long mark = ptlog_msg_count();
    int jsonl_fd = export_start(path, PTLOG_FMT_PTL, "chrome-jsonl", &src, &out, &sel);
    int rc = ptlog_write_json(src, &out, 1, &sel, PTLOG_TS_NS);
    src->close(src);
    FUZZ_ASSERT(rc == 0 && messages_since(mark) == 0, "export to jsonl: %d", rc);
    FUZZ_ASSERT(ptlog_out_finish(&out) == 0);
    fd_path(jsonl_fd, path, sizeof path);
    char *again = chrome_of(path, PTLOG_FMT_JSONL, &n2);
    close(jsonl_fd);
    FUZZ_ASSERT(n == n2 && memcmp(text, again, n) == 0,
                "chrome: %zu bytes from the .ptl, %zu from its JSON Lines, not the same", n, n2);
    free(again);

    json_error_t err;
    json_t *doc = json_loadb(text, n, 0, &err);
    FUZZ_ASSERT(doc != NULL, "chrome: not JSON at %d:%d: %s", err.line, err.column, err.text);
    json_t *events = json_object_get(doc, "traceEvents");
    FUZZ_ASSERT(json_is_array(events), "chrome: no traceEvents array");
    size_t i, marks = 0;
    json_t *e;
    json_array_foreach(events, i, e) {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        FUZZ_ASSERT(json_is_object(e) && ph && json_is_string(json_object_get(e, "name")),
                    "chrome: traceEvents[%zu] has no ph or name", i);
        marks += strcmp(ph, "i") == 0 || strcmp(ph, "B") == 0 || strcmp(ph, "E") == 0;
    }
    FUZZ_ASSERT(marks >= first->events.count, "chrome: %zu entries for %llu events", marks,
                (unsigned long long)first->events.count);
    json_decref(doc);
    free(text);
}

/* .ptl -> JSON (lines or document, ts in the form given) -> import again: the same events and types. */
static void check_round_trip(int ptl_fd, int lines, ptlog_ts_form ts, const import_result *first)
{
    char path[64];
    fd_path(ptl_fd, path, sizeof path);
    ptlog_src *src;
    ptlog_out out;
    ptlog_select sel;
    unsigned long mark = ptlog_msg_count();
    int json_fd = export_start(path, PTLOG_FMT_PTL, "json-out", &src, &out, &sel);
    int rc = ptlog_write_json(src, &out, lines, &sel, ts);
    src->close(src);
    FUZZ_ASSERT(rc == 0 && messages_since(mark) == 0, "export to %s: %d", lines ? "jsonl" : "json", rc);
    FUZZ_ASSERT(ptlog_out_finish(&out) == 0); /* no path: flushes, keeps the descriptor */
    FUZZ_CHECK_SYS(lseek(json_fd, 0, SEEK_SET) == 0);

    int ptl2 = memfd_create("json-ptl2", MFD_CLOEXEC);
    FUZZ_CHECK_SYS(ptl2 >= 0);
    import_result again;
    fd_path(json_fd, path, sizeof path);
    import(path, lines, ptl2, &again);
    FUZZ_ASSERT(again.rc == 0, "the exported %s does not import: %d", lines ? "jsonl" : "json", again.rc);
    FUZZ_ASSERT(again.events.count == first->events.count && again.events.h == first->events.h,
                "events changed through ptl -> %s -> ptl (%llu then %llu)", lines ? "jsonl" : "json",
                (unsigned long long)first->events.count, (unsigned long long)again.events.count);
    FUZZ_ASSERT(fuzz_meta_equal(&again.meta, &first->meta), "attributes changed through %s",
                lines ? "jsonl" : "json");
    FUZZ_ASSERT(again.ntypes == first->ntypes, "%zu types, then %zu", first->ntypes, again.ntypes);
    for (size_t i = 0; i < again.ntypes; i++)
        FUZZ_ASSERT(again.type_ids[i] == first->type_ids[i] &&
                        strcmp(again.type_names[i], first->type_names[i]) == 0,
                    "type table changed through %s", lines ? "jsonl" : "json");
    result_free(&again);
    close(ptl2);
    close(json_fd);
}

/* The log at path as dump's text (what 0), JSON (1) or JSON Lines (2), formatted with `threads` formatter
   threads (tools/ptlog/par.c), into a new memfd (its size in *len). */
static int export_with(const char *path, int what, const ptlog_dump_opts *o, int threads, off_t *len)
{
    char n[8];
    snprintf(n, sizeof n, "%d", threads);
    FUZZ_CHECK_SYS(setenv("PTLOG_FORMAT_THREADS", n, 1) == 0);
    FUZZ_ASSERT(ptlog_format_threads_init() == 0);
    ptlog_src *src;
    ptlog_out out;
    ptlog_select sel;
    int fd = export_start(path, PTLOG_FMT_PTL, "export", &src, &out, &sel);
    int rc = what == 0 ? ptlog_write_text(src, &out, &sel, o) : ptlog_write_json(src, &out, what == 2, &sel, o->ts);
    src->close(src);
    FUZZ_ASSERT(rc == 0, "export %d with %d formatter threads: %d", what, threads, rc);
    FUZZ_ASSERT(ptlog_out_finish(&out) == 0);
    *len = lseek(fd, 0, SEEK_END);
    FUZZ_CHECK_SYS(*len >= 0);
    return fd;
}

/* Formatting through batches (formatter threads, or the reading thread replaying a batch) gives the bytes
   of formatting on the reading thread, for dump's text (with --delta or not) and JSON. */
static void check_format_threads(int ptl_fd, uint8_t choice)
{
    char path[64];
    fd_path(ptl_fd, path, sizeof path);
    ptlog_dump_opts o = {.relative = choice & 1, .delta = (choice >> 1) & 1, .hex = (choice >> 3) & 1,
                         .ts = (ptlog_ts_form)((choice >> 4) % 3)};
    int what = (choice >> 6) % 3;
    off_t one_len, many_len;
    int one = export_with(path, what, &o, 0, &one_len), many = export_with(path, what, &o, 2, &many_len);
    FUZZ_ASSERT(one_len == many_len, "export %d: %lld bytes on one thread, %lld with formatter threads", what,
                (long long)one_len, (long long)many_len);
    char *a = malloc((size_t)one_len + 1), *b = malloc((size_t)one_len + 1);
    FUZZ_CHECK_SYS(a && b);
    FUZZ_CHECK_SYS(pread(one, a, (size_t)one_len, 0) == one_len && pread(many, b, (size_t)one_len, 0) == one_len);
    FUZZ_ASSERT(memcmp(a, b, (size_t)one_len) == 0, "export %d differs with formatter threads", what);
    free(a);
    free(b);
    close(one);
    close(many);
    FUZZ_CHECK_SYS(setenv("PTLOG_FORMAT_THREADS", "0", 1) == 0); /* the other checks on one thread */
    FUZZ_ASSERT(ptlog_format_threads_init() == 0);
}

/*
 * The fast paths (events read in place: ptlog's own lines, flat objects of
 * plain values) read exactly what jansson reads: the same input imported
 * with jansson alone ends the same way, after the same events and types.
 */
static void check_fast_paths(const uint8_t *data, size_t size, int lines, const import_result *fast)
{
    char path[64];
    int in_fd = input_open(data, size, 0, path, sizeof path);
    int ptl_fd = memfd_create("json-ptl-slow", MFD_CLOEXEC);
    FUZZ_CHECK_SYS(ptl_fd >= 0);
    import_result slow;
    ptlog_json_fast_paths = 0;
    import(path, lines, ptl_fd, &slow);
    ptlog_json_fast_paths = 1;
    close(in_fd);
    FUZZ_ASSERT(slow.rc == fast->rc, "%s: exit %d with the fast paths, %d without", lines ? "lines" : "document",
                fast->rc, slow.rc);
    FUZZ_ASSERT(slow.events.count == fast->events.count && slow.events.h == fast->events.h,
                "%s: %llu events with the fast paths, %llu without (or other values)", lines ? "lines" : "document",
                (unsigned long long)fast->events.count, (unsigned long long)slow.events.count);
    FUZZ_ASSERT(slow.ntypes == fast->ntypes, "%zu types with the fast paths, %zu without", fast->ntypes, slow.ntypes);
    for (size_t i = 0; i < slow.ntypes; i++)
        FUZZ_ASSERT(slow.type_ids[i] == fast->type_ids[i] && strcmp(slow.type_names[i], fast->type_names[i]) == 0,
                    "type table differs without the fast paths");
    result_free(&slow);
    close(ptl_fd);
}

/* The process's standard input, put back after each import from a pipe. */
static int saved_stdin = -1;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > (1u << 20))
        return 0; /* the pipe must hold the whole input */
    uint8_t choice = size ? data[size - 1] : 0;
    if (saved_stdin < 0) {
        ptlog_msg_silence(getenv("FUZZ_JSON_VERBOSE") == NULL);
        saved_stdin = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 10);
        if (saved_stdin < 0) /* no standard input at all: /dev/null takes its place */
            saved_stdin = open("/dev/null", O_RDONLY | O_CLOEXEC);
        FUZZ_CHECK_SYS(saved_stdin >= 0);
    }
    for (int lines = 0; lines <= 1; lines++) {
        char path[64];
        int in_fd = input_open(data, size, (choice >> lines) & 1, path, sizeof path);
        int ptl_fd = memfd_create("json-ptl", MFD_CLOEXEC);
        FUZZ_CHECK_SYS(ptl_fd >= 0);
        import_result res;
        import(path, lines, ptl_fd, &res);
        if (in_fd >= 0)
            close(in_fd);
        else
            FUZZ_CHECK_SYS(dup2(saved_stdin, STDIN_FILENO) == STDIN_FILENO);
        check_fast_paths(data, size, lines, &res);
        if (res.rc == 0) {
            FUZZ_DEEP();
            check_ptl(ptl_fd, &res);
            check_round_trip(ptl_fd, (choice >> (2 + lines)) & 1, (ptlog_ts_form)((choice >> 4) % 3), &res);
            check_perfetto(ptl_fd, &res);
            check_chrome(ptl_fd, &res);
            check_format_threads(ptl_fd, choice);
        }
        result_free(&res);
        close(ptl_fd);
    }
    return 0;
}
