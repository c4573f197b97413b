/*
 * The process's event-name map. POSIX makes the mapping per process ("for
 * the calling process"), shared by all its streams and usable before any
 * stream exists; with Trace Inherit, ids must also be unique across the
 * processes traced into one stream; and a controller tracing this process
 * from another one must see the same ids (docs/design/cross-process.md,
 * section 5).
 *
 * So the map lives in shareable memory (a robust process-shared lock), and
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
 * /tracelog.<euid>.<pid>.names, that the controller maps too (or that a
 * controller tracing its child made first: the child adopts it). Moving
 * marks the old map `moved` under its lock; lock_map() then retries with
 * the new one, so no name is opened in a map nobody reads any more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"
#include "posix/internal.h"
#include "xproc/proc.h"
#include "xproc/shmobj.h"

#define TL_NAMES_ENV "TRACELOG_NAMES"
#define USER_NAMES (TRACE_USER_EVENT_MAX - 1) /* the unnamed user event takes one slot */
#define NAMES_MAGIC 0x4d4e4c54u               /* "TLNM" */
#define NAMES_VERSION 1u
#define REMOTE_LOCK_WAIT_NS 100000000 /* a controller waits this long for the traced process's lock */

struct tl_names {
    _Atomic uint32_t magic; /* named maps: valid once set (they are linked in complete) */
    uint32_t version;
    uint32_t pid;           /* the process whose map it is (with start: its token) */
    uint32_t euid;
    uint64_t start;
    _Atomic uint32_t moved; /* replaced by the named map of process (to_pid, to_start): names go there now */
    uint32_t count;         /* stored with release order after the name it adds */
    uint32_t to_pid, to_euid;
    uint64_t to_start;
    pthread_mutex_t lock;   /* process-shared, robust: for opening names */
    char names[USER_NAMES][TRACE_EVENT_NAME_MAX];
};
typedef tl_names name_map;

static _Atomic(name_map *) map;
static _Atomic int map_named; /* map is this process's named object */
static int map_inherited;     /* map is the parent's, shared through an inherited stream: never moved by us */
static _Atomic int redirected; /* map_inherited, and our named map sends controllers to it */
static tl_proc_token redirect_self; /* the process that made that named map (removed at its exit) */
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

static void init_lock(name_map *m)
{
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&m->lock, &a);
    pthread_mutexattr_destroy(&a);
}

/* A new, empty map, or NULL. Only system calls: the fork child calls it too. */
static name_map *new_map(void)
{
    void *m = mmap(NULL, sizeof(name_map), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    init_lock(m);
    return m;
}

/* The count, as another process may read it (without the lock), never above the map's capacity. */
static uint32_t count_of(const name_map *m)
{
    uint32_t n = __atomic_load_n(&m->count, __ATOMIC_ACQUIRE);
    return n < USER_NAMES ? n : USER_NAMES;
}

/* The map, made on first use (caller holds create_lock). */
static name_map *map_locked(void)
{
    name_map *m = atomic_load(&map);
    if (!m) {
        tl_posix_process_init(); /* its fork handlers copy or share the map */
        m = new_map();
        atomic_store(&map, m);
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

static int lock(name_map *m)
{
    int e = pthread_mutex_lock(&m->lock);
    if (e == EOWNERDEAD) /* a process died holding it: the map itself is always consistent */
        e = pthread_mutex_consistent(&m->lock);
    return e;
}

static int open_named(uint32_t euid, const tl_proc_token *t, name_map **out);

/*
 * m moved (to the named map of process `to`), but this process still uses
 * it: it shares it with the process that moved it (a parent, through an
 * inherited stream). Follows to the named map. 1 if the process's map
 * changed, 0 if it cannot be opened (the caller stays with m).
 */
static int follow(name_map *m, uint32_t euid, tl_proc_token to)
{
    pthread_mutex_lock(&create_lock);
    name_map *n;
    int changed = atomic_load(&map) != m;
    if (!changed && open_named(euid, &to, &n) == 0) {
        atomic_store(&map, n);
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
                pthread_mutex_unlock(&m->lock);
                continue;
            }
            *out = m;
            return 0;
        }
        tl_proc_token to = {m->to_pid, m->to_start};
        uint32_t euid = m->to_euid;
        pthread_mutex_unlock(&m->lock); /* create_lock comes first (tl_posix_names_share) */
        if (!follow(m, euid, to)) { /* cannot follow: keep using it rather than lose names */
            if ((e = lock(m)))
                return e;
            *out = m;
            return 0;
        }
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
        pthread_mutex_unlock(&locked_for_fork->lock);
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
                memcpy(m->names, old->names, (size_t)count_at_fork * sizeof m->names[0]);
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
    size_t n = strnlen(name, TRACE_EVENT_NAME_MAX - 1);
    if (cap == 0)
        return EINVAL;
    if (n >= cap)
        n = cap - 1;
    memcpy(out, name, n);
    out[n] = '\0';
    return 0;
}

/* Opens name in m, which the caller has locked. */
static void map_name_open(name_map *m, const char *name, size_t len, trace_event_id_t *id)
{
    uint32_t n = count_of(m), i = 0;
    while (i < n && strncmp(m->names[i], name, TRACE_EVENT_NAME_MAX) != 0)
        i++;
    if (i == n && n < USER_NAMES) {
        memcpy(m->names[n], name, len + 1);
        __atomic_store_n(&m->count, n + 1, __ATOMIC_RELEASE);
        n++;
    }
    *id = i < n ? POSIX_TRACE_UNNAMED_USEREVENT + 1 + i : POSIX_TRACE_UNNAMED_USEREVENT;
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
    pthread_mutex_unlock(&m->lock);
    return e;
}

int tl_posix_name_open(const char *name, trace_event_id_t *id)
{
    if (!name || !id)
        return EINVAL;
    size_t len = strlen(name);
    if (len >= TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    name_map *m;
    int e = lock_map(&m);
    if (e)
        return e;
    map_name_open(m, name, len, id);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

uint32_t tl_posix_name_count(void)
{
    name_map *m;
    if (lock_map(&m))
        return 0;
    uint32_t n = count_of(m);
    pthread_mutex_unlock(&m->lock);
    return n;
}

/* ---- the named map: this process's, and another process's (a controller's view) ---- */

static void names_name(char out[TL_SHM_NAME_MAX], uint32_t euid, uint32_t pid)
{
    snprintf(out, TL_SHM_NAME_MAX, "/tracelog.%u.%u.names", euid, pid);
}

static int map_fd(int fd, name_map **out)
{
    void *m = mmap(NULL, sizeof(name_map), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return ENOMEM;
    *out = m;
    return 0;
}

/* 0 with the named map of the process token names; ENOENT; ESTALE (another process's, left behind); ENOTSUP. */
static int open_named(uint32_t euid, const tl_proc_token *t, name_map **out)
{
    char name[TL_SHM_NAME_MAX];
    names_name(name, euid, t->pid);
    int fd;
    int e = tl_shmobj_open(name, euid, sizeof(name_map), &fd, NULL);
    if (!e)
        e = map_fd(fd, out);
    if (e)
        return e;
    name_map *m = *out;
    if (atomic_load(&m->magic) == NAMES_MAGIC && m->version == NAMES_VERSION && m->pid == t->pid &&
        m->start == t->start && m->euid == euid)
        return 0;
    int stale = atomic_load(&m->magic) == NAMES_MAGIC && (m->pid != t->pid || m->start != t->start);
    munmap(m, sizeof *m);
    return stale ? ESTALE : ENOTSUP;
}

/* Builds the named map of token t under a private name and links it in: 0, EEXIST (someone was first). */
static int make_named(uint32_t euid, uint32_t egid, const tl_proc_token *t)
{
    char name[TL_SHM_NAME_MAX], tmp[TL_SHM_NAME_MAX];
    names_name(name, euid, t->pid);
    int fd;
    int e = tl_shmobj_create_staged(name, sizeof(name_map), euid, egid, tmp, &fd);
    if (e)
        return e;
    name_map *m;
    e = map_fd(fd, &m);
    if (!e) {
        m->version = NAMES_VERSION;
        m->pid = t->pid;
        m->start = t->start;
        m->euid = euid;
        init_lock(m);
        atomic_store(&m->magic, NAMES_MAGIC);
        munmap(m, sizeof *m);
    }
    return tl_shmobj_publish(tmp, name, e);
}

/* The named map of t, made if there is none (a stale one replaced only if `replace_stale`). */
static int open_or_make(uint32_t euid, uint32_t egid, const tl_proc_token *t, int replace_stale, name_map **out)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        int e = open_named(euid, t, out);
        if (e == ESTALE && replace_stale) {
            char name[TL_SHM_NAME_MAX];
            names_name(name, euid, t->pid);
            tl_shmobj_unlink(name);
            e = ENOENT;
        }
        if (e != ENOENT)
            return e;
        e = make_named(euid, egid, t);
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
        if (strncmp(prefix->names[i], m->names[i], TRACE_EVENT_NAME_MAX) != 0)
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
    memcpy(n->names[have], old->names[have], (size_t)(want - have) * sizeof n->names[0]);
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
    if (!inh || atomic_load(&inh->magic) != NAMES_MAGIC)
        return EBUSY;
    tl_proc_token self;
    int e = tl_proc_token_of(getpid(), &self);
    if (!e)
        e = open_or_make((uint32_t)geteuid(), (uint32_t)getegid(), &self, 1, &n);
    if (e)
        return e;
    if (!(e = lock(n))) {
        if (!atomic_load(&n->moved) && !(e = lock(inh))) {
            e = merge_into(n, inh);
            pthread_mutex_unlock(&inh->lock);
            if (!e) {
                n->to_pid = inh->pid;
                n->to_start = inh->start;
                n->to_euid = inh->euid;
                atomic_store(&n->moved, 1);
            }
        }
        pthread_mutex_unlock(&n->lock);
    }
    munmap(n, sizeof *n);
    if (!e) {
        redirect_self = self;
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
    if (!old)
        e = ENOMEM;
    if (!e && !atomic_load(&map_named)) {
        e = tl_proc_token_of(getpid(), &self);
        if (!e)
            e = open_or_make((uint32_t)geteuid(), (uint32_t)getegid(), &self, 1, &n);
        if (!e && !(e = lock(old))) {
            if (!(e = lock(n))) {
                e = merge_into(old, n);
                pthread_mutex_unlock(&n->lock);
            }
            if (!e) {
                old->to_pid = self.pid;
                old->to_start = self.start;
                old->to_euid = (uint32_t)geteuid();
                atomic_store(&old->moved, 1);
                atomic_store(&map, n);
                atomic_store(&map_named, 1);
            }
            pthread_mutex_unlock(&old->lock);
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
        names_name(name, (uint32_t)geteuid(), redirect_self.pid);
        if (tl_proc_token_of(getpid(), &self) == 0 && self.start == redirect_self.start)
            tl_shmobj_unlink(name);
        return;
    }
    name_map *m = atomic_load(&map);
    if (!m || !atomic_load(&map_named) || m->pid != (uint32_t)getpid())
        return;
    names_name(name, m->euid, m->pid);
    if (tl_proc_token_of(getpid(), &self) == 0 && self.start == m->start)
        tl_shmobj_unlink(name);
}

int tl_posix_names_env(char *out, size_t cap)
{
    name_map *m = atomic_load(&map);
    if (!m || !atomic_load(&map_named))
        return ENOENT;
    int n = snprintf(out, cap, "%s=%u.%llu", TL_NAMES_ENV, m->pid, (unsigned long long)m->start);
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
    if (errno || *end || end == start_text)
        return EINVAL;
    tl_proc_token t = {(uint32_t)pid, start};
    name_map *m;
    int e = open_named((uint32_t)geteuid(), &t, &m);
    if (e)
        return e;
    pthread_mutex_lock(&create_lock);
    tl_posix_process_init();
    name_map *old = atomic_load(&map);
    if (old) { /* names opened by a constructor before ours: they keep their ids in the old map */
        pthread_mutex_unlock(&create_lock);
        munmap(m, sizeof *m);
        return EBUSY;
    }
    atomic_store(&map, m);
    map_inherited = 1;
    pthread_mutex_unlock(&create_lock);
    return 0;
}

int tl_names_attach(uint32_t euid, uint32_t egid, uint32_t pid, uint64_t start, tl_names **out)
{
    tl_proc_token t = {pid, start};
    /* A stale map is left for the process to replace: unlinking it here could race with that. */
    int e = open_or_make(euid, egid, &t, 0, out);
    if (e || !atomic_load(&(*out)->moved))
        return e;
    /* A redirect to the map it shares with its parent (redirect_to_inherited): one step, same user only. */
    tl_proc_token to = {(*out)->to_pid, (*out)->to_start};
    name_map *m;
    if (open_named(euid, &to, &m) == 0) {
        munmap(*out, sizeof **out);
        *out = m;
    }
    return 0; /* the parent's map is gone: the redirect itself (no names) */
}

int tl_names_moved(const tl_names *m) { return atomic_load(&m->moved) != 0; }

void tl_names_detach(tl_names *m)
{
    if (m)
        munmap(m, sizeof *m);
}

void tl_names_sweep(uint32_t euid, uint32_t pid, uint64_t start)
{
    tl_proc_token t = {pid, start};
    name_map *now;
    if (tl_proc_alive(&t) || open_named(euid, &t, &now) != 0)
        return; /* alive, or not that process's (a later one's with its pid) */
    munmap(now, sizeof *now);
    char name[TL_SHM_NAME_MAX];
    names_name(name, euid, pid);
    tl_shmobj_unlink(name);
}

uint32_t tl_names_count(const tl_names *m) { return m ? count_of(m) : tl_posix_name_count(); }

int tl_names_name_of(const tl_names *m, trace_event_id_t id, char *out, size_t cap)
{
    if (!m || fixed_name(id, out, cap))
        return m ? 0 : tl_posix_name_of(id, out, cap);
    return map_name_of(m, id, out, cap);
}

int tl_names_open(tl_names *m, const char *name, trace_event_id_t *id)
{
    if (!m)
        return tl_posix_name_open(name, id);
    if (!name || !id)
        return EINVAL;
    size_t len = strlen(name);
    if (len >= TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    /* Another process's lock: a corrupted or stuck one costs an error, never a hang. */
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_nsec += REMOTE_LOCK_WAIT_NS;
    if (until.tv_nsec >= 1000000000) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000;
    }
    int e = pthread_mutex_timedlock(&m->lock, &until);
    if (e == EOWNERDEAD)
        e = pthread_mutex_consistent(&m->lock);
    if (e)
        return e == ETIMEDOUT ? EAGAIN : e;
    map_name_open(m, name, len, id);
    pthread_mutex_unlock(&m->lock);
    return 0;
}

int posix_trace_eventid_open(const char *restrict event_name, trace_event_id_t *restrict event_id)
{
    /* An instrumented process: from now on a controller can find it (design note, section 3.2). */
    if (tl_xproc_ensure_ctl() == 0)
        tl_posix_names_share(); /* ... and read our names */
    return tl_posix_name_open(event_name, event_id);
}
