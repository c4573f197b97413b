/*
 * Trace stream identifiers. A trace_id_t is a slot number and a generation,
 * never a pointer: a stale, closed, foreign or garbage id is recognised and
 * answered with EINVAL instead of being dereferenced. Each call on a handle
 * holds a "use" so that shutdown can wake blocked readers and wait for them
 * to leave before freeing anything.
 *
 * Taking and giving back a use is one atomic operation on the slot's word,
 * without the registry lock: posix_trace_getnext_event is called once per
 * event, from any number of threads. The word (generation, open bit, uses)
 * lives in a static slot that never goes away, so a caller counts itself in
 * before it ever reaches the handle, and a handle is freed only once its
 * count fell to zero after the open bit was cleared. A read of a log
 * (pre-recorded stream) holds the slot's read lock instead of a use: it
 * never blocks, and that lock is all it needs (tl_posix_lock_prerecorded).
 *
 * TRACE_SYS_MAX is also a limit per user (design note, section 8): every
 * active stream holds an entry of the user's table (xproc/quota.c) while
 * it exists; a dead process's entries are taken back by the next creator.
 * Active streams take the first TRACE_SYS_MAX slots (a slot is also the
 * stream's bit in the event word); pre-recorded streams take the others,
 * so that logs open for reading never keep a stream from being created.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "posix/internal.h"
#include "posix/wanted.h"
#include "xproc/quota.h"

#define SLOT_OPEN (1ull << 31)           /* a live handle that takes new calls */
#define SLOT_PRERECORDED (1ull << 30)    /* ... of a pre-recorded stream */
#define SLOT_USES (SLOT_PRERECORDED - 1) /* calls in progress */
#define SLOT_GEN(w) ((uint32_t)((w) >> 32))
#define SLOTS 255 /* a trace_id_t's low byte, less 1 */
_Static_assert(TL_PRERECORDED_MAX == SLOTS - TRACE_SYS_MAX, "pre-recorded streams take the slots past the active ones");

/* The lock serialises register, unregister and the scans; acquire and release do without it. */
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    _Atomic uint64_t word; /* generation << 32 | SLOT_OPEN | SLOT_PRERECORDED | uses */
    tl_trace *_Atomic t;   /* set before the word opens, cleared after the last use left */
    /* Its handles' read lock. Here, where it never goes away, a reader of a log may take it before it
       knows the handle is still open (tl_posix_lock_prerecorded): unregister takes it once before
       the handle is freed. */
    tl_lock read_lock;
} slots[SLOTS];
static pid_t current_pid;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static tl_quota quota;  /* the user's stream table (reg_lock) */
static pid_t quota_pid; /* the process that opened it: a fork child opens it again, with its own token */
static int quota_state; /* 0 not opened yet, 1 open, -1 unusable: the limit is then per process only */

_Static_assert(TL_ACTIVE_SLOTS <= 63, "the event word has 63 stream bits");

void tl_posix_publish(int slot, tl_stream *s)
{
    atomic_store(&tl_posix_active[slot], s);
    /* A new stream is suspended, a withdrawn one wants nothing: either way its word bit is
       cleared there, and set again when the user starts it. */
    tl_posix_wanted_set(slot, 0);
}

/* A stream a controller announced (async-signal-safe: called from posix_trace_event's slow path). */
int tl_posix_publish_remote(tl_stream *s)
{
    for (int i = TRACE_SYS_MAX; i < TL_ACTIVE_SLOTS; i++) {
        tl_stream *none = NULL;
        if (atomic_compare_exchange_strong(&tl_posix_active[i], &none, s)) {
            tl_xproc_word_set(1ull << i);
            return i;
        }
    }
    return -EAGAIN;
}

int tl_posix_registry_before_fork(void)
{
    pthread_mutex_lock(&reg_lock);
    int inherited = 0;
    for (int i = 0; i < TRACE_SYS_MAX; i++) {
        tl_trace *t = slots[i].t;
        inherited |= t && t->active.stream && t->attr.__inheritance == POSIX_TRACE_INHERITED &&
                     atomic_load(&tl_posix_active[i]) != NULL;
    }
    tl_posix_wanted_before_fork();
    return inherited;
}

void tl_posix_registry_after_fork_parent(void)
{
    tl_posix_wanted_after_fork_parent();
    pthread_mutex_unlock(&reg_lock);
}

/* In a forked child: a stream of the parent's that the child no longer records into. */
static int left_by_child(int i)
{
    tl_trace *t = slots[i].t;
    return t && t->active.stream && !t->active.remote && t->attr.__inheritance != POSIX_TRACE_INHERITED;
}

/* In the child: every handle is the parent's (EINVAL here); only inherited streams keep recording. */
/* Shutdowns under way on this process's threads: exit() waits for them (control.c). */
static _Atomic int shutdowns_under_way;

void tl_posix_shutdown_begins(void) { atomic_fetch_add(&shutdowns_under_way, 1); }
void tl_posix_shutdown_ends(void) { atomic_fetch_sub(&shutdowns_under_way, 1); }
int tl_posix_shutdowns_under_way(void) { return atomic_load(&shutdowns_under_way); }

void tl_posix_registry_after_fork_child(void)
{
    atomic_store(&shutdowns_under_way, 0); /* the parent's threads': the child's exit() waits for none */
    for (int i = 0; i < SLOTS; i++) /* a parent's thread may have held one: they are the parent's handles' */
        tl_lock_init(&slots[i].read_lock);
    current_pid = getpid();
    atomic_store(&tl_posix_current_pid, (uint32_t)current_pid);
    uint64_t kept = 0; /* streams only the parent controls from now on */
    for (int i = 0; i < TRACE_SYS_MAX; i++)
        kept |= (uint64_t)(atomic_load(&tl_posix_active[i]) && !left_by_child(i)) << i;
    tl_posix_wanted_after_fork_child(kept);
    for (int i = 0; i < TRACE_SYS_MAX; i++)
        if (left_by_child(i))
            tl_posix_publish(i, NULL);
    pthread_mutex_unlock(&reg_lock);
}

int tl_posix_inherited_buffer(char name[TL_SHM_NAME_MAX], uint64_t *id)
{
    int found = 0;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < TRACE_SYS_MAX && !found; i++) {
        tl_trace *t = slots[i].t;
        found = t && !t->dying && t->owner == current_pid && t->active.named.name[0] &&
                atomic_load(&tl_posix_active[i]) != NULL;
        if (found) {
            memcpy(name, t->active.named.name, TL_SHM_NAME_MAX);
            *id = t->active.named.id;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found;
}

size_t tl_posix_own_trids(trace_id_t *out, size_t max, unsigned kinds)
{
    size_t n = 0;
    pthread_mutex_lock(&reg_lock);
    for (int i = 0; i < SLOTS && n < max; i++) {
        tl_trace *t = slots[i].t;
        if (t && !t->dying && t->owner == current_pid && (kinds >> t->kind & 1))
            out[n++] = (SLOT_GEN(atomic_load(&slots[i].word)) << 8) | (unsigned)(i + 1);
    }
    pthread_mutex_unlock(&reg_lock);
    return n;
}

static void init(void)
{
    for (int i = 0; i < SLOTS; i++)
        tl_lock_init(&slots[i].read_lock);
    current_pid = getpid();
    atomic_store(&tl_posix_current_pid, (uint32_t)current_pid);
}

static void init_once(void) { pthread_once(&once, init); }

void tl_posix_registry_init(void) { init_once(); }

/* An entry of the user's table for t (active streams only). Caller holds reg_lock. 0 or EAGAIN. */
static int quota_claim(tl_trace *t)
{
    t->quota_entry = 0;
    if (t->kind == TL_PRERECORDED)
        return 0;
    if (quota_state && quota_pid != current_pid) { /* forked: the parent's entries are not ours */
        tl_quota_close(&quota);
        quota_state = 0;
    }
    if (!quota_state) {
        char name[TL_SHM_NAME_MAX];
        tl_quota_name_from_env(name, (uint32_t)geteuid());
        quota_state = tl_quota_open(name, TRACE_SYS_MAX, &quota) == 0 ? 1 : -1;
        quota_pid = current_pid;
        if (quota_state > 0)
            tl_quota_release_own(&quota); /* left by our image before exec */
    }
    uint32_t entry;
    if (quota_state < 0)
        return 0;
    if (t->active.remote) /* a controller: the traced process shares the table (tl_quota_guard) */
        tl_quota_guard(&quota);
    if (tl_quota_acquire(&quota, &entry))
        return EAGAIN;
    t->quota_entry = entry + 1;
    return 0;
}

/* Caller holds reg_lock. */
static void quota_give_back(tl_trace *t)
{
    if (t->quota_entry && quota_state > 0 && quota_pid == current_pid)
        tl_quota_release(&quota, t->quota_entry - 1);
    t->quota_entry = 0;
}

int tl_posix_register(tl_trace *t, trace_id_t *trid)
{
    init_once();
    pthread_mutex_lock(&reg_lock);
    int first = t->kind == TL_PRERECORDED ? TRACE_SYS_MAX : 0, end = first ? SLOTS : TRACE_SYS_MAX;
    int i = first;
    while (i < end && slots[i].t)
        i++;
    if (i == end || quota_claim(t)) {
        pthread_mutex_unlock(&reg_lock);
        return EAGAIN;
    }
    uint32_t gen = SLOT_GEN(atomic_load(&slots[i].word)) + 1;
    if (gen >= (1u << 24))
        gen = 1;
    t->slot = i;
    t->owner = current_pid;
    t->read_lock = &slots[i].read_lock;
    uint64_t kind = t->kind == TL_PRERECORDED ? SLOT_PRERECORDED : 0;
    atomic_store_explicit(&slots[i].t, t, memory_order_relaxed);
    atomic_store_explicit(&slots[i].word, (uint64_t)gen << 32 | SLOT_OPEN | kind, memory_order_release);
    *trid = (gen << 8) | (unsigned)(i + 1);
    pthread_mutex_unlock(&reg_lock);
    return 0;
}

/*
 * A thread cancelled inside a trace function (XSH 2.9.5.2 lets most of them
 * be cancellation points: a write, an open, a sleep in them is one) would
 * leave its use, a lock or half-done work behind, and shutdown, close and
 * exit() waited for it for ever. So they run with cancellation disabled,
 * from the use taken to the use given back, nested calls counted. A
 * pending cancellation is acted upon on the way in, before anything is
 * taken (a loop of flushes stays cancellable), and in getnext's wait
 * (read.c).
 */
static _Thread_local int nocancel_depth, nocancel_state;

void tl_posix_cancel_off(void)
{
    if (nocancel_depth++ == 0)
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &nocancel_state);
}

void tl_posix_cancel_on(void)
{
    if (--nocancel_depth == 0)
        pthread_setcancelstate(nocancel_state, NULL);
}

int tl_posix_acquire(trace_id_t trid, unsigned kinds, tl_trace **out)
{
    if (nocancel_depth == 0)
        pthread_testcancel();
    int e = tl_posix_use(trid, kinds, out);
    if (!e)
        tl_posix_cancel_off();
    return e;
}

void tl_posix_release(tl_trace *t)
{
    tl_posix_unuse(t);
    tl_posix_cancel_on();
}

int tl_posix_use(trace_id_t trid, unsigned kinds, tl_trace **out)
{
    unsigned slot = (trid & 0xff) - 1;
    if (slot >= SLOTS)
        return EINVAL;
    init_once();
    *out = NULL;
    _Atomic uint64_t *word = &slots[slot].word;
    uint64_t w = atomic_load_explicit(word, memory_order_acquire);
    do {
        if (!(w & SLOT_OPEN) || SLOT_GEN(w) != trid >> 8)
            return EINVAL;
    } while (!atomic_compare_exchange_weak_explicit(word, &w, w + 1, memory_order_acquire, memory_order_acquire));
    tl_trace *t = atomic_load_explicit(&slots[slot].t, memory_order_relaxed);
    /* The pid is kept by the fork handler: no system call on every read. */
    if (t->owner != tl_posix_pid() || !(kinds >> t->kind & 1)) {
        tl_posix_unuse(t);
        return EINVAL;
    }
    *out = t;
    return 0;
}

void tl_posix_unuse(tl_trace *t)
{
    atomic_fetch_sub_explicit(&slots[t->slot].word, 1, memory_order_release);
}

/*
 * Taking and giving back a use are two locked instructions, the read lock
 * two more, and on a log that is a large part of a getnext (a third of an
 * analyzer's samples while the other CPU was busy). The lock alone is
 * enough there: the handle is checked again under it, and unregister takes
 * it after it closed the slot and before anything is freed. That lock is a
 * tl_lock (common/lock.h), inline: pthread_mutex_lock and unlock cost this
 * path 55 of its 114 instructions an event, and an analyzer 1.26x its time.
 */
int tl_posix_lock_prerecorded(trace_id_t trid, tl_trace **out)
{
    unsigned slot = (trid & 0xff) - 1;
    if (slot >= SLOTS)
        return EINVAL;
    _Atomic uint64_t *word = &slots[slot].word;
    uint64_t w = atomic_load_explicit(word, memory_order_acquire);
    if (!(w & SLOT_OPEN) || SLOT_GEN(w) != trid >> 8)
        return EINVAL;
    if (!(w & SLOT_PRERECORDED))
        return ENOENT;
    tl_lock_take(&slots[slot].read_lock); /* initialised: the slot was opened (init_once) */
    w = atomic_load_explicit(word, memory_order_acquire);
    tl_trace *t = atomic_load_explicit(&slots[slot].t, memory_order_relaxed);
    if (!(w & SLOT_OPEN) || SLOT_GEN(w) != trid >> 8 || !(w & SLOT_PRERECORDED) || t->owner != tl_posix_pid()) {
        tl_lock_give(&slots[slot].read_lock);
        return EINVAL;
    }
    *out = t;
    return 0;
}

static int wake_readers(void *s)
{
    tl_stream_wake_readers(s);
    return 0;
}

int tl_posix_unregister(tl_trace *t)
{
    _Atomic uint64_t *word = &slots[t->slot].word;
    pthread_mutex_lock(&reg_lock);
    if (!(atomic_load(word) & SLOT_OPEN)) { /* another thread's shutdown or close came first: it waits for our use */
        pthread_mutex_unlock(&reg_lock);
        tl_posix_release(t);
        return EINVAL;
    }
    __atomic_store_n(&t->dying, 1, __ATOMIC_RELEASE);
    atomic_fetch_and(word, ~SLOT_OPEN); /* no new uses from here on */
    if (t->active.stream && !t->active.remote)
        tl_posix_publish(t->slot, NULL);
    pthread_mutex_unlock(&reg_lock);
    /* Readers blocked on the stream wake up, see `dying` and leave with EINVAL. */
    while ((atomic_load_explicit(word, memory_order_acquire) & SLOT_USES) > 1) {
        if (t->active.stream)
            tl_remote_guard(t->active.remote, wake_readers, t->active.stream);
        usleep(1000);
    }
    tl_lock_take(t->read_lock); /* a reader that took it without a use (tl_posix_lock_prerecorded) is done */
    tl_lock_give(t->read_lock);
    pthread_mutex_lock(&reg_lock);
    atomic_fetch_sub(word, 1);
    atomic_store(&slots[t->slot].t, NULL);
    quota_give_back(t);
    pthread_mutex_unlock(&reg_lock);
    return 0;
}
