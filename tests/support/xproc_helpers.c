#define _GNU_SOURCE

#include "xproc_helpers.h"

#include "posix_helpers.h"
#include "xproc/attach.h"

#include <dirent.h>
#include <fcntl.h>
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
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

int xp_child_start(xp_child *c, void (*main)(int up, int down))
{
    if (pipe(c->up) || pipe(c->down))
        TL_DIE("pipe");
    c->pid = pt_fork(60);
    if (c->pid == 0)
        main(c->up[1], c->down[0]);
    return xp_recv_id(c->up[0], &c->id);
}

int xp_child_ask(xp_child *c, char request)
{
    xp_send(c->down[1], request);
    return xp_recv(c->up[0], 10000);
}

void xp_child_close(xp_child *c)
{
    close(c->up[0]), close(c->up[1]), close(c->down[0]), close(c->down[1]);
}

void xp_child_end(xp_child *c)
{
    kill(c->pid, SIGKILL);
    xp_wait(c->pid);
    xp_child_close(c);
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

void xp_send_id(int fd, uint32_t id)
{
    xp_send(fd, 'i');
    if (write(fd, &id, sizeof id) != (ssize_t)sizeof id)
        _exit(3);
}

int xp_recv_id(int fd, uint32_t *id)
{
    if (xp_recv(fd, 10000) != 'i')
        return -1;
    return read(fd, id, sizeof *id) == (ssize_t)sizeof *id ? 0 : -1;
}

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

/* ---- the stand-in for the POSIX layer --------------------------------------- */

static int published[8];
static xp_fake_stream *published_map[8];
static int last = -1;

static int fake_validate(const void *map, uint64_t size, uint64_t id)
{
    const xp_fake_stream *f = map;
    return size >= sizeof *f && f->magic == XP_FAKE_MAGIC && f->id == id ? 0 : EINVAL;
}

static int fake_publish(void *map, uint64_t size, uint64_t id, uint32_t flags)
{
    (void)size;
    (void)id;
    for (int i = 0; i < 8; i++)
        if (!published[i]) {
            published[i] = 1;
            published_map[i] = map;
            last = i;
            tl_xproc_word_set(1ull << i);
            atomic_store(&published_map[i]->marker, 1000 + (uint64_t)getpid() + ((uint64_t)flags << 20));
            return i;
        }
    return -EAGAIN;
}

static void fake_unpublish(int h)
{
    published[h] = 0;
    published_map[h] = NULL;
    tl_xproc_word_clear(1ull << h);
}

const struct tl_xproc_ops xp_fake_ops = {fake_validate, fake_publish, fake_unpublish};

xp_fake_stream *xp_fake_current(void) { return last >= 0 && published[last] ? published_map[last] : NULL; }

void xp_traced_main(int up, int down)
{
    tl_xproc_set_ops(&xp_fake_ops);
    tl_xproc_word_set(1u << 7); /* a stream of its own, before any controller */
    if (tl_xproc_ensure_ctl())
        _exit(2);
    if (atomic_load(&tl_xproc_event_page.word) != (1u << 7))
        _exit(3); /* the word survived the remap */
    xp_send(up, 'r');
    for (;;) {
        int cmd = xp_recv(down, 1);
        if (cmd == 'q' || (cmd == -1 && fcntl(down, F_GETFD) < 0))
            break;
        if (atomic_load_explicit(&tl_xproc_event_page.word, memory_order_relaxed) & TL_CTL_PENDING)
            tl_xproc_poll();
        if (cmd == 'm') {
            xp_fake_stream *f = xp_fake_current();
            uint64_t v = f ? atomic_load(&f->marker) : 0;
            if (write(up, &v, sizeof v) != (ssize_t)sizeof v)
                _exit(4);
        }
    }
    _exit(0);
}
