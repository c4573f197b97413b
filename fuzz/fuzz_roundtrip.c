/*
 * fuzz_roundtrip: what the writer writes, the reader gives back.
 *
 * The input drives a writer (fuzz_fdp: choices from the tail, payload bytes
 * from the front): log policy APPEND, UNTIL_FULL or LOOP with small sizes,
 * chunk size, compression level 0 or 1, then a sequence of appends (any ids,
 * pids, thread ids, addresses, truncation flags, timestamps that may go
 * backwards, payloads of 0..9000 bytes), event type definitions, status
 * updates and flushes. The same sequence is written twice, to two memfds.
 *
 * Properties:
 *  - every call returns what its documentation promises (append: OK, INVAL
 *    only for a payload larger than a chunk, LOG_FULL only for UNTIL_FULL;
 *    define_event: INVAL only when an id is renamed; close: OK);
 *  - the reader (checksums verified) opens the log cleanly with no problem
 *    and gives back, event for event and byte for byte: APPEND: every event
 *    appended; UNTIL_FULL: a prefix of them, within the size budget; LOOP: a
 *    suffix of them; the status counters account for every event left out;
 *  - the metadata and the event-type table come back;
 *  - seek_time lands on the first event at or after the target when the
 *    timestamps read never decrease;
 *  - the two files read back the same, and are the same bytes except for
 *    the random salt and the checksums it seeds.
 */
#define _GNU_SOURCE
#include "format/meta.h" /* tracelog_policy_name */
#include "fuzz_helpers.h"

#define MAX_OPS 20000
#define MAX_PAYLOAD_TOTAL (2u << 20)
#define MAX_TYPES 8

enum op_kind { OP_APPEND, OP_FLUSH, OP_DEFINE, OP_STATUS };

typedef struct op {
    enum op_kind kind;
    tracelog_event ev;  /* OP_APPEND; payload set once the arena is final */
    size_t payload_off;
    uint32_t id;        /* OP_DEFINE */
    char name[40];
    tracelog_log_status st; /* OP_STATUS */
} op;

typedef struct plan {
    tracelog_writer_options wopt;
    op *ops;
    size_t nops;
    uint8_t *arena;
    size_t arena_len;
    uint64_t seek_seed;
} plan;

typedef struct type_def {
    uint32_t id;
    char name[40];
} type_def;

/* What one write of the plan did. */
typedef struct outcome {
    tracelog_event *accepted; /* events whose append returned OK, in order */
    size_t naccepted;
    uint64_t log_full_returns;
    type_def types[MAX_TYPES];
    size_t ntypes;
    int fd;
} outcome;

static tracelog_metadata fixed_meta;

static void init_meta(void)
{
    memset(&fixed_meta, 0, sizeof fixed_meta);
    strcpy(fixed_meta.trace_name, "fuzz_roundtrip");
    strcpy(fixed_meta.generation_version, "tracelog fuzz");
    fixed_meta.creation_time_ns = 1700000000000000000ull;
    strcpy(fixed_meta.clock_id, "CLOCK_REALTIME");
    strcpy(fixed_meta.clock_source, "fuzz");
    fixed_meta.clock_resolution_ns = 1;
    fixed_meta.max_data_size = 9000;
    fixed_meta.stream_full_policy = TRACELOG_POLICY_LOOP;
    fixed_meta.log_full_policy = TRACELOG_POLICY_APPEND;
    strcpy(fixed_meta.hostname, "fuzzhost");
    strcpy(fixed_meta.os_name, "Linux");
    strcpy(fixed_meta.machine, "x86_64");
    fixed_meta.pid = 42;
}

static void gen_event(fuzz_fdp *f, tracelog_event *ev, const tracelog_event *prev, plan *p)
{
    memset(ev, 0, sizeof *ev);
    switch (fuzz_fdp_range(f, 0, 3)) {
    case 0: ev->timestamp_ns = prev->timestamp_ns + fuzz_fdp_range(f, 0, 1000); break;
    case 1: ev->timestamp_ns = prev->timestamp_ns - fuzz_fdp_range(f, 0, prev->timestamp_ns < 1000000 ? prev->timestamp_ns : 1000000); break;
    case 2: ev->timestamp_ns = fuzz_fdp_u64(f); break;
    default: ev->timestamp_ns = prev->timestamp_ns; break;
    }
    ev->event_id = fuzz_fdp_bool(f) ? (uint32_t)fuzz_fdp_range(f, 0, 9) : fuzz_fdp_u32(f);
    ev->pid = fuzz_fdp_bool(f) ? prev->pid : fuzz_fdp_u32(f);
    ev->tid = fuzz_fdp_bool(f) ? prev->tid : fuzz_fdp_u64(f);
    /* Kernel tids are derived, not drawn (the corpus keeps its meaning): one
       per (pid, tid) and per 200 operations, as if the thread handle were
       reused by a new thread; none when tid is 0. */
    uint64_t k = (ev->tid ^ ((uint64_t)ev->pid << 32) ^ (p->nops / 200)) * 0x9E3779B97F4A7C15ull;
    ev->kernel_tid = ev->tid ? (uint32_t)(k >> 32) | 1 : 0;
    switch (fuzz_fdp_range(f, 0, 2)) {
    case 0: ev->address = prev->address; break;
    case 1: ev->address = prev->address + fuzz_fdp_range(f, 0, 4096) - 2048; break;
    default: ev->address = fuzz_fdp_u64(f); break;
    }
    ev->truncation = (uint32_t)fuzz_fdp_range(f, 0, 2);
    uint32_t len;
    switch (fuzz_fdp_range(f, 0, 3)) {
    case 0: len = 0; break;
    case 1: len = (uint32_t)fuzz_fdp_range(f, 1, 64); break;
    case 2: len = (uint32_t)fuzz_fdp_range(f, 0, 9000); break;
    default: len = (uint32_t)fuzz_fdp_range(f, 3900, 4100); break; /* around the chunk limit */
    }
    if (p->arena_len + len > MAX_PAYLOAD_TOTAL)
        len = 0;
    ev->payload_len = len;
    p->ops[p->nops].payload_off = p->arena_len;
    if (len) {
        const uint8_t *src;
        size_t got = fuzz_fdp_bytes(f, len, &src);
        memcpy(p->arena + p->arena_len, src, got);
        for (size_t i = got; i < len; i++) /* input exhausted: a pattern */
            p->arena[p->arena_len + i] = (uint8_t)(i * 31 + len);
        p->arena_len += len;
    }
}

static void make_plan(const uint8_t *data, size_t size, plan *p)
{
    fuzz_fdp f;
    fuzz_fdp_init(&f, data, size);
    memset(p, 0, sizeof *p);
    tracelog_writer_options *o = &p->wopt;
    tracelog_writer_options_init(o);
    static const tracelog_policy policies[] = {TRACELOG_POLICY_APPEND, TRACELOG_POLICY_UNTIL_FULL,
                                               TRACELOG_POLICY_LOOP};
    o->log_policy = policies[fuzz_fdp_range(&f, 0, 2)];
    o->compression_level = (int)fuzz_fdp_range(&f, 0, 1);
    o->chunk_size = 4096u << fuzz_fdp_range(&f, 0, 2);
    if (o->log_policy == TRACELOG_POLICY_UNTIL_FULL)
        o->log_max_size = fuzz_fdp_range(&f, 1, 65536);
    if (o->log_policy == TRACELOG_POLICY_LOOP) {
        o->log_max_size = fuzz_fdp_range(&f, 8192, 131072);
        o->segment_size = fuzz_fdp_bool(&f) ? 0 : (uint32_t)fuzz_fdp_range(&f, 4096, 16384);
        o->durable_size = fuzz_fdp_bool(&f) ? 0 : (uint32_t)fuzz_fdp_range(&f, 4096, 8192);
    }
    p->seek_seed = fuzz_fdp_u64(&f);
    p->ops = calloc(MAX_OPS, sizeof *p->ops);
    p->arena = malloc(MAX_PAYLOAD_TOTAL);
    FUZZ_CHECK_SYS(p->ops && p->arena);
    tracelog_event prev = {0};
    prev.timestamp_ns = 1700000000000000000ull;
    size_t ndefines = 0;
    while (fuzz_fdp_remaining(&f) && p->nops < MAX_OPS) {
        op *x = &p->ops[p->nops];
        uint64_t k = fuzz_fdp_range(&f, 0, 31);
        if (k == 0) {
            x->kind = OP_FLUSH;
        } else if (k == 1 && ndefines < MAX_TYPES) {
            x->kind = OP_DEFINE;
            x->id = (uint32_t)fuzz_fdp_range(&f, 0, 9);
            size_t len = (size_t)fuzz_fdp_range(&f, 1, sizeof x->name - 1);
            for (size_t i = 0; i < len; i++)
                x->name[i] = (char)('a' + fuzz_fdp_range(&f, 0, 25));
            ndefines++;
        } else if (k == 2) {
            x->kind = OP_STATUS;
            x->st.events_recorded = fuzz_fdp_u64(&f);
            x->st.stream_overruns = fuzz_fdp_u64(&f);
            x->st.flush_error = (int32_t)fuzz_fdp_range(&f, 0, 200);
        } else {
            x->kind = OP_APPEND;
            gen_event(&f, &x->ev, &prev, p);
            prev = x->ev;
        }
        p->nops++;
    }
    for (size_t i = 0; i < p->nops; i++)
        if (p->ops[i].kind == OP_APPEND)
            p->ops[i].ev.payload = p->arena + p->ops[i].payload_off;
}

/* Largest payload every configuration accepts (4 KiB chunks in 4 KiB ring segments). */
#define PAYLOAD_ALWAYS_OK 3868 /* 32 bytes less since ring blocks carry an END marker (spec 7.5) */

static void check_append(const plan *p, const tracelog_event *ev, tracelog_status st, outcome *o)
{
    switch (st) {
    case TRACELOG_OK:
        o->accepted[o->naccepted++] = *ev;
        return;
    case TRACELOG_E_INVAL:
        FUZZ_ASSERT(ev->payload_len > PAYLOAD_ALWAYS_OK, "append of a %u-byte payload: INVAL", ev->payload_len);
        return;
    case TRACELOG_E_LOG_FULL:
        FUZZ_ASSERT(p->wopt.log_policy == TRACELOG_POLICY_UNTIL_FULL, "LOG_FULL from a non-UNTIL_FULL log");
        o->log_full_returns++;
        return;
    default:
        FUZZ_ASSERT(0, "append returned %s", tracelog_status_name(st));
    }
}

static void define(outcome *o, const op *x, tracelog_status st)
{
    for (size_t i = 0; i < o->ntypes; i++)
        if (o->types[i].id == x->id) {
            int same = strcmp(o->types[i].name, x->name) == 0;
            FUZZ_ASSERT(st == (same ? TRACELOG_OK : TRACELOG_E_INVAL), "redefine: %s", tracelog_status_name(st));
            return;
        }
    FUZZ_ASSERT(st == TRACELOG_OK, "define_event: %s", tracelog_status_name(st));
    o->types[o->ntypes].id = x->id;
    memcpy(o->types[o->ntypes].name, x->name, sizeof x->name);
    o->ntypes++;
}

static void write_log(const plan *p, outcome *o, tracelog_log_status *final_st)
{
    memset(o, 0, sizeof *o);
    o->accepted = calloc(p->nops ? p->nops : 1, sizeof *o->accepted);
    FUZZ_CHECK_SYS(o->accepted != NULL);
    o->fd = memfd_create("fuzz_roundtrip", MFD_CLOEXEC);
    FUZZ_CHECK_SYS(o->fd >= 0);
    tracelog_writer *w = NULL;
    tracelog_error err;
    tracelog_status st = tracelog_writer_create(o->fd, &fixed_meta, &p->wopt, &w, &err);
    FUZZ_ASSERT(st == TRACELOG_OK, "create: %s (%s)", tracelog_status_name(st), err.message);
    for (size_t i = 0; i < p->nops; i++) {
        const op *x = &p->ops[i];
        switch (x->kind) {
        case OP_APPEND:
            check_append(p, &x->ev, tracelog_writer_append(w, &x->ev), o);
            break;
        case OP_FLUSH:
            st = tracelog_writer_flush(w);
            FUZZ_ASSERT(st == TRACELOG_OK || (st == TRACELOG_E_LOG_FULL && p->wopt.log_policy == TRACELOG_POLICY_UNTIL_FULL),
                        "flush: %s", tracelog_status_name(st));
            break;
        case OP_DEFINE:
            define(o, x, tracelog_writer_define_event(w, x->id, x->name));
            break;
        case OP_STATUS:
            FUZZ_ASSERT(tracelog_writer_set_status(w, &x->st) == TRACELOG_OK);
            break;
        }
    }
    st = tracelog_writer_flush(w);
    FUZZ_ASSERT(st == TRACELOG_OK || (st == TRACELOG_E_LOG_FULL && p->wopt.log_policy == TRACELOG_POLICY_UNTIL_FULL),
                "final flush: %s", tracelog_status_name(st));
    FUZZ_ASSERT(tracelog_writer_get_status(w, final_st) == TRACELOG_OK);
    st = tracelog_writer_close(w, &err);
    FUZZ_ASSERT(st == TRACELOG_OK, "close: %s (%s)", tracelog_status_name(st), err.message);
}

static void check_read(const plan *p, const outcome *o, const tracelog_log_status *wst)
{
    tracelog_reader_options opt = fuzz_reader_options(0);
    tracelog_reader *r = NULL;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open(o->fd, &opt, &r, &err);
    FUZZ_ASSERT(st == TRACELOG_OK, "open: %s (%s)", tracelog_status_name(st), err.message);

    tracelog_event *got = calloc(o->naccepted + 1, sizeof *got);
    uint8_t **copies = calloc(o->naccepted + 1, sizeof *copies);
    FUZZ_CHECK_SYS(got && copies);
    size_t n = 0;
    tracelog_event ev;
    while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
        FUZZ_ASSERT(n < o->naccepted, "more events read than appended (%zu)", o->naccepted);
        got[n] = ev;
        copies[n] = malloc(ev.payload_len + 1); /* payloads are borrowed until the next call */
        FUZZ_CHECK_SYS(copies[n] != NULL);
        if (ev.payload_len)
            memcpy(copies[n], ev.payload, ev.payload_len);
        got[n].payload = copies[n];
        n++;
    }
    FUZZ_ASSERT(st == TRACELOG_END, "next: %s", tracelog_status_name(st));

    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    tracelog_log_status rst;
    tracelog_reader_get_status(r, &rst);
    /* The one problem a closed log may have: a ring's durable region had no room left for
       some thread definitions (format-spec 7.3), which the status counts. It is a known
       loss, so such a log is not clean (8.6); every other closed log is. */
    FUZZ_ASSERT(info.problems == (rst.threads_dropped ? 1u : 0u), "%llu problems in a closed log",
                (unsigned long long)info.problems);
    FUZZ_ASSERT(info.clean == (info.problems == 0), "closed log: clean %d with %llu problems", info.clean,
                (unsigned long long)info.problems);
    FUZZ_ASSERT(rst.types_dropped == 0, "event-type names dropped");

    size_t first = 0; /* index in accepted of got[0] */
    switch (p->wopt.log_policy) {
    case TRACELOG_POLICY_APPEND:
        FUZZ_ASSERT(n == o->naccepted, "APPEND: %zu events read, %zu appended", n, o->naccepted);
        break;
    case TRACELOG_POLICY_UNTIL_FULL:
        FUZZ_ASSERT(rst.events_written == n, "UNTIL_FULL: events_written %llu, %zu read",
                    (unsigned long long)rst.events_written, n);
        FUZZ_ASSERT(rst.log_overruns == o->naccepted - n + o->log_full_returns,
                    "UNTIL_FULL: log_overruns %llu, expected %llu", (unsigned long long)rst.log_overruns,
                    (unsigned long long)(o->naccepted - n + o->log_full_returns));
        FUZZ_ASSERT(info.stored_bytes + 32 * info.chunks <= p->wopt.log_max_size,
                    "UNTIL_FULL: chunks take more than log_max_size");
        FUZZ_ASSERT(rst.log_full == (o->log_full_returns || n < o->naccepted));
        break;
    default: /* LOOP */
        FUZZ_ASSERT(rst.events_written == o->naccepted, "LOOP: events_written %llu, %zu appended",
                    (unsigned long long)rst.events_written, o->naccepted);
        FUZZ_ASSERT(rst.events_written - rst.log_overruns == n, "LOOP: %zu read, written %llu - overruns %llu",
                    n, (unsigned long long)rst.events_written, (unsigned long long)rst.log_overruns);
        first = o->naccepted - n;
        break;
    }
    if (p->wopt.log_policy != TRACELOG_POLICY_LOOP) {
        FUZZ_ASSERT(memcmp(&rst, wst, sizeof rst) == 0, "status read differs from the writer's");
    }
    for (size_t i = 0; i < n; i++)
        FUZZ_ASSERT(fuzz_event_equal(&got[i], &o->accepted[first + i]), "event %zu (of %zu read) differs", i, n);
    for (size_t i = 0; i < n && !rst.threads_dropped; i++)
        FUZZ_ASSERT(got[i].kernel_tid == o->accepted[first + i].kernel_tid, "event %zu: kernel tid %u, want %u", i,
                    got[i].kernel_tid, o->accepted[first + i].kernel_tid);

    /* Attributes and names. */
    const tracelog_metadata *m = tracelog_reader_metadata(r);
    FUZZ_ASSERT(strcmp(m->trace_name, fixed_meta.trace_name) == 0);
    FUZZ_ASSERT(strcmp(m->hostname, fixed_meta.hostname) == 0);
    FUZZ_ASSERT(m->creation_time_ns == fixed_meta.creation_time_ns);
    FUZZ_ASSERT(m->log_full_policy == p->wopt.log_policy);
    FUZZ_ASSERT(tracelog_reader_event_type_count(r) == o->ntypes, "%zu event types read, %zu defined",
                tracelog_reader_event_type_count(r), o->ntypes);
    for (size_t i = 0; i < o->ntypes; i++) {
        const char *name = tracelog_reader_event_name(r, o->types[i].id);
        FUZZ_ASSERT(name && strcmp(name, o->types[i].name) == 0, "event type %u", o->types[i].id);
    }

    /* seek_time on a log whose timestamps never go back. */
    int monotonic = 1;
    for (size_t i = 1; i < n; i++)
        if (got[i].timestamp_ns < got[i - 1].timestamp_ns)
            monotonic = 0;
    if (monotonic && n) {
        uint64_t lo = got[0].timestamp_ns, hi = got[n - 1].timestamp_ns;
        uint64_t target = lo + p->seek_seed % (hi - lo == UINT64_MAX ? UINT64_MAX : hi - lo + 1);
        if (p->seek_seed % 7 == 0)
            target = hi + 1 > hi ? hi + 1 : hi; /* past the last event */
        size_t k = 0;
        while (k < n && got[k].timestamp_ns < target)
            k++;
        FUZZ_ASSERT(tracelog_reader_seek_time(r, target) == TRACELOG_OK);
        for (; k < n; k++) {
            FUZZ_ASSERT(tracelog_reader_next(r, &ev) == TRACELOG_OK, "seek_time: events missing");
            FUZZ_ASSERT(fuzz_event_equal(&ev, &got[k]), "seek_time: event %zu differs", k);
        }
        FUZZ_ASSERT(tracelog_reader_next(r, &ev) == TRACELOG_END, "seek_time: extra events");
    }

    for (size_t i = 0; i < n; i++)
        free(copies[i]);
    free(copies);
    free(got);
    tracelog_reader_close(r);
}

/* Everything a reader sees in fd: events, status, type table. */
static void digest_log(int fd, fuzz_hash *events, tracelog_log_status *st, fuzz_hash *types)
{
    tracelog_reader_options opt = fuzz_reader_options(0);
    tracelog_reader *r = NULL;
    tracelog_error err;
    tracelog_status s = tracelog_reader_open(fd, &opt, &r, &err);
    FUZZ_ASSERT(s == TRACELOG_OK, "open: %s (%s)", tracelog_status_name(s), err.message);
    fuzz_hash_init(events);
    FUZZ_ASSERT(fuzz_drain(r, events) == TRACELOG_END);
    tracelog_reader_get_status(r, st);
    fuzz_hash_init(types);
    for (size_t i = 0; i < tracelog_reader_event_type_count(r); i++) {
        uint32_t id;
        const char *name;
        FUZZ_ASSERT(tracelog_reader_event_type(r, i, &id, &name) == TRACELOG_OK);
        fuzz_hash_u64(types, id);
        fuzz_hash_bytes(types, name, strlen(name) + 1);
    }
    tracelog_reader_close(r);
}

/* Blanks what the salt changes: the salt, the header CRC, and each block's two CRCs. */
static void mask_salt(uint8_t *a, uint8_t *b, size_t len)
{
    if (len < 64)
        return;
    memset(a + 24, 0, 8);
    memset(b + 24, 0, 8);
    memset(a + 60, 0, 4);
    memset(b + 60, 0, 4);
    for (size_t off = 64; off + 32 <= len; off += 8)
        if (memcmp(a + off, "\x8b" "BLK", 4) == 0 && memcmp(b + off, "\x8b" "BLK", 4) == 0) {
            memset(a + off + 20, 0, 4);
            memset(b + off + 20, 0, 4);
            memset(a + off + 28, 0, 4);
            memset(b + off + 28, 0, 4);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int initialised;
    if (!initialised) {
        init_meta();
        initialised = 1;
    }
    plan p;
    make_plan(data, size, &p);
    FUZZ_DEEP(); /* every input is a writer program */
    outcome one, two;
    tracelog_log_status st1, st2;
    write_log(&p, &one, &st1);
    check_read(&p, &one, &st1);
    write_log(&p, &two, &st2);
    FUZZ_ASSERT(two.naccepted == one.naccepted && two.log_full_returns == one.log_full_returns);

    /* The same events written twice read the same... */
    fuzz_hash ev1, ev2, ty1, ty2;
    tracelog_log_status rs1, rs2;
    digest_log(one.fd, &ev1, &rs1, &ty1);
    digest_log(two.fd, &ev2, &rs2, &ty2);
    FUZZ_ASSERT(ev1.count == ev2.count && ev1.h == ev2.h, "same events written twice: different events read");
    FUZZ_ASSERT(memcmp(&rs1, &rs2, sizeof rs1) == 0, "same events written twice: different status");
    FUZZ_ASSERT(ty1.h == ty2.h, "same events written twice: different event types");

    /* ...and are the same bytes but for the salt and the checksums. A ring
       also keeps fragments of blocks from its previous laps, whose headers
       may have lost their sync word: there, checksum-sized differences are
       tolerated at the offsets (4..7 mod 8) where block checksums lie. */
    size_t len1, len2;
    uint8_t *f1 = fuzz_slurp(one.fd, &len1), *f2 = fuzz_slurp(two.fd, &len2);
    FUZZ_ASSERT(len1 == len2, "same events written twice: %zu and %zu bytes", len1, len2);
    mask_salt(f1, f2, len1);
    int ring = p.wopt.log_policy == TRACELOG_POLICY_LOOP;
    size_t diff = 0;
    while (diff < len1 && (f1[diff] == f2[diff] || (ring && diff % 8 >= 4)))
        diff++;
    FUZZ_ASSERT(diff == len1, "same events written twice: bytes differ from offset %zu of %zu (%s log)", diff,
                len1, tracelog_policy_name(p.wopt.log_policy));
    free(f1);
    free(f2);

    close(one.fd);
    close(two.fd);
    free(one.accepted);
    free(two.accepted);
    free(p.ops);
    free(p.arena);
    return 0;
}
