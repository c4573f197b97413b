/*
 * A controller process tracing another one through the standard calls
 * (posix_trace_create[_withlog] with pid != 0; docs/design/cross-process.md):
 * every control call works from the controller, the names the traced
 * process opens have the same ids on both sides, the log is written by the
 * controller and ends with how the traced process ended; and the errors:
 * ESRCH for no such process, ENOTSUP (fast) for a process that runs no
 * libtracelog, EPERM for another user's process. And no event is lost while
 * one thread of the traced process maps a new stream and others record.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <trace.h>
#include <tracelog/reader.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "xproc_helpers.h"

#define PROCESS_END 9 /* tracelog_process_end */
#define BURST 2000

static int temp_log(void)
{
    char path[] = "/tmp/tl_ctl_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        TL_DIE("mkstemp");
    unlink(path);
    return fd;
}

/*
 * The traced process: opens "ctl:a", waits for 'g', records BURST events
 * of it and one of "ctl:b", opens "ctl:c" (the controller opened it first),
 * says its id, then waits for 'q' and exits with 7.
 */
static void traced_main(int up, int down) __attribute__((noreturn));
static void traced_main(int up, int down)
{
    trace_event_id_t a, b, c;
    if (posix_trace_eventid_open("ctl:a", &a) || posix_trace_eventid_open("ctl:b", &b))
        _exit(2);
    xp_send_id(up, a);
    if (xp_recv(down, 20000) != 'g')
        _exit(4);
    for (uint32_t seq = 0; seq < BURST; seq++)
        posix_trace_event(a, &seq, sizeof seq);
    posix_trace_event(b, NULL, 0);
    if (posix_trace_eventid_open("ctl:c", &c))
        _exit(5);
    xp_send_id(up, c);
    if (xp_recv(down, 20000) != 'q')
        _exit(6);
    _exit(7);
}

/* The log's tracelog_process_end: one, last of its kind, with how, code and the traced process's pid. */
static void check_process_end(const pt_events *evs, pid_t pid, int32_t how, int32_t code)
{
    long end = pt_find_last(evs, PROCESS_END);
    if (!CHECK(end >= 0) || !CHECK_EQ(evs->ev[end].len, 8))
        return;
    int32_t how_code[2];
    memcpy(how_code, evs->ev[end].data, 8);
    CHECK_EQ_INT(how_code[0], how);
    CHECK_EQ_INT(how_code[1], code);
    CHECK_EQ_INT(evs->ev[end].info.posix_pid, pid);
    CHECK_EQ(pt_count(evs, PROCESS_END), 1);
}

static void test_controller_controls_a_child(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0)
        traced_main(up[1], down[0]);
    trace_event_id_t a = 0, c_child = 0;
    CHECK_ERR(xp_recv_id(up[0], &a), 0);

    int fd = temp_log();
    trace_attr_t attr;
    pt_attr(&attr, POSIX_TRACE_FLUSH, 4u << 20, 64);
    posix_trace_attr_setname(&attr, "controller");
    trace_id_t trid;
    if (!CHECK_ERR(posix_trace_create_withlog(pid, &attr, fd, &trid), 0)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        close(fd);
        return;
    }
    /* A traced process never waits for its controller unless asked (docs/design/cross-process.md, 2). */
    trace_attr_t used;
    unsigned wait_us = 1;
    CHECK_ERR(posix_trace_get_attr(trid, &used), 0);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&used, &wait_us), 0);
    CHECK_EQ(wait_us, 0);
    /* Names: the traced process's ids, seen from here; one opened here first keeps its id there. */
    trace_event_id_t a_here, b_here, c_here;
    CHECK_ERR(posix_trace_trid_eventid_open(trid, "ctl:a", &a_here), 0);
    CHECK_EQ_INT(a_here, a);
    CHECK_ERR(posix_trace_trid_eventid_open(trid, "ctl:b", &b_here), 0);
    CHECK_ERR(posix_trace_trid_eventid_open(trid, "ctl:c", &c_here), 0);
    char name[TRACE_EVENT_NAME_MAX];
    CHECK_ERR(posix_trace_eventid_get_name(trid, a, name), 0);
    CHECK_STR_EQ(name, "ctl:a");
    int unavailable = 0, seen_a = 0;
    trace_event_id_t listed;
    while (posix_trace_eventtypelist_getnext_id(trid, &listed, &unavailable) == 0 && !unavailable)
        seen_a |= listed == a;
    CHECK(seen_a);

    /* Filter: ctl:b is filtered out, and get_filter says so. */
    trace_event_set_t set = pt_set_of(b_here), got;
    CHECK_ERR(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_get_filter(trid, &got), 0);
    int member = 0;
    posix_trace_eventset_ismember(b_here, &got, &member);
    CHECK(member);
    CHECK_ERR(posix_trace_start(trid), 0);
    struct posix_trace_status_info st;
    CHECK_ERR(posix_trace_get_status(trid, &st), 0);
    CHECK_EQ_INT(st.posix_stream_status, POSIX_TRACE_RUNNING);

    xp_send(down[1], 'g');
    CHECK_ERR(xp_recv_id(up[0], &c_child), 0);
    CHECK_EQ_INT(c_child, c_here);
    CHECK_ERR(posix_trace_flush(trid), 0);
    CHECK_ERR(posix_trace_stop(trid), 0);
    CHECK_ERR(posix_trace_get_status(trid, &st), 0);
    CHECK_EQ_INT(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
    CHECK_EQ_INT(st.posix_stream_flush_error, 0);
    CHECK_ERR(posix_trace_clear(trid), 0);

    /* It ends: the log says how, the handle still works until shutdown. */
    xp_send(down[1], 'q');
    siginfo_t si;
    CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0);
    CHECK_EQ_INT(xp_wait(pid), 7);
    pt_events evs = {0};
    CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
    size_t in_order = 0;
    for (size_t i = 0; i < evs.n; i++)
        if (evs.ev[i].info.posix_event_id == a && evs.ev[i].len == 4) {
            uint32_t seq;
            memcpy(&seq, evs.ev[i].data, 4);
            in_order += seq == in_order;
            CHECK_EQ_INT(evs.ev[i].info.posix_pid, pid);
        }
    CHECK_EQ(in_order, BURST);
    CHECK_EQ(pt_count(&evs, a), BURST);
    CHECK_EQ(pt_count(&evs, b_here), 0); /* filtered out */
    check_process_end(&evs, pid, 1, 7); /* exited, 7 */
    CHECK_ERR(posix_trace_eventid_get_name(pre, a, name), 0);
    CHECK_STR_EQ(name, "ctl:a");
    CHECK_ERR(posix_trace_eventid_get_name(pre, PROCESS_END, name), 0);
    CHECK_STR_EQ(name, "tracelog_process_end");
    pt_events_free(&evs);
    posix_trace_close(pre);
    close(fd);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

/* The traced process of the end tests: opens "end:a", says its id, waits for 'g', records BURST events, ends (exit 5 or SIGKILL). */
static void ending_main(int up, int down, int killed) __attribute__((noreturn));
static void ending_main(int up, int down, int killed)
{
    trace_event_id_t a;
    if (posix_trace_eventid_open("end:a", &a))
        _exit(2);
    xp_send_id(up, a);
    if (xp_recv(down, 20000) != 'g')
        _exit(4);
    for (uint32_t seq = 0; seq < BURST; seq++)
        posix_trace_event(a, &seq, sizeof seq);
    if (killed)
        raise(SIGKILL);
    _exit(5);
}

/* The log as it is on disk (through another open file description). */
typedef struct on_disk {
    int read;      /* it could be opened */
    int clean;     /* it ends with a trailer, nothing wrong found */
    size_t n;      /* events of a */
    uint32_t last; /* the last event's id */
} on_disk;

static on_disk read_on_disk(int fd, trace_event_id_t a)
{
    on_disk d = {0};
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int rfd = open(path, O_RDONLY | O_CLOEXEC);
    tracelog_reader *r;
    tracelog_error err;
    if (rfd < 0 || tracelog_reader_open(rfd, NULL, &r, &err) != TRACELOG_OK) {
        if (rfd >= 0)
            close(rfd);
        return d;
    }
    d.read = 1;
    tracelog_event ev;
    while (tracelog_reader_next(r, &ev) == TRACELOG_OK) {
        d.n += ev.event_id == (uint32_t)a;
        d.last = ev.event_id;
    }
    tracelog_reader_info info;
    tracelog_reader_get_info(r, &info);
    d.clean = info.clean;
    tracelog_reader_close(r);
    close(rfd);
    return d;
}

/* Complete on disk: clean (it ends with a trailer), BURST events of a, and the end last. */
static void check_complete_on_disk(int fd, trace_event_id_t a)
{
    on_disk d = read_on_disk(fd, a);
    if (!CHECK(d.read))
        return;
    CHECK_MSG(d.clean, "the log on disk has no trailer after the traced process's end");
    CHECK_EQ(d.n, BURST);
    CHECK_EQ(d.last, PROCESS_END);
}

/*
 * The traced process's end is noticed at once, whatever the policy (a
 * LOOP or UNTIL_FULL stream has no flusher): the stream is drained and
 * SUSPENDED, the end written, and the log made complete on disk with a
 * trailer, before any flush or shutdown (LOOP and UNTIL_FULL used to wait
 * for them; FLUSH left the end in memory when every event was out already,
 * and no stream's log had a trailer before the shutdown). FLUSH: with a
 * stream far too small for the burst, whose producer waits for room, as
 * its controller asked: every event is in the log.
 */
static void check_end_logged_promptly(int policy, int killed)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0)
        ending_main(up[1], down[0], killed);
    trace_event_id_t a = 0;
    CHECK_ERR(xp_recv_id(up[0], &a), 0);
    int fd = temp_log();
    trace_attr_t attr;
    /* FLUSH: a 4 KiB stream, which holds about 56 of the BURST events, and a traced process that
       waits for room (asked for: by default it never waits for its controller), so nothing is lost. */
    pt_attr(&attr, policy, policy == POSIX_TRACE_FLUSH ? 4096 : 4u << 20, 64);
    CHECK_ERR(tracelog_trace_attr_setflushwait(&attr, 1000000), 0);
    trace_id_t trid;
    if (!CHECK_ERR(posix_trace_create_withlog(pid, &attr, fd, &trid), 0)) {
        kill(pid, SIGKILL);
        xp_wait(pid);
        close(fd);
        return;
    }
    trace_attr_t used;
    unsigned wait_us = 1;
    CHECK_ERR(posix_trace_get_attr(trid, &used), 0);
    CHECK_ERR(tracelog_trace_attr_getflushwait(&used, &wait_us), 0);
    CHECK_EQ(wait_us, policy == POSIX_TRACE_FLUSH ? 1000000 : 0);
    CHECK_ERR(posix_trace_start(trid), 0);
    xp_send(down[1], 'g');
    siginfo_t si;
    CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0);
    /* Within 5 s (a bound against a hang, not a speed target): no flush, no shutdown called. The
       stream is SUSPENDED when the end is seen, before the end is written: the log is looked at too
       (chunks go out as the flusher drains them, so the events may all be written before the end). */
    struct posix_trace_status_info st = {0};
    tracelog_trace_stats stats = {0};
    for (uint64_t t0 = xp_now_ns(); xp_now_ns() - t0 < 5000000000ull; usleep(1000)) {
        if (posix_trace_get_status(trid, &st) || tracelog_trace_get_stats(trid, &stats))
            break;
        on_disk d = read_on_disk(fd, a);
        /* the end is written, then the trailer: a look between the two saw no trailer (1 run in ~30) */
        if (st.posix_stream_status == POSIX_TRACE_SUSPENDED && stats.log_events_written >= BURST + 1 &&
            d.last == PROCESS_END && d.clean)
            break;
    }
    CHECK_EQ_INT(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
    CHECK_MSG(stats.log_events_written >= BURST + 1, "written before shutdown: %llu of %d events and the end",
              (unsigned long long)stats.log_events_written, BURST + 1);
    check_complete_on_disk(fd, a);
    trace_id_t pre;
    CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0);
    CHECK_EQ_INT(xp_wait(pid), killed ? 128 + SIGKILL : 5);
    pt_events evs = {0};
    CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
    CHECK_EQ(pt_count(&evs, a), BURST);
    check_process_end(&evs, pid, killed ? 2 : 1, killed ? SIGKILL : 5); /* killed by SIGKILL, or exited 5 */
    pt_events_free(&evs);
    posix_trace_close(pre);
    close(fd);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

static void test_end_logged_promptly_loop(void) { check_end_logged_promptly(POSIX_TRACE_LOOP, 0); }
static void test_end_logged_promptly_until_full(void) { check_end_logged_promptly(POSIX_TRACE_UNTIL_FULL, 1); }
static void test_end_logged_promptly_flush(void) { check_end_logged_promptly(POSIX_TRACE_FLUSH, 0); }

/* Without a log: the controller reads the traced process's events with the getnext functions. */
/* ---- threads recording while one of them maps the stream a controller announced ---- */

#define MAP_ROUNDS 3
#define MAP_EVENTS 100000

typedef struct map_racer {
    trace_event_id_t id;
    uint32_t index;
    pthread_barrier_t *go;
} map_racer;

static void *map_racer_main(void *arg)
{
    const map_racer *r = arg;
    pthread_barrier_wait(r->go);
    for (uint32_t seq = 0; seq < MAP_EVENTS; seq++) {
        uint32_t payload[2] = {r->index, seq};
        posix_trace_event(r->id, payload, sizeof payload);
    }
    return NULL;
}

/* Per round: waits for 'g', two threads record MAP_EVENTS each at once, says 'd'. */
static void map_race_main(int up, int down) __attribute__((noreturn));
static void map_race_main(int up, int down)
{
    trace_event_id_t id;
    if (posix_trace_eventid_open("ctl:race", &id))
        _exit(2);
    xp_send_id(up, id);
    for (int round = 0; round < MAP_ROUNDS; round++) {
        if (xp_recv(down, 20000) != 'g')
            _exit(3);
        pthread_barrier_t go;
        pthread_barrier_init(&go, NULL, 2);
        map_racer r[2] = {{id, 0, &go}, {id, 1, &go}};
        pthread_t th[2];
        for (int i = 0; i < 2; i++)
            if (pthread_create(&th[i], NULL, map_racer_main, &r[i]))
                _exit(4);
        for (int i = 0; i < 2; i++)
            pthread_join(th[i], NULL);
        pthread_barrier_destroy(&go);
        xp_send(up, 'd');
    }
    _exit(0);
}

/*
 * MAP_ROUNDS rounds of a controller's FLUSH stream of stream_size bytes for
 * a map_race_main child whose two threads record MAP_EVENTS each at once:
 * every event in the log, each thread's in order, timestamps never going
 * back, nothing reported. APPEND log and waits for room when small (the
 * lanes fill), else the defaults. Returns the chunks in merge sets.
 */
static uint64_t race_rounds(size_t stream_size, int small)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0)
        map_race_main(up[1], down[0]);
    trace_event_id_t id = 0;
    CHECK_ERR(xp_recv_id(up[0], &id), 0);
    uint64_t merged = 0;
    for (int round = 0; round < MAP_ROUNDS; round++) {
        int fd = temp_log();
        trace_attr_t attr;
        pt_attr(&attr, POSIX_TRACE_FLUSH, stream_size, 64);
        if (small) {
            posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
            tracelog_trace_attr_setflushwait(&attr, 1000000);
        }
        trace_id_t trid;
        if (!CHECK_ERR(posix_trace_create_withlog(pid, &attr, fd, &trid), 0)) {
            close(fd);
            break;
        }
        CHECK_ERR(posix_trace_start(trid), 0);
        xp_send(down[1], 'g');
        CHECK_EQ_INT(xp_recv(up[0], 20000), 'd');
        CHECK_ERR(posix_trace_flush(trid), 0);
        tracelog_trace_stats st;
        CHECK_ERR(tracelog_trace_get_stats(trid, &st), 0);
        CHECK_EQ(st.events_lost, 0);
        CHECK_ERR(posix_trace_shutdown(trid), 0);
        tracelog_reader *r;
        tracelog_error err;
        lseek(fd, 0, SEEK_SET);
        if (CHECK_EQ_INT(tracelog_reader_open(fd, NULL, &r, &err), TRACELOG_OK)) {
            tl_test_thread_seqs q;
            tl_test_read_thread_seqs(r, (uint32_t)id, 2, 8, 0, &q);
            CHECK_MSG(q.bad == 0 && q.back == 0 && q.next[0] == MAP_EVENTS && q.next[1] == MAP_EVENTS,
                      "round %d: %u and %u events of %u in order, %llu out of place, %llu back in time", round,
                      q.next[0], q.next[1], MAP_EVENTS, (unsigned long long)q.bad, (unsigned long long)q.back);
            CHECK_EQ(tracelog_reader_problem_count(r), 0);
            tracelog_reader_info info;
            tracelog_reader_get_info(r, &info);
            merged += info.merged_chunks;
            tracelog_reader_close(r);
        }
        close(fd);
    }
    CHECK_EQ_INT(xp_wait(pid), 0);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
    return merged;
}

/*
 * Regression: the first event after a controller announced a stream makes
 * its thread map it; meanwhile the event word showed neither the request nor
 * the stream (nor, from the second stream on, anything but the stream it
 * replaces), and the other threads' events were dropped without a count: a
 * whole burst of 150,000 in bench_xproc. Each round, a new 64 MiB stream
 * (the larger the one it replaces, the longer the mapping takes): every
 * event of both threads is in the log, in order.
 */
static void test_no_event_lost_while_a_stream_is_mapped(void) { race_rounds(64u << 20, 0); }

/*
 * A controller's flusher drains another process's lanes by groups too
 * (recorder/groups.c, each group under the buffer's SIGBUS guard): the child's
 * two threads record into small lanes at once, the stream waits for room
 * (the controller asks it to), and the log holds every event once, each
 * thread's in order, timestamps never going back; with two CPUs, chunks in
 * merge sets.
 */
static void test_controller_drains_by_groups(void)
{
    uint64_t merged = race_rounds(256u << 10, 1);
    cpu_set_t cpus;
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) >= 2)
        CHECK_MSG(merged > 0, "the controller's flusher drained by groups: %llu chunks in merge sets",
                  (unsigned long long)merged);
}

static void test_controller_reads_without_log(void)
{
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t pid = pt_fork(60);
    if (pid == 0)
        traced_main(up[1], down[0]);
    trace_event_id_t a = 0, c = 0;
    CHECK_ERR(xp_recv_id(up[0], &a), 0);
    trace_attr_t attr;
    pt_attr(&attr, POSIX_TRACE_LOOP, 4u << 20, 64);
    trace_id_t trid;
    if (CHECK_ERR(posix_trace_create(pid, &attr, &trid), 0)) {
        CHECK_ERR(posix_trace_start(trid), 0);
        xp_send(down[1], 'g');
        CHECK_ERR(xp_recv_id(up[0], &c), 0);
        pt_events evs = {0};
        CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
        CHECK_EQ(pt_count(&evs, a), BURST);
        pt_events_free(&evs);
        pt_shutdown(trid);
    }
    xp_send(down[1], 'q');
    CHECK_EQ_INT(xp_wait(pid), 7);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

static void test_no_such_process(void)
{
    pid_t pid = pt_fork(10);
    if (pid == 0)
        _exit(0);
    xp_wait(pid); /* reaped: the pid names nobody (until reused, which a test cannot rule out: we retry) */
    trace_id_t trid;
    int e = posix_trace_create(pid, NULL, &trid);
    CHECK_MSG(e == ESRCH, "posix_trace_create(reaped pid) = %s", pt_errname(e));
}

/* A process that is not our child and never ran libtracelog: ENOTSUP at once, never a wait. */
static void test_not_instrumented_is_enotsup_fast(void)
{
    int up[2];
    if (pipe(up))
        TL_DIE("pipe");
    pid_t mid = pt_fork(30);
    if (mid == 0) { /* a grandchild: not our child, so nothing is made for it */
        pid_t g = fork();
        if (g == 0) {
            execl("/bin/sleep", "sleep", "20", (char *)NULL);
            _exit(127);
        }
        if (write(up[1], &g, sizeof g) != (ssize_t)sizeof g)
            _exit(1);
        _exit(0);
    }
    pid_t g = 0;
    CHECK(read(up[0], &g, sizeof g) == (ssize_t)sizeof g);
    xp_wait(mid);
    usleep(100000); /* let it reach exec */
    trace_id_t trid;
    uint64_t t0 = xp_now_ns();
    int e = posix_trace_create_withlog(g, NULL, 1, &trid);
    uint64_t took = xp_now_ns() - t0;
    CHECK_MSG(e == ENOTSUP, "create for a process without libtracelog = %s", pt_errname(e));
    CHECK_MSG(took < 100000000ull, "it took %llu us", (unsigned long long)(took / 1000));
    printf("ENOTSUP for a process without libtracelog in %llu us\n", (unsigned long long)(took / 1000));
    kill(g, SIGKILL);
    close(up[0]), close(up[1]);
}

/* Another user's process: EPERM. Needs root, to run a controller as another user. */
static void test_other_users_process_is_eperm(void)
{
    if (!xp_can_switch_users()) {
        printf("SKIP test_other_users_process_is_eperm: not root, cannot run a second user\n");
        return;
    }
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        TL_DIE("pipe");
    pid_t target = pt_fork(60); /* root's process, instrumented */
    if (target == 0)
        traced_main(up[1], down[0]);
    trace_event_id_t a;
    CHECK_ERR(xp_recv_id(up[0], &a), 0);
    pid_t ctl = pt_fork(30);
    if (ctl == 0) {
        if (xp_become(XP_OTHER_UID, XP_OTHER_UID))
            _exit(90);
        trace_id_t trid;
        int e = posix_trace_create(target, NULL, &trid);
        _exit(e == EPERM ? 0 : e == 0 ? 91 : 92);
    }
    int st = xp_wait(ctl);
    CHECK_MSG(st == 0, "controller as uid %u: exit %d (0: EPERM; 91: allowed; 92: another error)", XP_OTHER_UID,
              st);
    kill(target, SIGKILL);
    xp_wait(target);
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
}

int main(void)
{
    pt_watchdog(240);
    PT_RUN(test_controller_controls_a_child);
    PT_RUN(test_end_logged_promptly_loop);
    PT_RUN(test_end_logged_promptly_until_full);
    PT_RUN(test_end_logged_promptly_flush);
    PT_RUN(test_controller_reads_without_log);
    PT_RUN(test_no_event_lost_while_a_stream_is_mapped);
    PT_RUN(test_controller_drains_by_groups);
    PT_RUN(test_no_such_process);
    PT_RUN(test_not_instrumented_is_enotsup_fast);
    PT_RUN(test_other_users_process_is_eperm);
    return pt_finish();
}
