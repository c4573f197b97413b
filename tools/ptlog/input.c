/*
 * Opening inputs ("-" is standard input), looking at their first bytes to
 * detect the format, and giving the whole input back from its start: by
 * pread on regular files, and on pipes by serving the bytes read for
 * detection before the rest (they cannot be pushed back into a pipe;
 * ptlog_in_read is what the .ptl reader and the JSON parsers call). A LOOP
 * log's ring is read in segment order, which a pipe cannot give, so a LOOP
 * log from a pipe is first copied to an unlinked temporary file.
 *
 * Detection (documented in README.md):
 *   1. the .ptl magic "\x8BPTL\r\n\x1A\n" at offset 0, or a whole input of 1 to 7
 *      bytes that begins it (a log cut short): a .ptl log;
 *   2. otherwise, after blanks (and a UTF-8 byte-order mark), '{': JSON. It is
 *      one JSON document if its top-level object has an "events" key in the
 *      first 4 KiB or continues on a second line; otherwise JSON Lines;
 *   3. anything else is refused.
 */
#define _GNU_SOURCE /* O_TMPFILE */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <poll.h>

#include "live.h"
#include "ptlog.h"

static const unsigned char ptl_magic[8] = {0x8B, 'P', 'T', 'L', '\r', '\n', 0x1A, '\n'};

#define SPOOL_LIMIT_DEFAULT (4ull << 30) /* README.md: "Pipes" */

const char *ptlog_display_name(const char *path)
{
    return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

/* ptlog_in_on_wait's hook: flushes the output before a read of a pipe would block. */
static void (*wait_hook)(void *ctx);
static void *wait_ctx;

void ptlog_in_on_wait(void (*fn)(void *ctx), void *ctx)
{
    wait_hook = fn;
    wait_ctx = ctx;
}

void ptlog_in_idle(void)
{
    if (wait_hook)
        wait_hook(wait_ctx);
}

/* The bytes a pipe's head needs: a .ptl log is known from its first 64 (magic, ring geometry). */
#define PTL_HEAD_ENOUGH 64

static int head_decided(const ptlog_in *in)
{
    return !in->seekable && in->head_len >= PTL_HEAD_ENOUGH && memcmp(in->head, ptl_magic, sizeof ptl_magic) == 0;
}

static long read_some(int fd, void *buf, size_t n)
{
    for (;;) {
        ssize_t k = read(fd, buf, n);
        if (k >= 0 || errno != EINTR)
            return (long)k;
    }
}

int ptlog_in_open(ptlog_in *in, const char *path)
{
    memset(in, 0, sizeof *in);
    in->name = ptlog_display_name(path);
    in->fd = -1;
    if (strcmp(path, "-") == 0) {
        in->fd = STDIN_FILENO;
    } else {
        in->fd = open(path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0) {
            ptlog_msg(in->name, "cannot open: %s", strerror(errno));
            return PTLOG_EXIT_INPUT;
        }
        in->own_fd = 1;
    }
    struct stat st;
    if (fstat(in->fd, &st) != 0) {
        ptlog_msg(in->name, "cannot read: %s", strerror(errno));
        ptlog_in_close(in);
        return PTLOG_EXIT_INPUT;
    }
    if (S_ISDIR(st.st_mode)) {
        ptlog_msg(in->name, "is a directory");
        ptlog_in_close(in);
        return PTLOG_EXIT_INPUT;
    }
    in->seekable = S_ISREG(st.st_mode) && lseek(in->fd, 0, SEEK_CUR) >= 0;
    in->size = in->seekable ? (uint64_t)st.st_size : 0;
    /* Fill the head: pread on files (the reader also reads with pread from 0). A pipe's
       .ptl log is not held back for 4 KiB: its writer may be slow to send them (live reading). */
    while (in->head_len < sizeof in->head && !head_decided(in)) {
        long k = in->seekable ? (long)pread(in->fd, in->head + in->head_len, sizeof in->head - in->head_len,
                                            (off_t)in->head_len)
                              : read_some(in->fd, in->head + in->head_len, sizeof in->head - in->head_len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            ptlog_msg(in->name, "cannot read: %s", strerror(errno));
            ptlog_in_close(in);
            return PTLOG_EXIT_INPUT;
        }
        if (k == 0)
            break;
        in->head_len += (size_t)k;
    }
    if (in->head_len == 0) {
        /* spec 3.3: an empty file is a log whose creation was cut short (TRUNCATED_HEADER) */
        ptlog_msg(in->name, "empty input: truncated (0 bytes: too short to hold a .ptl header)");
        ptlog_in_close(in);
        return PTLOG_EXIT_INPUT;
    }
    return PTLOG_EXIT_OK;
}

long ptlog_in_read(ptlog_in *in, void *buf, size_t n)
{
    if (in->head_pos < in->head_len) {
        size_t k = in->head_len - in->head_pos;
        if (k > n)
            k = n;
        memcpy(buf, in->head + in->head_pos, k);
        in->head_pos += k;
        return (long)k;
    }
    if (in->seekable) {
        for (;;) {
            ssize_t k = pread(in->fd, buf, n, (off_t)in->head_pos);
            if (k < 0 && errno == EINTR)
                continue;
            if (k > 0)
                in->head_pos += (size_t)k;
            return (long)k;
        }
    }
    if (wait_hook) { /* nothing to read yet: what was output so far goes out before we block */
        struct pollfd p = {in->fd, POLLIN, 0};
        if (poll(&p, 1, 0) == 0)
            wait_hook(wait_ctx);
    }
    return read_some(in->fd, buf, n);
}

void ptlog_in_close(ptlog_in *in)
{
    if (in->own_fd && in->fd >= 0)
        close(in->fd);
    in->fd = -1;
    in->own_fd = 0;
}

/*
 * Whether the string that ended before p[from] is a key, not a value: a ':' follows it (after blanks),
 * or the bytes looked at end first (the 4 KiB of detection, or a line: a JSON Lines line holds whole
 * objects, so a string at depth 1 it ends after is no value of one).
 */
static int is_key(const unsigned char *p, size_t from, size_t n)
{
    while (from < n && (p[from] == ' ' || p[from] == '\t' || p[from] == '\r' || p[from] == '\n'))
        from++;
    return from >= n || p[from] == ':';
}

/* Does the first JSON object look like a whole document? See the rules above. */
int ptlog_looks_like_document(const unsigned char *p, size_t n)
{
    int depth = 0, in_str = 0, esc = 0, key_start = -1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (in_str) {
            if (esc)
                esc = 0;
            else if (c == '\\')
                esc = 1;
            else if (c == '"') {
                in_str = 0;
                if (depth == 1 && key_start >= 0 && i - (size_t)key_start == 6 &&
                    memcmp(p + key_start, "events", 6) == 0 && is_key(p, i + 1, n))
                    return 1;
                key_start = -1;
            }
            continue;
        }
        switch (c) {
        case '"':
            in_str = 1;
            key_start = (int)i + 1;
            break;
        case '{':
        case '[':
            depth++;
            break;
        case '}':
        case ']':
            if (--depth == 0)
                return 0;
            break;
        case '\n':
            if (depth > 0)
                return 1;
            break;
        default:
            break;
        }
    }
    return 0;
}

ptlog_format ptlog_detect(const unsigned char *p, size_t n)
{
    if (n >= sizeof ptl_magic && memcmp(p, ptl_magic, sizeof ptl_magic) == 0)
        return PTLOG_FMT_PTL;
    /* A whole input shorter than the magic and a prefix of it: a .ptl log cut short (spec 3.3). */
    if (n > 0 && n < sizeof ptl_magic && memcmp(p, ptl_magic, n) == 0)
        return PTLOG_FMT_PTL;
    size_t i = 0;
    if (n >= 3 && p[0] == 0xEF && p[1] == 0xBB && p[2] == 0xBF)
        i = 3;
    while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
        i++;
    if (i == n || p[i] != '{')
        return PTLOG_FMT_AUTO;
    return ptlog_looks_like_document(p + i, n - i) ? PTLOG_FMT_JSON : PTLOG_FMT_JSONL;
}

ptlog_format ptlog_format_parse(const char *name)
{
    if (strcmp(name, "ptl") == 0)
        return PTLOG_FMT_PTL;
    if (strcmp(name, "json") == 0)
        return PTLOG_FMT_JSON;
    if (strcmp(name, "jsonl") == 0 || strcmp(name, "ndjson") == 0)
        return PTLOG_FMT_JSONL;
    if (strcmp(name, "chrome") == 0)
        return PTLOG_FMT_CHROME;
    if (strcmp(name, "perfetto") == 0)
        return PTLOG_FMT_PERFETTO;
    return PTLOG_FMT_AUTO;
}

const char *ptlog_format_name(ptlog_format f)
{
    switch (f) {
    case PTLOG_FMT_PTL: return "ptl";
    case PTLOG_FMT_JSON: return "json";
    case PTLOG_FMT_JSONL: return "jsonl";
    case PTLOG_FMT_CHROME: return "chrome";
    case PTLOG_FMT_PERFETTO: return "perfetto";
    case PTLOG_FMT_TEXT: return "text";
    case PTLOG_FMT_AUTO: break;
    }
    return "auto";
}

/* ---- LOOP logs from pipes ------------------------------------------------------- */

static int write_all_fd(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/*
 * Does the head start a .ptl ring log (format-spec 3.1, 3.3)? Then *end is
 * the end of its geometry, beyond which the file holds nothing of the log.
 * The header checksum is left to the reader.
 */
static int ring_geometry_end(const unsigned char *p, size_t n, uint64_t *end)
{
    if (n < 64 || memcmp(p, ptl_magic, sizeof ptl_magic) != 0 || ptlog_load_le(p + 8, 2) != 1 || p[40] != 1)
        return 0;
    uint64_t header_size = ptlog_load_le(p + 12, 4), segment_size = ptlog_load_le(p + 44, 4);
    uint64_t ring_offset = ptlog_load_le(p + 48, 8), segment_count = ptlog_load_le(p + 56, 4);
    if (segment_size < 4096 || segment_size % 8 || segment_count < 2 || ring_offset % 8 ||
        ring_offset < header_size || ring_offset > (1ull << 48))
        return 0;
    *end = ring_offset + segment_size * segment_count;
    return 1;
}

int ptlog_in_is_ring(const ptlog_in *in)
{
    uint64_t end;
    return ring_geometry_end(in->head, in->head_len, &end);
}

/* PTLOG_SPOOL_LIMIT: bytes, or with a K, M, G or T suffix (either case; powers of 1024). */
static int spool_limit(uint64_t *limit)
{
    const char *v = getenv("PTLOG_SPOOL_LIMIT");
    *limit = SPOOL_LIMIT_DEFAULT;
    if (!v || !*v)
        return PTLOG_EXIT_OK;
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    const char *units = "KMGT", *u = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
    int shift = u ? 10 * (int)(u - units + 1) : 0;
    if (errno || end == v || *v == '-' || (*end && (!u || end[1])) || (n << shift >> shift) != n) {
        ptlog_msg("PTLOG_SPOOL_LIMIT", "expected a size in bytes such as 1048576 or 4G, not '%s'", v);
        return PTLOG_EXIT_USAGE;
    }
    *limit = (uint64_t)n << shift;
    return PTLOG_EXIT_OK;
}

/* A new temporary file in $TMPDIR (or /tmp) that has no name: it never outlives the process. */
static int spool_file(const char *name, const char **dir)
{
    *dir = getenv("TMPDIR");
    if (!*dir || !**dir)
        *dir = "/tmp";
    int fd = open(*dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) { /* no O_TMPFILE here */
        char path[4096];
        snprintf(path, sizeof path, "%s/ptlog-spool.XXXXXX", *dir);
        fd = mkostemp(path, O_CLOEXEC);
        if (fd >= 0)
            unlink(path);
    }
    if (fd < 0)
        ptlog_msg(name, "cannot create a temporary file in %s for a LOOP log read from a pipe: %s", *dir,
                  strerror(errno));
    return fd;
}

/* Copies the rest of the pipe after the head into fd, at most `keep` bytes in all. *copied: bytes in fd. */
static int spool_copy(ptlog_in *in, int fd, const char *dir, uint64_t keep, uint64_t *copied)
{
    char buf[1 << 16];
    uint64_t total = in->head_len < keep ? in->head_len : keep;
    if (write_all_fd(fd, in->head, (size_t)total) != 0)
        goto write_failed;
    while (total < keep) {
        long k = read_some(in->fd, buf, keep - total < sizeof buf ? (size_t)(keep - total) : sizeof buf);
        if (k < 0) {
            ptlog_msg(in->name, "cannot read: %s", strerror(errno));
            return PTLOG_EXIT_INPUT;
        }
        if (k == 0)
            break;
        if (write_all_fd(fd, buf, (size_t)k) != 0)
            goto write_failed;
        total += (uint64_t)k;
    }
    *copied = total;
    return PTLOG_EXIT_OK;
write_failed:
    ptlog_msg(in->name, "cannot copy a LOOP log read from a pipe to a temporary file in %s: %s", dir,
              strerror(errno));
    return PTLOG_EXIT_INTERNAL;
}

/*
 * A ring log on a pipe becomes a seekable input: the pipe is copied to an
 * unlinked temporary file, up to the end of the ring's geometry (nothing
 * after it belongs to the log) and at most PTLOG_SPOOL_LIMIT bytes.
 * Sequential logs stay streamed.
 */
static int spool_if_ring(ptlog_in *in)
{
    uint64_t end, limit;
    if (in->seekable || !ring_geometry_end(in->head, in->head_len, &end))
        return PTLOG_EXIT_OK;
    int rc = spool_limit(&limit);
    if (rc)
        return rc;
    const char *dir;
    int fd = spool_file(in->name, &dir);
    if (fd < 0)
        return PTLOG_EXIT_INTERNAL;
    uint64_t keep = end < limit ? end : limit, copied = 0;
    rc = spool_copy(in, fd, dir, keep, &copied);
    char more;
    if (!rc && copied == keep && keep < end && (in->head_len > keep || read_some(in->fd, &more, 1) > 0)) {
        ptlog_msg(in->name, "a LOOP log read from a pipe is copied to a temporary file first, and this one "
                  "is larger than PTLOG_SPOOL_LIMIT (%llu bytes): read it from a file, or raise the limit",
                  (unsigned long long)limit);
        rc = PTLOG_EXIT_INPUT;
    }
    if (rc) {
        close(fd);
        return rc;
    }
    ptlog_in_close(in);
    in->fd = fd;
    in->own_fd = 1;
    in->seekable = 1;
    in->size = copied;
    return PTLOG_EXIT_OK;
}

/* ptlog_src_open, and the .ptl reader behind the source in *reader when it is one. */
static int open_src(const char *path, ptlog_format fmt, ptlog_src **out, tracelog_reader **reader)
{
    ptlog_in *in = malloc(sizeof *in);
    if (!in)
        return ptlog_nomem();
    int rc = ptlog_in_open(in, path);
    if (rc) {
        free(in);
        return rc;
    }
    if (fmt == PTLOG_FMT_AUTO)
        fmt = ptlog_detect(in->head, in->head_len);
    if (fmt == PTLOG_FMT_AUTO) {
        ptlog_msg(in->name, "not a .ptl log, JSON or JSON Lines (unrecognised content)");
        rc = PTLOG_EXIT_INPUT;
    } else if (fmt == PTLOG_FMT_PTL) {
        rc = spool_if_ring(in);
        if (!rc)
            rc = ptlog_ptl_src_open(in, out, reader);
    } else if (fmt == PTLOG_FMT_JSON || fmt == PTLOG_FMT_JSONL) {
        rc = ptlog_json_src_open(in, fmt == PTLOG_FMT_JSONL, out);
    } else {
        ptlog_msg(in->name, "cannot read the %s format", ptlog_format_name(fmt));
        rc = PTLOG_EXIT_USAGE;
    }
    if (rc) {
        ptlog_in_close(in);
        free(in);
    }
    return rc; /* on success the source owns in */
}

int ptlog_src_open(const char *path, ptlog_format fmt, ptlog_src **out)
{
    tracelog_reader *r;
    return open_src(path, fmt, out, &r);
}

int ptlog_src_open_ptl(const char *path, ptlog_src **out, tracelog_reader **reader)
{
    return open_src(path, PTLOG_FMT_PTL, out, reader);
}
