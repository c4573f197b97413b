/*
 * Following a log while its writer appends to it (format-spec 8.7, issue
 * 28), like tail -f: the file is read as a stream, block by block as they
 * are completed, with pread (reader/source.c). The end of the data is "not
 * yet": tracelog_reader_next says TRACELOG_END for now, scanning again from
 * the same block the next time, so a block the writer is half way through
 * is never reported as torn; once the caller decides that nothing more will
 * come (tracelog_reader_follow_stop), the end of the data is the end of the
 * log, read as any stream's end is (a torn last block is reported then).
 *
 * The wait polls the file's size (every FOLLOW_POLL_NS): it costs one fstat
 * per poll and works on every file system (inotify does not see writes over
 * NFS or from another machine's writer).
 */
#include <errno.h>
#include <sys/stat.h>
#include <time.h>

#include "reader/internal.h"

#define FOLLOW_POLL_NS 10000000L /* 10 ms: well within a flush interval (100 ms by default) */

/* The file's size now; 0 when it cannot be known (fstat failed: the next wait says so). */
static uint64_t file_size(const tracelog_reader *r, int *e)
{
    struct stat st;
    *e = fstat(r->src.fd, &st) == 0 ? 0 : errno;
    return *e ? 0 : (uint64_t)st.st_size;
}

void tl_reader_follow_dry(tracelog_reader *r)
{
    int e;
    r->follow_dry = 1;
    /* After the reads that ran dry: a block completed in between only makes the wait return at once. */
    r->follow_size = file_size(r, &e);
}

tracelog_status tracelog_reader_follow_wait(tracelog_reader *r, unsigned timeout_ms)
{
    if (!r)
        return TRACELOG_E_INVAL;
    if (!r->src.follow || r->follow_stopped)
        return TRACELOG_E_STATE;
    uint64_t left_ns = (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        int e;
        uint64_t size = file_size(r, &e);
        if (e) {
            errno = e;
            return TRACELOG_E_IO;
        }
        /* Against the size the reads saw, not the next block's offset: a block header that claims
           more bytes than will ever come (damage, or a hostile writer) puts that offset past the end
           of the file, which is a block not written yet (read as a torn tail once stopped), not a
           file that shrank. */
        if (size < r->follow_size) { /* truncated under the reader: bytes it saw are gone */
            tl_reader_problem(r, TL_COND_FILE_CHANGED, size, 0,
                              "the file shrank to %llu bytes while it was followed (it held %llu)",
                              (unsigned long long)size, (unsigned long long)r->follow_size);
            return TRACELOG_E_CORRUPT;
        }
        if (size > r->follow_size)
            return TRACELOG_OK;
        if (left_ns == 0)
            return TRACELOG_END;
        long step = left_ns < (uint64_t)FOLLOW_POLL_NS ? (long)left_ns : FOLLOW_POLL_NS;
        struct timespec nap = {0, step};
        if (nanosleep(&nap, NULL) != 0 && errno == EINTR)
            return TRACELOG_END; /* a signal: the caller looks at why (Ctrl-C) before waiting again */
        left_ns -= (uint64_t)step;
    }
}

tracelog_status tracelog_reader_hold_open_set(tracelog_reader *r, int hold)
{
    if (!r)
        return TRACELOG_E_INVAL;
    r->hold_open_set = hold != 0;
    return TRACELOG_OK;
}

tracelog_status tracelog_reader_follow_stop(tracelog_reader *r)
{
    if (!r)
        return TRACELOG_E_INVAL;
    if (!r->src.follow)
        return TRACELOG_E_STATE;
    if (!r->follow_stopped && !r->have_meta)
        tl_reader_problem(r, TL_COND_NO_METADATA, r->hdr.header_size, 0, "no valid metadata block: attributes unknown");
    r->follow_stopped = 1;
    r->follow_dry = 0;
    /* The data ends where the file does now, not where the reads stopped: a torn last block is the
       bytes it has (it was reported as the bytes its header claimed, or the 32 of the header). */
    int e;
    uint64_t size = file_size(r, &e);
    if (!e && size > r->src.size)
        r->src.size = size;
    return TRACELOG_OK;
}
