/*
 * ptlog verify: reads every block and decodes every chunk (all checksums
 * are checked on the way), then reports what was checked and each problem
 * with its file offset. Exit 0 clean, 1 damage found or not closed, 3
 * unreadable. "OK" is the spec's "clean" (format-spec 8.6): closed and
 * nothing lost. A log with no problem but no trailer either (a crash, a
 * kill, a file cut between blocks or inside the zeros a LOOP log's writer
 * leaves unwritten) is not clean: whatever followed the last block found is
 * unknown, so it exits 1 like a loss.
 */
#include <stdio.h>
#include <string.h>

#include "ptlog.h"

static int count(void *ctx, const tracelog_event *ev, const char *name)
{
    (void)ev;
    (void)name;
    ++*(uint64_t *)ctx;
    return 0;
}

int ptlog_cmd_verify(const char *path, int quiet)
{
    ptlog_src *src;
    tracelog_reader *r;
    int rc = ptlog_src_open_ptl(path, &src, &r);
    if (rc)
        return rc;
    const char *name = ptlog_display_name(path);
    uint64_t events = 0;
    /* Read to the end without the usual warnings: verify prints its own report. */
    tracelog_event ev;
    int n;
    while ((n = src->next(src, &ev)) == 1)
        count(&events, &ev, NULL);
    if (n < 0) {
        src->close(src);
        return -n;
    }
    tracelog_reader_info ri;
    tracelog_reader_get_info(r, &ri);
    size_t np = tracelog_reader_problem_count(r);
    if (!quiet) {
        printf("%s: .ptl %u.%u, %llu bytes\n", name, ri.format_major, ri.format_minor,
               (unsigned long long)ri.file_size);
        printf("checked: %llu blocks, %llu chunks (%llu bytes stored, %llu bytes uncompressed), %llu events\n",
               (unsigned long long)ri.blocks, (unsigned long long)ri.chunks, (unsigned long long)ri.stored_bytes,
               (unsigned long long)ri.raw_bytes, (unsigned long long)events);
        printf("shutdown: %s\n", ptlog_shutdown_text(r, &ri));
    }
    for (size_t i = 0; i < np; i++) {
        tracelog_problem p;
        if (tracelog_reader_problem(r, i, &p) != TRACELOG_OK)
            break;
        char msg[4 * sizeof p.message], code[64];
        size_t len = ptlog_text_sanitize(p.message, strnlen(p.message, sizeof p.message), msg);
        /* A message that ends with its code already says it once: not twice on the line. */
        size_t c = (size_t)snprintf(code, sizeof code, " (%s)", tracelog_status_name(p.code));
        if (len > c && memcmp(msg + len - c, code, c) == 0)
            len -= c;
        msg[len] = 0;
        printf("problem: offset %llu: %s (%llu bytes skipped, %s)\n", (unsigned long long)p.offset, msg,
               (unsigned long long)p.length, tracelog_status_name(p.code));
    }
    if (ri.problems > np)
        printf("problem: %llu more problems not listed\n", (unsigned long long)(ri.problems - np));
    if (ri.problems) {
        if (!quiet)
            printf("result: DAMAGED: %llu problem%s, %llu bytes skipped; everything else was recovered\n",
                   (unsigned long long)ri.problems, ri.problems == 1 ? "" : "s", (unsigned long long)ri.bytes_skipped);
        ptlog_msg(name, "%llu problem%s found (recovered with loss)", (unsigned long long)ri.problems,
                  ri.problems == 1 ? "" : "s");
        rc = PTLOG_EXIT_LOSS;
    } else if (!ri.clean) {
        if (!quiet)
            printf("result: NOT CLOSED: no trailer; no damage found, %llu events recovered, what followed them is "
                   "unknown\n",
                   (unsigned long long)events);
        ptlog_msg(name, "not closed: no trailer (cut short by a crash, a kill or a truncation)");
        rc = PTLOG_EXIT_LOSS;
    } else if (!quiet) {
        printf("result: OK\n");
    }
    src->close(src);
    return rc;
}
