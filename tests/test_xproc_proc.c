/*
 * Who a pid is and who may trace it (libtracelog/xproc/proc.c; design note
 * docs/design/cross-process.md, section 3.4): process tokens that survive
 * command names with spaces and parentheses and tell a process from a later
 * one with the same pid, zombies and reaped pids as ESRCH, and the
 * permission rule, also as other users (root only; skipped otherwise).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc/proc.h"
#include "xproc_helpers.h"

static void test_token_of_self(void)
{
    tl_proc_token a, b;
    CHECK_ERR(tl_proc_token_of(getpid(), &a), 0);
    CHECK_ERR(tl_proc_token_of(getpid(), &b), 0);
    CHECK_EQ(a.pid, (uint32_t)getpid());
    CHECK(a.start > 0);
    CHECK_EQ(a.start, b.start);
    CHECK(tl_proc_alive(&a));
    CHECK(tl_proc_packed_alive(tl_proc_token_pack(&a)));
    CHECK_EQ(tl_proc_token_pack(&a) >> 32, (uint64_t)getpid());
}

/* A command name can hold ") (" and spaces: the start time must still be field 22. */
static void test_token_with_hostile_command_name(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        tl_proc_token before, after;
        if (tl_proc_token_of(getpid(), &before))
            _exit(2);
        prctl(PR_SET_NAME, "x) S 1 2 (y", 0, 0, 0);
        if (tl_proc_token_of(getpid(), &after) || after.start != before.start)
            _exit(3);
        xp_send(up[1], 'r');
        xp_recv(down[0], 10000);
        _exit(0);
    }
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    tl_proc_token t;
    CHECK_ERR(tl_proc_token_of(pid, &t), 0);
    tl_proc_token self;
    tl_proc_token_of(getpid(), &self);
    CHECK(t.start >= self.start); /* started after us: a parse of the wrong field would not say so */
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

static void test_zombie_and_reaped_are_gone(void)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t pid = pt_fork(20);
    if (pid == 0)
        _exit(0);
    tl_proc_token t;
    /* Until it is reaped it is a zombie: no longer traceable. */
    uint64_t deadline = xp_now_ns() + 5000000000ull;
    int e;
    while ((e = tl_proc_token_of(pid, &t)) == 0 && xp_now_ns() < deadline)
        usleep(1000);
    CHECK_ERR(e, ESRCH);
    CHECK_ERR(tl_proc_may_trace(pid), ESRCH);
    CHECK_EQ_INT(xp_wait(pid), 0);
    CHECK_ERR(tl_proc_token_of(pid, &t), ESRCH);
    CHECK_ERR(tl_proc_may_trace(pid), ESRCH);
    tl_proc_creds c;
    CHECK_ERR(tl_proc_creds_of(pid, &c), ESRCH);
    CHECK_ERR(tl_proc_token_of(0, &t), ESRCH);
    CHECK_ERR(tl_proc_token_of(-1, &t), ESRCH);
    close(up[0]), close(up[1]);
}

/* A dead process's packed token is not alive, even if its pid were reused. */
static void test_dead_token_is_not_alive(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        xp_send(up[1], 'r');
        xp_recv(down[0], 10000);
        _exit(0);
    }
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    tl_proc_token t;
    CHECK_ERR(tl_proc_token_of(pid, &t), 0);
    uint64_t packed = tl_proc_token_pack(&t);
    CHECK(tl_proc_packed_alive(packed));
    tl_proc_token later = t;
    later.start++; /* the same pid, started one tick later: another process */
    CHECK(!tl_proc_alive(&later));
    CHECK(!tl_proc_packed_alive(tl_proc_token_pack(&later)));
    CHECK(!tl_proc_packed_alive(0));
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    CHECK(!tl_proc_alive(&t));
    CHECK(!tl_proc_packed_alive(packed));
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

static void test_boot_id(void)
{
    uint8_t a[16], b[16], zero[16] = {0};
    CHECK_ERR(tl_proc_boot_id(a), 0);
    CHECK_ERR(tl_proc_boot_id(b), 0);
    CHECK_MEM_EQ(a, b, 16);
    CHECK(memcmp(a, zero, 16) != 0);
}

static void test_creds_of_self(void)
{
    tl_proc_creds c;
    CHECK_ERR(tl_proc_creds_of(getpid(), &c), 0);
    CHECK_EQ(c.uid[0], getuid());
    CHECK_EQ(c.uid[1], geteuid());
    CHECK_EQ(c.gid[0], getgid());
    CHECK_EQ(c.gid[1], getegid());
}

/* The rule itself, on made-up credentials. */
static void test_rule(void)
{
    tl_proc_creds same = {{1000, 1000, 1000}, {100, 100, 100}};
    CHECK_ERR(tl_proc_creds_allow(&same, 1000, 100, 0), 0);
    CHECK_ERR(tl_proc_creds_allow(&same, 1001, 100, 0), EPERM);
    CHECK_ERR(tl_proc_creds_allow(&same, 1000, 101, 0), EPERM);
    CHECK_ERR(tl_proc_creds_allow(&same, 1001, 101, 1), 0); /* CAP_SYS_PTRACE */
    /* A setuid program (real uid the caller's, effective and saved not):
       kill() would allow signalling it, tracing it is refused. */
    tl_proc_creds setuid_prog = {{1000, 0, 0}, {100, 100, 100}};
    CHECK_ERR(tl_proc_creds_allow(&setuid_prog, 1000, 100, 0), EPERM);
    tl_proc_creds saved_only = {{1000, 1000, 0}, {100, 100, 100}};
    CHECK_ERR(tl_proc_creds_allow(&saved_only, 1000, 100, 0), EPERM);
    tl_proc_creds setgid_prog = {{1000, 1000, 1000}, {100, 5, 5}};
    CHECK_ERR(tl_proc_creds_allow(&setgid_prog, 1000, 100, 0), EPERM);
}

static void test_may_trace_own_child(void)
{
    int down[2];
    if (pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        xp_recv(down[0], 10000);
        _exit(0);
    }
    CHECK_ERR(tl_proc_may_trace(pid), 0);
    CHECK_ERR(tl_proc_may_trace(getpid()), 0);
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    close(down[0]), close(down[1]);
}

/*
 * As other users: a process of user A (target) and controllers running as
 * root, as A, as B, and as A against a setuid-like process (real uid A,
 * effective and saved uid 0). Each controller reports its verdict as its
 * exit status.
 */
static pid_t start_target(uint32_t ruid, uint32_t euid, int *down_w)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        if (setgroups(0, NULL) || setresgid(XP_OTHER_UID, XP_OTHER_UID, XP_OTHER_UID) ||
            setresuid(ruid, euid, euid))
            _exit(2);
        xp_send(up[1], 'r');
        xp_recv(down[0], 20000);
        _exit(0);
    }
    if (xp_recv(up[0], 10000) != 'r')
        TL_DIE("target did not start");
    close(up[0]), close(up[1]), close(down[0]);
    *down_w = down[1];
    return pid;
}

static int verdict_as(uint32_t uid, pid_t target)
{
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        if (xp_become(uid, uid))
            _exit(100);
        int e = tl_proc_may_trace(target);
        _exit(e == 0 ? 0 : e == EPERM ? 1 : e == ESRCH ? 3 : 4);
    }
    return xp_wait(pid);
}

static void test_may_trace_as_other_users(void)
{
    if (!xp_can_switch_users()) {
        printf("SKIP test_may_trace_as_other_users: needs root to run processes as other users\n");
        return;
    }
    int down;
    pid_t target = start_target(XP_OTHER_UID, XP_OTHER_UID, &down);
    CHECK_ERR(tl_proc_may_trace(target), 0); /* root: CAP_SYS_PTRACE */
    CHECK_EQ_INT(verdict_as(XP_OTHER_UID, target), 0);
    CHECK_EQ_INT(verdict_as(XP_THIRD_UID, target), 1);
    CHECK_EQ_INT(verdict_as(XP_OTHER_UID, getpid()), 1); /* a user may not trace root */
    xp_send(down, 'q');
    CHECK_EQ_INT(xp_wait(target), 0);
    close(down);

    pid_t setuid_like = start_target(XP_OTHER_UID, 0, &down);
    CHECK_EQ_INT(verdict_as(XP_OTHER_UID, setuid_like), 1);
    /* kill(pid, 0) would have said yes: the real uid matches. */
    pid_t killer = pt_fork(20);
    if (killer == 0) {
        if (xp_become(XP_OTHER_UID, XP_OTHER_UID))
            _exit(100);
        _exit(kill(setuid_like, 0) == 0 ? 0 : 1);
    }
    CHECK_EQ_INT(xp_wait(killer), 0);
    xp_send(down, 'q');
    CHECK_EQ_INT(xp_wait(setuid_like), 0);
    close(down);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_token_of_self);
    PT_RUN(test_token_with_hostile_command_name);
    PT_RUN(test_zombie_and_reaped_are_gone);
    PT_RUN(test_dead_token_is_not_alive);
    PT_RUN(test_boot_id);
    PT_RUN(test_creds_of_self);
    PT_RUN(test_rule);
    PT_RUN(test_may_trace_own_child);
    PT_RUN(test_may_trace_as_other_users);
    return pt_finish();
}
