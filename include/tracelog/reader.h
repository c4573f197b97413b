/*
 * tracelog/reader.h - read .ptl logs, including logs cut short by a crash,
 * damaged logs, LOOP (ring) logs and logs streamed through a pipe.
 *
 * The reader never trusts the file: every length is checked against the
 * limits in tracelog_reader_options before anything is allocated, every block's
 * checksums are verified, and damage is skipped (resynchronising at the next
 * valid block) and reported as problems with file offsets. It never needs
 * writer code.
 *
 * Thread safety: a tracelog_reader is not thread-safe; different readers are
 * independent (several may read the same file).
 */
#ifndef TRACELOG_READER_H
#define TRACELOG_READER_H

#include "tracelog/log.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracelog_reader tracelog_reader;

typedef struct tracelog_reader_options {
    uint32_t max_block_size;   /* largest block accepted (default 64 MiB) */
    uint32_t max_chunk_size;   /* largest uncompressed chunk, payloads rebuilt from planes included (default 64 MiB) */
    uint32_t max_event_types;  /* largest event-type table (default 65536) */
    uint32_t max_problems;     /* problems kept in detail; more are only counted (default 1000) */
    uint32_t max_threads;      /* thread definitions kept (format 1.1; default 1,048,576) */
    int ignore_checksums;      /* 1: accept blocks whose checksums fail (salvage, fuzzing) */
} tracelog_reader_options;

TRACELOG_API void tracelog_reader_options_init(tracelog_reader_options *opt);

/*
 * Opens a log on fd, which the caller keeps owning (the reader never closes
 * it; the reader reads with pread on seekable files, so it does not move the
 * file offset). On a seekable file the reader scans block headers at open
 * (no decompression) to build its chunk index; on a pipe it reads forward
 * only, and rewind/seek return TRACELOG_E_NOT_SEEKABLE.
 * opt may be NULL. Errors: TRACELOG_E_BAD_MAGIC, TRACELOG_E_UNSUPPORTED_VERSION,
 * TRACELOG_E_TRUNCATED (no complete header), TRACELOG_E_CHECKSUM (header),
 * TRACELOG_E_CORRUPT (header size or ring geometry invalid), TRACELOG_E_NOT_SEEKABLE
 * (a LOOP log on a pipe), TRACELOG_E_IO, TRACELOG_E_NOMEM, TRACELOG_E_INVAL.
 * Damage after the header is not an open error.
 */
TRACELOG_API tracelog_status tracelog_reader_open(int fd, const tracelog_reader_options *opt,
                                tracelog_reader **out, tracelog_error *err);

/*
 * Where tracelog_reader_open_read gets the log's bytes: reads up to n bytes
 * into buf and returns how many, 0 at the end of the data, or -1 with errno
 * set (on EINTR the reader calls again; other errors end reading with
 * TRACELOG_E_IO). It is called from the reader's functions only, on the
 * caller's thread.
 */
typedef long (*tracelog_read_fn)(void *ctx, void *buf, size_t n);

/*
 * Opens a log whose bytes come from read(ctx, ...), forward only, as from a
 * pipe (for example bytes the caller already read to detect the format,
 * then the rest of a pipe, with no thread or extra pipe in between).
 * rewind/seek return TRACELOG_E_NOT_SEEKABLE, and a LOOP log is refused with
 * it. The reader keeps ctx until tracelog_reader_close and never frees it.
 * Errors as tracelog_reader_open; TRACELOG_E_INVAL for a NULL read or out.
 */
TRACELOG_API tracelog_status tracelog_reader_open_read(tracelog_read_fn read, void *ctx,
                                                       const tracelog_reader_options *opt,
                                                       tracelog_reader **out, tracelog_error *err);

/*
 * Following a log while its writer appends to it (tail -f; format-spec 8.7).
 *
 * tracelog_reader_open_follow opens the regular file fd (kept by the caller,
 * as with tracelog_reader_open; never written to, never locked: the writer
 * is not slowed) and reads it forward as a stream, block by block as the
 * writer completes them, with memory bounded by the largest block as on a
 * pipe. The file must hold at least its header (TRACELOG_E_TRUNCATED
 * otherwise: open again once the writer wrote it). rewind and seek return
 * TRACELOG_E_NOT_SEEKABLE; a LOOP (ring) log is refused with it (its writer
 * overwrites it in place: open it again with tracelog_reader_open each time
 * it changes, keeping the events newer than the last one read, as ptlog dump
 * --follow does); a pipe or other file
 * that is not regular too (a pipe is already read as it arrives, with
 * tracelog_reader_open). Errors otherwise as tracelog_reader_open.
 *
 * While following, tracelog_reader_next returns TRACELOG_END when no
 * complete event is available yet: a block the writer has not finished is
 * "not yet", never damage; call tracelog_reader_follow_wait, then next
 * again. Damage that complete blocks show (a checksum that fails, bytes
 * that are no block, followed by a valid block) is reported as on any log.
 * Metadata, event types and thread definitions arrive as their blocks do.
 *
 * The reader cannot know that the writer is done: the caller decides.
 * tracelog_reader_get_info's `closed` is 1 while the newest block read is
 * the trailer (the writer closed the log; a trailer written before an exec
 * is followed by more blocks), and the log's metadata names the process
 * (pid) whose trace it is. Then tracelog_reader_follow_stop says no more
 * data will come: the rest of the file is read as the end of a log (a
 * block cut short is reported as TORN_TAIL, a log without metadata as
 * NO_METADATA) and next returns TRACELOG_END at the end for good.
 *
 * tracelog_reader_follow_wait waits until the file has grown past what the
 * reader has seen, at most timeout_ms (it polls the file's size every 10
 * ms). TRACELOG_OK: more data, call next; TRACELOG_END: none came in time,
 * or a signal interrupted the wait (so that a SIGINT handler's flag is seen
 * at once); TRACELOG_E_CORRUPT: the file shrank below what was read
 * (recorded as a problem FILE_CHANGED: stop following); TRACELOG_E_IO
 * (fstat failed, errno set); TRACELOG_E_STATE when r is not following or
 * was stopped. Both are called on the thread that reads r, as every call
 * on a reader.
 */
TRACELOG_API tracelog_status tracelog_reader_open_follow(int fd, const tracelog_reader_options *opt,
                                                         tracelog_reader **out, tracelog_error *err);
TRACELOG_API tracelog_status tracelog_reader_follow_wait(tracelog_reader *r, unsigned timeout_ms);
/* TRACELOG_OK; TRACELOG_E_STATE when r was not opened to follow. Stopping twice is harmless. */
TRACELOG_API tracelog_status tracelog_reader_follow_stop(tracelog_reader *r);

/*
 * hold 1: a merge set (format-spec 6.10) that the log's last chunk leaves
 * open (its MERGE_NEXT flag is set: the writer has not written the set's
 * other chunks yet) is held back: reading ends before it (TRACELOG_END)
 * instead of delivering the part written, whose events the chunks still to
 * come may precede. For a log read again as it is written, such as a LOOP
 * log followed (a reader opened to follow holds such a set anyway, until
 * it is stopped). hold 0, the default: the part is delivered, as 6.10 says
 * of a log that ends there. Call it before reading. TRACELOG_OK, or
 * TRACELOG_E_INVAL for a NULL r.
 */
TRACELOG_API tracelog_status tracelog_reader_hold_open_set(tracelog_reader *r, int hold);

/*
 * chunks > 0: r loads the log's next `chunks` chunks (reads them, verifies
 * their checksums, decompresses them, rebuilds their payloads) on as many
 * threads of its own while the caller reads the events of the current one,
 * and the caller, when it would wait for one, loads a later one itself
 * meanwhile; 0, the default: each chunk is loaded on the caller's thread
 * when its first event is due. For a file that does not change while it is
 * read, the events, the problems and their order are the same either way.
 * Each thread has every signal blocked (handlers run on the program's
 * threads). Memory: up to chunks + 1 more chunks held at once, each at most
 * max_chunk_size decoded and max_block_size stored, and a zstd context per
 * thread. It pays when CPUs are free to run the threads: one is enough when
 * the caller does much with each event (formatting it); a caller that does
 * little (filtering) shares the loading with them. It may be changed at
 * any time; a change stops and joins the threads there were. A reader
 * that reads ahead must not be used in a child after fork() (its threads
 * are not there): set 0 before forking. TRACELOG_OK; TRACELOG_E_INVAL for a
 * NULL r or chunks outside 0..TRACELOG_READ_AHEAD_MAX;
 * TRACELOG_E_NOT_SEEKABLE on a pipe or a followed file (read as its bytes
 * come); TRACELOG_E_NOMEM when a thread or its memory could not be had
 * (none is left running: reading goes on without).
 */
#define TRACELOG_READ_AHEAD_MAX 64
TRACELOG_API tracelog_status tracelog_reader_set_read_ahead(tracelog_reader *r, int chunks);

/* Opens path read-only and owns that descriptor. */
TRACELOG_API tracelog_status tracelog_reader_open_path(const char *path, const tracelog_reader_options *opt,
                                     tracelog_reader **out, tracelog_error *err);

/* Frees r (closes the fd only if it was opened by tracelog_reader_open_path). NULL is a no-op. */
TRACELOG_API void tracelog_reader_close(tracelog_reader *r);

/*
 * Next event, oldest first (LOOP logs: from the oldest surviving chunk); the chunks of a
 * merge set (format 1.1) merged by timestamp.
 * Returns TRACELOG_OK and fills *ev, or TRACELOG_END. ev->payload is borrowed: valid until
 * the next call on r. ev->kernel_tid comes from the log's thread definitions
 * (0 when none names the event's thread: logs of format 1.0 have none). Damaged chunks are skipped and recorded as problems;
 * only TRACELOG_E_IO and TRACELOG_E_NOMEM are returned as errors.
 */
TRACELOG_API tracelog_status tracelog_reader_next(tracelog_reader *r, tracelog_event *ev);

/* Back to the oldest event. TRACELOG_E_NOT_SEEKABLE on a pipe. */
TRACELOG_API tracelog_status tracelog_reader_rewind(tracelog_reader *r);

/*
 * Positions r so that the next event is the first whose timestamp is >= ts_ns,
 * using the chunk index (only the merge set holding ts_ns is decoded, from
 * its first chunk). Exact when the events come out in timestamp order,
 * which holds for logs recorded by tracelog; otherwise the next event is
 * the first at or after ts_ns from that set on. TRACELOG_E_NOT_SEEKABLE on a pipe.
 */
TRACELOG_API tracelog_status tracelog_reader_seek_time(tracelog_reader *r, uint64_t ts_ns);

/*
 * Ends the reading early: tracelog_reader_next says TRACELOG_END once the
 * chunks left hold only events at or after ts_ns, and those chunks are
 * neither read nor decoded (their damage is not reported either). Exact
 * whatever the order of the log's timestamps (it goes by each chunk's
 * smallest timestamp, which the reader checks the chunk's events against):
 * every event before ts_ns still comes out, and some at or after it may,
 * from the chunks read; the caller keeps what it wants. A merge set is read
 * whole, so on a log without problems what comes out is the beginning of a
 * whole read. For a window of a
 * large log, with tracelog_reader_seek_time for its start. UINT64_MAX reads
 * to the end again. It holds across rewind and seek_time.
 * TRACELOG_E_NOT_SEEKABLE on a pipe or a followed file (nothing changes).
 */
TRACELOG_API tracelog_status tracelog_reader_set_end_time(tracelog_reader *r, uint64_t ts_ns);

/*
 * Reading a log in ranges, one reader per range (each opened on the same
 * file, on threads of the caller's): r reads the merge sets (format-spec
 * 6.10) whose first chunk, as the chunk headers delimit sets, has an index
 * in [first, end), where the indexes count the chunks of
 * tracelog_reader_info.chunks; then TRACELOG_END. For any
 * 0 = c0 < c1 < ... < ck = info.chunks, the ranges [ci, ci+1) read one after
 * the other give a whole read's events in its order, with their kernel tids
 * and thread names, when no reading reports a problem: a damaged chunk
 * (whose MERGE_NEXT is not trusted) or a set cut at its limits is read
 * whole only by a whole read, so a caller that finds a new problem after a
 * range reads on from that range's start as one range to the end. Problems
 * are those of the chunks read (and the open scan's). It replaces
 * tracelog_reader_set_end_time's end, and rewind goes back to `first`'s
 * set. TRACELOG_OK; TRACELOG_E_INVAL for a NULL r or first > end or end >
 * info.chunks; TRACELOG_E_NOT_SEEKABLE on a pipe or a followed file.
 */
TRACELOG_API tracelog_status tracelog_reader_read_range(tracelog_reader *r, uint64_t first, uint64_t end);

/* Attributes of the stream (borrowed, valid until tracelog_reader_close). */
TRACELOG_API const tracelog_metadata *tracelog_reader_metadata(const tracelog_reader *r);

/*
 * The log's event-type table (borrowed, valid until tracelog_reader_close;
 * on a pipe it grows as definitions arrive). The three functions below
 * read it too.
 */
TRACELOG_API const tracelog_event_types *tracelog_reader_event_types(const tracelog_reader *r);

/* Event-type table: count, then entries by index 0..count-1 (sorted by id). */
TRACELOG_API size_t tracelog_reader_event_type_count(const tracelog_reader *r);
/* name is borrowed, valid until tracelog_reader_close. TRACELOG_E_INVAL past the end. */
TRACELOG_API tracelog_status tracelog_reader_event_type(const tracelog_reader *r, size_t index,
                                      uint32_t *id, const char **name);
/* Name of id, or NULL if the table does not name it. */
TRACELOG_API const char *tracelog_reader_event_name(const tracelog_reader *r, uint32_t id);

/*
 * The payload schema of id (<tracelog/schema.h>): NULL if the log gives the
 * type none, or gave one the reader ignored and reported as a problem
 * (malformed, over a limit of the schema language, or beyond the 4 MiB of
 * schema text a reader keeps per log). Decode an event with
 * tracelog_fields_decode(schema, ev.payload, ev.payload_len, &fields).
 * Borrowed: valid until tracelog_reader_close, even after a later
 * definition of the type replaced it.
 */
TRACELOG_API const tracelog_schema *tracelog_reader_event_schema(const tracelog_reader *r,
                                                                 uint32_t id);

/*
 * Thread definitions (format 1.1): which kernel thread (gettid) each
 * (pid, pthread tid) of the events was, in the order the log defines them
 * (seekable: all of the log; pipe: those read so far). A pthread_t value
 * may be reused by a later thread, so one (pid, tid) may have several
 * definitions: tracelog_reader_next() fills tracelog_event.kernel_tid from
 * the latest one before the event. TRACELOG_E_INVAL past the end.
 */
TRACELOG_API size_t tracelog_reader_thread_count(const tracelog_reader *r);
TRACELOG_API tracelog_status tracelog_reader_thread(const tracelog_reader *r, size_t index, uint32_t *pid,
                                                    uint64_t *tid, uint32_t *kernel_tid);

/*
 * The name definition `index` gives its thread (format 1.2: its comm, as
 * pthread_setname_np set it), NULL when it gives none (logs before 1.2, a
 * thread never named, a name the reader ignored and reported as a problem
 * BAD_THREAD_NAME) or past the end. A thread renamed has a definition per
 * name, with the same pid, tid and kernel tid. The bytes are the log's:
 * 1..TRACELOG_THREAD_NAME_MAX bytes without NUL, not necessarily UTF-8 or
 * printable (escape them to show them). Borrowed: valid until
 * tracelog_reader_close.
 */
TRACELOG_API const char *tracelog_reader_thread_name(const tracelog_reader *r, size_t index);

/*
 * The name of the thread of ev, the event tracelog_reader_next() returned
 * last (format 1.2): the name of the definition that gave it ev->kernel_tid,
 * so NULL whenever ev->kernel_tid is 0, and NULL when that definition gives
 * no name. As with kernel tids, a rename applies from the chunk after its
 * THREADS block, so events recorded shortly before a rename may show the
 * new name. Borrowed, as tracelog_reader_thread_name. Cheap enough to call
 * per event (one hash lookup).
 */
TRACELOG_API const char *tracelog_reader_event_thread_name(const tracelog_reader *r, const tracelog_event *ev);

/* Summary of the log (from the header scan; events counted from chunk headers). */
typedef struct tracelog_reader_info {
    uint16_t format_major, format_minor;
    int clean;                  /* 1 if the log was closed (its newest block is a valid trailer) and no
                                   problem was found so far: chunk payloads are checked as events are
                                   read, so clean is final once every event was read */
    int seekable;               /* 0 when read from a pipe: counts cover what was read so far */
    tracelog_policy log_policy;
    uint64_t file_size;
    uint64_t blocks;            /* valid blocks found */
    uint64_t chunks;            /* valid chunk blocks found */
    uint64_t events;            /* events in those chunks (from chunk headers) */
    uint64_t stored_bytes;      /* chunk payload bytes as stored */
    uint64_t raw_bytes;         /* chunk payload bytes uncompressed */
    uint64_t first_ts, last_ts; /* over all chunks; 0 if none */
    uint64_t problems;          /* problems found so far (damage, gaps, torn tail) */
    uint64_t bytes_skipped;     /* bytes of damaged data skipped so far */
    int closed;                 /* 1 if the newest block is a valid trailer and no torn tail follows it
                                   (format-spec 8.6): clean is closed with no problem; a closed log whose
                                   only problems are counted losses (TYPES_DROPPED, THREADS_DROPPED) lost
                                   names, not events */
    uint64_t merged_chunks;     /* of the chunks, those joined to the next one in a merge set (format 1.1,
                                   format-spec 6.10: their events are read merged by timestamp) */
} tracelog_reader_info;

TRACELOG_API void tracelog_reader_get_info(const tracelog_reader *r, tracelog_reader_info *info);

/*
 * Final status: from the trailer when the log was closed cleanly, otherwise
 * from the last status block seen (all zero if none).
 */
TRACELOG_API void tracelog_reader_get_status(const tracelog_reader *r, tracelog_log_status *st);

/* One problem found in the file. */
typedef struct tracelog_problem {
    tracelog_status code;    /* TRACELOG_E_CHECKSUM, TRACELOG_E_CORRUPT, TRACELOG_E_TRUNCATED, ... */
    uint64_t offset;   /* file offset where the damaged range starts */
    uint64_t length;   /* bytes skipped (0 if unknown) */
    char message[120];
} tracelog_problem;

/*
 * Problems found so far (at open for seekable files, and while reading).
 * Only the first max_problems are kept in detail; tracelog_reader_info.problems
 * counts them all. TRACELOG_E_INVAL past the end.
 */
TRACELOG_API size_t tracelog_reader_problem_count(const tracelog_reader *r);
TRACELOG_API tracelog_status tracelog_reader_problem(const tracelog_reader *r, size_t index, tracelog_problem *out);

/*
 * The named condition of the format specification (format-spec/ptl-format.md
 * section 8.8) behind problem `index`, e.g. "PAYLOAD_CRC_MISMATCH": the
 * problem's cause by name, finer than its status code. A static string; NULL
 * past the end. format-spec/implementation-notes.md maps names to codes.
 */
TRACELOG_API const char *tracelog_reader_problem_condition(const tracelog_reader *r, size_t index);

/*
 * The named condition (format-spec section 3.3) behind a failed
 * tracelog_reader_open or tracelog_reader_open_path, from the error it
 * filled in, e.g. "BAD_MAGIC" or "TRUNCATED_HEADER"; NULL when the failure
 * is not a property of the file (TRACELOG_E_IO, TRACELOG_E_NOMEM,
 * TRACELOG_E_INVAL) or err is NULL. A static string; thread-safe.
 */
TRACELOG_API const char *tracelog_reader_open_condition(const tracelog_error *err);

#ifdef __cplusplus
}
#endif
#endif
