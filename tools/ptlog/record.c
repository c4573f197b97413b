/*
 * ptlog record and ptlog attach: ptlog as a trace controller
 * (posix_trace_create_withlog with another process's pid; design note
 * docs/design/cross-process.md). The traced program only needs to be
 * linked with libtracelog: ptlog writes the log, so a crash of the program
 * loses nothing it recorded, and the log ends with how it ended. The log
 * describes the traced program (its pid, executable and name), not ptlog.
 * A program that never takes the stream up (not linked with libtracelog, or
 * no trace call) is an error, exit 3, with the log still written; on a
 * terminal ptlog says so after WARN_NS already.
 *
 *   ptlog record [OPTIONS] -o FILE -- PROGRAM [ARGS...]
 *   ptlog attach [OPTIONS] PID -o FILE
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "ptlog.h"

#define MAX_NAMES 64
#define WARN_NS 3000000000ull /* on a terminal: no trace call from the program after this long */
/*
 * The nice value of the threads that drain the traced program's stream into
 * the log, where ptlog may set it (root, CAP_SYS_NICE or RLIMIT_NICE): the
 * program never waits for ptlog, so a drain that gets too small a share of
 * the CPUs (a competing process, the program's own busy threads) loses
 * events. Their CPU time is what the events cost to write, whatever the
 * priority; a higher one only gives it to them when the events come
 * (bench/README.md, "Performance round 3: the recorded path").
 */
#define DRAIN_NICE_DEFAULT (-10)
#define DRAIN_NICE_UNSET 100
/*
 * The stream's size (each recording thread's lane) with the flush policy
 * unless --stream-size says: 8 times the library's default. The lanes are
 * what rides out the times the drain does not run (the program never waits
 * for it): at 5 M events/s per thread, 64 MiB of 64-byte records last
 * 200 ms, 8 MiB 26 ms. Memory is used as a thread writes: up to 64 MiB of
 * shared memory per thread that records (bench/README.md, "Performance
 * round 3: the recorded path"). Loop and until-full keep the library's
 * default: there the size is what the log keeps.
 */
#define FLUSH_STREAM_SIZE_DEFAULT (64u << 20)

typedef struct rec_opts {
    const char *output;
    int stream_policy, log_policy;
    size_t stream_size, log_size;
    const char *events[MAX_NAMES], *excludes[MAX_NAMES];
    size_t nevents, nexcludes;
    int quiet;
    long flush_wait_us; /* --flush-wait; -1: not given (the traced process never waits) */
    int drain_nice;     /* --drain-nice; DRAIN_NICE_UNSET: not given (DRAIN_NICE_DEFAULT where permitted) */
} rec_opts;

static volatile sig_atomic_t stop_signal, stop_count;

static void on_stop(int sig)
{
    stop_signal = sig;
    stop_count++;
}

static int policy_of(const char *cmd, const char *what, const char *s, int allow_flush, int *out)
{
    if (strcmp(s, "loop") == 0)
        *out = POSIX_TRACE_LOOP;
    else if (strcmp(s, "until-full") == 0)
        *out = POSIX_TRACE_UNTIL_FULL;
    else if (allow_flush && strcmp(s, "flush") == 0)
        *out = POSIX_TRACE_FLUSH;
    else if (!allow_flush && strcmp(s, "append") == 0)
        *out = POSIX_TRACE_APPEND;
    else {
        ptlog_msg(cmd, "%s: unknown policy '%s' (%s)", what, s, allow_flush ? "loop, until-full, flush" : "loop, until-full, append");
        return PTLOG_EXIT_USAGE;
    }
    return 0;
}

/* "64M", "4096", "1G": bytes, or a usage error. */
static int size_of(const char *cmd, const char *what, const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10;
    else if (*end == 'M')
        shift = 20;
    else if (*end == 'G')
        shift = 30;
    if (shift)
        end++;
    if (errno || end == s || *end || s[0] == '-' || v == 0 || v > (SIZE_MAX >> shift)) {
        ptlog_msg(cmd, "%s: not a size: '%s' (bytes, or with k, M, G)", what, s);
        return PTLOG_EXIT_USAGE;
    }
    *out = (size_t)(v << shift);
    return 0;
}

/* --flush-wait: microseconds, 0 .. 1,000,000 (tracelog_trace_attr_setflushwait). */
static int wait_of(const char *cmd, const char *s, long *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || s[0] == '-' || v > 1000000) {
        ptlog_msg(cmd, "--flush-wait: not a number of microseconds from 0 to 1000000: '%s'", s);
        return PTLOG_EXIT_USAGE;
    }
    *out = (long)v;
    return 0;
}

/* --drain-nice: a nice value, -20 .. 19. */
static int nice_of(const char *cmd, const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -20 || v > 19) {
        ptlog_msg(cmd, "--drain-nice: not a nice value from -20 to 19: '%s'", s);
        return PTLOG_EXIT_USAGE;
    }
    *out = (int)v;
    return 0;
}

enum {
    OPT_STREAM_POLICY = 256,
    OPT_LOG_POLICY,
    OPT_STREAM_SIZE,
    OPT_LOG_SIZE,
    OPT_EVENT,
    OPT_EXCLUDE,
    OPT_FLUSH_WAIT,
    OPT_DRAIN_NICE
};

/* Options up to the first operand (record: the program; attach: the pid). Returns 0, or an exit code; *first gets the first operand's index. */
static int parse(const char *cmd, int argc, char **argv, rec_opts *o, int *first)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"stream-policy", required_argument, NULL, OPT_STREAM_POLICY},
        {"log-policy", required_argument, NULL, OPT_LOG_POLICY},
        {"stream-size", required_argument, NULL, OPT_STREAM_SIZE},
        {"log-size", required_argument, NULL, OPT_LOG_SIZE},
        {"event", required_argument, NULL, OPT_EVENT},
        {"exclude", required_argument, NULL, OPT_EXCLUDE},
        {"flush-wait", required_argument, NULL, OPT_FLUSH_WAIT},
        {"drain-nice", required_argument, NULL, OPT_DRAIN_NICE},
        {"quiet", no_argument, NULL, 'q'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->stream_policy = POSIX_TRACE_FLUSH;
    o->log_policy = POSIX_TRACE_APPEND;
    o->flush_wait_us = -1;
    o->drain_nice = DRAIN_NICE_UNSET;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    /* record: options end at PROGRAM (its own options follow); attach: anywhere around PID. */
    const char *shortopts = strcmp(cmd, "record") == 0 ? "+o:q" : "o:q";
    while (!rc && (c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            if (!*optarg) {
                ptlog_msg(cmd, "-o: an empty file name (- is standard output)");
                return PTLOG_EXIT_USAGE;
            }
            o->output = optarg;
            break;
        case 'q': o->quiet = 1; break;
        case OPT_STREAM_POLICY: rc = policy_of(cmd, "--stream-policy", optarg, 1, &o->stream_policy); break;
        case OPT_LOG_POLICY: rc = policy_of(cmd, "--log-policy", optarg, 0, &o->log_policy); break;
        case OPT_STREAM_SIZE: rc = size_of(cmd, "--stream-size", optarg, &o->stream_size); break;
        case OPT_LOG_SIZE: rc = size_of(cmd, "--log-size", optarg, &o->log_size); break;
        case OPT_FLUSH_WAIT: rc = wait_of(cmd, optarg, &o->flush_wait_us); break;
        case OPT_DRAIN_NICE: rc = nice_of(cmd, optarg, &o->drain_nice); break;
        case OPT_EVENT:
        case OPT_EXCLUDE: {
            const char **list = c == OPT_EVENT ? o->events : o->excludes;
            size_t *n = c == OPT_EVENT ? &o->nevents : &o->nexcludes;
            if (*n == MAX_NAMES) {
                ptlog_msg(cmd, "at most %d --event and %d --exclude options", MAX_NAMES, MAX_NAMES);
                rc = PTLOG_EXIT_USAGE;
            } else {
                list[(*n)++] = optarg;
            }
            break;
        }
        default:
            ptlog_msg(cmd, "unknown or incomplete option '%s' (see 'ptlog help %s')", argv[optind - 1], cmd);
            rc = PTLOG_EXIT_USAGE;
        }
    }
    if (!rc && !o->output) {
        ptlog_msg(cmd, "missing -o FILE (see 'ptlog help %s')", cmd);
        rc = PTLOG_EXIT_USAGE;
    }
    *first = optind;
    return rc;
}

/*
 * The filter: with --event, every user event type but those; --exclude takes
 * types out. By name (tracelog_trace_filter_name): a name the program has
 * not opened yet is filtered when it opens it, and keeps the id the
 * program's own order gives it (opened here first, it took the next id and
 * shifted the program's).
 */
static int set_filter(const char *cmd, trace_id_t trid, const rec_opts *o)
{
    if (!o->nevents && !o->nexcludes)
        return 0;
    if (o->nevents) {
        trace_event_set_t all;
        posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS);
        int e = posix_trace_set_filter(trid, &all, POSIX_TRACE_SET_EVENTSET);
        if (e) {
            ptlog_msg(cmd, "cannot set the filter: %s", strerror(e));
            return PTLOG_EXIT_INTERNAL;
        }
    }
    for (size_t i = 0; i < o->nevents + o->nexcludes; i++) {
        int keep = i < o->nevents;
        const char *name = keep ? o->events[i] : o->excludes[i - o->nevents];
        int e = tracelog_trace_filter_name(trid, name, keep ? POSIX_TRACE_SUB_EVENTSET : POSIX_TRACE_ADD_EVENTSET);
        if (e == ENAMETOOLONG || e == EINVAL) {
            ptlog_msg(cmd, "event type '%s': %s", name, strerror(e));
            return PTLOG_EXIT_USAGE;
        }
        if (e) { /* EAGAIN: its name map is held, or damaged, by the process itself */
            ptlog_msg(cmd, "cannot filter on event type '%s': the traced process's event names cannot be "
                           "read or written (%s)", name, strerror(e));
            return PTLOG_EXIT_INPUT;
        }
    }
    return 0;
}

/*
 * The drain threads' priority. On Linux a nice value is a thread's, and a
 * new thread takes its creator's: the stream is created by a short-lived
 * thread that sets its own nice first, so that the threads
 * posix_trace_create_withlog makes (the flusher, which makes its helpers)
 * take it, while the program (forked before) and ptlog's main thread keep
 * theirs (a thread that raised its nice value may not lower it back without
 * privilege: the main thread never changes it). A value ptlog may not set
 * is kept: silently for the default, with a warning for --drain-nice.
 */
typedef struct create_args {
    pid_t pid;
    const trace_attr_t *attr;
    int fd;
    trace_id_t *trid;
    int nice, nice_error; /* the value wanted; setpriority's errno, 0 if set */
    int e;                /* posix_trace_create_withlog's */
} create_args;

static void *create_main(void *arg)
{
    create_args *a = arg;
    id_t self = (id_t)syscall(SYS_gettid);
    errno = 0;
    int now = getpriority(PRIO_PROCESS, self);
    if (now == -1 && errno)
        a->nice_error = errno;
    else if (now != a->nice && setpriority(PRIO_PROCESS, self, a->nice) != 0)
        a->nice_error = errno;
    a->e = posix_trace_create_withlog(a->pid, a->attr, a->fd, a->trid);
    return NULL;
}

static int create_drained(const char *cmd, const rec_opts *o, create_args *a)
{
    a->nice = o->drain_nice == DRAIN_NICE_UNSET ? DRAIN_NICE_DEFAULT : o->drain_nice;
    pthread_t creator;
    if (pthread_create(&creator, NULL, create_main, a) != 0) { /* the caller's priority, then */
        a->nice_error = EAGAIN;
        a->e = posix_trace_create_withlog(a->pid, a->attr, a->fd, a->trid);
    } else {
        pthread_join(creator, NULL);
    }
    if (a->nice_error && o->drain_nice != DRAIN_NICE_UNSET)
        ptlog_msg(cmd, "warning: --drain-nice %d: %s; the drain threads keep ptlog's priority", a->nice,
                  strerror(a->nice_error));
    return a->e;
}

/* Creates the stream with log for pid and starts it. 0 or an exit code. */
static int start_tracing(const char *cmd, pid_t pid, const rec_opts *o, int fd, trace_id_t *trid)
{
    trace_attr_t attr;
    posix_trace_attr_init(&attr); /* no name: the log is named after the traced program */
    posix_trace_attr_setstreamfullpolicy(&attr, o->stream_policy);
    posix_trace_attr_setlogfullpolicy(&attr, o->log_policy);
    if (o->stream_size || o->stream_policy == POSIX_TRACE_FLUSH)
        posix_trace_attr_setstreamsize(&attr, o->stream_size ? o->stream_size : FLUSH_STREAM_SIZE_DEFAULT);
    if (o->log_size)
        posix_trace_attr_setlogsize(&attr, o->log_size);
    if (o->flush_wait_us >= 0)
        tracelog_trace_attr_setflushwait(&attr, (unsigned)o->flush_wait_us);
    create_args create = {.pid = pid, .attr = &attr, .fd = fd, .trid = trid};
    int e = create_drained(cmd, o, &create);
    if (e) {
        const char *why = e == ESRCH    ? "no such process"
                          : e == EPERM  ? "not permitted (another user's process?)"
                          : e == ENOTSUP ? "it does not run libtracelog (or has made no trace call yet)"
                                         : strerror(e);
        ptlog_msg(cmd, "cannot trace process %d: %s", (int)pid, why);
        return PTLOG_EXIT_INPUT;
    }
    int rc = set_filter(cmd, *trid, o);
    if (!rc && (e = posix_trace_start(*trid)) != 0) {
        ptlog_msg(cmd, "cannot start: %s", strerror(e));
        rc = PTLOG_EXIT_INTERNAL;
    }
    if (rc)
        posix_trace_shutdown(*trid);
    return rc;
}

static void show_counts(trace_id_t trid, int live)
{
    tracelog_trace_stats st;
    if (tracelog_trace_get_stats(trid, &st) != 0)
        return;
    fprintf(stderr, "%sevents %llu, written %llu, lost %llu%s", live ? "\r" : "",
            (unsigned long long)st.events_delivered, (unsigned long long)st.log_events_written,
            (unsigned long long)(st.events_lost + st.log_events_lost), live ? "   " : "\n");
}

/* The traced process has taken the stream up (its libtracelog acted on it). */
static int joined(trace_id_t trid)
{
    tracelog_trace_stats st;
    return tracelog_trace_get_stats(trid, &st) == 0 && (st.flags & TRACELOG_STATS_JOINED);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Until the traced process ends (ended() says so) or ptlog gets SIGINT/SIGTERM: live counts on a
 * terminal, and once WARN_NS have passed without a trace call from the process, a warning (what).
 */
static void wait_loop(trace_id_t trid, int quiet, int (*ended)(pid_t), pid_t pid, const char *what)
{
    int live = !quiet && isatty(STDERR_FILENO), warned = !live;
    struct timespec tick = {0, 20000000};
    uint64_t start = mono_ns();
    unsigned n = 0;
    while (!stop_signal && !ended(pid)) {
        nanosleep(&tick, NULL);
        if (!warned && mono_ns() - start >= WARN_NS) {
            warned = 1;
            if (!joined(trid))
                fprintf(stderr, "\r%s\n", what); /* over the counts, which go on below it */
        }
        if (live && ++n % 25 == 0)
            show_counts(trid, 1);
    }
    if (live)
        fputc('\n', stderr);
}

/* What the log lacks when the library refused the traced program's name map (stats names_error). */
static void warn_names_refused(const char *cmd, int why)
{
    const char *what = why == ENOTSUP  ? "is of another version of libtracelog (or is not a name map)"
                       : why == ESTALE ? "was left by a dead process with the same pid"
                       : why == EACCES ? "cannot be read by ptlog's user"
                                       : "cannot be read";
    ptlog_msg(cmd, "warning: the program's event-name map %s and was refused: the log has its events under "
                   "their ids only, without their names, payload schemas, or the names of threads that ended "
                   "before their events were written", what);
}

static int finish(const char *cmd, trace_id_t trid, ptlog_out *out, const rec_opts *o)
{
    /* The final drain before the figures, so that they count it (a thread name is refused when the
       drain writes its thread); a failure stays in the log's status, which shutdown reports. */
    tracelog_trace_sync(trid);
    tracelog_trace_stats st;
    int have = tracelog_trace_get_stats(trid, &st) == 0;
    int e = posix_trace_shutdown(trid);
    if (have && st.names_error)
        warn_names_refused(cmd, st.names_error);
    if (e) {
        ptlog_msg(cmd, "%s: %s", o->output, strerror(e));
        ptlog_out_finish(out);
        return PTLOG_EXIT_OUTPUT;
    }
    int rc = ptlog_out_finish(out); /* fsync and close; the file took its place when tracing began */
    if (!rc && !o->quiet && have)
        fprintf(stderr, "ptlog %s: %s written\n", cmd, o->output);
    if (!rc && !o->quiet && have && st.names_refused)
        fprintf(stderr, "ptlog %s: thread names refused as malformed: %llu (in the program's name map: not "
                        "NUL-terminated within 16 bytes, or empty); those threads, gone before ptlog saw "
                        "them, are unnamed in the log\n", cmd, (unsigned long long)st.names_refused);
    return rc;
}

/* a and b are one file, other than a device (/dev/null takes anything). */
static int same_open_file(int a, int b)
{
    struct stat sa, sb;
    return fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
           !S_ISCHR(sa.st_mode);
}

/*
 * The log's descriptor (ptlog_out: standard output for "-"; a device or
 * FIFO written in place; else a temporary file beside the output). An
 * existing output is left as it is until tracing has begun (place_output):
 * a record or attach that fails destroys nothing.
 */
static int open_output(const char *cmd, ptlog_out *out, const rec_opts *o)
{
    int named = ptlog_out_named_fd(o->output);
    if (named >= 0 && isatty(named)) {
        ptlog_msg(cmd, "refusing to write a binary .ptl log to a terminal; use -o FILE");
        return PTLOG_EXIT_USAGE;
    }
    /* Standard error is ptlog's and the program's, and standard output the program's but for -
       (record moves it to standard error): a log written where they write would take that in. */
    if (named >= 0 && (named == STDERR_FILENO || same_open_file(named, STDERR_FILENO) ||
                       (named != STDOUT_FILENO && same_open_file(named, STDOUT_FILENO)))) {
        ptlog_msg(cmd, "-o %s: the program or ptlog writes there too (standard output or error); use -o FILE",
                  o->output);
        return PTLOG_EXIT_USAGE;
    }
    int rc = ptlog_out_open(out, o->output);
    if (!rc && (rc = ptlog_out_check_log_start(out)))
        ptlog_out_abort(out);
    return rc;
}

/* Tracing has begun: the log takes its place (a failure stops it). 0 or an exit code. */
static int place_output(const char *cmd, ptlog_out *out, trace_id_t trid)
{
    int e = ptlog_out_place(out);
    if (!e)
        return 0;
    ptlog_msg(cmd, "cannot create %s: %s", ptlog_out_name(out), strerror(e));
    posix_trace_shutdown(trid);
    ptlog_out_abort(out);
    return PTLOG_EXIT_OUTPUT;
}

static void catch_stop_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* Our child ended (not reaped: the log learns how it ended from the kernel). */
static int child_ended(pid_t pid)
{
    siginfo_t si;
    memset(&si, 0, sizeof si);
    return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT | WNOHANG) == 0 && si.si_pid == pid;
}

int ptlog_cmd_record(int argc, char **argv)
{
    rec_opts o;
    int first;
    int rc = parse("record", argc, argv, &o, &first);
    if (rc)
        return rc;
    if (first >= argc) {
        ptlog_msg("record", "missing PROGRAM (see 'ptlog help record')");
        return PTLOG_EXIT_USAGE;
    }
    int go[2], execd[2]; /* go: the stream exists; execd: closed by the exec, or the exec's errno */
    ptlog_out out;
    if ((rc = open_output("record", &out, &o)))
        return rc;
    if (pipe2(go, O_CLOEXEC) != 0 || pipe2(execd, O_CLOEXEC) != 0)
        return ptlog_nomem();
    pid_t pid = fork();
    if (pid < 0) {
        ptlog_msg("record", "fork: %s", strerror(errno));
        return PTLOG_EXIT_INTERNAL;
    }
    if (pid == 0) { /* the program, once the stream exists: traced from its first event */
        char c;
        close(go[1]);
        close(execd[0]);
        if (read(go[0], &c, 1) != 1)
            _exit(127);
        if (out.fd == STDOUT_FILENO) /* -o -: the log has standard output; the program writes to ours on stderr */
            dup2(STDERR_FILENO, STDOUT_FILENO);
        execvp(argv[first], argv + first);
        int e = errno;
        fprintf(stderr, "ptlog record: %s: %s\n", argv[first], strerror(e));
        if (write(execd[1], &e, sizeof e) != (ssize_t)sizeof e)
            _exit(127);
        _exit(127);
    }
    close(go[0]);
    close(execd[1]);
    catch_stop_signals();
    trace_id_t trid;
    rc = start_tracing("record", pid, &o, out.fd, &trid);
    if (rc) {
        ptlog_out_abort(&out);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        close(execd[0]);
        return rc;
    }
    if (write(go[1], "g", 1) != 1)
        kill(pid, SIGKILL);
    close(go[1]);
    /* The exec closes execd (or the child reports why it failed): from then on the child is the program,
       and a sync writes the log's first blocks now, with its identity, whatever the program does next. */
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(execd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR && !stop_signal)
        ;
    close(execd[0]);
    if (got == (ssize_t)sizeof exec_errno) { /* it cannot be run (it said why): no log, an existing one kept */
        posix_trace_shutdown(trid);
        ptlog_out_abort(&out);
        waitpid(pid, NULL, 0);
        return 127;
    }
    if ((rc = place_output("record", &out, trid))) { /* tracing has begun: the log takes its place */
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return rc;
    }
    int execd_ok = got == 0;
    if (execd_ok) { /* a failure stays in the log's status: shutdown reports it */
        /* A program started through a wrapper (env, nice, taskset, sh -c 'exec ...') execs again: the log
           names the program that takes the stream up, so that is waited for, 500 ms at most, before the
           first blocks are written (they named the wrapper: /usr/bin/env). */
        for (int ms = 0; ms < 500 && !joined(trid) && !child_ended(pid) && !stop_signal; ms++) {
            struct timespec one = {0, 1000000};
            nanosleep(&one, NULL);
        }
        tracelog_trace_sync(trid);
    }
    char warning[600];
    snprintf(warning, sizeof warning, "ptlog record: no trace call from %.200s yet: is it linked with libtracelog?",
             argv[first]);
    wait_loop(trid, o.quiet, child_ended, pid, warning);
    if (stop_signal) /* Ctrl-C or a TERM for ptlog: the program gets it too, and we wait for it */
        kill(pid, stop_signal);
    /* A program may ignore the signal: another one for ptlog kills it (a second Ctrl-C, however soon). */
    for (int killed = 0; !child_ended(pid);) {
        if (stop_count >= 2 && !killed) {
            killed = 1;
            kill(pid, SIGKILL);
        }
        struct timespec ms = {0, 1000000};
        nanosleep(&ms, NULL);
    }
    int took_up = joined(trid);
    rc = finish("record", trid, &out, &o);
    int status = 0;
    waitpid(pid, &status, 0);
    if (rc)
        return rc;
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (execd_ok && !took_up) { /* it ran, but never took the stream up: its log holds nothing of it */
        char how[64];
        if (WIFEXITED(status))
            snprintf(how, sizeof how, "exit status %d", WEXITSTATUS(status));
        else
            snprintf(how, sizeof how, "killed by signal %d", WTERMSIG(status));
        ptlog_msg("record", "%s made no trace call: it is not linked with libtracelog, or never called it "
                            "(%s; the log holds only the start and the end)", argv[first], how);
        return PTLOG_EXIT_INPUT;
    }
    return code;
}

static int attached_pidfd = -1, attached_until_full;
static trace_id_t attached;

/*
 * The attached process ended: its pidfd says so (also while it is a zombie its parent has not
 * reaped); without pidfds, once it is gone. Or, with until-full, the stream is full (the first
 * events are all there are to write). The stream's state alone never ends it: that word is in the
 * buffer the process shares (written as SUSPENDED, it once ended the tracing of a FLUSH stream).
 */
static int attach_ended(pid_t pid)
{
    struct posix_trace_status_info si;
    if (attached_until_full && posix_trace_get_status(attached, &si) == 0 &&
        si.posix_stream_full_status == POSIX_TRACE_FULL && si.posix_stream_status == POSIX_TRACE_SUSPENDED)
        return 1;
    if (attached_pidfd >= 0) {
        struct pollfd p = {.fd = attached_pidfd, .events = POLLIN};
        return poll(&p, 1, 0) > 0;
    }
    return kill(pid, 0) != 0 && errno == ESRCH;
}

int ptlog_cmd_attach(int argc, char **argv)
{
    rec_opts o;
    int first;
    int rc = parse("attach", argc, argv, &o, &first);
    if (rc)
        return rc;
    if (first != argc - 1) {
        ptlog_msg("attach", "%s (see 'ptlog help attach')", first >= argc ? "missing PID" : "one PID only");
        return PTLOG_EXIT_USAGE;
    }
    char *end;
    errno = 0;
    long pid = strtol(argv[first], &end, 10);
    if (errno || *end || end == argv[first] || pid <= 0 || pid > INT32_MAX) {
        ptlog_msg("attach", "not a process id: '%s'", argv[first]);
        return PTLOG_EXIT_USAGE;
    }
    ptlog_out out;
    if ((rc = open_output("attach", &out, &o)))
        return rc;
    catch_stop_signals();
#ifdef SYS_pidfd_open
    attached_pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0); /* before tracing begins: the pid is that process's */
#endif
    attached_until_full = o.stream_policy == POSIX_TRACE_UNTIL_FULL;
    rc = start_tracing("attach", (pid_t)pid, &o, out.fd, &attached);
    if (rc) {
        ptlog_out_abort(&out);
        return rc;
    }
    if ((rc = place_output("attach", &out, attached)))
        return rc;
    char warning[128];
    snprintf(warning, sizeof warning, "ptlog attach: no trace call from process %ld yet: it records nothing until it makes one",
             pid);
    wait_loop(attached, o.quiet, attach_ended, (pid_t)pid, warning);
    return finish("attach", attached, &out, &o);
}
