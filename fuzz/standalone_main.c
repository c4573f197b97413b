/*
 * Replay driver: runs a fuzz target's LLVMFuzzerTestOneInput on files, so
 * that every corpus file is a plain test on any compiler (the replay_<name>
 * ctests, see fuzz/CMakeLists.txt).
 *
 *   replay_<name> PATH...
 *
 * Each PATH is a file or a directory (read recursively, in name order).
 * Prints how many inputs ran. Exit status: 0 if every input ran, 1 if a
 * FUZZ_ASSERT failed (the input is named), if a seed (a file named seed-*,
 * but for seed-bad-*: refused by design) never got past the target's first
 * gate (FUZZ_DEEP, fuzz_helpers.h) or if no input was found, 2 on a usage
 * or I/O error. A crash or a sanitizer report ends the program as it would
 * end a fuzzer.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_helpers.h"

/* libFuzzer's optional initialisation hook, if the target has one. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static const char *current_input = "(none)";
static unsigned long inputs_ran, seeds_shallow;
static int went_deep;

void fuzz_standalone_deep(void) { went_deep = 1; }

/* A seed that should get past the gate: seed-*, but for seed-bad-* (refused by design). */
static int seed_to_go_deep(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    return strncmp(base, "seed-", 5) == 0 && strncmp(base, "seed-bad-", 9) != 0;
}

void fuzz_standalone_assert_failed(void)
{
    fprintf(stderr, "replay: FUZZ_ASSERT failed on input %s (after %lu inputs passed)\n",
            current_input, inputs_ran);
    exit(1);
}

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "replay: %s: out of memory\n", path);
            fclose(f);
            return -1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        cap *= 2;
        uint8_t *p = realloc(buf, cap);
        if (!p)
            free(buf);
        buf = p;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    /* An exact-size copy, so that a sanitizer sees reads past the input's end. */
    uint8_t *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return -1;
    }
    memcpy(exact, buf, len);
    free(buf);
    current_input = path;
    went_deep = 0;
    LLVMFuzzerTestOneInput(exact, len);
    current_input = "(none)";
    free(exact);
    inputs_ran++;
    if (seed_to_go_deep(path) && !went_deep) {
        fprintf(stderr, "replay: %s: a seed that never gets past the target's first gate (FUZZ_DEEP): "
                        "generate it again (fuzz/make-corpus.sh)\n", path);
        seeds_shallow++;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path);

static int run_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", hidden files (editor backups, .gitkeep) */
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **p = realloc(names, cap * sizeof *p);
            if (!p) {
                rc = -1;
                break;
            }
            names = p;
        }
        size_t len = strlen(path) + 1 + strlen(e->d_name) + 1;
        names[n] = malloc(len);
        if (!names[n]) {
            rc = -1;
            break;
        }
        snprintf(names[n], len, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        if (rc == 0)
            rc = run_path(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int run_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return S_ISDIR(st.st_mode) ? run_dir(path) : run_file(path);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE_OR_DIRECTORY...\n", argv[0]);
        return 2;
    }
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i]) != 0)
            return 2;
    printf("replay: %lu inputs ran\n", inputs_ran);
    if (inputs_ran == 0) {
        fprintf(stderr, "replay: no input found\n");
        return 1;
    }
    return seeds_shallow ? 1 : 0;
}
