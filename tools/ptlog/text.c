/*
 * Text that came from a file (names, attributes, problem messages) made
 * safe to print: a crafted log must not be able to move the cursor, clear
 * the screen, set the window title or forge an output line. One rule for
 * every command (README.md, "Text from files"):
 *
 *   - printed bare when it is non-empty, valid UTF-8 and holds no control
 *     character (C0, DEL, C1), no quote or backslash, and (names in dump)
 *     no blank;
 *   - otherwise in double quotes with the C escapes \" \\ \t \n \r \0, and
 *     \xHH for every other control byte, for the bytes of a C1 control
 *     (U+0080..U+009F, which some terminals obey like ESC [) and for every
 *     byte that is not part of valid UTF-8.
 */
#include <string.h>

#include "ptlog.h"

static const char hexd[] = "0123456789abcdef";

/* Escape for one byte in a quoted string, or 0 if it has no short escape. */
static char short_escape(unsigned char c)
{
    switch (c) {
    case '"': return '"';
    case '\\': return '\\';
    case '\t': return 't';
    case '\n': return 'n';
    case '\r': return 'r';
    case 0: return '0';
    default: return 0;
    }
}

size_t ptlog_utf8_len(const unsigned char *p, size_t n)
{
    unsigned char c = p[0];
    size_t len;
    uint32_t min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        len = 2, min = 0x80;
    else if (c >= 0xE0 && c <= 0xEF)
        len = 3, min = 0x800;
    else if (c >= 0xF0 && c <= 0xF4)
        len = 4, min = 0x10000;
    else
        return 0;
    if (n < len)
        return 0;
    uint32_t cp = c & (0x7Fu >> len);
    for (size_t i = 1; i < len; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (p[i] & 0x3Fu);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return len;
}

/* Length of the valid UTF-8 sequence at p (2..4, p[0] >= 0x80) that is not a C1 control, or 0. */
static size_t utf8_printable_len(const unsigned char *p, size_t n)
{
    /* C1 controls (U+0080..U+009F) are the 2-byte sequences C2 80..C2 9F */
    if (p[0] == 0xC2 && n >= 2 && p[1] <= 0x9F)
        return 0;
    return ptlog_utf8_len(p, n);
}

int ptlog_text_is_plain(const char *s, size_t n, int blanks_ok)
{
    const unsigned char *p = (const unsigned char *)s;
    if (n == 0)
        return 0;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        if (c >= 0x80) {
            size_t k = utf8_printable_len(p + i, n - i);
            if (!k)
                return 0;
            i += k;
            continue;
        }
        if (c < 0x20 || c == 0x7f || c == '"' || c == '\\' || (c == ' ' && !blanks_ok))
            return 0;
        i++;
    }
    return 1;
}

/* Escapes p[0..n) into d (room for 4n). c_style: also the C escapes of quotes, backslashes and \t \n \r \0. */
static size_t escape_bytes(const unsigned char *p, size_t n, int c_style, char *dst)
{
    char *d = dst;
    for (size_t i = 0; i < n;) {
        unsigned char c = p[i];
        char e = c_style ? short_escape(c) : 0;
        size_t k;
        if (e) {
            *d++ = '\\';
            *d++ = e;
            i++;
        } else if (c >= 0x20 && c < 0x7f) {
            *d++ = (char)c;
            i++;
        } else if (c >= 0x80 && (k = utf8_printable_len(p + i, n - i)) > 0) {
            memcpy(d, p + i, k);
            d += k;
            i += k;
        } else {
            *d++ = '\\';
            *d++ = 'x';
            *d++ = hexd[c >> 4];
            *d++ = hexd[c & 15];
            i++;
        }
    }
    return (size_t)(d - dst);
}

const unsigned char ptlog_plain_ascii[256] = {
    ['\x20'] = 1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,             /* " is 0x22 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                         /* 0x30 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                         /* 0x40 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,                         /* 0x50: \ is 0x5c */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,                         /* 0x60 */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,                         /* 0x70: DEL is 0x7f */
};

size_t ptlog_text_quote(const char *s, size_t n, char *dst)
{
    dst[0] = '"';
    size_t k = 1 + escape_bytes((const unsigned char *)s, n, 1, dst + 1);
    dst[k] = '"';
    return k + 1;
}

size_t ptlog_text_sanitize(const char *s, size_t n, char *dst)
{
    return escape_bytes((const unsigned char *)s, n, 0, dst);
}

size_t ptlog_text_safe(const char *s, size_t n, int blanks_ok, char *dst)
{
    if (ptlog_text_is_plain(s, n, blanks_ok)) {
        memcpy(dst, s, n);
        return n;
    }
    return ptlog_text_quote(s, n, dst);
}

const char *ptlog_text_show(const char *s, char *buf, size_t cap)
{
    size_t n = strnlen(s, (cap - 3) / 4);
    buf[ptlog_text_safe(s, n, 1, buf)] = 0;
    return buf;
}
