/*
 * Reading events: the getnext family on active streams without log (online
 * analysis) and on pre-recorded streams. A stream with log belongs to its
 * log: its events are read from the log, and these calls return EINVAL on it
 * (the standard leaves that case unspecified).
 */
#define _GNU_SOURCE /* ppoll */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "common/bytes.h"
#include "posix/internal.h"
#include "posix/read.h"

/* A sleeping reader looks again at least this often: for a traced process's end, for a wake-up a producer
   missed (it reads the waiter count without a fence), and for a signal (see read_blocked). */
#define WAKE_CHECK_NS 10000000

typedef enum mode { BLOCK, TRY, TIMED } mode;

typedef struct out_args {
    struct posix_trace_event_info *ei;
    void *data;
    size_t num_bytes;
    size_t *data_len;
    int *unavailable;
} out_args;

static void deliver(const out_args *o, const tracelog_event *ev)
{
    size_t copy = o->data ? (ev->payload_len < o->num_bytes ? ev->payload_len : o->num_bytes) : 0;
    tl_copy_payload(o->data, ev->payload, (uint32_t)copy); /* most are short: no call to memcpy */
    o->ei->posix_event_id = ev->event_id;
    o->ei->posix_pid = (pid_t)ev->pid;
    o->ei->posix_prog_address = (void *)(uintptr_t)ev->address;
    o->ei->posix_thread_id = (pthread_t)ev->tid;
    o->ei->posix_timestamp = tl_timespec(ev->timestamp_ns);
    /* A read cut short overrides a record cut short (POSIX). */
    o->ei->posix_truncation_status = copy < ev->payload_len ? POSIX_TRACE_TRUNCATED_READ : (int)ev->truncation;
    if (o->data_len)
        *o->data_len = copy;
    *o->unavailable = 0;
}

/* Caller holds t's read lock (tl_posix_lock_prerecorded). */
static int read_prerecorded(tl_trace *t, const out_args *o)
{
    tracelog_event ev;
    tracelog_status st = tracelog_reader_next(t->pre.reader, &ev);
    if (st == TRACELOG_OK)
        deliver(o, &ev);
    tl_lock_give(t->read_lock);
    if (st == TRACELOG_END) {
        *o->unavailable = 1;
        if (o->data_len)
            *o->data_len = 0;
        return 0;
    }
    return st == TRACELOG_OK ? 0 : EIO;
}

int tl_posix_notice_end(tl_trace *t)
{
    tl_proc_end end;
    if (!t->active.remote || t->active.log || t->active.end_seen || !tl_remote_ended(t->active.remote, &end))
        return 0;
    tl_remote_end_seen(t->active.stream, t->active.consumer, t->attr.__inheritance == POSIX_TRACE_INHERITED);
    t->active.end_data[0] = end.how;
    t->active.end_data[1] = end.code;
    t->active.end_seen = 1;
    return 1;
}

/*
 * The traced process's end, once every event it recorded was read: first
 * an OVERFLOW for each loss no later event marked (a record it died in the
 * middle of, last in its lane), then the event a controller's log ends with
 * (log.c), stamped now, so after them. 1 while there is one.
 */
static int take_end(tl_trace *t, tracelog_event *ev)
{
    if (t->active.end_seen != 1)
        return 0;
    if (!t->active.faulted && tl_consumer_take_unmarked_loss(t->active.consumer, ev))
        return 1;
    t->active.end_seen = 2;
    *ev = (tracelog_event){.timestamp_ns = tl_consumer_now(t->active.consumer),
                           .event_id = TL_PROCESS_END_EVENT,
                           .pid = (uint32_t)tl_remote_pid(t->active.remote),
                           .payload_len = sizeof t->active.end_data,
                           .payload = t->active.end_data};
    return 1;
}

/*
 * One attempt: 1 delivered, 0 nothing ready. Nothing ready (or a record
 * not committed yet) in a controller's stream: the traced process may
 * have ended, and then nothing is waited for. Caller holds read_lock; for a
 * controller's stream this runs under the buffer's SIGBUS guard (deliver
 * copies from the buffer into the caller's memory: nothing allocated).
 */
typedef struct attempt {
    tl_trace *t;
    const out_args *o;
} attempt;

static int take_once(void *arg)
{
    attempt *a = arg;
    tl_trace *t = a->t;
    tracelog_event ev;
    tl_consumer *c = t->active.consumer;
    tl_take r = tl_consumer_take(c, &ev, 0);
    if (r != TL_TAKE_EVENT && tl_posix_notice_end(t))
        r = tl_consumer_take(c, &ev, 0);
    if (r == TL_TAKE_WAIT)
        r = tl_consumer_take_wait(c, &ev);
    if (r == TL_TAKE_EVENT || take_end(t, &ev)) {
        deliver(a->o, &ev);
        r = TL_TAKE_EVENT;
    }
    return r == TL_TAKE_EVENT;
}

/*
 * The traced process shrank the buffer under a read: what it held is lost.
 * The reads go on as for an ended process (how unknown), after one OVERFLOW
 * for the loss. 1 while there is an event.
 */
static int take_fault(tl_trace *t, tracelog_event *ev)
{
    if (t->active.end_seen != 3)
        return take_end(t, ev);
    t->active.end_seen = 1; /* the end comes next */
    *ev = (tracelog_event){.timestamp_ns = tl_consumer_now(t->active.consumer), .event_id = POSIX_TRACE_OVERFLOW};
    return 1;
}

static int try_take(tl_trace *t, const out_args *o)
{
    attempt a = {t, o};
    if (t->active.remote) /* a controller's look at the process (its end, its names) makes system calls */
        tl_posix_cancel_off();
    tl_lock_take(t->read_lock);
    int r;
    if (!t->active.remote)
        r = take_once(&a);
    else if (tl_remote_faulted(t->active.remote) || (r = tl_remote_guard(t->active.remote, take_once, &a)) == EFAULT) {
        if (!t->active.faulted) { /* first seen now: the end (unknown) follows an OVERFLOW */
            t->active.faulted = 1;
            t->active.end_seen = 3;
            t->active.end_data[0] = TL_END_UNKNOWN;
            t->active.end_data[1] = 0;
        }
        tracelog_event ev;
        r = take_fault(t, &ev);
        if (r)
            deliver(o, &ev);
    }
    tl_lock_give(t->read_lock);
    if (t->active.remote)
        tl_posix_cancel_on();
    return r;
}

static int valid_time(const struct timespec *ts)
{
    return ts && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000;
}

/* Sleeps until an event may be there (after seq), the deadline passes or WAKE_CHECK_NS pass: 0, ETIMEDOUT or EINTR. */
static int sleep_for_event(tl_trace *t, uint32_t seq, const struct timespec *deadline)
{
    struct timespec now, until;
    clock_gettime(CLOCK_REALTIME, &now);
    if (deadline && (now.tv_sec > deadline->tv_sec ||
                     (now.tv_sec == deadline->tv_sec && now.tv_nsec >= deadline->tv_nsec)))
        return ETIMEDOUT;
    uint64_t ns = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec + WAKE_CHECK_NS;
    until = tl_timespec(ns);
    if (deadline && (deadline->tv_sec < until.tv_sec ||
                     (deadline->tv_sec == until.tv_sec && deadline->tv_nsec < until.tv_nsec)))
        until = *deadline;
    return tl_stream_sleep(t->active.stream, seq, &until);
}

/*
 * Looks once more, then sleeps until an event may be there (the stream's
 * waiter count and futex word are in the buffer: for a controller's stream
 * this runs under its guard; try_take inside takes the lock under a guard
 * of its own). result: -1 an event was delivered, else sleep_for_event's.
 */
typedef struct wait_args {
    tl_trace *t;
    const out_args *o;
    const struct timespec *abstime;
    int result;
} wait_args;

static int wait_once(void *arg)
{
    wait_args *w = arg;
    uint32_t seq = tl_stream_wait_begin(w->t->active.stream);
    w->result = try_take(w->t, w->o) ? -1 : sleep_for_event(w->t, seq, w->abstime);
    tl_stream_wait_end(w->t->active.stream);
    return 0;
}

/*
 * EINTR, exactly (posix-trace.md P8: "shall fail ... interrupted by a
 * signal"): the wait reports EINTR if and only if a signal handler ran on
 * this thread while it waited.
 *
 * The wait is a loop of sleeps of at most WAKE_CHECK_NS on the stream's
 * futex word, with a look at the stream (and at a traced process's end)
 * between them. A futex wait may fail with EINTR when a handler runs during
 * the sleep, but nothing tells that one ran between two sleeps, and that
 * is where one lands whenever the thread is not inside the futex call:
 * taking the read lock, looking at the lanes, waiting for the CPU after a
 * sleep timed out (the loss was a few tries in a hundred under load). No
 * system call unblocks signals and sleeps on a futex in one step, as ppoll
 * and sigsuspend do for descriptors and signals, so blocking signals only
 * between the sleeps leaves a gap between their unblocking and the futex
 * call, and between its return and the blocking again. Hence:
 *
 * From the moment the call found nothing to read until it returns, the
 * thread's asynchronous signals are blocked (the caller's mask plus every
 * signal but the synchronous ones: a blocked SIGSEGV, SIGBUS, ... raised by
 * a fault kills the process, and SIGBUS is the buffer guard's). They are
 * let through at one place only, handler_ran: ppoll with the caller's mask
 * and a zero timeout unblocks them, delivers what is pending, blocks them
 * again, all in one system call, and fails with EINTR if and only if a
 * handler ran (one that ran nothing, an ignored or stopping signal, is
 * restarted by the kernel and returns 0). It runs before every look and
 * sleep, and its EINTR ends the call; a synchronous signal sent by kill()
 * while the thread sleeps ends the sleep with EINTR, which ends the call
 * too, if its handler was installed without SA_RESTART (with it, the kernel
 * restarts the futex wait: the one case reported late or not at all). So
 * no other handler runs on this thread during the wait without
 * the call returning EINTR, and none that ran is missed; the wait never
 * sleeps through a signal for longer than WAKE_CHECK_NS (10 ms), which is
 * the latency of its EINTR. A signal directed at the process rather than
 * the thread may meanwhile be taken by another thread that does not block
 * it, as the kernel may choose any such thread.
 *
 * An event ready when the call begins is taken without touching the mask
 * (the common case of an online reader); a handler that runs before the
 * call found the stream empty ran before the wait and is not reported.
 * At the deadline, a handler that ran comes first: EINTR, not ETIMEDOUT.
 * The caller's mask is restored exactly, on every return and if the
 * thread is cancelled: the wait is a cancellation point, as the standard's
 * blocking functions are, acted upon before each sleep (the futex call is
 * none), so within WAKE_CHECK_NS of pthread_cancel.
 */
static int handler_ran(const sigset_t *caller)
{
    static const struct timespec now = {0, 0};
    return ppoll(NULL, 0, &now, caller) < 0 && errno == EINTR;
}

static void restore_mask(void *caller) { pthread_sigmask(SIG_SETMASK, caller, NULL); }
static void give_use_back(void *t) { tl_posix_unuse(t); }

static int wait_blocked(tl_trace *t, const out_args *o, const struct timespec *abstime, const sigset_t *caller)
{
    for (;;) {
        if (__atomic_load_n(&t->dying, __ATOMIC_ACQUIRE))
            return EINVAL; /* shut down while we waited */
        if (handler_ran(caller))
            return EINTR;
        pthread_testcancel();
        wait_args w = {t, o, abstime, 0};
        /* Once the buffer is lost, its zero-filled replacement is slept on as an empty stream's. */
        int e = tl_remote_faulted(t->active.remote) ? wait_once(&w) : tl_remote_guard(t->active.remote, wait_once, &w);
        if (e == EFAULT) /* lost now: the next attempt reads the end */
            continue;
        if (w.result == -1)
            return 0;
        if (w.result == ETIMEDOUT)
            return handler_ran(caller) ? EINTR : ETIMEDOUT;
        if (w.result)
            return w.result; /* EINTR: a synchronous signal's handler ran during the sleep */
    }
}

static int read_blocked(tl_trace *t, const out_args *o, const struct timespec *abstime)
{
    sigset_t block, caller;
    sigfillset(&block);
    static const int synchronous[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS};
    for (size_t i = 0; i < sizeof synchronous / sizeof synchronous[0]; i++)
        sigdelset(&block, synchronous[i]);
    pthread_sigmask(SIG_BLOCK, &block, &caller);
    int e;
    pthread_cleanup_push(give_use_back, t); /* cancelled: the use getnext took */
    pthread_cleanup_push(restore_mask, &caller);
    e = wait_blocked(t, o, abstime, &caller);
    pthread_cleanup_pop(1);
    pthread_cleanup_pop(0);
    return e;
}

static int read_active(tl_trace *t, const out_args *o, mode m, const struct timespec *abstime)
{
    if (__atomic_load_n(&t->dying, __ATOMIC_ACQUIRE))
        return EINVAL;
    if (try_take(t, o))
        return 0;
    if (m == TRY) {
        *o->unavailable = 1;
        if (o->data_len)
            *o->data_len = 0;
        return 0;
    }
    if (m == TIMED && !valid_time(abstime))
        return EINVAL;
    return read_blocked(t, o, m == TIMED ? abstime : NULL);
}

static int getnext(trace_id_t trid, const out_args *o, mode m, const struct timespec *abstime)
{
    if (!o->ei || !o->unavailable)
        return EINVAL;
    if (m != TRY) /* a cancellation point here, where nothing is held: a log's reads are none (common/nocancel.h) */
        pthread_testcancel();
    tl_trace *t;
    int e = m == TRY ? ENOENT : tl_posix_lock_prerecorded(trid, &t); /* a log: its lock, no use */
    if (e != ENOENT)
        return e ? e : read_prerecorded(t, o);
    e = tl_posix_use(trid, 1u << TL_ACTIVE, &t); /* not acquire: the wait is a cancellation point */
    if (e)
        return e;
    e = read_active(t, o, m, abstime);
    tl_posix_unuse(t);
    return e;
}

int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *restrict event,
                              void *restrict data, size_t num_bytes, size_t *restrict data_len,
                              int *restrict unavailable)
{
    out_args o = {event, data, num_bytes, data_len, unavailable};
    return getnext(trid, &o, BLOCK, NULL);
}

int posix_trace_timedgetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict event,
                                   void *restrict data, size_t num_bytes, size_t *restrict data_len,
                                   int *restrict unavailable, const struct timespec *restrict abstime)
{
    out_args o = {event, data, num_bytes, data_len, unavailable};
    return getnext(trid, &o, TIMED, abstime);
}

int posix_trace_trygetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict event,
                                 void *restrict data, size_t num_bytes, size_t *restrict data_len,
                                 int *restrict unavailable)
{
    out_args o = {event, data, num_bytes, data_len, unavailable};
    return getnext(trid, &o, TRY, NULL);
}
