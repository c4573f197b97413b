/*
 * A stream's log as the standard sees it (log.c): the recorder
 * (recorder/recorder.h) opened with params made from the stream's
 * attributes, and its status mapped to the standard's.
 */
#ifndef TRACELOG_POSIX_LOG_H
#define TRACELOG_POSIX_LOG_H

#include "posix/internal.h"

/*
 * t's log, on a duplicate of fd: the recorder, with the FLUSH policy its
 * flusher thread, watched by the fatal-signal handlers. An errno or 0.
 */
int tl_log_open(tl_trace *t, int fd);
/* Closes (the last flush, the trailer) or abandons (writing nothing more) the log of a stream. */
int tl_log_close(tl_recorder *r);
void tl_log_abandon(tl_recorder *r);
/* Fills the flush and log fields of si, resetting what the standard resets when read. */
void tl_log_get_status(tl_trace *t, struct posix_trace_status_info *si);
/* POSIX_TRACE_FULL or NOT_FULL for a log with these counters (a LOOP log that wrapped is full). */
int tl_posix_log_full_status(int log_policy, const tracelog_log_status *ls);

#endif
