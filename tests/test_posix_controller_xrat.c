/*
 * The Rationale's two "Trace Operation Control" examples (XRAT B.2.11), as
 * the programs samples/xrat_trace_another_process.c and
 * samples/xrat_control_running_process.c (see their comments: written from
 * the Rationale's description, its verbatim text was not at hand): the
 * first records its traced child's events into a log that reads back with
 * every event of the child and how it ended; the second reads a running
 * process's events from the controller with a filter in force. A
 * controller's log describes the traced process, not the controller (issue
 * 26 item 3), also for a child traced before its exec; the stream's
 * statistics say whether the process took it up (item 4).
 */
#define _GNU_SOURCE

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <trace.h>
#include <tracelog.h>
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
        /* The log is the child's: its pid (that of its events), not the controller's. The child exec'd the
           controller's own program (/proc/self/exe): its executable is that, or unknown if it ended before
           the controller looked (it records 5000 events, a millisecond). */
        pid_t child = 0;
        for (size_t i = 0; i < evs.n && !child; i++)
            if (posix_trace_eventid_get_name(pre, evs.ev[i].info.posix_event_id, name) == 0 &&
                strcmp(name, "xrat:work") == 0)
                child = evs.ev[i].info.posix_pid;
        tracelog_reader *r;
        char sample[PATH_MAX + 64], real[PATH_MAX];
        snprintf(sample, sizeof sample, "%s/samples/xrat_trace_another_process", build_dir());
        int rfd = open(log, O_RDONLY);
        if (CHECK(rfd >= 0) && CHECK_EQ_INT(tracelog_reader_open(rfd, NULL, &r, NULL), TRACELOG_OK)) {
            const tracelog_metadata *m = tracelog_reader_metadata(r);
            CHECK_EQ_INT(m->pid, child);
            CHECK_MSG(!m->program[0] || (realpath(sample, real) && strcmp(m->program, real) == 0), "program %s, want %s",
                      m->program, sample);
            CHECK_MSG(strcmp(m->trace_name, "trace-another-process") == 0, "trace name %s: the caller's", m->trace_name);
            tracelog_reader_close(r);
        }
        if (rfd >= 0)
            close(rfd);
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

/*
 * A child forked, traced with a log before its exec, then let go to exec
 * path (argv: path, arg, arg2; NULLs end it): ends, then the stream is shut down. *joined gets
 * TRACELOG_STATS_JOINED as it was before the shutdown; the log is read into
 * *m. 0 or -1.
 */
static int trace_child(const char *path, const char *arg, const char *arg2, int *joined, tracelog_metadata *m,
                       pid_t *child)
{
    char log[] = "/tmp/tl_xrat_id_XXXXXX";
    int fd = mkstemp(log), go[2];
    if (fd < 0 || pipe(go) != 0)
        TL_DIE("mkstemp or pipe");
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        execl(path, path, arg, arg2, (char *)NULL);
        _exit(127);
    }
    close(go[0]);
    *child = pid;
    trace_id_t trid;
    int ok = CHECK_ERR(posix_trace_create_withlog(pid, NULL, fd, &trid), 0) && CHECK_ERR(posix_trace_start(trid), 0);
    CHECK_EQ_INT(write(go[1], "g", 1), 1);
    close(go[1]);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT); /* ended, not reaped: as ptlog record */
    tracelog_trace_stats st = {0};
    if (ok) {
        CHECK_ERR(tracelog_trace_get_stats(trid, &st), 0);
        CHECK_ERR(posix_trace_shutdown(trid), 0);
    }
    *joined = (st.flags & TRACELOG_STATS_JOINED) != 0;
    waitpid(pid, NULL, 0);
    tracelog_reader *r;
    lseek(fd, 0, SEEK_SET);
    int rc = -1;
    if (ok && CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK)) {
        *m = *tracelog_reader_metadata(r);
        tracelog_reader_close(r);
        rc = 0;
    }
    close(fd);
    unlink(log);
    return rc;
}

static void test_child_identity(void)
{
    char traced[PATH_MAX + 64], real[PATH_MAX];
    tracelog_metadata m;
    int joined;
    pid_t child;
    /* An instrumented program (tests/ptlog/traced_sh: a trace call, 0.2 s, then sh): it took the stream up;
       the log is its, named after it (the caller gave no name). Built with ptlog only. */
    snprintf(traced, sizeof traced, "%s/tests/traced_sh", build_dir());
    if (access(traced, X_OK) == 0 && trace_child(traced, "-c", "exit 0", &joined, &m, &child) == 0) {
        CHECK_MSG(joined, "an instrumented child did not join");
        CHECK_EQ_INT(m.pid, child);
        CHECK_MSG(realpath(traced, real) && strcmp(m.program, real) == 0, "program %s, want %s", m.program, traced);
        CHECK_MSG(strcmp(m.trace_name, "traced_sh") == 0, "trace name %s", m.trace_name);
    }
    /* A program without libtracelog never joins; the log is still its own (its executable may be unknown
       if it ended before the controller looked, its name is the command name then). */
    const char *sleeper = access("/bin/sleep", X_OK) == 0 ? "/bin/sleep" : "/usr/bin/sleep";
    if (trace_child(sleeper, "0.2", NULL, &joined, &m, &child) == 0) {
        CHECK_MSG(!joined, "a program without libtracelog joined");
        CHECK_EQ_INT(m.pid, child);
        CHECK_MSG(realpath(sleeper, real) && strcmp(m.program, real) == 0, "program %s, want %s", m.program, sleeper);
        CHECK_MSG(strcmp(m.trace_name, "sleep") == 0, "trace name %s", m.trace_name);
    }
    if (trace_child("/bin/true", NULL, NULL, &joined, &m, &child) == 0) {
        CHECK_MSG(!joined, "a program without libtracelog joined");
        CHECK_EQ_INT(m.pid, child);
        CHECK_MSG(strcmp(m.trace_name, "true") == 0, "trace name %s", m.trace_name);
        CHECK_MSG(m.program[0] == 0 || (realpath("/bin/true", real) && strcmp(m.program, real) == 0), "program %s",
                  m.program);
    }
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
    PT_RUN(test_child_identity);
    PT_RUN(test_control_running_process);
    return pt_finish();
}
