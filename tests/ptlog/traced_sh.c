/*
 * traced_sh: a program linked with libtracelog that makes one trace call
 * (an event "traced_sh"), then becomes sh with its arguments, so that the
 * tests of ptlog record can give a traced program any exit status, signal
 * or core dump (sh -c 'kill -HUP $$'): ptlog record passes the status of a
 * program that took its stream up, and refuses one that never did (exit 3).
 * It waits 0.2 s before it becomes sh, so that its controller has seen it
 * as itself: the log's process is traced_sh, whatever the load.
 *
 *   traced_sh [SH-ARGS...]
 */
#include <stdio.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    (void)argc;
    trace_event_id_t id;
    if (posix_trace_eventid_open("traced_sh", &id) != 0) {
        perror("traced_sh: posix_trace_eventid_open");
        return 1;
    }
    posix_trace_event(id, NULL, 0);
    struct timespec pause = {0, 200000000};
    nanosleep(&pause, NULL);
    argv[0] = "sh";
    execv("/bin/sh", argv);
    perror("traced_sh: /bin/sh");
    return 127;
}
