/*
 * make_golden: writes the golden sample logs of samples/golden/ with the
 * native writer API, from fixed attributes, timestamps and payloads, so that
 * every run gives logs with the same content (only the random salt, and so
 * the checksums, differ from run to run: the dumps are identical).
 *
 *   make_golden DIR
 *
 * Writes DIR/append.ptl, DIR/until_full.ptl, DIR/loop.ptl (one per log
 * policy), DIR/cut_short.ptl (append.ptl cut inside its last chunk, as a
 * crash would leave it), DIR/damaged.ptl (append.ptl with one byte of its
 * second chunk altered) and DIR/threads.ptl (format 1.1: kernel thread ids,
 * one thread handle reused). samples/golden/README.md says how to refresh
 * them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <tracelog.h>

#define BASE_NS 1767225600000000000ull /* 2026-01-01T00:00:00Z */

enum { EV_START = 2, EV_STOP = 3, EV_OPEN = 33, EV_READ, EV_CLOSE, EV_NOTE };

static void fixed_metadata(tracelog_metadata *m, const char *name)
{
    memset(m, 0, sizeof *m);
    snprintf(m->trace_name, sizeof m->trace_name, "%s", name);
    snprintf(m->generation_version, sizeof m->generation_version, "tracelog golden");
    m->creation_time_ns = BASE_NS;
    snprintf(m->clock_id, sizeof m->clock_id, "CLOCK_REALTIME");
    snprintf(m->clock_source, sizeof m->clock_source, "CLOCK_MONOTONIC+offset");
    m->clock_resolution_ns = 1;
    m->max_data_size = 256;
    m->stream_min_size = 1u << 20;
    m->stream_full_policy = TRACELOG_POLICY_FLUSH;
    m->inherited = 0;
    snprintf(m->hostname, sizeof m->hostname, "golden-host");
    snprintf(m->os_name, sizeof m->os_name, "Linux");
    snprintf(m->os_release, sizeof m->os_release, "6.1.0");
    snprintf(m->machine, sizeof m->machine, "x86_64");
    m->pid = 4242;
    snprintf(m->program, sizeof m->program, "/usr/bin/golden");
}

/* Event i of the golden sequence: a few types, two threads, text and binary payloads. */
static void golden_event(unsigned i, tracelog_event *ev, unsigned char *buf)
{
    static const char *const files[] = {"/etc/hosts", "/var/log/syslog", "/tmp/x"};
    memset(ev, 0, sizeof *ev);
    ev->timestamp_ns = BASE_NS + 1000000ull + i * 1250ull + (i % 7) * 3ull;
    ev->pid = 4242;
    ev->tid = (i % 3 == 0) ? 0x7f1a2b3c4d40ull : 0x7f1a2b3c5e80ull;
    ev->address = 0x55d0c0de1000ull + (i % 4) * 0x40;
    ev->payload = buf;
    switch (i % 4) {
    case 0:
        ev->event_id = EV_OPEN;
        ev->payload_len = (uint32_t)snprintf((char *)buf, 64, "%s", files[i % 3]);
        break;
    case 1:
    case 2:
        ev->event_id = EV_READ;
        for (unsigned k = 0; k < 12; k++)
            buf[k] = (unsigned char)(i * 7 + k * 13);
        ev->payload_len = 12;
        break;
    default:
        ev->event_id = i % 40 == 3 ? EV_NOTE : EV_CLOSE;
        ev->payload_len = ev->event_id == EV_NOTE ? (uint32_t)snprintf((char *)buf, 64, "checkpoint %u\n", i) : 0;
        ev->truncation = i % 50 == 7 ? TRACELOG_TRUNC_RECORD : TRACELOG_TRUNC_NONE;
    }
}

/*
 * threads.ptl's kernel tids: the main thread is the process (4242), the
 * other handle is thread 4250 until event 200, then a new thread, 4301,
 * that got the same pthread_t.
 */
static uint32_t kernel_tid_of(unsigned i, uint64_t tid)
{
    if (tid == 0x7f1a2b3c4d40ull)
        return 4242;
    return i < 200 ? 4250 : 4301;
}

static int write_log(const char *dir, const char *file, tracelog_policy policy, uint64_t log_size, unsigned n,
                     int threads)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "make_golden: %s: %s\n", path, strerror(errno));
        return -1;
    }
    tracelog_metadata meta;
    fixed_metadata(&meta, file);
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = policy;
    opt.log_max_size = log_size;
    opt.chunk_size = 4096;
    opt.segment_size = 4096;
    opt.durable_size = 4096;
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(fd, &meta, &opt, &w, &err)) {
        fprintf(stderr, "make_golden: %s: %s\n", path, err.message);
        close(fd);
        return -1;
    }
    static const struct { uint32_t id; const char *name; } types[] = {
        {EV_START, "posix_trace_start"}, {EV_STOP, "posix_trace_stop"}, {EV_OPEN, "file:open"},
        {EV_READ, "file:read"}, {EV_CLOSE, "file:close"}, {EV_NOTE, "note"},
    };
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        tracelog_writer_define_event(w, types[t].id, types[t].name);
    unsigned char buf[64];
    tracelog_event ev = {BASE_NS, EV_START, 4242, threads ? 4242 : 0, 0x7f1a2b3c4d40ull, 0x55d0c0de0f00ull, 0, 0, NULL};
    tracelog_writer_append(w, &ev);
    for (unsigned i = 0; i < n; i++) {
        golden_event(i, &ev, buf);
        if (threads)
            ev.kernel_tid = kernel_tid_of(i, ev.tid);
        tracelog_status st = tracelog_writer_append(w, &ev);
        if (st != TRACELOG_OK && st != TRACELOG_E_LOG_FULL)
            break;
        if (i % 100 == 99)
            tracelog_writer_flush(w); /* as a periodic flush would */
    }
    ev = (tracelog_event){BASE_NS + 2000000000ull, EV_STOP, 4242, threads ? 4242 : 0, 0x7f1a2b3c4d40ull,
                          0x55d0c0de0f40ull, 0, 4,
                          "\0\0\0\0"};
    if (tracelog_writer_append(w, &ev) == TRACELOG_E_LOG_FULL)
        tracelog_writer_append_final(w, &ev);
    tracelog_status st = tracelog_writer_close(w, &err);
    close(fd);
    if (st) {
        fprintf(stderr, "make_golden: %s: %s\n", path, err.message);
        return -1;
    }
    return 0;
}

/* Copies DIR/append.ptl to DIR/name, cut to `keep` bytes, or with byte `flip_at` inverted. */
static int derive(const char *dir, const char *name, long keep, long flip_at)
{
    char in[4096], out[4096];
    static unsigned char data[1 << 20];
    snprintf(in, sizeof in, "%s/append.ptl", dir);
    snprintf(out, sizeof out, "%s/%s", dir, name);
    FILE *f = fopen(in, "rb");
    if (!f)
        return -1;
    size_t n = fread(data, 1, sizeof data, f);
    fclose(f);
    if (keep >= 0 && (size_t)keep < n)
        n = (size_t)keep;
    if (flip_at >= 0 && (size_t)flip_at < n)
        data[flip_at] ^= 0xff;
    f = fopen(out, "wb");
    if (!f || fwrite(data, 1, n, f) != n) {
        fprintf(stderr, "make_golden: %s: %s\n", out, strerror(errno));
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f);
}

/* Offset of the n-th CHUNK block (0-based) of a sequential log, found from the block headers. */
static long chunk_offset(const char *dir, int n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/append.ptl", dir);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    unsigned char h[32];
    long off = 64;
    while (fseek(f, off, SEEK_SET) == 0 && fread(h, 1, 32, f) == 32 && memcmp(h, "\x8b" "BLK", 4) == 0) {
        unsigned type = h[4] | h[5] << 8;
        unsigned long len = h[16] | h[17] << 8 | (unsigned long)h[18] << 16 | (unsigned long)h[19] << 24;
        if (type == 3 && n-- == 0)
            break;
        off += 32 + (long)((len + 7) & ~7ul);
    }
    fclose(f);
    return off;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_golden DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    if (write_log(dir, "append.ptl", TRACELOG_POLICY_APPEND, 0, 400, 0) ||
        write_log(dir, "until_full.ptl", TRACELOG_POLICY_UNTIL_FULL, 2000, 400, 0) ||
        write_log(dir, "loop.ptl", TRACELOG_POLICY_LOOP, 8192, 1200, 0) ||
        write_log(dir, "threads.ptl", TRACELOG_POLICY_APPEND, 0, 300, 1))
        return 1;
    long third = chunk_offset(dir, 2), second = chunk_offset(dir, 1);
    if (third < 0 || second < 0 || derive(dir, "cut_short.ptl", third + 100, -1) ||
        derive(dir, "damaged.ptl", -1, second + 32 + 40))
        return 1;
    return 0;
}
