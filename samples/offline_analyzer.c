/*
 * offline_analyzer: reads a .ptl log through the standard interface
 * (posix_trace_open, posix_trace_getnext_event) and prints per-event-type
 * statistics: count, first and last time, payload size range. For event
 * types the log gives a payload schema (tracelog_eventid_open_typed), it
 * also prints statistics per field, decoded through the schema the log
 * carries (tracelog_reader_event_schema, tracelog_fields_*): no struct is
 * declared here, so this works for any program's typed events.
 *
 *   offline_analyzer FILE.ptl
 */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include <tracelog.h>

#define MAX_TYPES 2048

/* One field of a typed event: numbers (enums and flags as their values) or text lengths. */
typedef struct field_stats {
    unsigned long n;      /* events holding the field */
    double min, max, sum; /* numbers: the values; char fields: the text lengths */
} field_stats;

typedef struct stats {
    unsigned long count;
    struct timespec first, last;
    size_t min_len, max_len;
    const tracelog_schema *schema; /* borrowed from the reader; NULL: untyped */
    field_stats *fields;           /* one per field of schema */
    unsigned long size_mismatch;   /* payloads whose size is not the schema's */
} stats;

static stats table[MAX_TYPES];

static double seconds(struct timespec t) { return (double)t.tv_sec + (double)t.tv_nsec / 1e9; }

/* A field's value as a number: numeric fields, and the length of a text. 0 if it has none. */
static int field_number(const tracelog_fields *f, size_t i, double *out)
{
    tracelog_field_info info;
    tracelog_schema_field(f->schema, i, &info);
    if (info.type == TRACELOG_FIELD_CHAR) {
        const char *text;
        size_t len;
        if (tracelog_fields_string(f, i, &text, &len) != TRACELOG_OK)
            return 0;
        *out = (double)len;
        return 1;
    }
    return tracelog_fields_double(f, i, out) == TRACELOG_OK;
}

static void add_fields(stats *s, const unsigned char *data, size_t len)
{
    tracelog_fields f;
    if (tracelog_fields_decode(s->schema, data, len, &f) != TRACELOG_OK)
        s->size_mismatch++; /* still decoded as far as it goes */
    for (size_t i = 0; i < f.present; i++) {
        double v;
        if (!field_number(&f, i, &v))
            continue;
        field_stats *fs = &s->fields[i];
        if (fs->n++ == 0)
            fs->min = fs->max = v;
        fs->min = v < fs->min ? v : fs->min;
        fs->max = v > fs->max ? v : fs->max;
        fs->sum += v;
    }
}

static void print_fields(const stats *s)
{
    for (size_t i = 0; i < tracelog_schema_field_count(s->schema); i++) {
        tracelog_field_info info;
        tracelog_schema_field(s->schema, i, &info);
        const field_stats *fs = &s->fields[i];
        if (!fs->n)
            continue; /* bytes, ptr, eventset: nothing to sum */
        const char *what = info.type == TRACELOG_FIELD_CHAR ? "length" : tracelog_field_type_name(info.type);
        printf("    %-20s %-8s n=%-8lu min=%-12g mean=%-12g max=%g\n", info.name, what, fs->n, fs->min,
               fs->sum / (double)fs->n, fs->max);
    }
    if (s->size_mismatch)
        printf("    %lu payloads of another size than the schema's\n", s->size_mismatch);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: offline_analyzer FILE.ptl\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "offline_analyzer: %s: %s\n", argv[1], strerror(errno));
        return 3;
    }
    trace_id_t trid;
    int e = posix_trace_open(fd, &trid);
    if (e) {
        fprintf(stderr, "offline_analyzer: %s: not a readable trace log (%s)\n", argv[1], strerror(e));
        return 3;
    }
    trace_attr_t attr;
    char name[TRACE_NAME_MAX], version[TRACE_NAME_MAX];
    posix_trace_get_attr(trid, &attr);
    posix_trace_attr_getname(&attr, name);
    posix_trace_attr_getgenversion(&attr, version);
    printf("trace \"%s\" written by %s\n", name, version);
    /* The schemas: a reader on the same descriptor (it reads with pread, leaving the offset alone). */
    tracelog_reader *reader = NULL;
    if (tracelog_reader_open(fd, NULL, &reader, NULL) != TRACELOG_OK)
        reader = NULL; /* then only the per-type statistics */

    struct posix_trace_event_info info;
    unsigned char data[65536];
    size_t len;
    int unavailable;
    unsigned long total = 0;
    while ((e = posix_trace_getnext_event(trid, &info, data, sizeof data, &len, &unavailable)) == 0 && !unavailable) {
        if (info.posix_event_id >= MAX_TYPES)
            continue;
        stats *s = &table[info.posix_event_id];
        if (s->count++ == 0) {
            s->first = info.posix_timestamp;
            s->min_len = len;
            s->schema = reader ? tracelog_reader_event_schema(reader, info.posix_event_id) : NULL;
            if (s->schema && !(s->fields = calloc(tracelog_schema_field_count(s->schema) + 1, sizeof *s->fields)))
                s->schema = NULL;
        }
        if (s->schema)
            add_fields(s, data, len);
        s->last = info.posix_timestamp;
        if (len < s->min_len)
            s->min_len = len;
        if (len > s->max_len)
            s->max_len = len;
        total++;
    }
    if (e) {
        fprintf(stderr, "offline_analyzer: reading: %s\n", strerror(e));
        return 3;
    }
    printf("%-32s %10s %14s %14s %10s\n", "event", "count", "first (s)", "last (s)", "bytes");
    for (trace_event_id_t id = 0; id < MAX_TYPES; id++) {
        stats *s = &table[id];
        if (!s->count)
            continue;
        char ev[TRACE_EVENT_NAME_MAX];
        if (posix_trace_eventid_get_name(trid, id, ev))
            snprintf(ev, sizeof ev, "event#%u", id);
        printf("%-32s %10lu %14.6f %14.6f %4zu..%-5zu\n", ev, s->count, seconds(s->first), seconds(s->last),
               s->min_len, s->max_len);
        if (s->schema)
            print_fields(s);
        free(s->fields);
    }
    printf("%lu events\n", total);
    tracelog_reader_close(reader);
    posix_trace_close(trid);
    close(fd);
    return 0;
}
