/*
 * A traced process that shrinks the stream buffers its controllers made for
 * it (ftruncate on the object it holds open: docs/design/cross-process.md,
 * section 9, item 11). Before the SIGBUS guard was wired in, the
 * controller's next look at a lane (its log's flusher, a read) raised
 * SIGBUS and killed the controller. Now:
 * - a log (FLUSH policy, drained in the background) keeps the events
 *   drained before, and ends with OVERFLOW and POSIX_TRACE_ERROR (EFAULT);
 *   the status reports EFAULT once; the log reads back valid (ptlog verify);
 * - a log whose events were not drained yet (LOOP: only a flush drains):
 *   posix_trace_flush returns EFAULT, the log holds the loss marks only;
 * - a stream without log, read alongside: the events read before, then
 *   (once a read or the controller's STOP marker found the pages gone)
 *   OVERFLOW and the end (how unknown), then nothing more;
 * - shrunk to 0 or to one page (the stream's header left, the lanes gone).
 * And a traced process that cuts its name map or its control object to 0
 * bytes (the controller maps both): the controller reads zeros there from
 * then on; the POSIX calls that read the map (on the main thread: a fault
 * outside a guarded read, which the crash handler once took for a crash
 * and died of) return, and the log verifies with every event drained.
 * And one that keeps writing "moved" into its name map while four threads
 * of the controller ask for names: each call replaces the controller's view
 * of the map, which two threads once did at once (a read of a map the
 * other had unmapped, a NULL dereference).
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <trace.h>
#include <tracelog/posix.h>
#include <unistd.h>

#include "posix/names_map.h"
#include "posix_helpers.h"
#include "xproc_helpers.h"

#define PROCESS_END 9 /* tracelog_process_end: int32 how, int32 code */
#define BURST 1000

/* Shrinks every stream buffer made for this process (/dev/shm/tracelog.<euid>.<pid>.<16 hex digits>). */
static int shrink_buffers(off_t size)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "tracelog.%u.%d.", (unsigned)geteuid(), (int)getpid());
    DIR *d = opendir("/dev/shm");
    if (!d)
        return 0;
    int n = 0;
    for (struct dirent *de; (de = readdir(d));) {
        if (strncmp(de->d_name, prefix, (size_t)plen) != 0 || strlen(de->d_name + plen) != 16)
            continue;
        int fd = openat(dirfd(d), de->d_name, O_RDWR | O_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, size) == 0)
            n++;
        if (fd >= 0)
            close(fd);
    }
    closedir(d);
    return n;
}

/* Cuts this process's object whose /dev/shm name is "tracelog.<euid>.<pid>" + suffix (suffix: a prefix of the rest). */
static int cut_object(const char *suffix)
{
    char prefix[96];
    int plen = snprintf(prefix, sizeof prefix, "tracelog.%u.%d%s", (unsigned)geteuid(), (int)getpid(), suffix);
    DIR *d = opendir("/dev/shm");
    int n = 0;
    for (struct dirent *de; d && (de = readdir(d));) {
        int whole = !*suffix && strcmp(de->d_name, prefix) == 0; /* the control object: the name itself */
        if (!whole && (!*suffix || strncmp(de->d_name, prefix, (size_t)plen) != 0))
            continue;
        int fd = openat(dirfd(d), de->d_name, O_RDWR | O_CLOEXEC);
        if (fd >= 0 && ftruncate(fd, 0) == 0)
            n++;
        if (fd >= 0)
            close(fd);
    }
    if (d)
        closedir(d);
    return n;
}

/* Our mapping of our own name map (/proc/self/maps), or NULL. */
static struct tl_names *own_name_map(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512];
    unsigned long lo, hi;
    void *found = NULL;
    while (f && !found && fgets(line, sizeof line, f))
        if (strstr(line, "/dev/shm/tracelog.") && strstr(line, ".names.") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
            found = (void *)lo;
    if (f)
        fclose(f);
    return found;
}

static void keep_moving(void)
{
    struct tl_names *m = own_name_map();
    for (int i = 0; m && i < 10000; i++) {
        atomic_store_explicit(&m->moved, 1, memory_order_relaxed);
        usleep(100);
    }
}

/*
 * The traced process: opens "shrink:a", says its id; then for each byte:
 * 'g' records BURST events (data: a sequence number) and answers 'd'; '0'
 * or 'p' shrinks its buffers to 0 or one page and answers with their count
 * (it records nothing after: its own stores would fault); 'n' and 'c' cut
 * its name map and its control object to 0 bytes (the same: 'c' ends its
 * recording) and answer with their count; 'm' writes moved = 1 into its
 * name map every 100 us for 1 s, then answers 'd'.
 */
static void traced_main(int up, int down) __attribute__((noreturn));
static void traced_main(int up, int down)
{
    trace_event_id_t a;
    if (posix_trace_eventid_open("shrink:a", &a))
        _exit(2);
    xp_send_id(up, a);
    for (uint32_t seq = 0;;) {
        int c = xp_recv(down, 30000);
        if (c == 'g') {
            for (uint32_t n = 0; n < BURST; n++, seq++)
                posix_trace_event(a, &seq, sizeof seq);
            xp_send(up, 'd');
        } else if (c == '0' || c == 'p') {
            xp_send(up, (char)('0' + shrink_buffers(c == '0' ? 0 : sysconf(_SC_PAGESIZE))));
        } else if (c == 'n' || c == 'c') {
            xp_send(up, (char)('0' + cut_object(c == 'n' ? ".names." : "")));
        } else if (c == 'm') {
            keep_moving();
            xp_send(up, 'd');
        } else {
            _exit(4);
        }
    }
}

/* a's events hold 0 .. n-1 in the order read. */
static void check_sequence(const pt_events *evs, trace_event_id_t a, uint32_t n)
{
    uint32_t next = 0;
    for (size_t i = 0; i < evs->n; i++) {
        if (evs->ev[i].info.posix_event_id != a)
            continue;
        uint32_t seq = UINT32_MAX;
        if (evs->ev[i].len == sizeof seq)
            memcpy(&seq, evs->ev[i].data, sizeof seq);
        if (!CHECK_EQ(seq, next))
            return;
        next++;
    }
    CHECK_EQ(next, n);
}

/* ptlog verify accepts the log on fd (when the tests name a ptlog). */
static void check_verifies(int fd)
{
    const char *ptlog = getenv("PTLOG");
    if (!ptlog || !*ptlog)
        return;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "'%s' verify /proc/%d/fd/%d >/dev/null", ptlog, (int)getpid(), fd);
    CHECK_MSG(system(cmd) == 0, "ptlog verify accepts the log");
}

/* The log on fd ends with OVERFLOW then POSIX_TRACE_ERROR (EFAULT) after n of a's events; ptlog verify passes. */
static void check_log(trace_id_t trid, int fd, trace_event_id_t a, uint32_t n)
{
    trace_id_t pre;
    pt_events evs = {0};
    if (!CHECK_ERR(pt_shutdown_and_open(trid, fd, &pre), 0))
        return;
    CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
    posix_trace_shutdown(pre);
    check_sequence(&evs, a, n);
    long overflow = pt_find_last(&evs, POSIX_TRACE_OVERFLOW), error = pt_find_last(&evs, POSIX_TRACE_ERROR);
    CHECK_MSG(overflow >= 0 && error == overflow + 1, "OVERFLOW at %ld, then ERROR at %ld", overflow, error);
    CHECK(overflow > pt_find_last(&evs, a));
    if (error >= 0) {
        int code = 0;
        if (CHECK_EQ(evs.ev[error].len, sizeof code))
            memcpy(&code, evs.ev[error].data, sizeof code);
        CHECK_EQ_INT(code, EFAULT);
    }
    pt_events_free(&evs);
    check_verifies(fd);
}

/* Reads the stream without log: a's n events, then OVERFLOW and the end (how unknown), then nothing. */
static void check_read(trace_id_t trid, const xp_child *tp, uint32_t n)
{
    pt_events evs = {0};
    CHECK_ERR(pt_read_all(trid, 1, &evs), 0);
    check_sequence(&evs, tp->id, n);
    CHECK_EQ(pt_count(&evs, POSIX_TRACE_OVERFLOW), 1);
    long end = pt_find_last(&evs, PROCESS_END);
    CHECK_MSG(end >= 0 && end == (long)evs.n - 1 && evs.ev[end - 1].info.posix_event_id == POSIX_TRACE_OVERFLOW,
              "OVERFLOW then the end, last: end at %ld of %zu", end, evs.n);
    if (end >= 0) {
        int32_t how_code[2] = {-1, -1};
        if (CHECK_EQ(evs.ev[end].len, 8))
            memcpy(how_code, evs.ev[end].data, 8);
        CHECK_EQ_INT(how_code[0], 0);
        CHECK_EQ_INT(evs.ev[end].info.posix_pid, tp->pid);
    }
    pt_events_free(&evs);
    /* And then as for an ended process: nothing more, a timed read times out. */
    struct posix_trace_event_info info;
    int unavailable = 0;
    CHECK_ERR(posix_trace_trygetnext_event(trid, &info, NULL, 0, NULL, &unavailable), 0);
    CHECK_EQ_INT(unavailable, 1);
    struct timespec soon;
    clock_gettime(CLOCK_REALTIME, &soon);
    soon.tv_nsec += 20000000;
    if (soon.tv_nsec >= 1000000000)
        soon.tv_sec++, soon.tv_nsec -= 1000000000;
    CHECK_ERR(posix_trace_timedgetnext_event(trid, &info, NULL, 0, NULL, &unavailable, &soon), ETIMEDOUT);
}

/*
 * A FLUSH log drained in the background and a stream without log read
 * alongside; the process records a burst, both take it, then it shrinks
 * both buffers.
 */
static void check_drained_then_shrunk(char how)
{
    xp_child tp;
    trace_id_t logged, read;
    int fd = tl_test_tmpfd();
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_FLUSH, fd, &logged) ||
        pt_create_started(tp.pid, POSIX_TRACE_LOOP, -1, &read)) {
        xp_child_end(&tp);
        return;
    }
    CHECK_EQ_INT(xp_child_ask(&tp, 'g'), 'd');
    pt_events before = {0};
    CHECK_ERR(pt_read_all(read, 1, &before), 0);
    check_sequence(&before, tp.id, BURST);
    pt_events_free(&before);
    CHECK_ERR(posix_trace_flush(logged), 0); /* the burst is in the log */
    CHECK_EQ_INT(xp_child_ask(&tp, how), '2');
    /* The flusher finds the pages gone if it still had a marker to read there (shrunk to 0: at its
       first look), else this flush does, writing FLUSH_START: either reports EFAULT in the status. */
    int e = posix_trace_flush(logged);
    CHECK_MSG(e == 0 || e == EFAULT, "posix_trace_flush after the shrink: %s", pt_errname(e));
    struct posix_trace_status_info st = {0};
    CHECK_ERR(posix_trace_get_status(logged, &st), 0);
    CHECK_EQ_INT(st.posix_stream_flush_error, EFAULT);
    CHECK_ERR(posix_trace_get_status(logged, &st), 0);
    CHECK_EQ_INT(st.posix_stream_flush_error, 0); /* reported once */
    CHECK_ERR(posix_trace_flush(logged), 0);      /* nothing more to drain */
    tracelog_trace_stats stats = {0};
    CHECK_ERR(tracelog_trace_get_stats(logged, &stats), 0);
    CHECK(stats.events_lost >= 1);
    /* Every event was read: with the lanes' heads in the page left, a read alone may find nothing
       lost; the STOP marker written into the system lane's data finds the page gone. */
    CHECK_ERR(posix_trace_stop(read), 0);
    check_read(read, &tp, 0);
    pt_shutdown(read);
    check_log(logged, fd, tp.id, BURST);
    close(fd);
    xp_child_end(&tp);
}

static void test_drained_then_shrunk_to_0(void) { check_drained_then_shrunk('0'); }
static void test_drained_then_shrunk_to_a_page(void) { check_drained_then_shrunk('p'); }

/* Shrunk with a burst in the buffers that no one took yet: all of it is lost, the loss is reported. */
static void check_shrunk_before_drained(char how)
{
    xp_child tp;
    trace_id_t logged, read;
    int fd = tl_test_tmpfd();
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_LOOP, fd, &logged) ||
        pt_create_started(tp.pid, POSIX_TRACE_LOOP, -1, &read)) {
        xp_child_end(&tp);
        return;
    }
    CHECK_EQ_INT(xp_child_ask(&tp, 'g'), 'd');
    CHECK_EQ_INT(xp_child_ask(&tp, how), '2');
    CHECK_ERR(posix_trace_flush(logged), EFAULT);
    CHECK_ERR(posix_trace_flush(logged), 0); /* the log is finalized: nothing more to do */
    check_read(read, &tp, 0);
    pt_shutdown(read);
    check_log(logged, fd, tp.id, 0);
    close(fd);
    xp_child_end(&tp);
}

static void test_shrunk_to_0_before_drained(void) { check_shrunk_before_drained('0'); }
static void test_shrunk_to_a_page_before_drained(void) { check_shrunk_before_drained('p'); }

/*
 * A FLUSH log of a process that records a burst, then cuts its name map
 * ('n') or its control object ('c'): the controller's calls that read the
 * map (here, on this thread: not a guarded read) return, the log keeps the
 * burst, and it verifies.
 */
static void check_object_cut(char what)
{
    xp_child tp;
    trace_id_t logged;
    int fd = tl_test_tmpfd();
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_FLUSH, fd, &logged)) {
        xp_child_end(&tp);
        return;
    }
    CHECK_EQ_INT(xp_child_ask(&tp, 'g'), 'd');
    CHECK_ERR(posix_trace_flush(logged), 0);
    CHECK_EQ_INT(xp_child_ask(&tp, what), '1');
    char name[TRACE_EVENT_NAME_MAX];
    int e = posix_trace_eventid_get_name(logged, tp.id, name); /* known from the log, or not: it returns */
    CHECK_MSG(e == 0 || e == EINVAL, "eventid_get_name after the cut: %s", pt_errname(e));
    trace_event_id_t id;
    e = posix_trace_trid_eventid_open(logged, "shrink:b", &id);
    CHECK_MSG(e == 0 || e == ENOSPC || e == EAGAIN || e == EINVAL, "trid_eventid_open after the cut: %s", pt_errname(e));
    int unavailable = 0;
    posix_trace_eventtypelist_rewind(logged);
    for (int i = 0; i < 1000 && !unavailable; i++)
        if (posix_trace_eventtypelist_getnext_id(logged, &id, &unavailable))
            break;
    struct posix_trace_status_info st;
    CHECK_ERR(posix_trace_get_status(logged, &st), 0);
    CHECK_ERR(posix_trace_flush(logged), 0);
    xp_child_end(&tp);
    trace_id_t pre;
    pt_events evs = {0};
    if (CHECK_ERR(pt_shutdown_and_open(logged, fd, &pre), 0)) {
        CHECK_ERR(pt_read_all(pre, 0, &evs), 0);
        posix_trace_shutdown(pre);
        check_sequence(&evs, tp.id, BURST);
        pt_events_free(&evs);
    }
    check_verifies(fd);
    close(fd);
}

static void test_name_map_cut(void) { check_object_cut('n'); }

typedef struct asker {
    trace_id_t trid;
    trace_event_id_t id;
    atomic_int *stop;
    unsigned long calls;
} asker;

static void *ask_names(void *arg)
{
    asker *a = arg;
    while (!atomic_load(a->stop)) {
        char name[TRACE_EVENT_NAME_MAX];
        trace_event_id_t id;
        posix_trace_eventid_get_name(a->trid, a->id, name);
        posix_trace_trid_eventid_open(a->trid, "shrink:a", &id);
        a->calls++;
    }
    return NULL;
}

static void test_moved_map_asked_from_threads(void)
{
    xp_child tp;
    trace_id_t trid;
    if (!CHECK_ERR(xp_child_start(&tp, traced_main), 0) || pt_create_started(tp.pid, POSIX_TRACE_LOOP, -1, &trid)) {
        xp_child_end(&tp);
        return;
    }
    atomic_int stop = 0;
    asker a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (asker){trid, tp.id, &stop, 0};
        pthread_create(&th[i], NULL, ask_names, &a[i]);
    }
    CHECK_EQ_INT(xp_child_ask(&tp, 'm'), 'd');
    atomic_store(&stop, 1);
    unsigned long calls = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        calls += a[i].calls;
    }
    CHECK(calls > 0);
    pt_shutdown(trid);
    xp_child_end(&tp);
}
static void test_control_object_cut(void) { check_object_cut('c'); }

int main(void)
{
    pt_watchdog(120);
    PT_RUN(test_drained_then_shrunk_to_0);
    PT_RUN(test_drained_then_shrunk_to_a_page);
    PT_RUN(test_shrunk_to_0_before_drained);
    PT_RUN(test_shrunk_to_a_page_before_drained);
    PT_RUN(test_name_map_cut);
    PT_RUN(test_control_object_cut);
    PT_RUN(test_moved_map_asked_from_threads);
    return pt_finish();
}
