/*
 * ptlog's messages and progress line on stderr: the one place that writes to
 * the terminal besides the commands' output, so that a message never lands
 * inside a progress line and no byte from a file reaches the terminal raw.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/text.h"
#include "ptlog.h"

/* A progress line is on the terminal: a message first erases it, so it never lands inside one. */
static int progress_on_screen;

static unsigned long msg_count; /* messages so far */
static int msg_silent;
static char msg_last[1024];     /* the last message's text, without "ptlog: where: " */

#define ERASE_LINE "\r\033[K"

void ptlog_msg(const char *where, const char *fmt, ...)
{
    char line[1024];
    int n = where ? snprintf(line, sizeof line, "ptlog: %s: ", where) : snprintf(line, sizeof line, "ptlog: ");
    if (n < 0 || (size_t)n >= sizeof line)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    va_end(ap);
    msg_count++;
    tl_copy_text(msg_last, sizeof msg_last, line + n);
    if (msg_silent)
        return;
    /* Messages quote names and texts from files: no control byte reaches the terminal. */
    char safe[sizeof ERASE_LINE + 4 * sizeof line + 1];
    size_t len = 0;
    if (progress_on_screen) {
        memcpy(safe, ERASE_LINE, sizeof ERASE_LINE - 1);
        len = sizeof ERASE_LINE - 1;
        progress_on_screen = 0;
    }
    len += ptlog_text_sanitize(line, strlen(line), safe + len);
    safe[len++] = '\n';
    /* one write per message, so that lines never interleave */
    fwrite(safe, 1, len, stderr);
}

void ptlog_msg_silence(int silent) { msg_silent = silent; }

unsigned long ptlog_msg_count(void) { return msg_count; }

const char *ptlog_msg_last(void) { return msg_last; }

int ptlog_nomem(void)
{
    ptlog_msg(NULL, "out of memory");
    return PTLOG_EXIT_INTERNAL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ptlog_progress_wanted(int stderr_fd, int stdout_fd, int stdout_used)
{
    if (!isatty(stderr_fd))
        return 0;
    if (!stdout_used || !isatty(stdout_fd))
        return 1;
    /* Both terminals: only if they are different ones (another pty or console). */
    struct stat out, err;
    if (fstat(stdout_fd, &out) != 0 || fstat(stderr_fd, &err) != 0)
        return 0;
    return out.st_rdev != err.st_rdev;
}

void ptlog_progress_init(ptlog_progress *p, uint64_t total)
{
    memset(p, 0, sizeof *p);
    p->enabled = ptlog_progress_wanted(STDERR_FILENO, STDOUT_FILENO, ptlog_out_stdout_claimed());
    p->start = p->last = p->enabled ? now_s() : 0;
    p->total = total;
}

void ptlog_progress_update(ptlog_progress *p, uint64_t done)
{
    if (!p->enabled)
        return;
    double t = now_s();
    if (t - p->start < 1.0 || t - p->last < 0.25)
        return;
    p->last = t;
    p->shown = 1;
    progress_on_screen = 1;
    if (p->total && done <= p->total)
        fprintf(stderr, "\rptlog: %llu events (%u%%) ", (unsigned long long)done,
                (unsigned)(done * 100 / p->total));
    else
        fprintf(stderr, "\rptlog: %llu events ", (unsigned long long)done);
}

void ptlog_progress_end(ptlog_progress *p)
{
    if (p->shown && progress_on_screen)
        fputs(ERASE_LINE, stderr);
    p->shown = 0;
    progress_on_screen = 0;
}
