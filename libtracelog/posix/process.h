/*
 * The process's life as the POSIX layer follows it: its load and fork()
 * (process.c), fatal signals while a log is watched (crash.c).
 */
#ifndef TRACELOG_POSIX_PROCESS_H
#define TRACELOG_POSIX_PROCESS_H

#include "recorder/recorder.h"

void tl_posix_process_init(void); /* the fork handlers, installed once (at load, and by the calls that need them) */
/* posix_trace_event's slow path when a controller announced something (process.c). */
void tl_posix_remote_poll(void);

void tl_posix_crash_watch(tl_recorder *r);
void tl_posix_crash_unwatch(tl_recorder *r);
void tl_posix_crash_after_fork_child(void); /* a child has no log of its own */

#endif
