/*
 * The consumer of a stream: one process's private state for taking a
 * stream's events out, in generation order, with the losses marked. Opaque:
 * its callers (the recorder, the POSIX readers) hold a pointer and use the
 * functions below; stream/consume.c is the only code that looks inside.
 */
#ifndef TRACELOG_STREAM_CONSUMER_H
#define TRACELOG_STREAM_CONSUMER_H

#include "stream/stream.h"

/* ---- consumer ------------------------------------------------------------------ */

/*
 * The consumer of one process, on that process's mapping of the stream: its
 * state is private; what it changes in the mapping (lane tails, acknowledged
 * losses, the full flag, the delivered count, the restart of an UNTIL_FULL
 * stream) is all in the mapping, so that another process can take over.
 * The geometry is read once, at init, and only that private copy is used
 * afterwards (a process sharing the mapping may change the header).
 * Not thread-safe: one thread at a time.
 *
 * Cheap per event (issue 11): in a FLUSH or UNTIL_FULL stream only the
 * consumer moves a lane's tail, so it keeps its read position private and
 * stores the tail once per TL_CONSUMER_RELEASE bytes read (or an eighth of
 * a smaller lane) and whenever it stops (empty, waiting), not once per
 * event; an event's data is handed out where it lies in the lane, its room
 * released only after the next call.
 * A LOOP producer may move the tail itself (overwriting), so there the
 * consumer still copies each event out and moves the tail with a CAS. The
 * lanes of a batch are merged with a heap of their oldest records: one
 * look at the lane an event came from, not at every lane, per event.
 */

/* A consumer of s (its struct is stream/consumer_internal.h's, which only stream/ includes); NULL: out of memory. */
tl_consumer *tl_consumer_new(tl_stream *s);
/* Frees c, first giving the room it read back (another consumer may take over from there). Accepts NULL. */
void tl_consumer_free(tl_consumer *c);
/* The time now in ns on the scale of the events' timestamps, by the consumer's own copy of the stream's clock. */
uint64_t tl_consumer_now(const tl_consumer *c);
/* Its copy of the stream's clock, checked at creation (a shared header may have changed since). */
const tl_clock *tl_consumer_clock(const tl_consumer *c);
/* The largest data a record of its stream may have: a bound for what a caller copies an event's data into. */
size_t tl_consumer_max_data(const tl_consumer *c);
/*
 * The consumer of a stream another process writes into, mapped at map
 * (size bytes): its geometry is checked first (tl_stream_check), and the
 * consumer uses only its own copy of it afterwards. Whatever the other
 * process writes in the lanes, the consumer stays inside the mapping and
 * ends: a record that cannot be one (bad kind, size, length, alignment, a
 * timestamp after the time it was seen) is dropped with the rest of what
 * its lane cannot parse, counted in the lane's overruns and in `garbage`,
 * and marked by OVERFLOW and RESUME. 0 (*out made), EINVAL or ENOMEM.
 */
int tl_consumer_new_shared(void *map, uint64_t size, tl_consumer **out);
/*
 * Another consumer of model's stream, with model's copy of the geometry and
 * lanes and nothing read from the mapping: its positions are taken with
 * tl_consumer_resync before it takes. NULL for a LOOP stream's consumer,
 * or out of memory.
 */
tl_consumer *tl_consumer_new_like(const tl_consumer *model);

typedef enum tl_take { TL_TAKE_EVENT, TL_TAKE_EMPTY, TL_TAKE_WAIT } tl_take;

/*
 * Takes the next event in generation order. TL_TAKE_WAIT: a producer is
 * mid-record in another lane; retry shortly (the caller bounds the wait and
 * then passes force=1 to stop waiting for a producer that died mid-record).
 * ev->payload stays valid until the next call.
 */
tl_take tl_consumer_take(tl_consumer *c, tracelog_event *ev, int force);

/*
 * Like tl_consumer_take(), waiting (spinning, then yielding) while a
 * producer is mid-record; after TL_PRODUCER_STALL_NS of waiting in a
 * batch it stops waiting for that producer, which must have died mid-record (a killed child of an
 * inherited stream). Never returns TL_TAKE_WAIT.
 */
#define TL_PRODUCER_STALL_NS 200000000ull
tl_take tl_consumer_take_wait(tl_consumer *c, tracelog_event *ev);
/*
 * Right after a take that handed out an event: up to max more that the
 * next takes would hand out, in the same order, into evs, as long as they
 * are the plain case (committed events of the batch, nothing to mark
 * before them, nothing to wait for), at a fraction of a take's cost per
 * event. The number put in evs, 0 when the next take must look. Their
 * payloads, like the first event's, stay valid until the next take. A LOOP
 * stream's consumer (which shares the tail with producers) always gets 0.
 */
uint32_t tl_consumer_take_run(tl_consumer *c, tracelog_event *evs, uint32_t max);
/*
 * take_wait asks gone(arg) (at most once a millisecond, only while it
 * waits for a producer mid-record) whether the producers' process has
 * ended; once it says 1, as after tl_consumer_producers_gone. Consumers
 * made by tl_consumer_init_like inherit it; gone must be thread-safe.
 */
void tl_consumer_watch_producers(tl_consumer *c, int (*gone)(void *), void *arg);
/*
 * Its producers are in other processes (a controller's stream, inherited or
 * not): take_wait sleeps through a long wait for one mid-record rather than
 * yield, since another process may leave a record uncommitted on purpose.
 * Consumers made by tl_consumer_init_like inherit it.
 */
void tl_consumer_set_foreign(tl_consumer *c);
/*
 * The consumer was made before anyone could record into the stream (a
 * controller's, made before the traced process learns the buffer's name):
 * an event stamped before then has a scribbled stamp, and is raised to the
 * consumer's birth as an event stamped before the last one is raised to it.
 */
void tl_consumer_set_floor(tl_consumer *c);

/*
 * A record reserved and never committed while its lane goes on (its
 * producer was killed mid-record, or the process sharing the buffer died):
 * once a later batch still finds it uncommitted TL_PRODUCER_DEAD_NS after it
 * first did, the consumer skips it as a counted loss (the lane's overruns,
 * `abandoned`, OVERFLOW and RESUME around it) and goes on with the lane.
 */
#define TL_PRODUCER_DEAD_NS 1000000000ull

/*
 * How far a record's timestamp may lie after a watermark taken later on
 * another CPU: the skew of their clocks (defer() in consume.c). A record
 * further ahead of a later batch's watermark, or still ahead once the
 * watermarks moved by that much since it was first deferred (or a second
 * passed: a clock in a scribbled header may not advance), is garbage.
 */
#define TL_CLOCK_SKEW_NS 1000000ull

/*
 * The client knows that nobody records into the user lanes any more (the
 * process sharing the buffer has ended and no other maps it): from now on a
 * record found uncommitted there is skipped at once as a counted loss (as
 * above, with what follows it up to the lane's head when nothing says where
 * it ends), without waiting TL_PRODUCER_STALL_NS or TL_PRODUCER_DEAD_NS.
 * The system lane, which the client itself writes, keeps the waits.
 */
void tl_consumer_producers_gone(tl_consumer *c);

/*
 * Records ev into the system lane with the consumer's own copy of the
 * geometry (what the consumer side records: START, errors, flush markers;
 * a controller's start, stop and filter markers), never the mapping's,
 * which a process sharing it may have changed. 1, or 0 if there was no room
 * (counted in the system lane's overruns). Safe alongside the consumer's
 * thread: it reads only the geometry copy and reserves like a producer.
 */
int tl_consumer_record_system(tl_consumer *c, const tracelog_event *ev);

/*
 * Several consumers of one stream at once (a flusher per group of lanes, each
 * building its own chunks of a merge set: format-spec 6.10). Each takes only
 * the lanes of its mask (tl_consumer_set_lanes, set before it takes). A
 * cycle: one of them publishes a watermark (tl_consumer_publish_watermark),
 * then each opens its batch with that same watermark
 * (tl_consumer_begin_batch) and takes until TL_TAKE_EMPTY: the end of its
 * batch, its lanes' room released. Then every event stamped below the
 * watermark is out, of every group: a time window. `batch_later` says
 * whether newer records were seen (a next cycle has work). A consumer that
 * takes lanes another one took from first adopts their tails
 * (tl_consumer_resync), with nothing held and no batch open, which is the
 * case after TL_TAKE_EMPTY; resync also ends the external batches.
 */
uint64_t tl_consumer_publish_watermark(tl_consumer *c);
/*
 * w: the stamp its batch delivers up to, pub the watermark published; w
 * may be lower (tl_consumer_bound), and then the records between are left
 * for a later batch rather than taken for a scribbled buffer's garbage.
 */
void tl_consumer_begin_batch(tl_consumer *c, uint64_t w, uint64_t pub);
/*
 * Lowers *w so that a batch up to *w takes about `budget` bytes at most
 * from each of its lanes: to the stamp of the first record past `budget`
 * bytes in each lane that holds more. 0 if such a lane showed no record
 * there (the caller cannot bound the batch).
 */
int tl_consumer_bound(const tl_consumer *c, uint64_t budget, uint64_t *w);
void tl_consumer_set_lanes(tl_consumer *c, uint64_t own);
void tl_consumer_resync(tl_consumer *c);
/*
 * Like resync, from the positions of `from` (which took last, and released
 * its room) for the lanes both take, not from the lanes' tails: the tails
 * lie in the buffer, which another process may have scribbled over since.
 * No buffer access.
 */
void tl_consumer_adopt(tl_consumer *c, const tl_consumer *from);
/*
 * Stops taking, so that other consumers may take its lanes: the room of
 * every event it handed out goes back to the producers, and its open batch
 * is dropped (what it had not handed out stays in the lanes for the next
 * consumer). Only with nothing queued (tl_consumer_queued).
 */
void tl_consumer_yield(tl_consumer *c);
int tl_consumer_queued(const tl_consumer *c);
/*
 * Bytes reserved and not yet released in its lanes: after a watermark is
 * published, what a batch can hold at most. *cpu: the fullest lane's CPU
 * hint (tl_lane.cpu: 1 + a CPU, or 0); *lanes is raised by the lanes that
 * hold some.
 */
uint64_t tl_consumer_pending_bytes(const tl_consumer *c, uint32_t *cpu, uint32_t *lanes);

/* How full the fullest user lane is, in 1/256ths of its size (the read position counts, not the tail). */
uint32_t tl_consumer_backlog(const tl_consumer *c);
/* 1 if a lane (the system lane too) is 1/TL_DRAINER_WAKE_PART full or more: what wakes the drainer. */
int tl_consumer_quarter_full(const tl_consumer *c);

/*
 * Sum of all lanes' overrun counters, over the consumer's own lane count.
 * Like the next two, it reads only the geometry copied at init and the
 * lanes' atomic words: safe from any thread, alongside the consumer's.
 */
uint64_t tl_consumer_overruns(const tl_consumer *c);
/* A lane's overrun counter above this is no count (78 hours of one loss a nanosecond): a scribbled word, left out. */
#define TL_OVERRUNS_PLAUSIBLE (1ull << 48)
/* Events held in the lanes (tl_stream_buffered over the consumer's lane count: an upper bound). */
uint64_t tl_consumer_buffered(const tl_consumer *c);
/* The user lanes, as the consumer's geometry says. */
uint32_t tl_consumer_lanes(const tl_consumer *c);
/* Its last batch saw records newer than its watermark: another may find them. */
int tl_consumer_saw_later(const tl_consumer *c);
/* Most records the consumer's lanes hold at once (its private geometry): a bound on any one drain's work. */
uint64_t tl_consumer_capacity_records(const tl_consumer *c);

/* tl_stream_start and tl_stream_stop of c's stream, the marker recorded through c (tl_consumer_record_system). */
int tl_consumer_start(tl_consumer *c, const tracelog_event *marker);
int tl_consumer_stop(tl_consumer *c, const tracelog_event *marker);
/*
 * The background drainer (whose consumer c is) sleeps at most ns, less when
 * producers need it (tl_stream_drainer_wake). With look, not at all when a
 * lane is a quarter full already: a producer that got there before the
 * drainer said it sleeps woke no one. 0 if it slept the whole ns, 1 if it
 * was woken.
 */
int tl_consumer_drainer_sleep(const tl_consumer *c, uint64_t ns, int look);

/*
 * At the end: FLUSH losses are marked by the next event recorded in their
 * lane; for a lane whose producer stopped after losing events, this hands
 * out an OVERFLOW marker with the first lost event's timestamp (no RESUME
 * follows). 1 while there is one, then 0.
 */
int tl_consumer_take_unmarked_loss(tl_consumer *c, tracelog_event *ev);

/* Forgets every recorded event (posix_trace_clear); producers may run concurrently. */
void tl_consumer_clear(tl_consumer *c);

#endif
