/*
 * The POSIX layer's part in the life of the process: fork() and exit().
 * One set of fork handlers, so that the order is explicit: the registry
 * decides whether the child stays in an inherited stream, and that decides
 * whether the child shares its parent's name map or gets a copy of it
 * (names.c). At exit, streams are shut down (POSIX: as if by
 * posix_trace_shutdown), which writes their logs out.
 */
#include <stdlib.h>

#include "posix/internal.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int share_names; /* decided before fork; the child reads its copy */

static void before_fork(void)
{
    share_names = tl_posix_registry_before_fork();
    tl_posix_names_before_fork(share_names);
}

static void after_fork_parent(void)
{
    tl_posix_names_after_fork_parent();
    tl_posix_registry_after_fork_parent();
}

static void after_fork_child(void)
{
    tl_xproc_after_fork_child(); /* first: until then the event word is the parent's */
    tl_posix_event_after_fork_child();
    tl_posix_crash_after_fork_child();
    tl_posix_names_after_fork_child(share_names);
    tl_posix_registry_after_fork_child();
}

static void init(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

void tl_posix_process_init(void) { pthread_once(&once, init); }

static void at_exit(void)
{
    trace_id_t trids[TRACE_SYS_MAX];
    size_t n = tl_posix_own_trids(trids, TRACE_SYS_MAX, TL_ACTIVE_KINDS);
    for (size_t i = 0; i < n; i++)
        posix_trace_shutdown(trids[i]);
}

static void install_exit_hook(void) { atexit(at_exit); }

void tl_posix_exit_hook(void) { pthread_once(&exit_once, install_exit_hook); }
