/*
 * Output: a large buffer written in big blocks, to standard output or to a
 * temporary file in the destination's directory that is renamed into place
 * only when everything was written (an error never leaves a partial file,
 * and neither does SIGINT, SIGTERM, SIGHUP or SIGPIPE: cleanup.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptlog.h"

#define OUT_BUF_SIZE (1u << 20)

static void *xmalloc_or_null(size_t n) { return malloc(n); }

#define SYMLINK_HOPS_MAX 40 /* as the kernel's path walk (ELOOP) */

/*
 * The descriptor a path names (/dev/stdout, /dev/stderr, /dev/fd/N,
 * /proc/self/fd/N, /proc/PID/fd/N of this process), or -1. Such an output
 * is that descriptor, written in place as "-" is: following the link to the
 * file it has open and renaming a new file over it once lost what the shell
 * had written there before (`ptlog dump -o /dev/stdout >> journal`).
 */
int ptlog_out_named_fd(const char *p)
{
    if (strcmp(p, "-") == 0)
        return STDOUT_FILENO;
    if (strcmp(p, "/dev/stdout") == 0)
        return STDOUT_FILENO;
    if (strcmp(p, "/dev/stderr") == 0)
        return STDERR_FILENO;
    char own[40];
    snprintf(own, sizeof own, "/proc/%ld/fd/", (long)getpid());
    const char *dirs[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", own};
    for (size_t i = 0; i < sizeof dirs / sizeof *dirs; i++) {
        size_t n = strlen(dirs[i]);
        if (strncmp(p, dirs[i], n) != 0 || p[n] < '0' || p[n] > '9')
            continue;
        char *end;
        errno = 0;
        long fd = strtol(p + n, &end, 10);
        return *end || errno || fd > 1 << 20 ? -1 : (int)fd;
    }
    return -1;
}

/*
 * The file -o really names: a symbolic link is followed, as a shell's > does,
 * so the rename replaces the file it points to (a dangling link's target is
 * created) instead of the link. Returns a malloc'ed path; NULL with errno set.
 */
static char *resolve_links(const char *path)
{
    char *p = strdup(path);
    for (int hop = 0; p && hop < SYMLINK_HOPS_MAX; hop++) {
        struct stat st;
        if (ptlog_out_named_fd(p) >= 0 || lstat(p, &st) != 0 || !S_ISLNK(st.st_mode))
            return p;
        char target[4096];
        ssize_t n = readlink(p, target, sizeof target - 1);
        if (n < 0) {
            free(p);
            return NULL;
        }
        target[n] = '\0';
        const char *slash = strrchr(p, '/');
        size_t dir = target[0] == '/' || !slash ? 0 : (size_t)(slash - p) + 1; /* keep p's directory */
        char *next = malloc(dir + (size_t)n + 1);
        if (next) {
            memcpy(next, p, dir);
            memcpy(next + dir, target, (size_t)n + 1);
        }
        free(p);
        p = next;
    }
    if (p) {
        free(p);
        errno = ELOOP;
    }
    return NULL;
}

/* An output was opened on standard output (the progress line must then stay off its terminal). */
static int stdout_claimed;

int ptlog_out_stdout_claimed(void) { return stdout_claimed; }

int ptlog_out_open(ptlog_out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->cap = OUT_BUF_SIZE;
    o->buf = xmalloc_or_null(o->cap);
    if (!o->buf)
        return ptlog_nomem();
    if (!path || strcmp(path, "-") == 0) {
        o->fd = STDOUT_FILENO;
        stdout_claimed = 1;
        return PTLOG_EXIT_OK;
    }
    o->path = resolve_links(path);
    if (!o->path) {
        if (errno == ENOMEM) {
            ptlog_out_abort(o);
            return ptlog_nomem();
        }
        ptlog_msg(path, "cannot open the output: %s", strerror(errno));
        ptlog_out_abort(o);
        return PTLOG_EXIT_OUTPUT;
    }
    path = o->path;
    int named_fd = ptlog_out_named_fd(path);
    if (named_fd == STDOUT_FILENO) { /* "-" itself */
        free(o->path);
        o->path = NULL;
        o->fd = STDOUT_FILENO;
        stdout_claimed = 1;
        return PTLOG_EXIT_OK;
    }
    if (named_fd >= 0) {
        o->fd = fcntl(named_fd, F_DUPFD_CLOEXEC, 3);
        if (o->fd < 0) {
            ptlog_msg(path, "cannot open the output: %s", strerror(errno));
            ptlog_out_abort(o);
            return PTLOG_EXIT_OUTPUT;
        }
        return PTLOG_EXIT_OK;
    }
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        ptlog_msg(path, "cannot write: Is a directory");
        ptlog_out_abort(o);
        return PTLOG_EXIT_OUTPUT;
    }
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        /* A device, FIFO or socket (/dev/null, a named pipe): written in place, never replaced. */
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0) {
            ptlog_msg(path, "cannot open the output: %s", strerror(errno));
            ptlog_out_abort(o);
            return PTLOG_EXIT_OUTPUT;
        }
        return PTLOG_EXIT_OK;
    }
    /* o->tmp is set only from here on: an early failure must not unlink a file named like the template. */
    /* OUT.tmp.XXXXXX, its base name cut so that the whole stays within NAME_MAX (an OUT of 250 bytes,
       which the directory takes, could not be written). */
    size_t n = strlen(path);
    const char *slash = strrchr(path, '/');
    size_t base = n - (slash ? (size_t)(slash + 1 - path) : 0), keep = n;
    if (base + sizeof ".tmp.XXXXXX" - 1 > NAME_MAX)
        keep = n - (base + sizeof ".tmp.XXXXXX" - 1 - NAME_MAX);
    o->tmp = malloc(keep + sizeof ".tmp.XXXXXX");
    if (!o->tmp) {
        ptlog_out_abort(o);
        return ptlog_nomem();
    }
    memcpy(o->tmp, path, keep);
    memcpy(o->tmp + keep, ".tmp.XXXXXX", sizeof ".tmp.XXXXXX");
    o->fd = mkstemp(o->tmp);
    if (o->fd >= 0)
        fcntl(o->fd, F_SETFD, FD_CLOEXEC); /* never inherited: record's traced program must not get the log */
    if (o->fd < 0) {
        ptlog_msg(path, "cannot create the output: %s", strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        ptlog_out_abort(o);
        return PTLOG_EXIT_OUTPUT;
    }
    if (ptlog_cleanup_add(o->tmp) != 0) {
        ptlog_msg(path, "too many temporary files");
        ptlog_out_abort(o);
        return PTLOG_EXIT_INTERNAL;
    }
    /* mkstemp creates 0600: the mode of the file it replaces (a private file stays private), else the
       one a plain creat() would give. */
    if (stat(path, &st) == 0) {
        fchmod(o->fd, st.st_mode & 0777); /* not its set-id bits: a log is no program */
    } else {
        mode_t mask = umask(0);
        umask(mask);
        fchmod(o->fd, 0666 & ~mask);
    }
    return PTLOG_EXIT_OK;
}

int ptlog_out_check_log_start(const ptlog_out *o)
{
    struct stat st;
    if (o->tmp || fstat(o->fd, &st) != 0 || !S_ISREG(st.st_mode))
        return PTLOG_EXIT_OK;
    off_t at = lseek(o->fd, 0, SEEK_CUR);
    int append = (fcntl(o->fd, F_GETFL) & O_APPEND) != 0;
    if (at == 0 && !(append && st.st_size > 0))
        return PTLOG_EXIT_OK;
    ptlog_msg(ptlog_out_name(o), "a .ptl log starts its file, and this one %s: nothing written (use -o FILE, or >)",
              append ? "is opened to append (>>) to what it holds" : "is open past its start");
    return PTLOG_EXIT_OUTPUT;
}

/* A memory output (ptlog_out_memory) makes room instead of writing: n more bytes past len. */
static void grow(ptlog_out *o, size_t n)
{
    if (o->err || o->cap - o->len >= n)
        return;
    size_t cap = o->cap * 2 > o->len + n ? o->cap * 2 : o->len + n;
    char *b = realloc(o->buf, cap);
    if (!b) {
        o->err = ENOMEM;
        o->len = 0; /* what was made is lost anyway: keep writing into what there is */
        return;
    }
    o->buf = b;
    o->cap = cap;
}

static void write_all(ptlog_out *o, const char *p, size_t n)
{
    if (o->memory) {
        grow(o, n);
        if (!o->err) {
            memcpy(o->buf + o->len, p, n);
            o->len += n;
        }
        return;
    }
    while (n > 0 && !o->err) {
        ssize_t k = write(o->fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            o->err = errno;
            return;
        }
        p += k;
        n -= (size_t)k;
    }
}

int ptlog_out_memory(ptlog_out *o, size_t cap)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->memory = 1;
    o->buf = malloc(cap);
    o->cap = o->buf ? cap : 0;
    return o->buf ? 0 : -1;
}

void ptlog_out_flush(ptlog_out *o)
{
    if (o->memory) {
        grow(o, 64 * 1024); /* ptlog_out_room's largest n */
        return;
    }
    if (o->len)
        write_all(o, o->buf, o->len);
    o->len = 0;
}

void ptlog_out_write_full(ptlog_out *o, const void *p, size_t n)
{
    ptlog_out_flush(o);
    if (n > o->cap - o->len) { /* past the buffer (in memory: appended as the buffer grows) */
        write_all(o, p, n);
        return;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}

void ptlog_out_write_block(ptlog_out *o, const void *p, size_t n)
{
    if (n < o->cap / 8) { /* a memory output appends either way (write_all) */
        ptlog_out_write(o, p, n);
        return;
    }
    ptlog_out_flush(o);
    write_all(o, p, n);
}

void ptlog_out_quoted(ptlog_out *o, const char *s, size_t n, ptlog_quote_fn quote, size_t grow)
{
    const size_t slice = 4096; /* so that any length fits the buffer: grow * slice + 2 <= 64 KiB */
    if (n <= slice) {
        o->len += quote(s, n, ptlog_out_room(o, grow * n + 2));
        return;
    }
    ptlog_out_write(o, "\"", 1);
    for (size_t off = 0; off < n;) {
        size_t k = n - off < slice ? n - off : slice;
        while (off + k < n && k > 1 && (s[off + k] & 0xC0) == 0x80) /* whole UTF-8 sequences */
            k--;
        char *dst = ptlog_out_room(o, grow * slice + 2);
        size_t w = quote(s + off, k, dst);
        memmove(dst, dst + 1, w - 2); /* the slice without its quotes */
        o->len += w - 2;
        off += k;
    }
    ptlog_out_write(o, "\"", 1);
}

const char *ptlog_out_name(const ptlog_out *o) { return o->path ? o->path : "<stdout>"; }

int ptlog_out_finish(ptlog_out *o)
{
    ptlog_out_flush(o);
    if (!o->err && o->tmp && fsync(o->fd) != 0 && errno != EINVAL)
        o->err = errno;
    if (o->path) {
        if (close(o->fd) != 0 && !o->err)
            o->err = errno;
        o->fd = -1;
    }
    if (!o->err && o->tmp && rename(o->tmp, o->path) != 0)
        o->err = errno;
    if (!o->err && o->tmp)
        ptlog_cleanup_remove(o->tmp); /* renamed: nothing left to remove */
    int code = PTLOG_EXIT_OK;
    if (o->err) {
        ptlog_msg(ptlog_out_name(o), "cannot write the output: %s", strerror(o->err));
        code = PTLOG_EXIT_OUTPUT;
        ptlog_out_abort(o);
        return code;
    }
    free(o->tmp);
    o->tmp = NULL;
    ptlog_out_abort(o);
    return code;
}

int ptlog_out_place(ptlog_out *o)
{
    if (!o->tmp)
        return 0; /* standard output, or a device or FIFO written in place */
    if (rename(o->tmp, o->path) != 0)
        return errno;
    ptlog_cleanup_remove(o->tmp);
    free(o->tmp);
    o->tmp = NULL;
    return 0;
}

void ptlog_out_abort(ptlog_out *o)
{
    if (o->path && o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp) {
        unlink(o->tmp);
        ptlog_cleanup_remove(o->tmp); /* after the unlink: a signal in between finds nothing */
    }
    free(o->tmp);
    free(o->path);
    free(o->buf);
    o->tmp = o->path = o->buf = NULL;
    o->len = o->cap = 0;
}

/* ptlog_put_type_text (ptlog.h) for a text to make, or longer than `fixed`. */
void ptlog_put_type_text_slow(ptlog_out *out, ptlog_type_texts *t, uint32_t id, const char *name)
{
    ptlog_type_text tmp = {0}, *slot = id < PTLOG_TYPE_TEXTS ? &t->v[id] : &tmp;
    if (!slot->text || slot->src != name) {
        free(slot->text);
        slot->text = t->make(name, id, &slot->len);
        slot->src = name;
        if (!slot->text) {
            slot->len = 0;
            return;
        }
    }
    if (slot->len <= t->fixed && slot != &tmp) { /* texts have room for `fixed` bytes: a fixed-size copy */
        memcpy(ptlog_out_room(out, t->fixed), slot->text, t->fixed);
        out->len += slot->len;
        return;
    }
    ptlog_out_write(out, slot->text, slot->len);
    free(tmp.text);
}

void ptlog_type_texts_free(ptlog_type_texts *t)
{
    for (size_t i = 0; i < PTLOG_TYPE_TEXTS; i++)
        free(t->v[i].text);
}
