/*
 * A FLUSH stream's flusher split over several threads (issue 11): each
 * group of lanes has a consumer and a part of a merge set (writer/set.h,
 * format-spec 6.10), and the flusher (the lead) drains in cycles: it
 * publishes a watermark, the groups that hold records take theirs below it
 * at once (the lead runs one, helper threads the others), then the lead
 * ends the set. Each cycle is a time window, so readers deliver the log's
 * events in timestamp order. One flusher merging every lane was the limit
 * of a program recording from several threads: it spent about 30 ns per
 * event on one CPU (bench/README.md, "a flusher per group of lanes").
 * There is a group per lane (up to GROUPS_MAX) whatever the CPUs, and
 * threads only as many as the CPUs allowed: the threads share out the busy
 * groups of a cycle. With fewer groups than lanes, a group's lanes merge
 * event by event, which cost a flusher confined to one CPU 2 to 3 times a
 * lane's run encoded where it lies (issue 27, bench/README.md).
 *
 * Only the lead calls these functions, holding the recorder's lock; nothing else
 * may take from the stream during a cycle (tl_groups_cycle). The recorder's own consumer
 * (which every other drain uses: an explicit flush, close, a crash) and the
 * groups' consumers take turns: whichever takes after the other first
 * adopts the other's positions (tl_groups_take_over, tl_groups_hand_back).
 */
#ifndef TRACELOG_RECORDER_GROUPS_H
#define TRACELOG_RECORDER_GROUPS_H

#include <stdint.h>

#include "stream/consumer.h"
#include "stream/stream.h"
#include "tracelog/writer.h"
#include "xproc/traced.h"

typedef struct tl_groups tl_groups;

/*
 * The groups for writer w and the stream that `model` (the log's consumer)
 * takes from, or NULL with *err 0 when one flusher is as good: a stream of
 * one lane (or a LOOP stream). rm: another process's stream
 * (a controller's log), whose buffer every group reads under its SIGBUS
 * guard, copying payloads out; else NULL. The helper threads, one fewer
 * than the CPUs allowed (none on one CPU), inherit the caller's signal mask
 * and CPU set. *err ENOMEM or EAGAIN (a thread could
 * not be made).
 */
tl_groups *tl_groups_open(const tl_consumer *model, tl_remote *rm, tracelog_writer *w, int *err);
void tl_groups_close(tl_groups *g);

/*
 * The groups take the lanes over from the log's consumer, which took last
 * (and yielded), at its positions; and hand them back to it. Positions go
 * from consumer to consumer in private memory, never through the lanes'
 * tails, which the traced process can write (cross-process.md 9.2).
 */
void tl_groups_take_over(tl_groups *g, const tl_consumer *from);
void tl_groups_hand_back(const tl_groups *g, tl_consumer *to);

/* How full the fullest user lane is, in 1/256ths (tl_consumer_backlog over every group). */
uint32_t tl_groups_backlog(const tl_groups *g);

/*
 * One cycle; *taken: the events it took, *last_ts: raised to the newest
 * one's time, *more: whether another cycle may find some (it took events,
 * or saw newer ones). Another process's stream may be found shrunk
 * meanwhile (tl_remote_faulted): the events taken before are written. The
 * writer's first error, if any (the events are taken anyway). *too_big:
 * more records were waiting than one set may hold (TL_SET_MAX_DECODED) and
 * the cycle could not be bounded below them (tl_consumer_bound): it took
 * none, and the caller drains them with one consumer.
 */
tracelog_status tl_groups_cycle(tl_groups *g, uint64_t *taken, uint64_t *last_ts, int *more, int *too_big);

/* Whether the last cycle stopped short of its watermark: more records were waiting than a cycle takes. */
int tl_groups_cut_short(const tl_groups *g);

#endif
