/*
 * The traced process's part in being traced by another process (design
 * note docs/design/cross-process.md): the operations through which
 * xproc/attach.c hands over the stream buffers controllers announce (set at
 * load: process.c). All three are async-signal-safe: they run in
 * posix_trace_event's slow path.
 */
#include <errno.h>

#include "posix/internal.h"


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

const tl_xproc_ops *tl_posix_remote_ops(void) { return &remote_ops; }
