/*
 * The per-process control object: how a controller finds a process it may
 * trace and tells it about a stream (docs/design/cross-process.md, sections
 * 3 and 4). One 4096-byte named object per traced process,
 * /tracelog.<euid>.<pid>, created lazily by the process itself.
 *
 * Its first word is the process's event word, the one word posix_trace_event
 * loads: the object can be mapped exactly over a page of the library's own
 * memory, so that word stays at a link-time address (one relaxed load, no
 * pointer to follow). Bit 63 of it means "a controller asked something".
 *
 * Both sides treat what the other wrote as untrusted: the controller checks
 * the header (magic, version, sizes, the process token, the boot id) before
 * it believes the object belongs to the pid; the traced process copies an
 * announcement out under its sequence lock and validates the copy.
 */
#ifndef TRACELOG_XPROC_CTL_H
#define TRACELOG_XPROC_CTL_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "xproc/proc.h"
#include "xproc/shmobj.h"

#define TL_CTL_SIZE 4096u
#define TL_CTL_SLOTS 8u
#define TL_CTL_MAGIC 0x54434c54u /* "TLCT" */
#define TL_CTL_VERSION 2u /* 2: names_nonce */
#define TL_CTL_PENDING (1ull << 63) /* in the event word: look at the slots */
#define TL_CTL_MAX_STREAM (1ull << 41) /* largest stream buffer an announcement may name */
#define TL_CTL_EXITED 0x100u /* in `exited`: the process called exit(status & 0xff) */

enum tl_ctl_op { TL_CTL_ATTACH = 1, TL_CTL_DETACH = 2 };
#define TL_CTL_FLAG_INHERITED 1u

/* One announcement slot (see the design note, section 4). */
typedef struct tl_ctl_slot {
    _Atomic uint64_t owner; /* packed token of the controller that holds it; 0 free */
    _Atomic uint64_t gen;   /* odd while written; +2 per announcement */
    uint32_t op, flags;
    uint64_t size;          /* bytes of the stream buffer */
    uint64_t id;            /* stream id */
    char name[TL_SHM_NAME_MAX];
    _Atomic uint64_t acked;  /* traced process: the gen it acted on */
    _Atomic int32_t result; /* traced process: 0 or the errno of its refusal */
    uint32_t reserved[3];
} tl_ctl_slot;

typedef struct tl_ctl {
    _Atomic uint64_t word; /* the event word; own cache line */
    char pad0[56];
    _Atomic uint32_t magic; /* stored last by the creator */
    uint16_t version, nslots;
    uint32_t size, pid;
    uint64_t start;         /* the creator's start time (its token with pid) */
    uint8_t boot_id[16];
    uint32_t euid;
    _Atomic uint32_t exited; /* TL_CTL_EXITED | status, stored by the process in exit() (0: not yet) */
    _Atomic uint64_t names_nonce; /* its name map is /tracelog.<euid>.<pid>.names.<nonce in hex>; 0: none yet */
    char pad1[128 - 120];
    tl_ctl_slot slots[TL_CTL_SLOTS];
} tl_ctl;

_Static_assert(sizeof(tl_ctl_slot) == 128, "slot layout");
_Static_assert(sizeof(tl_ctl) <= TL_CTL_SIZE, "the control object is one page");

/* What an announcement says, as the traced process copies it out. */
typedef struct tl_announce {
    uint32_t op, flags;
    uint64_t size, id;
    char name[TL_SHM_NAME_MAX];
} tl_announce;

/* "/tracelog.<euid>.<pid>" */
void tl_ctl_name(char out[TL_SHM_NAME_MAX], uint32_t euid, uint32_t pid);
/*
 * The random part of the process's name map's name, made by whichever side
 * needs it first (the process, or a controller that makes the map for a
 * child) and fixed from then on: a name nobody can guess is a name nobody
 * else can create first (/dev/shm is world-writable; a map squatted by
 * another user stripped every name from a recorded log). Never 0; 0 with
 * errno only if no random bytes could be had.
 */
uint64_t tl_ctl_names_nonce(tl_ctl *c);

/* "/tracelog.<euid>.<pid>.<16 hex digits>": a stream buffer of that process. */
void tl_ctl_stream_name(char out[TL_SHM_NAME_MAX], uint32_t euid, uint32_t pid, uint64_t nonce);
/* 1 if name is a stream buffer name of that process, or of any process of that user if pid is 0 (the only names a traced process opens). */
int tl_ctl_stream_name_valid(const char *name, uint32_t euid, uint32_t pid);

/* ---- traced process ---------------------------------------------------- */

/*
 * Creates this process's control object, or adopts the one an earlier image
 * of this process made (exec keeps pid and start time; its announcements
 * stay). A stale object of a dead process with the same pid is replaced. The
 * event word starts as `word`. If `at` is not NULL (page-aligned, one page)
 * the object is mapped exactly there, replacing what was mapped. *out gets
 * the mapping. 0 or an errno (EEXIST: another user holds the name).
 */
int tl_ctl_create(void *at, uint64_t word, tl_ctl **out);
/*
 * Removes, among at most `max` names of this user in /dev/shm, those of
 * processes that are gone: control objects whose maker's token is no live
 * process's (a process killed, or ended by _exit, leaves its object), and
 * stream buffers of a traced pid that no longer exists. Returns how many.
 */
unsigned tl_ctl_sweep(unsigned max);
/* Removes this process's name for its object if it is still ours (at exit). */
void tl_ctl_unlink_own(const tl_ctl *c);
/*
 * In a forked child: replaces the shared page at `at` by a private page
 * holding the same event word (minus TL_CTL_PENDING), so that the child's
 * word is its own. 0 or an errno.
 */
int tl_ctl_privatize(void *at);

/* Called for each new announcement; returns 0 or the errno the controller will read. */
typedef int (*tl_ctl_handler)(void *ctx, unsigned slot, const tl_announce *a);

/*
 * Acts on the announcements made since the last call: clears TL_CTL_PENDING
 * first, then for each slot whose generation is not seen[slot], copies the
 * announcement out, validates it (name, size, op: EINVAL otherwise) and
 * calls h, then acknowledges. A slot caught mid-write is left for the next
 * call (TL_CTL_PENDING is set again). Returns the number of announcements
 * handled. Not reentrant: the caller serialises calls.
 */
unsigned tl_ctl_poll(tl_ctl *c, uint64_t seen[TL_CTL_SLOTS], tl_ctl_handler h, void *ctx);

/* ---- controller ---------------------------------------------------------- */

typedef struct tl_ctl_peer {
    tl_ctl *ctl;         /* our mapping of the traced process's object */
    tl_proc_token token; /* the traced process */
    uint32_t euid, egid; /* its effective ids */
    uint64_t self;       /* our own packed token (slot ownership) */
} tl_ctl_peer;

/*
 * Opens the control object of pid, deciding ESRCH and EPERM first
 * (tl_proc_check_target), then ENOTSUP when the process has no valid object
 * (runs no libtracelog, made no trace call yet, or the object is stale,
 * squatted or damaged; it is left in place: the process that owns the pid
 * replaces it); EIO if /proc cannot be read. Never waits for the process.
 */
int tl_ctl_open(pid_t pid, tl_ctl_peer *p);
/*
 * tl_ctl_open, except that a child of the caller with no object yet gets one,
 * made by the caller as the child would have made it (its pid, start time,
 * user): the child finds it at its next trace call, or at load after an exec
 * (tl_xproc_adopt_if_made), with the announcements made meanwhile. So a
 * controller may fork, exec and trace its child at once, as the standard's
 * examples do. A child that never runs libtracelog never acts on it.
 */
int tl_ctl_open_or_make(pid_t pid, tl_ctl_peer *p);
void tl_ctl_close(tl_ctl_peer *p);
/* Once the process has ended: removes its object's name if it is still that process's (it may not have run libtracelog to do so). */
void tl_ctl_remove_if_dead(const tl_ctl_peer *p);

/*
 * Announces a: claims a free slot (or a dead controller's) unless *slot
 * already holds one of ours (>= 0), writes the announcement, and sets
 * TL_CTL_PENDING. *slot and *gen get where and which generation. 0, EAGAIN
 * (every slot is held by a live controller) or ESRCH (the process is gone).
 */
int tl_ctl_announce(tl_ctl_peer *p, const tl_announce *a, int *slot, uint64_t *gen);
/* Gives a slot of ours back (the traced process keeps what it mapped until a DETACH). */
void tl_ctl_release(tl_ctl_peer *p, int slot);
/*
 * Waits until the traced process acknowledged generation gen of slot, at
 * most timeout_ns. 0 with *result set (the process's answer), ETIMEDOUT, or
 * ESRCH if it died meanwhile.
 */
int tl_ctl_wait_ack(tl_ctl_peer *p, int slot, uint64_t gen, uint64_t timeout_ns, int *result);

#endif
