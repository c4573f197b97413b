/*
 * The text of a conformance vector's expected reading (format-spec/vectors/
 * README.md): NAME.events.jsonl and NAME.result.json. The generator prints
 * what the specification says a reader must find; the runner prints what
 * tracelog's reader found; both through these functions, so that the two
 * texts can be compared byte for byte.
 */
#ifndef TL_VEC_OUT_H
#define TL_VEC_OUT_H

#include <stdio.h>

#include "tracelog/log.h"

typedef struct vec_type {
    uint32_t id;
    uint8_t *name; /* not NUL-terminated: any bytes */
    size_t len;
    char *schema;  /* canonical text (spec 5.6.3), NULL when the type has none */
} vec_type;

typedef struct vec_event {
    tracelog_event ev; /* ev.payload points into payload */
    uint8_t *payload;
    uint8_t *tname;    /* the name of its thread (spec 5.7, format 1.2), any bytes; NULL: none */
    size_t tname_len;
} vec_event;

typedef struct vec_problem {
    const char *condition; /* static */
    uint64_t offset, length;
} vec_problem;

/* One reading of a log: what an implementation reports, in the specification's terms. */
typedef struct vec_reading {
    const char *open; /* NULL: opened; otherwise the header condition */
    int clean;
    tracelog_metadata meta;
    tracelog_log_status status;
    vec_type *types; /* sorted by id, ids unique */
    size_t ntypes, types_cap;
    vec_event *events;
    size_t nevents, events_cap;
    vec_problem *problems;
    size_t nproblems, problems_cap;
} vec_reading;

void vec_reading_init(vec_reading *r);
void vec_reading_free(vec_reading *r);
/* Defines or redefines id with its schema, or none (NULL); the table stays sorted. */
void vec_set_type(vec_reading *r, uint32_t id, const void *name, size_t len, const char *schema);
/* Appends a copy of ev and its payload. */
void vec_add_event(vec_reading *r, const tracelog_event *ev);
/* Gives event e the name of its thread (a copy; NULL: none). */
void vec_set_tname(vec_event *e, const void *name, size_t len);
/* Frees what an event holds. */
void vec_event_free(vec_event *e);
void vec_add_problem(vec_reading *r, const char *condition, uint64_t offset, uint64_t length);

/* Events, one JSON object a line, each named from the final type table. */
void vec_print_events(FILE *f, const vec_reading *r);
/* Everything else; problems sorted by offset, condition, length. */
void vec_print_result(FILE *f, const vec_reading *r);

#endif
