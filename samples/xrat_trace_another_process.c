/*
 * The Rationale's first "Trace Operation Control" example (XRAT B.2.11,
 * the figure "Trace Another Process"): a trace controller process starts
 * an instrumented program as a child and traces it into a log. The
 * Rationale's verbatim text was not at hand: this program follows its
 * description (fork, the child execs the traced program, the parent
 * creates a stream with log for the child's pid, starts it, waits for the
 * child, shuts the stream down), with only main() and the includes added.
 *
 *   xrat_trace_another_process LOG [COUNT]
 *
 * The traced program is this one, run as "xrat_trace_another_process
 * --traced COUNT": it opens the event type "xrat:work" and records COUNT
 * events (each carrying its sequence number), then exits.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

static int traced(long count)
{
    trace_event_id_t work;
    posix_trace_eventid_open("xrat:work", &work);
    for (long i = 0; i < count; i++)
        posix_trace_event(work, &i, sizeof i);
    return 0;
}

int main(int argc, char *argv[])
{
    if (argc == 3 && strcmp(argv[1], "--traced") == 0)
        return traced(atol(argv[2]));
    if (argc < 2) {
        fprintf(stderr, "usage: %s LOG [COUNT]\n", argv[0]);
        return 2;
    }
    const char *count = argc > 2 ? argv[2] : "1000";
    int fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    /* The child must not run before the stream exists: it waits for a byte. */
    int go[2];
    if (pipe(go) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0) {
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(1);
        execl("/proc/self/exe", argv[0], "--traced", count, (char *)NULL);
        _exit(127);
    }
    close(go[0]);

    trace_attr_t attr;
    trace_id_t trid;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "trace-another-process");
    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
    int e = posix_trace_create_withlog(pid, &attr, fd, &trid);
    if (e == 0)
        e = posix_trace_start(trid);
    if (write(go[1], "g", 1) != 1)
        e = e ? e : 1;
    close(go[1]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (e) {
        fprintf(stderr, "tracing pid %d: %s\n", (int)pid, strerror(e));
        return 1;
    }
    e = posix_trace_shutdown(trid);
    if (e) {
        fprintf(stderr, "shutdown: %s\n", strerror(e));
        return 1;
    }
    printf("traced pid %d (exit status %d) into %s\n", (int)pid, WEXITSTATUS(status), argv[1]);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
