/*
 * A stream's log (Trace Log option): the object that owns the log writer
 * and drains the stream into it, by an explicit posix_trace_flush, by the
 * background flusher of the FLUSH policy, by a sync or an exec checkpoint,
 * on a crash (crash.c) and at shutdown. Nothing outside this file touches
 * the writer.
 *
 * A controller's log describes the traced process (its pid, executable and
 * name: format-spec 5.2 `process`), which its first block says. A child the
 * controller traces from before its exec (ptlog record, the standard's
 * fork-exec-create examples) is not its program yet: its log's writer is
 * made once it is (it exec'd, joined the stream or ended; looked at every
 * REMOTE_LOOK_NS), or when a write is due anyway (a flush, sync, shutdown or
 * crash). Until then nothing is drained: the events wait in the stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"
#include "posix/groups.h"
#include "posix/internal.h"
#include "tracelog/writer.h"
#include "writer/io.h"

/*
 * The flusher sleeps until its next timed write, woken sooner by a producer
 * whose lane is a quarter full, one waiting for room, or a loss: it drains
 * between a program's bursts rather than during them, on a CPU a producer
 * may need (bench/README.md, "the flusher's sleep"). A controller's flusher
 * also looks at least this often for the traced process's end, which it
 * learns of by looking, and drains only then.
 */
#define REMOTE_LOOK_NS 2000000
/*
 * While a controller's log waits for its child to exec (writer_ready), it
 * looks this often at first, then twice as long each time up to
 * REMOTE_LOOK_NS: a program that ends within a millisecond of its exec is
 * still seen running (its executable can be read), and a fork that never
 * execs costs one look per REMOTE_LOOK_NS.
 */
#define EXEC_LOOK_FIRST_NS 100000
#define CRASH_LOCK_WAIT_MS 500    /* the crash handler waits this long for another thread's flush */
/*
 * A drain that finds a lane more than BEHIND/256 full stores its chunks
 * uncompressed until the fullest lane is under CAUGHT_UP/256: zstd is a
 * quarter of the flusher's time per event, and a bigger log beats lost
 * events (issue 11, "zero loss first"; measured in bench/README.md). Twice
 * the fill at which producers wake the flusher, so that a flusher woken on
 * time compresses.
 */
#define BEHIND (2 * 256 / TL_DRAINER_WAKE_PART)
#define CAUGHT_UP 16
#define BACKLOG_EVERY 1024 /* events between two looks at the backlog */

typedef struct batch batch; /* a controller's drain step (drain_remote) */

struct tl_log {
    tl_stream *stream;
    tl_consumer consumer;
    trace_attr_t attr;          /* the stream's, as resolved at creation */
    int fd;                     /* our duplicate of the caller's descriptor */
    tracelog_writer *writer;    /* NULL until made (writer_ready) */
    int start_error;            /* the writer could not be made: what every write reports */
    int groups_tried;           /* the flusher opened its groups (once the writer exists) */
    pthread_mutex_t lock;       /* the writer, the consumer and the fields below it */
    _Atomic uintptr_t owner;    /* pthread_self() of the lock's holder, 0 if none (the crash handler's check) */
    uint64_t flush_interval_ns; /* FLUSH policy: the flusher writes a partial chunk this often */
    uint64_t written_at;        /* recorded() when the log was last written */
    uint32_t names_logged;      /* user names already given to the writer */
    int stop_written;           /* UNTIL_FULL log: the final STOP is in */
    int behind;                 /* chunks go out uncompressed (see BEHIND) */
    int error;                  /* the write error that stopped the log (the writer's errors are sticky) */
    pthread_t flusher;
    int flusher_running;
    _Atomic int flusher_stop;
    _Atomic int flushing;
    pthread_mutex_t status_lock; /* the fields below: never held during I/O */
    int flush_error;             /* first error, reset when read */
    tracelog_log_status snapshot; /* the writer's status after the last flush */
    uint64_t overruns_reported;
    tl_remote *remote;           /* a controller's log: the traced process, its names */
    int end_logged;              /* its end is in the log */
    int end_checkpointed;        /* and a trailer after it */
    pthread_t end_watcher;       /* a controller's log without flusher: logs the end when it comes */
    int end_wake_fd;             /* eventfd that stops the end watcher; -1 without one */
    /* A controller's log: the drain step's events and their payloads' copies (the buffer may vanish
       under a write); in the heap, not on a stack: the crash handler may drain on a small one. */
    batch *batch;
    uint8_t *arena;
    size_t arena_cap;
    uint64_t batches;
    uint64_t drained;            /* events taken from the stream */
    /* Atomic: posix_trace_get_status reads them without the log's lock (tl_log_overruns). */
    _Atomic uint64_t delivered_seen; /* the stream's counters as last read (they are in the buffer) */
    _Atomic uint64_t overruns_seen;
    _Atomic uint64_t logged_itself;  /* events the log has that the stream never held (the end, a fault's marks): recorded too */
    int lost;                    /* the buffer was found shrunk, and the loss logged (log_fault) */
    _Atomic uint32_t lock_waiters; /* threads waiting in lock(): the flusher lets them in first */
    tl_groups *groups;           /* the flusher's groups of lanes (groups.h), or NULL */
    int grouped;                 /* their consumers took last: `consumer` must adopt the lanes' tails */
};

static int writer_ready(tl_log *l, int force);

static int errno_of(tracelog_status st, const tracelog_error *err)
{
    switch (st) {
    case TRACELOG_OK: return 0;
    case TRACELOG_E_NOMEM: return ENOMEM;
    case TRACELOG_E_IO: return err && err->sys_errno ? err->sys_errno : EIO;
    case TRACELOG_E_LOG_FULL: return 0; /* recorded in the log status, not an error */
    default: return EINVAL;
    }
}

static tracelog_policy policy_of(int posix_policy)
{
    switch (posix_policy) {
    case POSIX_TRACE_LOOP: return TRACELOG_POLICY_LOOP;
    case POSIX_TRACE_UNTIL_FULL: return TRACELOG_POLICY_UNTIL_FULL;
    case POSIX_TRACE_FLUSH: return TRACELOG_POLICY_FLUSH;
    default: return TRACELOG_POLICY_APPEND;
    }
}

static uint64_t ns_of(struct timespec ts) { return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec; }

static void fill_metadata(const trace_attr_t *a, const tl_clock *clock, tl_remote *remote, tracelog_metadata *m)
{
    tracelog_metadata_init(m); /* this host; this process, unless the log is a controller's */
    tl_copy_text(m->trace_name, sizeof m->trace_name, a->__name);
    if (remote) { /* the traced process, not its controller; named after it unless the caller named the trace */
        tl_remote_identity id;
        tl_remote_identity_known(remote, &id);
        m->pid = id.pid;
        tl_copy_text(m->program, sizeof m->program, id.program);
        if (!a->__name[0])
            tl_copy_text(m->trace_name, sizeof m->trace_name, id.name);
    }
    tl_copy_text(m->generation_version, sizeof m->generation_version, a->__genversion);
    m->creation_time_ns = ns_of(a->__create_time);
    tl_copy_text(m->clock_source, sizeof m->clock_source, tl_clock_source(clock));
    if (clock->kind == TL_CLOCK_TSC) { /* the conversion, for readers to audit (format 1.1) */
        m->clock_tsc_base = clock->tsc_base;
        m->clock_ns_base = (uint64_t)clock->ns_base;
        m->clock_mult = clock->mult;
        m->clock_shift = clock->shift;
    }
    m->clock_resolution_ns = ns_of(a->__clock_res);
    m->max_data_size = a->__max_data_size;
    m->stream_min_size = a->__stream_size;
    m->log_max_size = a->__log_size;
    m->stream_full_policy = policy_of(a->__stream_policy);
    m->log_full_policy = policy_of(a->__log_policy);
    m->inherited = a->__inheritance == POSIX_TRACE_INHERITED;
}

int tl_posix_log_full_status(int log_policy, const tracelog_log_status *ls)
{
    /* A LOOP log that overwrote events has used up its space: it is full from then on, like a LOOP stream. */
    int wrapped = log_policy == POSIX_TRACE_LOOP && ls->log_overruns > 0;
    return ls->log_full || wrapped ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
}

/* The holder drains the stream: it must not wait for room in it (tl_stream_thread_drains). */
static void lock(tl_log *l)
{
    atomic_fetch_add_explicit(&l->lock_waiters, 1, memory_order_relaxed);
    pthread_mutex_lock(&l->lock);
    atomic_fetch_sub_explicit(&l->lock_waiters, 1, memory_order_relaxed);
    tl_stream_thread_drains(1);
    atomic_store_explicit(&l->owner, (uintptr_t)pthread_self(), memory_order_relaxed);
}

static void unlock(tl_log *l)
{
    tl_stream_thread_drains(0);
    atomic_store_explicit(&l->owner, 0, memory_order_relaxed);
    pthread_mutex_unlock(&l->lock);
}

/*
 * Every write to the log happens with SIGXFSZ blocked in the writing thread,
 * so exceeding RLIMIT_FSIZE gives EFBIG instead of killing the process; the
 * SIGXFSZ our own write raised is then discarded. Calls nest.
 */
static void xfsz_block(sigset_t *old)
{
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, old);
}

static void xfsz_restore(const sigset_t *old)
{
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    struct timespec zero = {0, 0};
    while (sigtimedwait(&xfsz, NULL, &zero) > 0)
        ; /* discard the SIGXFSZ our own write raised */
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Defines id in the log, with its schema if it has one. */
static void define(tl_log *l, trace_event_id_t id, const char *name)
{
    tracelog_writer_define_event_schema(l->writer, id, name, tl_posix_event_schema(id, name), NULL);
}

/*
 * Defines user id of map `names` (NULL: the process's own) with the schema
 * the map holds for it: a controller's log, or one a child sharing the map
 * through an inherited stream opened typed, has it only there. The text is
 * another process's: a schema the writer refuses (malformed, over a limit)
 * leaves the name without one, and the log's readers show bytes.
 */
static void define_user(tl_log *l, const tl_names *names, trace_event_id_t id, const char *name)
{
    char *schema = NULL;
    if (tl_names_schema_of(names, id, &schema) != 0 ||
        tracelog_writer_define_event_schema(l->writer, id, name, schema, NULL) != TRACELOG_OK)
        define(l, id, name);
    free(schema);
}

/* Names registered since the last drain (by the traced process, for a controller's log), so that the log names every event it holds. */
static void log_new_names(tl_log *l)
{
    tl_names *names = NULL;
    if (l->remote && tl_remote_names(l->remote, &names))
        return; /* it has opened no name we can read yet */
    uint32_t n = tl_names_count(names);
    char name[TRACE_EVENT_NAME_MAX + 1];
    for (; l->names_logged < n; l->names_logged++) {
        trace_event_id_t id = POSIX_TRACE_UNNAMED_USEREVENT + 1 + l->names_logged;
        if (tl_names_name_of(names, id, name, sizeof name) == 0)
            define_user(l, names, id, name);
    }
}

/* fn(arg), under the buffer's SIGBUS guard for a controller's log: EFAULT (fn not run) once it is gone. */
static int guarded(tl_log *l, int (*fn)(void *), void *arg)
{
    return tl_remote_guard(l->remote, fn, arg);
}

static int read_counters(void *arg)
{
    tl_log *l = arg;
    l->delivered_seen = tl_stream_delivered(l->stream);
    l->overruns_seen = tl_consumer_overruns(&l->consumer);
    return 0;
}

/* Events recorded, as last read: the stream's, and those the log wrote itself. */
static uint64_t recorded(const tl_log *l) { return l->delivered_seen + l->logged_itself; }

/* The stream's counters; once the buffer is gone, as last read (log_fault adds the loss). */
static void counters(tl_log *l, uint64_t *delivered, uint64_t *overruns)
{
    guarded(l, read_counters, l);
    *delivered = recorded(l);
    *overruns = l->overruns_seen;
}

typedef struct record_args {
    tl_consumer *c;
    const tracelog_event *ev;
} record_args;

static int do_record(void *arg)
{
    record_args *a = arg;
    return tl_consumer_record_system(a->c, a->ev);
}

/* A system event of the consumer's side (flush markers, errors) into the stream. */
static void record(tl_log *l, const tracelog_event *ev)
{
    record_args a = {&l->consumer, ev};
    guarded(l, do_record, &a);
}

/*
 * A write error stops the log for good (the writer's errors are sticky: every
 * later flush fails the same way), so it is reported once: in flush_error
 * and by one POSIX_TRACE_ERROR event. Reporting each later failure again
 * would make the background flusher feed the dead log an ERROR event every
 * period, and flush_error could never be read back to 0.
 */
static void note_error(tl_log *l, int e)
{
    if (l->error)
        return;
    l->error = e;
    pthread_mutex_lock(&l->status_lock);
    if (!l->flush_error)
        l->flush_error = e;
    pthread_mutex_unlock(&l->status_lock);
    tracelog_event error = {.event_id = POSIX_TRACE_ERROR, .payload_len = sizeof e, .payload = &e};
    record(l, &error);
}

/* The errno behind a writer status (0 for success and for a full log, which the log status reports). */
static int writer_errno(tl_log *l, tracelog_status st)
{
    if (st == TRACELOG_OK || st == TRACELOG_E_LOG_FULL)
        return 0;
    tracelog_error err;
    tracelog_writer_last_error(l->writer, &err);
    return errno_of(st, &err);
}

/* Falls back to uncompressed chunks while the producers are ahead (see BEHIND). The new state. */
static int keep_up(tl_log *l, uint32_t backlog)
{
    int behind = backlog >= BEHIND || (l->behind && backlog >= CAUGHT_UP);
    if (behind != l->behind)
        tl_writer_set_raw(l->writer, behind);
    return behind;
}

/* Writes one drained event; an UNTIL_FULL log ends with POSIX_TRACE_STOP (auto != 0) where it filled up. */
static int append(tl_log *l, const tracelog_event *ev)
{
    tracelog_status st = tracelog_writer_append(l->writer, ev);
    if (st == TRACELOG_E_LOG_FULL && !l->stop_written) {
        int automatic = 1;
        tracelog_event stop = {.timestamp_ns = ev->timestamp_ns,
                               .event_id = POSIX_TRACE_STOP,
                               .payload_len = sizeof automatic,
                               .payload = &automatic};
        tracelog_writer_append_final(l->writer, &stop);
        l->stop_written = 1;
    }
    return writer_errno(l, st);
}

/*
 * A controller's drain step, run under the buffer's SIGBUS guard: up to
 * BATCH events taken, their payloads copied out of the buffer, nothing
 * allocated and no lock taken (the log's is held by the caller). `n` is
 * stored after each event is complete, so that after a fault the events
 * before it are written.
 */
#define BATCH 256
#define ARENA_BYTES (64u << 10)
struct batch {
    tl_log *l;
    uint64_t until;
    tracelog_event ev[BATCH];
    volatile uint32_t n;
    int look;         /* read the backlog (every BACKLOG_EVERY events) */
    uint32_t backlog;
    int more; /* the batch filled up: there may be more */
};

static int take_batch(void *arg)
{
    batch *b = arg;
    tl_consumer *c = &b->l->consumer;
    b->n = 0;
    b->more = 0;
    uint8_t *arena = b->l->arena;
    size_t used = 0;
    if (b->look)
        b->backlog = tl_consumer_backlog(c);
    for (uint32_t n = 0; n < BATCH && used + c->buf_cap <= b->l->arena_cap; n++) {
        tracelog_event *ev = &b->ev[n];
        if (tl_consumer_take_wait(c, ev) != TL_TAKE_EVENT)
            return 0;
        if (ev->payload_len)
            memcpy(arena + used, ev->payload, ev->payload_len);
        ev->payload = arena + used;
        used += (ev->payload_len + 7u) & ~(size_t)7u;
        atomic_signal_fence(memory_order_seq_cst);
        b->n = n + 1;
        if (ev->timestamp_ns > b->until)
            return 0;
    }
    b->more = 1;
    return 0;
}

static int log_fault(tl_log *l, uint64_t last_ts);

/*
 * How many events one drain call of a controller's log may take: twice what
 * the buffer holds at once. The traced process can write the buffer's every
 * word (a head far ahead, records that keep coming): a drain must end, so
 * that the flusher releases the log and looks for the process's end
 * (cross-process.md 9.7). What is left waits for the next drain.
 */
static uint64_t drain_budget(const tl_log *l) { return 2 * tl_consumer_capacity_records(&l->consumer) + BATCH; }

static int drain_remote(tl_log *l, uint64_t until)
{
    int e = 0;
    for (uint64_t budget = drain_budget(l);;) {
        batch *b = l->batch;
        b->until = until;
        b->look = l->batches++ % (BACKLOG_EVERY / BATCH) == 0;
        int fault = tl_remote_guard(l->remote, take_batch, b) == EFAULT;
        uint32_t n = b->n;
        if (!fault && b->look)
            l->behind = keep_up(l, b->backlog);
        for (uint32_t i = 0; i < n; i++) {
            int ae = append(l, &b->ev[i]);
            if (!e)
                e = ae;
        }
        l->drained += n;
        if (fault)
            return log_fault(l, n ? b->ev[n - 1].timestamp_ns : 0);
        if (!b->more || n >= budget)
            return e;
        budget -= n;
    }
}

/*
 * Moves the stream's events to the writer, up to the first one recorded
 * after `until` (UINT64_MAX: all of them). Caller holds the lock. Returns an
 * errno or 0.
 */
/*
 * The traced process's end is in the log, and no other process records into
 * its stream (not inherited): the end drained everything, what a later
 * drain would find is what the buffer's last scribbles made of it, and the
 * end stays the log's last event.
 */
static int after_end(const tl_log *l)
{
    return l->end_logged && l->attr.__inheritance != POSIX_TRACE_INHERITED;
}

static int drain(tl_log *l, uint64_t until)
{
    if (after_end(l))
        return 0;
    log_new_names(l);
    if (l->grouped) { /* the groups took last */
        tl_groups_hand_back(l->groups, &l->consumer);
        l->grouped = 0;
    }
    if (l->remote)
        return !tl_remote_faulted(l->remote) ? drain_remote(l, until) : l->lost ? 0 : log_fault(l, 0);
    int e = 0;
    tracelog_event ev;
    uint64_t n = 0;
    while (tl_consumer_take_wait(&l->consumer, &ev) == TL_TAKE_EVENT) {
        if (n++ % BACKLOG_EVERY == 0)
            l->behind = keep_up(l, tl_consumer_backlog(&l->consumer));
        int ae = append(l, &ev);
        if (!e)
            e = ae;
        if (ev.timestamp_ns > until && !tl_consumer_queued(&l->consumer))
            break;
    }
    l->drained += n;
    return e;
}

static int do_yield(void *c)
{
    tl_consumer_yield(c);
    return 0;
}

/*
 * Cycles in a row that may take nothing before a drain by groups returns:
 * records stamped ahead of the watermark wait for a later cycle (at most
 * the clocks' skew), but a buffer whose counters say "more" for ever must
 * not hold the log (cross-process.md 9.7). The flusher comes back.
 */
#define IDLE_CYCLES_MAX 1024

/*
 * The flusher's drain, by its groups of lanes (groups.h) in cycles, each a
 * merge set. A cycle that would outgrow a set is drained by the log's
 * consumer, up to now. Caller holds the lock. An errno or 0.
 */
static int drain_by_groups(tl_log *l)
{
    log_new_names(l);
    if (tl_remote_faulted(l->remote))
        return l->lost ? 0 : log_fault(l, 0);
    int e = 0, more = 1;
    uint64_t last_ts = 0, start = l->drained, budget = drain_budget(l);
    for (uint32_t idle = 0; more && idle < IDLE_CYCLES_MAX && l->drained - start < budget;) {
        uint64_t before = l->drained;
        if (!l->grouped) { /* the log's consumer took last: its events go out first */
            guarded(l, do_yield, &l->consumer);
            tl_groups_take_over(l->groups, &l->consumer);
            l->grouped = 1;
            e = e ? e : writer_errno(l, tl_writer_end_chunk(l->writer));
        }
        l->behind = keep_up(l, tl_groups_backlog(l->groups));
        uint64_t taken = 0;
        int too_big = 0;
        int ce = writer_errno(l, tl_groups_cycle(l->groups, &taken, &last_ts, &more, &too_big));
        l->drained += taken;
        if (tl_remote_faulted(l->remote))
            return log_fault(l, last_ts);
        if (too_big) {
            ce = drain(l, tl_consumer_now(&l->consumer));
            more = 1;
        }
        if (!e)
            e = ce;
        idle = l->drained == before ? idle + 1 : 0;
    }
    return e;
}

static void update_status(tl_log *l)
{
    tracelog_log_status st = {0};
    counters(l, &st.events_recorded, &st.stream_overruns);
    pthread_mutex_lock(&l->status_lock);
    st.flush_error = l->flush_error;
    pthread_mutex_unlock(&l->status_lock);
    tracelog_writer_set_status(l->writer, &st);
}

/*
 * The losses no later event marked (the producer stopped): an OVERFLOW each,
 * and no RESUME. Recorded, like the markers the consumer delivers, so that
 * the log's events_written never exceeds its events_recorded.
 */
typedef struct loss_args {
    tl_consumer *c;
    tracelog_event ev;
} loss_args;

static int take_loss(void *arg)
{
    loss_args *a = arg;
    return tl_consumer_take_unmarked_loss(a->c, &a->ev);
}

static void mark_unfinished_losses(tl_log *l)
{
    if (after_end(l))
        return;
    loss_args a = {.c = &l->consumer};
    int marked = 0;
    while (guarded(l, take_loss, &a) == 1) { /* a marker has no payload: nothing in the buffer to copy */
        tracelog_writer_append(l->writer, &a.ev);
        marked = 1;
    }
    if (marked)
        update_status(l);
}

/*
 * The traced process shrank the stream's buffer under a drain (the guard
 * caught the fault): what the buffer held is lost, how much cannot be
 * known. The log says so, after the events drained before: OVERFLOW (no
 * RESUME follows) and POSIX_TRACE_ERROR with EFAULT; the stream counts one
 * more overrun; and the log is finalized as for an ended process (its
 * trailer goes out with the next write). EFAULT.
 */
static int log_fault(tl_log *l, uint64_t last_ts)
{
    uint64_t now = tl_consumer_now(&l->consumer);
    int e = EFAULT;
    tracelog_event marks[2] = {
        {.timestamp_ns = now > last_ts ? now : last_ts, .event_id = POSIX_TRACE_OVERFLOW},
        {.timestamp_ns = now > last_ts ? now : last_ts, .event_id = POSIX_TRACE_ERROR, .payload_len = sizeof e,
         .payload = &e},
    };
    for (int i = 0; i < 2; i++)
        tracelog_writer_append(l->writer, &marks[i]);
    l->delivered_seen = l->delivered_seen > l->drained ? l->delivered_seen : l->drained;
    l->logged_itself += 2;
    l->overruns_seen++;
    l->lost = 1;
    l->end_logged = 1;
    return EFAULT;
}

/*
 * A controller's log, once the traced process has ended (any way): what it
 * recorded is drained (a record it died in the middle of is counted lost at
 * once: tl_posix_end_seen), then one tracelog_process_end event says how it
 * ended, and the stream is left SUSPENDED (design note, section 7). Caller
 * holds the lock. An errno or 0.
 */
static int end_seen(void *arg)
{
    tl_log *l = arg;
    tl_posix_end_seen(l->stream, &l->consumer, &l->attr);
    return 0;
}

static int log_process_end(tl_log *l)
{
    tl_proc_end end;
    if (!l->remote || l->end_logged || !tl_remote_ended(l->remote, &end))
        return 0;
    guarded(l, end_seen, l);
    int e = 0;
    /* Each drain is bounded (drain_budget); nothing is added any more, so a few take it all. */
    for (uint64_t before = UINT64_MAX, rounds = 0; l->drained != before && rounds < 16 && !e; rounds++) {
        before = l->drained;
        e = drain(l, UINT64_MAX);
    }
    mark_unfinished_losses(l); /* a record it died in the middle of, last in its lane: before the end */
    int32_t data[2] = {end.how, end.code};
    tracelog_event ev = {.timestamp_ns = tl_consumer_now(&l->consumer),
                         .event_id = TL_PROCESS_END_EVENT,
                         .pid = (uint32_t)tl_remote_pid(l->remote),
                         .payload_len = sizeof data,
                         .payload = data};
    int we = writer_errno(l, tracelog_writer_append(l->writer, &ev));
    l->logged_itself++; /* so that the log's events_written never exceeds its events_recorded */
    l->end_logged = 1;
    return e ? e : we;
}

/* Lets posix_trace_get_status answer without waiting for a flush in progress. Caller holds the lock. */
static void publish_status(tl_log *l)
{
    tracelog_log_status ls;
    tracelog_writer_get_status(l->writer, &ls);
    pthread_mutex_lock(&l->status_lock);
    l->snapshot = ls;
    pthread_mutex_unlock(&l->status_lock);
}

/*
 * Writes the status and the partial chunk out; the first time after the
 * traced process's end was logged, with a trailer (a checkpoint): the log
 * reads back complete from then on, even if this controller never gets to
 * shut the stream down. Caller holds the lock.
 */
static int write_out(tl_log *l)
{
    update_status(l);
    l->written_at = recorded(l);
    if (l->end_logged && !l->end_checkpointed) {
        l->end_checkpointed = 1;
        return writer_errno(l, tracelog_writer_checkpoint(l->writer));
    }
    return writer_errno(l, tracelog_writer_flush(l->writer));
}

/* Caller holds the lock. */
static int flush_locked(tl_log *l, int explicit_call)
{
    int se = writer_ready(l, 1); /* a write is due: made now if it was waiting for the traced process */
    if (se) {
        note_error(l, se);
        return se;
    }
    sigset_t old;
    xfsz_block(&old);
    atomic_store(&l->flushing, 1);
    if (explicit_call) {
        tracelog_event start = tl_posix_system_event(POSIX_TRACE_FLUSH_START, NULL, 0, 0);
        record(l, &start);
    }
    int e = drain(l, UINT64_MAX);
    int pe = log_process_end(l);
    if (!e)
        e = pe;
    int we = write_out(l);
    if (!e)
        e = we;
    if (e)
        note_error(l, e);
    publish_status(l);
    atomic_store(&l->flushing, 0);
    if (explicit_call) { /* recorded after the flush: it goes out with the next one */
        tracelog_event stop = tl_posix_system_event(POSIX_TRACE_FLUSH_STOP, NULL, 0, 0);
        record(l, &stop);
    }
    xfsz_restore(&old);
    return e;
}

int tl_log_flush(tl_log *l, int explicit_call)
{
    lock(l);
    int e = flush_locked(l, explicit_call);
    unlock(l);
    return e;
}

int tl_log_sync(tl_log *l)
{
    lock(l);
    int e = flush_locked(l, 0);
    if (!e) {
        tracelog_status st = tracelog_writer_sync(l->writer);
        if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL) {
            tracelog_error err;
            tracelog_writer_last_error(l->writer, &err);
            e = err.sys_errno ? err.sys_errno : EIO;
            pthread_mutex_lock(&l->status_lock);
            if (!l->flush_error)
                l->flush_error = e;
            pthread_mutex_unlock(&l->status_lock);
        }
    }
    unlock(l);
    return e;
}

int tl_log_checkpoint(tl_log *l)
{
    lock(l);
    int e = flush_locked(l, 0);
    sigset_t old;
    xfsz_block(&old);
    int ce = l->writer ? writer_errno(l, tracelog_writer_checkpoint(l->writer)) : 0;
    xfsz_restore(&old);
    unlock(l);
    return e ? e : ce;
}

typedef struct stop_args {
    tl_log *l;
    const tracelog_event *marker;
} stop_args;

static int do_stop(void *arg)
{
    stop_args *a = arg;
    return tl_stream_stop(a->l->stream, a->marker, tl_log_recorder(a->l));
}

int tl_log_stop(tl_log *l, const tracelog_event *marker)
{
    lock(l);
    stop_args a = {l, marker};
    int stopped = guarded(l, do_stop, &a) == 1;
    unlock(l);
    return stopped;
}

static int do_clear(void *c)
{
    tl_consumer_clear(c);
    return 0;
}

void tl_log_clear(tl_log *l)
{
    lock(l);
    guarded(l, do_clear, &l->consumer);
    l->grouped = 0; /* every tail moved: the groups adopt them before they take again */
    unlock(l);
}

void tl_log_get_status(tl_log *l, struct posix_trace_status_info *si)
{
    si->posix_stream_flush_status = atomic_load(&l->flushing) ? POSIX_TRACE_FLUSHING : POSIX_TRACE_NOT_FLUSHING;
    /* status_lock, not the log's lock: a flush in progress must not make us wait (FLUSHING would never be seen). */
    pthread_mutex_lock(&l->status_lock);
    const tracelog_log_status *ls = &l->snapshot;
    si->posix_stream_flush_error = l->flush_error;
    l->flush_error = 0;
    si->posix_log_overrun_status = ls->log_overruns > l->overruns_reported ? POSIX_TRACE_OVERRUN
                                                                          : POSIX_TRACE_NO_OVERRUN;
    l->overruns_reported = ls->log_overruns;
    si->posix_log_full_status = tl_posix_log_full_status(l->attr.__log_policy, ls);
    pthread_mutex_unlock(&l->status_lock);
}

tl_consumer *tl_log_recorder(tl_log *l) { return l->remote ? &l->consumer : NULL; }

uint64_t tl_log_overruns(tl_log *l)
{
    uint64_t delivered, overruns;
    counters(l, &delivered, &overruns);
    return overruns;
}

typedef struct stats_args {
    const tl_consumer *c;
    tracelog_trace_stats *st;
} stats_args;

static int consumer_stats(void *arg)
{
    stats_args *a = arg;
    tl_posix_consumer_stats(a->c, a->st);
    return 0;
}

void tl_log_get_stats(tl_log *l, tracelog_trace_stats *st)
{
    stats_args a = {&l->consumer, st};
    if (guarded(l, consumer_stats, &a) == EFAULT) { /* the buffer is gone: nothing buffered, the loss counted */
        uint64_t delivered;
        counters(l, &delivered, &st->events_lost);
        st->lanes = tl_consumer_lanes(&l->consumer);
    }
    pthread_mutex_lock(&l->status_lock);
    st->log_events_written = l->snapshot.events_written;
    st->log_events_lost = l->snapshot.log_overruns;
    pthread_mutex_unlock(&l->status_lock);
}

/*
 * The lock for the crash handler: never one its own thread holds (it crashed
 * in the middle of writing: the writer is in no state to go on), and for at
 * most CRASH_LOCK_WAIT_MS from another thread.
 */
static int crash_lock(tl_log *l)
{
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == (uintptr_t)pthread_self())
        return 0;
    struct timespec ms = {0, 1000000};
    for (int i = 0; i < CRASH_LOCK_WAIT_MS; i++) {
        if (pthread_mutex_trylock(&l->lock) == 0) {
            tl_stream_thread_drains(1);
            atomic_store_explicit(&l->owner, (uintptr_t)pthread_self(), memory_order_relaxed);
            return 1;
        }
        nanosleep(&ms, NULL);
    }
    return 0;
}

void tl_log_crash_flush(tl_log *l)
{
    if (!crash_lock(l))
        return;
    if (writer_ready(l, 1)) {
        unlock(l);
        return;
    }
    sigset_t old;
    xfsz_block(&old);
    /* Other threads may go on recording: what they record after the crash is not waited for. */
    int e = drain(l, tl_consumer_now(&l->consumer)); /* the consumer's copy of the clock: the buffer's may be gone */
    int we = write_out(l);
    if (e || we)
        note_error(l, e ? e : we);
    xfsz_restore(&old);
    unlock(l);
}

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
    tl_log *l;
    uint64_t ns;
    int look; /* at the lanes first: not after a drain that took nothing (a stuck lane would keep us awake) */
} sleep_args;

static int drainer_sleep(void *arg)
{
    const sleep_args *a = arg;
    return tl_stream_drainer_sleep(a->l->stream, a->ns, a->look ? &a->l->consumer : NULL);
}

/* Until the next timed write (now if it is due), and no longer than REMOTE_LOOK_NS for a controller. */
static uint64_t flusher_sleep_ns(const tl_log *l, uint64_t last_write)
{
    uint64_t now = tl_clock_mono_ns(), next = last_write + l->flush_interval_ns;
    uint64_t ns = next > now ? next - now : 0;
    return l->remote && ns > REMOTE_LOOK_NS ? REMOTE_LOOK_NS : ns;
}

/*
 * The flusher's groups of lanes (groups.h), once the writer exists. Not
 * UNTIL_FULL: the chunk that fills it must end a prefix in time, which a set
 * cut short would not. The helpers get the flusher's signal mask. Caller
 * holds the lock.
 */
static void open_groups(tl_log *l)
{
    l->groups_tried = 1;
    if (l->attr.__log_policy != POSIX_TRACE_UNTIL_FULL) {
        int e;
        l->groups = tl_groups_open(&l->consumer, l->remote, l->writer, &e); /* NULL: one flusher, as good */
    }
}

static void *flusher_main(void *arg)
{
    tl_log *l = arg;
    block_signals();
    lock(l);
    if (l->writer) /* else once it is made (writer_ready) */
        open_groups(l);
    unlock(l);
    uint64_t last_write = tl_clock_mono_ns();
    int took = 1; /* the last drain took events (read under the lock: posix_trace_flush drains too) */
    uint64_t exec_look_ns = EXEC_LOOK_FIRST_NS; /* while the writer waits for the traced child's exec */
    int have_writer = 0;                       /* l->writer exists (as last seen under the lock) */
    while (!atomic_load(&l->flusher_stop)) {
        sleep_args sleep = {l, flusher_sleep_ns(l, last_write), took};
        if (!have_writer && sleep.ns > exec_look_ns) {
            sleep.ns = exec_look_ns;
            exec_look_ns = exec_look_ns * 2 < REMOTE_LOOK_NS ? exec_look_ns * 2 : REMOTE_LOOK_NS;
        }
        int woken = sleep.ns ? guarded(l, drainer_sleep, &sleep) : 1;
        if (woken == EFAULT) { /* the buffer is gone: no futex to sleep on */
            struct timespec period = {0, REMOTE_LOOK_NS};
            nanosleep(&period, NULL);
        }
        /* A mutex is not fair: a flusher that always has work (a buffer that keeps saying "more")
           must not keep a shutdown or a flush out. Bounded: the waiter may be slow to run. */
        for (int turns = 0; turns < 1000 && atomic_load_explicit(&l->lock_waiters, memory_order_relaxed); turns++)
            sched_yield();
        lock(l);
        /* Looked at first: a record the process died in the middle of is then not waited for. */
        int ended = !l->end_logged && l->remote && tl_remote_ended(l->remote, NULL);
        if (l->remote) /* latched as soon as seen: the process may scribble over its answer later */
            tl_remote_joined(l->remote);
        if (!l->groups_tried && !writer_ready(l, ended))
            open_groups(l);
        have_writer = l->writer != NULL;
        if (!have_writer) { /* waiting for the traced process to be its program (or the writer failed) */
            unlock(l);
            continue;
        }
        if (!woken && !ended && tl_clock_mono_ns() - last_write < l->flush_interval_ns) {
            unlock(l); /* a controller's look for the end, between two drains */
            continue;
        }
        uint64_t drained_before = l->drained;
        atomic_store(&l->flushing, 1); /* an automatic flush of the FLUSH policy */
        int e = ended ? log_process_end(l) : l->groups ? drain_by_groups(l) : drain(l, UINT64_MAX);
        took = l->drained != drained_before;
        uint64_t now = tl_clock_mono_ns();
        ended = ended || (l->end_logged && !l->end_checkpointed); /* or its buffer was lost */
        if (ended || now - last_write >= l->flush_interval_ns) { /* a program's end goes out at once */
            /* Bounds what an end without handler (_exit, SIGKILL) loses to about one interval;
               an idle stream writes nothing. */
            uint64_t delivered, overruns;
            counters(l, &delivered, &overruns);
            int we = ended || delivered != l->written_at ? write_out(l) : 0;
            if (!e)
                e = we;
            last_write = now;
        }
        if (e)
            note_error(l, e);
        publish_status(l);
        atomic_store(&l->flushing, 0);
        unlock(l);
    }
    lock(l);
    if (l->grouped) { /* from now on the log's consumer takes: at the groups' positions */
        tl_groups_hand_back(l->groups, &l->consumer);
        l->grouped = 0;
    }
    tl_groups_close(l->groups); /* every event they took is written: each cycle ended its set */
    l->groups = NULL;
    unlock(l);
    return NULL;
}

/*
 * A controller's log of a LOOP or UNTIL_FULL stream has no flusher, yet the
 * traced process's end must not wait for the next posix_trace_flush or the
 * shutdown (design note, section 7): this thread sleeps on the pidfd and,
 * when the process ends, drains the stream, logs the end and writes it out.
 */
static void *end_watch_main(void *arg)
{
    tl_log *l = arg;
    block_signals();
    /* A child that has not exec'd its program yet: the writer is made once it has (or at the end). */
    struct pollfd wake = {l->end_wake_fd, POLLIN, 0};
    for (uint64_t look_ns = EXEC_LOOK_FIRST_NS;; look_ns = look_ns * 2 < REMOTE_LOOK_NS ? look_ns * 2 : REMOTE_LOOK_NS) {
        lock(l);
        int ready = writer_ready(l, 0);
        unlock(l);
        if (ready != EAGAIN)
            break;
        if (poll(&wake, 1, 0) > 0)
            return NULL; /* stopped */
        struct timespec look = {0, (long)look_ns};
        nanosleep(&look, NULL);
    }
    if (tl_remote_wait_end(l->remote, l->end_wake_fd)) {
        lock(l);
        flush_locked(l, 0);
        unlock(l);
    }
    return NULL;
}

static int start_end_watcher(tl_log *l)
{
    l->end_wake_fd = eventfd(0, EFD_CLOEXEC);
    if (l->end_wake_fd < 0)
        return errno == ENOMEM ? ENOMEM : EAGAIN;
    if (pthread_create(&l->end_watcher, NULL, end_watch_main, l) == 0)
        return 0;
    close(l->end_wake_fd);
    l->end_wake_fd = -1;
    return EAGAIN;
}

static void stop_end_watcher(tl_log *l)
{
    if (l->end_wake_fd < 0)
        return;
    uint64_t one = 1;
    while (write(l->end_wake_fd, &one, sizeof one) < 0 && errno == EINTR)
        ;
    pthread_join(l->end_watcher, NULL);
    close(l->end_wake_fd);
    l->end_wake_fd = -1;
}

static void stop_flusher(tl_log *l)
{
    if (!l->flusher_running)
        return;
    atomic_store(&l->flusher_stop, 1);
    tl_stream_drainer_wake(l->stream);
    pthread_join(l->flusher, NULL);
    l->flusher_running = 0;
}

static void free_log(tl_log *l)
{
    tl_remote_consumer_free(l->remote, &l->consumer);
    free(l->arena);
    free(l->batch);
    if (l->fd >= 0)
        close(l->fd);
    pthread_mutex_destroy(&l->lock);
    pthread_mutex_destroy(&l->status_lock);
    free(l);
}

/* The writer, with the header written and every event type known so far defined. */
static int start_writer(tl_log *l)
{
    tracelog_metadata meta;
    /* The consumer's copy of the clock: a controller's writer may be made once the traced process holds
       the buffer, which it may have shrunk (the stream's own fields are read under the guard only). */
    fill_metadata(&l->attr, &l->consumer.clock, l->remote, &meta);
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = policy_of(l->attr.__log_policy);
    opt.log_max_size = l->attr.__log_size ? l->attr.__log_size : 1;
    tracelog_error err;
    sigset_t old;
    xfsz_block(&old); /* the header is written here */
    tracelog_status st = tracelog_writer_create(l->fd, &meta, &opt, &l->writer, &err);
    if (st != TRACELOG_OK) {
        xfsz_restore(&old);
        l->writer = NULL;
        return st == TRACELOG_E_NOT_SEEKABLE ? EINVAL : errno_of(st, &err) ? errno_of(st, &err) : EINVAL;
    }
    char name[TRACE_EVENT_NAME_MAX + 1];
    for (trace_event_id_t id = POSIX_TRACE_ERROR; id <= POSIX_TRACE_FLUSH_STOP; id++)
        define(l, id, tl_posix_system_name(id));
    tl_posix_name_of(POSIX_TRACE_UNNAMED_USEREVENT, name, sizeof name);
    tracelog_writer_define_event(l->writer, POSIX_TRACE_UNNAMED_USEREVENT, name);
    if (l->remote)
        define(l, TL_PROCESS_END_EVENT, TL_PROCESS_END_NAME);
    log_new_names(l);
    xfsz_restore(&old);
    return 0;
}

/*
 * The writer, made when the log can say whose it is: at once, but for a
 * controller's child that has not exec'd its program yet, once it has (or
 * joined the stream, or ended), or when force says a write is due. Caller
 * holds the lock. 0 (l->writer exists), EAGAIN (not yet: nothing is to be
 * written), or the error that kept it from being made (every later call
 * gives it).
 */
static int writer_ready(tl_log *l, int force)
{
    if (l->writer)
        return 0;
    if (l->start_error)
        return l->start_error;
    if (!force && l->remote && !tl_remote_identity_known(l->remote, NULL))
        return EAGAIN;
    int e = start_writer(l);
    if (e)
        l->start_error = e;
    return e;
}

int tl_log_open(tl_log **out, tl_stream *s, const trace_attr_t *attr, int fd, tl_remote *remote)
{
    tl_log *l = calloc(1, sizeof *l);
    if (!l)
        return ENOMEM;
    l->stream = s;
    l->remote = remote;
    l->end_wake_fd = -1;
    l->attr = *attr;
    l->flush_interval_ns = (uint64_t)attr->__flush_interval_ms * 1000000u;
    pthread_mutex_init(&l->lock, NULL);
    pthread_mutex_init(&l->status_lock, NULL);
    l->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3); /* the caller's descriptor is never closed */
    int e = l->fd < 0 ? (errno == EMFILE ? EMFILE : EBADF) : 0;
    if (!e && tl_consumer_init(&l->consumer, s))
        e = ENOMEM;
    if (!e)
        tl_remote_watch_consumer(remote, &l->consumer, attr);
    if (!e && remote) {
        l->arena_cap = ARENA_BYTES + l->consumer.buf_cap; /* a batch stops once ARENA_BYTES are used */
        l->arena = malloc(l->arena_cap);
        l->batch = calloc(1, sizeof *l->batch);
        e = l->arena && l->batch ? 0 : ENOMEM;
        if (l->batch)
            l->batch->l = l;
    }
    if (!e && (!remote || tl_remote_identity_known(remote, NULL)))
        e = start_writer(l); /* else made later (writer_ready): its process has not exec'd its program yet */
    if (!e && attr->__stream_policy == POSIX_TRACE_FLUSH) {
        if (pthread_create(&l->flusher, NULL, flusher_main, l) != 0)
            e = EAGAIN;
        l->flusher_running = !e;
    } else if (!e && remote) {
        e = start_end_watcher(l);
    }
    if (e) {
        tracelog_writer_abandon(l->writer);
        free_log(l);
        return e;
    }
    tl_posix_crash_watch(l);
    *out = l;
    return 0;
}

void tl_log_abandon(tl_log *l)
{
    tl_posix_crash_unwatch(l);
    stop_flusher(l);
    stop_end_watcher(l);
    tracelog_writer_abandon(l->writer);
    free_log(l);
}

int tl_log_close(tl_log *l)
{
    tl_posix_crash_unwatch(l);
    stop_flusher(l);
    stop_end_watcher(l);
    lock(l);
    sigset_t old;
    xfsz_block(&old); /* the close writes the trailer */
    int e = flush_locked(l, 0);
    if (l->writer)
        mark_unfinished_losses(l);
    tracelog_error err;
    tracelog_status st = tracelog_writer_close(l->writer, &err); /* NULL (never made): OK, e says why */
    l->writer = NULL;
    xfsz_restore(&old);
    if (!e)
        e = errno_of(st, &err);
    unlock(l);
    free_log(l);
    return e;
}

int posix_trace_flush(trace_id_t trid)
{
    tl_trace *t;
    int e = tl_posix_acquire(trid, 1u << TL_ACTIVE_LOG, &t);
    if (e)
        return e;
    e = tl_log_flush(t->active.log, 1);
    tl_posix_release(t);
    return e;
}
