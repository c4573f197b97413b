/* How many threads ptlog may use: the CPUs it may run on; the numbers PTLOG_READ_AHEAD and
   PTLOG_FORMAT_THREADS give. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "ptlog.h"

int ptlog_parse_threads(const char *v, int max, int *n)
{
    if (strspn(v, "0123456789") != strlen(v) || strlen(v) > 3 || atoi(v) > max)
        return -1;
    *n = atoi(v);
    return 0;
}

int ptlog_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) || CPU_COUNT(&set) < 1)
        return 1;
    return CPU_COUNT(&set);
}
