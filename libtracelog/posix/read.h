/*
 * Reading an active stream and its statistics (read.c, control.c, ext.c).
 */
#ifndef TRACELOG_POSIX_READ_H
#define TRACELOG_POSIX_READ_H

#include "posix/internal.h"

/*
 * A controller's stream without log: 1 if its traced process has just been
 * seen to have ended (stopped, the end to be read after its events). Caller holds read_lock.
 */
int tl_posix_notice_end(tl_trace *t);
/* The stream's overruns (log or consumer), and whether it runs: read under the buffer's guard (control.c). */
uint64_t tl_posix_overruns(tl_trace *t);
int tl_posix_running(tl_trace *t);

#endif
