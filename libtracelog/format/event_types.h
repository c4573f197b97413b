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
#include "tracelog/schema.h"

typedef struct tl_type_entry {
    uint32_t id;
    const char *name;              /* NUL-terminated */
    const tracelog_schema *schema; /* the payload schema (section 5.6), or NULL */
} tl_type_entry;

/* Slot of the name index: the lowest id that has a name of this hash. */
typedef struct tl_name_slot {
    uint64_t hash;
    uint32_t id;
    uint32_t used;
} tl_name_slot;

/*
 * Entries sorted by id, in blocks of at most TL_TYPE_BLOCK_MAX: an insert
 * moves at most one block's entries (and, on a split, the block list), so
 * that ids arriving in any order cost the same as in increasing order.
 */
typedef struct tl_type_block {
    tl_type_entry *e; /* sorted by id; never empty */
    size_t n, cap;
    size_t before;    /* entries in the blocks before this one */
} tl_type_block;

struct tracelog_event_types {
    tl_type_block *blocks; /* in id order: each block's ids are above the one's before it; names owned */
    size_t nblocks, blocks_cap;
    size_t n;              /* entries */
    char **retired;        /* names replaced by tl_event_types_set: freed with the table */
    size_t nretired, retired_cap;
    tracelog_schema **retired_schemas; /* schemas replaced: freed with the table */
    size_t nretired_schemas, retired_schemas_cap;
    uint64_t schema_bytes; /* canonical text of every schema the table took, replaced ones included */
    tl_name_slot *by_name; /* built by the first lookup by name, dropped by a rename */
    size_t slots, slots_used;
};

/* An empty table (all zero is empty too). */
void tl_event_types_init(tracelog_event_types *t);
/* Frees what t holds and empties it; names handed out become invalid. */
void tl_event_types_clear(tracelog_event_types *t);

/*
 * Names id (name: len bytes, not NUL-terminated). A new id is inserted in id
 * order (O(1) when ids come in increasing order, O(block) otherwise). An id already named
 * alike is left as it is; named otherwise, it is renamed when `rename` is
 * set (the old name stays valid until the table is cleared: callers may hold
 * it) and TRACELOG_E_INVAL otherwise. TRACELOG_E_NOMEM.
 */
tracelog_status tl_event_types_set(tracelog_event_types *t, uint32_t id, const char *name, size_t len,
                                   int rename);

/*
 * As tl_event_types_set, for the name and the schema together (schema NULL:
 * none). The table takes schema in every case (it frees it when it is not
 * kept). An id already named alike with an equal schema (same canonical
 * text, or none both) is left as it is; otherwise, with `rename`, both are
 * replaced (what was handed out stays valid until the table is cleared), and
 * without it TRACELOG_E_INVAL. TRACELOG_E_NOMEM.
 */
tracelog_status tl_event_types_set_typed(tracelog_event_types *t, uint32_t id, const char *name,
                                         size_t len, tracelog_schema *schema, int rename);

/* 1 if a and b are both NULL or have the same canonical text. */
int tl_schema_equal(const tracelog_schema *a, const tracelog_schema *b);

/* The entry of id, or NULL: a binary search. Valid until the next change of the table. */
const tl_type_entry *tl_event_types_get(const tracelog_event_types *t, uint32_t id);

/* EVENT_TYPES encoding: an array head for n entries, then n entries; or a whole array at once. */
tracelog_status tl_types_encode_head(size_t n, tl_buf *out);
tracelog_status tl_types_encode_entry(const tl_type_entry *e, tl_buf *out);
tracelog_status tl_types_encode(const tl_type_entry *e, size_t n, tl_buf *out);

/*
 * Called for each entry; a non-zero return stops decoding with that status.
 * schema: the value of the entry's "schema" key as found (any CBOR kind; a
 * text is not yet checked to be a schema), or NULL when it has none.
 */
typedef tracelog_status (*tl_type_sink)(void *ctx, uint32_t id, const char *name, size_t len,
                                        const tl_cbor_item *schema);
/*
 * Decodes one EVENT_TYPES array item by item from in, passing each entry to
 * sink. TRACELOG_E_CORRUPT (reason in *why) at the first invalid entry: the
 * entries before it have been passed.
 */
tracelog_status tl_types_decode(tl_cbor_in *in, tl_type_sink sink, void *ctx, const char **why);

#endif
