/*
 * The traced process's side of cross-process tracing (design note, sections
 * 3.2, 4 and 6): its control object, made lazily over the event word's page;
 * acting on announcements (open, check, map, hand to the POSIX layer);
 * joining the stream named by TRACELOG_STREAM at load; the environment a
 * spawned child needs to join an inherited stream.
 *
 * The POSIX layer owns the streams and the meaning of the event word's low
 * bits; this module only moves buffers in and out through tl_xproc_ops, so
 * it never includes posix/ (layering: posix uses xproc).
 */
#ifndef TRACELOG_XPROC_ATTACH_H
#define TRACELOG_XPROC_ATTACH_H

#include <stdatomic.h>
#include <stdint.h>

#include "xproc/ctl.h"

#define TL_XPROC_ENV "TRACELOG_STREAM"
#define TL_XPROC_LOCAL (TL_CTL_SLOTS + 1) /* one local stream per slot, plus the one from the environment */
#define TL_XPROC_ENV_SLOT TL_CTL_SLOTS

/*
 * The event word's page: the one word posix_trace_event loads, at a
 * link-time address. Private memory until the process makes its control
 * object, which is then mapped exactly over it.
 */
typedef union tl_xproc_page {
    _Atomic uint64_t word;
    char bytes[TL_CTL_SIZE];
} tl_xproc_page;
extern tl_xproc_page tl_xproc_event_page;

/*
 * What the POSIX layer does with a stream buffer. All three may be called
 * from posix_trace_event's slow path, possibly in a signal handler: they
 * must be async-signal-safe (atomics only: no lock, no allocation).
 */
typedef struct tl_xproc_ops {
    /* Is this mapping a stream buffer of `size` bytes with this id? 0 or EINVAL. */
    int (*validate)(const void *map, uint64_t size, uint64_t id);
    /* Makes posix_trace_event record into it (id: the buffer's, as validated). A handle >= 0, or -errno. */
    int (*publish)(void *map, uint64_t size, uint64_t id, uint32_t flags);
    /* Stops recording into the handle's buffer (the buffer stays mapped). */
    void (*unpublish)(int handle);
} tl_xproc_ops;

/* Installs the POSIX layer's operations (once, before any control object exists). */
void tl_xproc_set_ops(const tl_xproc_ops *ops);

/*
 * Makes this process's control object if it has none, over the event
 * page, keeping the word. Called by the traced-process calls that may make
 * system calls (posix_trace_eventid_open, ...). 0 or an errno; a failure
 * only means no controller can find this process.
 */
int tl_xproc_ensure_ctl(void);

/*
 * At load: if a controller has made this process's control object already
 * (tl_ctl_open_or_make: a controller tracing its child from before exec),
 * adopts it now, so that the announced streams are mapped before the first
 * event. Costs a process nobody traces one failed open(). 0 or an errno.
 */
int tl_xproc_adopt_if_made(void);

/* 1 once this process has its control object (a controller can find it). */
int tl_xproc_has_ctl(void);
/* The nonce of this process's name map (tl_ctl_names_nonce): 0 with ENOENT before it has its control object. */
int tl_xproc_names_nonce(uint64_t *out);

/* Changes the event word's low bits (publishing or unpublishing a stream). Serialised with the remap. */
void tl_xproc_word_set(uint64_t bits);
void tl_xproc_word_clear(uint64_t bits);

/*
 * posix_trace_event's slow path, when the word has TL_CTL_PENDING: acts on
 * the announcements. Async-signal-safe. A call made while another thread's
 * is in progress waits for it (the event that brought it here is recorded
 * into the stream being mapped, not dropped); a signal handler interrupting
 * this thread's own call returns at once.
 */
void tl_xproc_poll(void);
/* Non-zero while any thread polls (or joins a stream at load): what posix_trace_event looks at first. */
extern _Atomic int tl_xproc_polling;

/*
 * In the event word while a thread polls or joins a stream at load, set
 * before TL_CTL_PENDING is cleared and cleared after the new stream is
 * published: a word with no bit at all means no stream can record and no
 * poll is under way, so that the inline test of <trace.h> (which sees only
 * the word) never skips an event a poll is about to take. Private to this
 * process: cleared in a forked child, never looked at by a controller.
 */
#define TL_XPROC_POLLING (1ull << 62)
_Static_assert((TL_XPROC_POLLING & TL_CTL_PENDING) == 0, "two flags of the event word");

/*
 * Waits until no other thread polls (TL_XPROC_POLLING gone), without
 * polling itself: an event that saw another thread's poll is recorded
 * after it. Returns at once in a signal handler interrupting this thread's
 * own poll. Async-signal-safe.
 */
void tl_xproc_wait_poll(void);

/* Joins the stream TRACELOG_STREAM names ("NAME:ID"), if any. 0, or an errno (ignored by callers: a stale variable never stops a program). */
int tl_xproc_join_env(void);

/*
 * A copy of envp (NULL-terminated) with TRACELOG_STREAM set to name:id and
 * any other TRACELOG_STREAM removed; one malloc'd block, freed with free().
 * NULL on ENOMEM.
 */
char **tl_xproc_env_with(char *const envp[], const char *name, uint64_t id);

/*
 * In a forked child: the event word becomes the child's own (before anything
 * changes it: it is still the parent's); streams that are not inherited are
 * let go. Runs once per child, whoever calls it first.
 */
void tl_xproc_after_fork_child(void);

/* The local table, for tests: the mapping of local slot i (NULL if none). */
void *tl_xproc_local_map(unsigned i, uint64_t *size, int *handle);

#endif
