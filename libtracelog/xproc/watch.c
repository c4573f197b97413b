/* Watching a traced process end (see watch.h). */
#define _GNU_SOURCE
#include "xproc/watch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3 /* linux/wait.h; glibc 2.36 does not define it */
#endif
#define STAT_FIELD_START 22
#define STAT_FIELD_EXIT_CODE 52

int tl_proc_watch_open(const tl_proc_token *token, tl_proc_watch *w)
{
    w->pidfd = -1;
    w->token = *token;
#ifdef SYS_pidfd_open
    int fd = (int)syscall(SYS_pidfd_open, (pid_t)token->pid, 0);
#else
    int fd = -1;
    errno = ENOSYS;
#endif
    if (fd < 0)
        return errno == ENOSYS ? ENOSYS : ESRCH;
    /* The pid could have been reused between the token and the pidfd: check the pidfd names that process. */
    if (!tl_proc_alive(token)) {
        close(fd);
        return ESRCH;
    }
    w->pidfd = fd;
    return 0;
}

void tl_proc_watch_close(tl_proc_watch *w)
{
    if (w->pidfd >= 0)
        close(w->pidfd);
    w->pidfd = -1;
}

int tl_proc_watch_ended(tl_proc_watch *w, int timeout_ms)
{
    struct pollfd p = {w->pidfd, POLLIN, 0};
    int r;
    while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
        ;
    return r > 0;
}

int tl_proc_watch_wait(tl_proc_watch *w, int wake_fd)
{
    struct pollfd p[2] = {{w->pidfd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    while (poll(p, 2, -1) < 0)
        if (errno != EINTR)
            return 0; /* cannot wait (no memory for the poll table): the caller's other paths still log the end */
    return (p[0].revents & POLLIN) != 0;
}

void tl_proc_end_of_status(int status, tl_proc_end *end)
{
    if (WIFEXITED(status))
        *end = (tl_proc_end){TL_END_EXITED, WEXITSTATUS(status)};
    else if (WIFSIGNALED(status))
        *end = (tl_proc_end){WCOREDUMP(status) ? TL_END_DUMPED : TL_END_SIGNALED, WTERMSIG(status)};
    else
        *end = (tl_proc_end){TL_END_UNKNOWN, 0};
}

/*
 * A zombie that is not our child: its exit code is in /proc/<pid>/stat while
 * nobody has reaped it (the start time says it is still the same process).
 */
static int zombie_status(const tl_proc_token *t, int *status)
{
    pid_t pid = (pid_t)t->pid;
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    if (n <= 0)
        return -1;
    line[n] = '\0';
    const char *p = strrchr(line, ')');
    if (!p || p[1] != ' ' || p[2] != 'Z')
        return -1;
    p += 2;
    for (int field = 3; field < STAT_FIELD_EXIT_CODE; field++) {
        if (field == STAT_FIELD_START && strtoull(p, NULL, 10) != t->start)
            return -1;
        p = strchr(p, ' ');
        if (!p)
            return -1;
        p++;
    }
    char *end;
    long v = strtol(p, &end, 10);
    if (end == p)
        return -1;
    *status = (int)v;
    return 0;
}

void tl_proc_watch_end(tl_proc_watch *w, tl_proc_end *end)
{
    *end = (tl_proc_end){TL_END_UNKNOWN, 0};
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid((idtype_t)P_PIDFD, (id_t)w->pidfd, &si, WEXITED | WNOWAIT | WNOHANG) == 0 && si.si_pid != 0) {
        if (si.si_code == CLD_EXITED)
            *end = (tl_proc_end){TL_END_EXITED, si.si_status};
        else if (si.si_code == CLD_KILLED)
            *end = (tl_proc_end){TL_END_SIGNALED, si.si_status};
        else if (si.si_code == CLD_DUMPED)
            *end = (tl_proc_end){TL_END_DUMPED, si.si_status};
        return;
    }
    int status;
    if (zombie_status(&w->token, &status) == 0)
        tl_proc_end_of_status(status, end);
}
