/*
 * The traced process's end as a controller sees it, and a traced process
 * that scribbles over the shared buffer (docs/design/cross-process.md,
 * sections 7 and 9):
 * - without a log: the end (tracelog_process_end) is read after every event
 *   the process recorded, the stream is SUSPENDED, a blocked
 *   posix_trace_getnext_event is woken by it, and afterwards the stream
 *   reads as an active stream with no event (blocks, ETIMEDOUT, unavailable);
 * - a process killed in the middle of a record: the record is counted lost
 *   at once (one OVERFLOW, before the end), the events after it in its
 *   lane come before the end (log and no log), not a second later after it;
 * - the lane count and lane size of the mapping changed after create: the
 *   statistics, the status and clear use the controller's own geometry.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <trace.h>
#include <tracelog/posix.h>
#include <unistd.h>

#include "posix_helpers.h"
#include "stream/produce.h"
#include "xproc_helpers.h"

#define PROCESS_END 9 /* tracelog_process_end: int32 how, int32 code */
#define BURST 1000

/*
 * The traced process: opens "end:a", says its id; then for each byte from
 * the test: 'g' records BURST events of it (data: a sequence number going on
 * from the last burst) and answers 'd'; 'q' exits with 5; 'k' kills itself.
 */
static void traced_main(int up, int down) __attribute__((noreturn));
static void traced_main(int up, int down)
{
    trace_event_id_t a;
    if (posix_trace_eventid_open("end:a", &a))
        _exit(2);
    xp_send_id(up, a);
    for (uint32_t seq = 0;;) {
        int c = xp_recv(down, 30000);
        if (c == 'q')
            _exit(5);
        if (c == 'k')
            raise(SIGKILL);
        if (c != 'g')
            _exit(4);
        for (uint32_t n = 0; n < BURST; n++, seq++)
            posix_trace_event(a, &seq, sizeof seq);
        xp_send(up, 'd');
    }
}

static void burst(xp_child *t)
{
    CHECK_EQ_INT(xp_child_ask(t, 'g'), 'd');
}

/* Dead, not reaped: the controller can still read how it ended. */
static void wait_dead(pid_t pid)
{
    siginfo_t si;
    CHECK(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) == 0);
}

/* The end event: how and code, the traced process's pid. */
static void check_end(const pt_event *ev, pid_t pid, int32_t how, int32_t code)
{
    int32_t how_code[2] = {-1, -1};
    CHECK_EQ_INT(ev->info.posix_event_id, PROCESS_END);
    if (CHECK_EQ(ev->len, 8))
        memcpy(how_code, ev->data, 8);
    CHECK_EQ_INT(how_code[0], how);
    CHECK_EQ_INT(how_code[1], code);
    CHECK_EQ_INT(ev->info.posix_pid, pid);
}

/* The sequence numbers of a's events, in the order read: 0 .. n-1 each once. */
static void check_sequence(const pt_events *evs, trace_event_id_t a, uint32_t n)
{
    uint32_t next = 0;
    for (size_t i = 0; i < evs->n; i++) {
        if (evs->ev[i].info.posix_event_id != a || evs->ev[i].len != 4)
            continue;
        uint32_t seq;
        memcpy(&seq, evs->ev[i].data, 4);
        next += seq == next;
    }
    CHECK_EQ(next, n);
    CHECK_EQ(pt_count(evs, a), n);
}

/* ---- without a log: the end read after the events, a blocked reader woken ---- */

static void on_signal(int sig) { (void)sig; }

typedef struct waker {
    pthread_t reader;
    int down;             /* the traced process's pipe */
    _Atomic int returned; /* the reader's getnext returned */
} waker;

/* Lets the reader block first, ends the traced process, and interrupts the reader if the end does not wake it. */
static void *waker_main(void *arg)
{
    waker *w = arg;
    usleep(100000);
    xp_send(w->down, 'q');
    for (int i = 0; i < 5000 && !atomic_load(&w->returned); i++)
        usleep(1000);
    if (!atomic_load(&w->returned))
        pthread_kill(w->reader, SIGUSR1); /* EINTR: the test fails instead of hanging */
    return NULL;
}

static void test_end_read_without_log(void)
{
    xp_child tp;
    trace_id_t trid;
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_LOOP, -1, &trid)) {
        xp_child_end(&tp);
        return;
    }
    burst(&tp);
    pt_events evs = {0};
    unsigned char buf[64];
    struct posix_trace_event_info info;
    size_t len;
    int unavailable;
    while (pt_count(&evs, tp.id) < BURST) {
        if (!CHECK_ERR(posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable), 0))
            break;
        pt_events_push(&evs, &info, buf, len);
    }
    check_sequence(&evs, tp.id, BURST);

    /* Blocked with nothing to read, the reader is woken by the end, and reads it. */
    struct sigaction sa = {.sa_handler = on_signal}, old;
    sigaction(SIGUSR1, &sa, &old);
    waker w = {.reader = pthread_self(), .down = tp.down[1]};
    pthread_t th;
    if (pthread_create(&th, NULL, waker_main, &w))
        TL_DIE("pthread_create");
    uint64_t t0 = xp_now_ns();
    int e = posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable);
    atomic_store(&w.returned, 1);
    pthread_join(th, NULL);
    sigaction(SIGUSR1, &old, NULL);
    CHECK_MSG(e == 0, "getnext blocked at the traced process's end returned %s", pt_errname(e));
    if (e == 0 && CHECK_EQ_INT(unavailable, 0)) {
        pt_events end = {0};
        pt_events_push(&end, &info, buf, len);
        check_end(&end.ev[0], tp.pid, 1, 5); /* exited, 5 */
        pt_events_free(&end);
        printf("the blocked reader got the end %.1f ms after the exit was asked\n",
               (double)(xp_now_ns() - t0 - 100000000ull) / 1e6);
    }

    /* Afterwards: SUSPENDED, no more events (trygetnext), a timed read times out. */
    struct posix_trace_status_info st;
    CHECK_ERR(posix_trace_get_status(trid, &st), 0);
    CHECK_EQ_INT(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
    unavailable = 0;
    CHECK_ERR(posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable), 0);
    CHECK(unavailable != 0);
    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    soon.tv_nsec += 20000000;
    if (soon.tv_nsec >= 1000000000) {
        soon.tv_sec++;
        soon.tv_nsec -= 1000000000;
    }
    CHECK_ERR(posix_trace_timedgetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable, &soon), ETIMEDOUT);
    pt_events_free(&evs);
    pt_shutdown(trid);
    CHECK_EQ_INT(xp_wait(tp.pid), 5);
    xp_child_close(&tp);
}

/* Killed with events unread: all of them, then the end (SIGKILL), then nothing; status SUSPENDED at once. */
static void test_end_after_every_event_without_log(void)
{
    xp_child tp;
    trace_id_t trid;
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_LOOP, -1, &trid)) {
        xp_child_end(&tp);
        return;
    }
    burst(&tp);
    burst(&tp);
    xp_send(tp.down[1], 'k');
    wait_dead(tp.pid);
    struct posix_trace_status_info st;
    CHECK_ERR(posix_trace_get_status(trid, &st), 0);
    CHECK_EQ_INT(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
    pt_events evs = {0};
    CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
    check_sequence(&evs, tp.id, 2 * BURST);
    if (CHECK(evs.n > 0))
        check_end(&evs.ev[evs.n - 1], tp.pid, 2, SIGKILL);
    CHECK_EQ(pt_count(&evs, PROCESS_END), 1);
    pt_events_free(&evs);
    pt_shutdown(trid);
    CHECK_EQ_INT(xp_wait(tp.pid), 128 + SIGKILL);
    xp_child_close(&tp);
}

/* ---- the shared buffer, as the traced process (or anyone of its user) can map it ---- */

typedef struct mapped {
    tl_stream *s;
    size_t size;
} mapped;

/* Maps the stream buffer a controller made for pid (/dev/shm/tracelog.<euid>.<pid>.<16 hex digits>). */
static int map_buffer(pid_t pid, mapped *m)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "tracelog.%u.%d.", (unsigned)geteuid(), (int)pid);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return -1;
    int fd = -1;
    for (struct dirent *de; fd < 0 && (de = readdir(d));)
        if (strncmp(de->d_name, prefix, (size_t)plen) == 0 && strlen(de->d_name + plen) == 16)
            fd = openat(dirfd(d), de->d_name, O_RDWR | O_CLOEXEC);
    closedir(d);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    m->size = (size_t)st.st_size;
    void *p = mmap(NULL, m->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return -1;
    m->s = p;
    return 0;
}

/*
 * What a producer killed between its reservation and its commit leaves:
 * room reserved in the one user lane the traced process writes, never
 * committed. Its next events go after it. The lane, or -1.
 */
static int reserve_uncommitted(const mapped *m)
{
    int lane = -1;
    for (uint32_t i = 0; i < m->s->nlanes; i++)
        if (atomic_load(&tl_stream_lane(m->s, 0)[i].head) != 0)
            lane = lane < 0 ? (int)i : -2;
    if (lane >= 0)
        atomic_fetch_add(&tl_stream_lane(m->s, 0)[lane].head, tl_rec_size(8));
    return lane;
}

/*
 * The traced process dies after a record it never committed, with events
 * after it in the same lane: that record is lost (one OVERFLOW), every
 * event after it comes before the end. The old code waited 200 ms for the
 * record at each read, logged the end, and only a second later skipped it:
 * the events after it came after the end, or never.
 */
static void check_killed_mid_record(int with_log, int events_after)
{
    xp_child tp;
    trace_id_t trid;
    int fd = with_log ? tl_test_tmpfd() : -1;
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_FLUSH * with_log + POSIX_TRACE_LOOP * !with_log, fd, &trid)) {
        xp_child_end(&tp);
        return;
    }
    burst(&tp);
    mapped m = {0};
    if (!CHECK(map_buffer(tp.pid, &m) == 0)) {
        xp_child_end(&tp);
        pt_shutdown(trid);
        return;
    }
    int lane = reserve_uncommitted(&m);
    CHECK_MSG(lane >= 0, "one user lane written, found %d", lane);
    if (events_after)
        burst(&tp);
    xp_send(tp.down[1], 'k');
    wait_dead(tp.pid);
    uint64_t t0 = xp_now_ns();
    pt_events evs = {0};
    if (with_log) {
        struct posix_trace_status_info st = {0};
        tracelog_trace_stats stats = {0};
        for (; xp_now_ns() - t0 < 5000000000ull; usleep(1000)) { /* a bound against a hang */
            if (posix_trace_get_status(trid, &st) || tracelog_trace_get_stats(trid, &stats))
                break;
            if (st.posix_stream_status == POSIX_TRACE_SUSPENDED && stats.log_events_written >= (1u + events_after) * BURST + 2 + events_after)
                break;
        }
        printf("log: %llu events written %.1f ms after the kill\n", (unsigned long long)stats.log_events_written,
               (double)(xp_now_ns() - t0) / 1e6);
        trace_id_t pre;
        if (CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0)) {
            CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
            posix_trace_close(pre);
        }
        close(fd);
    } else {
        CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
        printf("read: %zu events %.1f ms after the kill\n", evs.n, (double)(xp_now_ns() - t0) / 1e6);
        pt_shutdown(trid);
    }
    check_sequence(&evs, tp.id, (1u + (uint32_t)events_after) * BURST);
    CHECK_EQ(pt_count(&evs, POSIX_TRACE_OVERFLOW), 1);
    CHECK_EQ(pt_count(&evs, POSIX_TRACE_RESUME), (size_t)events_after); /* no event after it: no RESUME */
    long end = pt_find_last(&evs, PROCESS_END);
    CHECK_MSG(end >= 0 && end == (long)evs.n - 1, "the end is event %ld of %zu", end, evs.n);
    if (end >= 0)
        check_end(&evs.ev[end], tp.pid, 2, SIGKILL);
    pt_events_free(&evs);
    munmap(m.s, m.size);
    CHECK_EQ_INT(xp_wait(tp.pid), 128 + SIGKILL);
    xp_child_close(&tp);
}

static void test_killed_mid_record_with_log(void) { check_killed_mid_record(1, 1); }
static void test_killed_mid_record_without_log(void) { check_killed_mid_record(0, 1); }
/* The record it died in is the last of its lane: its OVERFLOW comes before the end (it came after it in the log). */
static void test_killed_in_last_record_with_log(void) { check_killed_mid_record(1, 0); }
static void test_killed_in_last_record_without_log(void) { check_killed_mid_record(0, 0); }

/*
 * The traced process changes the lane count and lane size in the shared
 * header after create (here the test does it for it, as its user can):
 * every call of the controller uses its own copy of the geometry. The old
 * statistics, status and clear summed overrun counters over the mapping's
 * lane count (far outside the mapping: SIGSEGV), and start, stop and
 * filter recorded their markers through it (a write outside the mapping).
 */
static void check_hostile_geometry(int with_log)
{
    xp_child tp;
    trace_id_t trid;
    int fd = with_log ? tl_test_tmpfd() : -1;
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) ||
        pt_create_started(tp.pid, with_log ? POSIX_TRACE_FLUSH : POSIX_TRACE_LOOP, fd, &trid)) {
        xp_child_end(&tp);
        return;
    }
    burst(&tp);
    tracelog_trace_stats before = {0}, after = {0};
    CHECK_ERR(tracelog_trace_get_stats(trid, &before), 0);
    mapped m = {0};
    if (CHECK(map_buffer(tp.pid, &m) == 0)) {
        m.s->nlanes = 1u << 30;
        m.s->lane_size = 1ull << 40;
        m.s->max_sys_data = UINT32_MAX;
    }
    CHECK_ERR(tracelog_trace_get_stats(trid, &after), 0);
    CHECK_EQ(after.lanes, before.lanes);
    CHECK(after.events_buffered <= before.events_buffered);
    CHECK_EQ(after.events_lost, 0);
    struct posix_trace_status_info st;
    CHECK_ERR(posix_trace_get_status(trid, &st), 0);
    CHECK_EQ_INT(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
    trace_event_set_t none;
    posix_trace_eventset_empty(&none);
    CHECK_ERR(posix_trace_set_filter(trid, &none, POSIX_TRACE_SET_EVENTSET), 0);
    CHECK_ERR(posix_trace_stop(trid), 0);
    CHECK_ERR(posix_trace_start(trid), 0);
    pt_events evs = {0};
    if (with_log) {
        trace_id_t pre;
        if (CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0)) {
            CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
            posix_trace_close(pre);
        }
        close(fd);
    } else {
        CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
        CHECK_ERR(posix_trace_clear(trid), 0);
        pt_shutdown(trid);
    }
    check_sequence(&evs, tp.id, BURST);
    CHECK_EQ(pt_count(&evs, POSIX_TRACE_FILTER), 1);
    CHECK(pt_count(&evs, POSIX_TRACE_STOP) >= 1);
    CHECK_EQ(pt_count(&evs, POSIX_TRACE_START), 2);
    pt_events_free(&evs);
    if (m.s)
        munmap(m.s, m.size);
    xp_child_end(&tp);
}

static void test_hostile_geometry_with_log(void) { check_hostile_geometry(1); }
static void test_hostile_geometry_without_log(void) { check_hostile_geometry(0); }

/*
 * A controller's log once the traced process's end is in it: the status
 * says every event written was recorded (the end included), and the
 * flusher, with nothing new to write, writes nothing more. The log once
 * counted the end as written but not recorded, so its flusher found the
 * counts apart at every interval and wrote a STATUS block each time.
 */
static void test_ended_log_stays_idle(void)
{
    setenv("TRACELOG_FLUSH_INTERVAL_MS", "10", 1);
    xp_child tp;
    trace_id_t trid;
    int fd = tl_test_tmpfd();
    int started = CHECK_ERR(xp_child_start(&tp, traced_main), 0) && !pt_create_started(tp.pid, POSIX_TRACE_FLUSH, fd, &trid);
    unsetenv("TRACELOG_FLUSH_INTERVAL_MS");
    if (!started) {
        xp_child_end(&tp);
        close(fd);
        return;
    }
    burst(&tp);
    xp_send(tp.down[1], 'q');
    wait_dead(tp.pid);
    struct posix_trace_status_info st = {0};
    tracelog_trace_stats stats = {0};
    for (uint64_t t0 = xp_now_ns(); xp_now_ns() - t0 < 5000000000ull; usleep(1000)) { /* a bound against a hang */
        if (posix_trace_get_status(trid, &st) || tracelog_trace_get_stats(trid, &stats))
            break;
        if (st.posix_stream_status == POSIX_TRACE_SUSPENDED && stats.log_events_written >= BURST + 2)
            break;
    }
    usleep(100000); /* the end's checkpoint and a few intervals */
    struct stat before, after;
    CHECK_ERR(fstat(fd, &before), 0);
    usleep(200000); /* 20 flush intervals */
    CHECK_ERR(fstat(fd, &after), 0);
    CHECK_MSG(after.st_size == before.st_size, "the ended log grew from %lld to %lld bytes with nothing to write",
              (long long)before.st_size, (long long)after.st_size);
    trace_id_t pre;
    if (CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0)) {
        pt_events evs = {0};
        CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
        long end = pt_find_last(&evs, PROCESS_END);
        CHECK_MSG(end >= 0 && end == (long)evs.n - 1, "the end is event %ld of %zu", end, evs.n);
        pt_events_free(&evs);
        posix_trace_close(pre);
    }
    close(fd);
    CHECK_EQ_INT(xp_wait(tp.pid), 5);
    xp_child_close(&tp);
}

int main(void)
{
    pt_watchdog(240);
    PT_RUN(test_end_read_without_log);
    PT_RUN(test_end_after_every_event_without_log);
    PT_RUN(test_killed_mid_record_with_log);
    PT_RUN(test_killed_mid_record_without_log);
    PT_RUN(test_killed_in_last_record_with_log);
    PT_RUN(test_killed_in_last_record_without_log);
    PT_RUN(test_hostile_geometry_with_log);
    PT_RUN(test_hostile_geometry_without_log);
    PT_RUN(test_ended_log_stays_idle);
    return pt_finish();
}
