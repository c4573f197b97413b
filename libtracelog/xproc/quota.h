/*
 * TRACE_SYS_MAX per user (design note, section 8): a table of TRACE_SYS_MAX
 * entries in /tracelog.<euid>.streams, one per stream in existence, each
 * holding the packed token of the process that created the stream. A dead
 * holder's entry is taken back by the next claimant, so a crash never
 * leaks the limit. The table is shared only by the processes of one user:
 * a system-wide one would let any user fill it and deny tracing to all.
 */
#ifndef TRACELOG_XPROC_QUOTA_H
#define TRACELOG_XPROC_QUOTA_H

#include <stdatomic.h>
#include <stdint.h>

#include "xproc/shmobj.h"

#define TL_QUOTA_MAGIC 0x51534c54u /* "TLSQ" */
#define TL_QUOTA_VERSION 1u
#define TL_QUOTA_SIZE 4096u

typedef struct tl_quota_table {
    uint32_t magic, version;
    uint32_t entries, euid;
    char pad[64 - 16];
    _Atomic uint64_t holder[]; /* packed tokens; 0 free */
} tl_quota_table;

typedef struct tl_quota {
    tl_quota_table *t;
    uint32_t entries;
    uint64_t self; /* our packed token */
    int guarded;   /* registered with the SIGBUS guard (tl_quota_guard) */
} tl_quota;

/* "/tracelog.<euid>.streams" */
void tl_quota_name(char out[TL_SHM_NAME_MAX], uint32_t euid);
/*
 * The table this process counts its streams in: the user's, or with
 * TRACELOG_STREAMS_TABLE=TAG (1 to 32 of [A-Za-z0-9_-]; anything else is
 * ignored) "/tracelog.<euid>.streams.<TAG>": processes sharing a tag share
 * a limit of their own (a test suite running beside the user's tracing).
 */
void tl_quota_name_from_env(char out[TL_SHM_NAME_MAX], uint32_t euid);

/*
 * Opens (or makes: built under a temporary name, then linked in place, so
 * nobody sees it half made) the table `name` of `entries` entries for this
 * process's euid. 0, or ENOTSUP if the name is held by something that is
 * not such a table and cannot be replaced (another user's): the caller then
 * falls back to a per-process limit. Other errnos for system failures.
 */
int tl_quota_open(const char *name, uint32_t entries, tl_quota *q);
void tl_quota_close(tl_quota *q);
/*
 * For a controller: every process of the user shares the table, a traced one too, which can
 * truncate it. Registered with the SIGBUS guard, an access past its new end finds zeros (no entry
 * held) instead of killing the controller (ptlog record's shutdown once died releasing its entry).
 * Only controllers: the guard's handler is a process-wide SIGBUS handler, which a program tracing
 * itself does not get. 0 or the guard's errno.
 */
int tl_quota_guard(tl_quota *q);

/* Takes an entry: 0 with *entry, or EAGAIN when every entry is held by a live process. */
int tl_quota_acquire(tl_quota *q, uint32_t *entry);
/* Gives an entry back (only if we still hold it). */
void tl_quota_release(tl_quota *q, uint32_t entry);
/*
 * Gives back every entry that holds our token: called once per program
 * image, at its first open, since a new image (after exec) holds no stream
 * yet, so such entries are the previous image's.
 */
void tl_quota_release_own(tl_quota *q);
/* Entries held by live processes (for statistics and tests). */
uint32_t tl_quota_in_use(const tl_quota *q);

#endif
