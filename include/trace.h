/*
 * <trace.h> - the POSIX tracing interface (IEEE Std 1003.1-2008, XSH 2.11),
 * with the Trace, Trace Event Filter, Trace Log and Trace Inherit options,
 * implemented in user space by tracelog.
 *
 * Conventions (as the standard says): every int function returns 0 on
 * success or an error number; errno is not used. posix_trace_event() is
 * void, async-signal-safe, thread-safe and lock-free; when the calling
 * thread's buffer of a FLUSH stream is full, it waits up to 100 ms for the
 * flusher to make room before it loses the event (<tracelog/posix.h>,
 * tracelog_trace_attr_setflushwait: 0 never waits).
 *
 * Choices where the standard is silent or ambiguous (the P-numbers refer to
 * section 16 of the project's POSIX reference; tests/test_posix_*.c test them):
 *  P1  Option macros: glibc defines _POSIX_TRACE* as -1 in <unistd.h>. This
 *      header includes <unistd.h> first and redefines them to 200809L, so the
 *      result is the same whatever the include order. glibc's sysconf() still
 *      answers -1; tracelog_sysconf() (<tracelog/posix.h>) answers for us.
 *  P5  Name limits. TRACE_EVENT_NAME_MAX counts characters without the NUL,
 *      as <limits.h> limits do (Issue 7): posix_trace_eventid_open() takes
 *      names of up to TRACE_EVENT_NAME_MAX characters (ENAMETOOLONG beyond),
 *      so posix_trace_eventid_get_name() needs TRACE_EVENT_NAME_MAX + 1
 *      bytes for the longest; a name of fewer characters fits the
 *      standard's examples' char[TRACE_EVENT_NAME_MAX]. Trace names and
 *      generation versions fit TRACE_NAME_MAX bytes with the NUL:
 *      posix_trace_attr_setname() truncates to TRACE_NAME_MAX - 1.
 *  P8  posix_trace_getnext_event and timedgetnext on an active stream fail
 *      with EINTR if and only if a signal handler ran on the calling thread
 *      while it waited (that is, after it found nothing to read), whatever
 *      SA_RESTART says. While it waits, the thread's asynchronous signals
 *      are blocked and let through at least every 10 ms, so the handler of
 *      a signal sent to the thread runs, and the call returns EINTR, within
 *      about 10 ms; a signal sent to the process may meanwhile go to another
 *      thread. The thread's signal mask is the caller's again on return.
 *  P9  A stream with log belongs to its log: the getnext functions return
 *      EINVAL on it; read the log (posix_trace_open) instead.
 *  P10 posix_trace_shutdown of a stream without log succeeds. A failed final
 *      flush still frees everything and returns the error.
 *  P11 "Full" in posix_trace_start/stop means an UNTIL_FULL stream that
 *      stopped itself; a LOOP stream is always stopped by posix_trace_stop.
 *  P12 UNTIL_FULL marks its loss with STOP (data 1) and START; LOOP and
 *      FLUSH mark theirs with OVERFLOW and RESUME. A FLUSH stream never
 *      stops itself: when its log cannot keep up (a pipe nobody reads), it
 *      stays RUNNING, reports FULL while a thread's buffer is full, and
 *      counts what it loses as overruns.
 *  P13 OVERFLOW/RESUME are made by the reader from counters kept per thread
 *      buffer, so they never need room in a full stream.
 *  P15 An UNTIL_FULL log that fills up gets POSIX_TRACE_STOP (data 1) as its
 *      last event; the stream keeps running; later events are log overruns.
 *  P16 posix_trace_clear empties the stream and never destroys what was
 *      already written to the log, whatever the log policy: a LOOP or
 *      UNTIL_FULL log that was full stays so (posix_log_full_status FULL;
 *      an UNTIL_FULL log takes no more events). It also empties the filter,
 *      as the standard's "as if it were returning from posix_trace_create()"
 *      says; a filter that was not empty changes as posix_trace_set_filter
 *      changes it, with a FILTER event while the stream runs.
 *  P17 posix_trace_flush is synchronous. FLUSH_START is recorded before the
 *      flush and goes out with it; FLUSH_STOP is recorded after it and goes
 *      out with the next flush (or at shutdown). The background flusher of
 *      the FLUSH policy and the flush inside shutdown record neither.
 *  P18 A fresh attribute object reports stream full policy LOOP; a stream
 *      created with a log and no explicit policy uses FLUSH.
 *  P19 The filter applies to events recorded with posix_trace_event(); the
 *      system events the library records itself are never filtered out.
 *  P20 POSIX_TRACE_WOPID_EVENTS is empty: tracelog defines no system events
 *      of its own. ALL_EVENTS covers the whole id space.
 *  P21 A trace_id_t is a slot and a generation, never a pointer: stale,
 *      foreign or garbage ids get EINVAL. A forked child gets EINVAL for its
 *      parent's ids.
 *  P22 Streams are shut down at exit(). exec functions called from code that
 *      includes this header write every log out with a trailer first.
 *      A process that dies by SIGSEGV, SIGBUS, SIGABRT, SIGFPE or SIGILL
 *      first writes what its streams with log hold to the logs, then dies
 *      by the same signal (<tracelog/posix.h>). The window that remains:
 *      an end that runs no handler (_exit, SIGKILL, the OOM killer, a
 *      signal whose default action ends the process without a handler of
 *      the program's, such as SIGTERM) loses, with the FLUSH policy, the
 *      events of about the last flush interval (100 ms by default,
 *      tracelog_trace_attr_setflushinterval), and with LOOP and UNTIL_FULL
 *      everything recorded since the last posix_trace_flush; a crash
 *      handler that cannot write (a log another thread keeps locked for
 *      more than 500 ms, writing that hangs for 2 s, a fault while writing)
 *      loses what it could not write; a machine crash loses what was not
 *      synced (tracelog_trace_sync).
 *  P23 TRACE_SYS_MAX (48) is enforced per user, not "in the system": the
 *      active streams (posix_trace_create*, with any pid) that all
 *      processes of one effective uid hold at once, counted in the
 *      4 KiB table /dev/shm/tracelog.<euid>.streams (a system-wide table
 *      would let any user fill it and deny tracing to everyone else).
 *      posix_trace_create* fails with EAGAIN when the user's processes
 *      hold TRACE_SYS_MAX streams; a process that died holding streams
 *      (kill -9) gives them back at the next create, a program that called
 *      an exec function at its new image's first create. The environment
 *      variable TRACELOG_STREAMS_TABLE=TAG (1 to 32 letters, digits, '_'
 *      or '-') makes a process count in a table of its own,
 *      tracelog.<euid>.streams.<TAG>, shared with the processes given the
 *      same TAG (the test suite gives each test one). If the table cannot
 *      be used (squatted by another user), the limit is per process.
 *      Pre-recorded streams (posix_trace_open) are not counted: a process
 *      holds up to 207 open besides its active streams (then posix_trace_open
 *      fails with EAGAIN), and they never keep it from creating one. A process
 *      can in addition record into up to 8 streams controllers announced to it
 *      (docs/design/cross-process.md: the rendezvous costs an untraced
 *      process one failed open() at load; an instrumented one makes a
 *      4 KiB control object /dev/shm/tracelog.<euid>.<pid> at its first
 *      posix_trace_eventid_open, and its event-name map becomes
 *      /dev/shm/tracelog.<euid>.<pid>.names). posix_trace_create and
 *      posix_trace_create_withlog with the pid of another process trace
 *      that process: the stream is a shared buffer the controller makes
 *      and the traced process maps at its next trace call; every control
 *      call works from the controller, and names the traced process opens
 *      have the same ids on both sides. Errors: ESRCH if no such process
 *      runs (or it is a zombie); EPERM unless the caller has CAP_SYS_PTRACE
 *      or its effective uid and gid equal the target's real, effective and
 *      saved uids and gids (the credential part of the kernel's ptrace
 *      check: stricter than kill(pid, 0), which lets a user signal a setuid
 *      program it started); ENOTSUP, at once, if the process runs no
 *      libtracelog or has not called posix_trace_eventid_open yet (except
 *      a child of the caller: the controller prepares its control object,
 *      so a controller may fork, exec and trace at once); ENOSYS on a
 *      kernel without pidfd_open (before 5.3). With a log, the controller
 *      writes it, and the log describes the traced process: its METADATA
 *      process is that process's pid and executable (/proc/<pid>/exe), and
 *      a trace the caller did not name is named after it (its argv[0]'s
 *      last part, else its command name); for a child of the caller that
 *      still runs the caller's own image (traced before its exec), the
 *      log's first blocks are written once it has exec'd, taken the stream
 *      up or ended, or at the first flush, sync or shutdown (nothing is
 *      drained before). tracelog_trace_get_stats says whether the process
 *      took the stream up (TRACELOG_STATS_JOINED). When the traced process
 *      ends, the controller drains what it recorded and writes one event
 *      "tracelog_process_end" (id 9; data
 *      int32 how: 1 exited, 2 killed by a signal, 3 killed with a core
 *      dump, 0 unknown; int32 code: the exit status or the signal), and the
 *      stream is SUSPENDED until shut down. With the FLUSH policy the
 *      controller's flusher does this within a few ms; with the others at
 *      once, too (a thread of the controller waits for the end); then
 *      the log gets a trailer at once (it reads back complete before the
 *      shutdown, which writes the final one). Without a log, the same
 *      event is read with the getnext functions after every event the
 *      process recorded, and the stream is SUSPENDED: a reader blocked in
 *      posix_trace_getnext_event or timedgetnext gets it within about
 *      10 ms of the end; afterwards the stream is an active stream with no
 *      event, as the standard has it: getnext blocks (until a signal,
 *      EINTR, or a shutdown, EINVAL), timedgetnext times out, trygetnext
 *      sets *unavailable. A record the process died in the middle of is
 *      counted lost (OVERFLOW, and RESUME if its thread's buffer holds
 *      later events) before the end. A traced process that shrinks its
 *      stream buffer (ftruncate on the /dev/shm object it holds) cannot
 *      crash its controller: the lost pages end the stream as if the
 *      process had ended, its buffered events counted lost (one overrun;
 *      how many it held cannot be known). A log ends with
 *      POSIX_TRACE_OVERFLOW and POSIX_TRACE_ERROR (data: int EFAULT), the
 *      flush that found the loss (posix_trace_flush, or the next
 *      posix_trace_get_status for the flusher's) reports EFAULT, and the
 *      log gets its trailer; without a log, the reads return the events
 *      read before, then OVERFLOW and "tracelog_process_end" (how 0,
 *      unknown). The controller's SIGBUS handler for this is installed at
 *      its first posix_trace_create with a pid and passes every other
 *      SIGBUS on; it watches at most 64 mappings per process, and a
 *      posix_trace_create with a pid beyond that fails with EAGAIN. If
 *      the controller dies, the
 *      traced process goes on (its events are dropped and counted) and a
 *      later controller can trace it again. A child sharing its parent's
 *      name map through an inherited stream is seen by a controller of its
 *      own with its names and ids (those of the parent's map). Inheritance
 *      follows fork() and posix_spawn()/posix_spawnp() (see below; a
 *      process started by an exec function after fork() inherits only
 *      through a controller tracing it).
 *  P24 Events are read back in timestamp order; timestamps come from
 *      CLOCK_MONOTONIC plus the CLOCK_REALTIME offset measured when the
 *      stream was created, so they never go backwards within a stream and
 *      convert to CLOCK_REALTIME nanoseconds. Order is exact: the reader
 *      waits for a thread that has read the clock but not yet stored its
 *      event (at most 200 ms per read; a record still not stored a second
 *      later, its thread must have died, is counted lost: OVERFLOW and
 *      RESUME; in a controller, at once when the traced process ended).
 *  P29 The log descriptor is duplicated (close-on-exec) and never closed.
 *      SIGXFSZ is blocked while the library writes (create_withlog, every
 *      flush, shutdown), so exceeding RLIMIT_FSIZE gives EFBIG instead of
 *      killing the process. A write error (EFBIG, ENOSPC, EIO) stops the log
 *      where it is: it is reported once, by posix_stream_flush_error and one
 *      POSIX_TRACE_ERROR event; posix_trace_flush and shutdown return it
 *      from then on; the stream keeps running and what the log holds stays
 *      readable. create_withlog returns it when the header cannot be written
 *      (ENOSPC on a full device such as /dev/full).
 *  P30 posix_trace_open returns EINVAL for anything that is not a readable
 *      .ptl log, including a bad descriptor.
 *  P36 Thread cancellation (XSH 2.9.5.2: most trace functions may be
 *      cancellation points). A trace function acts on a pending
 *      cancellation on the way in, before it takes anything, and is no
 *      cancellation point after that: a thread cancelled in one leaves no
 *      lock or handle behind, and shutdown, close and exit() finish. The
 *      getnext functions on an active stream are cancellation points while
 *      they wait too (acted upon within about 10 ms). getnext on a log read
 *      from a pipe, waiting for the writer's next bytes, is not: it returns
 *      once the writer writes or closes its end. Two threads shutting down
 *      (or closing) one handle at once: one returns 0, the other EINVAL.
 *  P38 A NULL data buffer is never written: the event is reported with
 *      TRUNCATED_READ and *data_len 0.
 */
#ifndef TRACELOG_TRACE_H
#define TRACELOG_TRACE_H

#include <pthread.h> /* pthread_t, declared here whatever the feature macros (-std=c11 has none) */
#include <spawn.h> /* before the posix_spawn macros below */
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h> /* first, so that the option macros below win */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Options ------------------------------------------------------------ */
#undef _POSIX_TRACE
#undef _POSIX_TRACE_EVENT_FILTER
#undef _POSIX_TRACE_LOG
#undef _POSIX_TRACE_INHERIT
#define _POSIX_TRACE 200809L
#define _POSIX_TRACE_EVENT_FILTER 200809L
#define _POSIX_TRACE_LOG 200809L
#define _POSIX_TRACE_INHERIT 200809L

/* ---- Limits ------------------------------------------------------------- */
#define _POSIX_TRACE_EVENT_NAME_MAX 30
#define _POSIX_TRACE_NAME_MAX 8
#define _POSIX_TRACE_SYS_MAX 8
#define _POSIX_TRACE_USER_EVENT_MAX 32
#ifndef TRACE_EVENT_NAME_MAX
#define TRACE_EVENT_NAME_MAX 128
#endif
#ifndef TRACE_NAME_MAX
#define TRACE_NAME_MAX 64
#endif
#ifndef TRACE_SYS_MAX
#define TRACE_SYS_MAX 48 /* streams the processes of one user create (P23; 8 more per process: those controllers trace it into) */
#endif
#ifndef TRACE_USER_EVENT_MAX
#define TRACE_USER_EVENT_MAX 1024 /* counts POSIX_TRACE_UNNAMED_USEREVENT */
#endif

/* ---- Types --------------------------------------------------------------- */
typedef unsigned int trace_id_t;       /* handle: slot and generation; 0 is never valid */
typedef unsigned int trace_event_id_t;

/* Event ids: system events below 32, user events from 32. */
#define __TRACELOG_USER_EVENT_BASE 32u
#define __TRACELOG_EVENT_ID_LIMIT (__TRACELOG_USER_EVENT_BASE + TRACE_USER_EVENT_MAX)

/* A set of event ids: a plain bitmap, assignable, no pointers inside. */
typedef struct {
    unsigned long long __bits[(__TRACELOG_EVENT_ID_LIMIT + 63) / 64];
} trace_event_set_t;

/* Stream attributes: a plain value (copying it is allowed, though POSIX does not require it). */
typedef struct {
    unsigned int __magic; /* set by posix_trace_attr_init */
    char __name[TRACE_NAME_MAX];
    char __genversion[TRACE_NAME_MAX];
    struct timespec __create_time;
    struct timespec __clock_res;
    size_t __max_data_size;
    size_t __stream_size;
    size_t __log_size;
    int __stream_policy;  /* 0: default (LOOP without log, FLUSH with log) */
    int __log_policy;
    int __inheritance;
    unsigned int __flush_interval_ms; /* 0: default (tracelog_trace_attr_setflushinterval) */
    int __flush_wait_us;              /* 0: default, -1: never wait, else µs (tracelog_trace_attr_setflushwait) */
    int __reserved[6];
} trace_attr_t;

struct posix_trace_event_info {
    trace_event_id_t posix_event_id;
    pid_t posix_pid;
    void *posix_prog_address;
    pthread_t posix_thread_id;
    struct timespec posix_timestamp;
    int posix_truncation_status;
};

struct posix_trace_status_info {
    int posix_stream_status;
    int posix_stream_full_status;
    int posix_stream_overrun_status;
    int posix_stream_flush_status;
    int posix_stream_flush_error;
    int posix_log_overrun_status;
    int posix_log_full_status;
};

/* ---- Constants ------------------------------------------------------------ */
#define POSIX_TRACE_SUSPENDED 0
#define POSIX_TRACE_RUNNING 1
#define POSIX_TRACE_NOT_FULL 0
#define POSIX_TRACE_FULL 1
#define POSIX_TRACE_NO_OVERRUN 0
#define POSIX_TRACE_OVERRUN 1
#define POSIX_TRACE_NOT_FLUSHING 0
#define POSIX_TRACE_FLUSHING 1

#define POSIX_TRACE_LOOP 1
#define POSIX_TRACE_UNTIL_FULL 2
#define POSIX_TRACE_FLUSH 3
#define POSIX_TRACE_APPEND 4

#define POSIX_TRACE_CLOSE_FOR_CHILD 0
#define POSIX_TRACE_INHERITED 1

#define POSIX_TRACE_NOT_TRUNCATED 0
#define POSIX_TRACE_TRUNCATED_RECORD 1
#define POSIX_TRACE_TRUNCATED_READ 2

#define POSIX_TRACE_WOPID_EVENTS 1
#define POSIX_TRACE_SYSTEM_EVENTS 2
#define POSIX_TRACE_ALL_EVENTS 3

#define POSIX_TRACE_SET_EVENTSET 1
#define POSIX_TRACE_ADD_EVENTSET 2
#define POSIX_TRACE_SUB_EVENTSET 3

/* System event types (names: "posix_trace_error", "posix_trace_start", ...). */
#define POSIX_TRACE_ERROR ((trace_event_id_t)1)
#define POSIX_TRACE_START ((trace_event_id_t)2)
#define POSIX_TRACE_STOP ((trace_event_id_t)3)
#define POSIX_TRACE_OVERFLOW ((trace_event_id_t)4)
#define POSIX_TRACE_RESUME ((trace_event_id_t)5)
#define POSIX_TRACE_FILTER ((trace_event_id_t)6)
#define POSIX_TRACE_FLUSH_START ((trace_event_id_t)7)
#define POSIX_TRACE_FLUSH_STOP ((trace_event_id_t)8)
/* Both spellings used by the standard, same value. */
#define POSIX_TRACE_UNNAMED_USEREVENT ((trace_event_id_t)__TRACELOG_USER_EVENT_BASE)
#define POSIX_TRACE_UNNAMED_USER_EVENT POSIX_TRACE_UNNAMED_USEREVENT

/* ---- Functions -------------------------------------------------------------- */
#if defined(__GNUC__)
#define __TRACELOG_API __attribute__((visibility("default")))
#else
#define __TRACELOG_API
#endif

__TRACELOG_API int posix_trace_attr_init(trace_attr_t *attr);
__TRACELOG_API int posix_trace_attr_destroy(trace_attr_t *attr);
__TRACELOG_API int posix_trace_attr_getclockres(const trace_attr_t *attr, struct timespec *resolution);
__TRACELOG_API int posix_trace_attr_getcreatetime(const trace_attr_t *attr, struct timespec *createtime);
__TRACELOG_API int posix_trace_attr_getgenversion(const trace_attr_t *attr, char *genversion);
__TRACELOG_API int posix_trace_attr_getname(const trace_attr_t *attr, char *tracename);
__TRACELOG_API int posix_trace_attr_setname(trace_attr_t *attr, const char *tracename);
__TRACELOG_API int posix_trace_attr_getinherited(const trace_attr_t *__restrict attr, int *__restrict inheritancepolicy);
__TRACELOG_API int posix_trace_attr_setinherited(trace_attr_t *attr, int inheritancepolicy);
__TRACELOG_API int posix_trace_attr_getlogfullpolicy(const trace_attr_t *__restrict attr, int *__restrict logpolicy);
__TRACELOG_API int posix_trace_attr_setlogfullpolicy(trace_attr_t *attr, int logpolicy);
__TRACELOG_API int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *__restrict attr, int *__restrict streampolicy);
__TRACELOG_API int posix_trace_attr_setstreamfullpolicy(trace_attr_t *attr, int streampolicy);
__TRACELOG_API int posix_trace_attr_getlogsize(const trace_attr_t *__restrict attr, size_t *__restrict logsize);
__TRACELOG_API int posix_trace_attr_setlogsize(trace_attr_t *attr, size_t logsize);
__TRACELOG_API int posix_trace_attr_getmaxdatasize(const trace_attr_t *__restrict attr, size_t *__restrict maxdatasize);
__TRACELOG_API int posix_trace_attr_setmaxdatasize(trace_attr_t *attr, size_t maxdatasize);
__TRACELOG_API int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *__restrict attr, size_t *__restrict eventsize);
__TRACELOG_API int posix_trace_attr_getmaxusereventsize(const trace_attr_t *__restrict attr, size_t data_len,
                                                        size_t *__restrict eventsize);
__TRACELOG_API int posix_trace_attr_getstreamsize(const trace_attr_t *__restrict attr, size_t *__restrict streamsize);
__TRACELOG_API int posix_trace_attr_setstreamsize(trace_attr_t *attr, size_t streamsize);

__TRACELOG_API int posix_trace_create(pid_t pid, const trace_attr_t *__restrict attr, trace_id_t *__restrict trid);
__TRACELOG_API int posix_trace_create_withlog(pid_t pid, const trace_attr_t *__restrict attr, int file_desc,
                                              trace_id_t *__restrict trid);
__TRACELOG_API int posix_trace_flush(trace_id_t trid);
__TRACELOG_API int posix_trace_shutdown(trace_id_t trid);
__TRACELOG_API int posix_trace_start(trace_id_t trid);
__TRACELOG_API int posix_trace_stop(trace_id_t trid);
__TRACELOG_API int posix_trace_clear(trace_id_t trid);
__TRACELOG_API int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr);
__TRACELOG_API int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *statusinfo);

__TRACELOG_API void posix_trace_event(trace_event_id_t event_id, const void *__restrict data_ptr, size_t data_len);

/*
 * posix_trace_event(id, data, len) in code that includes this header is an
 * inline test before the call: an event nothing can record (no stream, every
 * stream stopped, or the id filtered out by every stream) costs a few loads
 * and a branch in the caller, not a call into the library. The function
 * itself is unchanged: its address, (posix_trace_event)(...), #undef and
 * dlsym reach it, programs built with an older header call it every time,
 * and both decide alike. Each argument is evaluated exactly once. Like the
 * function, the test is thread-safe and async-signal-safe (it only loads).
 * With GCC and clang only (other compilers call the function); a program
 * built with it needs a libtracelog that exports tracelog_event_gate.
 * Define TRACELOG_NO_INLINE_EVENT before including <trace.h> to call the
 * function every time.
 *
 * tracelog_event_gate is what the test reads; the library owns it (it is
 * constant; the memory it points to changes under the program): the
 * process's event word (0: nothing can record, no controller's request and
 * no stream being taken up), the bits of the word that make the summary
 * insufficient (then the library decides), and the summary: bit id % 64 of
 * wanted[(id / 64) & mask] is 0 when no stream of this process would record
 * id (an id the library does not have lands on some bit: either answer is
 * right, the function never records it). Pointers rather than the words
 * themselves: the word is a page a controller maps, which a copy
 * relocation would move into the program.
 */
struct __tracelog_event_gate {
    const unsigned long long *__word;
    const unsigned long long *__wanted;
    unsigned long long __skip;
    unsigned int __mask;
};
extern __TRACELOG_API const struct __tracelog_event_gate tracelog_event_gate;

#if defined(__GNUC__) && !defined(TRACELOG_NO_INLINE_EVENT)
/* Always inline, also at -O0: the library records its caller's address as posix_prog_address. */
__attribute__((always_inline)) static inline void __tracelog_posix_trace_event(trace_event_id_t __id,
                                                                               const void *__restrict __data,
                                                                               size_t __len)
{
    const struct __tracelog_event_gate *__g = &tracelog_event_gate;
    unsigned long long __w = __atomic_load_n(__g->__word, __ATOMIC_RELAXED);
    if (__w != 0) {
        unsigned long long __bits = __atomic_load_n(&__g->__wanted[(__id / 64) & __g->__mask], __ATOMIC_RELAXED);
        if (__builtin_expect((__w & __g->__skip) != 0 || (__bits >> (__id % 64) & 1), 0))
            posix_trace_event(__id, __data, __len);
    }
}
#define posix_trace_event(event_id, data_ptr, data_len) __tracelog_posix_trace_event(event_id, data_ptr, data_len)
#endif
__TRACELOG_API int posix_trace_eventid_open(const char *__restrict event_name, trace_event_id_t *__restrict event_id);
__TRACELOG_API int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t event1, trace_event_id_t event2);
__TRACELOG_API int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t event, char *event_name);
__TRACELOG_API int posix_trace_trid_eventid_open(trace_id_t trid, const char *__restrict event_name,
                                                 trace_event_id_t *__restrict event);
__TRACELOG_API int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *__restrict event,
                                                        int *__restrict unavailable);
__TRACELOG_API int posix_trace_eventtypelist_rewind(trace_id_t trid);

__TRACELOG_API int posix_trace_eventset_empty(trace_event_set_t *set);
__TRACELOG_API int posix_trace_eventset_fill(trace_event_set_t *set, int what);
__TRACELOG_API int posix_trace_eventset_add(trace_event_id_t event_id, trace_event_set_t *set);
__TRACELOG_API int posix_trace_eventset_del(trace_event_id_t event_id, trace_event_set_t *set);
__TRACELOG_API int posix_trace_eventset_ismember(trace_event_id_t event_id, const trace_event_set_t *__restrict set,
                                                 int *__restrict ismember);
__TRACELOG_API int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set);
__TRACELOG_API int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how);

__TRACELOG_API int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *__restrict event,
                                             void *__restrict data, size_t num_bytes, size_t *__restrict data_len,
                                             int *__restrict unavailable);
__TRACELOG_API int posix_trace_timedgetnext_event(trace_id_t trid, struct posix_trace_event_info *__restrict event,
                                                  void *__restrict data, size_t num_bytes,
                                                  size_t *__restrict data_len, int *__restrict unavailable,
                                                  const struct timespec *__restrict abstime);
__TRACELOG_API int posix_trace_trygetnext_event(trace_id_t trid, struct posix_trace_event_info *__restrict event,
                                                void *__restrict data, size_t num_bytes,
                                                size_t *__restrict data_len, int *__restrict unavailable);

__TRACELOG_API int posix_trace_open(int file_desc, trace_id_t *trid);
__TRACELOG_API int posix_trace_rewind(trace_id_t trid);
__TRACELOG_API int posix_trace_close(trace_id_t trid);

/*
 * exec: POSIX shuts a process's streams down when it calls an exec function.
 * Calls made from code that includes this header first stop every running
 * stream with a log (POSIX_TRACE_STOP) and write its log out with a trailer;
 * if exec fails, tracelog_exec_returned() starts them again and returns the
 * exec function's result. Not async-signal-safe (unlike exec itself): define
 * TRACELOG_NO_EXEC_HOOK before including <trace.h> to call the exec
 * functions directly.
 */
__TRACELOG_API int tracelog_prepare_exec(void);
__TRACELOG_API int tracelog_exec_returned(int result);
#ifndef TRACELOG_NO_EXEC_HOOK
#define __TRACELOG_EXEC(call) tracelog_exec_returned((tracelog_prepare_exec(), call))
#define execl(...) __TRACELOG_EXEC(execl(__VA_ARGS__))
#define execle(...) __TRACELOG_EXEC(execle(__VA_ARGS__))
#define execlp(...) __TRACELOG_EXEC(execlp(__VA_ARGS__))
#define execv(...) __TRACELOG_EXEC(execv(__VA_ARGS__))
#define execve(...) __TRACELOG_EXEC(execve(__VA_ARGS__))
#define execvp(...) __TRACELOG_EXEC(execvp(__VA_ARGS__))
#define fexecve(...) __TRACELOG_EXEC(fexecve(__VA_ARGS__))
#ifdef _GNU_SOURCE
#define execvpe(...) __TRACELOG_EXEC(execvpe(__VA_ARGS__))
#endif
#endif

/*
 * posix_spawn and posix_spawnp: "after a fork() or spawn() operation, if
 * the parent is being traced, its child shall be concurrently traced using
 * the same trace stream" (POSIX_TRACE_INHERITED). Calls made from code that
 * includes this header go through these functions: while the process has a
 * stream created with POSIX_TRACE_INHERITED, the child gets the variables
 * TRACELOG_STREAM (the stream's shared buffer) and TRACELOG_NAMES (the
 * parent's event-name map) in a copy of envp, and the library, at load in
 * the child (a program linked with libtracelog), records into that stream
 * with the parent's ids from its first event. Without such a stream they
 * are posix_spawn and posix_spawnp. Same arguments, results and errors
 * (ENOMEM if the environment cannot be copied). Thread-safe; define
 * TRACELOG_NO_SPAWN_HOOK before including <trace.h> to call the standard
 * functions directly.
 */
__TRACELOG_API int tracelog_posix_spawn(pid_t *__restrict pid, const char *__restrict path,
                                        const posix_spawn_file_actions_t *file_actions,
                                        const posix_spawnattr_t *__restrict attrp, char *const argv[],
                                        char *const envp[]);
__TRACELOG_API int tracelog_posix_spawnp(pid_t *__restrict pid, const char *__restrict file,
                                         const posix_spawn_file_actions_t *file_actions,
                                         const posix_spawnattr_t *__restrict attrp, char *const argv[],
                                         char *const envp[]);
#ifndef TRACELOG_NO_SPAWN_HOOK
#define posix_spawn(...) tracelog_posix_spawn(__VA_ARGS__)
#define posix_spawnp(...) tracelog_posix_spawnp(__VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
