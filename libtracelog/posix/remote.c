/*
 * The traced process's part in being traced by another process (design
 * note docs/design/cross-process.md): the operations through which
 * xproc/attach.c hands over the stream buffers controllers announce, and
 * what happens at load (a controller that made this process's control
 * object before exec; a stream named by TRACELOG_STREAM). All three
 * operations are async-signal-safe: they run in posix_trace_event's slow
 * path.
 */
#include <errno.h>

#include "posix/internal.h"

extern _Atomic(tl_stream *) tl_posix_active[TL_ACTIVE_SLOTS];

static int remote_validate(const void *map, uint64_t size, uint64_t id)
{
    (void)id; /* the buffer's name holds it; its header is what must fit the mapping */
    return tl_stream_check(map, size);
}

static int remote_publish(void *map, uint64_t size, uint32_t flags)
{
    (void)size;
    (void)flags;
    return tl_posix_publish_remote(map);
}

static void remote_unpublish(int handle)
{
    if (handle < TRACE_SYS_MAX || handle >= TL_ACTIVE_SLOTS)
        return;
    atomic_store(&tl_posix_active[handle], NULL);
    tl_xproc_word_clear(1ull << handle);
}

static const tl_xproc_ops remote_ops = {remote_validate, remote_publish, remote_unpublish};

/*
 * posix_trace_event's slow path goes through here (not straight to
 * tl_xproc_poll) so that a program linked statically pulls this file in,
 * and with it the constructor below.
 */
void tl_posix_remote_poll(void) { tl_xproc_poll(); }

/*
 * At load: a controller may have made our control object already (it
 * traced us from before exec), or our parent named an inherited stream in
 * TRACELOG_STREAM. Costs a process nobody traces one failed open() and one
 * getenv(). Errors are ignored: a stale variable or object never stops a
 * program from starting.
 */
__attribute__((constructor)) static void remote_at_load(void)
{
    tl_posix_registry_init(); /* events recorded into announced streams carry our pid, also after fork */
    tl_xproc_set_ops(&remote_ops);
    tl_xproc_adopt_if_made();
    if (tl_xproc_has_ctl()) /* a controller traces us from before exec: it reads our names */
        tl_posix_names_share();
    /* Spawned into a parent's stream: its ids, and a controller of ours is sent to its map. */
    if (tl_xproc_join_env() == 0 && tl_xproc_local_map(TL_XPROC_ENV_SLOT, NULL, NULL) &&
        tl_posix_names_join_env() == 0)
        tl_posix_names_share();
}
