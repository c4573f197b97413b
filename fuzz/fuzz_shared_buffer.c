/*
 * fuzz_shared_buffer: any bytes as a stream's shared mapping, drained by
 * the consumer, as a controller drains the buffer of a traced process that
 * may have scribbled over it or died mid-write (issue 12, item 6;
 * libtracelog/stream/consume.c). The input is the start of the mapping
 * (header, lane counters, then the rings); the rest is zero, as a fresh
 * mapping is. The seeds are real streams (fuzz/gen_corpus.c).
 *
 * Properties:
 *  - a mapping whose geometry fails tl_stream_check is refused;
 *  - otherwise the consumer never crashes or reads outside the mapping,
 *    and ends: it reports an empty stream within a bound set by the rings'
 *    size (no hang on a garbage record);
 *  - every event it hands out carries at most max_data (max_sys_data)
 *    bytes, which lie inside the mapping (FLUSH, UNTIL_FULL: the data is
 *    handed out where it is in its lane) or in the consumer's own buffer
 *    (LOOP: copied out, since producers may overwrite it);
 *  - the same once told the producers are gone (tl_consumer_producers_gone:
 *    uncommitted records skipped up to the lane's head), after a first drain;
 *  - the same, first, for consumers over alternate lanes drained in cycles
 *    bounded a few hundred bytes into each lane (recorder/groups.c: a
 *    controller's flusher by groups; tl_consumer_bound, whose scan for a
 *    record start reads any bytes), and at most 64 cycles.
 */
#define _GNU_SOURCE
#include "fuzz_helpers.h"
#include "stream/consumer_internal.h"
#include "stream/layout.h"

#define MAP_BYTES (300u << 10) /* more than a 2-lane stream of 4 KiB lanes takes */

static volatile uint8_t sink;

/* Every record takes 8 bytes at least (a dropped one) and gives at most three events. */
static uint64_t events_bound(uint64_t map_size) { return map_size / 8 * 3 + 64; }

static void check_event(const tl_consumer *c, const tracelog_event *ev, const uint8_t *map, uint64_t map_size)
{
    FUZZ_ASSERT(ev->payload_len <= c->buf_cap, "len %u over %zu", ev->payload_len, c->buf_cap);
    const uint8_t *d = ev->payload;
    FUZZ_ASSERT(ev->payload_len == 0 || (c->shared_tail ? d == c->buf : d >= map && d + ev->payload_len <= map + map_size),
                "data outside the mapping");
    if (ev->payload_len) /* touch the data: ASan checks it */
        sink ^= d[0] ^ d[ev->payload_len - 1];
    FUZZ_DEEP(); /* a mapping accepted, and an event taken out of it */
}

/* Takes events until the consumer says the stream (or its batch) is empty, checking each; *taken counts them. */
static void drain_counted(tl_consumer *c, const uint8_t *map, uint64_t map_size, uint64_t *taken)
{
    tracelog_event ev;
    for (;;) {
        FUZZ_ASSERT(*taken < events_bound(map_size), "no end after %llu events", (unsigned long long)*taken);
        tl_take r = tl_consumer_take(c, &ev, 1);
        FUZZ_ASSERT(r == TL_TAKE_EVENT || r == TL_TAKE_EMPTY, "take: %d", (int)r);
        if (r == TL_TAKE_EMPTY)
            return;
        check_event(c, &ev, map, map_size);
        ++*taken;
    }
}

static void drain(tl_consumer *c, const uint8_t *map, uint64_t map_size)
{
    uint64_t taken = 0;
    drain_counted(c, map, map_size, &taken);
}

/* Two consumers over alternate lanes, in cycles bounded 512 bytes into each lane; then c takes over (positions handed over privately). */
static void drain_by_groups(tl_consumer *c, const uint8_t *map, uint64_t map_size)
{
    tl_consumer *g[2] = {tl_consumer_new_like(c), tl_consumer_new_like(c)};
    if (!g[0] || !g[1]) { /* a LOOP stream: one consumer */
        tl_consumer_free(g[0]);
        tl_consumer_free(g[1]);
        return;
    }
    uint64_t even = 0;
    for (uint32_t i = 0; i <= c->nlanes; i += 2)
        even |= 1ull << i;
    tl_consumer_set_lanes(g[0], even);
    tl_consumer_set_lanes(g[1], ~even);
    tl_consumer_adopt(g[0], c); /* as a controller's groups take over from its log's consumer */
    tl_consumer_adopt(g[1], c);
    uint64_t taken = 0;
    for (int cycle = 0; cycle < 64; cycle++) {
        uint64_t pub = tl_consumer_publish_watermark(g[0]), w = pub, before = taken;
        tl_consumer_bound(g[0], 512, &w);
        tl_consumer_bound(g[1], 512, &w);
        for (int k = 0; k < 2; k++) {
            tl_consumer_begin_batch(g[k], w, pub);
            drain_counted(g[k], map, map_size, &taken);
        }
        if (taken == before && !tl_consumer_saw_later(g[0]) && !tl_consumer_saw_later(g[1]))
            break;
    }
    tl_consumer_adopt(c, g[0]);
    tl_consumer_adopt(c, g[1]);
    tl_consumer_free(g[0]);
    tl_consumer_free(g[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t map[MAP_BYTES] __attribute__((aligned(4096)));
    memset(map, 0, sizeof map);
    memcpy(map, data, size < sizeof map ? size : sizeof map);
    uint64_t map_size = ((const tl_stream *)map)->total_size; /* the mapping as large as it claims, if it fits */
    if (map_size > sizeof map)
        map_size = sizeof map;
    tl_consumer *c = NULL;
    int e = tl_consumer_new_shared(map, map_size, &c);
    if (e) {
        FUZZ_ASSERT(e == EINVAL || e == ENOMEM, "init: %d", e);
        return 0;
    }
    drain_by_groups(c, map, map_size);
    drain(c, map, map_size);
    tl_consumer_producers_gone(c); /* what a controller says at the traced process's end: the rest goes */
    drain(c, map, map_size);
    tracelog_event ev;
    for (unsigned i = 0; tl_consumer_take_unmarked_loss(c, &ev); i++)
        FUZZ_ASSERT(i <= 2 * (TL_MAX_LANES + 1), "unmarked losses do not end");
    tl_consumer_free(c);
    return 0;
}
