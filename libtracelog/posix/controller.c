/*
 * The controller's side of a stream made for another process
 * (posix_trace_create with pid != 0; design note
 * docs/design/cross-process.md, sections 3.4, 4, 5 and 7): the stream is laid
 * out in a named buffer the traced process maps at its next trace call, its
 * names are read from the traced process's named map, and the process is
 * watched through a pidfd so that the log records how it ended.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "posix/internal.h"
#include "xproc/guard.h"
#include "xproc/remote.h"

struct tl_remote {
    tl_xproc_remote r;
    tl_xproc_buffer b;
    tl_stream *stream; /* laid out in b */
    tl_names *names;   /* the traced process's map, once it exists */
    uint64_t names_nonce; /* in its name: read once from the control object (0: none could be made) */
    int ended;
    tl_proc_end end;
    int guarded;           /* b's mapping is registered with the SIGBUS guard */
    _Atomic int faulted;   /* a page of b was gone: the traced process shrank the object */
};

int tl_remote_open(pid_t pid, tl_remote **out)
{
    tl_remote *rm = calloc(1, sizeof *rm);
    if (!rm)
        return ENOMEM;
    int e = tl_xproc_remote_open(pid, &rm->r);
    if (e) {
        free(rm);
        return e;
    }
    /* Made now if the process has none yet (our child before exec): the names it opens go there. */
    rm->names_nonce = tl_ctl_names_nonce(rm->r.peer.ctl);
    if (!rm->names_nonce || tl_names_attach(rm->r.peer.euid, rm->r.peer.egid, rm->r.peer.token.pid,
                                            rm->r.peer.token.start, rm->names_nonce, &rm->names))
        rm->names = NULL; /* tried again when names are needed */
    *out = rm;
    return 0;
}

int tl_remote_make_stream(tl_remote *rm, const tl_stream_params *p, tl_stream **s)
{
    uint64_t bytes = tl_stream_bytes(p);
    if (bytes == 0)
        return EINVAL;
    int e = tl_xproc_buffer_create(rm->r.peer.euid, rm->r.peer.egid, rm->r.peer.token.pid, bytes, &rm->b);
    if (e)
        return e;
    e = tl_guard_register(rm->b.map, rm->b.size);
    if (e)
        return e;
    rm->guarded = 1;
    rm->stream = tl_stream_create_in(rm->b.map, rm->b.size, p);
    if (!rm->stream)
        return errno ? errno : ENOMEM;
    *s = rm->stream;
    return 0;
}

int tl_remote_announce(tl_remote *rm, int inherited)
{
    return tl_xproc_remote_attach(&rm->r, &rm->b, inherited ? TL_CTL_FLAG_INHERITED : 0);
}

int tl_remote_guard(tl_remote *rm, int (*fn)(void *), void *arg)
{
    if (!rm)
        return fn(arg);
    if (atomic_load(&rm->faulted))
        return EFAULT;
    int r = tl_guard_run(fn, arg);
    if (r != EFAULT || atomic_exchange(&rm->faulted, 1))
        return r;
    /* Zero-filled private pages where the object's were: a later access anywhere (another
       thread's, an unguarded one) reads an empty buffer instead of raising SIGBUS again. */
    mmap(rm->b.map, rm->b.size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1,
         0);
    return EFAULT;
}

int tl_remote_faulted(const tl_remote *rm) { return rm && atomic_load(&rm->faulted); }

pid_t tl_remote_pid(const tl_remote *rm) { return (pid_t)rm->r.peer.token.pid; }

int tl_remote_names(tl_remote *rm, tl_names **out)
{
    if (rm->names && tl_names_moved(rm->names)) { /* it joined its parent's map since */
        tl_names_detach(rm->names);
        rm->names = NULL;
    }
    if (!rm->names) {
        const tl_ctl_peer *p = &rm->r.peer;
        if (!rm->names_nonce || tl_names_attach(p->euid, p->egid, p->token.pid, p->token.start, rm->names_nonce, &rm->names))
            rm->names = NULL;
    }
    *out = rm->names;
    return rm->names ? 0 : EAGAIN;
}

int tl_remote_ended(tl_remote *rm, tl_proc_end *end)
{
    if (!rm->ended && tl_xproc_remote_ended(&rm->r, 0)) {
        tl_xproc_remote_end(&rm->r, &rm->end);
        rm->ended = 1;
    }
    if (rm->ended && end)
        *end = rm->end;
    return rm->ended;
}

int tl_remote_wait_end(tl_remote *rm, int wake_fd) { return tl_proc_watch_wait(&rm->r.watch, wake_fd); }

static int end_stream(void *s)
{
    tl_stream_end(s);
    return 0;
}

static int consumer_free(void *c)
{
    tl_consumer_free(c);
    return 0;
}

void tl_remote_consumer_free(tl_remote *rm, tl_consumer *c)
{
    if (tl_remote_guard(rm, consumer_free, c) == EFAULT)
        tl_consumer_free(c); /* the buffer is zero-filled private memory now */
}

void tl_remote_close(tl_remote *rm)
{
    if (!rm)
        return;
    if (rm->stream) /* a producer still mapping it records nothing more */
        tl_remote_guard(rm, end_stream, rm->stream);
    const tl_ctl_peer *p = &rm->r.peer;
    if (tl_xproc_remote_ended(&rm->r, 0))
        tl_names_sweep(p->euid, p->token.pid, p->token.start, rm->names_nonce);
    tl_names_detach(rm->names);
    tl_xproc_remote_close(&rm->r);
    if (rm->guarded)
        tl_guard_unregister(rm->b.map);
    tl_xproc_buffer_destroy(&rm->b);
    free(rm);
}

/* Thread-safe (a poll of the pidfd): the flusher's groups wait in their own threads. */
static int producers_ended(void *rm) { return tl_xproc_remote_ended(&((tl_remote *)rm)->r, 0); }

void tl_remote_watch_consumer(tl_remote *rm, tl_consumer *c, const trace_attr_t *attr)
{
    /* Its forked children may still record into an inherited stream: their records in flight are waited for. */
    if (!rm)
        return;
    tl_consumer_set_floor(c); /* made before the process learns the buffer's name */
    if (attr->__inheritance != POSIX_TRACE_INHERITED)
        tl_consumer_watch_producers(c, producers_ended, rm);
}

void tl_posix_end_seen(tl_stream *s, tl_consumer *c, const trace_attr_t *attr)
{
    tl_stream_stop(s, NULL, NULL); /* nothing recorded after the end: a controller's STOP came before */
    /* Its forked children may still record into an inherited stream: their records in flight are waited for. */
    if (attr->__inheritance != POSIX_TRACE_INHERITED)
        tl_consumer_producers_gone(c);
}
