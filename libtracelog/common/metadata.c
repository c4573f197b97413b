#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "tracelog/log.h"

static void copy(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n > cap - 1)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

void tracelog_metadata_init(tracelog_metadata *m)
{
    memset(m, 0, sizeof *m);
    copy(m->generation_version, sizeof m->generation_version, "tracelog " TRACELOG_VERSION_STRING);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    m->creation_time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    copy(m->clock_id, sizeof m->clock_id, "CLOCK_REALTIME");
    copy(m->clock_source, sizeof m->clock_source, "clock_gettime");
    if (clock_getres(CLOCK_REALTIME, &ts) == 0)
        m->clock_resolution_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    m->stream_full_policy = TRACELOG_POLICY_LOOP;
    m->log_full_policy = TRACELOG_POLICY_APPEND;
    struct utsname u;
    if (uname(&u) == 0) {
        copy(m->hostname, sizeof m->hostname, u.nodename);
        copy(m->os_name, sizeof m->os_name, u.sysname);
        copy(m->os_release, sizeof m->os_release, u.release);
        copy(m->machine, sizeof m->machine, u.machine);
    }
    m->pid = (uint32_t)getpid();
    ssize_t n = readlink("/proc/self/exe", m->program, sizeof m->program - 1);
    m->program[n > 0 ? n : 0] = 0;
}
