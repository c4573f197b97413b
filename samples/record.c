/*
 * record: an ordinary program instrumented with the POSIX tracing interface.
 * It traces itself into a log file, running a small simulated workload on
 * three threads: each request is a "request:begin"/"request:end" pair (which
 * `ptlog convert --to chrome` turns into duration slices) with the request
 * number as payload, plus a text "note" event now and then.
 *
 *   record [FILE.ptl] [REQUESTS]       (default: demo.ptl, 200)
 *   ptlog dump FILE.ptl
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

static trace_event_id_t ev_begin, ev_end, ev_note;
static long requests_per_thread;

static void work_a_little(unsigned seed)
{
    struct timespec pause = {0, 20000 + (long)(seed % 7) * 10000};
    nanosleep(&pause, NULL);
}

static void *worker(void *arg)
{
    unsigned id = (unsigned)(size_t)arg;
    for (long i = 0; i < requests_per_thread; i++) {
        unsigned request = id * 1000000u + (unsigned)i;
        posix_trace_event(ev_begin, &request, sizeof request);
        work_a_little(request);
        if (i % 50 == 0) {
            char note[48];
            int n = snprintf(note, sizeof note, "thread %u reached request %ld", id, i);
            posix_trace_event(ev_note, note, (size_t)n);
        }
        posix_trace_event(ev_end, &request, sizeof request);
    }
    return NULL;
}

static int fail(const char *what, int e)
{
    fprintf(stderr, "record: %s: %s\n", what, strerror(e));
    return 1;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "demo.ptl";
    long total = argc > 2 ? atol(argv[2]) : 200;
    requests_per_thread = total > 3 ? total / 3 : 1;

    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return fail(path, errno);
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "record-demo");
    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);

    int e;
    trace_id_t trid;
    if ((e = posix_trace_eventid_open("request:begin", &ev_begin)) ||
        (e = posix_trace_eventid_open("request:end", &ev_end)) ||
        (e = posix_trace_eventid_open("note", &ev_note)))
        return fail("posix_trace_eventid_open", e);
    if ((e = posix_trace_create_withlog(0, &attr, fd, &trid)))
        return fail("posix_trace_create_withlog", e);
    posix_trace_attr_destroy(&attr);
    if ((e = posix_trace_start(trid)))
        return fail("posix_trace_start", e);

    pthread_t threads[3];
    for (size_t i = 0; i < 3; i++)
        pthread_create(&threads[i], NULL, worker, (void *)(i + 1));
    for (size_t i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);

    if ((e = posix_trace_stop(trid)) || (e = posix_trace_shutdown(trid)))
        return fail("posix_trace_shutdown", e);
    close(fd);
    fprintf(stderr, "record: wrote %ld requests from 3 threads to %s\n", requests_per_thread * 3, path);
    return 0;
}
