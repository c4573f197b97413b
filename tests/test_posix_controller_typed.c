/*
 * tracelog_trid_eventid_open_typed on a controller's stream (issue 26, found
 * by the composition matrix): the name goes into the traced process's map,
 * with its schema, so the id the controller gets is the one the process
 * records with, and the log decodes its payload. It went into the
 * controller's own map: the controller's id named another event type of
 * the process (a filter on it hit the wrong events).
 *
 * The controller here has names of its own (its map's ids differ from the
 * child's), opened after the fork so that the child's copy of the map has
 * none; the child, traced from before its first trace call, waits for the
 * controller's typed open, opens an untyped name, then the typed name with
 * the same schema (it must get the controller's id, not EEXIST), and
 * records one event with it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

#define SCHEMA "u32 job; enum8 prio {LOW=0, HIGH=1}"

struct job {
    uint32_t job;
    uint8_t prio;
    uint8_t pad[3];
};

/* The child: 'g' from the parent, then its typed open and one event; it sends back the id it got (or -1). */
static void child_main(int up, int down)
{
    trace_event_id_t first, typed;
    if (xp_recv(down, 10000) != 'g')
        _exit(2);
    posix_trace_eventid_open("child: first", &first);
    int e = tracelog_eventid_open_typed("ctl: typed", SCHEMA, &typed);
    xp_send_id(up, e ? UINT32_MAX : (uint32_t)typed);
    struct job j = {.job = 77, .prio = 1};
    if (!e)
        posix_trace_event(typed, &j, sizeof j);
    posix_trace_event(first, "x", 1);
    _exit(0);
}

static void test_typed_name_in_the_traced_process(void)
{
    int up[2], down[2];
    CHECK(pipe(up) == 0 && pipe(down) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(up[0]);
        close(down[1]);
        child_main(up[1], down[0]);
    }
    close(up[1]);
    close(down[0]);
    trace_event_id_t own1, own2;
    CHECK_ERR(posix_trace_eventid_open("parent: a", &own1), 0);
    CHECK_ERR(posix_trace_eventid_open("parent: b", &own2), 0);
    int fd = tl_test_tmpfd();
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(pid, NULL, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    trace_event_id_t ctl_id = 0, again = 0;
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "ctl: typed", SCHEMA, &ctl_id), 0);
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "ctl: typed", SCHEMA, &again), 0);
    CHECK_EQ(again, ctl_id);
    CHECK_ERR(tracelog_trid_eventid_open_typed(t, "ctl: typed", "u64 other", &again), EEXIST);
    xp_send(down[1], 'g');
    uint32_t child_id = 0;
    CHECK_EQ(xp_recv_id(up[0], &child_id), 0);
    CHECK_EQ(child_id, ctl_id); /* the same id on both sides, and no EEXIST in the child */
    char name[TRACE_EVENT_NAME_MAX + 1] = "";
    CHECK_ERR(posix_trace_eventid_get_name(t, ctl_id, name), 0);
    CHECK_STR_EQ(name, "ctl: typed");
    CHECK_EQ_INT(xp_wait(pid), 0);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(t, fd, &pre), 0);
    pt_events ev = {0};
    CHECK_ERR(pt_read_all(pre, 0, &ev), 0);
    CHECK_EQ(pt_count(&ev, ctl_id), 1);
    pt_events_free(&ev);
    CHECK_ERR(posix_trace_close(pre), 0);
    /* The log decodes it: its schema came with the name. */
    tracelog_reader *r;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK)) {
        const tracelog_schema *s = tracelog_reader_event_schema(r, ctl_id);
        CHECK(s != NULL);
        if (s)
            CHECK_STR_EQ(tracelog_schema_text(s), SCHEMA);
        tracelog_reader_close(r);
    }
    close(fd);
    close(up[0]);
    close(down[1]);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_typed_name_in_the_traced_process);
    return pt_finish();
}
