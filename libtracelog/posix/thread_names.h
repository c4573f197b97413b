/*
 * A table of thread names by process and kernel tid (thread_names.c): each
 * thread's name (its comm: what pthread_setname_np or prctl(PR_SET_NAME)
 * gave it, else its process's) at its first event, as the trace point takes
 * it. A log names a thread by it when the thread ended before the log's
 * writer first saw it, its /proc entry gone with it.
 *
 * Two tables live in a process: its own (tl_tname_own: static memory, that
 * thread_ids.c fills), and
 * the one in its event-name map (names.c), which the processes sharing the
 * map write (the process, its children recording into an inherited stream)
 * and which its controller reads from another process. So every byte of a
 * table may be another process's to choose: a read is bounded to the slots
 * it probes, a name is taken only NUL-terminated within its 16 bytes and not
 * empty, and nothing in a slot is a pointer, a size or an index.
 *
 * Open addressing by kernel tid, TL_TNAME_PROBES slots per tid; lock-free
 * and async-signal-safe (the trace point may record a thread's first event
 * in a signal handler): a slot being written has TL_TNAME_BUSY in its tid,
 * a writer that finds no free slot within its probes gives up (the thread is
 * not remembered), nobody ever waits.
 */
#ifndef TRACELOG_POSIX_THREAD_NAMES_H
#define TRACELOG_POSIX_THREAD_NAMES_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define TL_TNAME_BYTES 16u /* a comm with its NUL (the kernel's TASK_COMM_LEN) */
#define TL_TNAME_SLOTS 4096u
#define TL_TNAME_PROBES 8u
#define TL_TNAME_BUSY 0x80000000u

typedef struct tl_tname_slot {
    _Atomic uint32_t ktid; /* 0: free; with TL_TNAME_BUSY: being written */
    uint32_t pid;
    char name[TL_TNAME_BYTES];
} tl_tname_slot;

typedef struct tl_tname_table {
    tl_tname_slot slot[TL_TNAME_SLOTS];
} tl_tname_table;

/*
 * Remembers thread (pid, ktid)'s name (name: up to TL_TNAME_BYTES bytes,
 * NUL-terminated within them). A kernel tid found again is a new thread
 * that reuses it: its name replaces the old thread's, unless keep_existing
 * (a copy of an older table must not undo a newer entry). ktid 0 or with
 * the busy bit is ignored.
 */
void tl_tname_put(tl_tname_table *t, uint32_t pid, uint32_t ktid, const char *name, int keep_existing);
/*
 * Thread (pid, ktid)'s name into out (cap bytes, NUL-terminated, cut before
 * a UTF-8 continuation byte): 0; ENOENT (none, or caught being rewritten);
 * EILSEQ (the slot holds a name without its NUL or an empty one: out is "").
 */
int tl_tname_get(const tl_tname_table *t, uint32_t pid, uint32_t ktid, char *out, size_t cap);
/* The process's own table (static memory): thread_ids.c fills it, names.c copies it into a map it moves to. */
tl_tname_table *tl_tname_own(void);
/* Copies src's entries (of process pid; 0: of every process) into dst, keeping those dst has. */
void tl_tname_copy(tl_tname_table *dst, const tl_tname_table *src, uint32_t pid);

#endif
