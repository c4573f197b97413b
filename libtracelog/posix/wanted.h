/*
 * Which ids some stream of this process may record: the trace point's first
 * filter. The summary of wanted ids (wanted.c): bit id % 64 of word id / 64 is 0
 * when no stream this process created and controls would record id. Read
 * by the trace point (event.c) and, through tracelog_event_gate, by
 * <trace.h>'s inline test, which indexes it with (id / 64) & (words - 1)
 * instead of comparing id with a bound first: so the array has a power of
 * two of words, the filter's words and zeros after them. An id beyond the
 * ids lands on some word's bit: either answer is right for it, since the
 * library never records it (posix_trace_event returns at once).
 */
#ifndef TRACELOG_POSIX_WANTED_H
#define TRACELOG_POSIX_WANTED_H

#include <stdatomic.h>
#include <stdint.h>

#include "stream/stream.h"

#define TL_WANTED_WORDS 32u
_Static_assert(TL_WANTED_WORDS >= TL_FILTER_WORDS && (TL_WANTED_WORDS & (TL_WANTED_WORDS - 1)) == 0,
               "the summary covers the filter, in a power of two of words");

extern _Atomic uint64_t tl_posix_wanted[TL_WANTED_WORDS];

/* The user started (1) or stopped (0) the stream of own slot; also 0 when a slot is (re)published. */
void tl_posix_wanted_set(int slot, int running);
/* After a change of an own stream's filter. */
void tl_posix_wanted_refresh(void);
void tl_posix_wanted_before_fork(void);
void tl_posix_wanted_after_fork_parent(void);
/* In the child, first: inherited: the own slots it keeps recording into (its parent controls them). */
void tl_posix_wanted_after_fork_child(uint64_t inherited);

#endif
