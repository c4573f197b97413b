/*
 * burst: records N events of 16 bytes from one thread as fast as it can
 * (an event id of its own, the payload's first 8 bytes a sequence number
 * from 0), for the tests of a controller that must keep up with a traced
 * program (ptlog record --flush-wait). With NAMES, every N / NAMES events
 * the next one is of a name opened just before it ("burst.1", "burst.2"...):
 * names registered while the controller drains (ptlog record -o - into a
 * pipe must define each before the chunk that holds its first event).
 * Exit status 0, 2 for bad arguments.
 *
 *   burst N [NAMES]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>

int main(int argc, char **argv)
{
    long long n = argc == 2 || argc == 3 ? atoll(argv[1]) : -1, names = argc == 3 ? atoll(argv[2]) : 0;
    if (n < 0 || names < 0 || names > n) {
        fprintf(stderr, "usage: burst N [NAMES]\n");
        return 2;
    }
    trace_event_id_t id;
    if (posix_trace_eventid_open("burst", &id) != 0) {
        perror("burst: posix_trace_eventid_open");
        return 1;
    }
    long long every = names ? n / names : 0;
    for (long long i = 0; i < n; i++) {
        uint64_t payload[2] = {(uint64_t)i, 0x5eed};
        trace_event_id_t now = id;
        char name[32];
        snprintf(name, sizeof name, "burst.%lld", every ? i / every : 0);
        if (every && i % every == 0 && posix_trace_eventid_open(name, &now) != 0) {
            perror("burst: posix_trace_eventid_open");
            return 1;
        }
        posix_trace_event(now, payload, sizeof payload);
    }
    return 0;
}
