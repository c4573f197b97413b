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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
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

/* Both threads spin until both are there: they call within nanoseconds of each other (a barrier's
   wake-up let the first one through alone, most rounds). */
static void *race(void *p)
{
    racer *r = p;
    atomic_fetch_add(r->ready, 1);
    while (atomic_load(r->ready) < 2)
        ;
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

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 280 : 120);
    PT_RUN(test_two_shutdowns_at_once);
    PT_RUN(test_two_closes_at_once);
    return pt_finish();
}
