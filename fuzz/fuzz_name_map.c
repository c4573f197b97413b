/*
 * fuzz_name_map: any bytes as a traced process's event-name map
 * (libtracelog/posix/names.c, layout in names_map.h), read and written by
 * its controller (ptlog record/attach), which may run as root: the traced
 * process can write every byte of the map at any time
 * (docs/design/cross-process.md, section 5).
 *
 * The map is a mapping of the real size (the object's size is fixed:
 * tl_shmobj_open refuses another before any byte is read), zero-filled,
 * into which the input's front writes patches, so that an input of a few
 * hundred bytes reaches any field, the thread table 1.1 MiB in included:
 *
 *     patch = u32 offset (little-endian; taken modulo the map's size),
 *             u16 length, then that many bytes (cut at the map's end)
 *
 * A patch with offset 0xffffffff writes nothing: it ends a step. The
 * controller's reads run after each step (at most 4), so the patches of the
 * next one are the traced process rewriting the map between two of its
 * controller's calls, as it may at any time. Choices (the caps, the names
 * the controller opens, the threads it looks up) come from the input's end
 * (fuzz_fdp).
 *
 * Why no thread scribbling the map during a call: the interleaving would be
 * the scheduler's, so a finding would not replay and libFuzzer's coverage
 * would be noise. Every function below reads each word it relies on once
 * (a size, an offset, a count, a slot's tid before and after its copy), so
 * a rewrite within a call is a rewrite between two loads, which the steps
 * reach at call granularity and the patches' byte-level choice reaches for
 * every value.
 *
 * The lock word: a value that names a live process (ours, pid 1) makes the
 * controller wait REMOTE_LOCK_WAIT_NS (100 ms) and say EAGAIN, bounded but
 * slow for fuzzing; such a value is replaced by 0 (tests/test_xproc_hostile.sh
 * covers the wait: attach on a program scribbling its map's lock). A value
 * naming no live process is kept: taken over.
 *
 * Properties, for each step:
 *  - tl_names_check says 0 exactly for a map with this build's magic,
 *    version and the identity it is checked against, ESTALE or ENOTSUP
 *    otherwise;
 *  - tl_names_count is at most the map's capacity;
 *  - tl_names_name_of (every user id below the count and past it, the
 *    system ids, the id limit) returns 0 or EINVAL: 0 exactly for the ids
 *    the map names, with a NUL-terminated name within the cap (at most
 *    TRACE_EVENT_NAME_MAX bytes) and nothing written past the cap;
 *  - tl_names_schema_of returns 0, ENOENT, EAGAIN, EINVAL or ENOMEM (ENOENT
 *    past the count), a text only with 0, of at most
 *    TRACELOG_SCHEMA_TEXT_MAX bytes, which parses (its canonical text
 *    parsing again) or is refused with TRACELOG_E_INVAL / LIMIT at a byte
 *    position inside it;
 *  - tl_names_thread_name / tl_tname_get, for the (pid, kernel tid) of
 *    every slot and a few chosen, return 0, ENOENT or EILSEQ, with a
 *    NUL-terminated name within the cap ("" unless 0; not empty with 0, at
 *    most 15 bytes), nothing written past the cap;
 *  - the controller's writes: tl_names_open, tl_names_open_typed and
 *    tl_names_filter_by_name return only their documented codes; a name
 *    opened has an id the map then names (or the unnamed event's, the map
 *    being full), with the schema it was opened with (or none, the arena
 *    being full); a filter entry counted is one more entry, up to 64.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>

#include "fuzz_helpers.h"
#include "posix/names_map.h"
#include "tracelog/schema.h"

#define STEPS_MAX 4
#define STEP_END 0xffffffffu
#define SCHEMAS_PARSED 16 /* per step: each may be 64 KiB of text */
#define USER_FIRST (POSIX_TRACE_UNNAMED_USEREVENT + 1)
#define GUARD 0xa5

static tl_names *map_new(void)
{
    static tl_names *m;
    if (!m) {
        void *p = mmap(NULL, sizeof *m, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        FUZZ_CHECK_SYS(p != MAP_FAILED);
        m = p;
    }
    memset((void *)m, 0, sizeof *m);
    return m;
}

/* Applies the patches of one step; 0 once the input's front is used up. */
static int apply_step(fuzz_fdp *f, tl_names *m)
{
    unsigned char *bytes = (unsigned char *)m;
    int any = 0;
    while (fuzz_fdp_remaining(f) >= 6) {
        const uint8_t *h, *p;
        fuzz_fdp_bytes(f, 6, &h);
        uint32_t at = (uint32_t)h[0] | (uint32_t)h[1] << 8 | (uint32_t)h[2] << 16 | (uint32_t)h[3] << 24;
        size_t len = (size_t)h[4] | (size_t)h[5] << 8;
        any = 1;
        if (at == STEP_END)
            return 1;
        at %= (uint32_t)sizeof *m;
        if (len > sizeof *m - at)
            len = sizeof *m - at;
        len = fuzz_fdp_bytes(f, len, &p);
        memcpy(bytes + at, p, len);
    }
    return any;
}

/* A lock word naming a live process would cost a 100 ms wait per call: see the top. */
static void tame_lock(tl_names *m)
{
    uint64_t held = atomic_load(&m->lock);
    pid_t pid = (pid_t)(uint32_t)(held >> 32);
    if (pid > 0 && (kill(pid, 0) == 0 || errno == EPERM)) /* EPERM: alive, another user's (pid 1 when not root) */
        atomic_store(&m->lock, 0);
}

static void check_header(tl_names *m)
{
    uint32_t euid = m->euid, pid = m->pid;
    uint64_t start = m->start, nonce = m->nonce;
    int valid = atomic_load(&m->magic) == TL_NAMES_MAGIC && m->version == TL_NAMES_VERSION;
    int e = tl_names_check(m, euid, pid, start, nonce);
    FUZZ_ASSERT(e == (valid ? 0 : ENOTSUP), "check %d", e);
    if (valid)
        FUZZ_DEEP(); /* a map the controller reads on */
    e = tl_names_check(m, euid, pid + 1, start, nonce);
    FUZZ_ASSERT(e == (atomic_load(&m->magic) == TL_NAMES_MAGIC ? ESTALE : ENOTSUP), "another pid: %d", e);
    e = tl_names_check(m, euid, pid, start, nonce + 1);
    FUZZ_ASSERT(e == ENOTSUP, "another nonce: %d", e);
    (void)tl_names_moved(m);
}

/* out[0..cap) written by a call, guard bytes after it: a NUL within the cap, the guard intact. */
static size_t text_within(const char *buf, size_t cap, size_t size)
{
    const char *nul = memchr(buf, 0, cap);
    FUZZ_ASSERT(nul != NULL, "no NUL within %zu bytes", cap);
    for (size_t i = cap; i < size; i++)
        FUZZ_ASSERT((unsigned char)buf[i] == GUARD, "byte %zu written past the cap %zu", i, cap);
    return (size_t)(nul - buf);
}

static const size_t name_caps[] = {1, 2, 9, TL_NAMES_NAME_BYTES};

static void check_name(const tl_names *m, trace_event_id_t id, size_t cap, uint32_t count)
{
    char buf[TL_NAMES_NAME_BYTES + 8];
    memset(buf, GUARD, sizeof buf);
    int e = tl_names_name_of(m, id, buf, cap);
    int named = id >= USER_FIRST ? id - USER_FIRST < count
                                 : id == POSIX_TRACE_UNNAMED_USEREVENT || tl_posix_system_name(id) != NULL;
    FUZZ_ASSERT(e == (named ? 0 : EINVAL), "name of %u: %d (count %u)", (unsigned)id, e, count);
    if (e)
        return;
    size_t len = text_within(buf, cap, sizeof buf);
    FUZZ_ASSERT(len <= TRACE_EVENT_NAME_MAX);
    if (id >= USER_FIRST) /* the map's bytes, cut */
        FUZZ_ASSERT(memcmp(buf, m->names[id - USER_FIRST], len) == 0);
}

static void check_names(fuzz_fdp *f, const tl_names *m)
{
    uint32_t count = tl_names_count(m);
    FUZZ_ASSERT(count <= TL_NAMES_USER, "count %u", count);
    uint32_t raw = __atomic_load_n(&m->count, __ATOMIC_RELAXED);
    FUZZ_ASSERT(count == (raw < TL_NAMES_USER ? raw : TL_NAMES_USER));
    size_t cap_pick = fuzz_fdp_range(f, 0, 3);
    for (trace_event_id_t id = 0; id < USER_FIRST + count + 2 && id < TL_ID_LIMIT + 2; id++)
        check_name(m, id, name_caps[(id + cap_pick) % 4], count);
    check_name(m, TL_ID_LIMIT - 1, TL_NAMES_NAME_BYTES, count);
    check_name(m, TL_ID_LIMIT, TL_NAMES_NAME_BYTES, count);
    check_name(m, (trace_event_id_t)fuzz_fdp_u32(f), name_caps[cap_pick], count);
}

/* A schema text from another process: it parses, or is refused cleanly at a position inside it. */
static void check_schema_text(const char *text)
{
    size_t len = strlen(text);
    tracelog_schema *s = NULL;
    tracelog_error err;
    memset(&err, 0, sizeof err);
    tracelog_status st = tracelog_schema_parse(text, &s, &err);
    if (st != TRACELOG_OK) {
        FUZZ_ASSERT(st == TRACELOG_E_INVAL || st == TRACELOG_E_LIMIT || st == TRACELOG_E_NOMEM, "status %d", st);
        FUZZ_ASSERT(s == NULL);
        FUZZ_ASSERT(st == TRACELOG_E_NOMEM || err.offset <= len, "error at %llu of %zu",
                    (unsigned long long)err.offset, len);
        return;
    }
    tracelog_schema *again = NULL;
    FUZZ_ASSERT(tracelog_schema_parse(tracelog_schema_text(s), &again, NULL) == TRACELOG_OK,
                "canonical text refused: %s", tracelog_schema_text(s));
    FUZZ_ASSERT(strcmp(tracelog_schema_text(again), tracelog_schema_text(s)) == 0);
    tracelog_schema_free(again);
    tracelog_schema_free(s);
}

static void check_schemas(const tl_names *m)
{
    uint32_t count = tl_names_count(m);
    unsigned parsed = 0;
    for (trace_event_id_t id = 0; id < USER_FIRST + count + 2; id++) {
        char *text = (char *)"unset";
        int e = tl_names_schema_of(m, id, &text);
        FUZZ_ASSERT(e == 0 || e == ENOENT || e == EAGAIN || e == EINVAL || e == ENOMEM, "schema of %u: %d",
                    (unsigned)id, e);
        FUZZ_ASSERT((e == 0) == (text != NULL), "schema of %u: %d with text %p", (unsigned)id, e, (void *)text);
        if (id < USER_FIRST || id - USER_FIRST >= count)
            FUZZ_ASSERT(e == ENOENT, "schema of %u past the names: %d", (unsigned)id, e);
        if (e)
            continue;
        FUZZ_ASSERT(strnlen(text, TRACELOG_SCHEMA_TEXT_MAX + 1) <= TRACELOG_SCHEMA_TEXT_MAX);
        if (parsed++ < SCHEMAS_PARSED)
            check_schema_text(text);
        free(text);
    }
}

static void check_thread(const tl_names *m, uint32_t pid, uint32_t ktid, size_t cap)
{
    char buf[TL_TNAME_BYTES + 8];
    memset(buf, GUARD, sizeof buf);
    int e = tl_names_thread_name(m, pid, ktid, buf, cap);
    FUZZ_ASSERT(e == 0 || e == ENOENT || e == EILSEQ, "thread %u/%u: %d", pid, ktid, e);
    if (!cap) {
        FUZZ_ASSERT(e == ENOENT && (unsigned char)buf[0] == GUARD);
        return;
    }
    size_t len = text_within(buf, cap, sizeof buf);
    FUZZ_ASSERT(e == 0 || len == 0, "thread %u/%u: %d with %zu bytes", pid, ktid, e, len);
    FUZZ_ASSERT(len < TL_TNAME_BYTES);
    if (e == 0 && cap >= TL_TNAME_BYTES) /* never cut: a name found is not empty */
        FUZZ_ASSERT(len > 0, "thread %u/%u: an empty name", pid, ktid);
    if (ktid == 0 || ktid & TL_TNAME_BUSY)
        FUZZ_ASSERT(e == ENOENT);
    char again[TL_TNAME_BYTES + 8];
    memset(again, GUARD, sizeof again);
    FUZZ_ASSERT(tl_tname_get(&m->threads, pid, ktid, again, cap) == e); /* no process rewrites it meanwhile */
    FUZZ_ASSERT(memcmp(again, buf, sizeof buf) == 0);
}

static void check_threads(fuzz_fdp *f, const tl_names *m)
{
    size_t cap = fuzz_fdp_range(f, 0, TL_TNAME_BYTES + 1);
    for (uint32_t i = 0; i < TL_TNAME_SLOTS; i++) {
        const tl_tname_slot *s = &m->threads.slot[i];
        uint32_t ktid = atomic_load(&s->ktid), pid = s->pid;
        if (!ktid)
            continue;
        check_thread(m, pid, ktid, cap ? cap : TL_TNAME_BYTES);
        check_thread(m, pid, ktid & ~TL_TNAME_BUSY, cap);
        check_thread(m, pid + 1, ktid, TL_TNAME_BYTES);
    }
    for (int k = fuzz_fdp_range(f, 0, 3); k > 0; k--)
        check_thread(m, fuzz_fdp_u32(f), fuzz_fdp_u32(f), fuzz_fdp_range(f, 0, TL_TNAME_BYTES + 1));
}

/* A name for the controller to open: one of the map's (cut at its NUL, or at none), or a new one. */
static void pick_name(fuzz_fdp *f, const tl_names *m, char name[TL_NAMES_NAME_BYTES + 1])
{
    uint32_t count = tl_names_count(m), pick = (uint32_t)fuzz_fdp_range(f, 0, 4);
    memset(name, 0, TL_NAMES_NAME_BYTES + 1);
    if (pick == 0 && count) {
        memcpy(name, m->names[fuzz_fdp_range(f, 0, count - 1)], TL_NAMES_NAME_BYTES); /* may keep no NUL: too long */
        return;
    }
    if (pick == 1) {
        memset(name, 'x', TL_NAMES_NAME_BYTES); /* one byte over the limit */
        return;
    }
    snprintf(name, TL_NAMES_NAME_BYTES, "fz.%u", (unsigned)fuzz_fdp_range(f, 0, 7));
}

static const char *const schemas[] = {"u32 len; u16 port", "char[16] who; bytes[] data", "f64 x"};

/* Opened name `name` has id `id` in m: named so, with `schema` (or none: the arena is full). */
static void check_opened(const tl_names *m, const char *name, trace_event_id_t id, const char *schema)
{
    if (id == POSIX_TRACE_UNNAMED_USEREVENT) { /* full */
        FUZZ_ASSERT(tl_names_count(m) == TL_NAMES_USER);
        return;
    }
    FUZZ_ASSERT(id >= USER_FIRST && id - USER_FIRST < tl_names_count(m), "id %u", (unsigned)id);
    char got[TL_NAMES_NAME_BYTES];
    FUZZ_ASSERT(tl_names_name_of(m, id, got, sizeof got) == 0 && strcmp(got, name) == 0, "%u is %s, not %s",
                (unsigned)id, got, name);
    if (!schema)
        return;
    char *text = NULL;
    int e = tl_names_schema_of(m, id, &text);
    FUZZ_ASSERT(e == ENOENT || (e == 0 && strcmp(text, schema) == 0), "schema of %u: %d", (unsigned)id, e);
    free(text);
}

static void controller_writes(fuzz_fdp *f, tl_names *m)
{
    char name[TL_NAMES_NAME_BYTES + 1];
    trace_event_id_t id = 0;
    pick_name(f, m, name);
    int e = tl_names_open(m, name, &id);
    FUZZ_ASSERT(e == 0 || e == EAGAIN || e == ENAMETOOLONG, "open: %d", e);
    FUZZ_ASSERT((e == ENAMETOOLONG) == (strlen(name) > TRACE_EVENT_NAME_MAX));
    if (!e)
        check_opened(m, name, id, NULL);

    pick_name(f, m, name);
    tracelog_schema *s = NULL;
    FUZZ_CHECK_SYS(tracelog_schema_parse(schemas[fuzz_fdp_range(f, 0, 2)], &s, NULL) == TRACELOG_OK);
    e = tl_names_open_typed(m, name, tracelog_schema_text(s), &id);
    FUZZ_ASSERT(e == 0 || e == EEXIST || e == EAGAIN || e == ENAMETOOLONG, "open typed: %d", e);
    if (!e)
        check_opened(m, name, id, tracelog_schema_text(s));
    tracelog_schema_free(s);

    pick_name(f, m, name);
    uint32_t had = __atomic_load_n(&m->filter_count, __ATOMIC_RELAXED);
    e = tl_names_filter_by_name(m, fuzz_fdp_u64(f), name, fuzz_fdp_bool(f), &id);
    FUZZ_ASSERT(e == 0 || e == EINPROGRESS || e == ENOSPC || e == EAGAIN || e == ENAMETOOLONG, "filter: %d", e);
    if (!e)
        check_opened(m, name, id, NULL);
    if (e == EINPROGRESS)
        FUZZ_ASSERT(had < TL_NAME_FILTERS_MAX && m->filter_count == had + 1, "filters %u -> %u", had,
                    m->filter_count);
    if (e == ENOSPC)
        FUZZ_ASSERT(had >= TL_NAME_FILTERS_MAX);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_fdp f;
    fuzz_fdp_init(&f, data, size);
    tl_names *m = map_new();
    for (int step = 0; step < STEPS_MAX; step++) {
        if (!apply_step(&f, m) && step > 0)
            break; /* the first step runs even on the zero map */
        tame_lock(m);
        check_header(m);
        check_names(&f, m);
        check_schemas(m);
        check_threads(&f, m);
        controller_writes(&f, m);
    }
    return 0;
}
