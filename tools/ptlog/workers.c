/* How many threads ptlog may use: the CPUs it may run on; the numbers PTLOG_READ_AHEAD and
   PTLOG_FORMAT_THREADS give. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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

int ptlog_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the new thread inherits the mask */
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
