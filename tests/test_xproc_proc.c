/*
 * Who a pid is and who may trace it (libtracelog/xproc/proc.c; design note
 * docs/design/cross-process.md, section 3.4): process tokens that survive
 * command names with spaces and parentheses and tell a process from a later
 * one with the same pid, zombies and reaped pids as ESRCH, and the
 * permission rule, also as other users (root only; skipped otherwise);
 * thread names (comm) read as the untrusted bytes they are.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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

typedef struct named_thread {
    const char *name;
    pid_t ktid;
    int up[2], down[2];
} named_thread;

/* Names itself, says its kernel tid, and waits to be let go. */
static void *run_named(void *arg)
{
    named_thread *t = arg;
    prctl(PR_SET_NAME, t->name, 0, 0, 0);
    t->ktid = (pid_t)syscall(SYS_gettid);
    xp_send(t->up[1], 'r');
    xp_recv(t->down[0], 10000);
    return NULL;
}

/* The comm of a thread that named itself `name`, read while it runs; its kernel tid in *ktid. */
static void comm_of_thread(const char *name, char *buf, size_t cap, int *rc, pid_t *ktid)
{
    named_thread t = {.name = name};
    if (pipe(t.up) || pipe(t.down))
        TL_DIE("pipe");
    pthread_t th;
    if (pthread_create(&th, NULL, run_named, &t))
        TL_DIE("pthread_create");
    CHECK_EQ_INT(xp_recv(t.up[0], 10000), 'r');
    *rc = tl_proc_thread_comm(getpid(), t.ktid, buf, cap);
    *ktid = t.ktid;
    xp_send(t.down[1], 'q');
    pthread_join(th, NULL);
    close(t.up[0]), close(t.up[1]), close(t.down[0]), close(t.down[1]);
}

static void test_thread_comm(void)
{
    char buf[65];
    int rc;
    pid_t ktid;
    comm_of_thread("worker-1", buf, sizeof buf, &rc, &ktid);
    CHECK_ERR(rc, 0);
    CHECK_STR_EQ(buf, "worker-1");
    /* The kernel keeps the bytes as given: escapes, a byte that is not UTF-8, a newline inside. */
    comm_of_thread("a\x1b[31m\xff\nb", buf, sizeof buf, &rc, &ktid);
    CHECK_ERR(rc, 0);
    CHECK_STR_EQ(buf, "a\x1b[31m\xff\nb");
    /* 15 bytes at most (TASK_COMM_LEN), cut by the kernel. */
    comm_of_thread("0123456789abcdefghij", buf, sizeof buf, &rc, &ktid);
    CHECK_ERR(rc, 0);
    CHECK_STR_EQ(buf, "0123456789abcde");
    /* A small buffer: cut before a UTF-8 sequence, not inside it ("ab" + U+00E9). */
    comm_of_thread("ab\xc3\xa9", buf, 4, &rc, &ktid);
    CHECK_ERR(rc, 0);
    CHECK_STR_EQ(buf, "ab");
    comm_of_thread("xy", buf, 1, &rc, &ktid);
    CHECK_ERR(rc, 0);
    CHECK_STR_EQ(buf, "");
    /* The thread has ended (joined): its task goes. pthread_join returns once the kernel cleared the
       thread's tid, which it does before it takes the task out of /proc: wait for that, bounded. */
    for (int ms = 0; ms < 2000 && tl_proc_thread_comm(getpid(), ktid, buf, sizeof buf) == 0; ms++)
        usleep(1000);
    CHECK_ERR(tl_proc_thread_comm(getpid(), ktid, buf, sizeof buf), ESRCH);
    CHECK_STR_EQ(buf, "");
    /* ktid 0: the process's comm; pid 0: this process. */
    char self[65], own[65];
    CHECK_ERR(tl_proc_thread_comm(getpid(), 0, self, sizeof self), 0);
    CHECK_ERR(tl_proc_thread_comm(0, 0, own, sizeof own), 0);
    CHECK_STR_EQ(self, own);
    CHECK(strlen(self) > 0 && strlen(self) <= 15 && !strchr(self, '\n'));
    CHECK_ERR(tl_proc_thread_comm(-1, 0, buf, sizeof buf), ESRCH);
    CHECK_ERR(tl_proc_thread_comm(getpid(), 0, buf, 0), EINVAL);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_token_of_self);
    PT_RUN(test_token_with_hostile_command_name);
    PT_RUN(test_thread_comm);
    PT_RUN(test_zombie_and_reaped_are_gone);
    PT_RUN(test_dead_token_is_not_alive);
    PT_RUN(test_boot_id);
    PT_RUN(test_creds_of_self);
    PT_RUN(test_rule);
    PT_RUN(test_may_trace_own_child);
    PT_RUN(test_may_trace_as_other_users);
    return pt_finish();
}
