/*
 * Built-in payload schemas of the POSIX system events, as libtracelog
 * records them (libtracelog/posix, libtracelog/stream): the writer of a log
 * stores them in its EVENT_TYPES entries like any other schema, so a reader
 * needs no knowledge of its own (format-spec/ptl-format.md section 5.6.7).
 */
#include <errno.h>

#include "format/schema.h"

#define TL_STR_(x) #x
#define TL_STR(x) TL_STR_(x)
#define E(name) #name "=" TL_STR(name)

/*
 * POSIX_TRACE_ERROR carries an int errno. Its names are those POSIX
 * defines, with this host's values (the stored schema carries them, so a
 * log read elsewhere is still named right); the aliases ENOTSUP and
 * EWOULDBLOCK are left out, since an enum names each value once.
 */
static const char error_schema[] =
    "enum32 error {" E(EPERM) ", " E(ENOENT) ", " E(ESRCH) ", " E(EINTR) ", " E(EIO) ", "
    E(ENXIO) ", " E(E2BIG) ", " E(ENOEXEC) ", " E(EBADF) ", " E(ECHILD) ", " E(EAGAIN) ", "
    E(ENOMEM) ", " E(EACCES) ", " E(EFAULT) ", " E(EBUSY) ", " E(EEXIST) ", " E(EXDEV) ", "
    E(ENODEV) ", " E(ENOTDIR) ", " E(EISDIR) ", " E(EINVAL) ", " E(ENFILE) ", " E(EMFILE) ", "
    E(ENOTTY) ", " E(ETXTBSY) ", " E(EFBIG) ", " E(ENOSPC) ", " E(ESPIPE) ", " E(EROFS) ", "
    E(EMLINK) ", " E(EPIPE) ", " E(EDOM) ", " E(ERANGE) ", " E(EDEADLK) ", " E(ENAMETOOLONG) ", "
    E(ENOLCK) ", " E(ENOSYS) ", " E(ENOTEMPTY) ", " E(ELOOP) ", " E(ENOMSG) ", " E(EIDRM) ", "
    E(ENOSTR) ", " E(ENODATA) ", " E(ETIME) ", " E(ENOSR) ", " E(ENOLINK) ", " E(EPROTO) ", "
    E(EMULTIHOP) ", " E(EBADMSG) ", " E(EOVERFLOW) ", " E(EILSEQ) ", " E(ENOTSOCK) ", "
    E(EDESTADDRREQ) ", " E(EMSGSIZE) ", " E(EPROTOTYPE) ", " E(ENOPROTOOPT) ", "
    E(EPROTONOSUPPORT) ", " E(EOPNOTSUPP) ", " E(EAFNOSUPPORT) ", " E(EADDRINUSE) ", "
    E(EADDRNOTAVAIL) ", " E(ENETDOWN) ", " E(ENETUNREACH) ", " E(ENETRESET) ", "
    E(ECONNABORTED) ", " E(ECONNRESET) ", " E(ENOBUFS) ", " E(EISCONN) ", " E(ENOTCONN) ", "
    E(ETIMEDOUT) ", " E(ECONNREFUSED) ", " E(EHOSTUNREACH) ", " E(EALREADY) ", "
    E(EINPROGRESS) ", " E(ESTALE) ", " E(EDQUOT) ", " E(ECANCELED) ", " E(EOWNERDEAD) ", "
    E(ENOTRECOVERABLE) "}";

/* trace_event_set_t: the filter in force (the set of event types filtered out). */
#define EVENTSET "eventset[" TL_STR(TL_SYSTEM_EVENTSET_WORDS) "]"

static const char *const schemas[] = {
    NULL,
    error_schema,                                                 /* 1 POSIX_TRACE_ERROR */
    EVENTSET " event_filter",                                     /* 2 POSIX_TRACE_START */
    "enum32 auto {MANUAL=0, AUTOMATIC=1}",                        /* 3 POSIX_TRACE_STOP: int, 0 = posix_trace_stop() */
    "",                                                           /* 4 POSIX_TRACE_OVERFLOW: no data */
    "",                                                           /* 5 POSIX_TRACE_RESUME: no data */
    EVENTSET " old_event_filter; " EVENTSET " new_event_filter", /* 6 POSIX_TRACE_FILTER */
    "",                                                           /* 7 POSIX_TRACE_FLUSH_START */
    "",                                                           /* 8 POSIX_TRACE_FLUSH_STOP */
    /* 9 tracelog_process_end: a controller's log, how the traced process ended */
    "enum32 how {UNKNOWN=0, EXITED=1, SIGNALED=2, DUMPED=3}; i32 code",
};

const char *tl_system_event_schema(uint32_t id)
{
    return id >= 1 && id < sizeof schemas / sizeof *schemas ? schemas[id] : NULL;
}
