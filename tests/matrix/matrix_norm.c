/*
 * matrix_norm: the normalisation of the composition matrix
 * (tests/test_composition_matrix.sh). Reads a log as `ptlog convert --to
 * jsonl` writes it and writes one file per aspect, PREFIX.ASPECT, in a form
 * that two paths of the matrix must agree on byte for byte:
 *
 *   names    the user event types of the type table, then every user event
 *            as "Rr Ss NAME": r the rank of its thread, s its place among that
 *            thread's events
 *   ids      the same with the ids: "type NAME ID", "Rr Ss NAME ID"
 *   fields   the user types' schemas, then every user event's payload
 *            (data in hex) and decoded fields (JSON), truncation and size flags
 *   threads  "Rr NAME" for every thread the log names (no key of format 1.1
 *            or JSON Lines names threads yet: see below)
 *   ktids    how many distinct kernel tids the user events have, whether each
 *            thread has exactly one, whether the first thread's is its pid
 *   end      tracelog_process_end's how and code, and whether it comes after
 *            every user event; "none"
 *   sys      what is kept of the stream's own events: the filter in force
 *            from each posix_trace_start (by names): its event_filter, as
 *            the posix_trace_filter events between it and the first user
 *            event after it changed it (a controller's filter on a name the
 *            program opens after the start takes effect, and is recorded,
 *            when it opens it: tracelog_trace_filter_name), and the count of loss markers (OVERFLOW,
 *            RESUME, ERROR, a STOP with auto = AUTOMATIC), events of
 *            posix_trace_unnamed_userevent, and events of ids the log does not
 *            name
 *   ident    the log's process (format-spec 5.2): the basename of its program
 *            and whether its pid is the pid of the user events
 *   summary  counts, for the test's output
 *
 * Normalised away: timestamps, pids and pthread_t values, kernel tids (a
 * thread is the triple pid, pthread_t, kernel tid, known by its rank of
 * first appearance among the user events: the program makes its threads
 * appear in the same order on every path), addresses, the attributes, and
 * every system event but the ones above (START/STOP/FILTER and FLUSH markers
 * belong to the stream, not to the program, and differ by path). User events
 * are those whose name starts neither with posix_trace_ nor tracelog_.
 *
 * Thread names: those the program gave (mx-*; a thread it did not name has
 * its process's command name, which differs by path: a spawned program
 * run as /proc/self/exe is "exe"), from the key "tname" or any key of an
 * event whose name contains "thread" and whose value is text, or a "threads" array of the header or status line whose
 * entries have a "name" (with pid, tid, ktid). Exit 3 when the log holds
 * the program's thread name ("mx-named") but none of these found it, and
 * when an event has a key this file does not know: a new feature of the
 * JSON Lines schema gets its column in the matrix (issue 26).
 *
 *   matrix_norm IN.jsonl PREFIX
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMED_THREAD "mx-named"

typedef struct strv {
    char **v;
    size_t n, cap;
} strv;

static void push(strv *s, char *line)
{
    if (!line) {
        perror("matrix_norm");
        exit(5);
    }
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (!s->v) {
            perror("matrix_norm");
            exit(5);
        }
    }
    s->v[s->n++] = line;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
    va_list ap;
    char *s = NULL;
    va_start(ap, f);
    int n = vasprintf(&s, f, ap);
    va_end(ap);
    return n < 0 ? NULL : s;
}

/* push, unless s holds the same text already (a thread's name comes with each of its events). */
static void push_once(strv *s, char *line)
{
    for (size_t i = 0; line && i < s->n; i++)
        if (strcmp(s->v[i], line) == 0) {
            free(line);
            return;
        }
    push(s, line);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void write_sorted(const char *prefix, const char *aspect, strv *s)
{
    char *path = fmt("%s.%s", prefix, aspect);
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        exit(4);
    }
    if (s->n)
        qsort(s->v, s->n, sizeof *s->v, cmp_str);
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%s\n", s->v[i]);
    if (fclose(f) != 0) {
        perror(path);
        exit(4);
    }
    free(path);
}

/* An integer key as text (integers, or the "0x..." strings of values beyond 2^63 - 1). */
static char *int_text(json_t *v)
{
    if (json_is_integer(v))
        return fmt("%" JSON_INTEGER_FORMAT, json_integer_value(v));
    if (json_is_string(v))
        return fmt("%s", json_string_value(v));
    return fmt("-");
}

/* ---- threads: (pid, pthread_t, kernel tid), ranked by first appearance ---- */

typedef struct thread {
    char *key;     /* "pid/tid/ktid" */
    char *pidtext; /* "pid" */
    char *tidkey;  /* "pid/tid" */
    long long ktid;
    unsigned events;
} thread;

static thread threads[4096];
static unsigned nthreads;

static unsigned rank_of(const char *pid, const char *tid, long long ktid, int add)
{
    char *key = fmt("%s/%s/%lld", pid, tid, ktid);
    for (unsigned i = 0; i < nthreads; i++)
        if (strcmp(threads[i].key, key) == 0) {
            free(key);
            return i;
        }
    if (!add || nthreads == sizeof threads / sizeof threads[0]) {
        free(key);
        return UINT32_MAX;
    }
    threads[nthreads] = (thread){key, fmt("%s", pid), fmt("%s/%s", pid, tid), ktid, 0};
    return nthreads++;
}

/* ---- the log ------------------------------------------------------------- */

static json_t *types;      /* the latest complete event-type table */
static json_t *attributes; /* the header's */
/* A thread name matrix_prog gave with pthread_setname_np (tests/matrix/matrix_prog.c: NAMED_THREAD). */
static int program_given(const char *name) { return strncmp(name, "mx-", 3) == 0; }

static strv names_out, ids_out, fields_out, threads_out, sys_out;
static strv starts;          /* each START's filter as ids, resolved at the end */
static int start_open;       /* no user event since the last START: a FILTER changes its filter */
static unsigned losses, unnamed, user_events, events_total;
static unsigned ends, end_after_user;
static char *end_text;
static int unknown_keys, saw_named_thread_text;
static strv unknown;

static const char *type_name(long long id)
{
    size_t i;
    json_t *t;
    json_array_foreach(types, i, t)
    {
        json_t *tid = json_object_get(t, "id");
        if (json_is_integer(tid) && json_integer_value(tid) == id) {
            json_t *n = json_object_get(t, "name");
            return json_is_string(n) ? json_string_value(n) : NULL;
        }
    }
    return NULL;
}

static int is_user(const char *name)
{
    return strncmp(name, "posix_trace_", 12) != 0 && strncmp(name, "tracelog_", 9) != 0;
}

static const char *const known_keys[] = {"name", "name_hex", "id",   "ts",     "pid",    "tid",
                                         "ktid", "address",  "truncation", "data", "fields", "fields_size"};

static void thread_names_of(json_t *list)
{
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        json_t *n = json_object_get(e, "name");
        if (!json_is_string(n) || !program_given(json_string_value(n)))
            continue;
        char *pid = int_text(json_object_get(e, "pid")), *tid = int_text(json_object_get(e, "tid"));
        json_t *k = json_object_get(e, "ktid");
        unsigned r = rank_of(pid, tid, json_is_integer(k) ? json_integer_value(k) : 0, 0);
        if (r != UINT32_MAX)
            push_once(&threads_out, fmt("R%02u %s", r, json_string_value(n)));
        else
            push_once(&threads_out, fmt("R?? %s (a thread without user events)", json_string_value(n)));
        free(pid);
        free(tid);
    }
}

static void event(json_t *ev)
{
    events_total++;
    json_t *jn = json_object_get(ev, "name"), *jid = json_object_get(ev, "id");
    long long id = json_is_integer(jid) ? json_integer_value(jid) : -1;
    if (!json_is_string(jn)) { /* an id the log does not name */
        push(&sys_out, fmt("unnamed event, id %lld", id));
        return;
    }
    char *name = fmt("%s", json_string_value(jn));
    const char *key;
    json_t *v;
    const char *tname = NULL;
    json_object_foreach(ev, key, v)
    {
        int known = 0;
        for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
            known |= strcmp(key, known_keys[i]) == 0;
        if (known)
            continue;
        if ((strcmp(key, "tname") == 0 || strstr(key, "thread")) && json_is_string(v)) {
            tname = json_string_value(v);
            continue;
        }
        int seen = 0;
        for (size_t i = 0; i < unknown.n; i++)
            seen |= strcmp(unknown.v[i], key) == 0;
        if (!seen)
            push(&unknown, fmt("%s", key));
        unknown_keys = 1;
    }
    json_t *fields = json_object_get(ev, "fields");
    if (!is_user(name)) {
        if (strcmp(name, "posix_trace_start") == 0) {
            json_t *set = json_object_get(fields, "event_filter");
            char *ids = json_dumps(set ? set : json_null(), JSON_COMPACT);
            push(&starts, ids);
            start_open = 1;
        } else if (strcmp(name, "posix_trace_filter") == 0 && start_open && starts.n) {
            json_t *set = json_object_get(fields, "new_event_filter");
            free(starts.v[starts.n - 1]);
            starts.v[starts.n - 1] = json_dumps(set ? set : json_null(), JSON_COMPACT);
        } else if (strcmp(name, "posix_trace_overflow") == 0 || strcmp(name, "posix_trace_resume") == 0 ||
                   strcmp(name, "posix_trace_error") == 0) {
            losses++;
        } else if (strcmp(name, "posix_trace_stop") == 0) {
            json_t *a = json_object_get(fields, "auto");
            if (!json_is_string(a) || strcmp(json_string_value(a), "MANUAL") != 0)
                losses++;
        } else if (strcmp(name, "posix_trace_unnamed_userevent") == 0) {
            unnamed++;
        } else if (strcmp(name, "tracelog_process_end") == 0) {
            ends++;
            char *f = json_dumps(fields ? fields : json_null(), JSON_COMPACT | JSON_PRESERVE_ORDER);
            free(end_text);
            end_text = f;
            end_after_user = user_events;
        }
        free(name);
        return;
    }
    char *pid = int_text(json_object_get(ev, "pid")), *tid = int_text(json_object_get(ev, "tid"));
    json_t *k = json_object_get(ev, "ktid");
    unsigned r = rank_of(pid, tid, json_is_integer(k) ? json_integer_value(k) : 0, 1);
    if (r == UINT32_MAX) {
        fprintf(stderr, "matrix_norm: too many threads\n");
        exit(5);
    }
    unsigned s = threads[r].events++;
    user_events++;
    start_open = 0;
    push(&names_out, fmt("R%02u S%05u %s", r, s, name));
    push(&ids_out, fmt("R%02u S%05u %s %lld", r, s, name, id));
    json_t *data = json_object_get(ev, "data"), *trunc = json_object_get(ev, "truncation"),
           *size = json_object_get(ev, "fields_size");
    char *ftext = fields ? json_dumps(fields, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) : NULL;
    push(&fields_out, fmt("R%02u S%05u %s data=%s%s%s trunc=%lld%s%s", r, s, name,
                          json_is_string(data) ? json_string_value(data) : "", ftext ? " fields=" : "",
                          ftext ? ftext : "", json_is_integer(trunc) ? json_integer_value(trunc) : 0,
                          json_is_string(size) ? " size=" : "", json_is_string(size) ? json_string_value(size) : ""));
    free(ftext);
    if (tname && program_given(tname))
        push_once(&threads_out, fmt("R%02u %s", r, tname));
    free(pid);
    free(tid);
    free(name);
}

static void type_table(void)
{
    size_t i;
    json_t *t;
    json_array_foreach(types, i, t)
    {
        json_t *n = json_object_get(t, "name"), *id = json_object_get(t, "id"), *s = json_object_get(t, "schema");
        if (!json_is_string(n) || !is_user(json_string_value(n)))
            continue;
        push(&names_out, fmt("type %s", json_string_value(n)));
        push(&ids_out, fmt("type %s %" JSON_INTEGER_FORMAT, json_string_value(n),
                           json_is_integer(id) ? json_integer_value(id) : -1));
        push(&fields_out, fmt("schema %s %s", json_string_value(n), json_is_string(s) ? json_string_value(s) : "(none)"));
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: matrix_norm IN.jsonl PREFIX\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (!in) {
        perror(argv[1]);
        return 3;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    unsigned lineno = 0;
    while ((n = getline(&line, &cap, in)) > 0) {
        lineno++;
        if (memmem(line, (size_t)n, NAMED_THREAD, strlen(NAMED_THREAD)))
            saw_named_thread_text = 1;
        json_error_t err;
        json_t *o = json_loadb(line, (size_t)n, 0, &err);
        if (!json_is_object(o)) {
            fprintf(stderr, "matrix_norm: %s:%u: not a JSON object: %s\n", argv[1], lineno, err.text);
            return 3;
        }
        json_t *st = json_object_get(o, "status");
        if (st || json_object_get(o, "format") || json_object_get(o, "attributes")) {
            json_t *t = json_object_get(o, "event_types");
            if (json_is_array(t)) {
                json_decref(types);
                types = json_incref(t);
            }
            json_t *a = json_object_get(o, "attributes");
            if (a) {
                json_decref(attributes);
                attributes = json_incref(a);
            }
            json_t *th = json_object_get(o, "threads");
            if (json_is_array(th))
                thread_names_of(th);
        } else {
            event(o);
        }
        json_decref(o);
    }
    free(line);
    fclose(in);
    if (!types)
        types = json_array();

    type_table();
    for (size_t i = 0; i < starts.n; i++) {
        json_error_t err;
        json_t *set = json_loads(starts.v[i], JSON_DECODE_ANY, &err);
        char *names = fmt("%s", "");
        size_t j;
        json_t *id;
        json_array_foreach(set, j, id)
        {
            const char *nm = json_is_integer(id) ? type_name(json_integer_value(id)) : NULL;
            char *next = fmt("%s%s%s", names, j ? "," : "", nm ? nm : "?");
            free(names);
            names = next;
        }
        push(&sys_out, fmt("start %02zu event_filter=[%s]", i, names));
        free(names);
        json_decref(set);
    }
    push(&sys_out, fmt("losses %u", losses));
    push(&sys_out, fmt("posix_trace_unnamed_userevent %u", unnamed));

    strv ktids = {0}, end = {0}, ident = {0}, summary = {0};
    /* kernel tids */
    long long distinct[4096];
    unsigned nd = 0;
    int one_each = 1;
    for (unsigned i = 0; i < nthreads; i++) {
        if (threads[i].ktid == 0)
            continue;
        int seen = 0;
        for (unsigned j = 0; j < nd; j++)
            seen |= distinct[j] == threads[i].ktid;
        if (!seen)
            distinct[nd++] = threads[i].ktid;
        for (unsigned j = 0; j < i; j++) /* a thread (pid, pthread_t) with two kernel tids: counted twice */
            if (strcmp(threads[j].tidkey, threads[i].tidkey) == 0)
                one_each = 0;
    }
    if (nd != nthreads)
        one_each = 0;
    push(&ktids, fmt("kernel tids: %u distinct; one per thread: %s; the first thread's is its pid: %s", nd,
                     one_each ? "yes" : "no",
                     nthreads && threads[0].ktid && atoll(threads[0].pidtext) == threads[0].ktid ? "yes" : "no"));
    /* the end */
    if (!ends)
        push(&end, fmt("none"));
    else
        push(&end, fmt("%s%s%s", end_text, end_after_user == user_events ? "" : " (not after every user event)",
                       ends > 1 ? " (more than one)" : ""));
    /* the log's process */
    json_t *proc = json_object_get(attributes, "process");
    json_t *ppid = json_object_get(proc, "pid"), *pprog = json_object_get(proc, "program");
    const char *program = json_is_string(pprog) ? json_string_value(pprog) : "";
    const char *base = strrchr(program, '/') ? strrchr(program, '/') + 1 : program;
    int pids = 0;
    const char *events_pid = NULL;
    for (unsigned i = 0; i < nthreads; i++) {
        int seen = 0;
        for (unsigned j = 0; j < i; j++)
            seen |= strcmp(threads[j].pidtext, threads[i].pidtext) == 0;
        if (!seen) {
            pids++;
            events_pid = threads[i].pidtext;
        }
    }
    char *ppid_text = int_text(ppid);
    push(&ident, fmt("program=%s pid=%s", base[0] ? base : "(none)",
                     !json_is_integer(ppid) || json_integer_value(ppid) == 0 ? "none"
                     : pids != 1                                              ? "(user events of several pids)"
                     : strcmp(ppid_text, events_pid) == 0                    ? "the user events'"
                                                                              : "another process's"));
    free(ppid_text);
    push(&summary, fmt("%u user events of %u threads in %u process(es), %u events in all", user_events, nthreads, pids,
                       events_total));

    write_sorted(argv[2], "names", &names_out);
    write_sorted(argv[2], "ids", &ids_out);
    write_sorted(argv[2], "fields", &fields_out);
    write_sorted(argv[2], "threads", &threads_out);
    write_sorted(argv[2], "ktids", &ktids);
    write_sorted(argv[2], "end", &end);
    write_sorted(argv[2], "sys", &sys_out);
    write_sorted(argv[2], "ident", &ident);
    write_sorted(argv[2], "summary", &summary);
    int rc = 0;
    if (unknown_keys) {
        for (size_t i = 0; i < unknown.n; i++)
            fprintf(stderr,
                    "matrix_norm: %s: events have a key \"%s\" this matrix does not know: a new feature gets its "
                    "column in tests/test_composition_matrix.sh (issue 26)\n",
                    argv[1], unknown.v[i]);
        rc = 3;
    }
    if (saw_named_thread_text && threads_out.n == 0) {
        fprintf(stderr,
                "matrix_norm: %s: the log holds the thread name \"%s\" where this normaliser does not look for "
                "thread names: teach tests/matrix/matrix_norm.c where it is\n",
                argv[1], NAMED_THREAD);
        rc = 3;
    }
    strv *all[] = {&names_out, &ids_out, &fields_out, &threads_out, &sys_out, &starts, &unknown, &ktids, &end, &ident, &summary};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        for (size_t j = 0; j < all[i]->n; j++)
            free(all[i]->v[j]);
        free(all[i]->v);
    }
    for (unsigned i = 0; i < nthreads; i++) {
        free(threads[i].key);
        free(threads[i].pidtext);
        free(threads[i].tidkey);
    }
    free(end_text);

    json_decref(types);
    json_decref(attributes);
    return rc;
}
