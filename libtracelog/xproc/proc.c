/*
 * /proc readers for cross-process tracing. Files are read with one read()
 * into a fixed buffer (no stdio, no allocation) and parsed defensively: a
 * command name in /proc/<pid>/stat may hold spaces and parentheses, so the
 * fields are counted from its last ')'.
 */
#include "xproc/proc.h"

#include "common/text.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STAT_FIELD_STATE 3
#define STAT_FIELD_PPID 4
#define STAT_FIELD_START 22

ssize_t tl_proc_read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return -e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

/* ENOENT and ESRCH mean the process is gone; an unreadable file is EPERM; anything else EIO. */
static int gone_or(int e)
{
    if (e == ENOENT || e == ESRCH)
        return ESRCH;
    return e == EACCES || e == EPERM ? EPERM : EIO;
}

/* Field `field` (1-based, >= 3) of a stat line; NULL if there are fewer. */
static const char *stat_field(const char *line, int field)
{
    const char *p = strrchr(line, ')');
    if (!p)
        return NULL;
    p++;
    for (int f = 2; f < field; f++) {
        while (*p == ' ')
            p++;
        if (!*p)
            return NULL;
        if (f + 1 < field)
            while (*p && *p != ' ')
                p++;
    }
    while (*p == ' ')
        p++;
    return *p ? p : NULL;
}

/* /proc/<pid>/stat into line: 0, ESRCH, EPERM or EIO. */
static int read_stat(pid_t pid, char *line, size_t cap)
{
    if (pid <= 0)
        return ESRCH;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    ssize_t n = tl_proc_read_small(path, line, cap);
    return n < 0 ? gone_or((int)-n) : 0;
}

/* Longest comm a kernel shows (64 bytes for some kernel threads; 15 for threads of programs) and its newline. */
#define COMM_READ_MAX 80

int tl_proc_thread_comm(pid_t pid, pid_t ktid, char *buf, size_t cap)
{
    if (!buf || cap == 0)
        return EINVAL;
    buf[0] = 0;
    if (pid < 0 || ktid < 0)
        return ESRCH;
    char path[96], text[COMM_READ_MAX + 1];
    int at = pid ? snprintf(path, sizeof path, "/proc/%d", (int)pid) : snprintf(path, sizeof path, "/proc/self");
    if (ktid)
        at += snprintf(path + at, sizeof path - (size_t)at, "/task/%d", (int)ktid);
    snprintf(path + at, sizeof path - (size_t)at, "/comm");
    ssize_t n = tl_proc_read_small(path, text, sizeof text);
    if (n < 0)
        return gone_or((int)-n);
    size_t len = strnlen(text, (size_t)n); /* never a NUL in a comm, but the text is not ours */
    if (len > 0 && text[len - 1] == '\n')
        len--;
    tl_copy_text_cut(buf, cap, text, len);
    return 0;
}

int tl_proc_parent_of(pid_t pid, pid_t *ppid)
{
    char line[1024];
    int e = read_stat(pid, line, sizeof line);
    if (e)
        return e;
    const char *p = stat_field(line, STAT_FIELD_PPID);
    char *end;
    long v = p ? strtol(p, &end, 10) : 0;
    if (!p || end == p)
        return EIO;
    *ppid = (pid_t)v;
    return 0;
}

int tl_proc_token_of(pid_t pid, tl_proc_token *out)
{
    char line[1024];
    int e = read_stat(pid, line, sizeof line);
    if (e)
        return e;
    const char *state = stat_field(line, STAT_FIELD_STATE);
    const char *start = stat_field(line, STAT_FIELD_START);
    if (!state || !start)
        return EIO;
    if (*state == 'Z' || *state == 'X')
        return ESRCH; /* exited: it can no longer be traced */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(start, &end, 10);
    if (errno || end == start)
        return EIO;
    out->pid = (uint32_t)pid;
    out->start = v;
    return 0;
}

int tl_proc_alive(const tl_proc_token *t)
{
    tl_proc_token now;
    return tl_proc_token_of((pid_t)t->pid, &now) == 0 && now.start == t->start;
}

uint64_t tl_proc_token_pack(const tl_proc_token *t)
{
    return (uint64_t)t->pid << 32 | (t->start & 0xffffffffu);
}

int tl_proc_packed_alive(uint64_t packed)
{
    tl_proc_token now;
    if (tl_proc_token_of((pid_t)(packed >> 32), &now))
        return 0;
    return tl_proc_token_pack(&now) == packed;
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int tl_proc_boot_id(uint8_t out[16])
{
    char text[64];
    ssize_t n = tl_proc_read_small("/proc/sys/kernel/random/boot_id", text, sizeof text);
    if (n < 0)
        return (int)-n;
    int k = 0;
    for (const char *p = text; *p && k < 32; p++) {
        if (*p == '-')
            continue;
        int v = hex_value(*p);
        if (v < 0)
            return EIO;
        if (k % 2 == 0)
            out[k / 2] = (uint8_t)(v << 4);
        else
            out[k / 2] |= (uint8_t)v;
        k++;
    }
    return k == 32 ? 0 : EIO;
}

/* The three first numbers after "Key:" in a /proc status text. 0 or EIO. */
static int status_triplet(const char *text, const char *key, uint32_t out[3])
{
    size_t klen = strlen(key);
    const char *p = text;
    while (p && strncmp(p, key, klen) != 0) {
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    if (!p)
        return EIO;
    p += klen;
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        unsigned long v = strtoul(p, &end, 10);
        if (errno || end == p || v > UINT32_MAX)
            return EIO;
        out[i] = (uint32_t)v;
        p = end;
    }
    return 0;
}

int tl_proc_creds_of(pid_t pid, tl_proc_creds *out)
{
    if (pid <= 0)
        return ESRCH;
    char path[64], text[8192];
    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    ssize_t n = tl_proc_read_small(path, text, sizeof text);
    if (n < 0)
        return gone_or((int)-n);
    if (status_triplet(text, "Uid:", out->uid) || status_triplet(text, "Gid:", out->gid))
        return EIO;
    return 0;
}

int tl_proc_self_has_cap(int cap)
{
    char text[8192];
    if (tl_proc_read_small("/proc/self/status", text, sizeof text) < 0)
        return 0;
    const char *p = strstr(text, "\nCapEff:");
    if (!p)
        return 0;
    char *end;
    errno = 0;
    unsigned long long caps = strtoull(p + 8, &end, 16);
    return !errno && end != p + 8 && cap < 64 && (caps >> cap & 1);
}

int tl_proc_creds_allow(const tl_proc_creds *target, uint32_t euid, uint32_t egid, int has_cap)
{
    if (has_cap)
        return 0;
    for (int i = 0; i < 3; i++)
        if (target->uid[i] != euid || target->gid[i] != egid)
            return EPERM;
    return 0;
}

int tl_proc_check_target(pid_t pid, tl_proc_token *token, tl_proc_creds *creds)
{
    tl_proc_token t;
    int e = tl_proc_token_of(pid, &t);
    if (e)
        return e == EIO ? EPERM : e;
    tl_proc_creds c;
    e = tl_proc_creds_of(pid, &c);
    if (e)
        return e == ESRCH ? ESRCH : EPERM;
    e = tl_proc_creds_allow(&c, (uint32_t)geteuid(), (uint32_t)getegid(), tl_proc_self_has_cap(TL_CAP_SYS_PTRACE));
    if (!e && token)
        *token = t;
    if (!e && creds)
        *creds = c;
    return e;
}

int tl_proc_may_trace(pid_t pid) { return tl_proc_check_target(pid, NULL, NULL); }
