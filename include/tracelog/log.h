/*
 * tracelog/log.h - what a .ptl log records besides events: the stream
 * attributes (metadata) and the status counters. Shared by the writer and
 * the reader.
 */
#ifndef TRACELOG_LOG_H
#define TRACELOG_LOG_H

#include "tracelog/common.h"
#include "tracelog/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest text attribute kept (bytes, without the NUL). Longer text is refused. */
#define TRACELOG_TEXT_MAX 255

/*
 * Longest thread name a log holds (bytes, without the NUL; format 1.2,
 * format-spec 5.7). Linux thread names (comm) have at most 15.
 */
#define TRACELOG_THREAD_NAME_MAX 64

/*
 * Stream attributes and origin of a log (format-spec: METADATA block).
 * A plain value type: copy it freely. Text fields are NUL-terminated UTF-8.
 */
typedef struct tracelog_metadata {
    char trace_name[TRACELOG_TEXT_MAX + 1];
    char generation_version[TRACELOG_TEXT_MAX + 1];
    uint64_t creation_time_ns;    /* CLOCK_REALTIME, ns since the epoch */
    char clock_id[32];            /* clock of the timestamps, e.g. "CLOCK_REALTIME" */
    char clock_source[32];        /* how it was read, e.g. "clock_gettime" or "tsc" */
    uint64_t clock_resolution_ns;
    uint64_t max_data_size;       /* bytes of payload kept per event */
    uint64_t stream_min_size;     /* bytes reserved for events in memory */
    uint64_t log_max_size;        /* event bytes budget of the log (LOOP/UNTIL_FULL) */
    tracelog_policy stream_full_policy; /* LOOP, UNTIL_FULL or FLUSH */
    tracelog_policy log_full_policy;    /* LOOP, UNTIL_FULL or APPEND */
    int inherited;                /* 1: POSIX_TRACE_INHERITED, 0: CLOSE_FOR_CHILD */
    char hostname[TRACELOG_TEXT_MAX + 1];
    char os_name[64];
    char os_release[TRACELOG_TEXT_MAX + 1];
    char machine[64];
    uint32_t pid;
    char program[TRACELOG_TEXT_MAX + 1];
    /*
     * Format 1.1, clock_source "tsc": how the timestamps were made from the
     * CPU's time-stamp counter, so that a reader can audit them:
     * ns = clock_ns_base + floor((int64)(tsc - clock_tsc_base) * clock_mult / 2^clock_shift).
     * All 0 when the log does not say (clock_mult 0).
     */
    uint64_t clock_tsc_base;
    uint64_t clock_ns_base;
    uint64_t clock_mult;
    uint32_t clock_shift; /* at most 63 */
} tracelog_metadata;

/*
 * Fills defaults: empty names, generation_version "tracelog <version>",
 * creation time now, clock CLOCK_REALTIME read by clock_gettime with its
 * resolution, LOOP/APPEND policies, and this host's and process's identity.
 */
TRACELOG_API void tracelog_metadata_init(tracelog_metadata *meta);

/* Status counters of a log (format-spec: STATUS block and TRAILER). */
typedef struct tracelog_log_status {
    uint64_t events_recorded;  /* events accepted by the stream */
    uint64_t events_written;   /* events written to the log */
    uint64_t stream_overruns;  /* events lost in memory (stream full) */
    uint64_t log_overruns;     /* events lost from the log (overwritten by LOOP, discarded by UNTIL_FULL) */
    int32_t flush_error;       /* first errno of a failed flush, 0 if none */
    uint32_t log_full;         /* 1 once the log reached its size budget */
    uint64_t types_dropped;    /* event-type names a LOOP log's durable region had no room for
                                  (their events read unnamed; format 1.1) */
    uint64_t threads_dropped;  /* thread definitions (kernel tids) it had no room for (format 1.1) */
} tracelog_log_status;

/*
 * An event-type table: event ids and their names (format-spec: EVENT_TYPES
 * block), kept sorted by id. The writer and the reader keep theirs in one;
 * tools build their own to name, merge or renumber the types of several
 * logs. A lookup by id is a binary search; a lookup by name uses a hash
 * index built by the first such lookup and kept up to date after it.
 *
 * Ownership: the table owns copies of its names; a name pointer it returns
 * stays valid until tracelog_event_types_free().
 * Thread safety: none; const functions may be called from several threads
 * at once as long as nothing changes the table.
 */
typedef struct tracelog_event_types tracelog_event_types;

/* A new empty table, or NULL when out of memory. */
TRACELOG_API tracelog_event_types *tracelog_event_types_new(void);
/* Frees t and its names. NULL is a no-op. */
TRACELOG_API void tracelog_event_types_free(tracelog_event_types *t);

/*
 * Names id. Naming an id again with the same name is a no-op. Errors:
 * TRACELOG_E_INVAL (id already has another name, name empty or longer than
 * TRACELOG_TEXT_MAX bytes, NULL argument), TRACELOG_E_NOMEM.
 */
TRACELOG_API tracelog_status tracelog_event_types_add(tracelog_event_types *t, uint32_t id,
                                                      const char *name);

/* Name of id, or NULL if the table does not name it. */
TRACELOG_API const char *tracelog_event_types_name(const tracelog_event_types *t, uint32_t id);

/* Payload schema of id (<tracelog/schema.h>), or NULL if it has none. Borrowed, as names are. */
TRACELOG_API const tracelog_schema *tracelog_event_types_schema(const tracelog_event_types *t,
                                                                uint32_t id);

/* Number of entries, and entry `index` (0..count-1, in increasing id order). TRACELOG_E_INVAL past the end. */
TRACELOG_API size_t tracelog_event_types_count(const tracelog_event_types *t);
TRACELOG_API tracelog_status tracelog_event_types_at(const tracelog_event_types *t, size_t index,
                                                     uint32_t *id, const char **name);

/*
 * The lowest id named `name`: returns 1 and sets *id (if id is not NULL), or
 * returns 0. Not const: the first call builds the name index (without
 * memory for it, the lookup scans the table instead: still correct).
 */
TRACELOG_API int tracelog_event_types_find(tracelog_event_types *t, const char *name, uint32_t *id);

#ifdef __cplusplus
}
#endif
#endif
