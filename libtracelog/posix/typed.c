/*
 * Typed event names (tracelog_eventid_open_typed): the payload schema of each
 * event name, kept per process beside the name map, so that the log writer
 * stores it with the event type (log.c). Recording never looks here: a typed
 * event costs what an untyped one does.
 *
 * The table maps names (not ids) to canonical schema text, and a name's
 * schema goes in before the name gets its id, so a log that sees the name
 * sees its schema too. The table only grows and is read without a lock (an
 * entry is complete before the count that publishes it), so the log writer,
 * the crash handler's included, never waits on a typed open. It lives in
 * ordinary memory: a child of fork keeps a copy of it.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "format/schema.h"
#include "posix/internal.h"
#include "posix/names.h"
#include "posix/process.h"
#include "tracelog/posix.h"

#define TABLE_MAX (TRACE_USER_EVENT_MAX - 1) /* as many as the name map holds */

typedef struct typed_name {
    char name[TRACE_EVENT_NAME_MAX + 1];
    char schema[]; /* canonical text */
} typed_name;

static typed_name *table[TABLE_MAX];
static _Atomic uint32_t table_count;
static pthread_mutex_t add_lock = PTHREAD_MUTEX_INITIALIZER; /* adders only; readers take none */
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* A fork in the middle of an add must not leave the child's lock held. */
static void lock_add(void) { pthread_mutex_lock(&add_lock); }
static void unlock_add(void) { pthread_mutex_unlock(&add_lock); }
static void install_fork_handlers(void) { pthread_atfork(lock_add, unlock_add, unlock_add); }

static const typed_name *find(const char *name)
{
    uint32_t n = atomic_load_explicit(&table_count, memory_order_acquire);
    for (uint32_t i = 0; i < n; i++)
        if (strcmp(table[i]->name, name) == 0)
            return table[i];
    return NULL;
}

const char *tl_posix_schema_of(const char *name)
{
    const typed_name *t = find(name);
    return t ? t->schema : NULL;
}

const char *tl_posix_event_schema(trace_event_id_t id, const char *name)
{
    const char *schema = tl_system_event_schema(id);
    return !schema && id > POSIX_TRACE_UNNAMED_USEREVENT ? tl_posix_schema_of(name) : schema;
}

/*
 * Whether the name map already holds name without `schema` (canonical
 * text): opened untyped, or with another schema. A name opened with this
 * schema by another process sharing the map (a parent, through an inherited
 * stream; a spawned child opens its parent's names again) is not, nor one
 * a controller opened untyped before the process opened it (names.c).
 */
static int name_opened_otherwise(const char *name, const char *schema)
{
    char have[TRACE_EVENT_NAME_MAX + 1];
    uint32_t n = tl_posix_name_count();
    for (uint32_t i = 0; i < n; i++) {
        trace_event_id_t id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + i;
        if (tl_posix_name_of(id, have, sizeof have) != 0 || strcmp(have, name) != 0)
            continue;
        char *in_map = NULL;
        int e = tl_names_schema_of(NULL, id, &in_map);
        int same = e == 0 && strcmp(in_map, schema) == 0;
        free(in_map);
        return !same && e != EAGAIN;
    }
    return 0;
}

/* Records name's schema (canonical text): 0, EEXIST or ENOMEM. Caller holds add_lock. */
static int add_schema(const char *name, const char *schema)
{
    const typed_name *t = find(name);
    if (t)
        return strcmp(t->schema, schema) == 0 ? 0 : EEXIST;
    if (name_opened_otherwise(name, schema))
        return EEXIST;
    uint32_t n = atomic_load_explicit(&table_count, memory_order_relaxed);
    if (n == TABLE_MAX)
        return 0; /* the name map is full too: the name gets POSIX_TRACE_UNNAMED_USEREVENT */
    size_t len = strlen(schema);
    typed_name *e = malloc(sizeof *e + len + 1);
    if (!e)
        return ENOMEM;
    memcpy(e->name, name, strlen(name) + 1);
    memcpy(e->schema, schema, len + 1);
    table[n] = e;
    atomic_store_explicit(&table_count, n + 1, memory_order_release);
    return 0;
}

static int open_typed(const char *name, const char *schema, trace_event_id_t *id)
{
    if (!name || !schema || !id)
        return EINVAL;
    if (strnlen(name, TRACE_EVENT_NAME_MAX + 1) > TRACE_EVENT_NAME_MAX)
        return ENAMETOOLONG;
    tracelog_schema *s;
    tracelog_status st = tracelog_schema_parse(schema, &s, NULL);
    if (st != TRACELOG_OK)
        return st == TRACELOG_E_NOMEM ? ENOMEM : EINVAL;
    pthread_once(&fork_once, install_fork_handlers);
    pthread_mutex_lock(&add_lock);
    int e = add_schema(name, tracelog_schema_text(s));
    pthread_mutex_unlock(&add_lock);
    /* The schema goes into the name map too, with the name: a controller (ptlog record, attach)
       and the processes sharing the map through an inherited stream read it there. */
    if (!e)
        e = tl_posix_name_open_schema(name, tracelog_schema_text(s), id);
    tracelog_schema_free(s);
    return e;
}

int tracelog_eventid_open_typed(const char *name, const char *schema, trace_event_id_t *id)
{
    tl_posix_cancel_off(); /* as posix_trace_eventid_open: locks are held across files opened */
    tl_posix_process_init(); /* the map is copied or shared by the fork handlers */
    /* An instrumented process, as after posix_trace_eventid_open: a controller can find it and read its names. */
    if (tl_xproc_ensure_ctl() == 0)
        tl_posix_names_share();
    int e = open_typed(name, schema, id);
    if (!e) /* a controller's filter by name waits for it (tracelog_trace_filter_name) */
        tl_posix_remote_filters(*id, 0, (uint64_t)(uintptr_t)__builtin_return_address(0));
    tl_posix_cancel_on();
    return e;
}

/*
 * A controller's stream: the name goes into the traced process's map, with
 * its schema, so that its id is the one the process records with and the
 * log decodes it (it went into the controller's own map: a filter on the id
 * it gave hit another event type).
 */
static int open_typed_remote(tl_trace *t, const char *name, const char *schema, trace_event_id_t *id)
{
    if (!name || !schema || !id)
        return EINVAL;
    tracelog_schema *s;
    tracelog_status st = tracelog_schema_parse(schema, &s, NULL);
    if (st != TRACELOG_OK)
        return st == TRACELOG_E_NOMEM ? ENOMEM : EINVAL;
    tl_names *names;
    int e = tl_posix_trace_names(t, &names);
    if (!e)
        e = tl_names_open_typed(names, name, tracelog_schema_text(s), id);
    tl_posix_trace_names_done(t);
    tracelog_schema_free(s);
    return e;
}

int tracelog_trid_eventid_open_typed(trace_id_t trid, const char *name, const char *schema,
                                     trace_event_id_t *id)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, TL_ACTIVE_KINDS, &t);
    if (e)
        return e;
    e = t->active.remote ? open_typed_remote(t, name, schema, id) : open_typed(name, schema, id);
    tl_posix_release(t);
    return e;
}
