/* Filling tracelog_error records (the caller's pointer may be NULL). */
#ifndef TRACELOG_ERROR_INTERNAL_H
#define TRACELOG_ERROR_INTERNAL_H

#include "tracelog/common.h"

/* Sets *err (if not NULL) and returns code, so callers can `return tl_fail(...)`. */
tracelog_status tl_fail(tracelog_error *err, tracelog_status code, int sys_errno,
                              uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#define TL_NO_OFFSET UINT64_MAX

#endif
