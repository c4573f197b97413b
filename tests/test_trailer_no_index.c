/*
 * Format 1.1 writers write no chunk index in TRAILERs (format-spec 5.5): a
 * log of many chunks, with checkpoints, ends with a TRAILER whose
 * index_count is 0 and whose size does not grow with the chunks; the reader
 * still reads every event, and still accepts a 1.0 trailer's index (the
 * v1.0 goldens, test_compat).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/bytes.h"
#include "format/format.h"
#include "tl_test.h"

enum { CHUNKS = 400, PER_CHUNK = 50 };

static uint64_t u64_at(int fd, uint64_t off)
{
    uint8_t b[8];
    if (pread(fd, b, 8, (off_t)off) != 8)
        TL_DIE("short read at %llu", (unsigned long long)off);
    return tl_load64(b);
}

static void test_no_index(void)
{
    int fd = tl_test_tmpfd();
    tracelog_writer_options o;
    tracelog_writer_options_init(&o);
    o.chunk_size = 4096;
    tracelog_writer *w = NULL;
    if (!CHECK_STATUS(tracelog_writer_create(fd, NULL, &o, &w, NULL), TRACELOG_OK))
        return;
    CHECK_STATUS(tracelog_writer_define_event(w, 1, "tick"), TRACELOG_OK);
    uint64_t trailer_sizes[2] = {0, 0};
    for (uint32_t c = 0; c < CHUNKS; c++) {
        for (uint32_t i = 0; i < PER_CHUNK; i++) {
            tracelog_event ev = {.timestamp_ns = TL_TEST_TS_BASE + c * PER_CHUNK + i, .event_id = 1};
            CHECK_STATUS(tracelog_writer_append(w, &ev), TRACELOG_OK);
        }
        CHECK_STATUS(tracelog_writer_flush(w), TRACELOG_OK); /* one chunk per flush */
        if (c == 9 || c == CHUNKS - 1) {
            struct stat before, after;
            fstat(fd, &before);
            CHECK_STATUS(tracelog_writer_checkpoint(w), TRACELOG_OK);
            fstat(fd, &after);
            trailer_sizes[c != 9] = (uint64_t)(after.st_size - before.st_size);
        }
    }
    CHECK_STATUS(tracelog_writer_close(w, NULL), TRACELOG_OK);
    /* 10 chunks or 400 before it: the same TRAILER (the index took 40 bytes per chunk). */
    CHECK_EQ(trailer_sizes[0], trailer_sizes[1]);
    CHECK_MSG(trailer_sizes[1] < 256, "a TRAILER of %llu bytes", (unsigned long long)trailer_sizes[1]);

    struct stat st;
    fstat(fd, &st);
    uint64_t end = (uint64_t)st.st_size, trailer = u64_at(fd, end - 16);
    uint8_t h[TL_BLOCK_HEADER_SIZE];
    CHECK(pread(fd, h, sizeof h, (off_t)trailer) == (ssize_t)sizeof h);
    CHECK_EQ(tl_load16(h + 4), TL_BLOCK_TRAILER);
    CHECK_EQ(u64_at(fd, end - 24), 0); /* index_count */

    tl_test_readout r;
    tl_test_read_fd(fd, NULL, &r);
    CHECK_EQ(r.events.n, CHUNKS * PER_CHUNK);
    CHECK(r.info.clean);
    tl_test_readout_free(&r);
    close(fd);
}

int main(void)
{
    TL_TEST_RUN(test_no_index);
    return tl_test_finish();
}
