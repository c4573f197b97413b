/*
 * The traced process as its controller holds it (posix_trace_create with
 * pid != 0): the stream laid out in a named buffer made for it, read under
 * the buffer's SIGBUS guard; its end, seen through a pidfd; who it is, as a
 * log describes it. Everything in the buffer is the traced process's to
 * write: see docs/design/cross-process.md, section 9.
 */
#ifndef TRACELOG_XPROC_TRACED_H
#define TRACELOG_XPROC_TRACED_H

#include <sys/types.h>

#include "stream/stream.h"
#include "tracelog/log.h"
#include "xproc/watch.h"

typedef struct tl_remote tl_remote;

/* ESRCH, EPERM, ENOTSUP (no libtracelog there), ENOSYS (no pidfd), ENOMEM, or 0. */
int tl_remote_open(pid_t pid, tl_remote **out);
/* Lays the stream out in a named buffer made for the traced process. */
int tl_remote_make_stream(tl_remote *rm, const tl_stream_params *p, tl_stream **s);
/* Tells the traced process to record into it (at its next trace call). 0, EAGAIN or ESRCH. */
int tl_remote_announce(tl_remote *rm, int inherited);
/*
 * Runs fn(arg) under the SIGBUS guard of the stream's buffer (design note,
 * section 9, item 11): fn's result, or EFAULT once the traced process has
 * shrunk the object (then, and for every later call without running fn: the
 * buffer is replaced by zero-filled private memory, so that nothing reading
 * it afterwards can fault). fn must take no lock and allocate nothing.
 * rm NULL (a stream of our own): fn(arg), unguarded.
 */
int tl_remote_guard(tl_remote *rm, int (*fn)(void *), void *arg);
/* tl_consumer_free (it gives the lanes' room back in the buffer) under the guard; rm may be NULL. */
void tl_remote_consumer_free(tl_remote *rm, tl_consumer *c);
/*
 * A consumer of rm's stream (NULL: a stream of our own, nothing to do),
 * made before the stream is announced: it raises events stamped before its
 * birth (tl_consumer_set_floor), and stops waiting for records in flight
 * once the traced process has ended, unless the stream is inherited (its
 * children may still record).
 */
void tl_remote_watch_consumer(tl_remote *rm, tl_consumer *c, int inherited);
/* 1 once tl_remote_guard saw the buffer shrunk (rm may be NULL: 0). */
int tl_remote_faulted(const tl_remote *rm);
pid_t tl_remote_pid(const tl_remote *rm);
/* The id of the stream's buffer (random, never 0), which the traced process learns when it maps it. */
uint64_t tl_remote_stream_id(const tl_remote *rm);
/* Where the traced process's event-name map is (the POSIX layer attaches it: posix/names.c). */
typedef struct tl_remote_names_at {
    uint32_t euid, egid, pid;
    uint64_t start, nonce; /* nonce 0: it has no map we could name */
} tl_remote_names_at;
void tl_remote_names_key(const tl_remote *rm, tl_remote_names_at *key);
/* 1 once the traced process has ended, with how (never waits, never reaps). */
int tl_remote_ended(tl_remote *rm, tl_proc_end *end);
/* Sleeps until the traced process ends (1) or wake_fd is readable (0). */
int tl_remote_wait_end(tl_remote *rm, int wake_fd);
/*
 * 1 once the traced process has taken the stream up: its libtracelog acted
 * on the announcement (at its next trace call, or at load after an exec).
 * A process that never does runs no libtracelog, or makes no trace call.
 */
int tl_remote_joined(tl_remote *rm);
/* The traced process as a log describes it (format-spec 5.2, `process`), and its name. */
typedef struct tl_remote_identity {
    uint32_t pid;
    char program[TRACELOG_TEXT_MAX + 1]; /* its executable (/proc/<pid>/exe); "" unknown */
    char name[TRACELOG_TEXT_MAX + 1];    /* basename of its argv[0], else its command name; "" unknown */
} tl_remote_identity;
/*
 * Whether the traced process is what it will be traced as: 0 while it is
 * our child still running our own image (a fork that has not exec'd its
 * program yet: ptlog record, the standard's fork-exec-create examples), 1
 * once it has exec'd, joined the stream or ended, and for every other
 * process. Cheap enough to ask every few milliseconds (a readlink while 0).
 * *id gets the identity as last seen (once 1: as it is).
 */
int tl_remote_identity_known(tl_remote *rm, tl_remote_identity *id);
/* Marks the stream dead, tells the process to let it go, removes the buffer. Accepts NULL. */
void tl_remote_close(tl_remote *rm);
/*
 * The traced process of stream s has ended: s is stopped, and c (the
 * stream's consumer) counts a record it died in the middle of as lost at
 * once (unless the stream is inherited: a child may still be recording).
 */
void tl_remote_end_seen(tl_stream *s, tl_consumer *c, int inherited);

#endif
