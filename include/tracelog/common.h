/*
 * tracelog/common.h - versions, status codes and error details shared by
 * every part of the tracelog native API.
 *
 * Thread safety: everything declared here is pure (no global mutable state)
 * and may be called from any thread.
 */
#ifndef TRACELOG_COMMON_H
#define TRACELOG_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TRACELOG_STATIC_DEFINE)
#define TRACELOG_API
#elif defined(__GNUC__)
#define TRACELOG_API __attribute__((visibility("default")))
#else
#define TRACELOG_API
#endif

/* Library version (the .ptl format has its own version, see TRACELOG_FORMAT_*). */
#define TRACELOG_VERSION_MAJOR 0
#define TRACELOG_VERSION_MINOR 1
#define TRACELOG_VERSION_PATCH 0
#define TRACELOG_VERSION_NUMBER \
    (TRACELOG_VERSION_MAJOR * 10000 + TRACELOG_VERSION_MINOR * 100 + TRACELOG_VERSION_PATCH)
#define TRACELOG_VERSION_STRING "0.1.0"

/* Version of the .ptl format this library writes (format-spec/ptl-format.md). */
#define TRACELOG_FORMAT_MAJOR 1
#define TRACELOG_FORMAT_MINOR 2

/* Run-time library version: TRACELOG_VERSION_NUMBER of the library actually linked. */
TRACELOG_API unsigned tracelog_version_number(void);
TRACELOG_API const char *tracelog_version_string(void);

/*
 * Status codes. Values are pinned and never renumbered; new codes are only
 * added at the end. TRACELOG_END is not an error: the iteration is over.
 */
#define TRACELOG_STATUS_MAP(XX)                                                     \
    XX(TRACELOG_OK, 0, "success")                                                   \
    XX(TRACELOG_END, 1, "no more events")                                           \
    XX(TRACELOG_E_IO, 2, "input/output error (see sys_errno)")                      \
    XX(TRACELOG_E_NOMEM, 3, "out of memory")                                        \
    XX(TRACELOG_E_INVAL, 4, "invalid argument")                                     \
    XX(TRACELOG_E_BAD_MAGIC, 5, "not a .ptl log (bad magic)")                       \
    XX(TRACELOG_E_UNSUPPORTED_VERSION, 6, "unsupported format version or feature")  \
    XX(TRACELOG_E_TRUNCATED, 7, "file ends inside a structure")                     \
    XX(TRACELOG_E_CHECKSUM, 8, "checksum mismatch")                                 \
    XX(TRACELOG_E_CORRUPT, 9, "malformed data")                                     \
    XX(TRACELOG_E_LIMIT, 10, "a size or count exceeds a limit")                     \
    XX(TRACELOG_E_LOG_FULL, 11, "log is full")                                      \
    XX(TRACELOG_E_NOT_SEEKABLE, 12, "operation needs a seekable file")              \
    XX(TRACELOG_E_STATE, 13, "handle is in the wrong state for this call")          \
    XX(TRACELOG_E_READ_ONLY, 14, "file needs a newer writer: read-only")

typedef enum tracelog_status {
#define TRACELOG_STATUS_ENUM_(name, value, text) name = value,
    TRACELOG_STATUS_MAP(TRACELOG_STATUS_ENUM_)
#undef TRACELOG_STATUS_ENUM_
} tracelog_status;

/* Static English text for a status; never NULL (unknown codes get a generic text). */
TRACELOG_API const char *tracelog_strerror(tracelog_status status);
/* Static name of a status ("TRACELOG_E_CHECKSUM"); never NULL. */
TRACELOG_API const char *tracelog_status_name(tracelog_status status);

/*
 * Where and why an operation failed. Filled by functions taking a
 * `tracelog_error *` (which may be NULL when the caller does not care).
 *   offset: file offset of the structure at fault, or UINT64_MAX if none.
 *   sys_errno: the errno behind TRACELOG_E_IO, 0 otherwise.
 *   message: one human-readable line, NUL-terminated.
 */
typedef struct tracelog_error {
    tracelog_status code;
    int sys_errno;
    uint64_t offset;
    char message[160];
} tracelog_error;

/* One recorded event as the native API sees it. */
typedef struct tracelog_event {
    uint64_t timestamp_ns; /* nanoseconds since the Unix epoch (CLOCK_REALTIME scale) */
    uint32_t event_id;     /* id in the log's event-type table */
    uint32_t pid;          /* process id, 0 for events not tied to a process */
    uint32_t kernel_tid;   /* kernel thread id (gettid), 0 if unknown */
    uint64_t tid;          /* thread id (pthread_t value), 0 if none */
    uint64_t address;      /* program address that generated the event */
    uint32_t truncation;   /* TRACELOG_TRUNC_* */
    uint32_t payload_len;  /* bytes at payload */
    const void *payload;   /* borrowed; see the function that produced it */
} tracelog_event;

/* Truncation status of an event (same values as POSIX_TRACE_* in <trace.h>). */
#define TRACELOG_TRUNC_NONE 0
#define TRACELOG_TRUNC_RECORD 1 /* data cut when recorded (longer than max data size) */
#define TRACELOG_TRUNC_READ 2   /* data cut when read (reader buffer too small) */

/* Full policies recorded in a log's metadata. */
typedef enum tracelog_policy {
    TRACELOG_POLICY_LOOP = 1,
    TRACELOG_POLICY_UNTIL_FULL = 2,
    TRACELOG_POLICY_FLUSH = 3,  /* stream full policy only */
    TRACELOG_POLICY_APPEND = 4  /* log full policy only */
} tracelog_policy;

/*
 * The name of a policy as logs and ptlog spell it: "loop", "until_full",
 * "flush", "append"; NULL for a value that is not a policy. Thread-safe; the
 * string is static.
 */
TRACELOG_API const char *tracelog_policy_name(tracelog_policy policy);

/*
 * The policy a name of tracelog_policy_name stands for: sets *policy and
 * returns TRACELOG_OK, or returns TRACELOG_E_INVAL for any other text (the
 * match is exact) or a NULL argument. Thread-safe.
 */
TRACELOG_API tracelog_status tracelog_policy_parse(const char *name, tracelog_policy *policy);

#ifdef __cplusplus
}
#endif
#endif
