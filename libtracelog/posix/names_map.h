/*
 * The layout of a process's event-name map (names.c): the bytes a traced
 * process and its controller share in /tracelog.<euid>.<pid>.names.<nonce>.
 * Only names.c reads or writes a map; the layout is in a header of its own
 * so that the fuzz target of the controller's reads (fuzz/fuzz_name_map.c)
 * and its seed generator (fuzz/gen_corpus.c) build maps of the real layout.
 * A change to it changes TL_NAMES_VERSION: a controller and a process of
 * different versions refuse each other's map (tl_names_attach: ENOTSUP).
 */
#ifndef TRACELOG_POSIX_NAMES_MAP_H
#define TRACELOG_POSIX_NAMES_MAP_H

#include <stdatomic.h>
#include <stdint.h>

#include "posix/names.h"
#include "posix/thread_names.h"

#define TL_NAMES_USER (TRACE_USER_EVENT_MAX - 1) /* the unnamed user event takes one slot */
#define TL_NAMES_MAGIC 0x4d4e4c54u               /* "TLNM" */
#define TL_NAMES_VERSION 5u /* 2: the lock word, the nonces, names of TRACE_EVENT_NAME_MAX characters, schemas;
                               3: the threads' names; 4: names filtered before the process opens them;
                               5: a schema arena of 4 MiB */
/* Bytes of schema text a map holds (pages are taken as they are written): what a log holds
   (TL_LOG_SCHEMA_BYTES_MAX), so that a recorded log keeps every schema the program's own log keeps.
   At 1 MiB, the schemas past it were lost from recorded logs without a word. */
#define TL_NAMES_SCHEMA_ARENA (4u << 20)
#define TL_NAMES_NAME_BYTES (TRACE_EVENT_NAME_MAX + 1) /* the limit counts characters, not the NUL */
/*
 * The schema length of a name a controller opened untyped in the process's
 * map (to filter it: ptlog record --exclude) before the process opened it:
 * the process may still open it typed, and its schema goes in then. A name
 * the process itself opened untyped keeps EEXIST for a typed open.
 */
#define TL_NAMES_BY_CONTROLLER UINT32_MAX

/*
 * A name a controller filters in its stream before the process has opened
 * it (tl_names_filter_by_name): the process applies it when it opens the
 * name, so that the name gets the id the process's own order gives it.
 * Written whole under the lock before the count that publishes it; only
 * `applied` changes after.
 */
typedef struct tl_names_filter_entry {
    uint64_t stream;          /* the controller's stream: its buffer's id (tl_remote_stream_id) */
    uint32_t keep;            /* 1: let it through; 0: filter it out */
    _Atomic uint32_t applied; /* the process applied it (once) */
    char name[TL_NAMES_NAME_BYTES];
} tl_names_filter_entry;

struct tl_names {
    _Atomic uint32_t magic; /* named maps: valid once set (they are linked in complete) */
    uint32_t version;
    uint32_t pid;           /* the process whose map it is (with start: its token) */
    uint32_t euid;
    uint64_t start;
    uint64_t nonce;         /* named maps: the nonce in its name */
    _Atomic uint32_t moved; /* replaced by the named map of process (to_pid, to_start): names go there now */
    uint32_t count;         /* stored with release order after the name it adds */
    uint32_t to_pid, to_euid;
    uint64_t to_start, to_nonce;
    _Atomic uint64_t lock;  /* for opening names: 0, or the holder's token (lock_token) */
    uint32_t schema_used;   /* bytes of `schemas` taken (under the lock) */
    uint32_t schema_at[TL_NAMES_USER];  /* name i's payload schema: offset + 1 in `schemas` (0: none), */
    uint32_t schema_len[TL_NAMES_USER]; /* and its length; both written before the count that publishes name i */
                                        /* (at 0, length TL_NAMES_BY_CONTROLLER: opened untyped by a controller) */
    char names[TL_NAMES_USER][TL_NAMES_NAME_BYTES];
    char schemas[TL_NAMES_SCHEMA_ARENA]; /* canonical schema texts (typed.c), one after the other, no NUL */
    uint32_t filter_count; /* entries of `filters`, stored with release order after the entry (under the lock) */
    tl_names_filter_entry filters[TL_NAME_FILTERS_MAX];
    tl_tname_table threads; /* each thread's name at its first event, of every process writing the map */
};

#endif
