/*
 * gone_thread: a traced program whose named thread records its events and
 * ends long before anyone drains them (test_ptlog_record_tnames): its
 * /proc entry is gone by then, so only the name it published at its first
 * event can name it in a log written by another process.
 *
 * The thread names itself "gone-worker" (pthread_setname_np) and records
 * EVENTS events of `gw.tick`, then renames itself "gone-renamed" and ends;
 * the main thread joins it, records one `gw.main` and ends as ENDING asks
 * (exit: status 0; kill: SIGKILL).
 *
 *   gone_thread bare ENDING         in a stream someone else made (ptlog record)
 *   gone_thread bare-wait ENDING    opens its names, prints "ready", waits for SIGUSR1 (ptlog attach)
 *   gone_thread spoil-wait ENDING   as bare-wait, but the thread, after its events, spoils its own entry
 *                                   in the name map (its 16 bytes without a NUL), as a scribbling
 *                                   program may: its controller refuses it and counts it
 *   gone_thread fork OUT ENDING     its own INHERITED stream (LOOP stream, APPEND log to OUT): a forked
 *                                   child does the above; the parent reaps it, then flushes and shuts down
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#define EVENTS 20

static trace_event_id_t tick_id, main_id;
static int spoil; /* spoil-wait: the worker spoils its own entry in the name map */

/* LeakSanitizer asks whether to run (ignored without it): not in the forked child, whose heap is its parent's copy. */
static volatile int in_forked_child;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_forked_child; }

static void die(const char *what, int e)
{
    fprintf(stderr, "gone_thread: %s: %s\n", what, strerror(e));
    exit(1);
}

/* Overwrites "gone-worker" and its NULs (the slot's 16 bytes) in the named map of this process. */
static void spoil_worker_name(void)
{
    static const char entry[] = "gone-worker"; /* with its NUL: the slot, not a longer text */
    char prefix[64], path[512];
    snprintf(prefix, sizeof prefix, "tracelog.%u.%d.names.", (unsigned)geteuid(), (int)getpid());
    DIR *d = opendir("/dev/shm");
    struct dirent *de;
    int spoiled = 0;
    while (d && !spoiled && (de = readdir(d))) {
        if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
            continue;
        snprintf(path, sizeof path, "/dev/shm/%s", de->d_name);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        struct stat st;
        char *m = fd < 0 || fstat(fd, &st) != 0 ? MAP_FAILED
                                                 : mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd >= 0)
            close(fd);
        if (m == MAP_FAILED)
            continue;
        char *at = memmem(m, (size_t)st.st_size, entry, sizeof entry);
        if (at) {
            memset(at, 'x', 16);
            spoiled = 1;
        }
        munmap(m, (size_t)st.st_size);
    }
    if (d)
        closedir(d);
    if (!spoiled)
        die("no gone-worker entry in a name map of this process", ENOENT);
}

static void *worker(void *arg)
{
    (void)arg;
    int e = pthread_setname_np(pthread_self(), "gone-worker");
    if (e)
        die("pthread_setname_np", e);
    for (int i = 0; i < EVENTS; i++)
        posix_trace_event(tick_id, &i, sizeof i);
    if (spoil) /* before it ends: its end may wake the controller's drain, which then reads the entry */
        spoil_worker_name();
    /* A later name: the log keeps the first, the only one it could have seen (the thread is gone before any drain). */
    pthread_setname_np(pthread_self(), "gone-renamed");
    return NULL;
}

static void open_names(void)
{
    int e = posix_trace_eventid_open("gw.tick", &tick_id);
    if (!e)
        e = posix_trace_eventid_open("gw.main", &main_id);
    if (e)
        die("posix_trace_eventid_open", e);
}

static void workload(int kill_it)
{
    pthread_t t;
    int e = pthread_create(&t, NULL, worker, NULL);
    if (e)
        die("pthread_create", e);
    pthread_join(t, NULL);
    posix_trace_event(main_id, "end", 3);
    if (kill_it)
        raise(SIGKILL);
    exit(0);
}

static int ending(const char *s)
{
    if (strcmp(s, "exit") != 0 && strcmp(s, "kill") != 0) {
        fprintf(stderr, "gone_thread: ENDING is exit or kill\n");
        exit(2);
    }
    return s[0] == 'k';
}

static int run_fork(const char *out, int kill_it)
{
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die(out, errno);
    open_names();
    trace_attr_t attr;
    trace_id_t trid;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP); /* drained only by the flush below */
    posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED);
    int e = posix_trace_create_withlog(0, &attr, fd, &trid);
    if (!e)
        e = posix_trace_start(trid);
    if (e)
        die("posix_trace_create_withlog", e);
    pid_t pid = fork();
    if (pid < 0)
        die("fork", errno);
    if (pid == 0) {
        in_forked_child = 1;
        workload(kill_it);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid", errno);
    if ((e = posix_trace_flush(trid)) != 0 || (e = posix_trace_shutdown(trid)) != 0)
        die("posix_trace_flush", e);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "bare") == 0) {
        int kill_it = ending(argv[2]);
        open_names();
        workload(kill_it);
    }
    if (argc == 3 && (strcmp(argv[1], "bare-wait") == 0 || strcmp(argv[1], "spoil-wait") == 0)) {
        spoil = argv[1][0] == 's';
        int kill_it = ending(argv[2]), sig;
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        pthread_sigmask(SIG_BLOCK, &usr1, NULL);
        open_names();
        printf("ready\n");
        fflush(stdout);
        sigwait(&usr1, &sig);
        workload(kill_it);
    }
    if (argc == 4 && strcmp(argv[1], "fork") == 0)
        return run_fork(argv[2], ending(argv[3]));
    fprintf(stderr, "usage: gone_thread bare|bare-wait|spoil-wait exit|kill\n       gone_thread fork OUT exit|kill\n");
    return 2;
}
