/*
 * The traced process's part in being traced by another process (design
 * note docs/design/cross-process.md): the operations through which
 * xproc/attach.c hands over the stream buffers controllers announce (set at
 * load: process.c). All three are async-signal-safe: they run in
 * posix_trace_event's slow path.
 *
 * It also applies the filters a controller asked for by name before the
 * process opened the name (tracelog_trace_filter_name): when the process
 * opens it, or maps the controller's stream, whichever comes last.
 */
#include <errno.h>
#include <string.h>

#include "posix/internal.h"
#include "posix/names.h"
#include "posix/record.h"

/* The buffer id of the stream of each active slot a controller announced (0: none), to find a filter's stream. */
static _Atomic uint64_t slot_stream[TL_ACTIVE_SLOTS];

/* The active slot of stream (a buffer id), or -1. */
static int slot_of_stream(uint64_t stream)
{
    for (int i = TRACE_SYS_MAX; i < TL_ACTIVE_SLOTS; i++)
        if (atomic_load(&slot_stream[i]) == stream && atomic_load(&tl_posix_active[i]))
            return i;
    return -1;
}

/*
 * Applies f in its stream (once, whoever comes first: the process's thread
 * that opened the name, or the one that mapped the stream): its id's bit
 * set (filtered out) or cleared (let through) in the stream's filter, and
 * POSIX_TRACE_FILTER recorded with the old and the new filter, as
 * posix_trace_set_filter records it: the log says when the name became an
 * id that the filter covers.
 */
static void apply(const tl_name_filter *f, uint64_t caller)
{
    int slot = slot_of_stream(f->stream);
    uint32_t no = 0;
    if (slot < 0 || !atomic_compare_exchange_strong(f->applied, &no, 1))
        return;
    tl_stream *s = atomic_load(&tl_posix_active[slot]);
    trace_event_set_t both[2]; /* old, new: the data of POSIX_TRACE_FILTER */
    uint64_t *old = (uint64_t *)(void *)both[0].__bits, *now = (uint64_t *)(void *)both[1].__bits;
    tl_stream_get_filter(s, old);
    memcpy(now, old, sizeof both[1]);
    uint64_t bit = 1ull << (f->id % 64);
    now[f->id / 64] = f->keep ? now[f->id / 64] & ~bit : now[f->id / 64] | bit;
    if (now[f->id / 64] == old[f->id / 64])
        return;
    tl_stream_set_filter(s, now);
    tl_posix_record_slot_as(slot, POSIX_TRACE_FILTER, both, sizeof both, caller, 1); /* the filter may cover FILTER */
}

void tl_posix_remote_filters(trace_event_id_t id, uint64_t stream, uint64_t caller)
{
    tl_name_filter f[TL_NAME_FILTERS_MAX];
    size_t n = tl_posix_names_filters(id, stream, f, sizeof f / sizeof f[0]);
    for (size_t i = 0; i < n; i++)
        apply(&f[i], caller);
}


static int remote_validate(const void *map, uint64_t size, uint64_t id)
{
    (void)id; /* the buffer's name holds it; its header is what must fit the mapping */
    return tl_stream_check(map, size);
}

static int remote_publish(void *map, uint64_t size, uint64_t id, uint32_t flags)
{
    (void)size;
    (void)flags;
    int h = tl_posix_publish_remote(map);
    if (h < 0)
        return h;
    atomic_store(&slot_stream[h], id);
    atomic_thread_fence(memory_order_seq_cst); /* the stream, then the names: see tl_posix_names_filters */
    tl_posix_remote_filters(0, id, 0);
    return h;
}

static void remote_unpublish(int handle)
{
    if (handle < TRACE_SYS_MAX || handle >= TL_ACTIVE_SLOTS)
        return;
    atomic_store(&tl_posix_active[handle], NULL);
    atomic_store(&slot_stream[handle], 0);
    tl_xproc_word_clear(1ull << handle);
}

static const tl_xproc_ops remote_ops = {remote_validate, remote_publish, remote_unpublish};

const tl_xproc_ops *tl_posix_remote_ops(void) { return &remote_ops; }
