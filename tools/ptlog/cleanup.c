/*
 * Temporary files removed when ptlog is killed by SIGINT, SIGTERM, SIGHUP,
 * SIGPIPE, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2 or SIGXCPU: an interrupted
 * convert must not leave OUT.tmp.XXXXXX behind. A file over RLIMIT_FSIZE is a
 * write error (EFBIG, exit 4), not SIGXFSZ's death.
 *
 * The handler is async-signal-safe: it only reads the registered paths
 * (pointers published atomically, computed before registration), unlinks
 * them, and re-raises the signal with its default action restored
 * (SA_RESETHAND), so the process still dies by that signal and its parent
 * sees which one. A signal that was ignored when the first path was
 * registered (nohup, a background job) stays ignored.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>

#include "ptlog.h"

#define CLEANUP_SLOTS 4

static _Atomic(const char *) slots[CLEANUP_SLOTS];
static atomic_int installed;
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGQUIT, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU};

static void on_fatal_signal(int sig)
{
    int saved = errno;
    for (size_t i = 0; i < CLEANUP_SLOTS; i++) {
        const char *path = atomic_load(&slots[i]);
        if (path)
            unlink(path);
    }
    /* SA_RESETHAND restored the default action; blocked until we return, then fatal. */
    raise(sig);
    errno = saved;
}

static void install_handlers(void)
{
    if (atomic_exchange(&installed, 1))
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_flags = SA_RESETHAND | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++)
        sigaddset(&sa.sa_mask, fatal_signals[i]); /* one handler at a time */
    for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(fatal_signals[i], &sa, NULL);
    }
}

static void on_file_size(int sig) { (void)sig; /* the write that raised it fails with EFBIG */ }

void ptlog_catch_file_size(void)
{
    /* Caught, not ignored: a program ptlog record runs gets the default action back at exec. */
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_file_size;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGXFSZ, NULL, &old) == 0 && old.sa_handler == SIG_DFL)
        sigaction(SIGXFSZ, &sa, NULL);
}

int ptlog_cleanup_add(const char *path)
{
    install_handlers();
    for (size_t i = 0; i < CLEANUP_SLOTS; i++) {
        const char *expected = NULL;
        if (atomic_compare_exchange_strong(&slots[i], &expected, path))
            return 0;
    }
    return -1;
}

void ptlog_cleanup_remove(const char *path)
{
    for (size_t i = 0; i < CLEANUP_SLOTS; i++) {
        const char *expected = path;
        atomic_compare_exchange_strong(&slots[i], &expected, NULL);
    }
}
