/*
 * Event names and ids (names.c, typed.c): the process's name map, another
 * process's (a controller reads it), and the schemas names carry. Ids
 * below TL_SYSTEM_EVENTS + 1 are system events.
 */
#ifndef TRACELOG_POSIX_NAMES_H
#define TRACELOG_POSIX_NAMES_H

#include "posix/internal.h"

const char *tl_posix_system_name(trace_event_id_t id); /* NULL if not a system id */
int tl_posix_name_of(trace_event_id_t id, char *out, size_t cap); /* 0 or EINVAL */
int tl_posix_name_open(const char *name, trace_event_id_t *id);
/* Opens name with its payload schema (canonical text, or NULL), which a controller reading the map sees with it. */
int tl_posix_name_open_schema(const char *name, const char *schema, trace_event_id_t *id);
uint32_t tl_posix_name_count(void);
/*
 * Moves the map to the named object a controller reads
 * (/tracelog.<euid>.<pid>.names), adopting one a controller made for us. 0
 * or an errno (the map then stays private: a controller sees no names).
 */
int tl_posix_names_share(void);
/* "TRACELOG_NAMES=<pid>.<start>": where a spawned child finds this process's named map; 0 or an errno. */
int tl_posix_names_env(char *out, size_t cap);
/* At load in a spawned child: uses the map TRACELOG_NAMES names (never moved, never removed by us). */
int tl_posix_names_join_env(void);
/*
 * Another process's named map (made if it has none; for a process sharing
 * its parent's map, the parent's): 0, ENOENT, ENOTSUP, ESTALE (a dead
 * process's), EAGAIN.
 */
int tl_names_attach(uint32_t euid, uint32_t egid, uint32_t pid, uint64_t start, uint64_t nonce, tl_names **out);
/*
 * Whether mapped map m is the named map of process (pid, start) of user
 * euid with that nonce, of this build's layout: 0; ESTALE (another process's
 * with that pid, left behind); ENOTSUP (not a map, or of another version).
 * The process can rewrite any byte later: every read after stays bounded.
 */
int tl_names_check(const tl_names *m, uint32_t euid, uint32_t pid, uint64_t start, uint64_t nonce);
/* 1 once m became a redirect (its process joined its parent's map after we attached): attach again. */
int tl_names_moved(const tl_names *m);
void tl_names_detach(tl_names *m); /* unmaps m; accepts NULL */
/* A killed process cannot remove its named map: its controller does (if the process is gone). */
void tl_names_sweep(uint32_t euid, uint32_t pid, uint64_t start, uint64_t nonce);
/* The functions above on map m, or on the process's own map when m is NULL. */
uint32_t tl_names_count(const tl_names *m);
int tl_names_name_of(const tl_names *m, trace_event_id_t id, char *out, size_t cap);
int tl_names_open(tl_names *m, const char *name, trace_event_id_t *id);
/*
 * Opens name with its schema (canonical text) in another process's map m:
 * the id it has there, or a new one; EEXIST if the name is there untyped or
 * with another schema; EAGAIN (its lock), ENAMETOOLONG.
 */
int tl_names_open_typed(tl_names *m, const char *name, const char *schema, trace_event_id_t *id);
/*
 * The schema text the map holds for user id (m NULL: the process's own), a
 * new string the caller frees and must parse as untrusted input: 0, ENOENT
 * (none), EAGAIN (none yet: a controller opened it to filter it before the
 * process did, which may still open it typed), EINVAL (its place in the map
 * is out of bounds), ENOMEM.
 */
int tl_names_schema_of(const tl_names *m, trace_event_id_t id, char **out);
/*
 * Thread names (thread_names.h): thread (pid, ktid) of this process, or of
 * a child recording into its inherited stream, had name at its first event.
 * Into the process's map (async-signal-safe, lock-free: the trace point
 * calls it once per thread), where its controller and the parent of an
 * inherited stream read it.
 */
void tl_posix_names_thread_started(uint32_t pid, uint32_t ktid, const char *name);
/*
 * The name thread (pid, ktid) had at its first event, from map m (NULL:
 * the process's own), written by another process: 0; ENOENT (none known);
 * EILSEQ (a malformed entry: the caller counts it). out gets "" unless 0.
 */
int tl_names_thread_name(const tl_names *m, uint32_t pid, uint32_t ktid, char *out, size_t cap);
/*
 * Filters by name (tracelog_trace_filter_name). The controller: filters
 * `name` in its stream `stream` (its buffer's id) of map m's process, by
 * name: 0 with *id when the process has opened the name (the caller filters
 * that id); EINPROGRESS when not yet: the map asks the process to apply it
 * when it opens the name, so that its ids stay those of its own order;
 * EAGAIN (the map's lock), ENOSPC (too many such names), ENAMETOOLONG.
 */
int tl_names_filter_by_name(tl_names *m, uint64_t stream, const char *name, int keep, trace_event_id_t *id);
/* Names a map holds filtered that way, over its process's life. */
#define TL_NAME_FILTERS_MAX 64u
/* The process: a filter a controller asked for, not applied yet. */
typedef struct tl_name_filter {
    uint64_t stream;           /* the controller's stream (its buffer's id) */
    trace_event_id_t id;       /* the name's id in the process */
    int keep;                  /* 1: let it through; 0: filter it out */
    _Atomic uint32_t *applied; /* in the map: set by whoever applies it (once) */
} tl_name_filter;
/*
 * Those of the process's own map for user id (0: any name it has opened)
 * in stream (0: any stream), at most cap into out: how many. Lock-free and
 * async-signal-safe (a stream's publication runs in the trace point's slow
 * path); the map's text is read bounded by its slots.
 */
size_t tl_posix_names_filters(trace_event_id_t id, uint64_t stream, tl_name_filter *out, size_t cap);

/* Fork: shared, the child keeps its parent's map (an inherited stream is alive); else it gets a copy. */
void tl_posix_names_before_fork(int shared);
void tl_posix_names_after_fork_parent(void);
void tl_posix_names_after_fork_child(int shared);
/* typed.c: a name's payload schema (canonical text, NULL if none; never freed), read without a lock. */
const char *tl_posix_schema_of(const char *name);
/* The schema event id (named name) is logged with: a system event's built-in one, or its name's; NULL if none. */
const char *tl_posix_event_schema(trace_event_id_t id, const char *name);

/*
 * The traced process's named map, attached once into *cache (made if it
 * has none yet: our child before its exec opens its names there), again if
 * it moved (the process joined its parent's map since): 0, or EAGAIN while
 * there is none we can read. *refused (if not NULL) gets 0, or why the
 * process's map was refused for good (tl_names_attach's errno: ENOTSUP, a
 * map of another version or not a map; ESTALE; EACCES), which leaves a log
 * without the process's names; a failure the next call may not meet (a
 * lock, memory, descriptors) is not a refusal. The caller serialises the
 * calls on one cache.
 */
int tl_posix_remote_names(const tl_remote *rm, tl_names **cache, int *refused);
/* Detaches *cache; removes the map if its process is gone (a killed process cannot). */
void tl_posix_remote_names_release(tl_remote *rm, tl_names **cache);
/*
 * The names a handle's stream uses: 0 with *out (NULL: this process's own), or EAGAIN. For
 * another process's stream, *out stays valid until tl_posix_trace_names_done, which every call
 * must be paired with: the cached map is replaced when the process's map moved, and two threads
 * of the controller calling the POSIX name functions once read a map the other had unmapped.
 */
int tl_posix_trace_names(tl_trace *t, tl_names **out);
void tl_posix_trace_names_done(tl_trace *t);

#endif
