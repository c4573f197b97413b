/* Copying text into fixed-size fields. */
#ifndef TRACELOG_TEXT_H
#define TRACELOG_TEXT_H

#include <stddef.h>
#include <string.h>

/* Copies src into dst[cap], cut to cap - 1 bytes, always NUL-terminated (cap > 0). */
static inline void tl_copy_text(char *dst, size_t cap, const char *src)
{
    size_t n = strlen(src);
    if (n > cap - 1)
        n = cap - 1;
    memcpy(dst, src, n);
    dst[n] = 0;
}

#endif
