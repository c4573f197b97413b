/*
 * ring_log: writes a LOOP log (a ring, as ptlog dump --follow reads one
 * again and again) holding the events given, for the tests of following a
 * ring whose events change under the follower (test_ptlog_follow). Each
 * event is TS:TID:TEXT: its time in ns since the epoch, its thread (kernel
 * tid and pthread id alike), its payload. The log is left as its writer
 * leaves it mid-recording: flushed, without a trailer (a follower waits for
 * more). Exit status 0, 1 on a write error, 2 for bad arguments.
 *
 *   ring_log OUT.ptl TS:TID:TEXT...
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracelog/writer.h"

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: ring_log OUT.ptl TS:TID:TEXT...\n");
        return 2;
    }
    int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    tracelog_metadata meta;
    tracelog_metadata_init(&meta);
    snprintf(meta.trace_name, sizeof meta.trace_name, "ring");
    meta.creation_time_ns = 1714564800000000000ull;
    tracelog_writer_options opt;
    tracelog_writer_options_init(&opt);
    opt.log_policy = TRACELOG_POLICY_LOOP;
    opt.log_max_size = 64u << 10;
    tracelog_writer *w;
    tracelog_error err;
    if (tracelog_writer_create(fd, &meta, &opt, &w, &err) != TRACELOG_OK ||
        tracelog_writer_define_event(w, 1, "tick") != TRACELOG_OK) {
        fprintf(stderr, "ring_log: %s\n", err.message);
        return 1;
    }
    int rc = 0;
    for (int i = 2; i < argc && !rc; i++) {
        unsigned long long ts;
        unsigned tid;
        int at = 0;
        if (sscanf(argv[i], "%llu:%u:%n", &ts, &tid, &at) != 2 || !at) {
            fprintf(stderr, "ring_log: not TS:TID:TEXT: %s\n", argv[i]);
            return 2;
        }
        const char *text = argv[i] + at;
        tracelog_event ev = {.timestamp_ns = ts, .event_id = 1, .pid = 100, .kernel_tid = tid, .tid = tid,
                             .payload_len = (uint32_t)strlen(text), .payload = text};
        rc = tracelog_writer_append(w, &ev) != TRACELOG_OK;
    }
    rc |= tracelog_writer_flush(w) != TRACELOG_OK; /* not closed: no trailer */
    rc |= close(fd) != 0;
    if (rc)
        fprintf(stderr, "ring_log: cannot write %s\n", argv[1]);
    /* The writer is not closed (that writes a trailer) nor freed: gone as a recording killed mid-run
       goes, without the exit handlers (a leak checker's among them). */
    _exit(rc);
}
