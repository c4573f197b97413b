#define _GNU_SOURCE

#include "xproc_helpers.h"

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void xp_send(int fd, char c)
{
    while (write(fd, &c, 1) < 0 && errno == EINTR)
        ;
}

int xp_recv(int fd, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int r;
    while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    if (r <= 0)
        return -1;
    unsigned char c;
    ssize_t n;
    while ((n = read(fd, &c, 1)) < 0 && errno == EINTR)
        ;
    return n == 1 ? c : -1;
}

int xp_wait(pid_t pid)
{
    int st;
    pid_t r;
    while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
        ;
    if (r != pid)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

int xp_become(uint32_t uid, uint32_t gid)
{
    if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        return errno;
    return 0;
}

int xp_can_switch_users(void) { return geteuid() == 0; }

uint64_t xp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void xp_remove_objects(uint32_t euid, uint32_t pid)
{
    char prefix[64];
    int n = snprintf(prefix, sizeof prefix, "tracelog.%u.%u", euid, pid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)n) != 0 || (e->d_name[n] != '\0' && e->d_name[n] != '.'))
            continue;
        char path[300];
        snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
        unlink(path);
    }
    closedir(d);
}
