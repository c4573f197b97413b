/*
 * burst: records N events of 16 bytes from one thread as fast as it can
 * (an event id of its own, the payload's first 8 bytes a sequence number
 * from 0), for the tests of a controller that must keep up with a traced
 * program (ptlog record --flush-wait). Exit status 0, 2 for bad arguments.
 *
 *   burst N
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>

int main(int argc, char **argv)
{
    long long n = argc == 2 ? atoll(argv[1]) : -1;
    if (n < 0) {
        fprintf(stderr, "usage: burst N\n");
        return 2;
    }
    trace_event_id_t id;
    if (posix_trace_eventid_open("burst", &id) != 0) {
        perror("burst: posix_trace_eventid_open");
        return 1;
    }
    for (long long i = 0; i < n; i++) {
        uint64_t payload[2] = {(uint64_t)i, 0x5eed};
        posix_trace_event(id, payload, sizeof payload);
    }
    return 0;
}
