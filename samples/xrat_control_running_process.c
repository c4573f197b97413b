/*
 * The Rationale's second "Trace Operation Control" example (XRAT B.2.11):
 * a controller that traces a process already running, without a log, and
 * analyses its events as they come (the online analyser in the controller).
 * The Rationale's verbatim text was not at hand: this program follows its
 * description (create a stream for the process's pid, filter out an event
 * type, start, read events with posix_trace_getnext_event, stop, shut
 * down), with only main() and the includes added.
 *
 *   xrat_control_running_process [COUNT]
 *
 * The traced process is a child made here that records, until killed,
 * events "xrat:tick" (wanted) and "xrat:noise" (filtered out). The
 * controller reads COUNT ticks and prints how many it got and whether any
 * filtered event came through.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

static void running_process(int ready) __attribute__((noreturn));
static void running_process(int ready)
{
    trace_event_id_t tick, noise;
    posix_trace_eventid_open("xrat:tick", &tick);
    posix_trace_eventid_open("xrat:noise", &noise);
    if (write(ready, "r", 1) != 1)
        _exit(1);
    struct timespec pause = {0, 100000};
    for (long i = 0;; i++) {
        posix_trace_event(tick, &i, sizeof i);
        posix_trace_event(noise, NULL, 0);
        nanosleep(&pause, NULL);
    }
}

int main(int argc, char *argv[])
{
    long want = argc > 1 ? atol(argv[1]) : 100;
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t pid = fork();
    if (pid == 0)
        running_process(ready[1]);
    char c;
    if (read(ready[0], &c, 1) != 1)
        return 1;

    trace_attr_t attr;
    trace_id_t trid;
    trace_event_id_t tick, noise;
    trace_event_set_t filter;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP);
    int e = posix_trace_create(pid, &attr, &trid);
    if (e) {
        fprintf(stderr, "posix_trace_create(%d): %s\n", (int)pid, strerror(e));
        kill(pid, SIGKILL);
        return 1;
    }
    posix_trace_trid_eventid_open(trid, "xrat:tick", &tick);
    posix_trace_trid_eventid_open(trid, "xrat:noise", &noise);
    posix_trace_eventset_empty(&filter);
    posix_trace_eventset_add(noise, &filter);
    posix_trace_set_filter(trid, &filter, POSIX_TRACE_SET_EVENTSET);
    posix_trace_start(trid);

    long ticks = 0, noisy = 0, last = -1, in_order = 1;
    while (ticks < want) {
        struct posix_trace_event_info info;
        long data = 0;
        size_t len = 0;
        int unavailable = 0;
        e = posix_trace_getnext_event(trid, &info, &data, sizeof data, &len, &unavailable);
        if (e || unavailable)
            break;
        if (info.posix_event_id == noise)
            noisy++;
        if (info.posix_event_id == tick) {
            in_order &= last < 0 || data == last + 1;
            last = data;
            ticks++;
        }
    }
    posix_trace_stop(trid);
    posix_trace_shutdown(trid);
    kill(pid, SIGTERM);
    waitpid(pid, NULL, 0);
    printf("ticks %ld, in order %s, filtered events seen %ld\n", ticks, in_order ? "yes" : "no", noisy);
    return ticks == want && in_order && noisy == 0 ? 0 : 1;
}
