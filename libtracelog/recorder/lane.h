/*
 * A lane's events encoded where they lie: the flusher's common case, one
 * thread's events in a row (stream/lane_run.h), put straight into the
 * chunk being built, without the tracelog_event each would be handed out
 * as and the checks of the writer's append, which only the first event of
 * a run needs (writer/io.h, tl_writer_lane_target).
 */
#ifndef TRACELOG_RECORDER_LANE_H
#define TRACELOG_RECORDER_LANE_H

#include "format/chunk.h"
#include "stream/lane_run.h"
#include "xproc/traced.h"

/*
 * Right after a take, whose event went to the writer (or a set part): the
 * lane's next events into b, the writer's chunk (of limit body bytes:
 * tl_writer_lane_target, tl_set_lane_target; NULL: nothing is done), as
 * the writer's append would add them, for as long as each is of the thread
 * the writer noted last (*last's kernel tid, pid and tid), fits and is
 * added without error. *last gets the last one added (its payload in b).
 * The number added; what follows goes through the consumer's takes and
 * the writer's append as before.
 */
uint32_t tl_rec_append_lane(tl_consumer *c, tl_chunk_builder *b, size_t limit, tracelog_event *last);

/*
 * The same for another process's buffer (rm), which it may rewrite or
 * shrink under us: the run's committed events of the writer's thread (up
 * to cap bytes), looked at in place then copied to buf under rm's SIGBUS
 * guard, encoded from the copy, which nothing else writes, then handed
 * back to c under the guard. *fault: the guard saw the buffer
 * shrunk (the events encoded before are counted and kept).
 */
uint32_t tl_rec_append_lane_copied(tl_consumer *c, tl_remote *rm, tl_chunk_builder *b, size_t limit,
                                   tracelog_event *last, uint8_t *buf, size_t cap, int *fault);

#endif
