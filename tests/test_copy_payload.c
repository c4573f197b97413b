/*
 * The inline payload copy of the trace point and the chunk encoder
 * (common/bytes.h, tl_copy_payload): every length 0..64 copies exactly its bytes,
 * writes nothing past them, and reads nothing past the source, which ends at
 * a page with no access (a read beyond it would crash the test).
 */
#define _GNU_SOURCE

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/bytes.h"
#include "tl_test.h"

#define MAX_LEN 64

static void test_every_length(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    uint8_t *map = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED)
        TL_DIE("mmap");
    if (mprotect(map + page, page, PROT_NONE))
        TL_DIE("mprotect");
    for (uint32_t len = 0; len <= MAX_LEN; len++) {
        uint8_t *src = map + page - len; /* its last byte is the last readable one */
        for (uint32_t i = 0; i < len; i++)
            src[i] = (uint8_t)(len * 31 + i + 1);
        uint8_t dst[MAX_LEN + 16];
        memset(dst, 0xee, sizeof dst);
        tl_copy_payload(dst + 8, src, len);
        CHECK_MSG(memcmp(dst + 8, src, len) == 0, "len %u: bytes copied", len);
        int untouched = 1;
        for (size_t i = 0; i < sizeof dst; i++)
            if ((i < 8 || i >= 8 + len) && dst[i] != 0xee)
                untouched = 0;
        CHECK_MSG(untouched, "len %u: a byte outside the payload written", len);
    }
    munmap(map, 2 * page);
}

int main(void)
{
    TL_TEST_RUN(test_every_length);
    return tl_test_finish();
}
