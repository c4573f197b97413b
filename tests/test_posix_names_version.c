/*
 * A controller and a traced process whose name maps are of other versions
 * (libtracelog/posix/names.c NAMES_VERSION: 3 added the threads' names, 4
 * the filters by name; issue 26) refuse each other's map cleanly: the
 * controller traces the process, its log verifies and holds the process's
 * events, under ids it cannot name; the calls that need the map say EAGAIN;
 * the stream's stats say why (names_error ENOTSUP); nothing crashes or hangs. The child's map is made to look older by its
 * version word (a map of another size is refused before: tl_shmobj_open).
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

static void child_main(int up, int down)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("v.first", &id)) /* its named map made */
        _exit(3);
    xp_send_id(up, (uint32_t)id);
    if (xp_recv(down, 10000) != 'g')
        _exit(2);
    posix_trace_event(id, "x", 1);
    _exit(0);
}

/* Sets the version word (the map's second) of pid's named map: 0, or -1 if it was not found. */
static int set_map_version(pid_t pid, uint32_t version, uint32_t *was)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "tracelog.%u.%d.names.", (unsigned)geteuid(), (int)pid);
    DIR *d = opendir("/dev/shm");
    struct dirent *de;
    int found = -1;
    while (d && found && (de = readdir(d))) {
        if (strncmp(de->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "/dev/shm/%s", de->d_name);
        int fd = open(path, O_RDWR);
        uint32_t *m = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd >= 0)
            close(fd);
        if (m == MAP_FAILED)
            continue;
        *was = m[1];
        m[1] = version;
        munmap(m, 4096);
        found = 0;
    }
    if (d)
        closedir(d);
    return found;
}

static void test_other_version_refused(void)
{
    xp_child c;
    if (!CHECK_EQ_INT(xp_child_start(&c, child_main), 0))
        return;
    uint32_t was = 0;
    if (!CHECK_EQ_INT(set_map_version(c.pid, 3, &was), 0)) {
        xp_child_end(&c);
        return;
    }
    CHECK_EQ_INT(was, 5); /* this build's: a new layout bumps it (and this test) */
    int fd = tl_test_tmpfd();
    trace_id_t t;
    if (!CHECK_ERR(posix_trace_create_withlog(c.pid, NULL, fd, &t), 0)) {
        xp_child_end(&c);
        return;
    }
    trace_event_id_t id;
    CHECK_ERR(posix_trace_trid_eventid_open(t, "v.ctl", &id), EAGAIN);
    CHECK_ERR(tracelog_trace_filter_name(t, "v.ctl", POSIX_TRACE_ADD_EVENTSET), EAGAIN);
    CHECK_ERR(posix_trace_start(t), 0);
    xp_send(c.down[1], 'g');
    CHECK_EQ_INT(xp_wait(c.pid), 0);
    tracelog_trace_stats st;
    CHECK_ERR(tracelog_trace_get_stats(t, &st), 0);
    CHECK_EQ_INT(st.names_error, ENOTSUP); /* ptlog warns by it; kept once the process's end removed its map */
    CHECK_ERR(posix_trace_shutdown(t), 0);
    tracelog_reader *r;
    lseek(fd, 0, SEEK_SET);
    if (CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, NULL), TRACELOG_OK)) {
        tracelog_event ev;
        int n = 0;
        while (tracelog_reader_next(r, &ev) == TRACELOG_OK)
            n += ev.event_id == c.id;
        CHECK_EQ_INT(n, 1); /* its event is there */
        CHECK(tracelog_reader_event_name(r, c.id) == NULL); /* under an id the log cannot name */
        tracelog_reader_info info;
        tracelog_reader_get_info(r, &info);
        CHECK_EQ_INT((int)info.problems, 0);
        tracelog_reader_close(r);
    }
    close(fd);
    xp_child_close(&c);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_other_version_refused);
    return pt_finish();
}
