/*
 * Live reading (issue 28): what ptlog's commands share to show a log while
 * it is written, through a pipe (record -o - | dump -) or from a file that
 * grows (dump --follow, top). follow.c, top.c and input.c implement it.
 */
#ifndef PTLOG_LIVE_H
#define PTLOG_LIVE_H

#include "ptlog.h"

/*
 * input.c: fn(ctx) is called before a read of a pipe input would block
 * (nothing to read yet), so that the lines made from what was read go out
 * now instead of when the output buffer fills: a pipe's events reach the
 * terminal or the next program as they arrive. NULL: no hook. One output
 * at a time per process.
 */
void ptlog_in_on_wait(void (*fn)(void *ctx), void *ctx);
/* Calls the hook, if any: a followed file has nothing more yet. */
void ptlog_in_idle(void);

/* input.c: does the input's head start a ring (LOOP) log? */
int ptlog_in_is_ring(const ptlog_in *in);

/* src_ptl.c: the source of an opened reader (it takes r, and in on success); an exit code. */
int ptlog_ptl_src_wrap(ptlog_in *in, tracelog_reader *r, ptlog_src **out);
/* src_ptl.c: one line for a log that cannot be opened; PTLOG_EXIT_INPUT or PTLOG_EXIT_INTERNAL. */
int ptlog_ptl_open_error(const char *name, tracelog_status st, const tracelog_error *err);

/*
 * follow.c: --follow. writer_pid: the process whose end ends following
 * (--writer-pid; 0: the one the log names, when it runs on this host).
 */
typedef struct ptlog_follow_opts {
    long writer_pid;
} ptlog_follow_opts;

/*
 * Opens path as a source that follows the log while it is written (dump
 * --follow, convert --follow, top FILE): next() waits for events, and ends
 * at the trailer, when the writer is gone, or on SIGINT, SIGTERM or SIGHUP
 * (handled while the source is open). A pipe is read as a stream, which
 * already follows; a LOOP log is read again as it changes (follow_ring.c).
 * *reader (if not NULL) gets the reader, owned by the source (NULL for a
 * LOOP log, read by a new reader each time). An exit code.
 */
int ptlog_follow_src_open(const char *path, const ptlog_follow_opts *o, ptlog_src **out, tracelog_reader **reader);

/* Following's timing (follow.c, follow_ring.c; README.md "Following a log"). */
#define PTLOG_FOLLOW_STEP_MS 100      /* one wait; then signals and the writer are looked at */
#define PTLOG_FOLLOW_CLOSED_MS 500    /* a trailer is the end once the file stayed as it is this long */
#define PTLOG_FOLLOW_GONE_MS 1000     /* the writer ended and the file stayed as it is this long */

/* follow.c: the process whose end ends following: writer_pid (--writer-pid), or else the one m
   names when the log was made on this host; 0 when there is none to watch. */
long ptlog_follow_writer(const tracelog_metadata *m, long writer_pid);

/* follow.c: WRITER_GONE, the writer pid ended without closing the log; rc made at least PTLOG_EXIT_LOSS. */
int ptlog_follow_gone(const char *name, long pid, int rc);

/* follow_ring.c: a LOOP log followed by reading its ring again as it changes; takes r (the
   first read) and in. An exit code. */
int ptlog_follow_ring_open(ptlog_in *in, tracelog_reader *r, const ptlog_follow_opts *o, ptlog_src **out);

/* follow.c: asks a followed source (and top) to stop, as SIGINT does. */
void ptlog_live_stop(void);
/* follow.c: 1 once SIGINT, SIGTERM or SIGHUP asked to stop (while a followed source or top runs). */
int ptlog_live_interrupted(void);
/* Handles those signals by setting the flag (no SA_RESTART: waits return); restore puts back the old. */
void ptlog_live_signals(int on);

/*
 * follow.c: is process pid, which wrote or is traced into a log created at
 * created_ns (CLOCK_REALTIME), still running? A process started after the
 * log was created is another that reuses the pid: gone (not checked when
 * created_ns is 0: a pid the user named, --writer-pid). 1 alive, 0 gone.
 */
int ptlog_process_alive(long pid, uint64_t created_ns);

/* top.c: ptlog top PID|FILE. An exit code. */
int ptlog_cmd_top(int argc, char **argv);

#endif
