/*
 * Crashes on either side of cross-process tracing (docs/design/cross-process.md,
 * section 7):
 * - the traced program killed with SIGKILL in the middle of a burst, 50
 *   times: the log the controller writes holds every event whose
 *   posix_trace_event call returned before the kill, in order, and ends with
 *   tracelog_process_end saying SIGKILL;
 * - the controller killed with SIGKILL: the traced program finishes its work
 *   (no hang, no crash, its events dropped), and a second controller
 *   attaches to it and records.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

#define PROCESS_END 9 /* tracelog_process_end: int32 how (2: killed by a signal), int32 code */
#define KILLS 50

static int temp_log(void)
{
    int fd = tl_test_tmpfd();
    if (fd < 0)
        TL_DIE("tmpfd");
    return fd;
}

/* The traced program: names its event, waits for 'g', then records sequence numbers until killed, counting the calls that returned. */
static void burst_main(int up, int down, _Atomic uint64_t *returned) __attribute__((noreturn));
static void burst_main(int up, int down, _Atomic uint64_t *returned)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("kill:seq", &id))
        _exit(2);
    xp_send(up, 'r');
    if (xp_recv(down, 20000) != 'g')
        _exit(3);
    struct timespec pace = {0, 20000}; /* bounded rate: the stream never fills, so nothing may be missing */
    for (uint64_t seq = 0;; seq++) {
        posix_trace_event(id, &seq, sizeof seq);
        atomic_store(returned, seq + 1);
        if (seq % 128 == 127)
            nanosleep(&pace, NULL);
    }
}

/* One round: 0 if the log holds events 0 .. returned-1 and says SIGKILL. */
static int one_kill(unsigned round, uint64_t *events)
{
    _Atomic uint64_t *returned = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int up[2], down[2];
    if (returned == MAP_FAILED || pipe(up) || pipe(down))
        TL_DIE("mmap/pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0)
        burst_main(up[1], down[0], returned);
    int ok = CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');
    int fd = temp_log();
    trace_attr_t attr;
    pt_attr(&attr, POSIX_TRACE_FLUSH, 16u << 20, 16);
    trace_id_t trid = 0;
    ok = ok && CHECK_ERR(posix_trace_create_withlog(pid, &attr, fd, &trid), 0);
    ok = ok && CHECK_ERR(posix_trace_start(trid), 0);
    if (ok) {
        xp_send(down[1], 'g');
        /* Kill it some time into the burst: 1 to 20 ms after it recorded its first event. */
        uint64_t deadline = xp_now_ns() + 10000000000ull;
        while (atomic_load(returned) == 0 && xp_now_ns() < deadline)
            usleep(100);
        usleep(1000 + (round * 7919u) % 19000u);
    }
    kill(pid, SIGKILL);
    uint64_t before = atomic_load(returned); /* the calls that returned before the kill, and maybe a few more */
    siginfo_t si;
    waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT); /* dead, not reaped: the controller sees how */
    uint64_t after = atomic_load(returned);
    trace_id_t pre = 0;
    if (ok)
        ok = CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0);
    CHECK_EQ_INT(xp_wait(pid), 128 + SIGKILL);
    char names[96];
    snprintf(names, sizeof names, "/dev/shm/tracelog.%u.%d.names", (unsigned)geteuid(), (int)pid);
    ok &= CHECK_MSG(access(names, F_OK) != 0, "round %u: %s left behind", round, names); /* the controller removed it */
    if (ok) {
        pt_events evs = {0};
        CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
        trace_event_id_t id;
        CHECK_ERR(posix_trace_trid_eventid_open(pre, "kill:seq", &id), EINVAL); /* a log: names are read, not opened */
        uint64_t next = 0, lost = 0;
        long end = -1;
        for (size_t i = 0; i < evs.n; i++) {
            const pt_event *e = &evs.ev[i];
            if (e->info.posix_event_id == POSIX_TRACE_OVERFLOW)
                lost++;
            if (e->info.posix_event_id == PROCESS_END)
                end = (long)i;
            if (e->info.posix_event_id < 32 || e->len != 8)
                continue;
            uint64_t seq;
            memcpy(&seq, e->data, 8);
            if (seq == next)
                next++;
        }
        /* The call the kill interrupted may have recorded its event before returning: one
           event more than the calls that returned is right, two would be invented. */
        ok &= CHECK_MSG(next >= before && next <= after + 1,
                        "round %u: the log holds events 0..%llu in order; %llu calls had returned at the kill",
                        round, (unsigned long long)next, (unsigned long long)before);
        /* A kill between the reservation and the commit of the interrupted call's record: that
           record is counted lost (design note, section 7), with its OVERFLOW before the end. */
        ok &= CHECK_MSG(lost <= 1, "round %u: %llu losses", round, (unsigned long long)lost);
        ok &= CHECK_MSG(end >= 0, "round %u: the log says how the program ended", round);
        if (end >= 0 && evs.ev[end].len == 8) {
            int32_t how_code[2];
            memcpy(how_code, evs.ev[end].data, 8);
            ok &= CHECK_EQ_INT(how_code[0], 2);
            ok &= CHECK_EQ_INT(how_code[1], SIGKILL);
            const pt_event *last = &evs.ev[evs.n - 1];
            ok &= CHECK_MSG(end == (long)evs.n - 1, "round %u: the end is event %ld of %zu; the last is id %u, %zu bytes",
                            round, end, evs.n, (unsigned)last->info.posix_event_id, last->len);
        }
        *events += next;
        pt_events_free(&evs);
        posix_trace_close(pre);
    }
    close(fd);
    munmap((void *)returned, 4096);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
    return ok ? 0 : -1;
}

static void test_traced_program_killed_50_times(void)
{
    uint64_t events = 0;
    unsigned failed = 0;
    for (unsigned round = 0; round < KILLS && failed < 3; round++)
        failed += one_kill(round, &events) != 0;
    CHECK_EQ(failed, 0);
    printf("%u kills: %llu events recorded before the kills, all in the logs\n", KILLS,
           (unsigned long long)events);
}

/*
 * The traced program for the second case: records phase by phase, one phase
 * per byte from the test ('1', '2', '3': 2000 events of id "phase:<n>"
 * each), answering 'd' after each; exits 0 after 'q'.
 */
static void phases_main(int up, int down) __attribute__((noreturn));
static void phases_main(int up, int down)
{
    trace_event_id_t ids[3];
    if (posix_trace_eventid_open("phase:1", &ids[0]) || posix_trace_eventid_open("phase:2", &ids[1]) ||
        posix_trace_eventid_open("phase:3", &ids[2]))
        _exit(2);
    xp_send(up, 'r');
    for (;;) {
        int c = xp_recv(down, 30000);
        if (c == 'q')
            _exit(0);
        if (c < '1' || c > '3')
            _exit(3);
        for (uint32_t i = 0; i < 2000; i++)
            posix_trace_event(ids[c - '1'], &i, sizeof i);
        xp_send(up, 'd');
    }
}

/* A controller in a child of the test: traces `target` into a log on fd, says 's' once started, then waits for 'q' or its death. */
static void controller_main(pid_t target, int fd, int up, int down) __attribute__((noreturn));
static void controller_main(pid_t target, int fd, int up, int down)
{
    trace_attr_t attr;
    pt_attr(&attr, POSIX_TRACE_FLUSH, 1u << 20, 16);
    trace_id_t trid;
    int e = posix_trace_create_withlog(target, &attr, fd, &trid);
    if (!e)
        e = posix_trace_start(trid);
    xp_send(up, e ? 'e' : 's');
    if (e)
        _exit(10);
    if (xp_recv(down, 30000) != 'q')
        _exit(11);
    _exit(posix_trace_shutdown(trid) ? 12 : 0);
}

static void test_controller_killed_then_another(void)
{
    int up[2], down[2], cup[2], cdown[2];
    if (pipe(up) || pipe(down) || pipe(cup) || pipe(cdown))
        TL_DIE("pipe");
    pid_t traced = pt_fork(90);
    if (traced == 0)
        phases_main(up[1], down[0]);
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'r');

    int fd1 = temp_log(), fd2 = temp_log();
    pid_t c1 = pt_fork(60);
    if (c1 == 0)
        controller_main(traced, fd1, cup[1], cdown[0]);
    CHECK_EQ_INT(xp_recv(cup[0], 10000), 's');
    xp_send(down[1], '1');
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'd');
    kill(c1, SIGKILL); /* the controller dies: the traced program goes on */
    CHECK_EQ_INT(xp_wait(c1), 128 + SIGKILL);
    xp_send(down[1], '2');
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'd');

    pid_t c2 = pt_fork(60); /* a second controller attaches */
    if (c2 == 0)
        controller_main(traced, fd2, cup[1], cdown[0]);
    CHECK_EQ_INT(xp_recv(cup[0], 10000), 's');
    xp_send(down[1], '3');
    CHECK_EQ_INT(xp_recv(up[0], 10000), 'd');
    xp_send(cdown[1], 'q');
    CHECK_EQ_INT(xp_wait(c2), 0);
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(traced), 0); /* it finished its work normally */

    /* The second log holds phase 3 (the first was written until its controller died). */
    trace_id_t pre;
    if (CHECK_ERR(posix_trace_open(fd2, &pre), 0)) {
        trace_event_id_t p3;
        pt_events evs = {0};
        CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
        long found = -1;
        for (size_t i = 0; i < evs.n && found < 0; i++) {
            char name[TRACE_EVENT_NAME_MAX];
            if (posix_trace_eventid_get_name(pre, evs.ev[i].info.posix_event_id, name) == 0 &&
                strcmp(name, "phase:3") == 0)
                found = (long)i;
        }
        if (CHECK(found >= 0)) {
            p3 = evs.ev[found].info.posix_event_id;
            CHECK_EQ(pt_count(&evs, p3), 2000);
        }
        pt_events_free(&evs);
        posix_trace_close(pre);
    }
    /* The first log reads back (up to its last write: no trailer, its writer was killed). */
    trace_id_t pre1;
    if (CHECK_ERR(posix_trace_open(fd1, &pre1), 0)) {
        pt_events evs = {0};
        pt_read_all(pre1, 0, &evs);
        printf("the killed controller's log: %zu events readable\n", evs.n);
        pt_events_free(&evs);
        posix_trace_close(pre1);
    }
    close(fd1), close(fd2);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
    close(cup[0]), close(cup[1]), close(cdown[0]), close(cdown[1]);
}

int main(void)
{
    pt_watchdog(280);
    PT_RUN(test_traced_program_killed_50_times);
    PT_RUN(test_controller_killed_then_another);
    return pt_finish();
}
