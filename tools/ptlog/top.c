/*
 * ptlog top PID|FILE: what a program records, right now (README.md, "top").
 *
 * A thread reads the log (a file followed as it grows, follow.c; or, for a
 * PID, the log that `ptlog attach PID -o -` writes into a pipe, from a
 * child ptlog) and counts every event (top_stats.c). The main thread
 * redraws every interval: per event type and per thread (kernel tid and
 * name), the rate over the last interval, totals and bytes, and the log's
 * losses. On a terminal it draws a full screen on the alternate screen with
 * the terminal in raw mode (termios; restored on every exit path: q,
 * Ctrl-C, SIGTERM, SIGHUP, the end of input stays on screen until q);
 * otherwise it prints one summary line per interval and ends with the log.
 * Keys: q quits; r, t, b, n sort by rate, total, bytes, name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "live.h"
#include "ptlog.h"
#include "top_stats.h"

#define STOP_WAIT_MS 5000 /* the attach child's time to close its log once asked to stop */

typedef enum top_sort { SORT_RATE, SORT_TOTAL, SORT_BYTES, SORT_NAME } top_sort;
static const char *const sort_names[] = {"rate", "total", "bytes", "name"};

typedef struct top_opts {
    top_sort sort;
    unsigned interval_ms;
    long writer_pid;
    const char *target;
} top_opts;

typedef struct top_ctx {
    top_opts o;
    top_stats st;
    ptlog_src *src;
    pid_t child;       /* the attach child (PID), 0 for a file */
    int child_err;     /* its standard error, read for the message it ends with */
    char child_msg[256];
    char title[160];
    int at_end;        /* the source reached its end: its finish (warnings, exit code) is due */
} top_ctx;

/* One message "ptlog: top: ..." and the exit code to return. */
static int top_error(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int top_error(int code, const char *fmt, ...)
{
    char text[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    ptlog_msg("top", "%s", text);
    return code;
}

static uint64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ---- the reading thread ----------------------------------------------------------- */

static void *read_main(void *arg)
{
    top_ctx *t = arg;
    tracelog_event ev;
    int rc;
    while ((rc = t->src->next(t->src, &ev)) == 1) {
        const char *tname = t->src->thread_name ? t->src->thread_name(t->src, &ev) : NULL;
        top_stats_add(&t->st, &ev, ptlog_src_type_name(t->src, ev.event_id), tname);
        if (ptlog_live_interrupted())
            break;
    }
    tracelog_log_status status;
    t->src->get_status(t->src, &status);
    pthread_mutex_lock(&t->st.lock);
    t->st.status = status;
    t->st.ended = 1;
    t->st.end_rc = rc < 0 ? -rc : PTLOG_EXIT_OK;
    t->at_end = rc == 0; /* the log's warnings: printed by the main thread, once the screen is back */
    pthread_mutex_unlock(&t->st.lock);
    return NULL;
}

/* ---- the source: a file followed, or a process attached through a pipe ------------ */

/* A target of digits only that names no file is a process id. */
static long target_pid(const char *s)
{
    struct stat st;
    if (!*s || strspn(s, "0123456789") != strlen(s) || stat(s, &st) == 0)
        return 0;
    long v = strtol(s, NULL, 10);
    return v > 0 && v <= 0x7fffffffL ? v : -1;
}

/* Runs `ptlog attach -q PID -o -` with its log into a pipe; *log_fd reads it. An exit code. */
static int spawn_attach(top_ctx *t, long pid, int *log_fd)
{
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0)
        return top_error(PTLOG_EXIT_INTERNAL, "cannot make a pipe: %s", strerror(errno));
    if (pipe2(err, O_CLOEXEC) != 0) {
        close(out[0]);
        close(out[1]);
        return top_error(PTLOG_EXIT_INTERNAL, "cannot make a pipe: %s", strerror(errno));
    }
    char pid_text[24];
    snprintf(pid_text, sizeof pid_text, "%ld", pid);
    pid_t c = fork();
    if (c == 0) {
        int null = open("/dev/null", O_RDONLY);
        if (null < 0 || dup2(null, STDIN_FILENO) < 0 || dup2(out[1], STDOUT_FILENO) < 0 ||
            dup2(err[1], STDERR_FILENO) < 0)
            _exit(PTLOG_EXIT_INTERNAL);
        setpgid(0, 0); /* Ctrl-C is top's to handle: it stops the child itself */
        char *argv[] = {"ptlog", "attach", "-q", pid_text, "-o", "-", NULL};
        execv("/proc/self/exe", argv);
        _exit(PTLOG_EXIT_INTERNAL);
    }
    close(out[1]);
    close(err[1]);
    if (c < 0) {
        close(out[0]);
        close(err[0]);
        return top_error(PTLOG_EXIT_INTERNAL, "cannot start ptlog attach: %s", strerror(errno));
    }
    t->child = c;
    t->child_err = err[0];
    fcntl(t->child_err, F_SETFL, O_NONBLOCK);
    *log_fd = out[0];
    return PTLOG_EXIT_OK;
}

/* Keeps the last line the attach child wrote on its standard error. */
static void drain_child_err(top_ctx *t)
{
    char buf[512];
    ssize_t n;
    while (t->child_err >= 0 && (n = read(t->child_err, buf, sizeof buf - 1)) > 0) {
        buf[n] = '\0';
        char *line = buf, *nl;
        while ((nl = strchr(line, '\n')) && nl[1])
            line = nl + 1;
        if (nl)
            *nl = '\0';
        snprintf(t->child_msg, sizeof t->child_msg, "%.255s", line);
    }
}

static int stop_child(top_ctx *t);

static int open_source(top_ctx *t)
{
    long pid = target_pid(t->o.target);
    if (pid < 0)
        return top_error(PTLOG_EXIT_USAGE, "not a process id or a file: '%s'", t->o.target);
    if (pid == 0) {
        ptlog_follow_opts fo = {t->o.writer_pid};
        snprintf(t->title, sizeof t->title, "%s", t->o.target);
        return ptlog_follow_src_open(t->o.target, &fo, &t->src, NULL);
    }
    int fd = -1, rc = spawn_attach(t, pid, &fd);
    if (rc)
        return rc;
    char path[32];
    snprintf(path, sizeof path, "/dev/fd/%d", fd);
    ptlog_msg_silence(1); /* a pipe that ends before a log: attach says why, below */
    tracelog_reader *r; /* the source's: events and thread names come through the source */
    rc = ptlog_src_open_ptl(path, &t->src, &r);
    ptlog_msg_silence(0);
    close(fd); /* the source opened its own descriptor of the pipe */
    snprintf(t->title, sizeof t->title, "process %ld", pid);
    if (rc) {
        int child_rc = stop_child(t);
        if (t->child_msg[0])
            fprintf(stderr, "%s\n", t->child_msg);
        else
            ptlog_msg("top", "no log from 'ptlog attach %ld' (it ended with exit status %d)", pid, child_rc);
        return child_rc ? child_rc : rc;
    }
    return rc;
}

/* Stops the attach child (it writes its trailer and ends the pipe) and reaps it. Its exit code. */
static int stop_child(top_ctx *t)
{
    if (!t->child)
        return 0;
    kill(t->child, SIGINT);
    int status = 0;
    /* Bounded: a child that does not end within STOP_WAIT_MS is killed. */
    for (unsigned waited = 0;; waited += 50) {
        pid_t w = waitpid(t->child, &status, WNOHANG);
        if (w == t->child || (w < 0 && errno != EINTR))
            break;
        if (waited == STOP_WAIT_MS)
            kill(t->child, SIGKILL);
        struct timespec nap = {0, 50000000};
        nanosleep(&nap, NULL);
    }
    t->child = 0;
    drain_child_err(t);
    return WIFEXITED(status) ? WEXITSTATUS(status) : PTLOG_EXIT_INTERNAL;
}

/* ---- drawing ---------------------------------------------------------------------- */

static top_sort sort_key;

static int cmp_count(const top_count *a, const top_count *b)
{
    double x = sort_key == SORT_RATE ? a->rate : sort_key == SORT_TOTAL ? (double)a->events : (double)a->bytes;
    double y = sort_key == SORT_RATE ? b->rate : sort_key == SORT_TOTAL ? (double)b->events : (double)b->bytes;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int cmp_type(const void *pa, const void *pb)
{
    const top_type *a = *(top_type *const *)pa, *b = *(top_type *const *)pb;
    int c = sort_key == SORT_NAME ? strcmp(a->name, b->name) : cmp_count(&a->c, &b->c);
    return c ? c : a->id < b->id ? -1 : a->id > b->id;
}

static int cmp_thread(const void *pa, const void *pb)
{
    const top_thread *a = *(top_thread *const *)pa, *b = *(top_thread *const *)pb;
    int c = sort_key == SORT_NAME ? strcmp(a->name, b->name) : cmp_count(&a->c, &b->c);
    return c ? c : a->ktid < b->ktid ? -1 : a->ktid > b->ktid;
}

/* A name as dump prints it (escaped when it must be), cut to width. */
static const char *shown(const char *name, char *buf, size_t cap)
{
    if (!*name)
        return "-";
    ptlog_text_show(name, buf, cap);
    return buf;
}

/* The screen (or, rows 0, one line): written into f. */
static void draw(top_ctx *t, FILE *f, int rows, int cols, double elapsed_s)
{
    top_stats *s = &t->st;
    char name[4 * TOP_NAME_MAX + 3];
    const tracelog_log_status *ls = &s->status;
    if (rows == 0) { /* no terminal: one summary line */
        top_type *best = NULL;
        for (size_t i = 0; i < 2 * TOP_TYPES_MAX; i++)
            if (s->types[i].used && (!best || s->types[i].c.rate > best->c.rate))
                best = &s->types[i];
        fprintf(f, "%.1fs events %llu rate %.0f/s bytes %llu lost stream %llu log %llu types %zu threads %zu",
                elapsed_s, (unsigned long long)s->all.events, s->all.rate, (unsigned long long)s->all.bytes,
                (unsigned long long)ls->stream_overruns, (unsigned long long)ls->log_overruns, s->ntypes,
                s->nthreads);
        if (best)
            fprintf(f, " top %s %.0f/s", shown(best->name, name, sizeof name), best->c.rate);
        fprintf(f, "%s\n", s->ended ? " (ended)" : "");
        return;
    }
    fprintf(f, "\033[H\033[2J"); /* home, clear */
    fprintf(f, "ptlog top - %.*s%s\r\n", cols > 40 ? cols - 40 : 10, t->title, s->ended ? "  [log ended]" : "");
    fprintf(f, "events %llu  rate %.0f/s  bytes %llu  lost: stream %llu, log %llu\r\n",
            (unsigned long long)s->all.events, s->all.rate, (unsigned long long)s->all.bytes,
            (unsigned long long)ls->stream_overruns, (unsigned long long)ls->log_overruns);
    fprintf(f, "sort: %s  (r rate, t total, b bytes, n name, q quit)\r\n\r\n", sort_names[sort_key]);
    int room = rows - 6, type_rows = room > 4 ? room * 3 / 5 : room, thread_rows = room - type_rows - 2;
    top_type **tv = malloc(s->ntypes * sizeof *tv + 1);
    top_thread **hv = malloc(s->nthreads * sizeof *hv + 1);
    if (!tv || !hv) {
        free(tv);
        free(hv);
        return;
    }
    size_t nt = 0, nh = 0;
    for (size_t i = 0; i < 2 * TOP_TYPES_MAX; i++)
        if (s->types[i].used)
            tv[nt++] = &s->types[i];
    for (size_t i = 0; i < 2 * TOP_THREADS_MAX; i++)
        if (s->threads[i].used)
            hv[nh++] = &s->threads[i];
    qsort(tv, nt, sizeof *tv, cmp_type);
    qsort(hv, nh, sizeof *hv, cmp_thread);
    fprintf(f, "\033[7m%-32s %12s %14s %14s\033[0m\r\n", "EVENT TYPE", "RATE/s", "TOTAL", "BYTES");
    for (size_t i = 0; i < nt && (int)i < type_rows; i++)
        fprintf(f, "%-32.32s %12.0f %14llu %14llu\r\n", shown(tv[i]->name, name, sizeof name), tv[i]->c.rate,
                (unsigned long long)tv[i]->c.events, (unsigned long long)tv[i]->c.bytes);
    if (thread_rows > 0) {
        fprintf(f, "\r\n\033[7m%-10s %-8s %-16s %12s %14s\033[0m\r\n", "TID", "PID", "THREAD", "RATE/s", "TOTAL");
        for (size_t i = 0; i < nh && (int)i < thread_rows; i++) {
            char ktid[16] = "-";
            if (hv[i]->ktid)
                snprintf(ktid, sizeof ktid, "%u", hv[i]->ktid);
            fprintf(f, "%-10s %-8u %-16.16s %12.0f %14llu\r\n", ktid, hv[i]->pid,
                    shown(hv[i]->name, name, sizeof name), hv[i]->c.rate, (unsigned long long)hv[i]->c.events);
        }
    }
    free(tv);
    free(hv);
}

/* ---- the terminal ------------------------------------------------------------------- */

static struct termios saved_tty;
static int tty_raw;

static void tty_enter(void)
{
    if (tcgetattr(STDIN_FILENO, &saved_tty) != 0)
        return;
    struct termios raw = saved_tty;
    raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO); /* keys one by one, unechoed; ^C still signals */
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    if (tcsetattr(STDIN_FILENO, TCSANOW, &raw) != 0)
        return;
    tty_raw = 1;
    fputs("\033[?1049h\033[?25l", stdout); /* alternate screen, cursor hidden */
    fflush(stdout);
}

static void tty_leave(void)
{
    if (!tty_raw)
        return;
    fputs("\033[?25h\033[?1049l", stdout);
    fflush(stdout);
    tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
    tty_raw = 0;
}

static void screen_size(int *rows, int *cols)
{
    struct winsize w;
    *rows = 24;
    *cols = 80;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_row > 0 && w.ws_col > 0) {
        *rows = w.ws_row;
        *cols = w.ws_col;
    }
}

/* A key: 1 to quit; a sort key changes the order. */
static int handle_key(char k)
{
    switch (k) {
    case 'q':
    case 'Q':
    case 3: /* ^C without ISIG */
        return 1;
    case 'r': sort_key = SORT_RATE; break;
    case 't': sort_key = SORT_TOTAL; break;
    case 'b': sort_key = SORT_BYTES; break;
    case 'n': sort_key = SORT_NAME; break;
    default: break;
    }
    return 0;
}

/* Keys waiting on the terminal: 1 to quit, *redraw set when the order changed. */
static int read_keys(int *redraw)
{
    char keys[16];
    ssize_t n = read(STDIN_FILENO, keys, sizeof keys);
    for (ssize_t i = 0; i < n; i++) {
        if (handle_key(keys[i]))
            return 1;
        *redraw = 1;
    }
    return 0;
}

/* Refreshes every interval until q, a signal, or (without a terminal) the end of the log. */
static void ui_loop(top_ctx *t, int interactive)
{
    uint64_t start = mono_ms(), last_tick = start;
    int quit = 0;
    while (!quit && !ptlog_live_interrupted()) {
        uint64_t now = mono_ms(), due = last_tick + t->o.interval_ms;
        int wait = due > now ? (int)(due - now) : 0, redraw = 0;
        struct pollfd p = {interactive ? STDIN_FILENO : -1, POLLIN, 0};
        if (poll(&p, 1, wait > 100 ? 100 : wait) > 0 && (p.revents & POLLIN))
            quit = read_keys(&redraw);
        drain_child_err(t);
        now = mono_ms();
        int tick = now >= last_tick + t->o.interval_ms;
        if (quit || (!tick && !redraw))
            continue;
        int rows = 0, cols = 0;
        if (interactive)
            screen_size(&rows, &cols);
        pthread_mutex_lock(&t->st.lock);
        if (tick) { /* a key's redraw keeps the rates of the last interval */
            top_stats_tick(&t->st, (double)(now - last_tick) / 1000.0);
            last_tick = now;
        }
        draw(t, stdout, rows, cols, (double)(now - start) / 1000.0);
        int ended = t->st.ended;
        pthread_mutex_unlock(&t->st.lock);
        fflush(stdout);
        if (ended && !interactive)
            break;
    }
}

/* ---- the command -------------------------------------------------------------------- */

static int parse_top(int argc, char **argv, top_opts *o)
{
    static const struct option opts[] = {
        {"sort", required_argument, NULL, 's'},
        {"interval", required_argument, NULL, 'i'},
        {"writer-pid", required_argument, NULL, 'w'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->interval_ms = 1000;
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, "hs:i:", opts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 's': {
            size_t k = 0;
            while (k < 4 && strcmp(optarg, sort_names[k]) != 0)
                k++;
            if (k == 4)
                return top_error(PTLOG_EXIT_USAGE, "--sort: expected rate, total, bytes or name, not '%s'", optarg);
            o->sort = (top_sort)k;
            break;
        }
        case 'i': {
            errno = 0;
            double v = strtod(optarg, &end);
            if (errno || end == optarg || *end || !(v >= 0.1 && v <= 3600))
                return top_error(PTLOG_EXIT_USAGE, "--interval: seconds from 0.1 to 3600, not '%s'", optarg);
            o->interval_ms = (unsigned)(v * 1000);
            break;
        }
        case 'w':
            errno = 0;
            o->writer_pid = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || o->writer_pid <= 0 || o->writer_pid > 0x7fffffffL)
                return top_error(PTLOG_EXIT_USAGE, "--writer-pid: not a process id: '%s'", optarg);
            break;
        case 'h':
            return -1;
        default:
            return top_error(PTLOG_EXIT_USAGE, "unknown or incomplete option '%s' (see 'ptlog help top')", argv[optind - 1]);
        }
    }
    if (optind != argc - 1)
        return top_error(PTLOG_EXIT_USAGE, "%s (see 'ptlog help top')", optind >= argc ? "missing PID or FILE" : "one PID or FILE only");
    o->target = argv[optind];
    return 0;
}

int ptlog_cmd_top(int argc, char **argv)
{
    top_ctx *t = calloc(1, sizeof *t);
    if (!t || top_stats_init(&t->st) != 0) {
        free(t);
        return ptlog_nomem();
    }
    t->child_err = -1;
    int rc = parse_top(argc, argv, &t->o);
    sort_key = t->o.sort;
    if (!rc)
        rc = open_source(t);
    pthread_t reader;
    if (!rc && pthread_create(&reader, NULL, read_main, t) != 0) {
        t->src->close(t->src);
        rc = top_error(PTLOG_EXIT_INTERNAL, "cannot start the reading thread");
    }
    if (rc) {
        stop_child(t);
        if (t->child_err >= 0)
            close(t->child_err);
        top_stats_free(&t->st);
        free(t);
        return rc < 0 ? PTLOG_EXIT_OK : rc;
    }
    ptlog_live_signals(1);
    int interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
    unsigned long messages = ptlog_msg_count();
    if (interactive) {
        ptlog_msg_silence(1); /* the alternate screen would take them away: the last is shown after */
        tty_enter();
    }
    ui_loop(t, interactive);
    tty_leave();
    ptlog_msg_silence(0);
    if (ptlog_msg_count() != messages && interactive)
        fprintf(stderr, "ptlog: %s\n", ptlog_msg_last());
    /* Stop reading: a followed file's waits see the flag; an attached process's pipe ends
       once its attach child has written the trailer. */
    ptlog_live_stop();
    int child_rc = stop_child(t);
    pthread_join(reader, NULL);
    rc = t->st.end_rc;
    if (t->at_end) /* the reading thread is done with the source */
        rc = t->src->finish(t->src);
    if (child_rc && child_rc != PTLOG_EXIT_OK && t->child_msg[0])
        fprintf(stderr, "%s\n", t->child_msg);
    t->src->close(t->src);
    if (t->child_err >= 0)
        close(t->child_err);
    ptlog_live_signals(0);
    top_stats_free(&t->st);
    free(t);
    return rc;
}
