/*
 * tl_test.h - the small helper library of the C tests.
 *
 * Checks: CHECK(cond), CHECK_EQ(a, b) (compared as uint64_t), CHECK_EQ_INT,
 * CHECK_STATUS (prints status names), CHECK_STR_EQ, CHECK_MEM_EQ. Each counts
 * one passed or failed check; a failure prints file:line, the expression,
 * the values and the current context (tl_test_context). Each check is an
 * expression worth 1 when it passed, so `if (!CHECK(p)) return;` works.
 * Checks may be made from any thread (the counters are atomic);
 * tl_test_context belongs to the main thread. Only the first 100 failures
 * are printed (sweeps can fail thousands of times for one cause).
 *
 * Convention: a test file is a set of static void test_x(void) functions and
 *
 *     int main(void)
 *     {
 *         TL_TEST_RUN(test_x);
 *         return tl_test_finish();
 *     }
 *
 * tl_test_finish prints the final line "N passed, N failed" and returns the
 * exit status (non-zero if a check failed or none ran).
 *
 * Logs: tl_test_gen_event makes event i of a deterministic sequence;
 * tl_test_write_log_fd/_mem write such a log with a given policy;
 * tl_test_read_fd/_bytes/_bytes_pipe read every event of a log back.
 */
#ifndef TL_TEST_H
#define TL_TEST_H

#include <stddef.h>
#include <stdint.h>

#include "tracelog.h"

/* ---- checks ------------------------------------------------------------ */

int tl_test_check(int ok, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int tl_test_check_eq_u64(uint64_t a, uint64_t b, const char *ea, const char *eb, const char *file,
                         int line);
int tl_test_check_eq_i64(int64_t a, int64_t b, const char *ea, const char *eb, const char *file,
                         int line);
int tl_test_check_status(tracelog_status got, tracelog_status want, const char *expr,
                         const char *file, int line);
int tl_test_check_str_eq(const char *a, const char *b, const char *ea, const char *eb,
                         const char *file, int line);
int tl_test_check_mem_eq(const void *a, const void *b, size_t n, const char *ea, const char *eb,
                         const char *file, int line);

#define CHECK(cond) tl_test_check(!!(cond), __FILE__, __LINE__, "%s", #cond)
#define CHECK_MSG(cond, ...) tl_test_check(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define CHECK_EQ(a, b) tl_test_check_eq_u64((uint64_t)(a), (uint64_t)(b), #a, #b, __FILE__, __LINE__)
#define CHECK_EQ_INT(a, b) tl_test_check_eq_i64((int64_t)(a), (int64_t)(b), #a, #b, __FILE__, __LINE__)
#define CHECK_STATUS(expr, want) tl_test_check_status((expr), (want), #expr, __FILE__, __LINE__)
#define CHECK_STR_EQ(a, b) tl_test_check_str_eq((a), (b), #a, #b, __FILE__, __LINE__)
#define CHECK_MEM_EQ(a, b, n) tl_test_check_mem_eq((a), (b), (n), #a, #b, __FILE__, __LINE__)

/* Text printed with every failure until changed; NULL clears it. */
void tl_test_context(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Failures counted so far (to stop a sweep after the first bad case, for instance). */
unsigned long tl_test_failures(void);

void tl_test_run(const char *name, void (*fn)(void));
#define TL_TEST_RUN(fn) tl_test_run(#fn, fn)
int tl_test_finish(void);

/* Aborts the test program (for failures of the test's own machinery). */
void tl_test_die(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
#define TL_DIE(...) tl_test_die(__FILE__, __LINE__, __VA_ARGS__)

/* ---- event lists --------------------------------------------------------- */

/* Events whose payloads the list owns (copied into one growing buffer). */
typedef struct tl_test_events {
    tracelog_event *ev;
    size_t n, cap;
    uint8_t *data;       /* the payloads */
    size_t *offset;      /* of each event's payload in data */
    size_t data_len, data_cap;
} tl_test_events;

void tl_test_events_push(tl_test_events *l, const tracelog_event *ev); /* copies the payload */
void tl_test_events_free(tl_test_events *l);

int tl_test_event_equal(const tracelog_event *a, const tracelog_event *b);
/* One check; on failure prints the first differing field. */
int tl_test_check_event_eq(const tracelog_event *a, const tracelog_event *b, const char *file,
                           int line);
#define CHECK_EVENT_EQ(a, b) tl_test_check_event_eq((a), (b), __FILE__, __LINE__)
/* One check: got has the n events of want[0..n) in the same order. */
int tl_test_check_events_eq(const tracelog_event *got, size_t ngot, const tracelog_event *want,
                            size_t nwant, const char *file, int line);
#define CHECK_EVENTS_EQ(got, ngot, want, nwant) \
    tl_test_check_events_eq((got), (ngot), (want), (nwant), __FILE__, __LINE__)
/*
 * The kernel tids of two event lists are equal (CHECK_EVENTS_EQ compares
 * what the chunks hold; the kernel tid comes from the log's thread table,
 * which damage can take away while the chunks survive).
 */
int tl_test_check_kernel_tids_eq(const tracelog_event *got, size_t ngot, const tracelog_event *want,
                                 size_t nwant, const char *file, int line);
#define CHECK_KERNEL_TIDS_EQ(got, ngot, want, nwant) \
    tl_test_check_kernel_tids_eq((got), (ngot), (want), (nwant), __FILE__, __LINE__)

/* ---- deterministic logs ------------------------------------------------------ */

#define TL_TEST_PAYLOAD_MAX 300
#define TL_TEST_TS_BASE 1700000000000000000ull

/*
 * Event i of the sequence `seed`: timestamps never decrease (some repeat),
 * event ids among the tl_test_types ids, pid/tid/address that change now and
 * then (0 and UINT64_MAX included), truncation 0..2, payload of
 * 0..payload_max bytes (payload_max <= TL_TEST_PAYLOAD_MAX; 0 means
 * TL_TEST_PAYLOAD_MAX) written to payload (which ev->payload points to).
 */
void tl_test_gen_event(uint64_t seed, uint64_t i, uint32_t payload_max, tracelog_event *ev,
                       uint8_t payload[TL_TEST_PAYLOAD_MAX]);
/* Events first..first+n-1 of the sequence, appended to l. */
void tl_test_gen_events(uint64_t seed, uint64_t first, size_t n, uint32_t payload_max,
                        tl_test_events *l);

/* Event types defined by tl_test_write_log_*: the last one halfway through. */
#define TL_TEST_NTYPES 5
extern const uint32_t tl_test_type_ids[TL_TEST_NTYPES];
extern const char *const tl_test_type_names[TL_TEST_NTYPES];

/* Metadata with every field set to a distinctive, policy-consistent value. */
void tl_test_metadata(tracelog_metadata *m, tracelog_policy log_policy, uint64_t log_max_size);
/* One check per differing field (all fields compared). */
int tl_test_check_metadata_eq(const tracelog_metadata *a, const tracelog_metadata *b,
                              const char *file, int line);
#define CHECK_METADATA_EQ(a, b) tl_test_check_metadata_eq((a), (b), __FILE__, __LINE__)
int tl_test_check_status_eq(const tracelog_log_status *a, const tracelog_log_status *b,
                            const char *file, int line);
#define CHECK_LOG_STATUS_EQ(a, b) tl_test_check_status_eq((a), (b), __FILE__, __LINE__)

typedef struct tl_test_log_spec {
    tracelog_policy policy;   /* APPEND, UNTIL_FULL or LOOP */
    int compression_level;
    uint32_t chunk_size;      /* 0: writer default */
    uint64_t log_max_size;    /* UNTIL_FULL / LOOP */
    uint32_t segment_size, durable_size;
    size_t n_events;          /* appends attempted */
    uint64_t seed;
    uint32_t payload_max;     /* of the generated events (0: TL_TEST_PAYLOAD_MAX) */
    size_t flush_every;       /* tracelog_writer_flush after every that many appends (0: never) */
    int abandon;              /* 1: tracelog_writer_abandon (a crash: no final flush) instead of close */
} tl_test_log_spec;

/* A writer on fd without metadata, with options o (NULL: the defaults); the test dies if it cannot be made. */
tracelog_writer *tl_test_new_writer(int fd, const tracelog_writer_options *o);

/* A spec with the given policy and event count, and small chunks (4 KiB). */
void tl_test_log_spec_init(tl_test_log_spec *s, tracelog_policy policy, size_t n_events);

typedef struct tl_test_log_result {
    tracelog_metadata meta;          /* as given to the writer */
    size_t appended_ok;              /* appends that returned TRACELOG_OK */
    size_t appended_full;            /* appends that returned TRACELOG_E_LOG_FULL */
    size_t flushed_events;           /* appends attempted before the last flush */
    tracelog_log_status status;      /* tracelog_writer_get_status after the final flush
                                        (abandon: just before abandoning) */
    tracelog_status close_status;
    uint8_t *bytes;                  /* _mem only: the log (malloc'd) */
    size_t len;
} tl_test_log_result;

/*
 * Writes the log with tracelog_writer_create on fd. Defines the event types,
 * appends events 0..n-1 of the sequence (flushing as asked), sets
 * events_recorded = n and stream_overruns = 3, flushes, records the status,
 * and closes (or abandons). Returns 0, or -1 if an unexpected status came
 * back (reported as a failed check).
 */
int tl_test_write_log_fd(int fd, const tl_test_log_spec *spec, tl_test_log_result *res);
/* The same into memory, through a seekable tl_io (res->bytes). */
int tl_test_write_log_mem(const tl_test_log_spec *spec, tl_test_log_result *res);
void tl_test_log_result_free(tl_test_log_result *res);

/* ---- reading ---------------------------------------------------------------- */

typedef struct tl_test_readout {
    tracelog_status open_status;
    tracelog_error open_err;
    tracelog_status next_status; /* what ended the iteration: TRACELOG_END normally */
    tl_test_events events;
    tracelog_reader_info info;
    tracelog_log_status status;
    tracelog_metadata meta;
    size_t ntypes;
    uint32_t *type_ids;
    char **type_names;
    size_t nproblems;
    tracelog_problem *problems;
} tl_test_readout;

/*
 * The suites registered again with TL_TEST_READ_AHEAD=N (tests/CMakeLists.txt)
 * read every seekable log N chunks ahead: the events and problems they expect
 * are the same. Called on each reader they open (tl_test_read_fd does).
 */
void tl_test_read_ahead_from_env(tracelog_reader *r);
/* Opens a reader on fd, reads every event, then collects everything else. */
void tl_test_read_fd(int fd, const tracelog_reader_options *opt, tl_test_readout *out);
/* The same with tracelog_reader_open_read. */
void tl_test_read_fn(tracelog_read_fn fn, void *ctx, const tracelog_reader_options *opt, tl_test_readout *out);
/* The same on bytes put in a temporary file. */
void tl_test_read_bytes(const void *buf, size_t len, const tracelog_reader_options *opt,
                        tl_test_readout *out);
/* The same on bytes fed through a pipe by a thread (forward-only reader). */
void tl_test_read_bytes_pipe(const void *buf, size_t len, const tracelog_reader_options *opt,
                             tl_test_readout *out);
void tl_test_readout_free(tl_test_readout *out);
/* Number of problems with this code (any code if code < 0). */
size_t tl_test_readout_problems(const tl_test_readout *out, int code);
/* Prints the problems (for diagnosing a failure). */
void tl_test_readout_dump(const tl_test_readout *out);

/* What tl_test_read_thread_seqs found. */
#define TL_TEST_THREADS_MAX 8
typedef struct tl_test_thread_seqs {
    uint32_t next[TL_TEST_THREADS_MAX]; /* per thread: the number after its last event in order */
    int seen[TL_TEST_THREADS_MAX];      /* per thread: some event of it was read */
    uint64_t bad;  /* events of the id of another length, of an unknown thread, or out of their thread's order */
    uint64_t back; /* events of the id whose timestamp is below the one before */
} tl_test_thread_seqs;

/*
 * Reads the rest of r's events. Those of `id` must carry `len` bytes that
 * start with a thread index below nthreads (at most TL_TEST_THREADS_MAX)
 * and that thread's sequence number (two uint32): each thread's numbered
 * from 0 (suffix: from its first event's number, as a log that dropped its
 * oldest events holds them) up by one, and timestamps never going back.
 */
void tl_test_read_thread_seqs(tracelog_reader *r, uint32_t id, uint32_t nthreads, uint32_t len, int suffix,
                              tl_test_thread_seqs *out);

/* ---- memory ------------------------------------------------------------------ */

/* size bytes of zeroed shared anonymous memory, as a stream lives in (munmap it). Dies on failure. */
void *tl_test_zeroed_shared(uint64_t size);
/* The next of a xorshift64 sequence (*x: its state, never 0). */
static inline uint64_t tl_test_rng_next(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

/* ---- files ------------------------------------------------------------------- */

/* A new empty temporary file in $TMPDIR (or /tmp), already unlinked. */
int tl_test_tmpfd(void);
/* Makes fd's content exactly buf[0..len). */
void tl_test_fd_set(int fd, const void *buf, size_t len);
/* Reads the whole content of a regular file (malloc'd). */
uint8_t *tl_test_fd_slurp(int fd, size_t *len);

/* ---- format walking ---------------------------------------------------------- */

/* One block of a sequential log, found by tl_test_scan_blocks. */
typedef struct tl_test_block {
    uint64_t offset;       /* of the block header */
    uint16_t type, flags;
    uint64_t seq;
    uint32_t payload_len;
    uint64_t span;         /* header + payload + padding */
    uint32_t event_count;  /* chunks: from the chunk header */
    uint8_t codec;         /* chunks: TL_CODEC_NONE or TL_CODEC_ZSTD */
    uint8_t body_format;   /* chunks: TL_BODY_COLUMNS (format 1.0) or TL_BODY_KEYED */
    uint8_t chunk_flags;   /* chunks: TL_CHUNK_MERGE_NEXT (format 1.1: a merge set goes on) */
    uint64_t first_event;  /* chunks: events in the chunks before this one */
} tl_test_block;

/*
 * Walks the blocks of an undamaged sequential log with the format functions.
 * Returns the number of blocks (and *blocks, malloc'd); dies on a malformed
 * log. *salt32 and *header_size (if not NULL) receive the header's values.
 */
size_t tl_test_scan_blocks(const uint8_t *file, size_t len, tl_test_block **blocks,
                           uint32_t *salt32, uint32_t *header_size);

#endif
