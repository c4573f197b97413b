/*
 * Watching a traced process end (libtracelog/xproc/watch.c; design note,
 * section 7): a child that exits, is killed, aborts, aborts with a core
 * dump; every kind of wait status decoded (a core dump is DUMPED, never
 * SIGNALED); a process that is not our child; the status is read without
 * reaping (the application's own waitpid still gets it); a pid that is gone.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc/watch.h"
#include "xproc_helpers.h"

/* A child that waits for a byte, then does `how` ('d': abort with a core dump into core_dir, where allowed). */
static pid_t start_child(int *go_w, char how, const char *core_dir)
{
    int go[2];
    if (pipe(go))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        close(go[1]);
        struct rlimit core = {0, 0};
        if (how == 'd') {
            getrlimit(RLIMIT_CORE, &core);
            core.rlim_cur = core.rlim_max == RLIM_INFINITY || core.rlim_max > (256u << 20) ? 256u << 20 : core.rlim_max;
            if (chdir(core_dir))
                _exit(99);
            FILE *filter = fopen("/proc/self/coredump_filter", "w"); /* a small core: no memory in it */
            if (filter) {
                fputs("0", filter);
                fclose(filter);
            }
            how = 'a';
        }
        setrlimit(RLIMIT_CORE, &core);
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
    pid_t pid = start_child(&go, how, NULL);
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

/*
 * Every kind of wait status, as waitpid gives it and as /proc/PID/stat holds
 * it for a zombie: an exit (its code), a signal (its number), a signal with
 * a core dump (DUMPED, not SIGNALED, whatever the signal), anything else
 * unknown.
 */
static void test_status_decoded(void)
{
    static const struct {
        int status, how, code;
    } cases[] = {
        {0, TL_END_EXITED, 0},
        {3 << 8, TL_END_EXITED, 3},
        {255 << 8, TL_END_EXITED, 255},
        {SIGKILL, TL_END_SIGNALED, SIGKILL},
        {SIGABRT, TL_END_SIGNALED, SIGABRT},
        {SIGTERM, TL_END_SIGNALED, SIGTERM},
        {SIGABRT | 0x80, TL_END_DUMPED, SIGABRT},
        {SIGSEGV | 0x80, TL_END_DUMPED, SIGSEGV},
        {SIGQUIT | 0x80, TL_END_DUMPED, SIGQUIT},
        {SIGBUS | 0x80, TL_END_DUMPED, SIGBUS},
        {0x7f | SIGSTOP << 8, TL_END_UNKNOWN, 0}, /* stopped */
        {0xffff, TL_END_UNKNOWN, 0},              /* continued */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tl_test_context("wait status 0x%x", cases[i].status);
        if (WIFSIGNALED(cases[i].status)) /* the case is what it says */
            CHECK_EQ_INT(WCOREDUMP(cases[i].status) != 0, cases[i].how == TL_END_DUMPED);
        tl_proc_end end;
        tl_proc_end_of_status(cases[i].status, &end);
        CHECK_EQ_INT(end.how, cases[i].how);
        CHECK_EQ_INT(end.code, cases[i].code);
    }
    tl_test_context(NULL);
}

/* Removes dir and the files in it (the core dumped there). */
static void remove_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4200];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

/*
 * A child that aborts with a core dump (RLIMIT_CORE raised, its working
 * directory a private one): the watch says DUMPED with SIGABRT, as the
 * status the kernel gives its parent says (WCOREDUMP), through the pidfd
 * (CLD_DUMPED) and through the status. Where no core can be dumped
 * (core_pattern, limits, a sanitizer) the kernel says SIGNALED, and so
 * must the watch; the line printed says which was seen.
 */
static void test_child_dumps_core(void)
{
    char dir[] = "/tmp/tl_core.XXXXXX";
    if (!CHECK(mkdtemp(dir) != NULL))
        return;
    int go;
    pid_t pid = start_child(&go, 'd', dir);
    tl_proc_token t;
    CHECK_ERR(tl_proc_token_of(pid, &t), 0);
    tl_proc_watch w;
    if (!CHECK_ERR(tl_proc_watch_open(&t, &w), 0)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        remove_dir(dir);
        return;
    }
    xp_send(go, 'g');
    CHECK_EQ_INT(tl_proc_watch_ended(&w, 20000), 1);
    tl_proc_end end;
    tl_proc_watch_end(&w, &end); /* through the pidfd, not reaped */
    int st = 0;
    CHECK_EQ_INT(waitpid(pid, &st, 0), pid);
    int dumped = WIFSIGNALED(st) && WCOREDUMP(st);
    printf("  the child %s\n", dumped ? "dumped a core" : "could not dump a core here: SIGNALED expected");
    CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT);
    CHECK_EQ_INT(end.how, dumped ? TL_END_DUMPED : TL_END_SIGNALED);
    CHECK_EQ_INT(end.code, SIGABRT);
    tl_proc_end mine;
    tl_proc_end_of_status(st, &mine);
    CHECK_EQ_INT(mine.how, dumped ? TL_END_DUMPED : TL_END_SIGNALED);
    CHECK_EQ_INT(mine.code, SIGABRT);
    tl_proc_watch_close(&w);
    close(go);
    remove_dir(dir);
}

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
    pid_t pid = start_child(&go, 'x', NULL);
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
    PT_RUN(test_status_decoded);
    PT_RUN(test_child_dumps_core);
    PT_RUN(test_not_our_child);
    PT_RUN(test_gone);
    return pt_finish();
}
