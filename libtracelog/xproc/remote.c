/* The controller's side: stream buffers made for another process, and that process (see remote.h). */
#include "xproc/remote.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

static int random_id(uint64_t *id)
{
    for (;;) {
        ssize_t n = getrandom(id, sizeof *id, 0);
        if (n == (ssize_t)sizeof *id && *id) /* never 0: "no stream" where ids are kept (posix/names.c) */
            return 0;
        if (n < 0 && errno != EINTR)
            return errno;
    }
}

int tl_xproc_buffer_create(uint32_t euid, uint32_t egid, uint32_t pid, uint64_t size, tl_xproc_buffer *b)
{
    memset(b, 0, sizeof *b);
    if (size == 0 || size > TL_CTL_MAX_STREAM)
        return ENOMEM;
    int e = random_id(&b->id);
    if (e)
        return e;
    tl_ctl_stream_name(b->name, euid, pid, b->id);
    int fd;
    e = tl_shmobj_create(b->name, size, euid, egid, &fd);
    if (e) {
        b->name[0] = '\0';
        return e;
    }
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        tl_shmobj_unlink(b->name);
        b->name[0] = '\0';
        return ENOMEM;
    }
    b->map = m;
    b->size = size;
    return 0;
}

void tl_xproc_buffer_destroy(tl_xproc_buffer *b)
{
    if (b->name[0])
        tl_shmobj_unlink(b->name);
    if (b->map)
        munmap(b->map, b->size);
    memset(b, 0, sizeof *b);
}

int tl_xproc_remote_open(pid_t pid, tl_xproc_remote *r)
{
    memset(r, 0, sizeof *r);
    r->slot = -1;
    r->watch.pidfd = -1;
    int e = tl_ctl_open_or_make(pid, &r->peer);
    if (e)
        return e;
    e = tl_proc_watch_open(&r->peer.token, &r->watch);
    if (e)
        tl_ctl_close(&r->peer);
    return e;
}

int tl_xproc_remote_attach(tl_xproc_remote *r, const tl_xproc_buffer *b, uint32_t flags)
{
    tl_announce a = {TL_CTL_ATTACH, flags, b->size, b->id, {0}};
    memcpy(a.name, b->name, sizeof a.name);
    return tl_ctl_announce(&r->peer, &a, &r->slot, &r->gen);
}

int tl_xproc_remote_wait(tl_xproc_remote *r, uint64_t timeout_ns, int *result)
{
    if (r->slot < 0)
        return EINVAL;
    return tl_ctl_wait_ack(&r->peer, r->slot, r->gen, timeout_ns, result);
}

int tl_xproc_remote_ended(tl_xproc_remote *r, int timeout_ms)
{
    return tl_proc_watch_ended(&r->watch, timeout_ms);
}

void tl_xproc_remote_end(tl_xproc_remote *r, tl_proc_end *end)
{
    tl_proc_watch_end(&r->watch, end);
    if (end->how != TL_END_UNKNOWN)
        return;
    uint32_t exited = atomic_load(&r->peer.ctl->exited); /* a number to report, nothing more */
    if (exited & TL_CTL_EXITED)
        *end = (tl_proc_end){TL_END_EXITED, (int32_t)(exited & 0xff)};
}

void tl_xproc_remote_close(tl_xproc_remote *r)
{
    int ended = tl_proc_watch_ended(&r->watch, 0);
    if (r->slot >= 0 && !ended) {
        tl_announce detach = {TL_CTL_DETACH, 0, 0, 0, {0}};
        tl_ctl_announce(&r->peer, &detach, &r->slot, &r->gen);
    }
    if (r->slot >= 0)
        tl_ctl_release(&r->peer, r->slot);
    if (ended)
        tl_ctl_remove_if_dead(&r->peer);
    r->slot = -1;
    tl_proc_watch_close(&r->watch);
    tl_ctl_close(&r->peer);
}
