/*
 * Moving events from the stream to the writer (caller holds the lock): by
 * the recorder's consumer, by the flusher's groups of lanes (groups.h), or
 * from another process's buffer in guarded batches whose payloads are
 * copied out; with the losses no event marked, a lost buffer, and the
 * traced process's end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/internal.h"
#include "recorder/lane.h"
#include "recorder/run.h"
#include "writer/io.h"

/* Falls back to uncompressed chunks while the producers are ahead (see BEHIND). The new state. */
static int keep_up(tl_recorder *r, uint32_t backlog)
{
    int behind = backlog >= BEHIND || (r->behind && backlog >= CAUGHT_UP);
    if (behind != r->behind)
        tl_writer_set_raw(r->writer, behind);
    return behind;
}

/* Writes one drained event; an UNTIL_FULL log ends with its stop event (data 1: automatic) where it filled up. */
static int append(tl_recorder *r, const tracelog_event *ev)
{
    tracelog_status st = tracelog_writer_append(r->writer, ev);
    if (st == TRACELOG_E_LOG_FULL && !r->stop_written) {
        int automatic = 1;
        tracelog_event stop = {.timestamp_ns = ev->timestamp_ns,
                               .event_id = r->params.ids.stop,
                               .payload_len = sizeof automatic,
                               .payload = &automatic};
        tracelog_writer_append_final(r->writer, &stop);
        r->stop_written = 1;
    }
    return tl_rec_writer_errno(r, st);
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
    tl_recorder *r;
    uint64_t until;
    tracelog_event ev[BATCH];
    volatile uint32_t n;
    int look;         /* read the backlog (every BACKLOG_EVERY events) */
    uint32_t backlog;
    int more; /* the batch filled up: there may be more */
    int runs;      /* stop where a lane's run can go in place (lane.h) */
    int lane_run;  /* it stopped there */
};

int tl_rec_batch_alloc(tl_recorder *r)
{
    r->arena_cap = ARENA_BYTES + tl_consumer_max_data(r->consumer); /* a batch stops once ARENA_BYTES are used */
    r->arena = malloc(r->arena_cap);
    r->batch = calloc(1, sizeof *r->batch);
    if (!r->arena || !r->batch)
        return ENOMEM;
    r->batch->r = r;
    return 0;
}

static int take_batch(void *arg)
{
    batch *b = arg;
    tl_consumer *c = b->r->consumer;
    b->n = 0;
    b->more = 0;
    b->lane_run = 0;
    uint8_t *arena = b->r->arena;
    size_t used = 0;
    if (b->look)
        b->backlog = tl_consumer_backlog(c);
    size_t max_data = tl_consumer_max_data(c);
    for (uint32_t n = 0; n < BATCH && used + max_data <= b->r->arena_cap;) {
        tracelog_event *ev = &b->ev[n];
        uint32_t got = tl_rec_take(c, ev, tl_rec_run_max(BATCH - n - 1, used, b->r->arena_cap, max_data),
                                   b->runs ? &b->lane_run : NULL);
        if (!got)
            return 0;
        tl_rec_copy_out(ev, got, arena, &used, &b->n);
        n += got;
        if (b->lane_run) {
            b->more = 1;
            return 0;
        }
        if (ev[got - 1].timestamp_ns > b->until)
            return 0;
    }
    b->more = 1;
    return 0;
}

static int log_fault(tl_recorder *r, uint64_t last_ts);

/*
 * How many events one drain call of a controller's log may take: twice what
 * the buffer holds at once. The traced process can write the buffer's every
 * word (a head far ahead, records that keep coming): a drain must end, so
 * that the flusher releases the log and looks for the process's end
 * (cross-process.md 9.7). What is left waits for the next drain.
 */
static uint64_t drain_budget(const tl_recorder *r) { return 2 * tl_consumer_capacity_records(r->consumer) + BATCH; }

static int drain_remote(tl_recorder *r, uint64_t until)
{
    int e = 0;
    batch *b = r->batch;
    b->runs = 1;
    for (uint64_t budget = drain_budget(r);;) {
        b->until = until;
        b->look = r->batches++ % (BACKLOG_EVERY / BATCH) == 0;
        int fault = tl_remote_guard(r->params.remote, take_batch, b) == EFAULT;
        uint32_t n = b->n;
        if (!fault && b->look)
            r->behind = keep_up(r, b->backlog);
        for (uint32_t i = 0; i < n; i++) {
            int ae = append(r, &b->ev[i]);
            if (!e)
                e = ae;
        }
        tracelog_event last = n ? b->ev[n - 1] : (tracelog_event){0};
        if (!fault && b->lane_run) { /* the lane's run, copied out of the buffer and put in place (lane.h) */
            size_t limit = 0;
            tl_chunk_builder *cb = tl_writer_lane_target(r->writer, &limit, &last);
            uint32_t placed = tl_rec_append_lane_copied(r->consumer, r->params.remote, cb, limit, &last, r->arena,
                                                        r->arena_cap, &fault);
            b->runs = placed > 0; /* none: the next batch takes its events, then tries again */
            n += placed;
            if (!placed)
                last = b->ev[b->n - 1];
        } else {
            b->runs = 1;
        }
        r->drained += n;
        if (fault)
            return log_fault(r, n ? last.timestamp_ns : 0);
        if (!b->more || n >= budget || last.timestamp_ns > until)
            return e;
        budget -= n;
    }
}

/*
 * The traced process's end is in the log, and no other process records into
 * its stream (not inherited): the end drained everything, what a later
 * drain would find is what the buffer's last scribbles made of it, and the
 * end stays the log's last event.
 */
static int after_end(const tl_recorder *r)
{
    return r->end_logged && !r->params.inherited;
}

int tl_rec_drain(tl_recorder *r, uint64_t until)
{
    if (after_end(r))
        return 0;
    if (r->grouped) { /* the groups took last */
        tl_groups_hand_back(r->groups, r->consumer);
        r->grouped = 0;
    }
    if (r->params.remote)
        return !tl_remote_faulted(r->params.remote) ? drain_remote(r, until) : r->lost ? 0 : log_fault(r, 0);
    int e = 0;
    tracelog_event ev[TL_REC_RUN];
    uint64_t n = 0, looked = 0;
    tl_consumer *c = r->consumer;
    while (tl_consumer_take_wait(c, &ev[0]) == TL_TAKE_EVENT) {
        if (n - looked >= BACKLOG_EVERY || n == 0) {
            r->behind = keep_up(r, tl_consumer_backlog(c));
            looked = n;
        }
        int ae = append(r, &ev[0]);
        e = e ? e : ae;
        /* The common case: the lane's next events encoded where they lie (lane.h); else taken in a run */
        tracelog_event last;
        size_t limit = 0;
        tl_chunk_builder *b = tl_writer_lane_target(r->writer, &limit, &last);
        uint32_t got = 1, placed = tl_rec_append_lane(c, b, limit, &last);
        if (!placed) {
            got += tl_consumer_take_run(c, ev + 1, TL_REC_RUN - 1);
            for (uint32_t k = 1; k < got; k++) {
                ae = append(r, &ev[k]);
                e = e ? e : ae;
            }
            last = ev[got - 1];
        }
        n += got + placed;
        if (last.timestamp_ns > until && !tl_consumer_queued(c))
            break;
    }
    r->drained += n;
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
 * Once a cycle took what there was (it was not cut short by its window), a
 * drain by groups goes on only while a lane is at least a quarter full (in
 * 1/256ths, as tl_groups_backlog): the fill at which a producer wakes the
 * flusher anyway. What the cycles leave waits for that, or for the flush
 * interval. Each cycle ends a merge set, and with it a chunk of every busy
 * group: cycles taken back to back while the producers keep pace cut the
 * log into small chunks, compressed one by one, and kept the flusher on a
 * CPU the producers needed (issue 27: two threads on two CPUs, the flusher
 * on one, recorded 1.2x what one does, against 1.8x with a quarter's cycles).
 */
#define CAUGHT_UP_CYCLES (256 / TL_DRAINER_WAKE_PART)

/*
 * The flusher's drain, by its groups of lanes (groups.h) in cycles, each a
 * merge set. A cycle that would outgrow a set is drained by the log's
 * consumer, up to now. Caller holds the lock. An errno or 0.
 */
int tl_rec_drain_by_groups(tl_recorder *r)
{
    if (tl_remote_faulted(r->params.remote))
        return r->lost ? 0 : log_fault(r, 0);
    int e = 0, more = 1;
    uint64_t last_ts = 0, start = r->drained, budget = drain_budget(r);
    for (uint32_t idle = 0, cycles = 0; more && idle < IDLE_CYCLES_MAX && r->drained - start < budget; cycles++) {
        uint64_t before = r->drained;
        if (!r->grouped) { /* the log's consumer took last: its events go out first */
            tl_rec_guarded(r, do_yield, r->consumer);
            tl_groups_take_over(r->groups, r->consumer);
            r->grouped = 1;
            e = e ? e : tl_rec_writer_errno(r, tl_writer_end_chunk(r->writer));
        }
        uint32_t backlog = tl_groups_backlog(r->groups);
        if (cycles > 0 && backlog < CAUGHT_UP_CYCLES && !tl_groups_cut_short(r->groups))
            break; /* caught up: sleep until a lane fills enough to wake us (or the interval), not cycle after cycle */
        r->behind = keep_up(r, backlog);
        uint64_t taken = 0;
        int too_big = 0;
        int ce = tl_rec_writer_errno(r, tl_groups_cycle(r->groups, &taken, &last_ts, &more, &too_big));
        r->drained += taken;
        if (tl_remote_faulted(r->params.remote))
            return log_fault(r, last_ts);
        if (too_big) {
            ce = tl_rec_drain(r, tl_consumer_now(r->consumer));
            more = 1;
        }
        if (!e)
            e = ce;
        idle = r->drained == before ? idle + 1 : 0;
    }
    return e;
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

void tl_rec_mark_unfinished_losses(tl_recorder *r)
{
    if (after_end(r))
        return;
    loss_args a = {.c = r->consumer};
    int marked = 0;
    while (tl_rec_guarded(r, take_loss, &a) == 1) { /* a marker has no payload: nothing in the buffer to copy */
        tracelog_writer_append(r->writer, &a.ev);
        marked = 1;
    }
    if (marked)
        tl_rec_update_status(r);
}

/*
 * The traced process shrank the stream's buffer under a drain (the guard
 * caught the fault): what the buffer held is lost, how much cannot be
 * known. The log says so, after the events drained before: OVERFLOW (no
 * RESUME follows) and an error event with EFAULT; the stream counts one
 * more overrun; and the log is finalized as for an ended process (its
 * trailer goes out with the next write). EFAULT.
 */
static int log_fault(tl_recorder *r, uint64_t last_ts)
{
    uint64_t now = tl_consumer_now(r->consumer);
    int e = EFAULT;
    tracelog_event marks[2] = {
        {.timestamp_ns = now > last_ts ? now : last_ts, .event_id = r->params.ids.overflow},
        {.timestamp_ns = now > last_ts ? now : last_ts, .event_id = r->params.ids.error, .payload_len = sizeof e,
         .payload = &e},
    };
    for (int i = 0; i < 2; i++)
        tracelog_writer_append(r->writer, &marks[i]);
    r->delivered_seen = r->delivered_seen > r->drained ? r->delivered_seen : r->drained;
    r->logged_itself += 2;
    r->overruns_seen++;
    r->lost = 1;
    r->end_logged = 1;
    return EFAULT;
}

/*
 * A controller's log, once the traced process has ended (any way): what it
 * recorded is drained (a record it died in the middle of is counted lost at
 * once: tl_remote_end_seen), then one process-end event says how it
 * ended, and the stream is left SUSPENDED (design note, section 7). Caller
 * holds the lock. An errno or 0.
 */
static int end_seen(void *arg)
{
    tl_recorder *r = arg;
    tl_remote_end_seen(r->stream, r->consumer, r->params.inherited);
    return 0;
}

int tl_rec_log_process_end(tl_recorder *r)
{
    tl_proc_end end;
    if (!r->params.remote || r->end_logged || !tl_remote_ended(r->params.remote, &end))
        return 0;
    tl_rec_guarded(r, end_seen, r);
    int e = 0;
    /* Each drain is bounded (drain_budget); nothing is added any more, so a few take it all. */
    for (uint64_t before = UINT64_MAX, rounds = 0; r->drained != before && rounds < 16 && !e; rounds++) {
        before = r->drained;
        e = tl_rec_drain(r, UINT64_MAX);
    }
    tl_rec_mark_unfinished_losses(r); /* a record it died in the middle of, last in its lane: before the end */
    int32_t data[2] = {end.how, end.code};
    tracelog_event ev = {.timestamp_ns = tl_consumer_now(r->consumer),
                         .event_id = r->params.ids.process_end,
                         .pid = (uint32_t)tl_remote_pid(r->params.remote),
                         .payload_len = sizeof data,
                         .payload = data};
    int we = tl_rec_writer_errno(r, tracelog_writer_append(r->writer, &ev));
    r->logged_itself++; /* so that the log's events_written never exceeds its events_recorded */
    r->end_logged = 1;
    return e ? e : we;
}

