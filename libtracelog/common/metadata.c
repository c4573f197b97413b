/* Default metadata: this host, this process, now (tracelog_metadata_init). */
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"
#include "tracelog/log.h"

void tracelog_metadata_init(tracelog_metadata *m)
{
    memset(m, 0, sizeof *m);
    tl_copy_text(m->generation_version, sizeof m->generation_version, "tracelog " TRACELOG_VERSION_STRING);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    m->creation_time_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    tl_copy_text(m->clock_id, sizeof m->clock_id, "CLOCK_REALTIME");
    tl_copy_text(m->clock_source, sizeof m->clock_source, "clock_gettime");
    if (clock_getres(CLOCK_REALTIME, &ts) == 0)
        m->clock_resolution_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    m->stream_full_policy = TRACELOG_POLICY_LOOP;
    m->log_full_policy = TRACELOG_POLICY_APPEND;
    struct utsname u;
    if (uname(&u) == 0) {
        tl_copy_text(m->hostname, sizeof m->hostname, u.nodename);
        tl_copy_text(m->os_name, sizeof m->os_name, u.sysname);
        tl_copy_text(m->os_release, sizeof m->os_release, u.release);
        tl_copy_text(m->machine, sizeof m->machine, u.machine);
    }
    m->pid = (uint32_t)getpid();
    ssize_t n = readlink("/proc/self/exe", m->program, sizeof m->program - 1);
    m->program[n > 0 ? n : 0] = 0;
}
