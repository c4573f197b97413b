#include "vec_out.h"

#include <stdlib.h>
#include <string.h>

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return p;
    size_t cap2 = *cap ? 2 * *cap : 16;
    while (cap2 < need)
        cap2 *= 2;
    p = realloc(p, cap2 * size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    *cap = cap2;
    return p;
}

static uint8_t *copy_bytes(const void *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    if (!c) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    if (n)
        memcpy(c, p, n);
    return c;
}

void vec_reading_init(vec_reading *r) { memset(r, 0, sizeof *r); }

void vec_reading_free(vec_reading *r)
{
    for (size_t i = 0; i < r->ntypes; i++) {
        free(r->types[i].name);
        free(r->types[i].schema);
    }
    for (size_t i = 0; i < r->nevents; i++)
        vec_event_free(&r->events[i]);
    free(r->types);
    free(r->events);
    free(r->problems);
    vec_reading_init(r);
}

void vec_set_type(vec_reading *r, uint32_t id, const void *name, size_t len, const char *schema)
{
    size_t i = 0;
    while (i < r->ntypes && r->types[i].id < id)
        i++;
    if (i < r->ntypes && r->types[i].id == id) {
        free(r->types[i].name);
        free(r->types[i].schema);
    } else {
        r->types = grow(r->types, &r->types_cap, r->ntypes + 1, sizeof *r->types);
        memmove(r->types + i + 1, r->types + i, (r->ntypes - i) * sizeof *r->types);
        r->ntypes++;
    }
    r->types[i] = (vec_type){id, copy_bytes(name, len), len, NULL};
    if (schema)
        r->types[i].schema = (char *)copy_bytes(schema, strlen(schema) + 1);
}

void vec_add_event(vec_reading *r, const tracelog_event *ev)
{
    r->events = grow(r->events, &r->events_cap, r->nevents + 1, sizeof *r->events);
    vec_event *e = &r->events[r->nevents++];
    e->ev = *ev;
    e->payload = copy_bytes(ev->payload, ev->payload_len);
    e->ev.payload = e->payload;
    e->tname = NULL;
    e->tname_len = 0;
}

void vec_set_tname(vec_event *e, const void *name, size_t len)
{
    free(e->tname);
    e->tname = name ? copy_bytes(name, len) : NULL;
    e->tname_len = name ? len : 0;
}

void vec_event_free(vec_event *e)
{
    free(e->payload);
    free(e->tname);
}

void vec_add_problem(vec_reading *r, const char *condition, uint64_t offset, uint64_t length)
{
    r->problems = grow(r->problems, &r->problems_cap, r->nproblems + 1, sizeof *r->problems);
    r->problems[r->nproblems++] = (vec_problem){condition, offset, length};
}

/* Length of the UTF-8 sequence at p (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF), or 0. */
static size_t utf8_char(const uint8_t *p, size_t n)
{
    if (p[0] < 0x80)
        return 1;
    size_t len = p[0] >= 0xF0 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;
    if (len == 0 || p[0] > 0xF4 || n < len)
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((p[i] & 0xC0) != 0x80)
            return 0;
    if ((p[0] == 0xE0 && p[1] < 0xA0) || (p[0] == 0xED && p[1] >= 0xA0) || (p[0] == 0xF0 && p[1] < 0x90) ||
        (p[0] == 0xF4 && p[1] >= 0x90))
        return 0;
    return len;
}

static int is_utf8(const uint8_t *p, size_t n)
{
    for (size_t i = 0, k; i < n; i += k)
        if ((k = utf8_char(p + i, n - i)) == 0)
            return 0;
    return 1;
}

static void print_hex(FILE *f, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%02x", p[i]);
}

/* "key":"text", or "key_hex":"..." for bytes that are not UTF-8 (the spec's lossless escape, 5.1). */
static void print_text(FILE *f, const char *key, const void *text, size_t n)
{
    const uint8_t *p = text;
    if (!is_utf8(p, n)) {
        fprintf(f, "\"%s_hex\": \"", key);
        print_hex(f, p, n);
        fputc('"', f);
        return;
    }
    fprintf(f, "\"%s\": \"", key);
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '"' || p[i] == '\\')
            fprintf(f, "\\%c", p[i]);
        else if (p[i] < 0x20 || p[i] == 0x7f)
            fprintf(f, "\\u%04x", p[i]);
        else
            fputc(p[i], f);
    }
    fputc('"', f);
}

static const vec_type *find_type(const vec_reading *r, uint32_t id)
{
    for (size_t i = 0; i < r->ntypes; i++)
        if (r->types[i].id == id)
            return &r->types[i];
    return NULL;
}

void vec_print_events(FILE *f, const vec_reading *r)
{
    for (size_t i = 0; i < r->nevents; i++) {
        const tracelog_event *e = &r->events[i].ev;
        const vec_type *t = find_type(r, e->event_id);
        fprintf(f, "{\"ts\": %llu, \"id\": %u, ", (unsigned long long)e->timestamp_ns, e->event_id);
        if (t)
            print_text(f, "name", t->name, t->len);
        else
            fputs("\"name\": null", f);
        fprintf(f, ", \"pid\": %u, \"tid\": %llu, ", e->pid, (unsigned long long)e->tid);
        if (e->kernel_tid) /* format 1.1 (spec 5.7): only when the log names the thread */
            fprintf(f, "\"ktid\": %u, ", e->kernel_tid);
        if (r->events[i].tname) { /* format 1.2: only when the thread has a name */
            print_text(f, "tname", r->events[i].tname, r->events[i].tname_len);
            fputs(", ", f);
        }
        fprintf(f, "\"addr\": %llu, \"trunc\": %u, \"payload\": \"", (unsigned long long)e->address,
                e->truncation);
        print_hex(f, e->payload, e->payload_len);
        fputs("\"}\n", f);
    }
}

static const char *policy(tracelog_policy p)
{
    switch (p) {
    case TRACELOG_POLICY_LOOP: return "loop";
    case TRACELOG_POLICY_UNTIL_FULL: return "until_full";
    case TRACELOG_POLICY_FLUSH: return "flush";
    case TRACELOG_POLICY_APPEND: return "append";
    }
    return "?";
}

static void text_line(FILE *f, const char *indent, const char *key, const char *text, const char *end)
{
    fputs(indent, f);
    print_text(f, key, text, strlen(text));
    fputs(end, f);
}

static void print_metadata(FILE *f, const tracelog_metadata *m)
{
    fputs("  \"metadata\": {\n", f);
    text_line(f, "    ", "trace_name", m->trace_name, ",\n");
    text_line(f, "    ", "generation_version", m->generation_version, ",\n");
    fprintf(f, "    \"creation_time_ns\": %llu,\n", (unsigned long long)m->creation_time_ns);
    text_line(f, "    ", "clock_id", m->clock_id, ",\n");
    text_line(f, "    ", "clock_source", m->clock_source, ",\n");
    fprintf(f, "    \"clock_resolution_ns\": %llu,\n", (unsigned long long)m->clock_resolution_ns);
    fprintf(f, "    \"max_data_size\": %llu,\n", (unsigned long long)m->max_data_size);
    fprintf(f, "    \"stream_min_size\": %llu,\n", (unsigned long long)m->stream_min_size);
    fprintf(f, "    \"log_max_size\": %llu,\n", (unsigned long long)m->log_max_size);
    fprintf(f, "    \"stream_full_policy\": \"%s\",\n", policy(m->stream_full_policy));
    fprintf(f, "    \"log_full_policy\": \"%s\",\n", policy(m->log_full_policy));
    fprintf(f, "    \"inheritance\": \"%s\",\n", m->inherited ? "inherited" : "close_for_child");
    fputs("    \"host\": {\n", f);
    text_line(f, "      ", "hostname", m->hostname, ",\n");
    text_line(f, "      ", "os_name", m->os_name, ",\n");
    text_line(f, "      ", "os_release", m->os_release, ",\n");
    text_line(f, "      ", "machine", m->machine, "\n");
    fputs("    },\n    \"process\": {\n", f);
    fprintf(f, "      \"pid\": %u,\n", m->pid);
    text_line(f, "      ", "program", m->program, "\n");
    fputs("    }\n  },\n", f);
}

static int by_place(const void *a, const void *b)
{
    const vec_problem *x = a, *y = b;
    if (x->offset != y->offset)
        return x->offset < y->offset ? -1 : 1;
    int c = strcmp(x->condition, y->condition);
    if (c)
        return c;
    return x->length < y->length ? -1 : x->length > y->length;
}

void vec_print_result(FILE *f, const vec_reading *r)
{
    if (r->open) {
        fprintf(f, "{\n  \"open\": \"%s\"\n}\n", r->open);
        return;
    }
    fprintf(f, "{\n  \"open\": \"OK\",\n  \"clean\": %s,\n", r->clean ? "true" : "false");
    print_metadata(f, &r->meta);
    fputs("  \"event_types\": [", f);
    for (size_t i = 0; i < r->ntypes; i++) {
        fprintf(f, "%s\n    {\"id\": %u, ", i ? "," : "", r->types[i].id);
        print_text(f, "name", r->types[i].name, r->types[i].len);
        if (r->types[i].schema) {
            fputs(", ", f);
            print_text(f, "schema", r->types[i].schema, strlen(r->types[i].schema));
        }
        fputc('}', f);
    }
    fputs(r->ntypes ? "\n  ],\n" : "],\n", f);
    const tracelog_log_status *s = &r->status;
    fprintf(f,
            "  \"status\": {\"events_recorded\": %llu, \"events_written\": %llu, \"stream_overruns\": %llu, "
            "\"log_overruns\": %llu, \"flush_error\": %d, \"log_full\": %s",
            (unsigned long long)s->events_recorded, (unsigned long long)s->events_written,
            (unsigned long long)s->stream_overruns, (unsigned long long)s->log_overruns, s->flush_error,
            s->log_full ? "true" : "false");
    if (s->types_dropped) /* 1.1: only when not zero, as writers write it */
        fprintf(f, ", \"types_dropped\": %llu", (unsigned long long)s->types_dropped);
    if (s->threads_dropped)
        fprintf(f, ", \"threads_dropped\": %llu", (unsigned long long)s->threads_dropped);
    fputs("},\n", f);
    vec_problem *sorted = malloc((r->nproblems ? r->nproblems : 1) * sizeof *sorted);
    if (!sorted) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    if (r->nproblems)
        memcpy(sorted, r->problems, r->nproblems * sizeof *sorted);
    qsort(sorted, r->nproblems, sizeof *sorted, by_place);
    fputs("  \"problems\": [", f);
    for (size_t i = 0; i < r->nproblems; i++)
        fprintf(f, "%s\n    {\"condition\": \"%s\", \"offset\": %llu, \"length\": %llu}", i ? "," : "",
                sorted[i].condition, (unsigned long long)sorted[i].offset, (unsigned long long)sorted[i].length);
    fputs(r->nproblems ? "\n  ]\n}\n" : "]\n}\n", f);
    free(sorted);
}
