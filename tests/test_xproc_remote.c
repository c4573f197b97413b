/*
 * The controller's side (libtracelog/xproc/remote.c; design note, sections
 * 4 and 7) against a traced process running the real traced-side code with
 * a stand-in POSIX layer: buffers made for another process (name, owner,
 * mode); a buffer outlives a traced process killed with SIGKILL, and the
 * controller learns how it ended; a controller killed with SIGKILL leaves
 * the traced process running, and a second controller attaches; close
 * detaches; ESRCH and ENOTSUP.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "stream/consumer.h"
#include "stream/layout.h"
#include "tracelog/common.h"
#include "xproc/attach.h"
#include "xproc/remote.h"
#include "xproc_helpers.h"

#define SECOND 1000000000ull
#define BUF_SIZE (1u << 20)

typedef struct traced {
    pid_t pid;
    int up, down;
} traced;

static traced start_traced(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    traced t;
    t.pid = pt_fork(60);
    if (t.pid == 0) {
        close(up[0]), close(down[1]);
        xp_traced_main(up[1], down[0]);
    }
    close(up[1]), close(down[0]);
    t.up = up[0];
    t.down = down[1];
    if (xp_recv(t.up, 10000) != 'r')
        TL_DIE("traced process did not start");
    return t;
}

/* The marker of the traced process's current buffer (0: none), or -1 if it does not answer. */
static int64_t read_marker(traced *t)
{
    xp_send(t->down, 'm');
    uint64_t v;
    size_t got = 0;
    uint64_t deadline = xp_now_ns() + 10 * SECOND;
    while (got < sizeof v && xp_now_ns() < deadline) {
        ssize_t n = read(t->up, (char *)&v + got, sizeof v - got);
        if (n <= 0)
            return -1;
        got += (size_t)n;
    }
    return got == sizeof v ? (int64_t)v : -1;
}

static int stop_traced(traced *t)
{
    xp_send(t->down, 'q');
    int st = xp_wait(t->pid);
    close(t->up), close(t->down);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)t->pid);
    return st;
}

static void head(tl_xproc_buffer *b)
{
    xp_fake_stream *f = b->map;
    f->magic = XP_FAKE_MAGIC;
    f->id = b->id;
}

static void test_buffer(void)
{
    tl_xproc_buffer a, b;
    if (!CHECK_ERR(tl_xproc_buffer_create((uint32_t)geteuid(), (uint32_t)getegid(), 42, BUF_SIZE, &a), 0))
        return;
    CHECK_ERR(tl_xproc_buffer_create((uint32_t)geteuid(), (uint32_t)getegid(), 42, BUF_SIZE, &b), 0);
    CHECK(tl_ctl_stream_name_valid(a.name, (uint32_t)geteuid(), 42));
    CHECK(a.id != b.id); /* random ids: never an older buffer's name */
    char path[80];
    snprintf(path, sizeof path, "/dev/shm%s", a.name);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == BUF_SIZE &&
          st.st_uid == geteuid());
    CHECK_EQ(((unsigned char *)a.map)[BUF_SIZE - 1], 0);
    tl_xproc_buffer_destroy(&a);
    tl_xproc_buffer_destroy(&b);
    CHECK(stat(path, &st) != 0);
    tl_xproc_buffer_destroy(&a); /* twice: harmless */
    CHECK_ERR(tl_xproc_buffer_create((uint32_t)geteuid(), (uint32_t)getegid(), 42, 0, &a), ENOMEM);
    CHECK_ERR(tl_xproc_buffer_create((uint32_t)geteuid(), (uint32_t)getegid(), 42, TL_CTL_MAX_STREAM * 2, &a),
              ENOMEM);
}

/* The traced process dies by SIGKILL: what it wrote stays readable to the controller, which learns how it ended. */
static void test_buffer_outlives_killed_process(void)
{
    traced t = start_traced();
    tl_xproc_remote r;
    if (!CHECK_ERR(tl_xproc_remote_open(t.pid, &r), 0)) {
        stop_traced(&t);
        return;
    }
    tl_xproc_buffer b;
    CHECK_ERR(tl_xproc_buffer_create(r.peer.euid, r.peer.egid, (uint32_t)t.pid, BUF_SIZE, &b), 0);
    head(&b);
    CHECK_ERR(tl_xproc_remote_attach(&r, &b, 0), 0);
    int result = -1;
    CHECK_ERR(tl_xproc_remote_wait(&r, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    CHECK_EQ_INT(tl_xproc_remote_ended(&r, 0), 0);
    kill(t.pid, SIGKILL);
    CHECK_EQ_INT(tl_xproc_remote_ended(&r, 5000), 1);
    tl_proc_end end;
    tl_proc_watch_end(&r.watch, &end);
    CHECK_EQ_INT(end.how, TL_END_SIGNALED);
    CHECK_EQ_INT(end.code, SIGKILL);
    CHECK_EQ(atomic_load(&((xp_fake_stream *)b.map)->marker), 1000 + (uint64_t)t.pid);
    tl_xproc_remote_close(&r); /* no DETACH to a dead process: must not fail or hang */
    CHECK_EQ_INT(xp_wait(t.pid), 128 + SIGKILL);
    close(t.up), close(t.down);
    tl_xproc_buffer_destroy(&b);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)t.pid);
}

/* A controller killed with SIGKILL: the traced process goes on; a second controller attaches. */
static void test_controller_killed_then_another(void)
{
    traced t = start_traced();
    int ready[2];
    if (pipe(ready))
        TL_DIE("pipe");
    pid_t first = pt_fork(60);
    if (first == 0) {
        tl_xproc_remote r;
        tl_xproc_buffer b;
        int result = -1;
        if (tl_xproc_remote_open(t.pid, &r) ||
            tl_xproc_buffer_create(r.peer.euid, r.peer.egid, (uint32_t)t.pid, BUF_SIZE, &b))
            _exit(2);
        head(&b);
        if (tl_xproc_remote_attach(&r, &b, 0) || tl_xproc_remote_wait(&r, 10 * SECOND, &result) || result)
            _exit(3);
        xp_send(ready[1], 'r');
        pause();
        _exit(0);
    }
    CHECK_EQ_INT(xp_recv(ready[0], 10000), 'r');
    int64_t m = read_marker(&t);
    CHECK_EQ(m, 1000 + (int64_t)t.pid); /* recording into the first controller's buffer */
    kill(first, SIGKILL);
    CHECK_EQ_INT(xp_wait(first), 128 + SIGKILL);
    CHECK_EQ(read_marker(&t), 1000 + (int64_t)t.pid); /* still running, unharmed */

    tl_xproc_remote r;
    if (CHECK_ERR(tl_xproc_remote_open(t.pid, &r), 0)) {
        tl_xproc_buffer b;
        CHECK_ERR(tl_xproc_buffer_create(r.peer.euid, r.peer.egid, (uint32_t)t.pid, BUF_SIZE, &b), 0);
        head(&b);
        CHECK_ERR(tl_xproc_remote_attach(&r, &b, 0), 0);
        int result = -1;
        CHECK_ERR(tl_xproc_remote_wait(&r, 10 * SECOND, &result), 0);
        CHECK_ERR(result, 0);
        CHECK_EQ(atomic_load(&((xp_fake_stream *)b.map)->marker), 1000 + (uint64_t)t.pid);
        tl_xproc_remote_close(&r); /* DETACH: the traced process lets our buffer go */
        uint64_t deadline = xp_now_ns() + 10 * SECOND;
        int64_t after;
        while ((after = read_marker(&t)) == 1000 + (int64_t)t.pid && xp_now_ns() < deadline)
            usleep(1000);
        CHECK_EQ(after, 0); /* ours is let go */
        tl_ctl_peer peek;
        if (CHECK_ERR(tl_ctl_open(t.pid, &peek), 0)) {
            /* The dead controller's buffer stays published (handle 0), ours is not (handle 1), its own bit 7 kept. */
            CHECK_EQ(atomic_load(&peek.ctl->word), (1u << 7) | 1u);
            tl_ctl_close(&peek);
        }
        tl_xproc_buffer_destroy(&b);
    }
    CHECK_EQ_INT(stop_traced(&t), 0);
    close(ready[0]), close(ready[1]);
}

/*
 * The exec'd image: the library adopted at load what its parent made and
 * announced before the exec (posix/remote.c); its first event goes into
 * the parent's buffer.
 */
static int exec_child_main(int up, int down)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("exec:first", &id))
        return 20;
    uint64_t me = (uint64_t)getpid();
    posix_trace_event(id, &me, sizeof me);
    if (write(up, &id, sizeof id) != (ssize_t)sizeof id)
        return 21;
    xp_recv(down, 20000);
    return 0;
}

static char self_exe[4096];

/* fork, exec, and trace the child at once, as the standard's examples do. */
static void test_trace_child_from_before_exec(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        if (xp_recv(down[0], 20000) != 'e')
            _exit(3);
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", up[1]);
        snprintf(b, sizeof b, "%d", down[0]);
        execl(self_exe, self_exe, "--exec-child", a, b, (char *)NULL);
        _exit(4);
    }
    tl_xproc_remote r;
    if (CHECK_ERR(tl_xproc_remote_open(pid, &r), 0)) { /* made for it: it has not run anything yet */
        tl_stream_params p = {.policy = TRACELOG_POLICY_LOOP, .stream_size = 1u << 16, .max_data = 64,
                              .max_sys_data = 64, .nlanes = 2, .markers = {4, 5, 3, 2}};
        tl_xproc_buffer b;
        CHECK_ERR(tl_xproc_buffer_create(r.peer.euid, r.peer.egid, (uint32_t)pid, tl_stream_bytes(&p), &b), 0);
        tl_stream *s = tl_stream_create_in(b.map, b.size, &p);
        tl_stream_start(s, NULL);
        CHECK_ERR(tl_xproc_remote_attach(&r, &b, 0), 0);
        xp_send(down[1], 'e');
        trace_event_id_t id = 0;
        CHECK(read(up[0], &id, sizeof id) == (ssize_t)sizeof id);
        int result = -1;
        CHECK_ERR(tl_xproc_remote_wait(&r, 10 * SECOND, &result), 0);
        CHECK_ERR(result, 0);
        tl_consumer *c = NULL;
        CHECK_ERR(!(c = tl_consumer_new(s)), 0);
        tracelog_event ev;
        int found = 0;
        while (tl_consumer_take_wait(c, &ev) == TL_TAKE_EVENT)
            if (ev.event_id == id && ev.payload_len == 8) {
                uint64_t v;
                memcpy(&v, ev.payload, 8);
                found += v == (uint64_t)pid && ev.pid == (uint32_t)pid;
            }
        CHECK_EQ_INT(found, 1); /* its first event, recorded into our buffer */
        tl_consumer_free(c);
        xp_send(down[1], 'q');
        CHECK_EQ_INT(xp_wait(pid), 0);
        tl_xproc_remote_close(&r);
        tl_xproc_buffer_destroy(&b);
    } else {
        kill(pid, SIGKILL);
        xp_wait(pid);
    }
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

/* A child that never runs libtracelog: never acts on it, and its object goes when it ends. */
static void test_child_without_libtracelog(void)
{
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        execl("/bin/sleep", "sleep", "0.3", (char *)NULL);
        _exit(4);
    }
    tl_xproc_remote r;
    if (!CHECK_ERR(tl_xproc_remote_open(pid, &r), 0)) {
        xp_wait(pid);
        return;
    }
    tl_xproc_buffer b;
    CHECK_ERR(tl_xproc_buffer_create(r.peer.euid, r.peer.egid, (uint32_t)pid, BUF_SIZE, &b), 0);
    head(&b);
    CHECK_ERR(tl_xproc_remote_attach(&r, &b, 0), 0);
    int result;
    CHECK_ERR(tl_xproc_remote_wait(&r, SECOND / 20, &result), ETIMEDOUT);
    CHECK_EQ_INT(tl_xproc_remote_ended(&r, 5000), 1);
    tl_xproc_remote_close(&r);
    char path[80];
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)pid);
    CHECK(access(path, F_OK) != 0); /* removed: it could not do it itself */
    CHECK_EQ_INT(xp_wait(pid), 0);
    tl_xproc_buffer_destroy(&b);
}

static void test_open_errors(void)
{
    int down[2];
    if (pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        xp_recv(down[0], 20000);
        _exit(0);
    }
    tl_xproc_remote r;
    CHECK_ERR(tl_xproc_remote_open(pid, &r), 0); /* our child: made for it */
    tl_xproc_remote_close(&r);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    /* Not our child (a grandchild) and no object: ENOTSUP, at once. */
    int up[2], down2[2]; /* a pipe of their own: the first child reads `down` too and could take their 'q' */
    if (pipe(up) || pipe(down2))
        TL_DIE("pipe");
    pid_t mid = pt_fork(30);
    if (mid == 0) {
        pid_t g = fork();
        if (g == 0) {
            xp_recv(down2[0], 20000);
            _exit(0);
        }
        if (write(up[1], &g, sizeof g) != (ssize_t)sizeof g)
            _exit(2);
        xp_recv(down2[0], 20000);
        waitpid(g, NULL, 0);
        _exit(0);
    }
    pid_t g;
    if (read(up[0], &g, sizeof g) != (ssize_t)sizeof g)
        TL_DIE("read");
    uint64_t t0 = xp_now_ns();
    CHECK_ERR(tl_xproc_remote_open(g, &r), ENOTSUP);
    CHECK(xp_now_ns() - t0 < SECOND / 10);
    xp_send(down2[1], 'q');
    xp_send(down2[1], 'q');
    CHECK_EQ_INT(xp_wait(mid), 0);
    close(down2[0]), close(down2[1]);
    close(up[0]), close(up[1]);
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    CHECK_ERR(tl_xproc_remote_open(pid, &r), ESRCH);
    close(down[0]), close(down[1]);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--exec-child") == 0)
        return exec_child_main(atoi(argv[2]), atoi(argv[3]));
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0)
        TL_DIE("readlink /proc/self/exe");
    self_exe[n] = '\0';
    pt_watchdog(120);
    PT_RUN(test_buffer);
    PT_RUN(test_buffer_outlives_killed_process);
    PT_RUN(test_controller_killed_then_another);
    PT_RUN(test_trace_child_from_before_exec);
    PT_RUN(test_child_without_libtracelog);
    PT_RUN(test_open_errors);
    return pt_finish();
}
