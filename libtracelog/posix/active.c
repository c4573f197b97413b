/*
 * What the trace point reads on every event, in a file of its own so that
 * every part of the layer can read it without calling into another: the
 * active table (the streams this process records into: its own, then those
 * controllers announced; the event word's bits name its entries) and the
 * pid events carry. registry.c writes them; event.c, wanted.c and remote.c
 * read them.
 */
#include "posix/internal.h"

_Atomic(tl_stream *) tl_posix_active[TL_ACTIVE_SLOTS];
_Atomic uint32_t tl_posix_current_pid;
