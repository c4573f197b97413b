/*
 * Event types: the EVENT_TYPES payload (format-spec/ptl-format.md section
 * 5.3) and the one id -> name table that the writer, the reader and ptlog
 * share (public as tracelog_event_types, include/tracelog/log.h).
 */
#ifndef TRACELOG_EVENT_TYPES_H
#define TRACELOG_EVENT_TYPES_H

#include "common/buf.h"
#include "format/cbor_io.h"
#include "tracelog/log.h"

typedef struct tl_type_entry {
    uint32_t id;
    const char *name; /* NUL-terminated */
} tl_type_entry;

/* Slot of the name index: the lowest id that has a name of this hash. */
typedef struct tl_name_slot {
    uint64_t hash;
    uint32_t id;
    uint32_t used;
} tl_name_slot;

struct tracelog_event_types {
    tl_type_entry *v;      /* sorted by id; names owned */
    size_t n, cap;
    char **retired;        /* names replaced by tl_event_types_set: freed with the table */
    size_t nretired, retired_cap;
    tl_name_slot *by_name; /* built by the first lookup by name, dropped by a rename */
    size_t slots, slots_used;
};

/* An empty table (all zero is empty too). */
void tl_event_types_init(tracelog_event_types *t);
/* Frees what t holds and empties it; names handed out become invalid. */
void tl_event_types_clear(tracelog_event_types *t);

/*
 * Names id (name: len bytes, not NUL-terminated). A new id is inserted in id
 * order (O(1) when ids come in increasing order). An id already named
 * alike is left as it is; named otherwise, it is renamed when `rename` is
 * set (the old name stays valid until the table is cleared: callers may hold
 * it) and TRACELOG_E_INVAL otherwise. TRACELOG_E_NOMEM.
 */
tracelog_status tl_event_types_set(tracelog_event_types *t, uint32_t id, const char *name, size_t len,
                                   int rename);

/* The entry of id, or NULL: a binary search. */
const tl_type_entry *tl_event_types_get(const tracelog_event_types *t, uint32_t id);

/* EVENT_TYPES encoding: an array head for n entries, then n entries; or a whole array at once. */
tracelog_status tl_types_encode_head(size_t n, tl_buf *out);
tracelog_status tl_types_encode_entry(uint32_t id, const char *name, tl_buf *out);
tracelog_status tl_types_encode(const tl_type_entry *e, size_t n, tl_buf *out);

/* Called for each entry; a non-zero return stops decoding with that status. */
typedef tracelog_status (*tl_type_sink)(void *ctx, uint32_t id, const char *name, size_t len);
/*
 * Decodes one EVENT_TYPES array item by item from in, passing each entry to
 * sink. TRACELOG_E_CORRUPT (reason in *why) at the first invalid entry: the
 * entries before it have been passed.
 */
tracelog_status tl_types_decode(tl_cbor_in *in, tl_type_sink sink, void *ctx, const char **why);

#endif
