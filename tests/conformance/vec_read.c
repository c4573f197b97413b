#define _GNU_SOURCE
#include "vec_read.h"

#include "tracelog/schema.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Reads the number after "key": in a small JSON object; 0 if absent. */
static uint32_t json_u32(const char *text, const char *key)
{
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *p = strstr(text, quoted);
    if (!p || !(p = strchr(p + strlen(quoted), ':')))
        return 0;
    return (uint32_t)strtoul(p + 1, NULL, 10);
}

int vec_options(const char *ptl_path, tracelog_reader_options *opt)
{
    tracelog_reader_options_init(opt);
    char path[4096];
    size_t n = strlen(ptl_path);
    if (n < 4 || n + 16 > sizeof path)
        return -1;
    snprintf(path, sizeof path, "%.*s.limits.json", (int)(n - 4), ptl_path);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char text[512] = "";
    size_t k = fread(text, 1, sizeof text - 1, f);
    text[k] = 0;
    fclose(f);
    uint32_t v;
    if ((v = json_u32(text, "max_block_size")))
        opt->max_block_size = v;
    if ((v = json_u32(text, "max_chunk_size")))
        opt->max_chunk_size = v;
    if ((v = json_u32(text, "max_event_types")))
        opt->max_event_types = v;
    if ((v = json_u32(text, "max_threads")))
        opt->max_threads = v;
    return 0;
}

typedef struct feeder {
    int in, out;
} feeder;

/* Copies the file into the pipe, then closes its end (the reader sees the end of the data). */
static void *feed(void *arg)
{
    feeder *f = arg;
    char buf[4096];
    ssize_t n;
    while ((n = read(f->in, buf, sizeof buf)) > 0)
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(f->out, buf + done, (size_t)(n - done));
            if (w <= 0)
                goto out; /* the reader stopped reading: it refused the file */
            done += w;
        }
out:
    close(f->out);
    close(f->in);
    return NULL;
}

static void collect(tracelog_reader *r, vec_reading *out)
{
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    out->clean = info.clean;
    out->meta = *tracelog_reader_metadata(r);
    tracelog_reader_get_status(r, &out->status);
    for (size_t i = 0; i < tracelog_reader_event_type_count(r); i++) {
        uint32_t id;
        const char *name;
        if (tracelog_reader_event_type(r, i, &id, &name) == TRACELOG_OK) {
            const tracelog_schema *s = tracelog_reader_event_schema(r, id);
            vec_set_type(out, id, name, strlen(name), s ? tracelog_schema_text(s) : NULL);
        }
    }
    for (size_t i = 0; i < tracelog_reader_problem_count(r); i++) {
        tracelog_problem p;
        if (tracelog_reader_problem(r, i, &p) == TRACELOG_OK)
            vec_add_problem(out, tracelog_reader_problem_condition(r, i), p.offset, p.length);
    }
}

int vec_read(const char *path, int piped, const tracelog_reader_options *opt, vec_reading *out)
{
    vec_reading_init(out);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return -1;
    }
    pthread_t thread;
    feeder f;
    if (piped) {
        int p[2];
        if (pipe2(p, O_CLOEXEC)) {
            close(fd);
            return -1;
        }
        signal(SIGPIPE, SIG_IGN);
        f = (feeder){fd, p[1]};
        fd = p[0];
        if (pthread_create(&thread, NULL, feed, &f)) {
            close(p[0]), close(p[1]), close(f.in);
            return -1;
        }
    }
    tracelog_reader *r;
    tracelog_error err;
    tracelog_status st = tracelog_reader_open(fd, opt, &r, &err);
    int rc = 0;
    if (st != TRACELOG_OK) {
        out->open = tracelog_reader_open_condition(&err);
        if (!out->open) {
            fprintf(stderr, "%s: the reader failed: %s\n", path, err.message);
            rc = -1;
        }
    } else {
        tracelog_event ev;
        while ((st = tracelog_reader_next(r, &ev)) == TRACELOG_OK) {
            vec_add_event(out, &ev);
            const char *tname = tracelog_reader_event_thread_name(r, &ev);
            if (tname)
                vec_set_tname(&out->events[out->nevents - 1], tname, strlen(tname));
        }
        if (st != TRACELOG_END) {
            fprintf(stderr, "%s: the reader failed: %s\n", path, tracelog_strerror(st));
            rc = -1;
        }
        collect(r, out);
        tracelog_reader_close(r);
    }
    close(fd); /* a feeder still writing gets EPIPE and stops */
    if (piped)
        pthread_join(thread, NULL);
    return rc;
}
