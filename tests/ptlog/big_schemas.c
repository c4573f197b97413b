/*
 * big_schemas: opens N typed names whose schemas are about 16 KiB of text
 * each (250 u8 fields with long names), and records one event of each, its
 * 250 bytes all the name's number: more schema text than a name map held
 * before (1 MiB), within what a log holds (4 MiB). With OUT, traces itself
 * into OUT (FLUSH policy) instead of waiting for a controller.
 *
 *   big_schemas N [OUT]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    if (n < 1 || n > 200) {
        fprintf(stderr, "usage: big_schemas N [OUT] (N from 1 to 200)\n");
        return 2;
    }
    trace_id_t t = 0;
    if (argc > 2) {
        int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || posix_trace_create_withlog(0, NULL, fd, &t) || posix_trace_start(t)) {
            perror(argv[2]);
            return 1;
        }
    }
    static char schema[20000];
    for (int k = 0; k < n; k++) {
        size_t o = 0;
        for (int f = 0; f < 250; f++)
            o += (size_t)snprintf(schema + o, sizeof schema - o, "u8 field_%03d_%03d_with_a_name_long_enough_to_weigh; ", k, f);
        char name[32];
        snprintf(name, sizeof name, "big.%03d", k);
        trace_event_id_t id;
        int e = tracelog_eventid_open_typed(name, schema, &id);
        if (e) {
            fprintf(stderr, "big_schemas: %s: error %d (schema of %zu bytes)\n", name, e, o);
            return 1;
        }
        unsigned char payload[250];
        memset(payload, k, sizeof payload);
        posix_trace_event(id, payload, sizeof payload);
    }
    return t && posix_trace_shutdown(t) ? 1 : 0;
}
