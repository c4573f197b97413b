/*
 * The trace point's helpers (event.c).
 */
#ifndef TRACELOG_POSIX_EVENT_H
#define TRACELOG_POSIX_EVENT_H

#include <trace.h>

#include "tracelog/common.h"

/* A system event as the calling thread records it (its pid and ids), from program address caller. */
tracelog_event tl_posix_system_event(trace_event_id_t id, const void *data, size_t len, uint64_t caller);

#endif
