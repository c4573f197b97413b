/*
 * The process's event-name map. POSIX makes the mapping per process ("for
 * the calling process"), shared by all its streams and usable before any
 * stream exists; with Trace Inherit, ids must also be unique across the
 * processes traced into one stream; and a controller tracing this process
 * from another one must see the same ids (docs/design/cross-process.md,
 * section 5).
 *
 * So the map lives in shareable memory, and
 * fork() decides (process.c): a child traced into an inherited stream that
 * is alive at fork keeps sharing its parent's map, so that its names get ids
 * no other process of the stream uses and the parent's log can name them;
 * any other child gets a copy of the map as it stood at fork (names opened
 * before keep their ids) and its later names are its own. The map only
 * grows: the names below a count never change, which lets a child copy them
 * while its parent goes on opening names, and lets a controller read them
 * without the lock.
 *
 * The map starts as anonymous memory. Once the process can be found by a
 * controller (it made its control object), it moves to a named object,
 * /tracelog.<euid>.<pid>.names.<nonce>, that the controller maps too (or
 * that a controller tracing its child made first: the child adopts it).
 * The nonce is random, kept in the control object (tl_ctl_names_nonce):
 * another user cannot create the name first. Moving marks the old map
 * `moved` under its lock; lock_map() then retries with the new one, so no
 * name is opened in a map nobody reads any more.
 *
 * The lock is one word that holders CAS from 0 to their token (pid and
 * kernel tid), never a pthread object: a controller shares the map with
 * the traced process, which can write any byte of it, and glibc's robust
 * mutexes keep pointers into the holder's memory in the mutex and write
 * through them at unlock (issue 24: a traced process made its controller
 * write where it chose). A holder whose process is gone loses the lock to
 * the next taker; a controller waits REMOTE_LOCK_WAIT_NS at most.
 */
#define _GNU_SOURCE /* gettid */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"
#include "format/format.h"
#include "tracelog/schema.h"
#include "posix/internal.h"
#include "posix/names.h"
#include "posix/names_map.h"
#include "posix/thread_names.h"
#include "xproc/guard.h"
#include "xproc/proc.h"
#include "xproc/shmobj.h"

#define TL_NAMES_ENV "TRACELOG_NAMES"
#define REMOTE_LOCK_WAIT_NS 100000000ull /* a controller waits this long for the traced process's lock */
#define OWN_LOCK_WAIT_NS UINT64_MAX     /* the process itself waits for a live holder (its parent, a controller) */

typedef tl_names name_map;

static _Atomic(name_map *) map;
static _Atomic int map_named; /* map is this process's named object */
static int map_inherited;     /* map is the parent's, shared through an inherited stream: never moved by us */
static _Atomic int redirected; /* map_inherited, and our named map sends controllers to it */
static tl_proc_token redirect_self; /* the process that made that named map (removed at its exit) */
static uint64_t redirect_nonce;     /* and the nonce in its name */
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER; /* making the map, moving it, and fork */
static name_map *locked_for_fork; /* the map whose lock the forking thread holds */
static uint32_t count_at_fork;    /* names it held then: the child's copy */

static const char *const system_names[TL_SYSTEM_EVENTS + 1] = {
    NULL,
    "posix_trace_error",
    "posix_trace_start",
    "posix_trace_stop",
    "posix_trace_overflow",
    "posix_trace_resume",
    "posix_trace_filter",
    "posix_trace_flush_start",
    "posix_trace_flush_stop",
};

/* What a holder stores in the lock word: its pid (which tells whether it is alive) and its thread. */
static uint64_t lock_token(void) { return (uint64_t)(uint32_t)getpid() << 32 | (uint32_t)gettid(); }

/* The holder `held` names is gone (or the word holds no process: the other side scribbled it). */
static int holder_gone(uint64_t held)
{
    pid_t pid = (pid_t)(uint32_t)(held >> 32);
    return pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH);
}

/*
 * Takes m's lock: 0, or ETIMEDOUT after wait_ns. Only CAS and loads on
 * the word, whatever it holds: a value that names no live process is taken
 * over. Waits by sleeping, 1 us doubling up to 1 ms.
 */
static int take_lock(name_map *m, uint64_t wait_ns)
{
    uint64_t me = lock_token(), started = 0;
    long pause_ns = 1000;
    for (unsigned spins = 0;; spins++) {
        uint64_t held = 0;
        if (atomic_compare_exchange_strong(&m->lock, &held, me))
            return 0;
        if (spins < 64)
            continue;
        if (holder_gone(held) && atomic_compare_exchange_strong(&m->lock, &held, me))
            return 0;
        uint64_t now = tl_clock_mono_ns();
        if (!started)
            started = now;
        if (wait_ns != UINT64_MAX && now - started >= wait_ns)
            return ETIMEDOUT;
        struct timespec pause = {0, pause_ns};
        nanosleep(&pause, NULL);
        pause_ns = pause_ns < 1000000 ? pause_ns * 2 : 1000000;
    }
}

/* Gives the lock back if we still hold it (the other side may have written the word meanwhile). */
static void unlock(name_map *m)
{
    uint64_t me = lock_token();
    atomic_compare_exchange_strong(&m->lock, &me, 0);
}

/* A new, empty map, or NULL. Only system calls: the fork child calls it too. */
static name_map *new_map(void)
{
    void *m = mmap(NULL, sizeof(name_map), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    return m == MAP_FAILED ? NULL : m;
}

/*
 * Makes n (NULL: none yet) the process's map, old the one it replaces (or
 * NULL). The names its threads had at their first events go with it: those
 * of our own table (tl_tname_own: a thread that saw no map, or the old one, when it
 * published its name: thread_started) and those of the old map (our
 * children sharing it through an inherited stream write there too).
 * Caller holds create_lock.
 */
static void set_map(name_map *n, name_map *old)
{
    atomic_store(&map, n);
    atomic_thread_fence(memory_order_seq_cst); /* pairs with tl_posix_names_thread_started's */
    if (!n)
        return;
    tl_tname_copy(&n->threads, tl_tname_own(), (uint32_t)getpid());
    if (old && old != n)
        tl_tname_copy(&n->threads, &old->threads, 0);
}

/* The count, as another process may read it (without the lock), never above the map's capacity. */
static uint32_t count_of(const name_map *m)
{
    uint32_t n = __atomic_load_n(&m->count, __ATOMIC_ACQUIRE);
    return n < TL_NAMES_USER ? n : TL_NAMES_USER;
}

/*
 * Name `index`'s schema, copied out of m into a new string (the caller
 * frees it): 0, ENOENT (none), EINVAL (its place is not within the map: the
 * other side wrote it), ENOMEM. The text is only copied: the caller parses
 * it as it would any input (another process may have written anything).
 */
static int schema_copy(const name_map *m, uint32_t index, char **out)
{
    uint32_t at = __atomic_load_n(&m->schema_at[index], __ATOMIC_RELAXED);
    uint32_t len = __atomic_load_n(&m->schema_len[index], __ATOMIC_RELAXED);
    if (!at)
        return ENOENT;
    if (len == 0 || len > TRACELOG_SCHEMA_TEXT_MAX || at - 1 > TL_NAMES_SCHEMA_ARENA ||
        len > TL_NAMES_SCHEMA_ARENA - (at - 1))
        return EINVAL;
    char *text = malloc((size_t)len + 1);
    if (!text)
        return ENOMEM;
    memcpy(text, m->schemas + at - 1, len);
    text[len] = '\0';
    *out = text;
    return 0;
}

/* The map, made on first use (caller holds create_lock). */
static name_map *map_locked(void)
{
    name_map *m = atomic_load(&map);
    if (!m) {
        m = new_map();
        set_map(m, NULL);
    }
    return m;
}

static name_map *get_map(void)
{
    name_map *m = atomic_load_explicit(&map, memory_order_acquire);
    if (m)
        return m;
    pthread_mutex_lock(&create_lock);
    m = map_locked();
    pthread_mutex_unlock(&create_lock);
    return m;
}

/* A holder that died left the map consistent: a name is counted only once it is whole. */
static int lock(name_map *m) { return take_lock(m, OWN_LOCK_WAIT_NS); }

static int open_named(uint32_t euid, const tl_proc_token *t, uint64_t nonce, int remote, name_map **out);

/*
 * m moved (to the named map of process `to`), but this process still uses
 * it: it shares it with the process that moved it (a parent, through an
 * inherited stream). Follows to the named map. 1 if the process's map
 * changed, 0 if it cannot be opened (the caller stays with m).
 */
static int follow(name_map *m, uint32_t euid, tl_proc_token to, uint64_t nonce)
{
    pthread_mutex_lock(&create_lock);
    name_map *n;
    int changed = atomic_load(&map) != m;
    if (!changed && open_named(euid, &to, nonce, 0, &n) == 0) {
        set_map(n, m);
        changed = 1;
    }
    pthread_mutex_unlock(&create_lock);
    return changed;
}

/* Locks the map (made on first use; the current one if it moved): 0, or ENOMEM or the lock's error. */
static int lock_map(name_map **out)
{
    for (;;) {
        name_map *m = get_map();
        if (!m)
            return ENOMEM;
        int e = lock(m);
        if (e)
            return e;
        if (!atomic_load(&m->moved) || atomic_load(&map_named)) {
            if (atomic_load(&m->moved)) { /* our own old map: the current one is the named map */
                unlock(m);
                continue;
            }
            *out = m;
            return 0;
        }
        tl_proc_token to = {m->to_pid, m->to_start};
        uint32_t euid = m->to_euid;
        uint64_t nonce = m->to_nonce;
        unlock(m); /* create_lock comes first (tl_posix_names_share) */
        if (!follow(m, euid, to, nonce)) { /* cannot follow: keep using it rather than lose names */
            if ((e = lock(m)))
                return e;
            *out = m;
            return 0;
        }
    }
}

/*
 * Names from..to of src, with their schemas, into dst (not yet published:
 * the caller stores the count). No allocation: the fork child calls it.
 */
static void copy_names(name_map *dst, const name_map *src, uint32_t from, uint32_t to)
{
    for (uint32_t i = from; i < to; i++) {
        memcpy(dst->names[i], src->names[i], sizeof dst->names[i]);
        uint32_t at = src->schema_at[i], len = src->schema_len[i], used = dst->schema_used;
        dst->schema_at[i] = dst->schema_len[i] = 0;
        if (!at || !len || at - 1 > TL_NAMES_SCHEMA_ARENA || len > TL_NAMES_SCHEMA_ARENA - (at - 1) ||
            used > TL_NAMES_SCHEMA_ARENA || len > TL_NAMES_SCHEMA_ARENA - used)
            continue;
        memcpy(dst->schemas + used, src->schemas + at - 1, len);
        dst->schema_at[i] = used + 1;
        dst->schema_len[i] = len;
        dst->schema_used = used + len;
    }
}

void tl_posix_names_before_fork(int shared)
{
    pthread_mutex_lock(&create_lock);
    /* A child sharing the map must find it made: otherwise parent and child
       would each make one later and give the same id to different names. */
    name_map *m = shared ? map_locked() : atomic_load(&map);
    locked_for_fork = m && lock(m) == 0 ? m : NULL;
    count_at_fork = locked_for_fork ? m->count : 0;
}

void tl_posix_names_after_fork_parent(void)
{
    if (locked_for_fork)
        unlock(locked_for_fork);
    pthread_mutex_unlock(&create_lock);
}

/*
 * In the child (one thread, async-signal-safe calls only). The parent's
 * thread holds the shared lock until its own handler: the child never
 * touches it, and copies the names the map held at fork, which no process
 * changes any more.
 */
void tl_posix_names_after_fork_child(int shared)
{
    name_map *old = atomic_load(&map);
    map_inherited = old && shared;
    atomic_store(&redirected, 0); /* the parent's named map, not ours */
    if (map_inherited)
        atomic_store(&map_named, 0);
    if (old && !shared) {
        name_map *m = count_at_fork ? new_map() : NULL;
        if (m || !count_at_fork) {
            if (m) {
                copy_names(m, old, 0, count_at_fork);
                m->count = count_at_fork;
            }
            munmap(old, sizeof *old);
            atomic_store(&map, m);
            atomic_store(&map_named, 0); /* the child's copy is its own, not yet findable */
        }
        /* else out of memory: keep sharing the parent's map rather than lose the names opened before */
    }
    pthread_mutex_unlock(&create_lock);
}

const char *tl_posix_system_name(trace_event_id_t id)
{
    return id >= 1 && id <= TL_SYSTEM_EVENTS ? system_names[id] : NULL;
}

/* Name of a user id in m (read without the lock: names below the count never change). */
static int map_name_of(const name_map *m, trace_event_id_t id, char *out, size_t cap)
{
    if (id <= POSIX_TRACE_UNNAMED_USEREVENT || id >= TL_ID_LIMIT)
        return EINVAL;
    uint32_t index = id - POSIX_TRACE_UNNAMED_USEREVENT - 1;
    if (index >= count_of(m))
        return EINVAL;
    /* Bounded: another process may have left a name without its NUL. */
    const char *name = m->names[index];
    size_t n = strnlen(name, TRACE_EVENT_NAME_MAX);
    if (cap == 0)
        return EINVAL;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, name, n);
    out[n] = '\0';
    return 0;
}

/* Whether name i was opened untyped by a controller, not by the process (TL_NAMES_BY_CONTROLLER). */
static int opened_by_controller(const name_map *m, uint32_t i)
{
    return __atomic_load_n(&m->schema_at[i], __ATOMIC_RELAXED) == 0 &&
           __atomic_load_n(&m->schema_len[i], __ATOMIC_RELAXED) == TL_NAMES_BY_CONTROLLER;
}

_Static_assert(TL_NAMES_SCHEMA_ARENA >= TL_LOG_SCHEMA_BYTES_MAX, "a map holds the schemas a log holds");

/* Name slot n gets schema (canonical text, NULL: none), if the arena has room. Caller holds m's lock. */
static void put_schema(name_map *m, uint32_t n, const char *schema)
{
    uint32_t used = m->schema_used;
    size_t len = schema ? strlen(schema) : 0;
    m->schema_at[n] = m->schema_len[n] = 0;
    if (!len || used > TL_NAMES_SCHEMA_ARENA || len > TL_NAMES_SCHEMA_ARENA - used)
        return; /* none, or no room: the process's own log still has it (typed.c) */
    memcpy(m->schemas + used, schema, len);
    m->schema_at[n] = used + 1;
    m->schema_len[n] = (uint32_t)len;
    m->schema_used = used + (uint32_t)len;
}

/*
 * Opens name (with schema, or NULL) in m, which the caller has locked.
 * settles: an open that gives the name its schema (or none) for good, ending
 * a controller's provisional open of it (TL_NAMES_BY_CONTROLLER); a controller's
 * untyped open does not.
 */
static void map_name_open(name_map *m, const char *name, size_t len, const char *schema, int settles,
                          trace_event_id_t *id)
{
    uint32_t n = count_of(m), i = 0;
    while (i < n && strncmp(m->names[i], name, TL_NAMES_NAME_BYTES) != 0)
        i++;
    if (i < n && settles && opened_by_controller(m, i))
        put_schema(m, i, schema);
    if (i == n && n < TL_NAMES_USER) {
        put_schema(m, n, schema);
        memcpy(m->names[n], name, len);
        m->names[n][len] = '\0';
        __atomic_store_n(&m->count, n + 1, __ATOMIC_RELEASE);
        n++;
    }
    *id = i < n ? POSIX_TRACE_UNNAMED_USEREVENT + 1 + i : POSIX_TRACE_UNNAMED_USEREVENT;
}

static uint32_t filters_of(const name_map *m)
{
    uint32_t n = __atomic_load_n(&m->filter_count, __ATOMIC_ACQUIRE);
    return n < TL_NAME_FILTERS_MAX ? n : TL_NAME_FILTERS_MAX;
}

size_t tl_posix_names_filters(trace_event_id_t id, uint64_t stream, tl_name_filter *out, size_t cap)
{
    name_map *m = atomic_load(&map);
    if (!m || !filters_of(m))
        return 0;
    atomic_thread_fence(memory_order_seq_cst); /* the name (or the stream) first: see tl_posix_remote_filters */
    uint32_t nf = filters_of(m), nn = count_of(m), want = id - POSIX_TRACE_UNNAMED_USEREVENT - 1;
    size_t k = 0;
    for (uint32_t f = 0; f < nf && k < cap; f++) {
        tl_names_filter_entry *fe = &m->filters[f];
        if (atomic_load(&fe->applied) || (stream && fe->stream != stream))
            continue;
        uint32_t i = 0;
        if (id)
            i = want < nn && strncmp(fe->name, m->names[want], TL_NAMES_NAME_BYTES) == 0 ? want : nn;
        else
            while (i < nn && strncmp(fe->name, m->names[i], TL_NAMES_NAME_BYTES) != 0)
                i++;
        if (i < nn)
            out[k++] = (tl_name_filter){fe->stream, POSIX_TRACE_UNNAMED_USEREVENT + 1 + i, fe->keep != 0, &fe->applied};
    }
    return k;
}

static int fixed_name(trace_event_id_t id, char *out, size_t cap)
{
    const char *sys = tl_posix_system_name(id);
    if (!sys && id != POSIX_TRACE_UNNAMED_USEREVENT)
        return 0;
    tl_copy_text(out, cap, sys ? sys : "posix_trace_unnamed_userevent");
    return 1;
}

int tl_posix_name_of(trace_event_id_t id, char *out, size_t cap)
{
    if (fixed_name(id, out, cap))
        return 0;
    name_map *m;
    if (id <= POSIX_TRACE_UNNAMED_USEREVENT || id >= TL_ID_LIMIT || lock_map(&m))
        return EINVAL;
    int e = map_name_of(m, id, out, cap);
    unlock(m);
    return e;
}

int tl_posix_name_open(const char *name, trace_event_id_t *id) { return tl_posix_name_open_schema(name, NULL, id); }

int tl_posix_name_open_schema(const char *name, const char *schema, trace_event_id_t *id)
{
    if (!name || !id)
        return EINVAL;
    size_t len = strnlen(name, TL_NAMES_NAME_BYTES);
    if (len > TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    name_map *m;
    int e = lock_map(&m);
    if (e)
        return e;
    map_name_open(m, name, len, schema, 1, id);
    unlock(m);
    return 0;
}

uint32_t tl_posix_name_count(void)
{
    name_map *m;
    if (lock_map(&m))
        return 0;
    uint32_t n = count_of(m);
    unlock(m);
    return n;
}

/* ---- the named map: this process's, and another process's (a controller's view) ---- */

static void names_name(char out[TL_SHM_NAME_MAX], uint32_t euid, uint32_t pid, uint64_t nonce)
{
    snprintf(out, TL_SHM_NAME_MAX, "/tracelog.%u.%u.names.%016llx", euid, pid, (unsigned long long)nonce);
}

/*
 * Maps the object fd names. remote: another process's map, which that
 * process can truncate under us: registered with the SIGBUS guard, so that
 * a read past its new end finds zeros instead of killing the controller.
 */
static int map_fd(int fd, int remote, name_map **out)
{
    void *m = mmap(NULL, sizeof(name_map), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return ENOMEM;
    int e = remote ? tl_guard_register(m, sizeof(name_map)) : 0;
    if (e) {
        munmap(m, sizeof(name_map));
        return e;
    }
    *out = m;
    return 0;
}

static void unmap(name_map *m, int remote)
{
    if (remote)
        tl_guard_unregister(m);
    munmap(m, sizeof *m);
}

int tl_names_check(const tl_names *m, uint32_t euid, uint32_t pid, uint64_t start, uint64_t nonce)
{
    uint32_t magic = atomic_load(&m->magic), version = __atomic_load_n(&m->version, __ATOMIC_RELAXED);
    uint32_t owner = __atomic_load_n(&m->pid, __ATOMIC_RELAXED);
    uint64_t since = __atomic_load_n(&m->start, __ATOMIC_RELAXED);
    if (magic != TL_NAMES_MAGIC)
        return ENOTSUP;
    if (owner != pid || since != start)
        return ESTALE;
    return version == TL_NAMES_VERSION && m->euid == euid && m->nonce == nonce ? 0 : ENOTSUP;
}

/*
 * 0 with the named map of the process token names; ENOENT; ESTALE (another process's, left behind);
 * ENOTSUP. remote: as map_fd.
 */
static int open_named(uint32_t euid, const tl_proc_token *t, uint64_t nonce, int remote, name_map **out)
{
    char name[TL_SHM_NAME_MAX];
    names_name(name, euid, t->pid, nonce);
    int fd;
    int e = tl_shmobj_open(name, euid, sizeof(name_map), &fd, NULL);
    if (!e)
        e = map_fd(fd, remote, out);
    if (e)
        return e;
    if (!(e = tl_names_check(*out, euid, t->pid, t->start, nonce)))
        return 0;
    unmap(*out, remote);
    return e;
}

/* Builds the named map of token t under a private name and links it in: 0, EEXIST (someone was first). */
static int make_named(uint32_t euid, uint32_t egid, const tl_proc_token *t, uint64_t nonce)
{
    char name[TL_SHM_NAME_MAX], tmp[TL_SHM_NAME_MAX];
    names_name(name, euid, t->pid, nonce);
    int fd;
    int e = tl_shmobj_create_staged(name, sizeof(name_map), tmp, &fd);
    if (e)
        return e;
    /* Written, not stored through a mapping: a process of the same user can open the staged
       object and cut it, and a store there would be a SIGBUS (a controller died of it). */
    unsigned char head[offsetof(name_map, moved)] = {0};
    uint32_t magic = TL_NAMES_MAGIC, version = TL_NAMES_VERSION;
    memcpy(head + offsetof(name_map, magic), &magic, sizeof magic);
    memcpy(head + offsetof(name_map, version), &version, sizeof version);
    memcpy(head + offsetof(name_map, pid), &t->pid, sizeof t->pid);
    memcpy(head + offsetof(name_map, euid), &euid, sizeof euid);
    memcpy(head + offsetof(name_map, start), &t->start, sizeof t->start);
    memcpy(head + offsetof(name_map, nonce), &nonce, sizeof nonce);
    e = pwrite(fd, head, sizeof head, 0) == (ssize_t)sizeof head ? 0 : ENOMEM;
    return tl_shmobj_publish(tmp, name, fd, euid, egid, e);
}

/*
 * The named map of t, made if there is none: the process's own (a stale one replaced), or a
 * controller's view of another's (remote: a stale one left to that process; as map_fd).
 */
static int open_or_make(uint32_t euid, uint32_t egid, const tl_proc_token *t, uint64_t nonce, int remote,
                        name_map **out)
{
    int replace_stale = !remote;
    for (int attempt = 0; attempt < 4; attempt++) {
        int e = open_named(euid, t, nonce, remote, out);
        if (e == ESTALE && replace_stale) {
            char name[TL_SHM_NAME_MAX];
            names_name(name, euid, t->pid, nonce);
            tl_shmobj_unlink(name);
            e = ENOENT;
        }
        if (e != ENOENT)
            return e;
        e = make_named(euid, egid, t, nonce);
        if (e && e != EEXIST)
            return e;
    }
    return EAGAIN;
}

/* Whether `prefix`'s names are the first names of `m`. */
static int names_prefix(const name_map *prefix, const name_map *m)
{
    uint32_t n = count_of(prefix);
    if (n > count_of(m))
        return 0;
    for (uint32_t i = 0; i < n; i++)
        if (strncmp(prefix->names[i], m->names[i], TL_NAMES_NAME_BYTES) != 0)
            return 0;
    return 1;
}

/* Moves the names of old (locked) into n (locked): 0, or EEXIST if they disagree on an id. */
static int merge_into(const name_map *old, name_map *n)
{
    uint32_t have = count_of(n), want = count_of(old);
    if (names_prefix(old, n))
        return 0; /* n knows every name of ours, with the same ids */
    if (!names_prefix(n, old))
        return EEXIST;
    copy_names(n, old, have, want);
    __atomic_store_n(&n->count, want, __ATOMIC_RELEASE);
    return 0;
}

/*
 * We use our parent's map (an inherited stream: fork or spawn), so our
 * names get ids there. A controller tracing us looks for our named map: we
 * make it a redirect to the parent's (`moved`, with the parent's token),
 * keeping names a controller opened in it first when they agree on every
 * id. Caller holds create_lock. 0 or an errno (EBUSY: the parent's map is
 * anonymous, nobody can find it).
 */
static int redirect_to_inherited(void)
{
    name_map *inh = atomic_load(&map), *n;
    if (!inh || atomic_load(&inh->magic) != TL_NAMES_MAGIC)
        return EBUSY;
    tl_proc_token self;
    uint64_t nonce;
    int e = tl_proc_token_of(getpid(), &self);
    if (!e)
        e = tl_xproc_names_nonce(&nonce);
    if (!e)
        e = open_or_make((uint32_t)geteuid(), (uint32_t)getegid(), &self, nonce, 0, &n);
    if (e)
        return e;
    if (!(e = lock(n))) {
        if (!atomic_load(&n->moved) && !(e = lock(inh))) {
            e = merge_into(n, inh);
            unlock(inh);
            if (!e) {
                n->to_pid = inh->pid;
                n->to_start = inh->start;
                n->to_euid = inh->euid;
                n->to_nonce = inh->nonce;
                atomic_store(&n->moved, 1);
            }
        }
        unlock(n);
    }
    munmap(n, sizeof *n);
    if (!e) {
        redirect_self = self;
        redirect_nonce = nonce;
        atomic_store(&redirected, 1);
    }
    return e;
}

int tl_posix_names_share(void)
{
    if (atomic_load(&map_named) || atomic_load(&redirected))
        return 0;
    pthread_mutex_lock(&create_lock);
    if (map_inherited) {
        int e = atomic_load(&redirected) ? 0 : redirect_to_inherited();
        pthread_mutex_unlock(&create_lock);
        return e;
    }
    int e = 0;
    name_map *old = map_locked(), *n = NULL;
    tl_proc_token self;
    uint64_t nonce = 0;
    if (!old)
        e = ENOMEM;
    if (!e && !atomic_load(&map_named)) {
        e = tl_proc_token_of(getpid(), &self);
        if (!e)
            e = tl_xproc_names_nonce(&nonce);
        if (!e)
            e = open_or_make((uint32_t)geteuid(), (uint32_t)getegid(), &self, nonce, 0, &n);
        if (!e && !(e = lock(old))) {
            if (!(e = lock(n))) {
                e = merge_into(old, n);
                unlock(n);
            }
            if (!e) {
                old->to_pid = self.pid;
                old->to_start = self.start;
                old->to_euid = (uint32_t)geteuid();
                old->to_nonce = nonce;
                atomic_store(&old->moved, 1);
                set_map(n, old);
                atomic_store(&map_named, 1);
            }
            unlock(old);
        }
        if (e && n)
            munmap(n, sizeof *n);
        /* The old map stays mapped: another thread may hold it (it retries once it sees `moved`). */
    }
    pthread_mutex_unlock(&create_lock);
    return e;
}

/* At exit, the name of our map (or redirect) goes with us (a killed process's: tl_names_sweep by its controller). */
__attribute__((destructor)) static void unlink_named_map(void)
{
    tl_proc_token self;
    char name[TL_SHM_NAME_MAX];
    if (atomic_load(&redirected) && redirect_self.pid == (uint32_t)getpid()) {
        names_name(name, (uint32_t)geteuid(), redirect_self.pid, redirect_nonce);
        if (tl_proc_token_of(getpid(), &self) == 0 && self.start == redirect_self.start)
            tl_shmobj_unlink(name);
        return;
    }
    name_map *m = atomic_load(&map);
    if (!m || !atomic_load(&map_named) || m->pid != (uint32_t)getpid())
        return;
    names_name(name, m->euid, m->pid, m->nonce);
    if (tl_proc_token_of(getpid(), &self) == 0 && self.start == m->start)
        tl_shmobj_unlink(name);
}

int tl_posix_names_env(char *out, size_t cap)
{
    name_map *m = atomic_load(&map);
    if (!m || !atomic_load(&map_named))
        return ENOENT;
    int n = snprintf(out, cap, "%s=%u.%llu.%016llx", TL_NAMES_ENV, m->pid, (unsigned long long)m->start,
                     (unsigned long long)m->nonce);
    return n > 0 && (size_t)n < cap ? 0 : ENAMETOOLONG;
}

int tl_posix_names_join_env(void)
{
    const char *v = getenv(TL_NAMES_ENV);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    unsigned long long pid = strtoull(v, &end, 10);
    if (errno || *end != '.' || pid == 0 || pid > UINT32_MAX)
        return EINVAL;
    const char *start_text = end + 1;
    unsigned long long start = strtoull(start_text, &end, 10);
    if (errno || *end != '.' || end == start_text)
        return EINVAL;
    const char *nonce_text = end + 1;
    unsigned long long nonce = strtoull(nonce_text, &end, 16);
    if (errno || *end || end - nonce_text != 16)
        return EINVAL;
    tl_proc_token t = {(uint32_t)pid, start};
    name_map *m;
    int e = open_named((uint32_t)geteuid(), &t, nonce, 0, &m);
    if (e)
        return e;
    pthread_mutex_lock(&create_lock);
    name_map *old = atomic_load(&map);
    if (old) { /* names opened by a constructor before ours: they keep their ids in the old map */
        pthread_mutex_unlock(&create_lock);
        munmap(m, sizeof *m);
        return EBUSY;
    }
    set_map(m, NULL);
    map_inherited = 1;
    pthread_mutex_unlock(&create_lock);
    return 0;
}

int tl_names_attach(uint32_t euid, uint32_t egid, uint32_t pid, uint64_t start, uint64_t nonce, tl_names **out)
{
    tl_proc_token t = {pid, start};
    /* A stale map is left for the process to replace: unlinking it here could race with that. */
    int e = open_or_make(euid, egid, &t, nonce, 1, out);
    if (e || !atomic_load(&(*out)->moved))
        return e;
    /* A redirect to the map it shares with its parent (redirect_to_inherited): one step, same user only. */
    tl_proc_token to = {(*out)->to_pid, (*out)->to_start};
    name_map *m;
    if (open_named(euid, &to, (*out)->to_nonce, 1, &m) == 0) {
        unmap(*out, 1);
        *out = m;
    }
    return 0; /* the parent's map is gone: the redirect itself (no names) */
}

int tl_names_moved(const tl_names *m) { return atomic_load(&m->moved) != 0; }

void tl_names_detach(tl_names *m)
{
    if (m)
        unmap(m, 1);
}

void tl_names_sweep(uint32_t euid, uint32_t pid, uint64_t start, uint64_t nonce)
{
    tl_proc_token t = {pid, start};
    name_map *now;
    if (tl_proc_alive(&t) || open_named(euid, &t, nonce, 1, &now) != 0)
        return; /* alive, or not that process's (a later one's with its pid) */
    unmap(now, 1);
    char name[TL_SHM_NAME_MAX];
    names_name(name, euid, pid, nonce);
    tl_shmobj_unlink(name);
}

uint32_t tl_names_count(const tl_names *m) { return m ? count_of(m) : tl_posix_name_count(); }

int tl_names_name_of(const tl_names *m, trace_event_id_t id, char *out, size_t cap)
{
    if (!m || fixed_name(id, out, cap))
        return m ? 0 : tl_posix_name_of(id, out, cap);
    return map_name_of(m, id, out, cap);
}

int tl_names_schema_of(const tl_names *m, trace_event_id_t id, char **out)
{
    *out = NULL;
    if (id <= POSIX_TRACE_UNNAMED_USEREVENT || id >= TL_ID_LIMIT)
        return ENOENT;
    uint32_t index = id - POSIX_TRACE_UNNAMED_USEREVENT - 1;
    name_map *own = NULL;
    if (!m) {
        if (lock_map(&own))
            return ENOENT;
        m = own;
    }
    int e = index >= count_of(m) ? ENOENT : opened_by_controller(m, index) ? EAGAIN : schema_copy(m, index, out);
    if (own)
        unlock(own);
    return e;
}

int tl_names_open(tl_names *m, const char *name, trace_event_id_t *id)
{
    if (!m)
        return tl_posix_name_open(name, id);
    if (!name || !id)
        return EINVAL;
    size_t len = strnlen(name, TL_NAMES_NAME_BYTES);
    if (len > TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    /* The traced process's lock: a stuck or scribbled one costs EAGAIN, never a hang or a write of ours elsewhere. */
    if (take_lock(m, REMOTE_LOCK_WAIT_NS))
        return EAGAIN;
    uint32_t before = count_of(m);
    map_name_open(m, name, len, NULL, 0, id);
    if (count_of(m) > before) /* ours: the process may still open it typed */
        m->schema_len[before] = TL_NAMES_BY_CONTROLLER;
    unlock(m);
    return 0;
}

int tl_names_open_typed(tl_names *m, const char *name, const char *schema, trace_event_id_t *id)
{
    size_t len = strnlen(name, TL_NAMES_NAME_BYTES);
    if (len > TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    if (take_lock(m, REMOTE_LOCK_WAIT_NS))
        return EAGAIN;
    uint32_t n = count_of(m), i = 0;
    while (i < n && strncmp(m->names[i], name, TL_NAMES_NAME_BYTES) != 0)
        i++;
    int e = 0;
    if (i < n) { /* opened before: with this schema, or it is another event type */
        char *have = NULL;
        e = schema_copy(m, i, &have) == 0 && strcmp(have, schema) == 0 ? 0 : EEXIST;
        free(have);
        if (!e)
            *id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + i;
    } else {
        map_name_open(m, name, len, schema, 1, id);
    }
    unlock(m);
    return e;
}

int tl_posix_remote_names(const tl_remote *rm, tl_names **cache, int *refused)
{
    if (*cache && tl_names_moved(*cache)) { /* it joined its parent's map since */
        tl_names_detach(*cache);
        *cache = NULL;
    }
    tl_remote_names_at at;
    tl_remote_names_key(rm, &at);
    int e = 0;
    if (!*cache && at.nonce) /* no nonce: it has no control object yet, nothing refused */
        e = tl_names_attach(at.euid, at.egid, at.pid, at.start, at.nonce, cache);
    if (e)
        *cache = NULL;
    if (refused)
        *refused = e == ENOTSUP || e == ESTALE || e == EACCES ? e : 0;
    return *cache ? 0 : EAGAIN;
}

void tl_posix_remote_names_release(tl_remote *rm, tl_names **cache)
{
    tl_remote_names_at at;
    tl_remote_names_key(rm, &at);
    if (tl_remote_ended(rm, NULL))
        tl_names_sweep(at.euid, at.pid, at.start, at.nonce);
    tl_names_detach(*cache);
    *cache = NULL;
}

/*
 * Lock-free and async-signal-safe (the trace point calls it): the map may
 * move meanwhile (set_map). A thread that finds the map it wrote to still
 * current after its entry is in it was seen by the mover's copy, which
 * reads after its store of the new map; else it writes to the new one too.
 */
void tl_posix_names_thread_started(uint32_t pid, uint32_t ktid, const char *name)
{
    atomic_thread_fence(memory_order_seq_cst); /* our own table's entry first: set_map copies it */
    name_map *m = atomic_load(&map);
    for (int i = 0; m && i < 4; i++) {
        tl_tname_put(&m->threads, pid, ktid, name, 0);
        atomic_thread_fence(memory_order_seq_cst);
        name_map *now = atomic_load(&map);
        if (now == m)
            return;
        m = now;
    }
}

int tl_names_thread_name(const tl_names *m, uint32_t pid, uint32_t ktid, char *out, size_t cap)
{
    if (!m)
        m = atomic_load(&map);
    if (!m) {
        if (cap)
            out[0] = 0;
        return ENOENT;
    }
    return tl_tname_get(&m->threads, pid, ktid, out, cap);
}

int tl_names_filter_by_name(tl_names *m, uint64_t stream, const char *name, int keep, trace_event_id_t *id)
{
    size_t len = strnlen(name, TL_NAMES_NAME_BYTES);
    if (len > TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    if (take_lock(m, REMOTE_LOCK_WAIT_NS))
        return EAGAIN;
    uint32_t n = count_of(m), i = 0, f = filters_of(m);
    while (i < n && strncmp(m->names[i], name, TL_NAMES_NAME_BYTES) != 0)
        i++;
    int e = EINPROGRESS;
    if (i < n) {
        *id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + i;
        e = 0;
    } else if (f >= TL_NAME_FILTERS_MAX) {
        e = ENOSPC;
    } else {
        tl_names_filter_entry *fe = &m->filters[f];
        fe->stream = stream;
        fe->keep = keep != 0;
        atomic_store(&fe->applied, 0);
        memcpy(fe->name, name, len);
        memset(fe->name + len, 0, sizeof fe->name - len);
        __atomic_store_n(&m->filter_count, f + 1, __ATOMIC_RELEASE);
    }
    unlock(m);
    return e;
}
