/*
 * The traced process's side through the real trace point: a forked child
 * that calls posix_trace_eventid_open and posix_trace_event (and nothing
 * else) records into a stream the test made for it in a named buffer
 * (tl_stream_create_in, announced with xproc/remote.c), which the test
 * drains with the stream's consumer from its own mapping. Then the child
 * is killed with SIGKILL and what it recorded before is still drained.
 * (The POSIX controller calls on top of this are not there yet.)
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "stream/consumer.h"
#include "stream/layout.h"
#include "tracelog/common.h"
#include "xproc/remote.h"
#include "xproc_helpers.h"

#define SECOND 1000000000ull

/* The child: names one event type, then records its sequence numbers, counting the calls that returned. */
static void child_main(int up, _Atomic uint64_t *returned) __attribute__((noreturn));
static void child_main(int up, _Atomic uint64_t *returned)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("remote:seq", &id))
        _exit(2);
    if (write(up, &id, sizeof id) != (ssize_t)sizeof id)
        _exit(3);
    struct timespec pace = {0, 50000};
    for (uint64_t seq = 0;; seq++) {
        posix_trace_event(id, &seq, sizeof seq);
        atomic_store(returned, seq + 1);
        if (seq % 64 == 63)
            nanosleep(&pace, NULL);
    }
}

static void test_child_records_into_our_buffer(void)
{
    _Atomic uint64_t *returned = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0)
        child_main(up[1], returned);
    trace_event_id_t id;
    if (!CHECK(read(up[0], &id, sizeof id) == (ssize_t)sizeof id)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        return;
    }
    tl_xproc_remote r;
    tl_xproc_buffer b;
    if (!CHECK_ERR(tl_xproc_remote_open(pid, &r), 0))
        goto out;
    tl_stream_params p = {.policy = TRACELOG_POLICY_UNTIL_FULL, .stream_size = 4u << 20, .max_data = 64,
                          .max_sys_data = 256, .nlanes = 2, .markers = {4, 5, 3, 2}};
    CHECK_ERR(tl_xproc_buffer_create(r.peer.euid, r.peer.egid, (uint32_t)pid, tl_stream_bytes(&p), &b), 0);
    tl_stream *s = tl_stream_create_in(b.map, b.size, &p);
    CHECK(s != NULL);
    tl_stream_start(s, NULL);
    uint64_t t0 = xp_now_ns();
    CHECK_ERR(tl_xproc_remote_attach(&r, &b, 0), 0);
    int result = -1;
    CHECK_ERR(tl_xproc_remote_wait(&r, 10 * SECOND, &result), 0);
    CHECK_ERR(result, 0);
    tl_consumer *c = NULL;
    CHECK_ERR(!(c = tl_consumer_new(s)), 0);
    tracelog_event ev;
    uint64_t got = 0, first = 0, last = 0, deadline = xp_now_ns() + 10 * SECOND;
    int in_order = 1;
    while (got < 1000 && xp_now_ns() < deadline) {
        if (tl_consumer_take_wait(c, &ev) != TL_TAKE_EVENT) {
            usleep(1000);
            continue;
        }
        if (ev.event_id != id)
            continue;
        uint64_t seq;
        memcpy(&seq, ev.payload, sizeof seq);
        CHECK_EQ(ev.pid, (uint32_t)pid);
        if (got == 0) {
            first = seq;
            printf("first event recorded %llu us after the announcement\n",
                   (unsigned long long)((xp_now_ns() - t0) / 1000));
        } else if (seq != last + 1) {
            in_order = 0;
        }
        last = seq;
        got++;
    }
    CHECK_EQ(got, 1000);
    CHECK(in_order);
    /* Killed: what it recorded stays in our buffer and is drained to the last returned call. */
    kill(pid, SIGKILL);
    CHECK_EQ_INT(xp_wait(pid), 128 + SIGKILL);
    uint64_t returned_before = atomic_load(returned);
    while (tl_consumer_take_wait(c, &ev) == TL_TAKE_EVENT)
        if (ev.event_id == id) {
            uint64_t seq;
            memcpy(&seq, ev.payload, sizeof seq);
            in_order &= seq == last + 1;
            last = seq;
        }
    CHECK(in_order);
    CHECK_MSG(last + 1 >= returned_before, "drained up to %llu, %llu calls had returned",
              (unsigned long long)last, (unsigned long long)returned_before);
    printf("events %llu..%llu drained, %llu calls returned before the kill\n", (unsigned long long)first,
           (unsigned long long)last, (unsigned long long)returned_before);
    tl_consumer_free(c);
    tl_xproc_remote_close(&r);
    tl_xproc_buffer_destroy(&b);
    pid = 0;
out:
    if (pid > 0) {
        kill(pid, SIGKILL);
        xp_wait(pid);
    }
    munmap((void *)returned, 4096);
    close(up[0]), close(up[1]);
}

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_child_records_into_our_buffer);
    return pt_finish();
}
