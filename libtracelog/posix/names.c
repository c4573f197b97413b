/*
 * The process's event-name map. POSIX makes the mapping per process ("for
 * the calling process"), shared by all its streams and usable before any
 * stream exists; with Trace Inherit, ids must also be unique across the
 * processes traced into one stream.
 *
 * So the map lives in shareable memory (MAP_SHARED anonymous, a robust
 * process-shared lock), and fork() decides (process.c): a child traced into
 * an inherited stream that is alive at fork keeps sharing its parent's map,
 * so that its names get ids no other process of the stream uses and the
 * parent's log can name them; any other child gets a copy of the map as it
 * stood at fork (names opened before keep their ids) and its later names are
 * its own. The map only grows: the names below a count never change, which
 * lets a child copy them while its parent goes on opening names.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/text.h"
#include "posix/internal.h"

#define USER_NAMES (TRACE_USER_EVENT_MAX - 1) /* the unnamed user event takes one slot */

typedef struct name_map {
    pthread_mutex_t lock; /* process-shared, robust */
    uint32_t count;
    char names[USER_NAMES][TRACE_EVENT_NAME_MAX];
} name_map;

static _Atomic(name_map *) map;
static pthread_mutex_t create_lock = PTHREAD_MUTEX_INITIALIZER; /* making the map, and fork */
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

/* A new, empty map, or NULL. Only system calls: the fork child calls it too. */
static name_map *new_map(void)
{
    void *m = mmap(NULL, sizeof(name_map), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&((name_map *)m)->lock, &a);
    pthread_mutexattr_destroy(&a);
    return m;
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

/* Locks the map (made on first use): 0, or ENOMEM or the lock's error. */
static int lock_map(name_map **out)
{
    *out = get_map();
    return *out ? lock(*out) : ENOMEM;
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
    if (old && !shared) {
        name_map *m = count_at_fork ? new_map() : NULL;
        if (m || !count_at_fork) {
            if (m) {
                memcpy(m->names, old->names, (size_t)count_at_fork * sizeof m->names[0]);
                m->count = count_at_fork;
            }
            munmap(old, sizeof *old);
            atomic_store(&map, m);
        }
        /* else out of memory: keep sharing the parent's map rather than lose the names opened before */
    }
    pthread_mutex_unlock(&create_lock);
}

const char *tl_posix_system_name(trace_event_id_t id)
{
    return id >= 1 && id <= TL_SYSTEM_EVENTS ? system_names[id] : NULL;
}

int tl_posix_name_of(trace_event_id_t id, char *out, size_t cap)
{
    const char *sys = tl_posix_system_name(id);
    if (sys || id == POSIX_TRACE_UNNAMED_USEREVENT) {
        tl_copy_text(out, cap, sys ? sys : "posix_trace_unnamed_userevent");
        return 0;
    }
    name_map *m;
    if (id <= POSIX_TRACE_UNNAMED_USEREVENT || id >= TL_ID_LIMIT || lock_map(&m))
        return EINVAL;
    uint32_t index = id - POSIX_TRACE_UNNAMED_USEREVENT - 1;
    int e = index < m->count ? 0 : EINVAL;
    if (!e)
        tl_copy_text(out, cap, m->names[index]);
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
    uint32_t i = 0;
    while (i < m->count && strcmp(m->names[i], name) != 0)
        i++;
    if (i == m->count && m->count < USER_NAMES)
        memcpy(m->names[m->count++], name, len + 1);
    *id = i < m->count ? POSIX_TRACE_UNNAMED_USEREVENT + 1 + i : POSIX_TRACE_UNNAMED_USEREVENT;
    pthread_mutex_unlock(&m->lock);
    return 0;
}

uint32_t tl_posix_name_count(void)
{
    name_map *m;
    if (lock_map(&m))
        return 0;
    uint32_t n = m->count;
    pthread_mutex_unlock(&m->lock);
    return n;
}

int posix_trace_eventid_open(const char *restrict event_name, trace_event_id_t *restrict event_id)
{
    /* An instrumented process: from now on a controller can find it (design note, section 3.2). */
    tl_xproc_ensure_ctl();
    return tl_posix_name_open(event_name, event_id);
}
