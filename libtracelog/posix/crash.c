/*
 * Fatal signals while streams with log exist (the contract is in
 * include/tracelog/posix.h): write what each stream holds to its log, then
 * let the signal do what it did before the library came.
 *
 * Async-signal-safety. The handler itself uses only atomics, sigaction,
 * sigprocmask, alarm, raise, nanosleep and gettid. Writing a log is not
 * async-signal-safe (the writer allocates and compresses), so it is fenced:
 *  - the crashing thread never waits for a lock it holds itself (a log it
 *    was writing is skipped) and waits a bounded time for other threads';
 *  - the fatal signals are blocked while the handler runs, so a fault in
 *    the writing ends the process at once (the kernel's default action for
 *    a blocked synchronous fault); an abort() there comes back here and is
 *    turned into the default action;
 *  - SIGALRM, armed for GUARD_SECONDS around the writing, ends the process
 *    with the original signal if the writing hangs.
 * A second thread crashing meanwhile waits for the first to finish writing,
 * then goes on as usual.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "posix/internal.h"
#include "posix/process.h"
#include "xproc/guard.h"

#define GUARD_SECONDS 2
#define NFATAL 5

static const int fatal[NFATAL] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};

/* Changed under watch_lock; read by the handler. */
static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(tl_recorder *) watched[TRACE_SYS_MAX];
static int nwatched;
static struct sigaction previous[NFATAL]; /* what was there before ours */
static int installed[NFATAL];             /* ours is in the chain (maybe under a later handler) */

enum { IDLE, WRITING, WRITTEN };
static _Atomic int state = IDLE;
static _Atomic pid_t writer_tid;  /* the thread writing the logs */
static _Atomic int crash_signal;

static struct sigaction guard_saved;
static unsigned guard_saved_alarm;

static int fatal_index(int sig)
{
    for (int i = 0; i < NFATAL; i++)
        if (fatal[i] == sig)
            return i;
    return -1;
}

/* The default action of sig, now: unblocked and raised in this thread. */
static void die_by(int sig)
{
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigaction(sig, &dfl, NULL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
    _exit(128 + sig); /* not reached: the default action of every fatal signal terminates */
}

static void on_guard(int sig)
{
    (void)sig;
    die_by(atomic_load(&crash_signal)); /* the writing hangs */
}

static void arm_guard(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_guard;
    sigaction(SIGALRM, &sa, &guard_saved);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGALRM);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL); /* the handler returns with the mask it came with */
    guard_saved_alarm = alarm(GUARD_SECONDS);
}

static void disarm_guard(void)
{
    alarm(0);
    sigaction(SIGALRM, &guard_saved, NULL);
    if (guard_saved_alarm)
        alarm(guard_saved_alarm);
}

static void write_logs(void)
{
    arm_guard();
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        tl_recorder *l = atomic_load(&watched[i]);
        if (l)
            tl_recorder_crash_flush(l);
    }
    disarm_guard();
}

/* Another thread is writing: wait for it (the guard bounds how long it can take). */
static void wait_for_writer(void)
{
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < (GUARD_SECONDS + 1) * 1000 && atomic_load(&state) == WRITING; i++)
        nanosleep(&ms, NULL);
}

/* Does what the handler before ours would have done. */
static void chain(int sig, siginfo_t *info, void *ctx)
{
    struct sigaction prev = previous[fatal_index(sig)];
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_IGN) {
        /* As before: a sent signal is ignored; a fault (si_code > 0) comes back when the handler
           returns, and the kernel ends the process on an ignored fault. */
        if (info && info->si_code > 0)
            sigaction(sig, &prev, NULL);
        return;
    }
    if (!(prev.sa_flags & SA_SIGINFO) && prev.sa_handler == SIG_DFL) {
        /* Restored and raised: delivered when the handler returns (the signal is blocked
           until then), so the process dies by it, its core dump showing the crash. */
        sigaction(sig, &prev, NULL);
        raise(sig);
        return;
    }
    sigset_t saved;
    pthread_sigmask(SIG_BLOCK, &prev.sa_mask, &saved);
    if (prev.sa_flags & SA_SIGINFO)
        prev.sa_sigaction(sig, info, ctx);
    else
        prev.sa_handler(sig);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (prev.sa_flags & SA_RESETHAND) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof dfl);
        dfl.sa_handler = SIG_DFL;
        sigaction(sig, &dfl, NULL);
    }
}

static void on_fatal(int sig, siginfo_t *info, void *ctx)
{
    if (tl_guard_claims(info)) {
        /* A controller's access to memory its traced process shrank: not a crash. The guard's
           handler (installed before ours) leaves a guarded read by siglongjmp without restoring the
           mask: the interrupted one is restored first, or the next fault would find SIGBUS blocked. */
        pthread_sigmask(SIG_SETMASK, &((ucontext_t *)ctx)->uc_sigmask, NULL);
        chain(sig, info, ctx);
        return;
    }
    int saved_errno = errno;
    pid_t self = gettid();
    int idle = IDLE;
    if (atomic_compare_exchange_strong(&state, &idle, WRITING)) {
        atomic_store(&writer_tid, self);
        atomic_store(&crash_signal, sig);
        write_logs();
        atomic_store(&state, WRITTEN);
        chain(sig, info, ctx);
        atomic_store(&state, IDLE); /* the handler before ours recovered: a later crash writes again */
    } else if (atomic_load(&state) == WRITING && atomic_load(&writer_tid) == self) {
        die_by(sig); /* the writing itself crashed (abort() in it) */
    } else {
        wait_for_writer();
        chain(sig, info, ctx);
    }
    errno = saved_errno;
}

static int ours(const struct sigaction *sa)
{
    return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fatal;
}

static void install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < NFATAL; i++)
        sigaddset(&sa.sa_mask, fatal[i]);
    for (int i = 0; i < NFATAL; i++) {
        if (installed[i])
            continue;
        struct sigaction now;
        if (sigaction(fatal[i], NULL, &now) != 0 || ours(&now))
            continue;
        previous[i] = now;
        installed[i] = sigaction(fatal[i], &sa, NULL) == 0;
    }
}

/* Gives back what was there, unless another handler went on top of ours (it may chain to ours: keep it). */
static void uninstall(void)
{
    for (int i = 0; i < NFATAL; i++) {
        struct sigaction now;
        if (!installed[i] || sigaction(fatal[i], NULL, &now) != 0 || !ours(&now))
            continue;
        sigaction(fatal[i], &previous[i], NULL);
        installed[i] = 0;
    }
}

void tl_posix_crash_watch(tl_recorder *l)
{
    pthread_mutex_lock(&watch_lock);
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        if (atomic_load(&watched[i]))
            continue;
        if (nwatched++ == 0)
            install();
        atomic_store(&watched[i], l);
        break;
    }
    pthread_mutex_unlock(&watch_lock);
}

void tl_posix_crash_unwatch(tl_recorder *l)
{
    pthread_mutex_lock(&watch_lock);
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        if (atomic_load(&watched[i]) != l)
            continue;
        atomic_store(&watched[i], NULL);
        if (--nwatched == 0)
            uninstall();
    }
    pthread_mutex_unlock(&watch_lock);
    /* A crash handler that saw l before it left is writing it: l must outlive that. The
       process is about to die; only the writing thread itself (a handler that called exit())
       goes on. */
    struct timespec ms = {0, 1000000};
    while (atomic_load(&state) == WRITING && atomic_load(&writer_tid) != gettid())
        nanosleep(&ms, NULL);
}

/* The child of a fork has none of its parent's logs: its handlers only chain. */
void tl_posix_crash_after_fork_child(void)
{
    for (int i = 0; i < TRACE_SYS_MAX; i++)
        atomic_store(&watched[i], NULL);
    nwatched = 0;
    pthread_mutex_init(&watch_lock, NULL);
}
