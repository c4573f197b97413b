/*
 * Watching a traced process end (libtracelog/xproc/watch.c; design note,
 * section 7): a child that exits, is killed, aborts; a process that is not
 * our child; the status is read without reaping (the application's own
 * waitpid still gets it); a pid that is gone.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc/watch.h"
#include "xproc_helpers.h"

/* A child that waits for a byte, then does `how`. */
static pid_t start_child(int *go_w, char how)
{
    int go[2];
    if (pipe(go))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        close(go[1]);
        struct rlimit no_core = {0, 0};
        setrlimit(RLIMIT_CORE, &no_core);
        xp_recv(go[0], 20000);
        if (how == 'x')
            _exit(3);
        if (how == 'a')
            abort();
        pause();
        _exit(0);
    }
    close(go[0]);
    *go_w = go[1];
    return pid;
}

static void watch_child(char how, int want_how, int want_code)
{
    int go;
    pid_t pid = start_child(&go, how);
    tl_proc_token t;
    CHECK_ERR(tl_proc_token_of(pid, &t), 0);
    tl_proc_watch w;
    if (!CHECK_ERR(tl_proc_watch_open(&t, &w), 0)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        return;
    }
    CHECK_EQ_INT(tl_proc_watch_ended(&w, 0), 0);
    CHECK_EQ_INT(tl_proc_watch_ended(&w, 20), 0);
    if (how == 'k')
        kill(pid, SIGKILL);
    else
        xp_send(go, 'g');
    CHECK_EQ_INT(tl_proc_watch_ended(&w, 10000), 1);
    tl_proc_end end;
    tl_proc_watch_end(&w, &end);
    CHECK_EQ_INT(end.how, want_how);
    CHECK_EQ_INT(end.code, want_code);
    tl_proc_watch_end(&w, &end); /* not reaped: asking again gives the same */
    CHECK_EQ_INT(end.how, want_how);
    int st;
    CHECK_EQ_INT(waitpid(pid, &st, 0), pid); /* the application's own wait still works */
    tl_proc_end mine;
    tl_proc_end_of_status(st, &mine);
    CHECK_EQ_INT(mine.how, want_how);
    CHECK_EQ_INT(mine.code, want_code);
    tl_proc_watch_close(&w);
    close(go);
}

static void test_child_exits(void) { watch_child('x', TL_END_EXITED, 3); }
static void test_child_killed(void) { watch_child('k', TL_END_SIGNALED, SIGKILL); }
static void test_child_aborts(void) { watch_child('a', TL_END_SIGNALED, SIGABRT); }

/* A grandchild: not ours to wait for; its status is read while it is a zombie. */
static void test_not_our_child(void)
{
    int up[2], down[2], gdown[2];
    if (pipe(up) || pipe(down) || pipe(gdown))
        TL_DIE("pipe");
    pid_t mid = pt_fork(30);
    if (mid == 0) {
        pid_t g = fork();
        if (g == 0) {
            xp_recv(gdown[0], 20000);
            _exit(7);
        }
        if (write(up[1], &g, sizeof g) != (ssize_t)sizeof g)
            _exit(2);
        xp_recv(down[0], 20000); /* does not reap g until told */
        int st;
        waitpid(g, &st, 0);
        _exit(0);
    }
    pid_t g;
    if (read(up[0], &g, sizeof g) != (ssize_t)sizeof g)
        TL_DIE("read");
    tl_proc_token t;
    CHECK_ERR(tl_proc_token_of(g, &t), 0);
    tl_proc_watch w;
    if (CHECK_ERR(tl_proc_watch_open(&t, &w), 0)) {
        xp_send(gdown[1], 'g'); /* the grandchild exits */
        CHECK_EQ_INT(tl_proc_watch_ended(&w, 10000), 1);
        tl_proc_end end;
        tl_proc_watch_end(&w, &end);
        CHECK_EQ_INT(end.how, TL_END_EXITED);
        CHECK_EQ_INT(end.code, 7);
        xp_send(down[1], 'g');
        CHECK_EQ_INT(xp_wait(mid), 0);
        tl_proc_watch_end(&w, &end); /* reaped by its parent: no longer known */
        CHECK_EQ_INT(end.how, TL_END_UNKNOWN);
        tl_proc_watch_close(&w);
    } else {
        kill(g, SIGKILL);
        kill(mid, SIGKILL);
        xp_wait(mid);
    }
    close(up[0]), close(up[1]), close(down[0]), close(down[1]), close(gdown[0]), close(gdown[1]);
}

static void test_gone(void)
{
    int go;
    pid_t pid = start_child(&go, 'x');
    tl_proc_token t;
    CHECK_ERR(tl_proc_token_of(pid, &t), 0);
    xp_send(go, 'g');
    close(go);
    CHECK_EQ_INT(xp_wait(pid), 3);
    tl_proc_watch w;
    CHECK_ERR(tl_proc_watch_open(&t, &w), ESRCH);
    tl_proc_token self;
    tl_proc_token_of(getpid(), &self);
    self.start++; /* our pid, another start time: not us */
    CHECK_ERR(tl_proc_watch_open(&self, &w), ESRCH);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_child_exits);
    PT_RUN(test_child_killed);
    PT_RUN(test_child_aborts);
    PT_RUN(test_not_our_child);
    PT_RUN(test_gone);
    return pt_finish();
}
