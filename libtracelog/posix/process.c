/*
 * The POSIX layer's part in the life of the process: its load and fork().
 * One set of fork handlers, so that the order is explicit: the registry
 * decides whether the child stays in an inherited stream, and that decides
 * whether the child shares its parent's name map or gets a copy of it
 * (names.c). (At exit, streams are shut down: control.c.)
 *
 * The trace point's slow path calls tl_posix_remote_poll here, so that a
 * program linked statically pulls this file in, and with it the
 * constructor below.
 */
#include <stdlib.h>

#include "posix/internal.h"
#include "posix/names.h"
#include "posix/process.h"
#include "posix/thread_ids.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;
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
    tl_posix_thread_ids_after_fork_child();
    tl_posix_crash_after_fork_child();
    tl_posix_names_after_fork_child(share_names);
    tl_posix_registry_after_fork_child();
}

static void init(void) { pthread_atfork(before_fork, after_fork_parent, after_fork_child); }

void tl_posix_process_init(void) { pthread_once(&once, init); }

void tl_posix_remote_poll(void) { tl_xproc_poll(); }

/*
 * At load: a controller may have made our control object already (it
 * traced us from before exec), or our parent named an inherited stream in
 * TRACELOG_STREAM. Costs a process nobody traces one failed open() and one
 * getenv(). Errors are ignored: a stale variable or object never stops a
 * program from starting.
 */
__attribute__((constructor)) static void at_load(void)
{
    tl_posix_registry_init(); /* events recorded into announced streams carry our pid, also after fork */
    tl_posix_process_init();
    tl_xproc_set_ops(tl_posix_remote_ops());
    tl_xproc_adopt_if_made();
    if (tl_xproc_has_ctl()) /* a controller traces us from before exec: it reads our names */
        tl_posix_names_share();
    /* Spawned into a parent's stream: its ids, and a controller of ours is sent to its map. */
    if (tl_xproc_join_env() == 0 && tl_xproc_local_map(TL_XPROC_ENV_SLOT, NULL, NULL) &&
        tl_posix_names_join_env() == 0)
        tl_posix_names_share();
}
