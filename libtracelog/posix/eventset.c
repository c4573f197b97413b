/* Event sets (Trace Event Filter option): bitmaps over the whole id space. */
#include <errno.h>
#include <string.h>

#include "posix/internal.h"

#define WORD(id) ((id) / 64)
#define BIT(id) (1ull << ((id) % 64))

int posix_trace_eventset_empty(trace_event_set_t *set)
{
    if (!set)
        return EINVAL;
    memset(set, 0, sizeof *set);
    return 0;
}

int posix_trace_eventset_fill(trace_event_set_t *set, int what)
{
    if (!set)
        return EINVAL;
    memset(set, 0, sizeof *set);
    switch (what) {
    case POSIX_TRACE_WOPID_EVENTS:
        return 0; /* tracelog defines no process-independent system events of its own */
    case POSIX_TRACE_SYSTEM_EVENTS:
        for (trace_event_id_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++)
            set->__bits[WORD(id)] |= BIT(id);
        return 0;
    case POSIX_TRACE_ALL_EVENTS:
        for (trace_event_id_t id = 1; id < TL_ID_LIMIT; id++)
            set->__bits[WORD(id)] |= BIT(id);
        return 0;
    }
    return EINVAL;
}

int posix_trace_eventset_add(trace_event_id_t event_id, trace_event_set_t *set)
{
    if (!set || event_id >= TL_ID_LIMIT)
        return EINVAL;
    set->__bits[WORD(event_id)] |= BIT(event_id);
    return 0;
}

int posix_trace_eventset_del(trace_event_id_t event_id, trace_event_set_t *set)
{
    if (!set || event_id >= TL_ID_LIMIT)
        return EINVAL;
    set->__bits[WORD(event_id)] &= ~BIT(event_id);
    return 0;
}

int posix_trace_eventset_ismember(trace_event_id_t event_id, const trace_event_set_t *restrict set,
                                  int *restrict ismember)
{
    if (!set || !ismember || event_id >= TL_ID_LIMIT)
        return EINVAL;
    *ismember = (set->__bits[WORD(event_id)] & BIT(event_id)) != 0;
    return 0;
}
