/*
 * Payload schemas (format-spec/ptl-format.md section 5.6): the parser,
 * layout and decoder behind include/tracelog/schema.h, plus the built-in
 * schemas of the POSIX system events. Pure: no I/O, no global state.
 */
#ifndef TRACELOG_FORMAT_SCHEMA_H
#define TRACELOG_FORMAT_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "tracelog/schema.h"

/*
 * Parses text[0..len) (not necessarily NUL-terminated; a NUL byte inside is
 * a syntax error). As tracelog_schema_parse otherwise: the text of a log's
 * EVENT_TYPES entry goes through here.
 */
tracelog_status tl_schema_parse(const char *text, size_t len, tracelog_schema **out,
                                tracelog_error *err);

/* Bytes of the canonical text (tracelog_schema_text), without the NUL. */
size_t tl_schema_text_len(const tracelog_schema *s);

/* 64-bit words of the library's trace_event_set_t (TRACE_USER_EVENT_MAX 1024 and 32 system ids). */
#define TL_SYSTEM_EVENTSET_WORDS 17

/*
 * The built-in schema (canonical text) of POSIX system event id 1..8
 * (POSIX_TRACE_ERROR .. POSIX_TRACE_FLUSH_STOP), as this library records
 * them; NULL for any other id. Static storage.
 */
const char *tl_system_event_schema(uint32_t id);

#endif
