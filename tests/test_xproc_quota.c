/*
 * TRACE_SYS_MAX per user (libtracelog/xproc/quota.c; design note, section
 * 8): one table shared by the processes of a user, entries of dead processes
 * taken back, damaged tables replaced, a table squatted by another user
 * reported as unusable (ENOTSUP: the caller falls back to a per-process
 * limit). Each test uses a table name of its own, so that tests running at
 * the same time do not share a limit.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <trace.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc/quota.h"
#include "xproc_helpers.h"

#define ENTRIES 64u

static char table[TL_SHM_NAME_MAX];

static void fresh_table(const char *what)
{
    snprintf(table, sizeof table, "/tracelog-test.%d.%s", (int)getpid(), what);
    tl_shmobj_unlink(table);
}

static void test_name(void)
{
    char n[TL_SHM_NAME_MAX];
    tl_quota_name(n, 1000);
    CHECK_STR_EQ(n, "/tracelog.1000.streams");
}

static void test_limit_in_one_process(void)
{
    fresh_table("one");
    tl_quota q;
    if (!CHECK_ERR(tl_quota_open(table, ENTRIES, &q), 0))
        return;
    uint32_t got[ENTRIES];
    for (uint32_t i = 0; i < ENTRIES; i++)
        CHECK_ERR(tl_quota_acquire(&q, &got[i]), 0);
    uint32_t extra;
    CHECK_ERR(tl_quota_acquire(&q, &extra), EAGAIN);
    CHECK_EQ(tl_quota_in_use(&q), ENTRIES);
    tl_quota_release(&q, got[10]);
    CHECK_EQ(tl_quota_in_use(&q), ENTRIES - 1);
    CHECK_ERR(tl_quota_acquire(&q, &extra), 0);
    CHECK_EQ(extra, got[10]);
    for (uint32_t i = 0; i < ENTRIES; i++)
        tl_quota_release(&q, got[i]);
    CHECK_EQ(tl_quota_in_use(&q), 0);
    tl_quota_release(&q, ENTRIES + 5); /* out of range: ignored */
    char path[80];
    snprintf(path, sizeof path, "/dev/shm%s", table);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600);
    tl_quota_close(&q);
    tl_shmobj_unlink(table);
}

/* Two processes share the limit; a killed holder's entries come back. */
static void test_shared_and_taken_back_from_the_dead(void)
{
    fresh_table("shared");
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        tl_quota q;
        uint32_t e;
        if (tl_quota_open(table, ENTRIES, &q))
            _exit(2);
        for (uint32_t i = 0; i < 40; i++)
            if (tl_quota_acquire(&q, &e))
                _exit(3);
        xp_send(up[1], 'r');
        xp_recv(down[0], 20000);
        _exit(0);
    }
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    tl_quota q;
    if (!CHECK_ERR(tl_quota_open(table, ENTRIES, &q), 0))
        goto out;
    uint32_t e, mine = 0;
    while (tl_quota_acquire(&q, &e) == 0)
        mine++;
    CHECK_EQ(mine, ENTRIES - 40);
    CHECK_EQ(tl_quota_in_use(&q), ENTRIES);
    kill(pid, SIGKILL);
    CHECK_EQ_INT(xp_wait(pid), 128 + SIGKILL);
    pid = 0;
    CHECK_EQ(tl_quota_in_use(&q), ENTRIES - 40);
    uint32_t back = 0;
    while (tl_quota_acquire(&q, &e) == 0)
        back++;
    CHECK_EQ(back, 40);
    tl_quota_close(&q);
out:
    if (pid > 0) {
        kill(pid, SIGKILL);
        xp_wait(pid);
    }
    tl_shmobj_unlink(table);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

/* Processes racing to make the table: one table, every entry handed out once. */
static void test_concurrent_creation(void)
{
    fresh_table("race");
    enum { PROCS = 8, EACH = 8 };
    pid_t pids[PROCS];
    int go[2];
    if (pipe(go))
        TL_DIE("pipe");
    for (int i = 0; i < PROCS; i++) {
        pids[i] = pt_fork(30);
        if (pids[i] == 0) {
            close(go[1]); /* so that the parent's close is an EOF for everyone */
            xp_recv(go[0], 20000);
            tl_quota q;
            uint32_t e;
            if (tl_quota_open(table, ENTRIES, &q))
                _exit(2);
            int n = 0;
            for (int k = 0; k < EACH; k++)
                n += tl_quota_acquire(&q, &e) == 0;
            _exit(n == EACH ? 0 : 3);
        }
    }
    close(go[0]);
    close(go[1]); /* EOF: everyone starts */
    for (int i = 0; i < PROCS; i++)
        CHECK_EQ_INT(xp_wait(pids[i]), 0);
    tl_quota q;
    if (CHECK_ERR(tl_quota_open(table, ENTRIES, &q), 0)) {
        uint32_t e;
        CHECK_EQ(tl_quota_in_use(&q), 0); /* they all exited */
        uint32_t n = 0;
        while (tl_quota_acquire(&q, &e) == 0)
            n++;
        CHECK_EQ(n, ENTRIES);
        tl_quota_close(&q);
    }
    tl_shmobj_unlink(table);
}

static void plant(mode_t mode, size_t size, uint32_t entries)
{
    char path[80];
    snprintf(path, sizeof path, "/dev/shm%s", table);
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || fchmod(fd, mode) || ftruncate(fd, (off_t)size))
        TL_DIE("plant");
    tl_quota_table h = {TL_QUOTA_MAGIC, TL_QUOTA_VERSION, entries, (uint32_t)geteuid(), {0}};
    if (size >= sizeof h && pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
        TL_DIE("plant write");
    close(fd);
}

static void test_damaged_tables_are_replaced(void)
{
    fresh_table("damaged");
    tl_quota q;
    uint32_t e;
    plant(0644, TL_QUOTA_SIZE, ENTRIES);
    if (CHECK_ERR(tl_quota_open(table, ENTRIES, &q), 0)) {
        CHECK_ERR(tl_quota_acquire(&q, &e), 0);
        tl_quota_close(&q);
    }
    plant(0600, 100, ENTRIES);
    if (CHECK_ERR(tl_quota_open(table, ENTRIES, &q), 0))
        tl_quota_close(&q);
    plant(0600, TL_QUOTA_SIZE, 8); /* another TRACE_SYS_MAX */
    if (CHECK_ERR(tl_quota_open(table, ENTRIES, &q), 0)) {
        CHECK_EQ(q.t->entries, ENTRIES);
        tl_quota_close(&q);
    }
    CHECK_ERR(tl_quota_open(table, 0, &q), EINVAL);
    CHECK_ERR(tl_quota_open(table, 100000, &q), EINVAL);
    tl_shmobj_unlink(table);
}

static void test_squatted_by_another_user(void)
{
    if (!xp_can_switch_users()) {
        printf("SKIP test_squatted_by_another_user: needs root to run processes as other users\n");
        return;
    }
    fresh_table("squat");
    char path[80];
    snprintf(path, sizeof path, "/dev/shm%s", table);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || fchown(fd, XP_OTHER_UID, XP_OTHER_UID) || ftruncate(fd, TL_QUOTA_SIZE))
        TL_DIE("squat");
    close(fd);
    pid_t pid = pt_fork(20);
    if (pid == 0) {
        if (xp_become(XP_THIRD_UID, XP_THIRD_UID))
            _exit(100);
        tl_quota q;
        _exit(tl_quota_open(table, ENTRIES, &q) == ENOTSUP ? 0 : 1);
    }
    CHECK_EQ_INT(xp_wait(pid), 0);
    unlink(path);
}

/* ---- through the POSIX calls: posix_trace_create counts in this test's table ---- */

static char posix_table[TL_SHM_NAME_MAX];

/* Creates streams until EAGAIN (at most TRACE_SYS_MAX + 1): how many, and their ids in ids. */
static int create_until_eagain(trace_id_t *ids, int *last_error)
{
    int n = 0, e = 0;
    while (n <= TRACE_SYS_MAX && (e = posix_trace_create(0, NULL, &ids[n])) == 0)
        n++;
    *last_error = e;
    return n;
}

static void shutdown_all(trace_id_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        posix_trace_shutdown(ids[i]);
}

/* A child holding `hold` streams (it shuts `drop` of them down first), until killed. */
static pid_t holder(int hold, int drop, int up)
{
    pid_t pid = pt_fork(60);
    if (pid == 0) {
        trace_id_t ids[TRACE_SYS_MAX];
        for (int i = 0; i < hold; i++)
            if (posix_trace_create(0, NULL, &ids[i]))
                _exit(2);
        shutdown_all(ids, drop);
        xp_send(up, 'r');
        pause();
        _exit(0);
    }
    return pid;
}

/*
 * TRACE_SYS_MAX is shared by the processes of a user: streams another
 * process holds count (EAGAIN sooner), its shutdowns give them back, and
 * a SIGKILLed holder's come back at the next create.
 */
static void test_posix_create_limit_across_processes(void)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t pid = holder(30, 10, up[1]);
    trace_id_t ids[TRACE_SYS_MAX + 1];
    int e = 0, n = 0;
    if (CHECK_EQ_INT(xp_recv(up[0], 20000), 'r')) {
        n = create_until_eagain(ids, &e);
        CHECK_EQ_INT(n, TRACE_SYS_MAX - 20);
        CHECK_ERR(e, EAGAIN);
    }
    kill(pid, SIGKILL);
    CHECK_EQ_INT(xp_wait(pid), 128 + SIGKILL);
    int more = create_until_eagain(ids + n, &e);
    CHECK_EQ_INT(n + more, TRACE_SYS_MAX); /* the dead holder's 20 entries are free again */
    CHECK_ERR(e, EAGAIN);
    shutdown_all(ids, n + more);
    /* Another process now gets all of them. */
    pid = holder(TRACE_SYS_MAX, 0, up[1]);
    CHECK_EQ_INT(xp_recv(up[0], 20000), 'r');
    kill(pid, SIGKILL);
    xp_wait(pid);
    close(up[0]), close(up[1]);
}

/* Entries a program held when it called exec are given back by the new image (it holds no stream). */
static void test_posix_entries_freed_by_exec(void)
{
    pid_t pid = pt_fork(60);
    if (pid == 0) {
        trace_id_t ids[10];
        for (int i = 0; i < 10; i++)
            if (posix_trace_create(0, NULL, &ids[i]))
                _exit(2);
        execl("/proc/self/exe", "test_xproc_quota", "--create-all", (char *)NULL);
        _exit(3);
    }
    CHECK_EQ_INT(xp_wait(pid), 0);
}

/* After exec: all TRACE_SYS_MAX streams, then EAGAIN. Exit status 0 if so. */
static int create_all_main(void)
{
    trace_id_t ids[TRACE_SYS_MAX + 1];
    int e;
    int n = create_until_eagain(ids, &e);
    return n == TRACE_SYS_MAX && e == EAGAIN ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--create-all") == 0)
        return create_all_main();
    /* A table of this run's own, before the first posix_trace_create (which opens it for good). */
    char tag[32];
    snprintf(tag, sizeof tag, "quota-test-%d", (int)getpid());
    setenv("TRACELOG_STREAMS_TABLE", tag, 1);
    tl_quota_name_from_env(posix_table, (uint32_t)geteuid());
    pt_watchdog(120);
    PT_RUN(test_name);
    PT_RUN(test_limit_in_one_process);
    PT_RUN(test_shared_and_taken_back_from_the_dead);
    PT_RUN(test_concurrent_creation);
    PT_RUN(test_damaged_tables_are_replaced);
    PT_RUN(test_squatted_by_another_user);
    PT_RUN(test_posix_create_limit_across_processes);
    PT_RUN(test_posix_entries_freed_by_exec);
    char want[TL_SHM_NAME_MAX];
    snprintf(want, sizeof want, "/tracelog.%u.streams.%s", (unsigned)geteuid(), tag);
    CHECK_STR_EQ(posix_table, want);
    tl_shmobj_unlink(posix_table);
    return pt_finish();
}
