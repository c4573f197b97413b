#ifndef TL_RECORDER_RUN_H
#define TL_RECORDER_RUN_H
/*
 * Taking events in runs (tl_consumer_take_run): after each take, the
 * plain events that follow it (each lane's in a row until another lane's
 * is due), at a fraction of a take's cost. And, for another process's
 * buffer, the copy of their payloads into an arena before the buffer can
 * change (its drain steps run under the SIGBUS guard and take up to a
 * step's events at once).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "stream/consumer.h"
#include "stream/lane_run.h"

#define TL_REC_RUN 64 /* events taken at once: one take and a run of up to 63 */

/* Rounded to 8 bytes, what one event's payload takes in an arena. */
static inline size_t tl_rec_arena_bytes(size_t len) { return (len + 7u) & ~(size_t)7u; }

/*
 * How many events a run may add to one about to be taken, at used bytes
 * of an arena of cap bytes with room for it (used + max_data <= cap), each
 * up to max_data bytes, with room for `left` more in the step.
 */
static inline uint32_t tl_rec_run_max(uint32_t left, size_t used, size_t cap, size_t max_data)
{
    size_t each = tl_rec_arena_bytes(max_data ? max_data : 1), room = cap - used;
    size_t fit = room / each - (room >= each); /* after the one taken */
    uint32_t m = left < TL_REC_RUN - 1 ? left : TL_REC_RUN - 1;
    return fit < m ? (uint32_t)fit : m;
}

/*
 * Copies the payloads of evs[0..got) to the arena at *used and points them
 * there, adding 1 to *count after each: a fault in the buffer (it shrank)
 * mid-run leaves the events copied before it counted, to be written.
 */
static inline void tl_rec_copy_out(tracelog_event *evs, uint32_t got, uint8_t *arena, size_t *used,
                                   volatile uint32_t *count)
{
    for (uint32_t k = 0; k < got; k++) {
        if (evs[k].payload_len)
            memcpy(arena + *used, evs[k].payload, evs[k].payload_len);
        evs[k].payload = arena + *used;
        *used += tl_rec_arena_bytes(evs[k].payload_len);
        atomic_signal_fence(memory_order_seq_cst);
        *count += 1;
    }
}

/*
 * One take and its run into evs (room for at least 1 + max_run events),
 * their payloads left in the buffer: the number taken, 0 when the take
 * handed out nothing. lane_run (NULL: not asked) is set, and the run not
 * taken, when the next events are a lane's run (tl_lane_run_begin), which
 * tl_rec_append_lane may put in place (recorder/lane.h) if they are of the
 * thread the writer noted last: the caller tries that first.
 */
static inline uint32_t tl_rec_take(tl_consumer *c, tracelog_event *evs, uint32_t max_run, int *lane_run)
{
    if (tl_consumer_take_wait(c, evs) != TL_TAKE_EVENT)
        return 0;
    tl_lane_run probe;
    if (lane_run && (*lane_run = tl_lane_run_begin(c, &probe)))
        return 1;
    return 1 + tl_consumer_take_run(c, evs + 1, max_run);
}

#endif
