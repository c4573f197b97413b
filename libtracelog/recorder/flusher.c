/*
 * The recorder's threads: the flusher of a background recorder (FLUSH
 * streams), which drains and writes on its own, and for another process's
 * stream without one, a thread that logs the process's end when it comes.
 */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "recorder/internal.h"

/*
 * Signals are the application's business, except SIGBUS: a fault under the
 * buffer's guard (a traced process shrank it) must reach the guard's
 * handler; a fault with SIGBUS blocked kills the process.
 */
static void block_signals(void)
{
    sigset_t all;
    sigfillset(&all);
    sigdelset(&all, SIGBUS);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
}

typedef struct sleep_args {
    tl_recorder *r;
    uint64_t ns;
    int look; /* at the lanes first: not after a drain that took nothing (a stuck lane would keep us awake) */
} sleep_args;

static int drainer_sleep(void *arg)
{
    const sleep_args *a = arg;
    return tl_consumer_drainer_sleep(a->r->consumer, a->ns, a->look);
}

/* Until the next timed write (now if it is due), and no longer than REMOTE_LOOK_NS for a controller. */
static uint64_t flusher_sleep_ns(const tl_recorder *r, uint64_t last_write)
{
    uint64_t now = tl_clock_mono_ns(), next = last_write + r->params.flush_interval_ns;
    uint64_t ns = next > now ? next - now : 0;
    return r->params.remote && ns > REMOTE_LOOK_NS ? REMOTE_LOOK_NS : ns;
}

/*
 * The flusher's groups of lanes (groups.h), once the writer exists. Not
 * UNTIL_FULL: the chunk that fills it must end a prefix in time, which a set
 * cut short would not. The helpers get the flusher's signal mask. Caller
 * holds the lock.
 */
static void open_groups(tl_recorder *r)
{
    r->groups_tried = 1;
    if (r->params.writer.log_policy != TRACELOG_POLICY_UNTIL_FULL) {
        int e;
        r->groups = tl_groups_open(r->consumer, r->params.remote, r->writer, &e); /* NULL: one flusher, as good */
    }
}

static void *flusher_main(void *arg)
{
    tl_recorder *r = arg;
    block_signals();
    tl_rec_lock(r);
    if (r->writer) /* else once it is made (writer_ready) */
        open_groups(r);
    tl_rec_unlock(r);
    uint64_t last_write = tl_clock_mono_ns();
    int took = 1; /* the last drain took events (read under the lock: an explicit flush drains too) */
    uint64_t exec_look_ns = EXEC_LOOK_FIRST_NS; /* while the writer waits for the traced child's exec */
    int have_writer = 0;                       /* r->writer exists (as last seen under the lock) */
    while (!atomic_load(&r->flusher_stop)) {
        sleep_args sleep = {r, flusher_sleep_ns(r, last_write), took};
        if (!have_writer && sleep.ns > exec_look_ns) {
            sleep.ns = exec_look_ns;
            exec_look_ns = exec_look_ns * 2 < REMOTE_LOOK_NS ? exec_look_ns * 2 : REMOTE_LOOK_NS;
        }
        int woken = sleep.ns ? tl_rec_guarded(r, drainer_sleep, &sleep) : 1;
        if (woken == EFAULT) { /* the buffer is gone: no futex to sleep on */
            struct timespec period = {0, REMOTE_LOOK_NS};
            nanosleep(&period, NULL);
        }
        /* A mutex is not fair: a flusher that always has work (a buffer that keeps saying "more")
           must not keep a shutdown or a flush out. Bounded: the waiter may be slow to run. */
        for (int turns = 0; turns < 1000 && atomic_load_explicit(&r->lock_waiters, memory_order_relaxed); turns++)
            sched_yield();
        tl_rec_lock(r);
        /* Looked at first: a record the process died in the middle of is then not waited for. */
        int ended = !r->end_logged && r->params.remote && tl_remote_ended(r->params.remote, NULL);
        if (r->params.remote) /* latched as soon as seen: the process may scribble over its answer later */
            tl_remote_joined(r->params.remote);
        if (!r->groups_tried && !tl_rec_writer_ready(r, ended))
            open_groups(r);
        have_writer = r->writer != NULL;
        if (!have_writer) { /* waiting for the traced process to be its program (or the writer failed) */
            tl_rec_unlock(r);
            continue;
        }
        if (!woken && !ended && tl_clock_mono_ns() - last_write < r->params.flush_interval_ns) {
            tl_rec_unlock(r); /* a controller's look for the end, between two drains */
            continue;
        }
        uint64_t drained_before = r->drained;
        atomic_store(&r->flushing, 1); /* an automatic flush of the FLUSH policy */
        int e = ended ? tl_rec_log_process_end(r) : r->groups ? tl_rec_drain_by_groups(r) : tl_rec_drain(r, UINT64_MAX);
        took = r->drained != drained_before;
        uint64_t now = tl_clock_mono_ns();
        ended = ended || (r->end_logged && !r->end_checkpointed); /* or its buffer was lost */
        if (ended || now - last_write >= r->params.flush_interval_ns) { /* a program's end goes out at once */
            /* Bounds what an end without handler (_exit, SIGKILL) loses to about one interval;
               an idle stream writes nothing. */
            uint64_t delivered, overruns;
            tl_rec_counters(r, &delivered, &overruns);
            int we = ended || delivered != r->written_at ? tl_rec_write_out(r, 1) : 0;
            if (!e)
                e = we;
            last_write = now;
        }
        if (e)
            tl_rec_note_error(r, e);
        tl_rec_publish_status(r);
        atomic_store(&r->flushing, 0);
        tl_rec_unlock(r);
    }
    tl_rec_lock(r);
    if (r->grouped) { /* from now on the log's consumer takes: at the groups' positions */
        tl_groups_hand_back(r->groups, r->consumer);
        r->grouped = 0;
    }
    tl_groups_close(r->groups); /* every event they took is written: each cycle ended its set */
    r->groups = NULL;
    tl_rec_unlock(r);
    return NULL;
}

/*
 * A controller's log of a LOOP or UNTIL_FULL stream has no flusher, yet the
 * traced process's end must not wait for the next explicit flush or the
 * shutdown (design note, section 7): this thread sleeps on the pidfd and,
 * when the process ends, drains the stream, logs the end and writes it out.
 */
static void *end_watch_main(void *arg)
{
    tl_recorder *r = arg;
    block_signals();
    /* A child that has not exec'd its program yet: the writer is made once it has (or at the end). */
    struct pollfd wake = {r->end_wake_fd, POLLIN, 0};
    for (uint64_t look_ns = EXEC_LOOK_FIRST_NS;; look_ns = look_ns * 2 < REMOTE_LOOK_NS ? look_ns * 2 : REMOTE_LOOK_NS) {
        tl_rec_lock(r);
        int ready = tl_rec_writer_ready(r, 0);
        tl_rec_unlock(r);
        if (ready != EAGAIN)
            break;
        if (poll(&wake, 1, 0) > 0)
            return NULL; /* stopped */
        struct timespec look = {0, (long)look_ns};
        nanosleep(&look, NULL);
    }
    if (tl_remote_wait_end(r->params.remote, r->end_wake_fd)) {
        tl_rec_lock(r);
        tl_rec_flush_locked(r, NULL, NULL);
        tl_rec_unlock(r);
    }
    return NULL;
}

int tl_rec_start_end_watcher(tl_recorder *r)
{
    r->end_wake_fd = eventfd(0, EFD_CLOEXEC);
    if (r->end_wake_fd < 0)
        return errno == ENOMEM ? ENOMEM : EAGAIN;
    if (pthread_create(&r->end_watcher, NULL, end_watch_main, r) == 0)
        return 0;
    close(r->end_wake_fd);
    r->end_wake_fd = -1;
    return EAGAIN;
}

void tl_rec_stop_end_watcher(tl_recorder *r)
{
    if (r->end_wake_fd < 0)
        return;
    uint64_t one = 1;
    while (write(r->end_wake_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    pthread_join(r->end_watcher, NULL);
    close(r->end_wake_fd);
    r->end_wake_fd = -1;
}

int tl_rec_start_flusher(tl_recorder *r)
{
    if (pthread_create(&r->flusher, NULL, flusher_main, r) != 0)
        return EAGAIN;
    r->flusher_running = 1;
    return 0;
}

void tl_rec_stop_flusher(tl_recorder *r)
{
    if (!r->flusher_running)
        return;
    atomic_store(&r->flusher_stop, 1);
    tl_stream_drainer_wake(r->stream);
    pthread_join(r->flusher, NULL);
    r->flusher_running = 0;
}

