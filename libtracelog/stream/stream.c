/*
 * The stream's mapping, its control words, its waiting and the producers'
 * slow paths (the design is in stream.h, the producers' fast path in
 * produce.h, the consumer in consume.c).
 */
#define _GNU_SOURCE /* sched_getcpu */
#include "stream/produce.h"

#include <errno.h>
#include <sched.h>
#include <stddef.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tracelog/common.h"

/*
 * Names the layout of the shared header as well as the kind of object: a
 * controller and a traced process built from different library versions
 * may share a stream, so every change of tl_stream's layout changes the
 * magic, and a mapping with another one is refused (tl_stream_check: EINVAL)
 * instead of misread. "TSH2": the clock (TSC or clock_gettime) replaced
 * realtime_offset. "TSH3": 48-byte record headers (the data length in the
 * size's low bits, the truncation status in the id's top bits). "TSH4": the
 * readers' futex word replaced a semaphore.
 */
#define TL_STREAM_MAGIC 0x34485354u /* "TSH4" */

/* A padding record may be only 16 bytes long: commit and kind_size must fit in them. */
_Static_assert(offsetof(tl_rec, kind_size) + sizeof(uint32_t) <= 16, "pad records hold commit and kind_size");
_Static_assert(sizeof(tl_rec) == TL_REC_HEADER && TL_REC_HEADER % 8 == 0, "record header");
_Static_assert(TL_FILTER_IDS <= 1u << 30, "an event id leaves the top 2 bits of id_trunc to the truncation status");
_Static_assert(TL_MAX_SYS_DATA <= TL_SYS_LANE_SIZE / 4, "the system lane holds a few of its largest records");

static tl_lane *lanes(tl_stream *s) { return tl_stream_lane(s, 0); }

/* Twice the processors, as a power of two from 4 to 16: threads rarely share a lane. */
static uint32_t auto_lanes(void)
{
    long n = sysconf(_SC_NPROCESSORS_CONF);
    uint32_t lanes = 4;
    while (lanes < 16 && (long)lanes < 2 * n)
        lanes *= 2;
    return lanes;
}

/* Where everything lies in a stream's mapping. */
typedef struct layout {
    uint32_t nlanes;
    uint64_t lane_size, lanes_offset, data_offset, total_size;
} layout;

/* The layout for p: 0, EINVAL or ENOMEM. */
static int layout_of(const tl_stream_params *p, layout *l)
{
    if (p->max_data > TL_MAX_DATA_LIMIT || p->max_sys_data > TL_MAX_SYS_DATA || p->wait_us > TL_MAX_WAIT_US)
        return EINVAL;
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
    if (p->stream_size > TL_MAX_LANE_SIZE)
        return ENOMEM;
    uint64_t lane = 4096;
    while (lane < p->stream_size || lane < min_lane)
        lane *= 2;
    uint64_t data_off = tl_stream_data_offset(nlanes);
    if (lane > (UINT64_MAX - data_off - TL_SYS_LANE_SIZE) / nlanes)
        return ENOMEM; /* the size would wrap around: no mapping could hold it */
    *l = (layout){nlanes, lane, TL_LANES_OFFSET, data_off,
                  data_off + lane * nlanes + TL_SYS_LANE_SIZE};
    return 0;
}

/* Lays a stream out in zero-filled memory m. NULL with errno on failure. */
static tl_stream *init_in(void *m, const tl_stream_params *p, const layout *l)
{
    tl_stream *s = m; /* zero-filled: every counter starts at 0 */
    s->magic = TL_STREAM_MAGIC;
    s->policy = p->policy;
    s->nlanes = l->nlanes;
    s->lane_size = l->lane_size;
    s->max_data = p->max_data;
    s->max_sys_data = p->max_sys_data;
    s->wait_us = p->policy == TRACELOG_POLICY_FLUSH ? p->wait_us : 0;
    s->markers = p->markers;
    tl_clock_init(&s->clock);
    s->lanes_offset = l->lanes_offset;
    s->data_offset = l->data_offset;
    s->total_size = l->total_size;
    for (uint32_t i = 0; i <= l->nlanes; i++)
        lanes(s)[i].index = i;
    return s;
}

tl_stream *tl_stream_create(const tl_stream_params *p)
{
    layout l;
    int e = layout_of(p, &l);
    if (e) {
        errno = e;
        return NULL;
    }
    void *m = mmap(NULL, l.total_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (m == MAP_FAILED) {
        errno = ENOMEM;
        return NULL;
    }
    tl_stream *s = init_in(m, p, &l);
    if (!s)
        munmap(m, l.total_size);
    return s;
}

uint64_t tl_stream_bytes(const tl_stream_params *p)
{
    layout l;
    return layout_of(p, &l) ? 0 : l.total_size;
}

tl_stream *tl_stream_create_in(void *map, uint64_t size, const tl_stream_params *p)
{
    layout l;
    int e = layout_of(p, &l);
    if (!e && size < l.total_size)
        e = EINVAL;
    if (e) {
        errno = e;
        return NULL;
    }
    return init_in(map, p, &l);
}

static int power_of_two(uint64_t v) { return v && !(v & (v - 1)); }

int tl_stream_check(const void *map, uint64_t size)
{
    const tl_stream *s = map;
    if (size < sizeof *s || s->magic != TL_STREAM_MAGIC || s->policy < 1 || s->policy > 3)
        return EINVAL;
    uint32_t n = s->nlanes;
    if (!power_of_two(n) || n > TL_MAX_LANES / 2 || !power_of_two(s->lane_size) || s->lane_size < 4096 ||
        s->lane_size > TL_MAX_LANE_SIZE || s->max_data > TL_MAX_DATA_LIMIT || s->max_sys_data > TL_MAX_SYS_DATA ||
        s->wait_us > TL_MAX_WAIT_US)
        return EINVAL;
    const tl_clock *c = &s->clock; /* a clock no creator makes: its times would be nonsense */
    if (c->kind > TL_CLOCK_TSC || (c->kind == TL_CLOCK_TSC && (c->mult == 0 || c->shift > 63)))
        return EINVAL;
    uint64_t data_off = tl_stream_data_offset(n);
    if (s->lanes_offset != TL_LANES_OFFSET || s->data_offset != data_off ||
        s->total_size != data_off + s->lane_size * n + TL_SYS_LANE_SIZE || s->total_size > size)
        return EINVAL;
    return 0;
}

void tl_stream_end(tl_stream *s) { atomic_store(&s->state, TL_DEAD); }

void tl_stream_destroy(tl_stream *s, uint64_t size)
{
    if (!s)
        return;
    tl_stream_end(s);
    /*
     * A producer that loaded this stream's address just before it was
     * unpublished may still touch it. Instead of unmapping, replace the
     * pages with fresh zero pages: the memory is released, and a late
     * producer finds state 0 (not running) and leaves. Other processes that
     * share the mapping (inherited children) keep their view and see DEAD.
     * The range is never unmapped: nothing proves that no producer is still
     * inside it (the event path counts none), and a range unmapped and
     * mapped again for another stream took a late producer's record into
     * that live stream (a review, 6a07491). It costs address space only
     * (the default stream's 32 MiB a create and shutdown: about 4 million
     * before 128 TiB run out). And no memory is committed for it
     * (MAP_NORESERVE): counted as committed, these ranges made fork() fail
     * with ENOMEM after a few thousand create and shutdown rounds.
     */
    if (mmap(s, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) ==
        MAP_FAILED)
        madvise(s, size, MADV_DONTNEED);
}

/* ---- what callers outside stream/ read ------------------------------------------- */

uint64_t tl_stream_lane_size(const tl_stream *s) { return s->lane_size; }
uint32_t tl_stream_lanes(const tl_stream *s) { return s->nlanes; }
uint64_t tl_stream_stamp(const tl_stream *s) { return tl_clock_stamp(&s->clock); }
int tl_stream_running(tl_stream *s) { return atomic_load(&s->state) == TL_RUNNING; }
int tl_stream_full(tl_stream *s) { return atomic_load(&s->full) != 0; }
uint64_t tl_stream_delivered(tl_stream *s) { return atomic_load(&s->delivered); }

int tl_stream_user_lanes_written(const tl_stream *s)
{
    uint32_t nlanes = s->nlanes; /* a shared buffer's word: any value only bounds a mask */
    uint64_t user = nlanes >= 64 ? ~0ull : (1ull << nlanes) - 1;
    return (atomic_load(&((tl_stream *)s)->used_lanes) & user) != 0;
}

/* ---- control ------------------------------------------------------------------ */

int tl_stream_may_start(tl_stream *s)
{
    return atomic_load(&s->state) == TL_SUSPENDED && !atomic_load(&s->autostopped);
}

void tl_stream_set_running(tl_stream *s) { atomic_store(&s->state, TL_RUNNING); }

int tl_stream_start(tl_stream *s, const tracelog_event *marker)
{
    if (!tl_stream_may_start(s))
        return 0;
    if (marker)
        tl_stream_record_system(s, marker);
    tl_stream_set_running(s);
    return 1;
}

/*
 * STOP comes after every event the stream recorded (issue 24, item 6): the
 * stopper changes the state out of RUNNING, then records STOP, and a
 * producer records an event only if it still saw RUNNING after reserving
 * (produce.h; else its record becomes a SKIP). The reader merges by
 * timestamp, so every recorded event's stamp must be below STOP's, and the
 * order of the calls alone does not give that: the clock is read by rdtsc,
 * which the CPU may execute before an older locked instruction completes
 * (measured on a Xeon: right after a compare-and-swap of a line another
 * core reads, rdtsc reads on average 250 ticks less than after an lfence,
 * which waits for the swap). STOP could be stamped before the state change
 * was visible: a producer that read its clock after STOP's and still saw
 * RUNNING recorded an event that the reader put after the STOP
 * (test_posix_stress, 1 to 3 runs in 10 on some machines, issue 24; never
 * seen on that Xeon's two cores, to which the swap's invalidation comes
 * before the stamp is read, but nothing in the architecture promises it).
 *
 * tl_stream_suspend's fence is the fix: every clock read after it (STOP's
 * own, in tl_stream_record or tl_consumer_record_system) runs after the
 * state change is visible to every CPU (mfence, then lfence, which lets no
 * later instruction start before the earlier ones completed). Then, for a
 * producer P whose event was recorded, and the stopper S:
 *   - P read its stamp before its compare-and-swap on the lane head
 *     completed (the swap is a locked store, which completes after every
 *     older instruction retired), or after it but before its state load
 *     (the fresh stamp of produce.h, taken between two lfences);
 *   - P's state load saw RUNNING: it was performed before S's change of the
 *     state (a locked instruction: one point in the global order, and P's
 *     load, after P's own locked swap, is ordered after that swap);
 *   - S read STOP's stamp after its change of the state completed.
 * So P's stamp is older than STOP's on the stream's clock (the TSC is one
 * clock for every CPU where the kernel trusts it, clock.h; clock_gettime is
 * monotonic across CPUs), and a tie puts the user lane first (consume.c),
 * whatever the consumer's batches: nothing waits, no producer pays for it.
 * UNTIL_FULL's automatic STOP (tl_stream_lose) is made the same way.
 */
static void stamp_after_state_change(void)
{
#if TL_HAVE_TSC
    _mm_mfence();
    _mm_lfence();
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

int tl_stream_suspend(tl_stream *s)
{
    uint32_t running = TL_RUNNING;
    if (!atomic_compare_exchange_strong(&s->state, &running, TL_SUSPENDED))
        return 0;
    stamp_after_state_change(); /* see above */
    return 1;
}

int tl_stream_stop(tl_stream *s, const tracelog_event *marker)
{
    if (!tl_stream_suspend(s))
        return 0;
    if (marker)
        tl_stream_record_system(s, marker);
    return 1;
}

void tl_stream_get_filter(tl_stream *s, uint64_t out[TL_FILTER_WORDS])
{
    for (int w = 0; w < TL_FILTER_WORDS; w++)
        out[w] = atomic_load(&s->filter[w]);
}

void tl_stream_set_filter(tl_stream *s, const uint64_t in[TL_FILTER_WORDS])
{
    for (int w = 0; w < TL_FILTER_WORDS; w++)
        atomic_store(&s->filter[w], in[w]);
}

uint64_t tl_stream_buffered(tl_stream *s)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i <= s->nlanes; i++) {
        tl_lane *l = &lanes(s)[i];
        uint64_t used = atomic_load(&l->head) - atomic_load(&l->tail);
        n += used / tl_rec_size(0); /* an upper bound: records are at least this big */
    }
    return n;
}

uint64_t tl_stream_overruns(tl_stream *s)
{
    uint64_t n = 0;
    for (uint32_t i = 0; i <= s->nlanes; i++)
        n += atomic_load(&lanes(s)[i].overruns);
    return n;
}

/* ---- waiting ---------------------------------------------------------------- */

static void futex_wake(_Atomic uint32_t *word)
{
    atomic_fetch_add(word, 1);
    syscall(SYS_futex, word, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
}

uint32_t tl_stream_wait_begin(tl_stream *s)
{
    atomic_fetch_add(&s->waiters, 1); /* sequentially consistent: before the look that follows */
    return atomic_load(&s->reader_seq);
}

void tl_stream_wait_end(tl_stream *s) { atomic_fetch_sub(&s->waiters, 1); }

void tl_stream_wake_readers(tl_stream *s)
{
    atomic_fetch_add(&s->reader_seq, 1);
    syscall(SYS_futex, &s->reader_seq, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

int tl_stream_sleep(tl_stream *s, uint32_t seq, const struct timespec *until)
{
    /* The deadline is absolute on CLOCK_REALTIME, as the POSIX readers' is. */
    long r = syscall(SYS_futex, &s->reader_seq, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, seq, until, NULL,
                     FUTEX_BITSET_MATCH_ANY);
    return r != 0 && errno == EINTR ? EINTR : 0;
}

void tl_stream_drainer_wake(tl_stream *s) { futex_wake(&s->drainer_seq); }

#define ROOM_RECHECK_NS 1000000u /* a waiting producer looks at the stream's state this often */
#define ROOM_WAKE_PART 8         /* waiting producers are woken once 1/8 of the lane is free */

/* initial-exec TLS: no lazy allocation, so it is safe in a signal handler. */
static __thread int draining __attribute__((tls_model("initial-exec")));

void tl_stream_thread_drains(int on) { draining += on ? 1 : -1; }

int tl_stream_wait_room(tl_stream *s, tl_lane *l, uint64_t need, uint64_t cap)
{
    uint32_t us = TL_READ_ONCE(s->wait_us);
    if (!us || us > TL_MAX_WAIT_US || draining || atomic_load_explicit(&l->wait_off, memory_order_relaxed))
        return 0;
    uint64_t deadline = tl_clock_mono_ns() + us * 1000ull;
    /* Counted before the tail is looked at, as the consumer stores the tail before it looks at the count
       (both sequentially consistent): either we see the room, or it sees us and wakes us. */
    atomic_fetch_add(&l->room_waiters, 1);
    int room = 0;
    for (;;) {
        uint32_t seq = atomic_load(&l->room_seq);
        uint64_t t = atomic_load(&l->tail);
        if (atomic_load_explicit(&l->head, memory_order_relaxed) + need - t <= cap) {
            atomic_store_explicit(&l->tail_seen, t, memory_order_relaxed);
            room = 1;
            break;
        }
        if (atomic_load(&s->state) != TL_RUNNING)
            break; /* stopped (its events are not recorded), ended or destroyed: nothing to wait for */
        uint64_t now = tl_clock_mono_ns();
        if (now >= deadline) {
            atomic_store(&l->wait_off, 1);
            break;
        }
        if (atomic_exchange(&s->drainer_sleeping, 0))
            futex_wake(&s->drainer_seq);
        uint64_t ns = deadline - now < ROOM_RECHECK_NS ? deadline - now : ROOM_RECHECK_NS;
        struct timespec rel = {0, (long)ns};
        syscall(SYS_futex, &l->room_seq, FUTEX_WAIT, seq, &rel, NULL, 0);
    }
    atomic_fetch_sub(&l->room_waiters, 1);
    return room;
}

void tl_stream_room_made(tl_lane *l, uint64_t cap)
{
    atomic_thread_fence(memory_order_seq_cst); /* the tail's store before the look at the waiters (see above) */
    if (atomic_load_explicit(&l->wait_off, memory_order_relaxed))
        atomic_store_explicit(&l->wait_off, 0, memory_order_relaxed);
    if (!atomic_load_explicit(&l->room_waiters, memory_order_relaxed))
        return;
    /* Woken for an eighth of the lane at least (or an empty lane), not for each step the consumer
       gives back: a producer woken for a few records waits again at once, and each wake-up costs
       more than the records it lets through. A waiter also looks by itself every ROOM_RECHECK_NS. */
    uint64_t used = atomic_load(&l->head) - atomic_load(&l->tail);
    if (used > cap - cap / ROOM_WAKE_PART)
        return;
    atomic_fetch_add(&l->room_seq, 1);
    futex_wake(&l->room_seq);
}

/* ---- producers: the slow paths of produce.h ------------------------------------ */

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
    uint32_t kind = tl_rec_kind(r->kind_size), size = tl_rec_bytes(r->kind_size);
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

int tl_stream_reserve_slow(tl_stream *s, const tl_lane_view *v, uint32_t len, tl_reserved *out)
{
    tl_lane *l = v->l;
    uint64_t cap = v->cap;
    int user_lane = v->lane != v->nlanes;
    for (;;) {
        uint64_t h = atomic_load_explicit(&l->head, memory_order_relaxed);
        uint64_t ts = tl_stream_stamp(s);
        uint64_t lost = v->policy == TRACELOG_POLICY_FLUSH ? atomic_load(&l->lost) : 0;
        uint32_t size = tl_rec_size(len) + (lost ? TL_REC_HEADER : 0);
        uint64_t rem = cap - (h & (cap - 1));
        uint64_t pad = rem < size ? rem : 0; /* records never wrap; a tail under 16 bytes is skipped implicitly */
        uint64_t need = pad + size;
        if (v->policy == TRACELOG_POLICY_LOOP && user_lane && !tl_stream_has_room(l, h, need, cap))
            tl_stream_overwrite(s, l, v->base, h, need, cap);
        if (!tl_stream_has_room(l, h, need, cap)) {
            if (v->policy == TRACELOG_POLICY_FLUSH && user_lane && tl_stream_wait_room(s, l, need, cap))
                continue; /* room now: reserve again, with a fresh timestamp */
            tl_stream_lose(s, l, ts);
            return 0;
        }
        if (!atomic_compare_exchange_weak(&l->head, &h, h + need))
            continue; /* another producer or a signal handler got here first: fresh timestamp */
        if (pad >= 16) {
            /* Only commit and kind_size: a pad can be as short as 16 bytes, less than a full header, and
               writing a whole header would overwrite the start of the next lane. */
            tl_rec *p = (tl_rec *)(v->base + (h & (cap - 1)));
            p->kind_size = (uint32_t)pad | (uint32_t)TL_KIND_PAD << 28;
            atomic_store_explicit(&p->commit, h + 1, memory_order_release);
        }
        uint64_t pos = h + pad;
        if (lost) {
            /* Marks the loss where it happened: the consumer turns it into OVERFLOW and RESUME.
               The count travels as the record's tid, the first lost event's time as its addr.
               Stamped as the event will be (see tl_stream_record). */
            if (ts < atomic_load(&s->watermark))
                ts = tl_stream_stamp_fresh(s);
            tracelog_event mark = {.tid = lost, .address = atomic_load(&l->lost_first_ts)};
            tl_rec *m = (tl_rec *)(v->base + (pos & (cap - 1)));
            tl_stream_write_rec((uint8_t *)m, TL_KIND_LOSS, TL_REC_HEADER, ts, &mark);
            atomic_store_explicit(&m->commit, pos + 1, memory_order_release);
            atomic_fetch_sub(&l->lost, lost);
            pos += TL_REC_HEADER;
        }
        *out = (tl_reserved){.pos = pos, .ts = ts, .crossed = tl_stream_crossed(h, h + need, cap)};
        return 1;
    }
}

void tl_stream_overwrite(tl_stream *s, tl_lane *l, uint8_t *base, uint64_t h, uint64_t need, uint64_t cap)
{
    if (!atomic_load_explicit(&s->full, memory_order_relaxed))
        atomic_store(&s->full, 1);
    while (h + need - atomic_load(&l->tail) > cap)
        if (drop_oldest(l, base, cap))
            break;
}

void tl_stream_lose(tl_stream *s, tl_lane *l, uint64_t ts)
{
    atomic_fetch_add(&l->overruns, 1);
    if (s->policy == TRACELOG_POLICY_UNTIL_FULL && l->index != s->nlanes) {
        uint32_t running = TL_RUNNING;
        if (atomic_compare_exchange_strong(&s->state, &running, TL_SUSPENDED)) {
            stamp_after_state_change(); /* STOP after every event recorded (see tl_stream_stop) */
            atomic_store(&s->autostopped, 1);
            atomic_store(&s->full, 1);
            uint32_t automatic = 1;
            tracelog_event stop = {.event_id = s->markers.stop, .payload_len = sizeof automatic, .payload = &automatic};
            tl_stream_record_system(s, &stop);
        }
        return;
    }
    if (atomic_fetch_add(&l->lost, 1) == 0)
        atomic_store(&l->lost_first_ts, ts);
    if (!atomic_exchange(&s->full, 1))
        futex_wake(&s->drainer_seq); /* once per loss episode, not per event */
}

void tl_stream_count_lost(tl_stream *s, uint32_t lane) { atomic_fetch_add(&lanes(s)[lane].overruns, 1); }

void tl_stream_wake_drainer_early(tl_stream *s, tl_lane *l, uint64_t cap)
{
    int cpu = sched_getcpu(); /* where its flusher had best run (recorder/groups.c): once per eighth of the lane */
    if (cpu >= 0 && atomic_load_explicit(&l->cpu, memory_order_relaxed) != (uint32_t)cpu + 1)
        atomic_store_explicit(&l->cpu, (uint32_t)cpu + 1, memory_order_relaxed);
    uint64_t used = atomic_load_explicit(&l->head, memory_order_relaxed) -
                    atomic_load_explicit(&l->tail, memory_order_relaxed);
    if (used >= cap / TL_DRAINER_WAKE_PART && atomic_exchange(&s->drainer_sleeping, 0))
        futex_wake(&s->drainer_seq);
}

int tl_stream_record_system(tl_stream *s, const tracelog_event *ev)
{
    if (ev->payload_len > s->max_sys_data) {
        tl_stream_count_lost(s, s->nlanes);
        return 0;
    }
    return tl_stream_record(s, s->nlanes, ev);
}
