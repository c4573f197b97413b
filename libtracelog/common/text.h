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

/*
 * Copies text[0..len) into dst[cap], NUL-terminated (cap > 0); cut to fit
 * before a UTF-8 continuation byte, not inside a character (a name the
 * kernel or another process gave, for display).
 */
static inline void tl_copy_text_cut(char *dst, size_t cap, const char *text, size_t len)
{
    if (len > cap - 1) {
        len = cap - 1;
        while (len > 0 && ((unsigned char)text[len] & 0xC0) == 0x80)
            len--;
    }
    memcpy(dst, text, len);
    dst[len] = 0;
}

#endif
