/*
 * tl_fail: the one place a tracelog_error is filled, so that every error a
 * caller sees carries its code, errno, file offset and message together.
 */
#include "common/error.h"

#include <stdarg.h>
#include <stdio.h>

tracelog_status tl_fail(tracelog_error *err, tracelog_status code, int sys_errno,
                              uint64_t offset, const char *fmt, ...)
{
    if (!err)
        return code;
    err->code = code;
    err->sys_errno = sys_errno;
    err->offset = offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}
