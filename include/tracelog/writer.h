/*
 * tracelog/writer.h - write .ptl logs (format-spec/ptl-format.md).
 *
 * A writer buffers events into a chunk in memory, and writes each full chunk
 * as one independently compressed, checksummed block. Nothing is written per
 * event. tracelog_writer_flush() writes what is buffered (it survives a crash of the
 * process); tracelog_writer_sync() also makes it durable (fdatasync: survives a crash
 * of the machine). tracelog_writer_close() writes the final status and the trailer.
 *
 * Thread safety: a tracelog_writer is not thread-safe; use one writer from one
 * thread at a time (or lock around it). Different writers are independent.
 *
 * Errors: functions return tracelog_status. After an I/O error the writer is
 * poisoned: every later call returns the same error (nothing more is written,
 * so what is on disk stays readable); tracelog_writer_close() still frees it.
 */
#ifndef TRACELOG_WRITER_H
#define TRACELOG_WRITER_H

#include "tracelog/log.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tracelog_writer tracelog_writer;

typedef struct tracelog_writer_options {
    tracelog_policy log_policy;      /* TRACELOG_POLICY_APPEND (default), TRACELOG_POLICY_UNTIL_FULL, TRACELOG_POLICY_LOOP */
    uint64_t log_max_size;     /* LOOP/UNTIL_FULL: bytes of event chunks allowed (default 64 MiB).
                                  LOOP: with segment_size and durable_size automatic, the whole file
                                  stays within log_max_size + max(16 KiB, log_max_size / 8) */
    uint32_t chunk_size;       /* uncompressed bytes per chunk (default 128 KiB, 4 KiB..16 MiB) */
    int compression_level;     /* zstd level (default 1, tuned for chunk bodies); 0 stores chunks uncompressed */
    uint32_t segment_size;     /* LOOP: ring segment bytes (0: automatic; at least 4 KiB) */
    uint32_t durable_size;     /* LOOP: bytes kept for metadata and event types (4 KiB..64 MiB;
                                  0: automatic, from 16 KiB to 256 KiB or log_max_size / 256, see
                                  format-spec 7.3). Names that do not fit are counted in the status
                                  (types_dropped), and their events written unnamed */
    int preserve_attributes;   /* 1: copying another log (conversion): the metadata's log policy and
                                  size are kept as given, and tracelog_writer_set_status() sets every
                                  counter, log-side ones included (default 0) */
} tracelog_writer_options;

/* Fills the defaults listed above. */
TRACELOG_API void tracelog_writer_options_init(tracelog_writer_options *opt);

/*
 * Starts a new log on fd (which the caller keeps owning: the writer never
 * closes it). LOOP needs a seekable fd (TRACELOG_E_NOT_SEEKABLE otherwise); APPEND
 * and UNTIL_FULL also work on pipes and sockets. A regular file is truncated
 * to the log's start position first. meta and opt may be NULL (defaults).
 * On success *out owns a writer, freed by tracelog_writer_close().
 * Errors: TRACELOG_E_INVAL, TRACELOG_E_NOMEM, TRACELOG_E_IO, TRACELOG_E_NOT_SEEKABLE.
 */
TRACELOG_API tracelog_status tracelog_writer_create(int fd, const tracelog_metadata *meta,
                                  const tracelog_writer_options *opt,
                                  tracelog_writer **out, tracelog_error *err);

/*
 * Names event type id. Names are written before the first chunk that follows,
 * so a log cut short still names its events. Re-defining an id with the same
 * name is a no-op; with another name, TRACELOG_E_INVAL. name: 1..TRACELOG_TEXT_MAX bytes.
 * A log holds at most 65536 event types (what a reader accepts by default,
 * format-spec 9.1): a new id beyond that is TRACELOG_E_LIMIT, and the writer
 * stays usable (events of that id are written unnamed).
 */
TRACELOG_API tracelog_status tracelog_writer_define_event(tracelog_writer *w, uint32_t id, const char *name);

/*
 * tracelog_writer_define_event() with the schema of the type's payloads
 * (<tracelog/schema.h>; NULL: none), stored in canonical form beside the
 * name so that readers decode the payloads into fields. The writer never
 * looks at payloads: appending a typed event costs what an untyped one does.
 * Re-defining an id with the same name and an equal schema (same canonical
 * form, or none both times) is a no-op. A type defined without a schema may
 * be given one later (a converter whose input names schemas after events):
 * the log's table is the whole log's, so its earlier events read back with
 * it too (format-spec 5.3). Otherwise TRACELOG_E_INVAL. Errors
 * (err may be NULL): a malformed schema gives TRACELOG_E_INVAL or
 * TRACELOG_E_LIMIT with err->offset the byte position in schema, and the
 * writer stays usable; TRACELOG_E_INVAL for a bad name, TRACELOG_E_NOMEM, or
 * the error that poisoned the writer. TRACELOG_E_LIMIT also for a new id
 * beyond 65536 types, or a schema that would take the log's schemas beyond
 * 4 MiB of canonical text (format-spec 9.1).
 */
TRACELOG_API tracelog_status tracelog_writer_define_event_schema(tracelog_writer *w, uint32_t id,
                                                                 const char *name, const char *schema,
                                                                 tracelog_error *err);

/*
 * Buffers one event (payload copied). Writes a chunk when the buffer is full.
 * ev->kernel_tid, when not 0, goes to the log's thread table once per thread
 * (format 1.1, format-spec 5.7), not with every event; a (pid, tid) seen
 * again with another kernel tid (a reused pthread_t) ends the chunk in
 * progress, so that every event reads back with its own.
 * Errors: TRACELOG_E_INVAL (payload larger than the chunk size), TRACELOG_E_LOG_FULL
 * (UNTIL_FULL log is full: the event is counted as a log overrun), TRACELOG_E_IO.
 */
TRACELOG_API tracelog_status tracelog_writer_append(tracelog_writer *w, const tracelog_event *ev);

/*
 * Names thread (pid, tid) whose kernel tid is kernel_tid (not 0), as its
 * events give them (format 1.2, format-spec 5.7): name is its display name,
 * e.g. its comm (pthread_setname_np), copied; "" says it has none. The name
 * goes, with the kernel tid, into the THREADS block written before the next
 * chunk (a LOOP log: into the durable region, where a definition that does
 * not fit is counted in threads_dropped, as for tracelog_writer_append).
 * Giving a thread the name it has writes nothing, so a caller may give it
 * at every flush. A new name for the same thread (a rename) is a new
 * definition and does not end the chunk in progress: that chunk's earlier
 * events of the thread read back with the new name. A (pid, tid) named
 * with another kernel tid than it had is a new thread (a reused pthread_t):
 * as in tracelog_writer_append, the chunk in progress ends first. Events
 * appended later with kernel_tid 0 or the same kernel tid keep the name; one
 * with another kernel tid is a new thread, without a name.
 * The bytes of name are written as given (text of any encoding but NUL: a
 * reader escapes what it cannot show), so a caller passing another
 * process's comm passes untrusted text that the log keeps, not runs.
 * Errors: TRACELOG_E_INVAL (NULL w or name, kernel_tid 0, name longer than
 * TRACELOG_THREAD_NAME_MAX bytes; the writer stays usable), TRACELOG_E_NOMEM,
 * TRACELOG_E_IO or the error that poisoned the writer. Not thread-safe, as
 * every writer call.
 */
TRACELOG_API tracelog_status tracelog_writer_name_thread(tracelog_writer *w, uint32_t pid, uint64_t tid,
                                                         uint32_t kernel_tid, const char *name);

/*
 * UNTIL_FULL logs: once the log is full, writes ev in a chunk of its own
 * beyond the size budget, once (the POSIX layer uses it to end a full log
 * with POSIX_TRACE_STOP, as the standard requires). Later calls return
 * TRACELOG_E_LOG_FULL. Other logs, or a log not full yet: tracelog_writer_append().
 */
TRACELOG_API tracelog_status tracelog_writer_append_final(tracelog_writer *w, const tracelog_event *ev);

/* Replaces the status counters written by the next flush and by close. */
TRACELOG_API tracelog_status tracelog_writer_set_status(tracelog_writer *w, const tracelog_log_status *st);

/* Status as the writer knows it (its own counters merged with set_status). */
TRACELOG_API tracelog_status tracelog_writer_get_status(const tracelog_writer *w, tracelog_log_status *st);

/* Writes buffered event types, events and status (no fsync). */
TRACELOG_API tracelog_status tracelog_writer_flush(tracelog_writer *w);

/* tracelog_writer_flush(), then fdatasync(): the durable sync point. */
TRACELOG_API tracelog_status tracelog_writer_sync(tracelog_writer *w);

/*
 * Flushes, writes the trailer (final status and chunk index), and frees w
 * (also when it returns an error). Does not close the fd. NULL is a no-op.
 */
TRACELOG_API tracelog_status tracelog_writer_close(tracelog_writer *w, tracelog_error *err);

/*
 * Writes what is buffered and a trailer, and keeps the writer open: the log
 * is complete as it stands (a reader calls it clean) until the next block is
 * written. Used before exec(), which would otherwise leave the log without
 * its trailer. Errors as tracelog_writer_flush().
 */
TRACELOG_API tracelog_status tracelog_writer_checkpoint(tracelog_writer *w);

/* Frees w without writing anything more (as if the process had crashed). */
TRACELOG_API void tracelog_writer_abandon(tracelog_writer *w);

/* Details of the error that poisoned w (code TRACELOG_OK if none). */
TRACELOG_API void tracelog_writer_last_error(const tracelog_writer *w, tracelog_error *err);

#ifdef __cplusplus
}
#endif
#endif
