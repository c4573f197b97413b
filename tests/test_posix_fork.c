/*
 * Trace Inherit (posix-trace.md §9.1 inheritance, §2.1, §7.3, P21):
 * "POSIX_TRACE_INHERITED (if the parent is traced, the child is traced
 * concurrently into the same stream)"; "POSIX_TRACE_CLOSE_FOR_CHILD (after
 * fork() the child is not traced; parent tracing continues)"; "A trid from
 * posix_trace_create[_withlog] is valid only in the creating process; if a
 * child (after fork) uses it in any POSIX function, that function shall
 * return EINVAL".
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static trace_event_id_t ev_parent, ev_child, ev_own;

/* What a child reports to its parent through a pipe. */
typedef struct {
    pid_t pid;
    pthread_t thread;
    trace_event_id_t late_id; /* a name opened after fork */
    int errs[8];              /* results of calls on the parent's trid */
    int own_stream;           /* 0 if the child could create, use and shut down a stream of its own */
} child_report;

enum { CHILD_EVENTS = 100 };

/*
 * The child: records, opens a name, tries the parent's trid, reports, exits with exit() (atexit handlers run).
 * own_stream: also create a stream of its own (it allocates memory: only when the parent had no other thread
 * at fork time, since a lock held by another thread then stays locked in the child).
 */
static void child_main(trace_id_t parent_trid, int wfd, int own_stream)
{
    child_report r;
    memset(&r, 0, sizeof r);
    r.pid = getpid();
    r.thread = pthread_self();
    for (uint32_t i = 0; i < CHILD_EVENTS; i++)
        posix_trace_event(ev_child, &i, sizeof i);
    posix_trace_eventid_open("fork: opened in the child", &r.late_id);
    posix_trace_event(r.late_id, "late", 4);
    struct posix_trace_status_info si;
    trace_attr_t a;
    posix_trace_attr_init(&a);
    trace_event_set_t set;
    posix_trace_eventset_empty(&set);
    char name[TRACE_EVENT_NAME_MAX];
    r.errs[0] = posix_trace_get_status(parent_trid, &si);
    r.errs[1] = posix_trace_get_attr(parent_trid, &a);
    r.errs[2] = posix_trace_stop(parent_trid);
    r.errs[3] = posix_trace_set_filter(parent_trid, &set, POSIX_TRACE_SET_EVENTSET);
    r.errs[4] = posix_trace_eventid_get_name(parent_trid, ev_child, name);
    r.errs[5] = posix_trace_clear(parent_trid);
    r.errs[6] = posix_trace_flush(parent_trid);
    r.errs[7] = posix_trace_shutdown(parent_trid);
    /* The child can trace itself independently. */
    trace_id_t mine;
    r.own_stream = own_stream ? posix_trace_create(0, NULL, &mine) : 0;
    if (own_stream && !r.own_stream) {
        posix_trace_start(mine);
        posix_trace_event(ev_own, "own", 3); /* also goes to the inherited stream, if any */
        pt_events ev = {0};
        r.own_stream = pt_read_all(mine, 1, &ev) || pt_count(&ev, ev_own) != 1 || pt_count(&ev, ev_child) != 0;
        pt_events_free(&ev);
        r.own_stream |= posix_trace_shutdown(mine);
    }
    if (write(wfd, &r, sizeof r) != (ssize_t)sizeof r)
        _exit(2);
    exit(0); /* runs the library's exit handler: it must leave the parent's streams alone */
}

/* Forks a child running child_main; returns its report. */
static int run_child(trace_id_t parent_trid, child_report *r, int own_stream)
{
    int p[2];
    if (pipe(p) != 0)
        TL_DIE("pipe");
    pid_t pid = pt_fork(10);
    if (pid < 0)
        TL_DIE("fork");
    if (pid == 0) {
        close(p[0]);
        child_main(parent_trid, p[1], own_stream);
    }
    close(p[1]);
    ssize_t n = read(p[0], r, sizeof *r);
    close(p[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child exited normally (status 0x%x)", status);
    CHECK_MSG(n == (ssize_t)sizeof *r, "child report received");
    CHECK_EQ_INT(r->pid, pid);
    return n == (ssize_t)sizeof *r;
}

static void check_child_trid_errors(const child_report *r)
{
    static const char *const what[8] = {"get_status", "get_attr", "stop", "set_filter", "eventid_get_name",
                                        "clear", "flush", "shutdown"};
    for (int i = 0; i < 8; i++) {
        tl_test_context("posix_trace_%s in the child on the parent's trid", what[i]);
        CHECK_ERR(r->errs[i], EINVAL);
    }
    tl_test_context(NULL);
    CHECK_MSG(r->own_stream == 0, "the child creates, uses and shuts down a stream of its own");
}

/* Checks the child's events in what was read: pid, thread, order, and the name it opened. */
static void check_child_events(const pt_events *ev, const child_report *r)
{
    uint32_t next = 0;
    int ok = 1;
    for (size_t i = 0; i < ev->n; i++) {
        const pt_event *e = &ev->ev[i];
        if (e->info.posix_event_id != ev_child)
            continue;
        uint32_t v;
        memcpy(&v, e->data, sizeof v);
        ok &= e->len == sizeof v && v == next && e->info.posix_pid == r->pid &&
              pthread_equal(e->info.posix_thread_id, r->thread);
        next++;
    }
    CHECK_MSG(ok, "the child's events carry the child's pid and thread id, in order");
    CHECK_EQ_INT(next, CHILD_EVENTS);
    CHECK_EQ(pt_count(ev, r->late_id), 1);
    long late = pt_find(ev, r->late_id, 0);
    CHECK(late >= 0 && ev->ev[late].info.posix_pid == r->pid);
}

/* INHERITED, stream without log: the child's events land in the parent's stream. */
static void test_inherited(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(ev_parent, "before", 6);
    child_report r;
    if (!run_child(t, &r, 1))
        return;
    check_child_trid_errors(&r);
    /* The child's exit() did not shut the parent's stream down. */
    struct posix_trace_status_info si;
    CHECK_ERR(posix_trace_get_status(t, &si), 0);
    CHECK_EQ_INT(si.posix_stream_status, POSIX_TRACE_RUNNING);
    posix_trace_event(ev_parent, "after", 5);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    check_child_events(&ev, &r);
    CHECK_EQ(pt_count(&ev, ev_parent), 2);
    long first = pt_find(&ev, ev_parent, 0);
    CHECK(first >= 0 && ev.ev[first].info.posix_pid == getpid());
    /* §7.3: "with TRI unique across all processes traced in the same stream": the child's name is known here. */
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t, r.late_id, name), 0);
    CHECK_STR_EQ(name, "fork: opened in the child");
    trace_event_id_t same;
    CHECK_ERR(posix_trace_eventid_open("fork: opened in the child", &same), 0);
    CHECK_EQ(same, r.late_id);
    pt_events_free(&ev);
    pt_shutdown(t);
}

/* INHERITED with log: the log holds the child's events, and names the event type the child opened after fork. */
static void test_inherited_log(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    child_report r;
    if (!run_child(t, &r, 0)) /* the FLUSH policy's flusher thread runs in the parent */
        return;
    check_child_trid_errors(&r);
    posix_trace_event(ev_parent, "after", 5);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    check_child_events(&ev, &r);
    CHECK_EQ(pt_count(&ev, ev_parent), 1);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(pre, r.late_id, name), 0);
    CHECK_STR_EQ(name, "fork: opened in the child");
    trace_attr_t got;
    posix_trace_attr_init(&got);
    posix_trace_get_attr(pre, &got);
    int inh = -1;
    posix_trace_attr_getinherited(&got, &inh);
    CHECK_EQ_INT(inh, POSIX_TRACE_INHERITED);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    close(fd);
}

/* CLOSE_FOR_CHILD (the default): "the child is not traced; parent tracing continues". */
static void test_close_for_child(void)
{
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, NULL, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    child_report r;
    if (!run_child(t, &r, 1))
        return;
    check_child_trid_errors(&r);
    posix_trace_event(ev_parent, "after", 5);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    CHECK_EQ(pt_count(&ev, ev_child), 0);
    CHECK_EQ(pt_count(&ev, r.late_id), 0);
    CHECK_EQ(pt_count(&ev, ev_parent), 1);
    int foreign = 0;
    for (size_t i = 0; i < ev.n; i++)
        foreign |= ev.ev[i].info.posix_pid != getpid();
    CHECK_MSG(!foreign, "nothing from another process");
    pt_events_free(&ev);
    pt_shutdown(t);
}

/* Two streams, one inherited and one not: the child records only into the inherited one. */
static void test_mixed(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t inh, not_inh;
    CHECK_ERR(posix_trace_create(0, &a, &inh), 0);
    CHECK_ERR(posix_trace_create(0, NULL, &not_inh), 0);
    CHECK_ERR(posix_trace_start(inh), 0);
    CHECK_ERR(posix_trace_start(not_inh), 0);
    child_report r;
    if (!run_child(inh, &r, 1))
        return;
    pt_events e1 = {0}, e2 = {0};
    CHECK_ERR(pt_read_all(inh, 1, &e1), 0);
    CHECK_ERR(pt_read_all(not_inh, 1, &e2), 0);
    CHECK_EQ(pt_count(&e1, ev_child), CHILD_EVENTS);
    CHECK_EQ(pt_count(&e2, ev_child), 0);
    pt_events_free(&e1);
    pt_events_free(&e2);
    pt_shutdown(inh);
    pt_shutdown(not_inh);
}

/* A stream the parent shut down while the child still records: the child must not crash. */
static void test_parent_shuts_down_first(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    int go[2], done[2];
    if (pipe(go) || pipe(done))
        TL_DIE("pipe");
    pid_t pid = pt_fork(10);
    if (pid == 0) {
        char c;
        if (read(go[0], &c, 1) != 1)
            _exit(3);
        for (uint32_t i = 0; i < 10000; i++)
            posix_trace_event(ev_child, &i, sizeof i);
        _exit(0);
    }
    pt_shutdown(t);
    if (write(go[1], "g", 1) != 1)
        TL_DIE("write");
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child recorded into a shut-down stream safely "
              "(status 0x%x)", status);
    close(go[0]);
    close(go[1]);
    close(done[0]);
    close(done[1]);
}

/*
 * The name map of a process that never opened a name before fork (this program run again, fresh): a name the
 * child opens and one the parent opens afterwards must still get different ids, and the parent must know the
 * child's name (§7.3: "with TRI [ids are] unique across all processes traced in the same stream").
 */
static int fresh_map_main(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0); /* no name opened in this process yet */
    CHECK_ERR(posix_trace_start(t), 0);
    int p[2];
    if (pipe(p))
        TL_DIE("pipe");
    pid_t pid = pt_fork(10);
    if (pid == 0) {
        trace_event_id_t id = 0;
        posix_trace_eventid_open("fresh: child", &id);
        posix_trace_event(id, "c", 1);
        if (write(p[1], &id, sizeof id) != (ssize_t)sizeof id)
            _exit(2);
        _exit(0);
    }
    trace_event_id_t child_id = 0;
    CHECK(read(p[0], &child_id, sizeof child_id) == (ssize_t)sizeof child_id);
    waitpid(pid, NULL, 0);
    trace_event_id_t parent_id;
    CHECK_ERR(posix_trace_eventid_open("fresh: parent", &parent_id), 0);
    CHECK_MSG(parent_id != child_id, "ids unique across the processes of the stream: parent %u, child %u", parent_id,
              child_id);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(t, child_id, name), 0);
    CHECK_STR_EQ(name, "fresh: child");
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    long i = pt_find(&ev, child_id, 0);
    CHECK_MSG(i >= 0 && ev.ev[i].info.posix_pid == pid, "the child's event is in the stream with its pid");
    pt_events_free(&ev);
    pt_shutdown(t);
    return pt_finish();
}

static void test_fresh_name_map(void)
{
    pid_t pid = pt_fork(15);
    if (pid == 0) {
        execl("/proc/self/exe", "test_posix_fork", "--fresh-map", (char *)NULL);
        _exit(127);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "a process that opened no name before fork: child and parent names are distinct and known "
              "(the run above printed the details; status 0x%x)", status);
}

int main(int argc, char **argv)
{
    pt_watchdog(18);
    if (argc == 2 && strcmp(argv[1], "--fresh-map") == 0)
        return fresh_map_main();
    if (posix_trace_eventid_open("fork: parent", &ev_parent) || posix_trace_eventid_open("fork: child", &ev_child) ||
        posix_trace_eventid_open("fork: child's own stream", &ev_own))
        TL_DIE("eventid_open failed");
    PT_RUN(test_inherited);
    PT_RUN(test_inherited_log);
    PT_RUN(test_close_for_child);
    PT_RUN(test_mixed);
    PT_RUN(test_parent_shuts_down_first);
    PT_RUN(test_fresh_name_map);
    return pt_finish();
}
