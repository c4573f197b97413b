/*
 * lttng_live: bench_live emit's workload through LTTng-UST (the tracepoint
 * bench:event of ../lttng/tp.h, its 16-byte payload as bench_live's), for
 * LTTng live's latency next to tracelog's (run-live.sh builds and runs it
 * under a live session).
 *
 *   lttng_live RATE SECONDS
 */
#include <stdio.h>
#include <stdlib.h>

#include "live_pace.h"
#include "tp.h"

static void record(const uint64_t payload[2]) { lttng_ust_tracepoint(bench, event, payload, 16); }

int main(int argc, char **argv)
{
    long rate = argc == 3 ? atol(argv[1]) : 0;
    double seconds = argc == 3 ? atof(argv[2]) : 0;
    if (rate <= 0 || seconds <= 0) {
        fprintf(stderr, "usage: lttng_live RATE SECONDS\n");
        return 2;
    }
    live_emit(rate, seconds, record);
    return 0;
}
