#include "stream/stream.h"

#include <errno.h>
#include <stddef.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracelog/common.h"

#define TL_SHM_MAGIC 0x4D485354u /* "TSHM" */

/* A padding record may be only 16 bytes long: commit and kind_size must fit in them. */
_Static_assert(offsetof(tl_rec, kind_size) + sizeof(uint32_t) <= 16, "pad records hold commit and kind_size");
_Static_assert(sizeof(tl_rec) == TL_REC_HEADER && TL_REC_HEADER % 8 == 0, "record header");

uint64_t tl_clock_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int64_t realtime_offset(void)
{
    struct timespec rt, mono;
    clock_gettime(CLOCK_REALTIME, &rt);
    clock_gettime(CLOCK_MONOTONIC, &mono);
    return ((int64_t)rt.tv_sec - (int64_t)mono.tv_sec) * 1000000000 + (rt.tv_nsec - mono.tv_nsec);
}

/* Twice the processors, as a power of two from 4 to 16: threads rarely share a lane. */
static uint32_t auto_lanes(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    uint32_t lanes = 4;
    while (lanes < 16 && (long)lanes < 2 * n)
        lanes *= 2;
    return lanes;
}

tl_shm *tl_stream_create(const tl_stream_params *p)
{
    uint32_t nlanes = auto_lanes();
    while (p->nlanes && nlanes > p->nlanes) /* a power of two, so a thread's lane is a mask away */
        nlanes /= 2;
    while (p->nlanes && nlanes < p->nlanes && nlanes < TL_MAX_LANES / 2)
        nlanes *= 2;
    uint64_t min_lane = 4u * tl_rec_size(p->max_data); /* a lane always holds a few records */
    if (min_lane < 4096)
        min_lane = 4096;
    /*
     * Every lane gets the whole stream size, so that a thread can always
     * record what POSIX promises fits in the stream (the sum of the events'
     * maximum sizes); memory is only used as threads write. A power of two,
     * so that positions wrap with a mask rather than a division.
     */
    if (p->stream_size > (1ull << 40)) {
        errno = ENOMEM;
        return NULL;
    }
    uint64_t lane = 4096;
    while (lane < p->stream_size || lane < min_lane)
        lane *= 2;
    uint64_t lanes_off = (sizeof(tl_shm) + 63) & ~(uint64_t)63;
    uint64_t data_off = (lanes_off + sizeof(tl_lane) * (nlanes + 1) + 4095) & ~(uint64_t)4095;
    if (lane > (UINT64_MAX - data_off - TL_SYS_LANE_SIZE) / nlanes) {
        errno = ENOMEM; /* the size would wrap around: no mapping could hold it */
        return NULL;
    }
    uint64_t total = data_off + lane * nlanes + TL_SYS_LANE_SIZE;
    void *m = mmap(NULL, total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        errno = ENOMEM;
        return NULL;
    }
    tl_shm *s = m; /* fresh anonymous memory is zero: every counter starts at 0 */
    s->magic = TL_SHM_MAGIC;
    s->policy = p->policy;
    s->nlanes = nlanes;
    s->lane_size = lane;
    s->max_data = p->max_data;
    s->creator_pid = (uint32_t)getpid();
    s->realtime_offset = realtime_offset();
    s->lanes_offset = lanes_off;
    s->data_offset = data_off;
    s->total_size = total;
    for (uint32_t i = 0; i <= nlanes; i++)
        tl_lanes(s)[i].index = i;
    if (sem_init(&s->reader_sem, 1, 0)) {
        munmap(m, total);
        return NULL;
    }
    return s;
}

void tl_stream_destroy(tl_shm *s)
{
    if (!s)
        return;
    atomic_store(&s->state, TL_DEAD);
    /*
     * A producer that loaded this stream's address just before it was
     * unpublished may still touch it. Instead of unmapping, replace the
     * pages with fresh zero pages: the memory is released, and a late
     * producer finds state 0 (not running) and leaves. Other processes that
     * share the mapping (inherited children) keep their view and see DEAD.
     */
    uint64_t total = s->total_size;
    if (mmap(s, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
        madvise(s, total, MADV_DONTNEED);
}

void tl_stream_clear(tl_shm *s)
{
    for (uint32_t i = 0; i <= s->nlanes; i++) {
        tl_lane *l = &tl_lanes(s)[i];
        atomic_store(&l->tail, atomic_load(&l->head));
        atomic_store(&l->dropped_acked, atomic_load(&l->dropped));
        atomic_store(&l->lost, 0);
    }
    atomic_store(&s->full, 0);
}

/* ---- producer --------------------------------------------------------------- */

static void futex_wake(_Atomic uint32_t *word)
{
    atomic_fetch_add(word, 1);
    syscall(SYS_futex, word, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

/* LOOP: frees room at the tail by discarding the oldest record. 0, or -1 if it cannot. */
static int drop_oldest(tl_lane *l, uint8_t *data, uint64_t cap)
{
    uint64_t t = atomic_load(&l->tail);
    uint64_t rem = cap - (t & (cap - 1));
    if (rem < 16) {
        atomic_compare_exchange_strong(&l->tail, &t, t + rem);
        return 0;
    }
    tl_rec *r = (tl_rec *)(data + (t & (cap - 1)));
    if (atomic_load_explicit(&r->commit, memory_order_acquire) != t + 1)
        return -1; /* the oldest record is still being written */
    uint32_t kind = r->kind_size >> 28, size = r->kind_size & 0x0fffffff;
    if (kind == TL_KIND_PAD)
        size = (uint32_t)rem; /* a pad has no more than commit and kind_size: read nothing else */
    uint64_t ts = kind == TL_KIND_EVENT ? r->ts : 0;
    if (size < 16 || size > rem)
        return -1;
    if (!atomic_compare_exchange_strong(&l->tail, &t, t + size))
        return 0; /* someone else moved the tail: re-check the room */
    if (kind == TL_KIND_EVENT) {
        if (atomic_load(&l->dropped) == atomic_load(&l->dropped_acked))
            atomic_store(&l->dropped_first_ts, ts);
        atomic_fetch_add(&l->dropped, 1);
        atomic_fetch_add(&l->overruns, 1);
    }
    return 0;
}

static void write_rec(uint8_t *at, uint32_t kind, uint32_t size, uint32_t id, uint64_t ts, uint32_t pid,
                      uint32_t len_trunc, uint64_t tid, uint64_t addr, uint32_t ktid)
{
    tl_rec *r = (tl_rec *)at;
    r->kind_size = size | kind << 28;
    r->event_id = id;
    r->ts = ts;
    r->pid = pid;
    r->len_trunc = len_trunc;
    r->tid = tid;
    r->addr = addr;
    r->ktid = ktid;
}

/* Lost because the lane is full (UNTIL_FULL, FLUSH, system lane). */
static void lose(tl_shm *s, tl_lane *l, uint64_t ts)
{
    atomic_fetch_add(&l->overruns, 1);
    if (s->policy == TRACELOG_POLICY_UNTIL_FULL && l->index != s->nlanes) {
        uint32_t running = TL_RUNNING;
        if (atomic_compare_exchange_strong(&s->state, &running, TL_SUSPENDED)) {
            atomic_store(&s->autostopped, 1);
            atomic_store(&s->full, 1);
            uint32_t one = 1;
            tl_stream_record(s, s->nlanes, 3 /* POSIX_TRACE_STOP */, &one, sizeof one, 0, 0, 0, 0, 0);
        }
        return;
    }
    if (atomic_fetch_add(&l->lost, 1) == 0)
        atomic_store(&l->lost_first_ts, ts);
    if (!atomic_exchange(&s->full, 1))
        futex_wake(&s->flusher_seq); /* once per loss episode, not per event */
}

/*
 * FLUSH policy: wake the flusher early when a lane is a quarter full. Checked
 * only when the head crossed a 64 KiB boundary, and the system call is made
 * only while the flusher sleeps, so the common path stays syscall-free.
 */
static void maybe_wake_flusher(tl_shm *s, tl_lane *l, uint64_t cap)
{
    uint64_t used = atomic_load_explicit(&l->head, memory_order_relaxed) -
                    atomic_load_explicit(&l->tail, memory_order_relaxed);
    if (used >= cap / 4 && atomic_exchange(&s->flusher_sleeping, 0))
        futex_wake(&s->flusher_seq);
}

/*
 * Room for need more bytes after h? The tail lives on the consumer's cache
 * line: producers read it only when the value they saw last says no room,
 * so a busy consumer does not slow every event down.
 */
static inline int has_room(tl_lane *l, uint64_t h, uint64_t need, uint64_t cap)
{
    if (h + need - atomic_load_explicit(&l->tail_seen, memory_order_relaxed) <= cap)
        return 1;
    uint64_t t = atomic_load(&l->tail);
    atomic_store_explicit(&l->tail_seen, t, memory_order_relaxed);
    return h + need - t <= cap;
}

int tl_stream_record(tl_shm *s, uint32_t lane, uint32_t event_id, const void *data,
                           uint32_t len, uint32_t truncation, uint64_t addr, uint64_t tid,
                           uint32_t pid, uint32_t ktid)
{
    tl_lane *l = &tl_lanes(s)[lane];
    uint8_t *base = tl_lane_data(s, lane);
    uint64_t cap = tl_lane_cap(s, lane);
    uint64_t bit = 1ull << lane;
    if (!(atomic_load_explicit(&s->used_lanes, memory_order_relaxed) & bit))
        atomic_fetch_or(&s->used_lanes, bit);
    int recorded = 0, crossed = 0;
    for (;;) {
        uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed);
        uint64_t ts = tl_clock_mono_ns() + (uint64_t)s->realtime_offset;
        uint64_t lost = s->policy == TRACELOG_POLICY_FLUSH ? atomic_load(&l->lost) : 0;
        uint32_t size = tl_rec_size(len) + (lost ? TL_REC_HEADER : 0);
        uint64_t rem = cap - (h & (cap - 1));
        uint64_t pad = rem < size ? rem : 0; /* records never wrap; a tail under 16 bytes is skipped implicitly */
        uint64_t need = pad + size;
        if (s->policy == TRACELOG_POLICY_LOOP && lane != s->nlanes && !has_room(l, h, need, cap)) {
            if (!atomic_load_explicit(&s->full, memory_order_relaxed))
                atomic_store(&s->full, 1);
            while (h + need - atomic_load(&l->tail) > cap)
                if (drop_oldest(l, base, cap))
                    break;
        }
        if (!has_room(l, h, need, cap)) {
            lose(s, l, ts);
            break;
        }
        if (!atomic_compare_exchange_weak(&l->head, &h, h + need))
            continue; /* another producer or a signal handler got here first: fresh timestamp */
        /* The consumer may have delivered events newer than our clock read
           while we were between it and the reservation (see stream.h). */
        if (ts < atomic_load(&s->watermark))
            ts = tl_clock_mono_ns() + (uint64_t)s->realtime_offset;
        /* Stopped (or auto-stopped) since we looked: STOP is taken after the state
           changes, so an event of ours could land after it. It becomes a hole. */
        int stopped = lane != s->nlanes && atomic_load(&s->state) != TL_RUNNING;
        crossed = (h ^ (h + need)) >> 16 != 0;
        if (pad >= 16) {
            /* Only commit and kind_size: a pad can be as short as 16 bytes, less than a full header, and
               writing a whole header would overwrite the start of the next lane. */
            tl_rec *p = (tl_rec *)(base + (h & (cap - 1)));
            p->kind_size = (uint32_t)pad | (uint32_t)TL_KIND_PAD << 28;
            atomic_store_explicit(&p->commit, h + 1, memory_order_release);
        }
        uint64_t pos = h + pad;
        if (lost) {
            /* Marks the loss where it happened: the consumer turns it into OVERFLOW and RESUME. */
            write_rec(base + (pos & (cap - 1)), TL_KIND_LOSS, TL_REC_HEADER, 0, ts, 0, 0, lost,
                      atomic_load(&l->lost_first_ts), 0);
            atomic_store_explicit(&((tl_rec *)(base + (pos & (cap - 1))))->commit, pos + 1, memory_order_release);
            atomic_fetch_sub(&l->lost, lost);
            pos += TL_REC_HEADER;
        }
        uint8_t *at = base + (pos & (cap - 1));
        write_rec(at, stopped ? TL_KIND_SKIP : TL_KIND_EVENT, tl_rec_size(len), event_id, ts, pid,
                  len | truncation << 30, tid, addr, ktid);
        if (len && !stopped)
            memcpy(at + TL_REC_HEADER, data, len);
        atomic_store_explicit(&((tl_rec *)at)->commit, pos + 1, memory_order_release);
        if (stopped && atomic_load(&s->autostopped))
            atomic_fetch_add(&l->overruns, 1);
        recorded = !stopped;
        break;
    }
    if (crossed && s->policy == TRACELOG_POLICY_FLUSH)
        maybe_wake_flusher(s, l, cap);
    if (recorded && atomic_load_explicit(&s->waiters, memory_order_relaxed))
        sem_post(&s->reader_sem); /* async-signal-safe; only while a reader sleeps */
    return recorded;
}
