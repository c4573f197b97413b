/*
 * The traced process's side (libtracelog/xproc/attach.c; design note,
 * sections 3.2, 4 and 6), with a stand-in for the POSIX layer: the control
 * object is made over the event page and keeps the word; a controller's
 * announcement is seen through the event word alone and the buffer it names
 * is checked, mapped and published, and shared with the controller; DETACH
 * and a second announcement let the old buffer go (its pages become zero
 * pages); buffers of the wrong id, size or owner are refused; a spawned
 * program joins the stream TRACELOG_STREAM names, a stale or garbage
 * variable is ignored; a forked child keeps inherited streams only.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc/attach.h"
#include "xproc_helpers.h"

extern char **environ;

#define SECOND 1000000000ull
#define BUF_SIZE (64u << 10)

typedef xp_fake_stream fake_stream;
#define BUF_MAGIC XP_FAKE_MAGIC
#define fake_ops xp_fake_ops

static char self_exe[4096];

/* A controller's buffer: created, headed, mapped. */
typedef struct buffer {
    char name[TL_SHM_NAME_MAX];
    uint64_t id;
    fake_stream *map;
} buffer;

static buffer make_buffer(pid_t for_pid, uint64_t id, uint64_t header_id)
{
    buffer b;
    b.id = id;
    tl_ctl_stream_name(b.name, (uint32_t)geteuid(), (uint32_t)for_pid, id);
    int fd;
    if (tl_shmobj_create(b.name, BUF_SIZE, (uint32_t)geteuid(), (uint32_t)getegid(), &fd))
        TL_DIE("create %s", b.name);
    b.map = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (b.map == MAP_FAILED)
        TL_DIE("map");
    b.map->magic = BUF_MAGIC;
    b.map->id = header_id;
    return b;
}

static void drop_buffer(buffer *b)
{
    munmap(b->map, BUF_SIZE);
    tl_shmobj_unlink(b->name);
}

static void test_attach_detach_replace(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0) {
        close(up[0]), close(down[1]);
        xp_traced_main(up[1], down[0]);
    }
    close(up[1]), close(down[0]);
    if (!CHECK_EQ_INT(xp_recv(up[0], 10000), 'r'))
        goto out;
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(pid, &p), 0))
        goto out;
    CHECK_EQ(atomic_load(&p.ctl->word), 1u << 7);

    buffer b1 = make_buffer(pid, 0x11, 0x11);
    tl_announce a = {TL_CTL_ATTACH, 0, BUF_SIZE, b1.id, {0}};
    memcpy(a.name, b1.name, sizeof a.name);
    int slot = -1, result = -1;
    uint64_t gen;
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    uint64_t t0 = xp_now_ns();
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    printf("attached in %llu us\n", (unsigned long long)((xp_now_ns() - t0) / 1000));
    CHECK_ERR(result, 0);
    /* The traced process wrote into the buffer: we see it in ours. */
    CHECK_EQ(atomic_load(&b1.map->marker), 1000 + (uint64_t)pid);
    CHECK_EQ(atomic_load(&p.ctl->word), (1u << 7) | 1u);

    /* The same slot, another buffer: the first is let go. */
    buffer b2 = make_buffer(pid, 0x22, 0x22);
    a.id = b2.id;
    memcpy(a.name, b2.name, sizeof a.name);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    CHECK_EQ(atomic_load(&b2.map->marker), 1000 + (uint64_t)pid);
    CHECK_EQ(atomic_load(&p.ctl->word), (1u << 7) | 1u); /* handle 0 again: the first was unpublished */
    xp_send(down[1], 'm');
    uint64_t v = 0;
    CHECK(read(up[0], &v, sizeof v) == (ssize_t)sizeof v);
    CHECK_EQ(v, 1000 + (uint64_t)pid);

    /* Refused: a header of another id, an announced size that is not the object's. */
    buffer b3 = make_buffer(pid, 0x33, 0x34);
    a.id = b3.id;
    memcpy(a.name, b3.name, sizeof a.name);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, EINVAL);
    a.id = b2.id;
    a.size = BUF_SIZE * 2;
    memcpy(a.name, b2.name, sizeof a.name);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, ENOTSUP);
    tl_announce gone = a;
    gone.size = BUF_SIZE;
    tl_ctl_stream_name(gone.name, (uint32_t)geteuid(), (uint32_t)pid, 0x99);
    CHECK_ERR(tl_ctl_announce(&p, &gone, &slot, &gen), 0);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, ENOENT);
    CHECK_EQ(atomic_load(&p.ctl->word), (1u << 7) | 1u); /* b2 stays published */

    tl_announce detach = {TL_CTL_DETACH, 0, 0, 0, {0}};
    CHECK_ERR(tl_ctl_announce(&p, &detach, &slot, &gen), 0);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    CHECK_EQ(atomic_load(&p.ctl->word), 1u << 7);
    xp_send(down[1], 'm');
    CHECK(read(up[0], &v, sizeof v) == (ssize_t)sizeof v);
    CHECK_EQ(v, 0); /* nothing mapped in that slot any more */
    tl_ctl_release(&p, slot);
    tl_ctl_close(&p);
    drop_buffer(&b1), drop_buffer(&b2), drop_buffer(&b3);
out:
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    close(up[0]), close(down[1]);
}

/* The spawned program: joins TRACELOG_STREAM, exit status says how it went. */
static int env_child_main(void)
{
    tl_xproc_set_ops(&fake_ops);
    int e = tl_xproc_join_env();
    if (e)
        return e == ENOENT ? 10 : e == EINVAL ? 11 : 12;
    return tl_xproc_local_map(TL_XPROC_ENV_SLOT, NULL, NULL) ? 0 : 13;
}

static int spawn_with_env(char **envp)
{
    pid_t pid;
    char *argv[] = {self_exe, "--env-child", NULL};
    if (posix_spawn(&pid, self_exe, NULL, NULL, argv, envp))
        TL_DIE("posix_spawn");
    return xp_wait(pid);
}

static void test_spawned_program_joins(void)
{
    buffer b = make_buffer(getpid(), 0x5151, 0x5151);
    char **env = tl_xproc_env_with(environ, b.name, b.id);
    if (!CHECK(env))
        return;
    CHECK_EQ_INT(spawn_with_env(env), 0);
    uint64_t m = atomic_load(&b.map->marker);
    CHECK(m > 1000 && (m >> 20) == TL_CTL_FLAG_INHERITED); /* published as inherited, by the spawned program */
    free(env);
    /* A stale variable (the stream is gone) or a garbage one: refused, never fatal. */
    env = tl_xproc_env_with(environ, b.name, b.id + 1);
    CHECK_EQ_INT(spawn_with_env(env), 11); /* the header says another id */
    free(env);
    drop_buffer(&b);
    env = tl_xproc_env_with(environ, b.name, b.id);
    CHECK_EQ_INT(spawn_with_env(env), 10);
    free(env);
    char *garbage[] = {"TRACELOG_STREAM=/etc/passwd:1", NULL};
    CHECK_EQ_INT(spawn_with_env(garbage), 11);
    char *no_id[] = {"TRACELOG_STREAM=/tracelog.0.1.0000000000000001", NULL};
    CHECK_EQ_INT(spawn_with_env(no_id), 11);
    char *empty[] = {"TRACELOG_STREAM=", NULL};
    CHECK_EQ_INT(spawn_with_env(empty), 13); /* nothing to join: fine, nothing joined */
}

static void test_env_with(void)
{
    char *in[] = {"A=1", "TRACELOG_STREAM=/old:1", "B=2", NULL};
    char **out = tl_xproc_env_with(in, "/tracelog.1.2.00000000000000ff", 0xabc);
    if (!CHECK(out))
        return;
    CHECK_STR_EQ(out[0], "A=1");
    CHECK_STR_EQ(out[1], "B=2");
    CHECK_STR_EQ(out[2], "TRACELOG_STREAM=/tracelog.1.2.00000000000000ff:0000000000000abc");
    CHECK(out[3] == NULL);
    free(out);
    out = tl_xproc_env_with(NULL, "/x", 1);
    if (CHECK(out)) {
        CHECK_STR_EQ(out[0], "TRACELOG_STREAM=/x:0000000000000001");
        CHECK(out[1] == NULL);
        free(out);
    }
}

/* A forked child: its own word; an inherited stream stays, another is let go. */
static void test_fork_keeps_inherited_only(void)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    buffer inh = make_buffer(getpid(), 0x71, 0x71);
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        tl_xproc_set_ops(&fake_ops);
        /* Join a buffer as a spawned program would (the env slot is inherited)... */
        char **env = tl_xproc_env_with(NULL, inh.name, inh.id);
        setenv(TL_XPROC_ENV, env[0] + sizeof TL_XPROC_ENV, 1);
        free(env);
        if (tl_xproc_join_env() || tl_xproc_ensure_ctl())
            _exit(2);
        /* ... and one announced without INHERITED, by itself as its own controller. */
        buffer plain = make_buffer(getpid(), 0x72, 0x72);
        tl_ctl_peer p;
        tl_announce a = {TL_CTL_ATTACH, 0, BUF_SIZE, plain.id, {0}};
        memcpy(a.name, plain.name, sizeof a.name);
        int slot = -1;
        uint64_t gen;
        if (tl_ctl_open(getpid(), &p) || tl_ctl_announce(&p, &a, &slot, &gen))
            _exit(5);
        tl_xproc_poll();
        if (!tl_xproc_local_map((unsigned)slot, NULL, NULL) || atomic_load(&tl_xproc_event_page.word) != 3)
            _exit(6);
        pid_t g = fork();
        if (g == 0) {
            fake_stream *f = tl_xproc_local_map(TL_XPROC_ENV_SLOT, NULL, NULL);
            if (!f || f->magic != BUF_MAGIC)
                _exit(3);
            if (tl_xproc_local_map((unsigned)slot, NULL, NULL))
                _exit(4); /* not inherited: let go */
            atomic_store(&tl_xproc_event_page.word, 0x55); /* its own word: the parent's does not change */
            _exit(0);
        }
        int st = xp_wait(g);
        int ok = st == 0 && atomic_load(&tl_xproc_event_page.word) == 3 && atomic_load(&p.ctl->word) == 3 &&
                 atomic_load(&plain.map->marker) != 0;
        drop_buffer(&plain);
        _exit(ok ? 0 : 10 + st);
    }
    CHECK_EQ_INT(xp_wait(pid), 0);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    drop_buffer(&inh);
    close(up[0]), close(up[1]);
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--env-child") == 0)
        return env_child_main();
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0)
        TL_DIE("readlink /proc/self/exe");
    self_exe[n] = '\0';
    pt_watchdog(120);
    PT_RUN(test_attach_detach_replace);
    PT_RUN(test_env_with);
    PT_RUN(test_spawned_program_joins);
    PT_RUN(test_fork_keeps_inherited_only);
    return pt_finish();
}
