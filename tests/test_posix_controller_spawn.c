/*
 * Trace Inherit reaches posix_spawn children (issue 12 item 4; design note,
 * section 6): "after a fork() or spawn() operation, if the parent is being
 * traced, its child shall be concurrently traced using the same trace
 * stream". A child spawned (posix_spawn, through <trace.h>) while the
 * parent has a running POSIX_TRACE_INHERITED stream records into it from
 * its first event, with ids from the parent's name map (the parent names
 * them); with POSIX_TRACE_CLOSE_FOR_CHILD nothing of the child's arrives.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

#define CHILD_EVENTS 100

/* The spawned program: this test run with --child; records CHILD_EVENTS events of "spawn:child". */
static int child_main(void)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("spawn:child", &id))
        return 2;
    for (int i = 0; i < CHILD_EVENTS; i++)
        posix_trace_event(id, &i, sizeof i);
    return 0;
}

/*
 * The spawned program traced by a controller too: --traced UP DOWN (pipe
 * descriptors). Opens "spawn:own", sends its id, waits for 'g', records
 * CHILD_EVENTS events of it, sends 'd'.
 */
static int traced_child_main(int up, int down)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("spawn:own", &id))
        return 2;
    if (write(up, &id, sizeof id) != (ssize_t)sizeof id || xp_recv(down, 20000) != 'g')
        return 3;
    for (int i = 0; i < CHILD_EVENTS; i++)
        posix_trace_event(id, &i, sizeof i);
    xp_send(up, 'd');
    return 0;
}

static pid_t spawn_child_with(char *argv[])
{
    pid_t pid = 0;
    int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    CHECK_ERR(e, 0);
    return e ? -1 : pid;
}

static pid_t spawn_child(void)
{
    char *argv[] = {"test_posix_controller_spawn", "--child", NULL};
    pid_t pid = 0;
    int e = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
    CHECK_ERR(e, 0);
    return e ? -1 : pid;
}

static void run(int inheritance, size_t *from_child, int *named)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, inheritance);
    trace_id_t t;
    *from_child = 0;
    *named = 0;
    if (!CHECK_ERR(posix_trace_create(0, &a, &t), 0))
        return;
    trace_event_id_t mine;
    CHECK_ERR(posix_trace_eventid_open("spawn:parent", &mine), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    posix_trace_event(mine, NULL, 0);
    pid_t pid = spawn_child();
    if (pid > 0) {
        int st = 0;
        waitpid(pid, &st, 0);
        CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the spawned child exited with 0x%x", st);
    }
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(t, 1, &ev), 0);
    for (size_t i = 0; i < ev.n; i++) {
        if (ev.ev[i].info.posix_pid != pid)
            continue;
        (*from_child)++;
        char name[TRACE_EVENT_NAME_MAX];
        *named += posix_trace_eventid_get_name(t, ev.ev[i].info.posix_event_id, name) == 0 &&
                  strcmp(name, "spawn:child") == 0 && ev.ev[i].info.posix_event_id != mine;
    }
    CHECK_EQ(pt_count(&ev, mine), 1);
    pt_events_free(&ev);
    pt_shutdown(t);
}

static void test_spawned_child_inherits(void)
{
    size_t n;
    int named;
    run(POSIX_TRACE_INHERITED, &n, &named);
    CHECK_EQ(n, CHILD_EVENTS);
    CHECK_EQ_INT(named, CHILD_EVENTS); /* the parent names them: one id space */
    printf("spawned child: %zu events in the parent's stream\n", n);
}

static size_t count_named(trace_id_t t, const pt_events *ev, pid_t pid, trace_event_id_t id, const char *want)
{
    size_t n = 0;
    char name[TRACE_EVENT_NAME_MAX];
    for (size_t i = 0; i < ev->n; i++)
        n += ev->ev[i].info.posix_pid == pid && ev->ev[i].info.posix_event_id == id &&
             posix_trace_eventid_get_name(t, id, name) == 0 && strcmp(name, want) == 0;
    return n;
}

/*
 * A child (spawned, or forked) in its parent's inherited stream, traced
 * directly by a controller as well (here the parent itself): the
 * controller sees the child's names with the ids the child uses, and both
 * streams get its events, named. (The child used to keep its parent's map
 * where no controller of its own looked: the controller saw no names.)
 */
static void check_child_names_seen_by_its_controller(int spawned)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t inherited, direct = 0;
    if (!CHECK_ERR(posix_trace_create(0, &a, &inherited), 0))
        return;
    trace_event_id_t mine, own = 0, seen = 0;
    CHECK_ERR(posix_trace_eventid_open("spawn:parent", &mine), 0);
    CHECK_ERR(posix_trace_start(inherited), 0);
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    char up_w[16], down_r[16];
    snprintf(up_w, sizeof up_w, "%d", up[1]);
    snprintf(down_r, sizeof down_r, "%d", down[0]);
    char *argv[] = {"test_posix_controller_spawn", "--traced", up_w, down_r, NULL};
    pid_t pid = spawned ? spawn_child_with(argv) : pt_fork(60);
    if (pid == 0) /* ends without exit handlers (as if killed): its controller removes its map */
        _exit(traced_child_main(up[1], down[0]));
    if (pid > 0 && CHECK(read(up[0], &own, sizeof own) == (ssize_t)sizeof own)) {
        CHECK(own != mine);
        pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
        if (!CHECK_ERR(posix_trace_create(pid, &a, &direct), 0)) {
            direct = 0;
        } else {
            char name[TRACE_EVENT_NAME_MAX] = "";
            CHECK_ERR(posix_trace_eventid_get_name(direct, own, name), 0);
            CHECK_STR_EQ(name, "spawn:own");
            CHECK_ERR(posix_trace_trid_eventid_open(direct, "spawn:own", &seen), 0);
            CHECK_EQ_INT(seen, own);
            CHECK_ERR(posix_trace_start(direct), 0);
            xp_send(down[1], 'g');
            CHECK_EQ_INT(xp_recv(up[0], 20000), 'd');
            pt_events ev = {0};
            CHECK_ERR(pt_read_all(direct, 1, &ev), 0);
            CHECK_EQ(count_named(direct, &ev, pid, own, "spawn:own"), CHILD_EVENTS);
            pt_events_free(&ev);
        }
    }
    if (pid > 0) {
        xp_send(down[1], 'g'); /* in case it still waits */
        CHECK_EQ_INT(xp_wait(pid), 0);
        if (direct)
            pt_shutdown(direct); /* it ended: the controller removes what it left */
        char path[96]; /* its named map (the redirect) is gone */
        snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d.names", (unsigned)geteuid(), (int)pid);
        CHECK_MSG(access(path, F_OK) != 0, "%s left behind", path);
    }
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(inherited, 1, &ev), 0);
    CHECK_EQ(count_named(inherited, &ev, pid, own, "spawn:own"), CHILD_EVENTS);
    pt_events_free(&ev);
    pt_shutdown(inherited);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

static void test_spawned_child_names_seen_by_its_controller(void) { check_child_names_seen_by_its_controller(1); }
static void test_forked_child_names_seen_by_its_controller(void) { check_child_names_seen_by_its_controller(0); }

static void test_close_for_child(void)
{
    size_t n;
    int named;
    run(POSIX_TRACE_CLOSE_FOR_CHILD, &n, &named);
    CHECK_EQ(n, 0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--child") == 0)
        return child_main();
    if (argc > 3 && strcmp(argv[1], "--traced") == 0)
        return traced_child_main(atoi(argv[2]), atoi(argv[3]));
    pt_watchdog(60);
    PT_RUN(test_spawned_child_inherits);
    PT_RUN(test_spawned_child_names_seen_by_its_controller);
    PT_RUN(test_forked_child_names_seen_by_its_controller);
    PT_RUN(test_close_for_child);
    return pt_finish();
}
