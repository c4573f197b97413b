/*
 * The named conditions of a reader (format-spec/ptl-format.md section 8.8):
 * what a reader found wrong with a file, by name, independent of any
 * implementation's status codes. Each has the tracelog status code it is
 * reported with (format-spec/implementation-notes.md keeps the same table).
 * Pure data; no I/O.
 */
#ifndef TRACELOG_CONDITION_H
#define TRACELOG_CONDITION_H

#include "tracelog/common.h"

/* XX(enum name, spec name, status code) */
#define TL_CONDITION_MAP(XX)                                                        \
    /* The file header (section 3.3): the file is not read. */                     \
    XX(TL_COND_TRUNCATED_HEADER, "TRUNCATED_HEADER", TRACELOG_E_TRUNCATED)          \
    XX(TL_COND_BAD_MAGIC, "BAD_MAGIC", TRACELOG_E_BAD_MAGIC)                        \
    XX(TL_COND_UNSUPPORTED_MAJOR, "UNSUPPORTED_MAJOR", TRACELOG_E_UNSUPPORTED_VERSION) \
    XX(TL_COND_BAD_HEADER_SIZE, "BAD_HEADER_SIZE", TRACELOG_E_CORRUPT)              \
    XX(TL_COND_HEADER_CRC_MISMATCH, "HEADER_CRC_MISMATCH", TRACELOG_E_CHECKSUM)     \
    XX(TL_COND_UNSUPPORTED_FEATURE, "UNSUPPORTED_FEATURE", TRACELOG_E_UNSUPPORTED_VERSION) \
    XX(TL_COND_BAD_GEOMETRY, "BAD_GEOMETRY", TRACELOG_E_CORRUPT)                    \
    XX(TL_COND_UNKNOWN_LAYOUT, "UNKNOWN_LAYOUT", TRACELOG_E_UNSUPPORTED_VERSION)    \
    XX(TL_COND_RING_NOT_SEEKABLE, "RING_NOT_SEEKABLE", TRACELOG_E_NOT_SEEKABLE)     \
    /* Problems (section 8.8): reported, and reading goes on. */                   \
    XX(TL_COND_BLOCK_HEADER_CRC_MISMATCH, "BLOCK_HEADER_CRC_MISMATCH", TRACELOG_E_CHECKSUM) \
    XX(TL_COND_BLOCK_HEADER_MISSING, "BLOCK_HEADER_MISSING", TRACELOG_E_CORRUPT)    \
    XX(TL_COND_TORN_TAIL, "TORN_TAIL", TRACELOG_E_TRUNCATED)                        \
    XX(TL_COND_RING_CUT_SHORT, "RING_CUT_SHORT", TRACELOG_E_TRUNCATED)              \
    XX(TL_COND_SEQUENCE_BREAK, "SEQUENCE_BREAK", TRACELOG_E_CORRUPT)                \
    XX(TL_COND_BAD_SEGMENT_START, "BAD_SEGMENT_START", TRACELOG_E_CHECKSUM)         \
    XX(TL_COND_BAD_SEGMENT_HEADER, "BAD_SEGMENT_HEADER", TRACELOG_E_CHECKSUM)       \
    XX(TL_COND_SEGMENT_END_LOST, "SEGMENT_END_LOST", TRACELOG_E_TRUNCATED)          \
    XX(TL_COND_DURABLE_END_LOST, "DURABLE_END_LOST", TRACELOG_E_TRUNCATED)          \
    XX(TL_COND_BLOCK_TOO_LARGE, "BLOCK_TOO_LARGE", TRACELOG_E_LIMIT)                \
    XX(TL_COND_PAYLOAD_CRC_MISMATCH, "PAYLOAD_CRC_MISMATCH", TRACELOG_E_CHECKSUM)   \
    XX(TL_COND_BAD_METADATA, "BAD_METADATA", TRACELOG_E_CORRUPT)                    \
    XX(TL_COND_NO_METADATA, "NO_METADATA", TRACELOG_E_CORRUPT)                      \
    XX(TL_COND_BAD_EVENT_TYPES, "BAD_EVENT_TYPES", TRACELOG_E_CORRUPT)              \
    XX(TL_COND_TOO_MANY_EVENT_TYPES, "TOO_MANY_EVENT_TYPES", TRACELOG_E_LIMIT)      \
    XX(TL_COND_BAD_SCHEMA, "BAD_SCHEMA", TRACELOG_E_CORRUPT)                        \
    XX(TL_COND_SCHEMA_TOO_LARGE, "SCHEMA_TOO_LARGE", TRACELOG_E_LIMIT)              \
    XX(TL_COND_TOO_MANY_SCHEMA_BYTES, "TOO_MANY_SCHEMA_BYTES", TRACELOG_E_LIMIT)    \
    XX(TL_COND_BAD_STATUS, "BAD_STATUS", TRACELOG_E_CORRUPT)                        \
    XX(TL_COND_TYPES_DROPPED, "TYPES_DROPPED", TRACELOG_E_LIMIT)                    \
    XX(TL_COND_BAD_THREADS, "BAD_THREADS", TRACELOG_E_CORRUPT)                      \
    XX(TL_COND_TOO_MANY_THREADS, "TOO_MANY_THREADS", TRACELOG_E_LIMIT)              \
    XX(TL_COND_THREADS_DROPPED, "THREADS_DROPPED", TRACELOG_E_LIMIT)                \
    XX(TL_COND_BAD_THREAD_NAME, "BAD_THREAD_NAME", TRACELOG_E_CORRUPT)              \
    XX(TL_COND_BAD_TRAILER, "BAD_TRAILER", TRACELOG_E_CORRUPT)                      \
    XX(TL_COND_BAD_CHUNK_HEADER, "BAD_CHUNK_HEADER", TRACELOG_E_CORRUPT)            \
    XX(TL_COND_CHUNK_TOO_LARGE, "CHUNK_TOO_LARGE", TRACELOG_E_LIMIT)                \
    XX(TL_COND_BAD_CHUNK_BODY, "BAD_CHUNK_BODY", TRACELOG_E_CORRUPT)                \
    XX(TL_COND_BAD_EVENT, "BAD_EVENT", TRACELOG_E_CORRUPT)                          \
    XX(TL_COND_CHUNK_TRAILING_DATA, "CHUNK_TRAILING_DATA", TRACELOG_E_CORRUPT)      \
    XX(TL_COND_MERGE_SET_TOO_LARGE, "MERGE_SET_TOO_LARGE", TRACELOG_E_LIMIT)        \
    /* tracelog's own, not the format's: the file changed or a read failed while reading. */ \
    XX(TL_COND_FILE_CHANGED, "FILE_CHANGED", TRACELOG_E_IO)                         \
    XX(TL_COND_READ_ERROR, "READ_ERROR", TRACELOG_E_IO)                             \
    XX(TL_COND_OUT_OF_MEMORY, "OUT_OF_MEMORY", TRACELOG_E_NOMEM)

typedef enum tl_condition {
#define TL_CONDITION_ENUM_(e, name, code) e,
    TL_CONDITION_MAP(TL_CONDITION_ENUM_)
#undef TL_CONDITION_ENUM_
    TL_COND_COUNT
} tl_condition;

/* The condition's name as the specification spells it; NULL for a value out of range. */
const char *tl_condition_name(tl_condition c);
/* The status code tracelog reports it with. */
tracelog_status tl_condition_status(tl_condition c);

/*
 * The condition behind a failed tl_header_decode (or the reader's open),
 * from the code and the offset of the field at fault it reported;
 * TL_COND_COUNT when the failure is not a property of the file.
 */
tl_condition tl_header_condition(tracelog_status code, uint64_t offset);

#endif
