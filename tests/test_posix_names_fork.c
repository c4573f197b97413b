/*
 * The event-name map across fork() (issue 9, item 1; posix-trace.md §7.3):
 * the mapping is per process ("for the calling process"), so a child gets a
 * copy of its parent's map at fork (names opened before keep their ids) and
 * names it opens later are its own. Only processes traced into one inherited
 * stream (POSIX_TRACE_INHERITED, alive in the parent at fork) share id space:
 * their ids must be unique across all of them, and the parent's log names
 * the children's events.
 *
 * Children report what they saw through a pipe (child_report) and exit 0
 * when every check of their own passed.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

#define MAX_NAMES 256

typedef struct child_report {
    uint32_t n;
    trace_event_id_t ids[MAX_NAMES];
    trace_event_id_t probe; /* an id opened after the names (see children_dont_see_siblings) */
} child_report;

typedef struct child_job {
    const char *prefix; /* names are "<prefix> <k> <i>" */
    int k;
    uint32_t n;
    int record;        /* also record one event per name, its name as data */
    int wait_fd;       /* >= 0: wait for a byte before starting */
    const char *probe; /* a name to open after the own names, or NULL */
} child_job;

static void job_name(const child_job *j, uint32_t i, char *out, size_t cap)
{
    snprintf(out, cap, "%s %d %u", j->prefix, j->k, i);
}

/*
 * Opens the job's names (and its probe), checks in the child that every name
 * got an id of its own (never POSIX_TRACE_UNNAMED_USEREVENT) that opening it
 * again gives back, and writes the report. Exits 0, or 1 if a check failed.
 */
static void child_run(const child_job *j, int wfd)
{
    child_report r;
    memset(&r, 0, sizeof r);
    char name[TRACE_EVENT_NAME_MAX];
    if (j->wait_fd >= 0 && read(j->wait_fd, name, 1) != 1)
        _exit(3);
    int bad = 0;
    for (uint32_t i = 0; i < j->n; i++) {
        job_name(j, i, name, sizeof name);
        bad |= posix_trace_eventid_open(name, &r.ids[i]) != 0;
        bad |= r.ids[i] == POSIX_TRACE_UNNAMED_USEREVENT;
        if (j->record)
            posix_trace_event(r.ids[i], name, strlen(name) + 1);
    }
    for (uint32_t i = 0; i < j->n; i++) {
        trace_event_id_t again = 0;
        job_name(j, i, name, sizeof name);
        bad |= posix_trace_eventid_open(name, &again) != 0 || again != r.ids[i];
    }
    if (j->probe)
        bad |= posix_trace_eventid_open(j->probe, &r.probe) != 0;
    r.n = j->n;
    if (write(wfd, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(2);
    _exit(bad);
}

typedef struct child {
    pid_t pid;
    int rfd;
} child;

static child spawn(const child_job *j)
{
    int p[2];
    if (pipe(p))
        TL_DIE("pipe");
    pid_t pid = pt_fork(20);
    if (pid < 0)
        TL_DIE("fork");
    if (pid == 0) {
        close(p[0]);
        child_run(j, p[1]);
    }
    close(p[1]);
    return (child){pid, p[0]};
}

/* Reads the child's report and reaps it; 1 if it exited 0 with a whole report. */
static int reap(child c, child_report *r)
{
    ssize_t got = read(c.rfd, r, sizeof *r);
    close(c.rfd);
    int status = 0;
    waitpid(c.pid, &status, 0);
    int ok = got == (ssize_t)sizeof *r && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    CHECK_MSG(ok, "child %d: every name it opened has an id of its own (status 0x%x, report %zd bytes)",
              (int)c.pid, status, got);
    return ok;
}

static trace_event_id_t open_name(const char *name)
{
    trace_event_id_t id = 0;
    CHECK_ERR(posix_trace_eventid_open(name, &id), 0);
    return id;
}

/* ids[0..n) are first, first + 1, ... */
static int consecutive(const trace_event_id_t *ids, uint32_t n, trace_event_id_t first)
{
    for (uint32_t i = 0; i < n; i++)
        if (ids[i] != first + i)
            return 0;
    return 1;
}

/*
 * The reproduction: a parent forks 3 children in turn, each opens
 * 200 new names; the parent's next name gets the next id after its own
 * (before the fix it got id 633: its map held its children's 600 names).
 */
static void test_sequential_children(void)
{
    trace_event_id_t before = open_name("seq: parent before");
    for (int k = 0; k < 3; k++) {
        child_job j = {"seq: child", k, 200, 0, -1, NULL};
        child_report r;
        if (!reap(spawn(&j), &r))
            return;
        /* Each child starts where the parent's map stood at fork. */
        CHECK_MSG(consecutive(r.ids, r.n, before + 1), "child %d's ids are %u.. (got %u..%u)", k, before + 1,
                  r.ids[0], r.ids[r.n - 1]);
    }
    trace_event_id_t after = open_name("seq: parent after");
    CHECK_EQ(after, before + 1);
    CHECK_EQ(open_name("seq: parent before"), before);
    /* A stream of the parent knows none of the children's names. */
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t, after, name), 0);
    CHECK_STR_EQ(name, "seq: parent after");
    CHECK_ERR(posix_trace_eventid_get_name(t, after + 1, name), EINVAL);
    pt_shutdown(t);
}

/*
 * Many children in turn, with a stream of the parent running that they do
 * not inherit: 40 children x 40 names is beyond TRACE_USER_EVENT_MAX, which
 * a map shared by the whole process tree ran out of.
 */
static void test_many_sequential_children(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0); /* POSIX_TRACE_CLOSE_FOR_CHILD */
    CHECK_ERR(posix_trace_start(t), 0);
    trace_event_id_t before = open_name("many: parent before");
    int all = 1;
    for (int k = 0; k < 40 && all; k++) {
        child_job j = {"many: child", k, 40, 1, -1, NULL};
        child_report r;
        all &= reap(spawn(&j), &r) && consecutive(r.ids, r.n, before + 1);
    }
    CHECK_MSG(all, "each of 40 children got the ids after its parent's, for 40 names");
    CHECK_EQ(open_name("many: parent after"), before + 1);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    int foreign = 0;
    for (size_t i = 0; i < ev.n; i++)
        foreign |= ev.ev[i].info.posix_pid != getpid();
    CHECK_MSG(!foreign, "no child event in a stream the children did not inherit");
    pt_events_free(&ev);
    pt_shutdown(t);
}

/*
 * Children alive at the same time: 8 x 150 names, each child sees its
 * parent's names and its own, never a sibling's.
 */
static void test_concurrent_children(void)
{
    enum { N = 8, NAMES = 150 };
    trace_event_id_t before = open_name("conc: parent before");
    int go[2];
    if (pipe(go))
        TL_DIE("pipe");
    child c[N];
    for (int k = 0; k < N; k++) {
        /* Child k probes the first name of child k+1: it must be new to it. */
        static char probe[N][64];
        snprintf(probe[k], sizeof probe[k], "conc: child %d 0", (k + 1) % N);
        child_job j = {"conc: child", k, NAMES, 0, go[0], probe[k]};
        c[k] = spawn(&j);
    }
    char bytes[N] = {0};
    if (write(go[1], bytes, N) != N) /* all start at once */
        TL_DIE("write");
    int all = 1, probes = 1;
    for (int k = 0; k < N; k++) {
        child_report r;
        all &= reap(c[k], &r) && consecutive(r.ids, r.n, before + 1);
        probes &= r.probe == before + 1 + NAMES;
    }
    close(go[0]);
    close(go[1]);
    CHECK_MSG(all, "each concurrent child got the ids after its parent's");
    CHECK_MSG(probes, "a sibling's name is unknown to a child (it gets the child's next id)");
    CHECK_EQ(open_name("conc: parent after"), before + 1);
}

/* A thread opening names while the main thread forks: each child's copy is a consistent snapshot. */
static _Atomic int racing;

static void *open_names_thread(void *arg)
{
    (void)arg;
    char name[64];
    for (int i = 0; i < 300 && atomic_load(&racing); i++) {
        snprintf(name, sizeof name, "race %d", i);
        trace_event_id_t id;
        posix_trace_eventid_open(name, &id);
        if (i % 8 == 0)
            usleep(100);
    }
    return NULL;
}

static void test_fork_while_opening(void)
{
    trace_event_id_t base = open_name("race: parent before");
    atomic_store(&racing, 1);
    pthread_t th;
    if (pthread_create(&th, NULL, open_names_thread, NULL))
        TL_DIE("pthread_create");
    int all = 1;
    for (int k = 0; k < 20; k++) {
        int p[2];
        if (pipe(p))
            TL_DIE("pipe");
        pid_t pid = pt_fork(20);
        if (pid == 0) {
            /* The probe gives the count of names copied; each of them must be intact and keep its id. */
            trace_event_id_t probe, id;
            int bad = posix_trace_eventid_open("race: child probe", &probe) != 0;
            char name[64];
            for (trace_event_id_t i = 0; base + 1 + i < probe; i++) {
                snprintf(name, sizeof name, "race %u", i);
                bad |= posix_trace_eventid_open(name, &id) != 0 || id != base + 1 + i;
            }
            bad |= posix_trace_eventid_open("race: child probe", &id) != 0 || id != probe;
            _exit(bad);
        }
        close(p[0]);
        close(p[1]);
        int status = 0;
        waitpid(pid, &status, 0);
        all &= WIFEXITED(status) && WEXITSTATUS(status) == 0;
        usleep(2000);
    }
    atomic_store(&racing, 0);
    pthread_join(th, NULL);
    CHECK_MSG(all, "20 children forked while a thread opened names: each copy intact, names keep their ids");
}

/* Reads the log of a shut-down stream: every child event's id is named with its data (the name). */
static void check_log_names(int fd, trace_id_t t, size_t want_events)
{
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    size_t named = 0, child_events = 0;
    for (size_t i = 0; i < ev.n; i++) {
        const pt_event *e = &ev.ev[i];
        if (e->info.posix_pid == getpid() || e->info.posix_event_id <= POSIX_TRACE_UNNAMED_USEREVENT)
            continue;
        child_events++;
        char name[TRACE_EVENT_NAME_MAX];
        named += posix_trace_eventid_get_name(pre, e->info.posix_event_id, name) == 0 && e->len > 0 &&
                 strcmp(name, (const char *)e->data) == 0;
    }
    CHECK_EQ(child_events, want_events);
    CHECK_MSG(named == child_events, "the parent's log names every child event by its own name (%zu of %zu)", named,
              child_events);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
}

static int unique(const trace_event_id_t *ids, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (ids[i] == ids[j])
                return 0;
    return 1;
}

static void inherited_attr(trace_attr_t *a)
{
    pt_attr(a, POSIX_TRACE_FLUSH, 1u << 20, 200);
    posix_trace_attr_setinherited(a, POSIX_TRACE_INHERITED);
    posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_APPEND);
}

/* Inherited stream, children in turn: they share id space with the parent and each other. */
static void test_inherited_sequential(void)
{
    enum { N = 3, NAMES = 50 };
    trace_attr_t a;
    inherited_attr(&a);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    trace_event_id_t ids[N * NAMES + 2];
    size_t n = 0;
    ids[n++] = open_name("inh-seq: parent before");
    for (int k = 0; k < N; k++) {
        child_job j = {"inh-seq: child", k, NAMES, 1, -1, NULL};
        child_report r;
        if (!reap(spawn(&j), &r))
            return;
        memcpy(&ids[n], r.ids, sizeof r.ids[0] * r.n);
        n += r.n;
    }
    ids[n++] = open_name("inh-seq: parent after");
    CHECK_MSG(unique(ids, n), "ids unique across the parent and its 3 inheriting children");
    CHECK_EQ(ids[n - 1], ids[0] + N * NAMES + 1); /* the parent knows every child name */
    check_log_names(fd, t, N * NAMES);
    close(fd);
}

/* Inherited stream, children at the same time as each other and as the parent opening names. */
static void test_inherited_concurrent(void)
{
    enum { N = 4, NAMES = 60, PARENT = 40 };
    trace_attr_t a;
    inherited_attr(&a);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    int go[2];
    if (pipe(go))
        TL_DIE("pipe");
    child c[N];
    for (int k = 0; k < N; k++) {
        child_job j = {"inh-conc: child", k, NAMES, 1, go[0], NULL};
        c[k] = spawn(&j);
    }
    char bytes[N] = {0};
    if (write(go[1], bytes, N) != N)
        TL_DIE("write");
    trace_event_id_t ids[N * NAMES + PARENT];
    size_t n = 0;
    char name[64];
    for (int i = 0; i < PARENT; i++) {
        snprintf(name, sizeof name, "inh-conc: parent %d", i);
        ids[n++] = open_name(name);
    }
    for (int k = 0; k < N; k++) {
        child_report r;
        if (reap(c[k], &r)) {
            memcpy(&ids[n], r.ids, sizeof r.ids[0] * r.n);
            n += r.n;
        }
    }
    close(go[0]);
    close(go[1]);
    CHECK_EQ(n, N * NAMES + PARENT);
    CHECK_MSG(unique(ids, n), "ids unique across a parent and 4 children opening names at the same time");
    check_log_names(fd, t, N * NAMES);
    close(fd);
}

/* An inherited stream shut down before fork shares nothing: the child's names are its own. */
static void test_inherited_stream_gone(void)
{
    trace_attr_t a;
    inherited_attr(&a);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    pt_shutdown(t);
    close(fd);
    trace_event_id_t before = open_name("gone: parent before");
    child_job j = {"gone: child", 0, 20, 0, -1, NULL};
    child_report r;
    if (reap(spawn(&j), &r))
        CHECK(consecutive(r.ids, r.n, before + 1));
    CHECK_EQ(open_name("gone: parent after"), before + 1);
}

/* A grandchild copies its parent's (the child's) map: its names do not reach the child. */
static void test_grandchild(void)
{
    trace_event_id_t before = open_name("grand: parent before");
    int p[2];
    if (pipe(p))
        TL_DIE("pipe");
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        trace_event_id_t mine, next;
        int bad = posix_trace_eventid_open("grand: child", &mine) != 0 || mine != before + 1;
        child_job j = {"grand: grandchild", 0, 30, 0, -1, NULL};
        child_report r;
        child c = spawn(&j);
        bad |= read(c.rfd, &r, sizeof r) != (ssize_t)sizeof r || !consecutive(r.ids, r.n, mine + 1);
        int status = 0;
        waitpid(c.pid, &status, 0);
        bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        bad |= posix_trace_eventid_open("grand: child after", &next) != 0 || next != mine + 1;
        _exit(bad);
    }
    close(p[0]);
    close(p[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "a grandchild's names stay out of its parent's map (status 0x%x)", status);
    CHECK_EQ(open_name("grand: parent after"), before + 1);
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 120 : 60);
    PT_RUN(test_sequential_children);
    PT_RUN(test_many_sequential_children);
    PT_RUN(test_concurrent_children);
    PT_RUN(test_fork_while_opening);
    PT_RUN(test_inherited_sequential);
    PT_RUN(test_inherited_concurrent);
    PT_RUN(test_inherited_stream_gone);
    PT_RUN(test_grandchild);
    return pt_finish();
}
