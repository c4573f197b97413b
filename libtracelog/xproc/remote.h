/*
 * The controller's side of cross-process tracing (design note, sections 4
 * and 7): the stream buffer as a named object made for the traced process,
 * and one traced process as the controller holds it: its control object,
 * the announcement slot the controller holds there, and a pidfd watch. The
 * POSIX layer lays its stream out in the buffer between
 * tl_xproc_buffer_create and tl_xproc_remote_announce.
 */
#ifndef TRACELOG_XPROC_REMOTE_H
#define TRACELOG_XPROC_REMOTE_H

#include <stdint.h>
#include <sys/types.h>

#include "xproc/ctl.h"
#include "xproc/watch.h"

typedef struct tl_xproc_buffer {
    char name[TL_SHM_NAME_MAX]; /* /tracelog.<euid>.<pid>.<id in hex> */
    uint64_t id;                /* random: a buffer is never mistaken for an older one */
    void *map;                  /* our mapping, `size` bytes, zero-filled at creation */
    uint64_t size;
} tl_xproc_buffer;

/*
 * Makes a buffer of `size` bytes for process `pid` of user euid/egid (the
 * object belongs to that user, mode 0600: only it and root can open it) and
 * maps it. 0 or an errno (ENOMEM for a size the system cannot hold).
 */
int tl_xproc_buffer_create(uint32_t euid, uint32_t egid, uint32_t pid, uint64_t size, tl_xproc_buffer *b);
/* Removes the name and our mapping (a process that mapped it keeps its own). Accepts an empty buffer. */
void tl_xproc_buffer_destroy(tl_xproc_buffer *b);

typedef struct tl_xproc_remote {
    tl_ctl_peer peer;
    tl_proc_watch watch;
    int slot;     /* the slot we hold in its control object, -1 none */
    uint64_t gen; /* our last announcement there */
} tl_xproc_remote;

/*
 * Opens pid for tracing (tl_ctl_open_or_make: a child of ours without a
 * control object gets one): ESRCH, EPERM, ENOTSUP, ENOSYS (no pidfd), or 0.
 */
int tl_xproc_remote_open(pid_t pid, tl_xproc_remote *r);
/* Announces buffer b (ATTACH; flags: TL_CTL_FLAG_INHERITED). 0, EAGAIN (no free slot) or ESRCH. */
int tl_xproc_remote_attach(tl_xproc_remote *r, const tl_xproc_buffer *b, uint32_t flags);
/*
 * Waits for the traced process to act on our last announcement, at most
 * timeout_ns: 0 with *result (0: it records into the buffer; else why it
 * refused), ETIMEDOUT (it made no trace call meanwhile) or ESRCH (it ended).
 */
int tl_xproc_remote_wait(tl_xproc_remote *r, uint64_t timeout_ns, int *result);
/* 1 once the traced process has ended (waits up to timeout_ms; 0: not at all). */
int tl_xproc_remote_ended(tl_xproc_remote *r, int timeout_ms);
/*
 * How the traced process ended (once tl_xproc_remote_ended said it did):
 * from the kernel while it is not reaped (a child of ours: waitid with
 * WNOWAIT; another process: while a zombie), else the exit status the
 * process left in its control object when it called exit(); else unknown
 * (it was reaped already and ended without exit(): _exit or a signal).
 */
void tl_xproc_remote_end(tl_xproc_remote *r, tl_proc_end *end);
/*
 * Tells the traced process to stop recording into our buffer (if it still
 * runs), gives the slot back, removes a dead process's object, closes.
 */
void tl_xproc_remote_close(tl_xproc_remote *r);

#endif
