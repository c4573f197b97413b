/*
 * Threads (format 1.1, names 1.2): the THREADS payload
 * (format-spec/ptl-format.md section 5.7), which maps a thread as events
 * name it, (pid, pthread tid), to its kernel thread id and, since 1.2, its
 * name; the hash map of that mapping and the table of names that the writer
 * and the reader keep. Pure encoding/decoding and memory; no I/O.
 */
#ifndef TRACELOG_THREADS_H
#define TRACELOG_THREADS_H

#include "common/buf.h"
#include "format/cbor_io.h"
#include "tracelog/common.h"

/*
 * One definition: events of (pid, tid) after it are from kernel thread ktid
 * (never 0), named by name: an id of the owner's tl_thread_names, 0 for none.
 */
typedef struct tl_thread_def {
    uint64_t tid;
    uint32_t pid;
    uint32_t ktid;
    uint32_t name;
} tl_thread_def;

/* (pid, tid) -> its current definition; open addressing, a slot is free when its ktid is 0. */
typedef struct tl_thread_map {
    tl_thread_def *slots;
    size_t cap, n;
} tl_thread_map;

/* The kernel tid of (pid, tid), 0 if unknown. */
uint32_t tl_thread_map_get(const tl_thread_map *m, uint32_t pid, uint64_t tid);
/* The current definition of (pid, tid), NULL if none. Valid until the next change of m. */
const tl_thread_def *tl_thread_map_find(const tl_thread_map *m, uint32_t pid, uint64_t tid);
/*
 * Makes d (d->ktid != 0) the definition of (d->pid, d->tid). 0, or -1 when
 * out of memory (m unchanged). Replacing a definition never moves the slots.
 */
int tl_thread_map_put(tl_thread_map *m, const tl_thread_def *d);
/* Forgets every entry, keeping the memory. */
void tl_thread_map_reset(tl_thread_map *m);
void tl_thread_map_free(tl_thread_map *m);

/* Longest thread name of the format (bytes; spec 5.7): TRACELOG_THREAD_NAME_MAX. */
#define TL_THREAD_NAME_MAX 64

/*
 * Thread names, each distinct text kept once and named by an id (1, 2, ...)
 * for good: definitions hold ids, not text, and a text handed out stays at
 * its address until the table is freed.
 */
typedef struct tl_thread_names {
    char **v;        /* by id - 1, NUL-terminated */
    size_t n, cap;
    uint32_t *slots; /* open addressing on the text: id, 0 free */
    size_t nslots;
} tl_thread_names;

/* The id of name[0..len) (1..TL_THREAD_NAME_MAX bytes), added if new; 0 when out of memory. */
uint32_t tl_thread_names_intern(tl_thread_names *t, const void *name, size_t len);
/* The text of id, NULL for 0 or an id t does not have. */
const char *tl_thread_names_get(const tl_thread_names *t, uint32_t id);
void tl_thread_names_free(tl_thread_names *t);

/* NULL if name[0..len) is a valid thread name (spec 5.7), else why not. */
const char *tl_thread_name_invalid(const void *name, size_t len);

/* THREADS encoding: an array head for n entries (tl_cbor_put_array), then each entry (name NULL: none). */
tracelog_status tl_threads_encode_entry(const tl_thread_def *d, const char *name, tl_buf *out);

/* One entry as decoded: its definition (d.name 0) and the name it gives. */
typedef struct tl_thread_entry {
    tl_thread_def d;
    const uint8_t *name;  /* a valid name, in the payload (not NUL-terminated); NULL: none given or ignored */
    size_t name_len;
    const char *name_bad; /* why the entry's name was ignored (the entry still applies); NULL: not ignored */
} tl_thread_entry;

/* Called for each valid entry; a non-zero return stops decoding with that status. */
typedef tracelog_status (*tl_thread_sink)(void *ctx, const tl_thread_entry *e);
/*
 * Decodes one THREADS array item by item from in. TRACELOG_E_CORRUPT (reason
 * in *why) at the first invalid entry: the entries before it have been passed.
 */
tracelog_status tl_threads_decode(tl_cbor_in *in, tl_thread_sink sink, void *ctx, const char **why);

#endif
