/*
 * The control object and the announcement protocol (libtracelog/xproc/ctl.c,
 * announce.c; design note docs/design/cross-process.md, sections 3 and 4),
 * with a traced process and controllers in separate processes: creation
 * (mode 0600 whatever the umask), the overlay of the event word, ENOTSUP for
 * a process without an object and for stale, damaged or squatted objects,
 * ESRCH, EPERM, fork, exec, torn announcements, invalid ones, slot
 * exhaustion and the takeover of a dead controller's slot, and acks.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "stream/layout.h"
#include "tracelog/common.h"
#include "xproc/ctl.h"
#include "xproc/remote.h"
#include "xproc_helpers.h"

#define SECOND 1000000000ull
#define ID_REFUSED 666u /* the traced side's handler answers ENOENT for this stream id */

/* The page the event word overlays, as the library's own will be. */
static union {
    _Atomic uint64_t word;
    char bytes[TL_CTL_SIZE];
} event_page __attribute__((aligned(TL_CTL_SIZE)));

static char self_exe[4096];

/* What a traced child tells its parent about each announcement it handled. */
typedef struct report {
    unsigned slot;
    tl_announce a;
} report;

typedef struct traced_ctx {
    int up;
    unsigned calls;
    unsigned torn; /* announcements whose fields do not belong together */
} traced_ctx;

static int on_announce(void *ctx, unsigned slot, const tl_announce *a)
{
    traced_ctx *t = ctx;
    t->calls++;
    /* The controllers of these tests make size and name from the id. */
    char want[TL_SHM_NAME_MAX];
    tl_ctl_stream_name(want, (uint32_t)geteuid(), (uint32_t)getpid(), a->id);
    if (a->op == TL_CTL_ATTACH && (a->size != (a->id + 1) * 4096 || strcmp(want, a->name) != 0))
        t->torn++;
    report r = {slot, *a};
    if (t->up >= 0 && write(t->up, &r, sizeof r) != (ssize_t)sizeof r)
        t->torn++;
    return a->id == ID_REFUSED ? ENOENT : 0;
}

/*
 * The traced process of most tests: makes its object (over event_page), says
 * 'r', then acts on announcements, seen through its event word only, until
 * its parent closes `down` or sends 'q' (busy: without pausing between looks). Exit status: 0, or 1 if it saw a
 * torn announcement, 2 if the object could not be made.
 */
static void traced_main(int up, int down, uint64_t word, int busy)
{
    tl_ctl *c;
    umask(0277); /* the object must still be 0600 */
    if (tl_ctl_create(event_page.bytes, word, &c) || (void *)c != event_page.bytes)
        _exit(2);
    traced_ctx t = {up, 0, 0};
    uint64_t seen[TL_CTL_SLOTS] = {0};
    xp_send(up, 'r');
    for (;;) {
        int cmd = xp_recv(down, busy ? 0 : 1);
        if (cmd == 'q')
            break;
        if (atomic_load_explicit(&event_page.word, memory_order_relaxed) & TL_CTL_PENDING)
            tl_ctl_poll(c, seen, on_announce, &t);
        if (cmd == -1 && fcntl(down, F_GETFD) < 0)
            break;
    }
    tl_ctl_unlink_own(c);
    _exit(t.torn ? 1 : 0);
}

typedef struct child {
    pid_t pid;
    int up, down; /* our ends */
} child;

static child start_traced(uint64_t word, int busy)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    child ch;
    ch.pid = pt_fork(60);
    if (ch.pid == 0) {
        close(up[0]);
        close(down[1]);
        traced_main(up[1], down[0], word, busy);
    }
    close(up[1]);
    close(down[0]);
    ch.up = up[0];
    ch.down = down[1];
    if (xp_recv(ch.up, 10000) != 'r')
        TL_DIE("traced child did not start");
    return ch;
}

static int stop_traced(child *ch)
{
    xp_send(ch->down, 'q');
    int st = xp_wait(ch->pid);
    close(ch->up);
    close(ch->down);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)ch->pid);
    return st;
}

/* One report from the traced child, within 10 s. */
static int read_report(child *ch, report *r)
{
    char *p = (char *)r;
    size_t n = 0;
    uint64_t deadline = xp_now_ns() + 10 * SECOND;
    while (n < sizeof *r && xp_now_ns() < deadline) {
        ssize_t k = read(ch->up, p + n, sizeof *r - n);
        if (k <= 0)
            break;
        n += (size_t)k;
    }
    return n == sizeof *r;
}

static tl_announce attach_of(pid_t pid, uint64_t id)
{
    tl_announce a = {TL_CTL_ATTACH, 0, (id + 1) * 4096, id, {0}};
    tl_ctl_stream_name(a.name, (uint32_t)geteuid(), (uint32_t)pid, id);
    return a;
}

static void test_names(void)
{
    char n[TL_SHM_NAME_MAX];
    tl_ctl_name(n, 1000, 42);
    CHECK_STR_EQ(n, "/tracelog.1000.42");
    tl_ctl_stream_name(n, 1000, 42, 0xabcdefull);
    CHECK_STR_EQ(n, "/tracelog.1000.42.0000000000abcdef");
    CHECK(tl_ctl_stream_name_valid(n, 1000, 42));
    CHECK(!tl_ctl_stream_name_valid(n, 1000, 4));
    CHECK(!tl_ctl_stream_name_valid(n, 100, 42));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.42", 1000, 42));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.42.0000000000ABCDEF", 1000, 42));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.42.0000000000abcdef0", 1000, 42));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.42.000000000/abcdef", 1000, 42));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.42.../../../etc/x", 1000, 42));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.420000000000abcdef", 1000, 42));
    CHECK(!tl_ctl_stream_name_valid("", 1000, 42));
    /* pid 0: a stream of any process of the user (TRACELOG_STREAM names its creator's target). */
    CHECK(tl_ctl_stream_name_valid("/tracelog.1000.42.0000000000abcdef", 1000, 0));
    CHECK(tl_ctl_stream_name_valid("/tracelog.1000.7.0000000000abcdef", 1000, 0));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.0000000000abcdef", 1000, 0));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.4x.0000000000abcdef", 1000, 0));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1001.42.0000000000abcdef", 1000, 0));
    CHECK(!tl_ctl_stream_name_valid("/tracelog.1000.042.0000000000abcdef", 1000, 42));
}

static void test_create_open_announce(void)
{
    child ch = start_traced(5, 0);
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)ch.pid);
    struct stat st;
    CHECK(stat(path, &st) == 0);
    CHECK_EQ(st.st_mode & 07777, 0600); /* despite umask 0277 */
    CHECK_EQ(st.st_size, TL_CTL_SIZE);

    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(ch.pid, &p), 0)) {
        stop_traced(&ch);
        return;
    }
    CHECK_EQ(p.ctl->pid, (uint32_t)ch.pid);
    CHECK_EQ(p.euid, geteuid());
    CHECK_EQ(atomic_load(&p.ctl->word), 5); /* the child's event word, shared */

    int slot = -1;
    uint64_t gen;
    tl_announce a = attach_of(ch.pid, 7);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    CHECK(slot >= 0 && slot < (int)TL_CTL_SLOTS);
    int result = -1;
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    report r;
    if (CHECK(read_report(&ch, &r))) {
        CHECK_EQ(r.slot, (unsigned)slot);
        CHECK_EQ(r.a.op, TL_CTL_ATTACH);
        CHECK_EQ(r.a.id, 7);
        CHECK_EQ(r.a.size, 8 * 4096);
        CHECK_STR_EQ(r.a.name, a.name);
    }
    CHECK_EQ(atomic_load(&p.ctl->word), 5); /* pending cleared, its own bits kept */

    /* The same slot again: the handler's answer reaches the controller. */
    int again = slot;
    a = attach_of(ch.pid, ID_REFUSED);
    CHECK_ERR(tl_ctl_announce(&p, &a, &again, &gen), 0);
    CHECK_EQ_INT(again, slot);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, ENOENT);
    CHECK(read_report(&ch, &r));

    tl_announce detach = {TL_CTL_DETACH, 0, 0, 0, {0}};
    CHECK_ERR(tl_ctl_announce(&p, &detach, &again, &gen), 0);
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    tl_ctl_release(&p, slot);
    CHECK_EQ(atomic_load(&p.ctl->slots[slot].owner), 0);
    tl_ctl_close(&p);
    CHECK_EQ_INT(stop_traced(&ch), 0);
    CHECK(stat(path, &st) != 0); /* removed by its process */
}

/* A process without libtracelog, or gone: a quick, documented answer. */
static void test_open_without_object_and_gone(void)
{
    int down[2];
    if (pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        xp_recv(down[0], 20000);
        _exit(0);
    }
    tl_ctl_peer p;
    uint64_t t0 = xp_now_ns();
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP);
    uint64_t took = xp_now_ns() - t0;
    CHECK_MSG(took < SECOND / 10, "ENOTSUP took %llu us", (unsigned long long)(took / 1000));
    printf("ENOTSUP for a process without libtracelog in %llu us\n", (unsigned long long)(took / 1000));
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    CHECK_ERR(tl_ctl_open(pid, &p), ESRCH);
    close(down[0]), close(down[1]);
}

/* Writes an object at the control name of pid with the given header (test of validation). */
static void plant(pid_t pid, mode_t mode, size_t size, uint32_t magic, uint64_t start_delta)
{
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)pid);
    unlink(path);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || fchmod(fd, mode) || ftruncate(fd, (off_t)size))
        TL_DIE("plant %s", path);
    if (size >= sizeof(tl_ctl)) {
        tl_ctl *c = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        tl_proc_token t;
        if (c == MAP_FAILED || tl_proc_token_of(pid, &t))
            TL_DIE("plant map");
        c->version = TL_CTL_VERSION;
        c->nslots = TL_CTL_SLOTS;
        c->size = TL_CTL_SIZE;
        c->pid = t.pid;
        c->start = t.start + start_delta;
        tl_proc_boot_id(c->boot_id);
        c->euid = (uint32_t)geteuid();
        atomic_store(&c->magic, magic);
        munmap(c, size);
    }
    close(fd);
}

/* Objects that are not this process's are refused; the process replaces them with its own. */
static void test_stale_and_damaged_objects(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        close(up[0]), close(down[1]);
        if (xp_recv(down[0], 20000) != 'g')
            _exit(3);
        traced_main(up[1], down[0], 0, 0);
    }
    close(up[1]), close(down[0]);
    tl_ctl_peer p;
    plant(pid, 0600, TL_CTL_SIZE, TL_CTL_MAGIC, 0);
    CHECK_ERR(tl_ctl_open(pid, &p), 0); /* the control: a right header is accepted */
    tl_ctl_close(&p);
    plant(pid, 0600, TL_CTL_SIZE, TL_CTL_MAGIC, 1); /* a dead process with our pid */
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP); /* left for the process to replace (or a sweep) */
    plant(pid, 0644, TL_CTL_SIZE, TL_CTL_MAGIC, 0);
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP);
    plant(pid, 0600, 2 * TL_CTL_SIZE, TL_CTL_MAGIC, 0);
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP);
    plant(pid, 0600, 16, TL_CTL_MAGIC, 0);
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP);
    plant(pid, 0600, TL_CTL_SIZE, 0, 0); /* not finished by its creator */
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP);
    char path[128], target[128];
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)pid);
    snprintf(target, sizeof target, "/dev/shm/tracelog-test-target.%d", (int)getpid());
    unlink(path);
    plant(pid, 0600, TL_CTL_SIZE, TL_CTL_MAGIC, 0);
    if (rename(path, target) || symlink(target, path))
        TL_DIE("symlink");
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP); /* a symbolic link is never followed */
    unlink(path);
    unlink(target);
    if (mkfifo(path, 0600))
        TL_DIE("mkfifo");
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP); /* and a FIFO neither blocks nor passes */
    unlink(path);

    plant(pid, 0600, TL_CTL_SIZE, TL_CTL_MAGIC, 1); /* stale again: the process replaces it */
    xp_send(down[1], 'g');
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    if (CHECK_ERR(tl_ctl_open(pid, &p), 0))
        tl_ctl_close(&p);
    child ch = {pid, up[0], down[1]};
    CHECK_EQ_INT(stop_traced(&ch), 0);
}

/* A forked child's event word is its own, a copy of its parent's. */
static void test_fork_privatizes_the_word(void)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        tl_ctl *c;
        if (tl_ctl_create(event_page.bytes, 5 | TL_CTL_PENDING, &c))
            _exit(2);
        pid_t g = fork();
        if (g == 0) {
            if (tl_ctl_privatize(event_page.bytes))
                _exit(3);
            if (atomic_load(&event_page.word) != 5) /* a copy, pending bit dropped */
                _exit(4);
            atomic_store(&event_page.word, 77);
            _exit(0);
        }
        int st = xp_wait(g);
        int ok = st == 0 && atomic_load(&event_page.word) == (5 | TL_CTL_PENDING) &&
                 atomic_load(&c->word) == (5 | TL_CTL_PENDING);
        tl_ctl_unlink_own(c);
        _exit(ok ? 0 : 10 + st);
    }
    CHECK_EQ_INT(xp_wait(pid), 0);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    close(up[0]), close(up[1]);
}

/* exec keeps the pid and the start time: the new image adopts the object and its announcements. */
/*
 * The exec'd image: the library adopted the object at load and acted on the
 * announcement made before the exec (posix/remote.c); the parent reads the
 * answer from the slot. This image only waits to be told to go.
 */
static void exec_child_main(int up, int down)
{
    (void)up;
    xp_recv(down, 20000);
    _exit(0);
}

static void test_exec_adopts_the_object(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        tl_ctl *c;
        if (tl_ctl_create(NULL, 0, &c))
            _exit(2);
        xp_send(up[1], 'r');
        if (xp_recv(down[0], 20000) != 'e')
            _exit(3);
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", up[1]);
        snprintf(b, sizeof b, "%d", down[0]);
        execl(self_exe, self_exe, "--exec-child", a, b, (char *)NULL);
        _exit(4);
    }
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(pid, &p), 0)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        return;
    }
    int slot = -1;
    uint64_t gen;
    /* A real stream buffer, so that the library in the new image accepts it. */
    tl_stream_params sp = {.policy = TRACELOG_POLICY_LOOP, .stream_size = 1u << 16, .max_data = 64,
                           .max_sys_data = 64, .nlanes = 2, .markers = {4, 5, 3, 2}};
    tl_xproc_buffer buf;
    CHECK_ERR(tl_xproc_buffer_create((uint32_t)geteuid(), (uint32_t)getegid(), (uint32_t)pid, tl_stream_bytes(&sp),
                                     &buf), 0);
    tl_stream_create_in(buf.map, buf.size, &sp);
    tl_announce a = {TL_CTL_ATTACH, 0, buf.size, buf.id, {0}};
    memcpy(a.name, buf.name, sizeof a.name);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    xp_send(down[1], 'e');
    int result = -1;
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    tl_ctl_close(&p);
    CHECK_ERR(tl_ctl_open(pid, &p), 0); /* still valid for the new image */
    tl_ctl_close(&p);
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    tl_xproc_buffer_destroy(&buf);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

/* Announcements made while the traced process reads them: never a torn one. */
static void test_concurrent_announcements(void)
{
    child ch = start_traced(0, 1); /* polls without pause: reads overlap writes */
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(ch.pid, &p), 0)) {
        stop_traced(&ch);
        return;
    }
    int slot = -1;
    uint64_t gen = 0;
    unsigned n = PT_SANITIZED ? 2000 : 5000;
    fcntl(ch.up, F_SETPIPE_SZ, 1 << 20); /* room for a report per announcement: the child never blocks */
    for (unsigned i = 0; i < n; i++) {
        tl_announce a = attach_of(ch.pid, i);
        if (!CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0))
            break;
    }
    int result = -1;
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    /* The last one is the one acted on last. */
    report r, last = {0, {0, 0, 0, 0, {0}}};
    int reports = 0;
    int fl = fcntl(ch.up, F_GETFL);
    fcntl(ch.up, F_SETFL, fl | O_NONBLOCK);
    while (read(ch.up, &r, sizeof r) == (ssize_t)sizeof r) {
        last = r;
        reports++;
    }
    fcntl(ch.up, F_SETFL, fl);
    CHECK(reports >= 1 && reports <= (int)n);
    CHECK_EQ(last.a.id, n - 1);
    printf("%u announcements, %d acted on (the others were superseded before the traced process looked)\n", n,
           reports);
    tl_ctl_close(&p);
    CHECK_EQ_INT(stop_traced(&ch), 0); /* 1 would mean a torn announcement was acted on */
}

/* A slot caught mid-write (odd generation) is skipped, and read once its writer is done. */
static void test_poll_skips_slot_mid_write(void)
{
    tl_ctl *c;
    if (!CHECK_ERR(tl_ctl_create(NULL, 0, &c), 0))
        return;
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(getpid(), &p), 0)) { /* a process may be its own controller */
        tl_ctl_unlink_own(c);
        return;
    }
    traced_ctx t = {-1, 0, 0};
    uint64_t seen[TL_CTL_SLOTS] = {0};
    int slot = -1;
    uint64_t gen;
    tl_announce a = attach_of(getpid(), 1);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    CHECK(atomic_load(&c->word) & TL_CTL_PENDING);
    CHECK_EQ(tl_ctl_poll(c, seen, on_announce, &t), 1);
    CHECK_EQ(t.calls, 1);
    CHECK_EQ(atomic_load(&c->slots[slot].acked), gen);

    /* A controller half-way through its next announcement. */
    tl_ctl_slot *s = &p.ctl->slots[slot];
    atomic_store(&s->gen, gen + 1);
    s->size = 12345;
    atomic_fetch_or(&p.ctl->word, TL_CTL_PENDING);
    CHECK_EQ(tl_ctl_poll(c, seen, on_announce, &t), 0);
    CHECK_EQ(t.calls, 1);
    CHECK_EQ(atomic_load(&c->slots[slot].acked), gen);
    CHECK(!(atomic_load(&c->word) & TL_CTL_PENDING)); /* the writer sets it again when done */
    /* Done: */
    tl_announce b = attach_of(getpid(), 2);
    s->size = b.size;
    s->id = b.id;
    memcpy(s->name, b.name, sizeof s->name);
    atomic_store(&s->gen, gen + 2);
    atomic_fetch_or(&p.ctl->word, TL_CTL_PENDING);
    CHECK_EQ(tl_ctl_poll(c, seen, on_announce, &t), 1);
    CHECK_EQ(t.calls, 2);
    CHECK_EQ(t.torn, 0);
    CHECK_EQ(atomic_load(&c->slots[slot].acked), gen + 2);
    /* Nothing new: nothing done. */
    CHECK_EQ(tl_ctl_poll(c, seen, on_announce, &t), 0);
    tl_ctl_close(&p);
    tl_ctl_unlink_own(c);
    munmap(c, TL_CTL_SIZE);
}

/* Announcements a traced process must refuse, whoever wrote them. */
static void test_invalid_announcements(void)
{
    child ch = start_traced(0, 0);
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(ch.pid, &p), 0)) {
        stop_traced(&ch);
        return;
    }
    tl_announce bad[7];
    for (int i = 0; i < 7; i++)
        bad[i] = attach_of(ch.pid, 1);
    tl_ctl_stream_name(bad[0].name, (uint32_t)geteuid(), (uint32_t)ch.pid + 1, 1); /* another pid's */
    bad[1].size = 0;
    bad[2].size = TL_CTL_MAX_STREAM + 4096;
    bad[3].op = 9;
    bad[4].flags = 0x80;
    memset(bad[5].name, 'a', sizeof bad[5].name); /* no NUL: cut, then not a stream name */
    snprintf(bad[6].name, sizeof bad[6].name, "/tracelog.%u.%d.../../x", (unsigned)geteuid(), (int)ch.pid);
    int slot = -1;
    for (int i = 0; i < 7; i++) {
        uint64_t gen;
        int result = -1;
        tl_test_context("bad announcement %d", i);
        CHECK_ERR(tl_ctl_announce(&p, &bad[i], &slot, &gen), 0);
        CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
        CHECK_ERR(result, EINVAL);
    }
    tl_test_context(NULL);
    /* The handler was never called: nothing came through the pipe. */
    int fl = fcntl(ch.up, F_GETFL);
    fcntl(ch.up, F_SETFL, fl | O_NONBLOCK);
    report r;
    CHECK(read(ch.up, &r, sizeof r) < 0);
    fcntl(ch.up, F_SETFL, fl);
    tl_ctl_close(&p);
    CHECK_EQ_INT(stop_traced(&ch), 0);
}

/* A controller in its own process: opens pid, creates its stream's name, announces, says 'r', waits. */
static pid_t start_controller(pid_t traced, uint64_t id, int *ready_r)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0) {
        tl_ctl_peer p;
        if (tl_ctl_open(traced, &p))
            _exit(2);
        tl_announce a = attach_of(traced, id);
        int fd;
        if (tl_shmobj_create(a.name, 4096, (uint32_t)geteuid(), (uint32_t)getegid(), &fd))
            _exit(3);
        close(fd);
        int slot = -1;
        uint64_t gen;
        int e = tl_ctl_announce(&p, &a, &slot, &gen);
        xp_send(up[1], e == 0 ? 'r' : e == EAGAIN ? 'a' : 'x');
        pause();
        _exit(0);
    }
    close(up[1]);
    *ready_r = up[0];
    return pid;
}

static void test_slots_full_then_dead_controller_taken_over(void)
{
    child ch = start_traced(0, 0);
    pid_t ctl[TL_CTL_SLOTS];
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++) {
        int r;
        ctl[i] = start_controller(ch.pid, 100 + i, &r);
        CHECK_EQ_INT(xp_recv(r, 10000), 'r');
        close(r);
    }
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(ch.pid, &p), 0))
        goto out;
    int slot = -1;
    uint64_t gen;
    tl_announce a = attach_of(ch.pid, 200);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), EAGAIN);

    kill(ctl[3], SIGKILL);
    CHECK_EQ_INT(xp_wait(ctl[3]), 128 + SIGKILL);
    ctl[3] = 0;
    tl_announce dead = attach_of(ch.pid, 103);
    char dead_path[128];
    snprintf(dead_path, sizeof dead_path, "/dev/shm%s", dead.name);
    CHECK(access(dead_path, F_OK) == 0);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    CHECK(access(dead_path, F_OK) != 0); /* the dead controller's stream name went with its slot */
    int result = -1;
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    tl_ctl_close(&p);
out:
    for (unsigned i = 0; i < TL_CTL_SLOTS; i++)
        if (ctl[i] > 0) {
            kill(ctl[i], SIGTERM);
            xp_wait(ctl[i]);
        }
    CHECK_EQ_INT(stop_traced(&ch), 0);
}

static void test_wait_ack_timeout_and_death(void)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        tl_ctl *c;
        if (tl_ctl_create(NULL, 0, &c))
            _exit(2);
        xp_send(up[1], 'r');
        pause(); /* never makes another trace call */
        _exit(0);
    }
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    tl_ctl_peer p;
    if (!CHECK_ERR(tl_ctl_open(pid, &p), 0)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        return;
    }
    int slot = -1, result;
    uint64_t gen;
    tl_announce a = attach_of(pid, 1);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
    uint64_t t0 = xp_now_ns();
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, SECOND / 20, &result), ETIMEDOUT);
    uint64_t took = xp_now_ns() - t0;
    CHECK(took >= SECOND / 20 && took < SECOND);
    kill(pid, SIGKILL);
    t0 = xp_now_ns();
    CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 20 * SECOND, &result), ESRCH);
    CHECK((xp_now_ns() - t0) < 2 * SECOND);
    CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), ESRCH);
    CHECK_EQ_INT(xp_wait(pid), 128 + SIGKILL);
    tl_ctl_close(&p);
    CHECK_ERR(tl_ctl_open(pid, &p), ESRCH);
    xp_remove_objects((uint32_t)geteuid(), (uint32_t)pid);
    close(up[0]), close(up[1]);
}

/* As other users (root only): EPERM across users, root may trace anyone, squatted names. */
static void test_other_users(void)
{
    if (!xp_can_switch_users()) {
        printf("SKIP test_other_users: needs root to run processes as other users\n");
        return;
    }
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(30);
    if (pid == 0) {
        close(up[0]), close(down[1]);
        if (xp_become(XP_OTHER_UID, XP_OTHER_UID))
            _exit(5);
        traced_main(up[1], down[0], 0, 0);
    }
    close(up[1]), close(down[0]);
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    tl_ctl_peer p;
    if (CHECK_ERR(tl_ctl_open(pid, &p), 0)) { /* root: CAP_SYS_PTRACE */
        CHECK_EQ(p.euid, XP_OTHER_UID);
        int slot = -1, result = -1;
        uint64_t gen;
        tl_announce a = {TL_CTL_ATTACH, 0, 2 * 4096, 1, {0}};
        tl_ctl_stream_name(a.name, XP_OTHER_UID, (uint32_t)pid, 1);
        CHECK_ERR(tl_ctl_announce(&p, &a, &slot, &gen), 0);
        CHECK_ERR(tl_ctl_wait_ack(&p, slot, gen, 10 * SECOND, &result), 0);
        CHECK_ERR(result, 0);
        tl_ctl_close(&p);
    }
    pid_t other = pt_fork(20);
    if (other == 0) {
        if (xp_become(XP_THIRD_UID, XP_THIRD_UID))
            _exit(100);
        _exit(tl_ctl_open(pid, &p) == EPERM ? 0 : 1);
    }
    CHECK_EQ_INT(xp_wait(other), 0);
    child ch = {pid, up[0], down[1]};
    xp_send(ch.down, 'q');
    CHECK_EQ_INT(xp_wait(ch.pid), 0);
    close(ch.up), close(ch.down);
    xp_remove_objects(XP_OTHER_UID, (uint32_t)pid);

    /* A name squatted by another user: the process cannot make its object,
       and a controller refuses the squatter's. */
    int go[2], res[2];
    if (pipe(go) || pipe(res))
        TL_DIE("pipe");
    pid = pt_fork(30);
    if (pid == 0) {
        if (xp_become(XP_THIRD_UID, XP_THIRD_UID))
            _exit(100);
        xp_recv(go[0], 20000);
        tl_ctl *c;
        int e = tl_ctl_create(NULL, 0, &c);
        xp_send(res[1], e == EEXIST ? 'x' : 'y');
        xp_recv(go[0], 20000);
        _exit(0);
    }
    char path[128];
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", XP_THIRD_UID, (int)pid);
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || fchown(fd, XP_OTHER_UID, XP_OTHER_UID) || ftruncate(fd, TL_CTL_SIZE))
        TL_DIE("squat");
    close(fd);
    xp_send(go[1], 'g');
    CHECK_EQ_INT(xp_recv(res[0], 10000), 'x');
    CHECK_ERR(tl_ctl_open(pid, &p), ENOTSUP);
    xp_send(go[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 0);
    unlink(path);
    close(go[0]), close(go[1]), close(res[0]), close(res[1]);
}

/* Objects left by processes that died (killed, or _exit without destructors) are swept; live ones stay. */
static void test_sweep(void)
{
    pid_t dead[3];
    for (int i = 0; i < 3; i++) {
        dead[i] = pt_fork(20);
        if (dead[i] == 0) {
            tl_ctl *c;
            _exit(tl_ctl_create(NULL, 0, &c) ? 1 : 0); /* _exit: no destructor removes it */
        }
        CHECK_EQ_INT(xp_wait(dead[i]), 0);
    }
    /* A process that died between creating its object and sizing it leaves an empty one. */
    pid_t cut = pt_fork(20);
    if (cut == 0)
        _exit(0);
    CHECK_EQ_INT(xp_wait(cut), 0);
    char cut_path[128];
    snprintf(cut_path, sizeof cut_path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)cut);
    int cut_fd = open(cut_path, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    CHECK(cut_fd >= 0);
    close(cut_fd);
    child live = start_traced(0, 0);
    char stream[TL_SHM_NAME_MAX], path[128];
    tl_ctl_stream_name(stream, (uint32_t)geteuid(), (uint32_t)dead[0], 0x5eed);
    int fd;
    if (tl_shmobj_create(stream, 4096, (uint32_t)geteuid(), (uint32_t)getegid(), &fd) == 0)
        close(fd);
    tl_ctl_sweep(100000); /* other tests' processes may sweep some of them first */
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)dead[i]);
        CHECK(access(path, F_OK) != 0);
    }
    snprintf(path, sizeof path, "/dev/shm%s", stream);
    CHECK(access(path, F_OK) != 0);
    CHECK(access(cut_path, F_OK) != 0); /* empty debris of a dead pid: swept too */
    snprintf(path, sizeof path, "/dev/shm/tracelog.%u.%d", (unsigned)geteuid(), (int)live.pid);
    CHECK(access(path, F_OK) == 0); /* alive: kept */
    CHECK_EQ_INT(stop_traced(&live), 0);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--exec-child") == 0)
        exec_child_main(atoi(argv[2]), atoi(argv[3]));
    ssize_t n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1);
    if (n <= 0)
        TL_DIE("readlink /proc/self/exe");
    self_exe[n] = '\0';
    pt_watchdog(240);
    PT_RUN(test_names);
    PT_RUN(test_create_open_announce);
    PT_RUN(test_open_without_object_and_gone);
    PT_RUN(test_stale_and_damaged_objects);
    PT_RUN(test_fork_privatizes_the_word);
    PT_RUN(test_exec_adopts_the_object);
    PT_RUN(test_poll_skips_slot_mid_write);
    PT_RUN(test_concurrent_announcements);
    PT_RUN(test_invalid_announcements);
    PT_RUN(test_slots_full_then_dead_controller_taken_over);
    PT_RUN(test_wait_ack_timeout_and_death);
    PT_RUN(test_other_users);
    PT_RUN(test_sweep);
    return pt_finish();
}
