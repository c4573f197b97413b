/*
 * A stream laid out in memory the caller mapped (tl_stream_create_in), as a
 * controller does in the named buffer it makes for another process, and the
 * check a traced process makes before recording into such a buffer
 * (tl_stream_check; docs/design/cross-process.md, section 4): a stream made
 * there works (an event recorded is consumed), a buffer too small is
 * refused, and every damaged geometry field is refused.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "posix_helpers.h"
#include "stream/stream.h"
#include "tracelog/common.h"

static const tl_stream_params params = {.policy = TRACELOG_POLICY_LOOP,
                                        .stream_size = 1u << 16,
                                        .max_data = 64,
                                        .max_sys_data = 64,
                                        .nlanes = 4,
                                        .markers = {4, 5, 3, 2}};

static void *zeroed(uint64_t size)
{
    void *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        TL_DIE("mmap");
    return m;
}

static void test_create_in_works(void)
{
    uint64_t size = tl_stream_bytes(&params);
    CHECK(size > (4u << 16));
    void *m = zeroed(size);
    tl_stream *s = tl_stream_create_in(m, size, &params);
    if (!CHECK(s == m))
        return;
    CHECK_ERR(tl_stream_check(m, size), 0);
    CHECK_EQ(tl_stream_user_lanes(s), 4);
    int one = 1;
    tl_event ev = {.event_id = 7, .pid = 42, .len = sizeof one, .data = &one};
    CHECK(tl_stream_record_system(s, &ev));
    tl_consumer c;
    CHECK_ERR(tl_consumer_init(&c, s), 0);
    tl_event out;
    CHECK(tl_consumer_take_wait(&c, &out) == TL_TAKE_EVENT);
    CHECK_EQ(out.event_id, 7);
    CHECK_EQ(out.pid, 42);
    tl_consumer_free(&c);
    munmap(m, size);
}

static void test_create_in_too_small(void)
{
    uint64_t size = tl_stream_bytes(&params);
    void *m = zeroed(size);
    errno = 0;
    CHECK(tl_stream_create_in(m, size - 1, &params) == NULL);
    CHECK_ERR(errno, EINVAL);
    tl_stream_params bad = params;
    bad.max_data = TL_MAX_DATA_LIMIT + 1;
    CHECK_EQ(tl_stream_bytes(&bad), 0);
    munmap(m, size);
}

/* Each geometry field damaged in turn: the check refuses it. */
static void test_check_refuses_damage(void)
{
    uint64_t size = tl_stream_bytes(&params);
    void *m = zeroed(size);
    tl_stream *s = tl_stream_create_in(m, size, &params);
    if (!CHECK(s))
        return;
    tl_stream saved;
    memcpy(&saved, s, sizeof saved);
    CHECK_ERR(tl_stream_check(m, size - 1), EINVAL); /* the mapping is smaller than the stream */
    CHECK_ERR(tl_stream_check(m, 16), EINVAL);
    for (int field = 0; field < 9; field++) {
        memcpy(s, &saved, sizeof saved);
        switch (field) {
        case 0: s->magic ^= 1; break;
        case 1: s->policy = 9; break;
        case 2: s->nlanes = 3; break;
        case 3: s->nlanes = 64; break;
        case 4: s->lane_size = 5000; break;
        case 5: s->lane_size = 1ull << 50; break;
        case 6: s->data_offset += 8; break;
        case 7: s->total_size += 4096; break;
        case 8: s->max_data = TL_MAX_DATA_LIMIT + 8; break;
        }
        tl_test_context("field %d", field);
        CHECK_ERR(tl_stream_check(m, size), EINVAL);
    }
    tl_test_context(NULL);
    memcpy(s, &saved, sizeof saved);
    CHECK_ERR(tl_stream_check(m, size), 0);
    munmap(m, size);
}

int main(void)
{
    pt_watchdog(60);
    PT_RUN(test_create_in_works);
    PT_RUN(test_create_in_too_small);
    PT_RUN(test_check_refuses_damage);
    return pt_finish();
}
