/*
 * Kernel thread ids (issue 9, item 4, the producer side): every event
 * carries the recording thread's gettid() next to its pthread_t, from
 * posix_trace_event through the stream's lanes and its consumer to the
 * tracelog_event the log writer gets. The id is asked of the kernel once per
 * thread (cached in initial-exec TLS, so a signal handler may be first),
 * never once per event, and asked again in a forked child.
 *
 * The events are taken from the stream through the library's internal
 * consumer (posix_trace_event_info has no field for the kernel id). The log
 * file keeps the id too (format 1.1 THREADS blocks): read back through
 * tracelog_reader, every event has its thread's kernel id.
 */
#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix/internal.h"
#include "posix_helpers.h"
#include "tracelog/reader.h"

/*
 * Counts the library's gettid system calls: it makes them through
 * syscall(), which this definition takes over (the arguments of the other
 * calls, futexes, are passed on as they came).
 */
static _Atomic unsigned long gettid_calls;

long syscall(long number, ...)
{
    static long (*real)(long, ...);
    if (!real)
        real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
    va_list ap;
    va_start(ap, number);
    long a[6];
    for (int i = 0; i < 6; i++)
        a[i] = va_arg(ap, long);
    va_end(ap);
    if (number == SYS_gettid)
        atomic_fetch_add(&gettid_calls, 1);
    return real(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static trace_event_id_t ev_tid;

enum { THREADS = 4, PER_THREAD = 5000 };

/* Records PER_THREAD events whose data is the thread's own gettid(). */
static void *record_thread(void *arg)
{
    (void)arg;
    uint32_t me = (uint32_t)gettid();
    for (int i = 0; i < PER_THREAD; i++)
        posix_trace_event(ev_tid, &me, sizeof me);
    return NULL;
}

typedef struct taken {
    uint32_t id, pid, ktid, data;
    size_t len;
} taken;

/* Every event of the stream (without log), as the consumer delivers it. */
static size_t take_all(trace_id_t trid, taken *out, size_t max)
{
    tl_trace *t;
    if (tl_posix_acquire(trid, 1u << TL_ACTIVE, &t) != 0)
        TL_DIE("acquire");
    size_t n = 0;
    tracelog_event ev;
    tl_lock_take(t->read_lock);
    while (n < max && tl_consumer_take_wait(t->active.consumer, &ev) == TL_TAKE_EVENT) {
        out[n] = (taken){ev.event_id, ev.pid, ev.kernel_tid, 0, ev.payload_len};
        if (ev.payload_len == sizeof out[n].data)
            memcpy(&out[n].data, ev.payload, sizeof out[n].data);
        n++;
    }
    tl_lock_give(t->read_lock);
    tl_posix_release(t);
    return n;
}

static taken events[THREADS * PER_THREAD + 1100];

/* Threads: each event has its thread's kernel id, asked once per thread. */
static void test_threads(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 4u << 20, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    uint32_t me = (uint32_t)gettid();
    posix_trace_event(ev_tid, &me, sizeof me); /* this thread asks here, if no call before did */
    unsigned long before = atomic_load(&gettid_calls);
    pthread_t th[THREADS];
    for (int i = 0; i < THREADS; i++)
        if (pthread_create(&th[i], NULL, record_thread, NULL))
            TL_DIE("pthread_create");
    for (int i = 0; i < THREADS; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 1000; i++)
        posix_trace_event(ev_tid, &me, sizeof me);
    unsigned long calls = atomic_load(&gettid_calls) - before;
    CHECK_MSG(calls == THREADS, "%lu gettid calls for %d threads recording %d events each (one per thread)", calls,
              THREADS, PER_THREAD);
    size_t n = take_all(t, events, sizeof events / sizeof events[0]);
    size_t user = 0, right = 0, system = 0;
    for (size_t i = 0; i < n; i++) {
        if (events[i].id == ev_tid) {
            user++;
            right += events[i].len == sizeof(uint32_t) && events[i].ktid == events[i].data && events[i].ktid != 0;
        } else if (events[i].id == POSIX_TRACE_START) {
            system++;
            CHECK_MSG(events[i].ktid == me, "START carries the kernel id of the thread that called start");
        }
    }
    CHECK_EQ(user, THREADS * PER_THREAD + 1001);
    CHECK_EQ(right, user);
    CHECK_EQ(system, 1);
    pt_shutdown(t);
}

/* A signal handler that records its thread's first event. */
static trace_event_id_t ev_signal;

static void on_usr1(int sig)
{
    (void)sig;
    uint32_t me = (uint32_t)gettid();
    posix_trace_event(ev_signal, &me, sizeof me);
}

static void *signal_thread(void *arg)
{
    sigset_t *wait = arg;
    int sig;
    sigwait(wait, &sig); /* released after the signal below was handled here */
    return NULL;
}

static void test_signal_handler_first(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr2;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    pthread_sigmask(SIG_BLOCK, &usr2, NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, signal_thread, &usr2))
        TL_DIE("pthread_create");
    usleep(10000);
    pthread_kill(th, SIGUSR1); /* the thread's first event comes from the handler */
    usleep(10000);
    pthread_kill(th, SIGUSR2);
    pthread_join(th, NULL);
    size_t n = take_all(t, events, 64);
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (events[i].id == ev_signal) {
            found++;
            CHECK_MSG(events[i].ktid == events[i].data && events[i].ktid != (uint32_t)gettid(),
                      "the handler's event has its thread's kernel id (%u, want %u)", events[i].ktid, events[i].data);
        }
    CHECK_EQ_INT(found, 1);
    signal(SIGUSR1, SIG_DFL);
    pthread_sigmask(SIG_UNBLOCK, &usr2, NULL);
    pt_shutdown(t);
}

/* A forked child (inherited stream) asks again: its events have its own id, not the forking thread's. */
static void test_fork_child(void)
{
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_LOOP, 1u << 20, 16);
    posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED);
    trace_id_t t;
    CHECK_ERR(posix_trace_create(0, &a, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    uint32_t me = (uint32_t)gettid();
    posix_trace_event(ev_tid, &me, sizeof me); /* the parent's id is cached now */
    pid_t pid = pt_fork(10);
    if (pid == 0) {
        uint32_t child = (uint32_t)gettid();
        posix_trace_event(ev_tid, &child, sizeof child);
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    size_t n = take_all(t, events, 64);
    int child_events = 0;
    for (size_t i = 0; i < n; i++)
        if (events[i].id == ev_tid && events[i].pid == (uint32_t)pid) {
            child_events++;
            CHECK_MSG(events[i].ktid == (uint32_t)pid, "the child's event has the child's kernel id %d (got %u)",
                      (int)pid, events[i].ktid);
        }
    CHECK_EQ_INT(child_events, 1);
    pt_shutdown(t);
}

/* The log writer gets the id (the tracelog_event of recorder/drain.c); the file keeps it once the writer does. */
static void test_log(void)
{
    int fd = tl_test_tmpfd();
    trace_attr_t a;
    pt_attr(&a, POSIX_TRACE_FLUSH, 1u << 20, 16);
    posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND);
    trace_id_t t;
    CHECK_ERR(posix_trace_create_withlog(0, &a, fd, &t), 0);
    CHECK_ERR(posix_trace_start(t), 0);
    pthread_t th;
    if (pthread_create(&th, NULL, record_thread, NULL))
        TL_DIE("pthread_create");
    pthread_join(th, NULL);
    pt_shutdown(t);
    tracelog_reader *r;
    CHECK_STATUS(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK);
    tracelog_event ev;
    size_t n = 0, right = 0;
    for (memset(&ev, 0, sizeof ev); tracelog_reader_next(r, &ev) == TRACELOG_OK; memset(&ev, 0, sizeof ev)) {
        uint32_t data;
        if (ev.event_id != ev_tid || ev.payload_len != sizeof data)
            continue;
        memcpy(&data, ev.payload, sizeof data);
        n++;
        right += ev.kernel_tid == data;
    }
    tracelog_reader_close(r);
    CHECK_EQ(n, PER_THREAD);
    CHECK_EQ(right, n); /* the log keeps each event's kernel thread id (format 1.1 THREADS blocks) */
    close(fd);
}

int main(void)
{
    pt_watchdog(PT_SANITIZED ? 120 : 30);
    if (posix_trace_eventid_open("tid: event", &ev_tid) || posix_trace_eventid_open("tid: signal", &ev_signal))
        TL_DIE("eventid_open");
    PT_RUN(test_threads);
    PT_RUN(test_signal_handler_first);
    PT_RUN(test_fork_child);
    PT_RUN(test_log);
    return pt_finish();
}
