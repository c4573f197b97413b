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
    pt_watchdog(60);
    PT_RUN(test_spawned_child_inherits);
    PT_RUN(test_close_for_child);
    return pt_finish();
}
