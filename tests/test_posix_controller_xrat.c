/*
 * The Rationale's two "Trace Operation Control" examples (XRAT B.2.11), as
 * the programs samples/xrat_trace_another_process.c and
 * samples/xrat_control_running_process.c (see their comments: written from
 * the Rationale's description, its verbatim text was not at hand): the
 * first records its traced child's events into a log that reads back with
 * every event of the child and how it ended; the second reads a running
 * process's events from the controller with a filter in force.
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"

static const char *build_dir(void)
{
    const char *d = getenv("TL_BUILD_DIR");
    return d ? d : "..";
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_trace_another_process(void)
{
    char log[] = "/tmp/tl_xrat_XXXXXX", cmd[1024];
    int fd = mkstemp(log);
    if (fd < 0)
        TL_DIE("mkstemp");
    close(fd);
    snprintf(cmd, sizeof cmd, "%s/samples/xrat_trace_another_process %s 5000", build_dir(), log);
    CHECK_EQ_INT(run(cmd), 0);
    fd = open(log, O_RDONLY);
    trace_id_t pre;
    if (CHECK_ERR(posix_trace_open(fd, &pre), 0)) {
        pt_events evs = {0};
        CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
        size_t work = 0, next = 0;
        long end = -1;
        char name[TRACE_EVENT_NAME_MAX];
        for (size_t i = 0; i < evs.n; i++) {
            if (evs.ev[i].info.posix_event_id == 9)
                end = (long)i;
            if (posix_trace_eventid_get_name(pre, evs.ev[i].info.posix_event_id, name) != 0 ||
                strcmp(name, "xrat:work") != 0 || evs.ev[i].len != sizeof(long))
                continue;
            long seq;
            memcpy(&seq, evs.ev[i].data, sizeof seq);
            next += (size_t)seq == next;
            work++;
        }
        CHECK_EQ(work, 5000);
        CHECK_EQ(next, 5000);
        if (CHECK(end >= 0) && CHECK_EQ(evs.ev[end].len, 8)) {
            int32_t how_code[2];
            memcpy(how_code, evs.ev[end].data, 8);
            CHECK_EQ_INT(how_code[0], 1); /* exited */
            CHECK_EQ_INT(how_code[1], 0);
        }
        pt_events_free(&evs);
        posix_trace_close(pre);
    }
    close(fd);
    unlink(log);
}

static void test_control_running_process(void)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s/samples/xrat_control_running_process 300", build_dir());
    CHECK_EQ_INT(run(cmd), 0);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_trace_another_process);
    PT_RUN(test_control_running_process);
    return pt_finish();
}
