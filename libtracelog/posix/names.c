/*
 * The process's event-name map. POSIX wants one map per traced process,
 * shared by all its streams and usable before any stream exists; with Trace
 * Inherit, ids must also be unique across the processes traced into one
 * stream. So the map lives in shared memory made once per process tree: a
 * child made by fork() shares it with its parent and registers names in it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "posix/internal.h"

#define USER_NAMES (TRACE_USER_EVENT_MAX - 1) /* the unnamed user event takes one slot */

typedef struct name_map {
    pthread_mutex_t lock; /* process-shared, robust */
    uint32_t count;
    char names[USER_NAMES][TRACE_EVENT_NAME_MAX];
} name_map;

static name_map *map;
static pthread_once_t map_once = PTHREAD_ONCE_INIT;

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

static void make_map(void)
{
    void *m = mmap(NULL, sizeof(name_map), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&((name_map *)m)->lock, &a);
    pthread_mutexattr_destroy(&a);
    map = m;
}

/*
 * A child traced into its parent's stream (POSIX_TRACE_INHERITED) must
 * register its names in the parent's map, so the map has to exist before the
 * process forks: otherwise parent and child each make a map of their own
 * later and give the same id to different names.
 */
static void map_before_fork(void) { pthread_once(&map_once, make_map); }

__attribute__((constructor)) static void register_map_before_fork(void)
{
    pthread_atfork(map_before_fork, NULL, NULL);
}

static int lock_map(void)
{
    pthread_once(&map_once, make_map);
    if (!map)
        return ENOMEM;
    int e = pthread_mutex_lock(&map->lock);
    if (e == EOWNERDEAD) /* a process died holding it: the map itself is always consistent */
        e = pthread_mutex_consistent(&map->lock);
    return e;
}

const char *tl_posix_system_name(trace_event_id_t id)
{
    return id >= 1 && id <= TL_SYSTEM_EVENTS ? system_names[id] : NULL;
}

int tl_posix_name_of(trace_event_id_t id, char *out, size_t cap)
{
    const char *sys = tl_posix_system_name(id);
    if (sys || id == POSIX_TRACE_UNNAMED_USEREVENT) {
        snprintf(out, cap, "%s", sys ? sys : "posix_trace_unnamed_userevent");
        return 0;
    }
    if (id <= POSIX_TRACE_UNNAMED_USEREVENT || id >= TL_ID_LIMIT || lock_map())
        return EINVAL;
    uint32_t index = id - POSIX_TRACE_UNNAMED_USEREVENT - 1;
    int e = index < map->count ? 0 : EINVAL;
    if (!e)
        snprintf(out, cap, "%s", map->names[index]);
    pthread_mutex_unlock(&map->lock);
    return e;
}

int tl_posix_name_open(const char *name, trace_event_id_t *id)
{
    if (!name || !id)
        return EINVAL;
    size_t len = strlen(name);
    if (len >= TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    int e = lock_map();
    if (e)
        return e;
    uint32_t i = 0;
    while (i < map->count && strcmp(map->names[i], name) != 0)
        i++;
    if (i == map->count && map->count < USER_NAMES)
        memcpy(map->names[map->count++], name, len + 1);
    *id = i < map->count ? POSIX_TRACE_UNNAMED_USEREVENT + 1 + i : POSIX_TRACE_UNNAMED_USEREVENT;
    pthread_mutex_unlock(&map->lock);
    return 0;
}

uint32_t tl_posix_name_count(void)
{
    if (lock_map())
        return 0;
    uint32_t n = map->count;
    pthread_mutex_unlock(&map->lock);
    return n;
}

int posix_trace_eventid_open(const char *restrict event_name, trace_event_id_t *restrict event_id)
{
    return tl_posix_name_open(event_name, event_id);
}
