/*
 * Who the calling thread is, asked once per thread: its pthread_t and kernel
 * tid (loads instead of calls into libc and the kernel on every event), and
 * its ticket, which picks its lane. One initial-exec TLS block: no lazy
 * allocation, so it is safe in a signal handler, and one address to find.
 * Read inline by the trace point (event.c); reset in a forked child
 * (process.c).
 */
#ifndef TRACELOG_POSIX_THREAD_IDS_H
#define TRACELOG_POSIX_THREAD_IDS_H

#include <stddef.h>
#include <stdint.h>

typedef struct tl_thread_ids {
    uint64_t pthread;
    uint32_t kernel_tid;
    uint32_t ticket; /* 0: not asked yet; else the lane ticket + 1 */
} tl_thread_ids;

extern __thread tl_thread_ids tl_posix_me __attribute__((tls_model("initial-exec")));

/* Fills tl_posix_me (out of line: once per thread). */
void tl_posix_ask_thread_ids(void);

static inline const tl_thread_ids *tl_posix_my_ids(void)
{
    if (__builtin_expect(tl_posix_me.ticket == 0, 0))
        tl_posix_ask_thread_ids();
    return &tl_posix_me;
}

/* The name thread ktid of this process had at its first event, into buf (cap bytes): 0, or -1 if none is known. */
int tl_posix_thread_first_name(uint32_t ktid, char *buf, size_t cap);

/* A forked child starts with its own lane rather than the forking thread's, and its own thread id. */
void tl_posix_thread_ids_after_fork_child(void);

#endif
