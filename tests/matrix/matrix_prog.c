/*
 * matrix_prog: the one instrumented program of the composition matrix
 * (tests/test_composition_matrix.sh, issue 26: "a recorded log is a whole
 * log"). Every path of the matrix runs this same workload; only the role
 * (who makes the stream, who writes the log, how the program ends) changes.
 *
 * The workload (workload()): the main thread records `mx.msg` "main: begin",
 * starts worker 1 (which names itself "mx-named" with pthread_setname_np
 * before its first event) and waits for its first event, then starts worker 2
 * (unnamed) and waits for its first event, so that the threads first appear
 * in the same order on every path; then both run freely. Each worker records
 * WORKER_ITERATIONS times a typed `mx.job` (u32, enum8, f64, i32), an
 * untyped `mx.tick` (8 binary bytes) and an `mx.noise` that every path's
 * filter removes, and every 25th time an untyped `mx.note` (text) and a
 * typed `mx.msg` (u16 and a trailing char[]). The main thread ends with
 * `mx.note` "main: end". Everything is deterministic but the interleaving of
 * the two workers.
 *
 * Modes (ENDING is `exit`, exit status 0, or `kill`, SIGKILL after the
 * workload; OUT `-` is standard output):
 *   own-flush OUT        stream FLUSH, log APPEND; exit() shuts it down (P22)
 *   own-loop OUT         stream FLUSH, log LOOP; stop and shutdown
 *   own-untilfull OUT    stream FLUSH, log UNTIL_FULL; shutdown
 *   own-sloop OUT        stream LOOP, log APPEND; posix_trace_flush, then exit()
 *   online OUT           a stream without log; a reader thread reads it with
 *                        posix_trace_getnext_event until the STOP that main
 *                        records after the workload, and writes what it read
 *                        to OUT with the native writer (below)
 *   ctl-online OUT ENDING  a controller: forks a child that execs `bare
 *                        ENDING`, traces it with a stream without log
 *                        (posix_trace_create with its pid; every name of the
 *                        program opened first, in its order, with
 *                        posix_trace_trid_eventid_open and
 *                        tracelog_trid_eventid_open_typed, so that they have
 *                        the ids the program would give them), reads it
 *                        online until tracelog_process_end (id 9) and writes
 *                        OUT likewise
 *   fork OUT ENDING      an INHERITED stream with log (LOOP stream, APPEND
 *                        log); a forked child does the workload and ENDING;
 *                        the parent flushes once it has reaped it. (Not
 *                        FLUSH: its flusher thread runs at the fork, and
 *                        under AddressSanitizer a child forked while another
 *                        thread holds the sanitizer's allocator lock hangs
 *                        in its first allocation; glibc's malloc is safe.)
 *   spawn OUT ENDING     an INHERITED stream with log (FLUSH, APPEND); a
 *                        child started with posix_spawn (routed by <trace.h>)
 *                        runs `bare ENDING`
 *   bare ENDING          the workload in a stream someone else made (ptlog
 *                        record, or an inherited one)
 *   bare-wait ENDING     opens its names, prints "ready", then waits for
 *                        SIGUSR1 before the workload (ptlog attach: the test
 *                        attaches in between)
 *   analyze IN OUT       an analyzer: opens the log IN as a pre-recorded
 *                        stream (posix_trace_open; TRACELOG_READ_AHEAD
 *                        applies), reads it with posix_trace_getnext_event
 *                        to its end and writes OUT likewise
 *
 * Every path's filter removes mx.noise and is set before the start, so
 * every log's posix_trace_start says event_filter = [mx.noise].
 *
 * The online writers: what posix_trace_getnext_event gives (id, pid,
 * pthread_t, timestamp, address, truncation, payload) goes to a .ptl through
 * tracelog_writer_append, kernel tid 0 (posix_trace_event_info has none).
 * Event types are named as posix_trace_eventid_get_name names them, for
 * every id of posix_trace_eventtypelist_getnext_id and every id read; the
 * POSIX reading interface gives no schemas, so the writer gives each name
 * the schema this program registers for it (the system events: format-spec
 * 5.6.7's), so that the payloads read are decoded the same way.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <tracelog.h>
#include <unistd.h>

extern char **environ;

#define WORKER_ITERATIONS 500
#define NAMED_THREAD "mx-named"
#define PROCESS_END ((trace_event_id_t)9) /* tracelog_process_end, <trace.h> P23 */

#define JOB_SCHEMA "u32 job; enum8 state {IDLE=0, BUSY=1, DONE=2}; f64 cost; i32 delta"
#define MSG_SCHEMA "u16 worker; char[] text"

struct job {
    uint32_t job;
    uint8_t state;
    uint8_t pad[3];
    double cost;
    int32_t delta;
    uint32_t pad2;
};
_Static_assert(sizeof(struct job) == 24, "struct job is the schema's 24 bytes");

struct msg {
    uint16_t worker;
    char text[62];
};

/* The names, in the order every path opens them. */
enum { EV_JOB, EV_MSG, EV_NOTE, EV_TICK, EV_NOISE, EV_COUNT };
static const struct {
    const char *name;
    const char *schema; /* NULL: untyped */
} names[EV_COUNT] = {
    {"mx.job", JOB_SCHEMA}, {"mx.msg", MSG_SCHEMA}, {"mx.note", NULL}, {"mx.tick", NULL}, {"mx.noise", NULL},
};
static trace_event_id_t ids[EV_COUNT];

static const char *prog;

static void die(const char *what, int e)
{
    fprintf(stderr, "matrix_prog %s: %s: %s\n", prog, what, strerror(e));
    exit(1);
}

static void check(const char *what, int e)
{
    if (e)
        die(what, e);
}

/* Opens every name, in the program's order. */
static void open_names(void)
{
    for (int i = 0; i < EV_COUNT; i++) {
        int e = names[i].schema ? tracelog_eventid_open_typed(names[i].name, names[i].schema, &ids[i])
                                : posix_trace_eventid_open(names[i].name, &ids[i]);
        check(names[i].name, e);
    }
}

/* The filter of every path: mx.noise out, set before the start. */
static void set_filter(trace_id_t trid)
{
    trace_event_set_t set;
    posix_trace_eventset_empty(&set);
    posix_trace_eventset_add(ids[EV_NOISE], &set);
    check("posix_trace_set_filter", posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
}

/* ---- the workload ------------------------------------------------------ */

static sem_t first_event[2];

static void record_msg(unsigned worker, const char *text)
{
    struct msg m;
    memset(&m, 0, sizeof m);
    m.worker = (uint16_t)worker;
    size_t n = strlen(text);
    memcpy(m.text, text, n);
    posix_trace_event(ids[EV_MSG], &m, offsetof(struct msg, text) + n);
}

static void *worker(void *arg)
{
    unsigned w = (unsigned)(uintptr_t)arg;
    if (w == 1)
        check("pthread_setname_np", pthread_setname_np(pthread_self(), NAMED_THREAD));
    for (unsigned i = 0; i < WORKER_ITERATIONS; i++) {
        struct job j;
        memset(&j, 0, sizeof j);
        j.job = w * 100000u + i;
        j.state = (uint8_t)(i % 3);
        j.cost = i * 0.25 + w;
        j.delta = (int32_t)i - 500;
        posix_trace_event(ids[EV_JOB], &j, sizeof j);
        if (i == 0)
            sem_post(&first_event[w - 1]);
        uint64_t tick = (uint64_t)w << 32 | i;
        posix_trace_event(ids[EV_TICK], &tick, sizeof tick);
        posix_trace_event(ids[EV_NOISE], "noise", 5);
        if (i % 25 == 0) {
            char text[48];
            int n = snprintf(text, sizeof text, "worker %u at %u", w, i);
            posix_trace_event(ids[EV_NOTE], text, (size_t)n);
            record_msg(w, text);
        }
        if (i % 25 == 24) { /* spread the events over several of the flusher's writes */
            struct timespec pause = {0, 1000000};
            nanosleep(&pause, NULL);
        }
    }
    return NULL;
}

static void workload(void)
{
    pthread_t t[2];
    record_msg(0, "main: begin");
    for (unsigned w = 1; w <= 2; w++) {
        check("sem_init", sem_init(&first_event[w - 1], 0, 0) ? errno : 0);
        check("pthread_create", pthread_create(&t[w - 1], NULL, worker, (void *)(uintptr_t)w));
        while (sem_wait(&first_event[w - 1]) != 0)
            if (errno != EINTR)
                die("sem_wait", errno);
    }
    for (int w = 0; w < 2; w++)
        check("pthread_join", pthread_join(t[w], NULL));
    posix_trace_event(ids[EV_NOTE], "main: end", 9);
}

/*
 * LeakSanitizer asks the program whether to run (sanitizer/lsan_interface.h;
 * ignored without it): not in a forked child, whose heap is its parent's
 * copy (tests/support/posix_helpers.c does the same).
 */
static volatile int in_forked_child;
int __lsan_is_turned_off(void);
int __lsan_is_turned_off(void) { return in_forked_child; }

static int parse_ending(const char *s)
{
    if (s && strcmp(s, "exit") == 0)
        return 0;
    if (s && strcmp(s, "kill") == 0)
        return 1;
    fprintf(stderr, "matrix_prog %s: ENDING must be exit or kill\n", prog);
    exit(2);
}

static void end_as(int kill_it)
{
    if (kill_it) {
        raise(SIGKILL);
        die("raise(SIGKILL)", EINTR);
    }
    exit(0);
}

/* ---- streams of the process's own ------------------------------------- */

static int open_out(const char *path)
{
    if (strcmp(path, "-") == 0)
        return STDOUT_FILENO;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        die(path, errno);
    return fd;
}

static trace_id_t own_stream(const char *out, int stream_policy, int log_policy, int inherited)
{
    trace_attr_t attr;
    trace_id_t trid;
    int fd = open_out(out);
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "matrix");
    check("setstreamfullpolicy", posix_trace_attr_setstreamfullpolicy(&attr, stream_policy));
    check("setlogfullpolicy", posix_trace_attr_setlogfullpolicy(&attr, log_policy));
    check("setstreamsize", posix_trace_attr_setstreamsize(&attr, 16u << 20));
    if (inherited)
        check("setinherited", posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
    open_names();
    check("posix_trace_create_withlog", posix_trace_create_withlog(0, &attr, fd, &trid));
    posix_trace_attr_destroy(&attr);
    set_filter(trid);
    check("posix_trace_start", posix_trace_start(trid));
    return trid;
}

/* Waits for the child and checks it ended as asked. */
static void reap(pid_t pid, int kill_it)
{
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            die("waitpid", errno);
    int as_asked = kill_it ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
                           : WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!as_asked) {
        fprintf(stderr, "matrix_prog %s: the child ended with status 0x%x\n", prog, (unsigned)status);
        exit(1);
    }
}

static char *self_argv[4];

static void self_args(const char *argv0, const char *mode, const char *ending)
{
    self_argv[0] = (char *)argv0;
    self_argv[1] = (char *)mode;
    self_argv[2] = (char *)ending;
    self_argv[3] = NULL;
}

/* ---- the online writers ------------------------------------------------- */

typedef struct online {
    trace_id_t trid;
    tracelog_writer *w;
    unsigned char defined[1u << 16]; /* ids given to the writer */
} online;

static const char *schema_of(const char *name, char *buf, size_t size)
{
    size_t words = sizeof(trace_event_set_t) / 8;
    for (int i = 0; i < EV_COUNT; i++)
        if (strcmp(name, names[i].name) == 0)
            return names[i].schema;
    if (strcmp(name, "posix_trace_start") == 0)
        snprintf(buf, size, "eventset[%zu] event_filter", words);
    else if (strcmp(name, "posix_trace_filter") == 0)
        snprintf(buf, size, "eventset[%zu] old_event_filter; eventset[%zu] new_event_filter", words, words);
    else if (strcmp(name, "posix_trace_stop") == 0)
        snprintf(buf, size, "enum32 auto {MANUAL=0, AUTOMATIC=1}");
    else if (strcmp(name, "tracelog_process_end") == 0)
        snprintf(buf, size, "enum32 how {UNKNOWN=0, EXITED=1, SIGNALED=2, DUMPED=3}; i32 code");
    else if (strcmp(name, "posix_trace_overflow") == 0 || strcmp(name, "posix_trace_resume") == 0 ||
             strcmp(name, "posix_trace_flush_start") == 0 || strcmp(name, "posix_trace_flush_stop") == 0)
        snprintf(buf, size, "%s", "");
    else
        return NULL;
    return buf;
}

/*
 * Names id in the writer as posix_trace_eventid_get_name names it; an id it
 * cannot name stays unnamed (said on stderr): the reading shows it as it is.
 */
static void online_define(online *o, trace_event_id_t id)
{
    if ((unsigned)id >= sizeof o->defined || o->defined[id])
        return;
    o->defined[id] = 1;
    char name[TRACE_EVENT_NAME_MAX + 1], schema[256];
    int e = posix_trace_eventid_get_name(o->trid, id, name);
    if (e) {
        fprintf(stderr, "matrix_prog %s: posix_trace_eventid_get_name(%d): %s\n", prog, (int)id, strerror(e));
        return;
    }
    tracelog_error err;
    tracelog_status st =
        tracelog_writer_define_event_schema(o->w, (uint32_t)id, name, schema_of(name, schema, sizeof schema), &err);
    if (st != TRACELOG_OK) {
        fprintf(stderr, "matrix_prog %s: define %s: %s\n", prog, name, tracelog_strerror(st));
        exit(1);
    }
}

static void online_open(online *o, trace_id_t trid, const char *out)
{
    o->trid = trid;
    tracelog_metadata meta;
    tracelog_metadata_init(&meta);
    snprintf(meta.trace_name, sizeof meta.trace_name, "matrix online");
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    tracelog_error err;
    if (tracelog_writer_create(open_out(out), &meta, &opt, &o->w, &err) != TRACELOG_OK) {
        fprintf(stderr, "matrix_prog %s: writer: %s\n", prog, err.message);
        exit(1);
    }
}

/* Reads until an event of id last (included), or the end of a log's events (NO_LAST), each event to the writer. */
#define NO_LAST ((trace_event_id_t)-1)
static void online_read(online *o, trace_event_id_t last)
{
    static unsigned char data[8192];
    for (;;) {
        struct posix_trace_event_info info;
        size_t len;
        int unavailable;
        int e = posix_trace_getnext_event(o->trid, &info, data, sizeof data, &len, &unavailable);
        if (e == EINTR)
            continue;
        check("posix_trace_getnext_event", e);
        if (unavailable && last == NO_LAST)
            return;
        if (unavailable)
            continue;
        online_define(o, info.posix_event_id);
        tracelog_event ev = {
            .timestamp_ns = (uint64_t)info.posix_timestamp.tv_sec * 1000000000u + (uint64_t)info.posix_timestamp.tv_nsec,
            .event_id = (uint32_t)info.posix_event_id,
            .pid = (uint32_t)info.posix_pid,
            .kernel_tid = 0,
            .tid = (uint64_t)info.posix_thread_id,
            .address = (uint64_t)(uintptr_t)info.posix_prog_address,
            .truncation = (uint32_t)info.posix_truncation_status,
            .payload_len = (uint32_t)len,
            .payload = data,
        };
        tracelog_status st = tracelog_writer_append(o->w, &ev);
        if (st != TRACELOG_OK) {
            fprintf(stderr, "matrix_prog %s: append: %s\n", prog, tracelog_strerror(st));
            exit(1);
        }
        if (info.posix_event_id == last)
            return;
    }
}

/* Names every type of the stream's list, then writes the trailer. */
static void online_close(online *o)
{
    int unavailable = 0;
    posix_trace_eventtypelist_rewind(o->trid);
    for (;;) {
        trace_event_id_t id;
        check("posix_trace_eventtypelist_getnext_id", posix_trace_eventtypelist_getnext_id(o->trid, &id, &unavailable));
        if (unavailable)
            break;
        online_define(o, id);
    }
    tracelog_error err;
    if (tracelog_writer_close(o->w, &err) != TRACELOG_OK) {
        fprintf(stderr, "matrix_prog %s: writer close: %s\n", prog, err.message);
        exit(1);
    }
}

static online the_online;

static void *online_reader(void *arg)
{
    online_read(arg, POSIX_TRACE_STOP);
    return NULL;
}

static trace_attr_t no_log_attr(void)
{
    trace_attr_t attr;
    posix_trace_attr_init(&attr);
    posix_trace_attr_setname(&attr, "matrix");
    check("setstreamfullpolicy", posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL));
    check("setstreamsize", posix_trace_attr_setstreamsize(&attr, 16u << 20));
    return attr;
}

static int run_online(const char *out)
{
    trace_attr_t attr = no_log_attr();
    trace_id_t trid;
    open_names();
    check("posix_trace_create", posix_trace_create(0, &attr, &trid));
    posix_trace_attr_destroy(&attr);
    set_filter(trid);
    online_open(&the_online, trid, out);
    check("posix_trace_start", posix_trace_start(trid));
    pthread_t reader;
    check("pthread_create", pthread_create(&reader, NULL, online_reader, &the_online));
    workload();
    check("posix_trace_stop", posix_trace_stop(trid));
    check("pthread_join", pthread_join(reader, NULL));
    online_close(&the_online);
    check("posix_trace_shutdown", posix_trace_shutdown(trid));
    return 0;
}

static int run_analyze(const char *in, const char *out)
{
    int fd = open(in, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        die(in, errno);
    trace_id_t trid;
    check("posix_trace_open", posix_trace_open(fd, &trid));
    online_open(&the_online, trid, out);
    online_read(&the_online, NO_LAST);
    online_close(&the_online);
    check("posix_trace_close", posix_trace_close(trid));
    close(fd);
    return 0;
}

static int run_ctl_online(const char *argv0, const char *out, const char *ending)
{
    int kill_it = parse_ending(ending);
    int go[2];
    if (pipe2(go, O_CLOEXEC) != 0)
        die("pipe2", errno);
    self_args(argv0, "bare", ending);
    pid_t pid = fork();
    if (pid < 0)
        die("fork", errno);
    if (pid == 0) { /* traced from its first event: it execs once the stream exists */
        char c;
        close(go[1]);
        if (read(go[0], &c, 1) != 1)
            _exit(127);
        execv("/proc/self/exe", self_argv);
        _exit(127);
    }
    close(go[0]);
    trace_attr_t attr = no_log_attr();
    trace_id_t trid;
    check("posix_trace_create(pid)", posix_trace_create(pid, &attr, &trid));
    posix_trace_attr_destroy(&attr);
    /* A controller that knows the program: its names, in its order, opened in its map before it runs. */
    for (int i = 0; i < EV_COUNT; i++)
        check(names[i].name, names[i].schema
                                 ? tracelog_trid_eventid_open_typed(trid, names[i].name, names[i].schema, &ids[i])
                                 : posix_trace_trid_eventid_open(trid, names[i].name, &ids[i]));
    set_filter(trid);
    online_open(&the_online, trid, out);
    check("posix_trace_start", posix_trace_start(trid));
    if (write(go[1], "g", 1) != 1)
        die("write", errno);
    close(go[1]);
    online_read(&the_online, PROCESS_END); /* <trace.h> P23: id 9 */
    online_close(&the_online);
    check("posix_trace_shutdown", posix_trace_shutdown(trid));
    reap(pid, kill_it);
    return 0;
}

/* ---- main ------------------------------------------------------------------ */

static int usage(void)
{
    fprintf(stderr, "usage: matrix_prog own-flush|own-loop|own-untilfull|own-sloop|online OUT\n"
                    "       matrix_prog ctl-online|fork|spawn OUT exit|kill\n"
                    "       matrix_prog bare|bare-wait exit|kill\n"
                    "       matrix_prog analyze IN OUT\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return usage();
    const char *mode = prog = argv[1];
    if (strcmp(mode, "bare") == 0 || strcmp(mode, "bare-wait") == 0) {
        int kill_it = parse_ending(argv[2]);
        sigset_t usr1;
        sigemptyset(&usr1);
        sigaddset(&usr1, SIGUSR1);
        if (mode[4]) /* bare-wait: SIGUSR1 blocked before anything, then waited for */
            check("pthread_sigmask", pthread_sigmask(SIG_BLOCK, &usr1, NULL));
        open_names();
        if (mode[4]) { /* every name open: a controller's --exclude finds the program's ids */
            int sig;
            printf("ready\n");
            fflush(stdout);
            check("sigwait", sigwait(&usr1, &sig));
        }
        workload();
        end_as(kill_it);
    }
    if (strncmp(mode, "own-", 4) == 0) {
        trace_id_t trid;
        if (strcmp(mode, "own-flush") == 0) {
            own_stream(argv[2], POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND, 0);
            workload();
            exit(0); /* the stream is shut down at exit (P22) */
        } else if (strcmp(mode, "own-loop") == 0) {
            trid = own_stream(argv[2], POSIX_TRACE_FLUSH, POSIX_TRACE_LOOP, 0);
            workload();
            check("posix_trace_stop", posix_trace_stop(trid));
            check("posix_trace_shutdown", posix_trace_shutdown(trid));
        } else if (strcmp(mode, "own-untilfull") == 0) {
            trid = own_stream(argv[2], POSIX_TRACE_FLUSH, POSIX_TRACE_UNTIL_FULL, 0);
            workload();
            check("posix_trace_shutdown", posix_trace_shutdown(trid));
        } else if (strcmp(mode, "own-sloop") == 0) {
            trid = own_stream(argv[2], POSIX_TRACE_LOOP, POSIX_TRACE_APPEND, 0);
            workload();
            check("posix_trace_flush", posix_trace_flush(trid));
            exit(0);
        } else {
            return usage();
        }
        return 0;
    }
    if (strcmp(mode, "online") == 0)
        return run_online(argv[2]);
    if (argc != 4)
        return usage();
    if (strcmp(mode, "analyze") == 0)
        return run_analyze(argv[2], argv[3]);
    if (strcmp(mode, "ctl-online") == 0)
        return run_ctl_online(argv[0], argv[2], argv[3]);
    if (strcmp(mode, "fork") == 0 || strcmp(mode, "spawn") == 0) {
        int kill_it = parse_ending(argv[3]);
        int forked = mode[0] == 'f';
        trace_id_t trid = own_stream(argv[2], forked ? POSIX_TRACE_LOOP : POSIX_TRACE_FLUSH, POSIX_TRACE_APPEND, 1);
        pid_t pid;
        if (forked) {
            pid = fork();
            if (pid < 0)
                die("fork", errno);
            if (pid == 0) {
                in_forked_child = 1;
                workload();
                end_as(kill_it);
            }
        } else {
            self_args(argv[0], "bare", argv[3]);
            check("posix_spawn", posix_spawn(&pid, "/proc/self/exe", NULL, NULL, self_argv, environ));
        }
        reap(pid, kill_it);
        if (forked)
            check("posix_trace_flush", posix_trace_flush(trid));
        check("posix_trace_shutdown", posix_trace_shutdown(trid));
        return 0;
    }
    return usage();
}
