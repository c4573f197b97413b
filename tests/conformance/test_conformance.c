/*
 * test_conformance: every conformance vector of format-spec/vectors/ read by
 * tracelog's reader gives exactly the vector's expected events and result:
 * once from the file (seekable), and once through a pipe (the forward-only
 * reader), where a ring log must be refused (RING_NOT_SEEKABLE) and any
 * other gives the same reading.
 *
 *   test_conformance DIR
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vec_read.h"

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    for (;;) {
        if (*len + 4096 > cap && !(buf = realloc(buf, cap = 2 * cap + 4096)))
            break;
        size_t n = fread(buf + *len, 1, cap - *len, f);
        *len += n;
        if (n == 0)
            break;
    }
    fclose(f);
    return buf;
}

static char *text(void (*print)(FILE *, const vec_reading *), const vec_reading *r, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    print(f, r);
    fclose(f);
    return buf;
}

/* Reports the first line where got and want differ. */
static int same(const char *what, const char *got, size_t ngot, const char *want, size_t nwant)
{
    if (want && ngot == nwant && memcmp(got, want, ngot) == 0)
        return 1;
    if (!want) {
        printf("FAIL %s: expected file missing\n", what);
        return 0;
    }
    size_t line = 1, i = 0;
    while (i < ngot && i < nwant && got[i] == want[i])
        line += got[i++] == '\n';
    size_t g0 = i, w0 = i;
    while (g0 > 0 && got[g0 - 1] != '\n')
        g0--;
    while (w0 > 0 && want[w0 - 1] != '\n')
        w0--;
    const char *ge = memchr(got + g0, '\n', ngot - g0), *we = memchr(want + w0, '\n', nwant - w0);
    printf("FAIL %s, line %zu:\n  want: %.*s\n  got:  %.*s\n", what, line,
           (int)((we ? we : want + nwant) - (want + w0)), want + w0, (int)((ge ? ge : got + ngot) - (got + g0)),
           got + g0);
    return 0;
}

static int check(const char *dir, const char *name, int piped)
{
    char path[4096], what[4200];
    snprintf(path, sizeof path, "%s/%s.ptl", dir, name);
    tracelog_reader_options opt;
    vec_reading r;
    if (vec_options(path, &opt) || vec_read(path, piped, &opt, &r)) {
        printf("FAIL %s%s: the reader failed\n", name, piped ? " (pipe)" : "");
        return 0;
    }
    size_t ne, nr, nwe = 0, nwr = 0, nfile = 0;
    char *events = text(vec_print_events, &r, &ne), *result = text(vec_print_result, &r, &nr);
    snprintf(path, sizeof path, "%s/%s.events.jsonl", dir, name);
    char *want_events = slurp(path, &nwe);
    snprintf(path, sizeof path, "%s/%s.result.json", dir, name);
    char *want_result = slurp(path, &nwr);
    snprintf(path, sizeof path, "%s/%s.ptl", dir, name);
    char *file = slurp(path, &nfile);
    static const char ring_refused[] = "{\n  \"open\": \"RING_NOT_SEEKABLE\"\n}\n";
    if (piped && want_result && strstr(want_result, "\"open\": \"OK\"") && nfile > 40 && file[40] == 1) {
        free(want_result);
        want_result = strdup(ring_refused);
        nwr = sizeof ring_refused - 1;
        nwe = 0; /* no event */
    }
    snprintf(what, sizeof what, "%s%s events", name, piped ? " (pipe)" : "");
    int ok = same(what, events, ne, want_events, nwe);
    snprintf(what, sizeof what, "%s%s result", name, piped ? " (pipe)" : "");
    ok &= same(what, result, nr, want_result, nwr);
    free(events), free(result), free(want_events), free(want_result), free(file);
    vec_reading_free(&r);
    return ok;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_conformance DIR\n");
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    char **names = NULL;
    size_t n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        size_t k = strlen(e->d_name);
        if (k > 4 && strcmp(e->d_name + k - 4, ".ptl") == 0) {
            names = realloc(names, (n + 1) * sizeof *names);
            names[n++] = strndup(e->d_name, k - 4);
        }
    }
    closedir(d);
    qsort(names, n, sizeof *names, by_name);
    unsigned failed = 0;
    for (size_t i = 0; i < n; i++) {
        failed += !check(argv[1], names[i], 0);
        failed += !check(argv[1], names[i], 1);
        free(names[i]);
    }
    free(names);
    printf("%zu vectors, each read from the file and through a pipe: %u readings differ\n", n, failed);
    return n == 0 || failed ? 1 : 0;
}
