/*
 * Watching a traced process end (design note, section 7): a pidfd names
 * the process itself, not its pid, and becomes readable when it exits. How
 * it ended is read without reaping it (waitid with WNOWAIT), so that the
 * application's own waitpid() still gets the status; that works for a
 * child of ours. For another process it is known only while it is a zombie
 * (/proc/<pid>/stat field 52); otherwise it is "unknown".
 */
#ifndef TRACELOG_XPROC_WATCH_H
#define TRACELOG_XPROC_WATCH_H

#include <stdint.h>
#include <sys/types.h>

#include "xproc/proc.h"

typedef enum tl_end_how {
    TL_END_UNKNOWN = 0,
    TL_END_EXITED = 1,  /* code: the exit status */
    TL_END_SIGNALED = 2, /* code: the signal */
    TL_END_DUMPED = 3,   /* code: the signal; a core was dumped */
} tl_end_how;

typedef struct tl_proc_end {
    int32_t how; /* tl_end_how */
    int32_t code;
} tl_proc_end;

typedef struct tl_proc_watch {
    int pidfd;
    tl_proc_token token;
} tl_proc_watch;

/*
 * Starts watching the process `token` names. 0; ESRCH if it is gone (or its
 * pid now names another process); ENOSYS on a kernel without pidfds (5.3+).
 */
int tl_proc_watch_open(const tl_proc_token *token, tl_proc_watch *w);
void tl_proc_watch_close(tl_proc_watch *w);
/* 1 once the process has ended, 0 if it still runs after timeout_ms (0: do not wait; -1: for ever). */
int tl_proc_watch_ended(tl_proc_watch *w, int timeout_ms);
/*
 * Waits until the process ends (1) or wake_fd becomes readable (0), for
 * ever: the thread that must notice the end at once sleeps here.
 */
int tl_proc_watch_wait(tl_proc_watch *w, int wake_fd);
/* How it ended (call once tl_proc_watch_ended said so). Never reaps it. */
void tl_proc_watch_end(tl_proc_watch *w, tl_proc_end *end);
/* The how/code of a waitpid()-style status word. */
void tl_proc_end_of_status(int status, tl_proc_end *end);

#endif
