/*
 * The traced process as its controller holds it (posix_trace_create with
 * pid != 0; design note docs/design/cross-process.md, sections 3.4, 4, 5 and
 * 7): the stream is laid out in a named buffer the traced process maps at
 * its next trace call, read under a SIGBUS guard, and the process is
 * watched through a pidfd so that a log records how it ended. A log
 * describes the traced process, not its controller (its pid, executable and
 * name, read from /proc; tl_remote_identity_known). Its event names are the
 * POSIX layer's business: the key to its named map is here
 * (tl_remote_names_key).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"
#include "xproc/guard.h"
#include "xproc/proc.h"
#include "xproc/remote.h"
#include "stream/clock.h"
#include "stream/consumer.h"
#include "xproc/traced.h"

struct tl_remote {
    tl_xproc_remote r;
    tl_xproc_buffer b;
    tl_stream *stream; /* laid out in b */
    uint64_t names_nonce; /* in its name: read once from the control object (0: none could be made) */
    int ended;
    tl_proc_end end;
    int guarded;           /* b's mapping is registered with the SIGBUS guard */
    _Atomic int faulted;   /* a page of b was gone: the traced process shrank the object */
    _Atomic int announced; /* r.slot and r.gen are set (stored before, released by this) */
    _Atomic int joined;    /* the traced process acted on the announcement (tl_remote_joined) */
    /* tl_remote_identity_known (its caller serialises the calls: the log's lock) */
    tl_remote_identity id; /* as last seen */
    int pending;           /* our child, still running our own image, or not yet the program that records */
    int execd;             /* it was seen running an image of its own (id holds the last one) */
    char self_exe[TRACELOG_TEXT_MAX + 1];
    char self_comm[32];
};

/* "/proc/<pid>/<leaf>" (pid 0: "/proc/self/<leaf>"). */
static void proc_path(char out[64], pid_t pid, const char *leaf)
{
    if (pid)
        snprintf(out, 64, "/proc/%d/%s", (int)pid, leaf);
    else
        snprintf(out, 64, "/proc/self/%s", leaf);
}

/* /proc/<pid>/exe (pid 0: our own); "" when it cannot be read (a zombie's, another user's). */
static void exe_of(pid_t pid, char *out, size_t cap)
{
    char path[64];
    proc_path(path, pid, "exe");
    ssize_t n = readlink(path, out, cap - 1);
    out[n > 0 ? n : 0] = 0;
}

/*
 * The name a user knows the process by: the last part of its argv[0] as
 * given (./server: "server"), unless it rewrote it into a title with blanks
 * or it is gone (a zombie's is empty); then its command name (comm, at most
 * 15 bytes).
 */
static void name_of(pid_t pid, char *out, size_t cap)
{
    char path[64], cmd[TRACELOG_TEXT_MAX + 1];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    if (tl_proc_read_small(path, cmd, sizeof cmd) > 0) { /* argv[0] ends at the first NUL */
        const char *base = strrchr(cmd, '/');
        base = base ? base + 1 : cmd;
        if (*base && !strpbrk(base, " \t\n")) {
            tl_copy_text(out, cap, base);
            return;
        }
    }
    tl_proc_thread_comm(pid, 0, out, cap); /* its command name */
}

/*
 * The command name of the ended process from its /proc/<pid>/stat while it
 * is a zombie nobody reaped (the start time says it is still that process).
 * 0 or -1.
 */
static int zombie_comm(tl_remote *rm, char *out, size_t cap)
{
    char path[64], line[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)rm->r.peer.token.pid);
    if (tl_proc_read_small(path, line, sizeof line) <= 0)
        return -1;
    char *open = strchr(line, '('), *close = strrchr(line, ')');
    if (!open || !close || close < open)
        return -1;
    const char *p = close + 1; /* fields 3 on; the start time is field 22 */
    for (int field = 3; field < 22 && p; field++)
        p = strchr(p + 1, ' ');
    char *end;
    unsigned long long start = p ? strtoull(p + 1, &end, 10) : 0;
    if (!p || end == p + 1 || start != rm->r.peer.token.start)
        return -1;
    *close = 0;
    tl_copy_text(out, cap, open + 1);
    return 0;
}

/*
 * What the process is now: 0 if it still runs; 1 if it has ended since its
 * executable was read, and nobody reaped it (the pid named it all along: a
 * zombie's executable cannot be read, its command name can); else -1 (the
 * pid may name another process by now): *id unchanged.
 */
static int read_identity(tl_remote *rm, tl_remote_identity *id)
{
    tl_remote_identity now = {.pid = rm->r.peer.token.pid};
    pid_t pid = (pid_t)now.pid;
    exe_of(pid, now.program, sizeof now.program);
    name_of(pid, now.name, sizeof now.name);
    if (tl_proc_alive(&rm->r.peer.token)) {
        *id = now;
        return 0;
    }
    char comm[32];
    if (!now.program[0] || zombie_comm(rm, comm, sizeof comm) != 0)
        return -1;
    if (!now.name[0])
        tl_copy_text(now.name, sizeof now.name, comm);
    *id = now;
    return 1;
}

/*
 * An exec replaces the executable first, then closes the close-on-exec
 * files (which tells ptlog record the program runs), then sets the command
 * name, and only then the arguments: in between, the name read is still
 * ours (the arguments are empty, the command name the old one). So once the
 * executable is the program's, its name is read when its arguments are there
 * or it is gone, waiting at most SETTLE_NS: a busy machine may not run it
 * for a while (10 ms were once too few), and the window is a few
 * microseconds of its own.
 */
#define SETTLE_NS 2000000000ull
static void settle_name(const tl_remote *rm, tl_remote_identity *id)
{
    char path[64], cmd[2];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)id->pid);
    uint64_t start = tl_clock_mono_ns();
    while (tl_proc_read_small(path, cmd, sizeof cmd) <= 0 && tl_proc_alive(&rm->r.peer.token) &&
           tl_clock_mono_ns() - start < SETTLE_NS) {
        struct timespec t = {0, 100000};
        nanosleep(&t, NULL);
    }
    name_of((pid_t)id->pid, id->name, sizeof id->name);
}

/* Under the guard: 1 if a producer wrote one of the stream's user lanes (only the traced process does). */
static int user_lanes_written(void *arg) { return tl_stream_user_lanes_written(arg); }

int tl_remote_joined(tl_remote *rm)
{
    if (atomic_load(&rm->joined))
        return 1;
    if (!atomic_load_explicit(&rm->announced, memory_order_acquire))
        return 0;
    /* Its answer in the control object, or, should it have scribbled over that since, its events. */
    int result = -1;
    if ((tl_xproc_remote_wait(&rm->r, 0, &result) != 0 || result != 0) &&
        tl_remote_guard(rm, user_lanes_written, rm->stream) != 1)
        return 0;
    atomic_store(&rm->joined, 1);
    return 1;
}

int tl_remote_identity_known(tl_remote *rm, tl_remote_identity *id)
{
    if (rm->pending) {
        tl_remote_identity now;
        int runs = read_identity(rm, &now) >= 0;
        if (runs && now.program[0] && strcmp(now.program, rm->self_exe) != 0 &&
            strcmp(now.program, rm->id.program) != 0) {
            /* an image of its own: its program, or a wrapper's (env, nice, sh -c 'exec ...') that execs the
               program next, so known only once it takes the stream up or ends (or a caller cannot wait:
               ptlog record's first write waits 500 ms at most), the last image seen meanwhile */
            settle_name(rm, &now);
            rm->id = now;
            rm->execd = 1;
        }
        if (tl_remote_joined(rm) || tl_remote_ended(rm, NULL)) {
            char comm[sizeof rm->self_comm];
            /* Looked at again: it may have exec'd and joined between the first look and this one
               (a recorded log was once named after ptlog, the image it had before its exec). */
            runs = read_identity(rm, &now) >= 0;
            if (runs) /* its program, or a fork of ours that traces without exec: it is what we are */
                rm->id = now;
            else if (!rm->execd && zombie_comm(rm, comm, sizeof comm) == 0 && strcmp(comm, rm->self_comm) != 0) {
                /* gone before we saw it exec, and it did (another command name): its program is unknown */
                rm->id.program[0] = 0;
                tl_copy_text(rm->id.name, sizeof rm->id.name, comm);
            }
            rm->pending = 0;
        }
    }
    if (id)
        *id = rm->id;
    return !rm->pending;
}

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
    /* Who it is: a child of ours running our own image is a fork that has not exec'd its program yet. */
    rm->id.pid = rm->r.peer.token.pid;
    read_identity(rm, &rm->id);
    exe_of(0, rm->self_exe, sizeof rm->self_exe);
    tl_proc_thread_comm(0, 0, rm->self_comm, sizeof rm->self_comm);
    pid_t parent;
    rm->pending = tl_proc_parent_of(pid, &parent) == 0 && parent == getpid() && rm->self_exe[0] &&
                  strcmp(rm->id.program, rm->self_exe) == 0;
    rm->names_nonce = tl_ctl_names_nonce(rm->r.peer.ctl);
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
    int e = tl_xproc_remote_attach(&rm->r, &rm->b, inherited ? TL_CTL_FLAG_INHERITED : 0);
    if (!e) /* the log's threads may now read the acknowledgement (tl_remote_joined) */
        atomic_store_explicit(&rm->announced, 1, memory_order_release);
    return e;
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

uint64_t tl_remote_stream_id(const tl_remote *rm) { return rm->b.id; }

void tl_remote_names_key(const tl_remote *rm, tl_remote_names_at *key)
{
    const tl_ctl_peer *p = &rm->r.peer;
    *key = (tl_remote_names_at){p->euid, p->egid, p->token.pid, p->token.start, rm->names_nonce};
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
    tl_xproc_remote_close(&rm->r);
    if (rm->guarded)
        tl_guard_unregister(rm->b.map);
    tl_xproc_buffer_destroy(&rm->b);
    free(rm);
}

/* Thread-safe (a poll of the pidfd): the flusher's groups wait in their own threads. */
static int producers_ended(void *rm) { return tl_xproc_remote_ended(&((tl_remote *)rm)->r, 0); }

void tl_remote_watch_consumer(tl_remote *rm, tl_consumer *c, int inherited)
{
    /* Its forked children may still record into an inherited stream: their records in flight are waited for. */
    if (!rm)
        return;
    tl_consumer_set_floor(c); /* made before the process learns the buffer's name */
    tl_consumer_set_foreign(c);
    if (!inherited)
        tl_consumer_watch_producers(c, producers_ended, rm);
}

void tl_remote_end_seen(tl_stream *s, tl_consumer *c, int inherited)
{
    tl_stream_stop(s, NULL); /* nothing recorded after the end: a controller's STOP came before */
    /* Its forked children may still record into an inherited stream: their records in flight are waited for. */
    if (!inherited)
        tl_consumer_producers_gone(c);
}
