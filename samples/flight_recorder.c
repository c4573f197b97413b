/*
 * flight_recorder: keeps only the last few MiB of events of a long-running
 * program in a LOOP log of fixed size, like an aircraft's recorder. The log
 * is finalized when the program is told to stop (SIGTERM or SIGINT).
 *
 *   flight_recorder FILE.ptl [LOG_MIB] [SECONDS]   (default 4 MiB, run until signalled)
 *
 * The signal handler only sets a flag: posix_trace_shutdown is not
 * async-signal-safe, so main() calls it once the loop sees the flag.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: flight_recorder FILE.ptl [LOG_MIB] [SECONDS]\n");
        return 2;
    }
    size_t log_mib = argc > 2 ? (size_t)atol(argv[2]) : 4;
    double seconds = argc > 3 ? atof(argv[3]) : 0;
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "flight_recorder: %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "flight-recorder");
    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_LOOP);
    posix_trace_attr_setlogsize(&attr, log_mib << 20);
    trace_event_id_t tick;
    posix_trace_eventid_open("tick", &tick);
    trace_id_t trid;
    int e = posix_trace_create_withlog(0, &attr, fd, &trid);
    if (e) {
        fprintf(stderr, "flight_recorder: posix_trace_create_withlog: %s\n", strerror(e));
        return 1;
    }
    posix_trace_start(trid);
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    unsigned long n = 0;
    while (!stop_requested) {
        posix_trace_event(tick, &n, sizeof n);
        if (++n % 4096 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            double elapsed = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
            if (seconds > 0 && elapsed >= seconds)
                break;
            struct timespec nap = {0, 1000000};
            nanosleep(&nap, NULL);
        }
    }
    e = posix_trace_shutdown(trid);
    close(fd);
    fprintf(stderr, "flight_recorder: %lu events recorded; %s keeps the most recent ones%s%s\n", n, argv[1],
            e ? ": " : "", e ? strerror(e) : "");
    return e ? 1 : 0;
}
