/*
 * Threads that misuse the API on one stream (posix-trace.md P36: every trace
 * function is thread-safe, and those XSH 2.9.5.2 lists may be cancellation
 * points): two shutdowns or closes of one handle at once, a thread cancelled
 * inside a trace function, a log read through a pipe while another thread
 * asks for its names, status and type lists walked from several threads.
 * What must hold: one call wins and the other gets EINVAL; a cancelled call
 * leaves no use, lock or half-done work behind (shutdown, close and exit()
 * still finish); no memory is touched after it is freed.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "posix_helpers.h"

static int rounds(int quiet, int sanitized) { return PT_SANITIZED ? sanitized : quiet; }

/* A log of n events of `names` distinct names, flushed every `every` names (so its name blocks are spread). */
static int make_log(int names, int every)
{
    char path[] = "/tmp/tl-thread-misuse-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        TL_DIE("mkstemp");
    unlink(path);
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    trace_id_t trid;
    if (posix_trace_create_withlog(0, &attr, fd, &trid) || posix_trace_start(trid))
        TL_DIE("create_withlog");
    for (int i = 0; i < names; i++) {
        char name[32];
        trace_event_id_t id;
        snprintf(name, sizeof name, "misuse.%d", i);
        if (posix_trace_trid_eventid_open(trid, name, &id))
            TL_DIE("trid_eventid_open");
        posix_trace_event(id, &i, sizeof i);
        if (every && i % every == every - 1)
            posix_trace_flush(trid);
    }
    if (posix_trace_shutdown(trid))
        TL_DIE("shutdown");
    posix_trace_attr_destroy(&attr);
    return fd;
}

typedef struct {
    trace_id_t trid;
    atomic_int *ready;
    int (*call)(trace_id_t);
    int rc;
} racer;

/* Both threads spin (yielding: a spinner may wait for the other to be scheduled) until both are
   there: they call within nanoseconds of each other (a barrier's wake-up let the first one through
   alone, most rounds). */
static void *race(void *p)
{
    racer *r = p;
    atomic_fetch_add(r->ready, 1);
    while (atomic_load(r->ready) < 2)
        sched_yield();
    r->rc = r->call(r->trid);
    return NULL;
}

/* Two threads call `call` on trid at once: exactly one gets 0, the other EINVAL. */
static void race_two(trace_id_t trid, int (*call)(trace_id_t), const char *what, int round)
{
    atomic_int ready = 0;
    racer r[2] = {{trid, &ready, call, -1}, {trid, &ready, call, -1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        pthread_create(&th[i], NULL, race, &r[i]);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    int won = (r[0].rc == 0) + (r[1].rc == 0), lost = (r[0].rc == EINVAL) + (r[1].rc == EINVAL);
    CHECK_MSG(won == 1 && lost == 1, "%s, round %d: returned %s and %s, want 0 and EINVAL", what, round,
              pt_errname(r[0].rc), pt_errname(r[1].rc));
}

/* Both threads waited for the other's use for ever (the second hung 2 runs of 3 in 20000 rounds). */
static void test_two_shutdowns_at_once(void)
{
    for (int i = 0; i < rounds(2000, 300); i++) {
        trace_id_t trid;
        if (!CHECK_ERR(posix_trace_create(0, NULL, &trid), 0))
            return;
        race_two(trid, posix_trace_shutdown, "two shutdowns", i);
    }
}

static void test_two_closes_at_once(void)
{
    int fd = make_log(4, 0);
    for (int i = 0; i < rounds(2000, 300); i++) {
        trace_id_t trid;
        if (!CHECK_ERR(posix_trace_open(fd, &trid), 0))
            break;
        race_two(trid, posix_trace_close, "two closes", i);
    }
    close(fd);
}

/* The process's address space in KiB (VmSize), or 0. */
static unsigned long long vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %llu kB", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

/*
 * A destroyed stream's address range stayed mapped for ever (for a late
 * producer): create and shutdown in a loop grew the address space by 32 MiB
 * a round, and fork() failed with ENOMEM after a few thousand rounds (the
 * ranges counted as committed memory). At most the last 64 ranges are kept.
 */
static void test_address_space_after_many_streams(void)
{
    trace_id_t trid;
    for (int i = 0; i < 100; i++)
        if (!CHECK_ERR(posix_trace_create(0, NULL, &trid), 0) || !CHECK_ERR(posix_trace_shutdown(trid), 0))
            return;
    unsigned long long before = vm_size_kib();
    for (int i = 0; i < rounds(3000, 1000); i++)
        if (!CHECK_ERR(posix_trace_create(0, NULL, &trid), 0) || !CHECK_ERR(posix_trace_shutdown(trid), 0))
            return;
    unsigned long long after = vm_size_kib();
    CHECK_MSG(after < before + (1ull << 20), "the address space grew from %llu to %llu KiB", before, after);
    pid_t pid = pt_fork(30);
    if (pid == 0)
        _exit(0);
    int status = -1;
    if (CHECK_MSG(pid > 0, "fork: %s", strerror(errno)))
        waitpid(pid, &status, 0);
}

/* exit() on the main thread while another thread shuts a logged stream down: each round's child. */
static atomic_int exit_ready;
static trace_id_t exit_trid;

static void *shut_down_at_exit(void *arg)
{
    (void)arg;
    atomic_fetch_add(&exit_ready, 1);
    while (atomic_load(&exit_ready) < 2)
        ;
    posix_trace_shutdown(exit_trid);
    return NULL;
}

enum { EXIT_EVENTS = 100000 };

static void exit_child(int fd)
{
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH);
    trace_event_id_t id;
    if (posix_trace_create_withlog(0, &attr, fd, &exit_trid) || posix_trace_eventid_open("misuse.exit", &id) ||
        posix_trace_start(exit_trid))
        _exit(2);
    for (uint32_t i = 0; i < EXIT_EVENTS; i++)
        posix_trace_event(id, &i, sizeof i);
    pthread_t th;
    pthread_create(&th, NULL, shut_down_at_exit, NULL);
    atomic_fetch_add(&exit_ready, 1);
    while (atomic_load(&exit_ready) < 2)
        ;
    exit(0); /* at_exit's shutdown of the stream meets the other thread's */
}

/*
 * The exit hook's shutdown lost to the other thread's (EINVAL) and exit went
 * on while that thread wrote the log out: a log cut short. It waits for it
 * now. (Before the EINVAL, the two hung.)
 */
static void test_exit_while_another_thread_shuts_down(void)
{
    for (int round = 0; round < rounds(20, 5); round++) {
        char path[] = "/tmp/tl-thread-misuse-exit-XXXXXX";
        int fd = mkstemp(path);
        if (fd < 0)
            TL_DIE("mkstemp");
        unlink(path);
        pid_t pid = pt_fork(60);
        if (!CHECK_MSG(pid >= 0, "round %d: fork: %s", round, strerror(errno)))
            break;
        if (pid == 0)
            exit_child(fd);
        int status = 0;
        waitpid(pid, &status, 0);
        CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "round %d: the child's status %#x", round, status);
        tl_test_readout out;
        lseek(fd, 0, SEEK_SET);
        tl_test_read_fd(fd, NULL, &out);
        uint32_t id = UINT32_MAX;
        for (size_t i = 0; i < out.ntypes; i++)
            if (strcmp(out.type_names[i], "misuse.exit") == 0)
                id = out.type_ids[i];
        size_t user = 0;
        for (size_t i = 0; i < out.events.n; i++)
            user += out.events.ev[i].event_id == id;
        CHECK_MSG(out.info.clean && user == EXIT_EVENTS, "round %d: the log holds %zu of %d events, clean %d, "
                  "problems %llu", round, user, EXIT_EVENTS, out.info.clean, (unsigned long long)out.info.problems);
        tl_test_readout_free(&out);
        close(fd);
    }
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 280 : 120);
    PT_RUN(test_two_shutdowns_at_once);
    PT_RUN(test_two_closes_at_once);
    PT_RUN(test_address_space_after_many_streams);
    PT_RUN(test_exit_while_another_thread_shuts_down);
    return pt_finish();
}
