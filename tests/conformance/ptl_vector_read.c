/*
 * ptl_vector_read: prints what tracelog's reader finds in a .ptl file, in
 * the conformance vectors' terms (format-spec/vectors/README.md), so that it
 * can be compared with a vector's expected files or another reader's output.
 *
 *   ptl_vector_read [--pipe] --events|--result FILE.ptl
 *
 * --pipe reads the file through a pipe (the forward-only reader). Limits
 * come from FILE.limits.json when it exists. Exit 0, or 2 when the reader
 * itself failed (input/output, memory) or on a usage error.
 */
#include <stdio.h>
#include <string.h>

#include "vec_read.h"

int main(int argc, char **argv)
{
    int piped = 0, events = -1;
    const char *path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--pipe") == 0)
            piped = 1;
        else if (strcmp(argv[i], "--events") == 0)
            events = 1;
        else if (strcmp(argv[i], "--result") == 0)
            events = 0;
        else if (!path && argv[i][0] != '-')
            path = argv[i];
        else
            events = -2;
    }
    if (!path || events < 0) {
        fprintf(stderr, "usage: ptl_vector_read [--pipe] --events|--result FILE.ptl\n");
        return 2;
    }
    tracelog_reader_options opt;
    vec_reading r;
    if (vec_options(path, &opt) || vec_read(path, piped, &opt, &r))
        return 2;
    if (events)
        vec_print_events(stdout, &r);
    else
        vec_print_result(stdout, &r);
    vec_reading_free(&r);
    return fflush(stdout) ? 2 : 0;
}
