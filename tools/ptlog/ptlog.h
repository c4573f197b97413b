/*
 * ptlog.h - shared interfaces of the ptlog command-line tool.
 *
 * cli.c parses arguments and calls one command function (convert.c for
 * dump, convert, filter and merge; info.c, verify.c, record.c). Commands
 * read events through a ptlog_src (src_ptl.c for .ptl logs, json_in.c for
 * JSON and JSON Lines, merge.c over several inputs), run them through
 * src.c's event loop into a sink (dump.c, json_out.c, chrome.c, ptl_out.c;
 * dump and JSON format on several threads through par.c) and write through
 * a ptlog_out (out.c: buffered, atomic temp file + rename).
 * Every function that can fail prints ONE line on stderr and returns one of
 * the exit codes below, so callers only propagate the number.
 */
#ifndef PTLOG_H
#define PTLOG_H

#include <endian.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <tracelog.h>

#define PTLOG_VERSION TRACELOG_VERSION_STRING

/* What one input may define, from JSON: what a .ptl log holds (format-spec 9.1), so that a crafted
   input cannot grow the tables without bound (README.md, "Limits"). */
#define PTLOG_TYPES_MAX 65536
#define PTLOG_SCHEMA_BYTES_MAX (4u << 20) /* canonical schema text, changes included */

/* Exit codes: stable, documented in README.md, ptlog.1 and --help. */
enum {
    PTLOG_EXIT_OK = 0,       /* success */
    PTLOG_EXIT_LOSS = 1,     /* input read, but damage or truncation found (recovered with loss) */
    PTLOG_EXIT_USAGE = 2,    /* command-line usage error */
    PTLOG_EXIT_INPUT = 3,    /* input unreadable or invalid */
    PTLOG_EXIT_OUTPUT = 4,   /* cannot create, write or rename the output */
    PTLOG_EXIT_INTERNAL = 5  /* internal error (out of memory) */
};

/* ---- messages (msg.c) ------------------------------------------------------ */

/* "ptlog: <where>: <message>" on stderr. where may be NULL. */
void ptlog_msg(const char *where, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports out of memory and returns PTLOG_EXIT_INTERNAL. */
int ptlog_nomem(void);
/* For tests and fuzzers: messages are still counted and kept, but not printed. */
void ptlog_msg_silence(int silent);
/* Messages so far, and the text of the last one (without its "ptlog: where: " prefix). */
unsigned long ptlog_msg_count(void);
const char *ptlog_msg_last(void);
/* Name shown for a path ("-" is "<stdin>"). */
const char *ptlog_display_name(const char *path);

/*
 * ---- progress (msg.c) ----------------------------------------------------------
 * A "\rptlog: N events (P%)" line on stderr, only when stderr is a terminal
 * that the command's output does not share (so never inside output lines),
 * and erased before any message is printed.
 */

typedef struct ptlog_progress {
    int enabled;
    double start, last;
    int shown;
    uint64_t total; /* events expected, 0 if unknown */
} ptlog_progress;

/* The decision: stderr_fd is a terminal, and stdout_fd is not that terminal or carries no output. */
int ptlog_progress_wanted(int stderr_fd, int stdout_fd, int stdout_used);
void ptlog_progress_init(ptlog_progress *p, uint64_t total);
/* Call every few thousand events; cheap. */
void ptlog_progress_update(ptlog_progress *p, uint64_t done);
void ptlog_progress_end(ptlog_progress *p);

/* ---- temporary files removed on SIGINT, SIGTERM, SIGHUP, SIGPIPE (cleanup.c) ------- */

/* Registers path (kept, not copied: valid until removed). 0, or -1 when every slot is taken. */
int ptlog_cleanup_add(const char *path);
/* SIGXFSZ caught (a no-op): a write over RLIMIT_FSIZE fails with EFBIG, an output error, instead of killing ptlog. */
void ptlog_catch_file_size(void);
/* Unregisters path (call before freeing it; after unlinking or renaming it). */
void ptlog_cleanup_remove(const char *path);

/* ---- output (out.c) ---------------------------------------------------------- */

typedef struct ptlog_out {
    int fd;
    char *path;   /* final path, NULL for standard output */
    char *tmp;    /* temporary path while writing a file */
    char *buf;
    size_t len, cap;
    int err;      /* first errno of a failed write */
    int memory;   /* ptlog_out_memory: the text stays in buf, which grows */
} ptlog_out;

/* Opens path (NULL or "-": standard output) for writing through a temp file. */
int ptlog_out_open(ptlog_out *o, const char *path);
/* An output into memory only (buf, len): its buffer grows instead of being written (ENOMEM in err when it
   cannot). Freed by ptlog_out_abort. 0, or -1 without memory. */
int ptlog_out_memory(ptlog_out *o, size_t cap);
/* Writes the buffer out; on failure records the errno (reported by finish). */
void ptlog_out_flush(ptlog_out *o);
/* Room for at least n more bytes at o->buf + o->len (n <= 64 KiB). */
static inline char *ptlog_out_room(ptlog_out *o, size_t n)
{
    if (o->cap - o->len < n)
        ptlog_out_flush(o);
    return o->buf + o->len;
}
/* ptlog_out_write when the buffer has no room for n more bytes. */
void ptlog_out_write_full(ptlog_out *o, const void *p, size_t n);
/* Inline: most writes are a few bytes into a buffer with room (strlen of a literal folds away). */
static inline void ptlog_out_write(ptlog_out *o, const void *p, size_t n)
{
    if (n > o->cap - o->len) {
        ptlog_out_write_full(o, p, n);
        return;
    }
    memcpy(o->buf + o->len, p, n);
    o->len += n;
}
/* ptlog_out_write for a large block made elsewhere: written straight from p when it is large. */
void ptlog_out_write_block(ptlog_out *o, const void *p, size_t n);
static inline void ptlog_out_puts(ptlog_out *o, const char *s) { ptlog_out_write(o, s, strlen(s)); }
/* Writes "s[0..n)" into dst, quoted and escaped (at most grow * n + 2 bytes); returns its length. */
typedef size_t (*ptlog_quote_fn)(const char *s, size_t n, char *dst);
/* s[0..n) through quote, in slices (never inside a UTF-8 sequence) so that any length fits. */
void ptlog_out_quoted(ptlog_out *o, const char *s, size_t n, ptlog_quote_fn quote, size_t grow);
/* Flushes, syncs, closes and renames into place. Exit code (4 on failure). */
int ptlog_out_finish(ptlog_out *o);
/* Discards the output: the temporary file is removed. */
void ptlog_out_abort(ptlog_out *o);
/*
 * A file that is written while it is in use (record, attach: the log must be
 * readable, and survive, while the program runs) takes its place now rather
 * than at ptlog_out_finish: the temporary file is renamed over the output.
 * Until then the output is untouched, so a failure before costs nothing.
 * 0 or an errno.
 */
int ptlog_out_place(ptlog_out *o);
/* Name of the output for messages. */
const char *ptlog_out_name(const ptlog_out *o);
/* 1 once an output was opened on standard output. */
int ptlog_out_stdout_claimed(void);
/*
 * The descriptor an output path names: - and /dev/stdout 1, /dev/stderr 2, /dev/fd/N, /proc/self/fd/N
 * and /proc/PID/fd/N (this process's) N; -1 for any other path. Such an output is that descriptor,
 * written in place.
 */
int ptlog_out_named_fd(const char *path);
/*
 * Before a .ptl log is written to o: a descriptor ptlog did not create (standard output, /dev/fd/N)
 * that is a regular file must be at its start, and not opened to append to what it holds (the
 * writer writes from offset 0 and truncates: it once erased what `>>` or a `{ ...; } > f` group had
 * written). PTLOG_EXIT_OK, or PTLOG_EXIT_OUTPUT with the message said.
 */
int ptlog_out_check_log_start(const ptlog_out *o);

/*
 * A text made once per event type and then copied (dump's names, JSON's
 * event prefixes): the text of (id, name), remade when the name pointer
 * changes. make returns a malloc'ed text with room for at least `fixed`
 * bytes (copied whole when the text fits them), or NULL (then nothing is
 * written). In out.c.
 */
#define PTLOG_TYPE_TEXTS 4096

typedef struct ptlog_type_text {
    const char *src; /* the name the text was made from */
    char *text;
    size_t len;
} ptlog_type_text;

typedef struct ptlog_type_texts {
    char *(*make)(const char *name, uint32_t id, size_t *len);
    size_t fixed;                        /* a multiple of 16 */
    ptlog_type_text v[PTLOG_TYPE_TEXTS]; /* by id; larger ids are made for every event */
} ptlog_type_texts;

/*
 * Copies src[0..n) to dst in 16-byte blocks, n rounded up (and at least
 * one block): no call for a length known only at run time, and no loop for
 * the short texts most are. Both sides have room for the rounding (a memo's
 * text whose size is a multiple of 16, an output with room reserved).
 */
static inline void ptlog_copy_blocks(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, 16);
    for (size_t k = 16; k < n; k += 16)
        memcpy(dst + k, src + k, 16);
}

void ptlog_put_type_text_slow(ptlog_out *out, ptlog_type_texts *t, uint32_t id, const char *name);
/* Inline for a text already made that fits `fixed` (a multiple of 16): copied in 16-byte blocks, no call. */
static inline void ptlog_put_type_text(ptlog_out *out, ptlog_type_texts *t, uint32_t id, const char *name)
{
    const ptlog_type_text *slot = &t->v[id < PTLOG_TYPE_TEXTS ? id : 0];
    if (id >= PTLOG_TYPE_TEXTS || !slot->text || slot->src != name || slot->len > t->fixed) {
        ptlog_put_type_text_slow(out, t, id, name);
        return;
    }
    ptlog_copy_blocks(ptlog_out_room(out, t->fixed), slot->text, slot->len);
    out->len += slot->len;
}
void ptlog_type_texts_free(ptlog_type_texts *t);

/*
 * The text an output made for a thread's name, kept for the next events:
 * made again only when the name differs. Zero-initialise.
 */
typedef struct ptlog_name_memo {
    int valid;
    const char *same; /* the last name's address, when its source's names are stable; else NULL */
    size_t raw_len;
    char raw[TRACELOG_THREAD_NAME_MAX];
    size_t len;
    char text[640]; /* dump's "(NAME) ", JSON's ,"tname":..[,"tname_hex":..]; copied by ptlog_copy_blocks */
} ptlog_name_memo;

/* 1 when m holds the text of name (NUL-terminated, at most TRACELOG_THREAD_NAME_MAX bytes read); else
   m's raw name becomes name's and 0 is returned: make the text into m->text, m->len. stable: the source's
   thread_names_stable (then the address alone tells the last name, without reading it). */
static inline int ptlog_name_memo_hit(ptlog_name_memo *m, const char *name, int stable)
{
    if (stable && m->valid && name == m->same)
        return 1;
    m->same = stable ? name : NULL;
    size_t n = strnlen(name, TRACELOG_THREAD_NAME_MAX);
    if (m->valid && n == m->raw_len && memcmp(name, m->raw, n) == 0)
        return 1;
    memcpy(m->raw, name, n);
    m->raw_len = n;
    m->valid = 1;
    return 0;
}

/*
 * Several threads' name texts (a log's threads take turns: a flusher merges
 * its lanes into each chunk): a slot by the name's address when the source's
 * names are stable, else the one slot of the last name. Zero-initialise.
 */
#define PTLOG_NAME_MEMOS 8
typedef struct ptlog_name_memos {
    ptlog_name_memo slot[PTLOG_NAME_MEMOS];
} ptlog_name_memos;

/* name's slot, and in *hit whether it holds name's text (ptlog_name_memo_hit). */
static inline ptlog_name_memo *ptlog_name_memos_get(ptlog_name_memos *ms, const char *name, int stable, int *hit)
{
    size_t i = stable ? (size_t)((uint64_t)(uintptr_t)name * 0x9E3779B97F4A7C15ull >> 61) : 0;
    ptlog_name_memo *m = &ms->slot[i % PTLOG_NAME_MEMOS];
    *hit = ptlog_name_memo_hit(m, name, stable);
    return m;
}

/* ---- text formatting helpers (timefmt.c) --------------------------------------- */

typedef struct ptlog_timecache {
    int64_t sec;     /* second whose prefix is cached, INT64_MIN if none */
    uint64_t sec_start_ns;
    int local;
    char prefix[32]; /* "YYYY-MM-DDTHH:MM:SS" */
    size_t prefix_len;
    char zone[8];    /* "Z" or "+HH:MM" */
    size_t zone_len;
} ptlog_timecache;

void ptlog_timecache_init(ptlog_timecache *c, int local);
/* Writes the ISO 8601 time of ns (at most 40 bytes), returns its length. */
size_t ptlog_fmt_time(ptlog_timecache *c, uint64_t ns, char *out);
/* Writes signed seconds.nanoseconds of ns - origin, returns its length. */
size_t ptlog_fmt_relative(uint64_t ns, uint64_t origin, char *out);
/* Decimal nanosecond timestamps: the seconds' digits are made once per second. */
typedef struct ptlog_nscache {
    uint64_t sec_start_ns;
    size_t sec_len;   /* 0: nothing cached */
    char sec[16];     /* digits of the cached second, padded for a fixed-size copy */
} ptlog_nscache;

void ptlog_nscache_init(ptlog_nscache *c);
/* Writes the decimal digits of ns (as ptlog_fmt_u64, room for 25 bytes), returns the count. */
size_t ptlog_fmt_ns(ptlog_nscache *c, uint64_t ns, char *out);

/*
 * Texts of numbers that repeat from event to event (a thread's ids, a call
 * site's address), made once: a direct-mapped table on the key (k1, k2).
 * A caller that gets a slot it did not hit fills text (at most 64 bytes)
 * and len; copying always takes 64 bytes of room (a fixed-size copy).
 */
typedef struct ptlog_memo_slot {
    uint64_t k1, k2;
    uint32_t len, used;
    char text[64];
} ptlog_memo_slot;

#define PTLOG_MEMO_SLOTS 64

typedef struct ptlog_textmemo {
    ptlog_memo_slot slot[PTLOG_MEMO_SLOTS];
} ptlog_textmemo;

/* The slot of (k1, k2); *hit 1 if it holds their text, else it is claimed for them (text to fill). */
static inline ptlog_memo_slot *ptlog_textmemo_get(ptlog_textmemo *m, uint64_t k1, uint64_t k2, int *hit)
{
    uint64_t h = (k1 ^ (k2 * 0x9E3779B97F4A7C15ull)) * 0x9E3779B97F4A7C15ull;
    ptlog_memo_slot *s = &m->slot[(h >> 32) % PTLOG_MEMO_SLOTS];
    *hit = s->used && s->k1 == k1 && s->k2 == k2;
    if (!*hit) {
        s->k1 = k1;
        s->k2 = k2;
        s->used = 1;
    }
    return s;
}

/* Writes the decimal digits of v, returns the count (at most 20); out has room for 20 bytes (up to 8 are written past the digits of a short value). */
size_t ptlog_fmt_u64(uint64_t v, char *out);
/* Writes 2n lowercase hex digits of p[0..n). */
void ptlog_fmt_hexbytes(const unsigned char *p, size_t n, char *out);
/* Writes lowercase hex digits of v without leading zeros, returns the count. */
size_t ptlog_fmt_hex64(uint64_t v, char *out);
/* ISO 8601 UTC of ns into out (at least 40 bytes), NUL-terminated. */
const char *ptlog_iso_utc(uint64_t ns, char *out);

/* The little-endian unsigned integer of p[0..n), n <= 8 (one load for 1, 2, 4 and 8: typed fields). */
static inline uint64_t ptlog_load_le(const unsigned char *p, size_t n)
{
    uint16_t u16;
    uint32_t u32;
    uint64_t v = 0;
    switch (n) {
    case 1: return p[0];
    case 2: memcpy(&u16, p, 2); return le16toh(u16);
    case 4: memcpy(&u32, p, 4); return le32toh(u32);
    case 8: memcpy(&v, p, 8); return le64toh(v);
    default:
        while (n--)
            v = v << 8 | p[n];
        return v;
    }
}

/* The low n bytes (1..8) of u, a signed integer, sign-extended to 64 bits. */
static inline uint64_t ptlog_sign_extend(uint64_t u, size_t n)
{
    unsigned shift = 64 - 8 * (unsigned)n;
    return (uint64_t)((int64_t)(u << shift) >> shift); /* an arithmetic shift: gcc and clang define it */
}

/* A time given on the command line: absolute ns, or an offset from the first event. */
typedef struct ptlog_timearg {
    int set;
    int relative;
    uint64_t ns;
} ptlog_timearg;

/* Parses "2024-05-01T12:00:00.5Z", "...+02:00", "1714564800000000000" (ns) or "+1.5s". 0 or -1. */
int ptlog_parse_time(const char *s, ptlog_timearg *t);

/* ---- text from files, safe to print (text.c; the rule is in README.md) ------------ */

/* Length of the valid UTF-8 sequence at p (1..4; n >= 1 bytes there), or 0 if invalid. */
size_t ptlog_utf8_len(const unsigned char *p, size_t n);
/* 1 if s[0..n) prints bare: non-empty, valid UTF-8, no control, quote, backslash (or blank). */
int ptlog_text_is_plain(const char *s, size_t n, int blanks_ok);
/* s[0..n) in double quotes, C-escaped, \xHH for control and non-UTF-8 bytes (room for 4n + 2). */
size_t ptlog_text_quote(const char *s, size_t n, char *dst);
/* 1 for the bytes every quoting copies as they are (printable ASCII but " and \), else 0. */
extern const unsigned char ptlog_plain_ascii[256];
/* Bare if plain, else quoted (room for 4n + 2). */
size_t ptlog_text_safe(const char *s, size_t n, int blanks_ok, char *dst);
/* Only control and non-UTF-8 bytes as \xHH, nothing quoted (room for 4n): for messages. */
size_t ptlog_text_sanitize(const char *s, size_t n, char *dst);
/* Room for the shown form of a metadata text or event name (TRACELOG_TEXT_MAX bytes). */
#define PTLOG_TEXT_SHOW_SIZE (4 * TRACELOG_TEXT_MAX + 3)
/* NUL-terminated ptlog_text_safe (blanks allowed) of the C string s into buf (cap bytes). */
const char *ptlog_text_show(const char *s, char *buf, size_t cap);

/* ---- a small hash map from 64-bit keys to indexes (idmap.c) -------------------- */

typedef struct ptlog_idmap {
    uint64_t *keys;
    size_t *vals;
    unsigned char *used;
    size_t n, cap;
} ptlog_idmap;

/* Value of key, or SIZE_MAX. */
size_t ptlog_idmap_get(const ptlog_idmap *m, uint64_t key);
/* 0, or -1 when out of memory. */
int ptlog_idmap_put(ptlog_idmap *m, uint64_t key, size_t val);
void ptlog_idmap_free(ptlog_idmap *m);

/*
 * Entries made once per schema and found again by its address (its
 * reader keeps it while the entries are used): the last one asked for
 * without a search, as consecutive events mostly share their schema.
 */
typedef struct ptlog_by_schema {
    ptlog_idmap map;
    size_t n;                    /* entries */
    const tracelog_schema *last; /* the last one found, and its index */
    size_t last_index;
} ptlog_by_schema;
size_t ptlog_by_schema_search(ptlog_by_schema *x, const tracelog_schema *s);
/* s's entry index, or SIZE_MAX when it has none: the caller makes entry x->n, then ptlog_by_schema_add. */
static inline size_t ptlog_by_schema_find(ptlog_by_schema *x, const tracelog_schema *s)
{
    return s == x->last && x->n ? x->last_index : ptlog_by_schema_search(x, s);
}
/* Entry x->n is s's: its index, or SIZE_MAX when out of memory (the entry is not counted). */
size_t ptlog_by_schema_add(ptlog_by_schema *x, const tracelog_schema *s);

/* ---- per-thread statistics (threads.c), for info --threads --------------------- */

typedef struct ptlog_thread_stats {
    uint32_t pid;
    uint64_t tid;
    uint32_t ktid; /* kernel thread id, 0 if the log does not know it */
    uint64_t count, first, last;
    char name[TRACELOG_THREAD_NAME_MAX + 1]; /* the latest name its events had (format 1.2), "" none */
} ptlog_thread_stats;

typedef struct ptlog_threads {
    ptlog_thread_stats *v; /* in order of first appearance; sorted by ptlog_threads_sort */
    size_t n, cap;
    size_t *slots;         /* hash table: index + 1 into v, 0 empty */
    size_t nslots;
    uint64_t seed;
} ptlog_threads;

/* Counts one event of thread (pid, tid, kernel tid), named name (NULL: none), at ts. 0, or -1 when out of memory. */
int ptlog_threads_count(ptlog_threads *t, uint32_t pid, uint64_t tid, uint32_t ktid, const char *name, uint64_t ts);
/* Sorts the records by pid, first timestamp, tid (after the counting). */
void ptlog_threads_sort(ptlog_threads *t);
void ptlog_threads_free(ptlog_threads *t);

/* ---- event sources (src_ptl.c, json_in.c, merge.c; the event loop in src.c) ---------------------------------------- */

typedef struct ptlog_src ptlog_src;
struct ptlog_src {
    const char *name;          /* for messages */
    tracelog_metadata meta;
    uint16_t format_major, format_minor;
    int seekable;
    int upfront;               /* event types and status are complete before the first event */
    int damaged;               /* the open found damage: types may be lost with it */
    uint64_t total_events;     /* expected count for progress, 0 if unknown */
    /* 1 event, 0 end, or an exit code > 1 negated (-3, -5, ...) after printing. */
    int (*next)(ptlog_src *s, tracelog_event *ev);
    /* Name of id, or NULL. */
    const char *(*type_name)(ptlog_src *s, uint32_t id);
    /* Payload schema the source stores for id, or NULL. Borrowed, valid until close. */
    const tracelog_schema *(*type_schema)(ptlog_src *s, uint32_t id);
    size_t (*type_count)(ptlog_src *s);
    void (*type_at)(ptlog_src *s, size_t i, uint32_t *id, const char **name);
    void (*get_status)(ptlog_src *s, tracelog_log_status *st);
    /* Name of ev's thread, or NULL (unknown, or a source without thread names: the member is NULL). */
    const char *(*thread_name)(ptlog_src *s, const tracelog_event *ev);
    /* 1 when thread_name's texts neither change nor move until close (a .ptl reader's are borrowed until
       tracelog_reader_close): the same address is the same name. 0 (zeroed): compared by content. */
    int thread_names_stable;
    /* The same for type_name's texts: the same address is the same name until close (a .ptl reader's). */
    int type_names_stable;
    /* 1 when type_name and type_schema may be called from other threads while events are read (the tables
       never change, and a lookup moves nothing: a seekable .ptl log). 0 (zeroed): the reading thread's only. */
    int lookups_shared;
    /* Formatting goes on the CPUs spare: the source stops its own threads there unless told to run them. NULL:
       it has none. */
    void (*yield_cpus)(ptlog_src *s);
    /* Next event is the first with ts >= ns. 0, or -1 if not possible (then filter). */
    int (*seek_time)(ptlog_src *s, uint64_t ns);
    /* Stops the reading once what is left holds only events at or after ns (some such events may still
       come: the caller filters). NULL when the source cannot (a pipe, a merge, JSON). */
    void (*end_time)(ptlog_src *s, uint64_t ns);
    /* After the last event: warns about damage; PTLOG_EXIT_OK or PTLOG_EXIT_LOSS. */
    int (*finish)(ptlog_src *s);
    void (*close)(ptlog_src *s);
    struct ptlog_type_memo *memo; /* src.c's, while ptlog_src_events runs; NULL (zeroed) otherwise */
};

typedef enum ptlog_format {
    PTLOG_FMT_AUTO = 0,
    PTLOG_FMT_PTL,
    PTLOG_FMT_JSON,
    PTLOG_FMT_JSONL,
    PTLOG_FMT_CHROME,
    PTLOG_FMT_PERFETTO, /* an output only */
    PTLOG_FMT_TEXT /* dump's lines: an output only, not a --from or --to name */
} ptlog_format;

/* Parses a format name ("ptl", "json", "jsonl", "chrome", "perfetto"); PTLOG_FMT_AUTO if unknown. */
ptlog_format ptlog_format_parse(const char *name);
const char *ptlog_format_name(ptlog_format f);

/*
 * Opens path ("-": standard input) as a source of the given format
 * (PTLOG_FMT_AUTO: detected from the content, see input.c). On success *out
 * owns a source freed by its close(). Returns an exit code.
 */
int ptlog_src_open(const char *path, ptlog_format fmt, ptlog_src **out);
/* Opens a .ptl log only (info, verify): *reader stays owned by the source. */
int ptlog_src_open_ptl(const char *path, ptlog_src **out, tracelog_reader **reader);

/*
 * src.c: each id's name and schema, remembered while ptlog_src_events runs on
 * an upfront source (its types never change while events flow): looked up
 * inline for every event, the source asked once per id.
 */
#define PTLOG_MEMO_IDS 4096
struct ptlog_type_memo {
    unsigned char known[PTLOG_MEMO_IDS];
    const char *name[PTLOG_MEMO_IDS];
    const tracelog_schema *schema[PTLOG_MEMO_IDS];
};
void ptlog_src_memo_fill(ptlog_src *s, uint32_t id);

/* The name of id (NULL if unnamed). */
static inline const char *ptlog_src_type_name(ptlog_src *s, uint32_t id)
{
    if (!s->memo || id >= PTLOG_MEMO_IDS)
        return s->type_name(s, id);
    if (!s->memo->known[id])
        ptlog_src_memo_fill(s, id);
    return s->memo->name[id];
}

/* The schema src stores for event_id's type; NULL: untyped (no guess from a name, spec 5.6.6). */
static inline const tracelog_schema *ptlog_event_schema(ptlog_src *s, uint32_t id)
{
    if (!s->memo || id >= PTLOG_MEMO_IDS)
        return s->type_schema ? s->type_schema(s, id) : NULL;
    if (!s->memo->known[id])
        ptlog_src_memo_fill(s, id);
    return s->memo->schema[id];
}

/* The reader of a .ptl source, NULL for any other source. */
tracelog_reader *ptlog_ptl_reader(ptlog_src *s);
/* Another source over the same seekable .ptl file, with a reader of its own (opened again with the
   default options, as ptlog opens logs): closed before s. 0, or -1 (not such a source, or the open
   failed: nothing printed; no memory: printed). */
int ptlog_ptl_src_clone(ptlog_src *s, ptlog_src **out);
/* The message for a failed tracelog_reader_next (not TRACELOG_END); the exit code. */
int ptlog_ptl_read_error(const char *name, tracelog_status st);

/* Warns on stderr about every problem the reader found. Returns the count. */
uint64_t ptlog_report_problems(const char *name, const tracelog_reader *r);

/* How the log ended, for info and verify: clean, closed with a known loss, closed but damaged, not closed. */
const char *ptlog_shutdown_text(const tracelog_reader *r, const tracelog_reader_info *ri);

/* ---- input plumbing (input.c) ----------------------------------------------------- */

typedef struct ptlog_in {
    const char *name;
    int fd, own_fd;
    int seekable;
    unsigned char head[4096]; /* first bytes, for detection */
    size_t head_len, head_pos;
    uint64_t size;            /* regular file size, 0 otherwise */
} ptlog_in;

int ptlog_in_open(ptlog_in *in, const char *path);
/* Reads as if the head had never been looked at. Like read(2). */
long ptlog_in_read(ptlog_in *in, void *buf, size_t n);
void ptlog_in_close(ptlog_in *in);
ptlog_format ptlog_detect(const unsigned char *p, size_t n);
/* Whether the JSON object at p (its first n bytes) is a whole document: an "events" key at its top
   level, or it goes on past a newline (README, Input format detection). */
int ptlog_looks_like_document(const unsigned char *p, size_t n);

/* JSON sources (json_in.c): the input is already opened and detected. */
int ptlog_json_src_open(ptlog_in *in, int lines, ptlog_src **out);
/* 1 (the default): events are read in place when they are plain enough, jansson reads the others; 0: jansson
   reads every event. Both give the same events and errors: the JSON fuzzer checks it. */
extern int ptlog_json_fast_paths;
/* .ptl source from an opened input (src_ptl.c). */
int ptlog_ptl_src_open(ptlog_in *in, ptlog_src **out, tracelog_reader **reader);
/* Reads PTLOG_READ_AHEAD (src_ptl.c): 0, or PTLOG_EXIT_USAGE after a message. */
int ptlog_read_ahead_init(void);
/* The .ptl readers about to be opened (merge's inputs) share the read-ahead threads (src_ptl.c). */
void ptlog_read_ahead_share(size_t readers);

/* ---- event selection (select.c), shared by dump and filter ----------------------- */

/* where.c: --where field conditions (README.md, "Field conditions"). */
typedef struct ptlog_where ptlog_where;
/* Parses text; on a bad expression prints its column and returns PTLOG_EXIT_USAGE. */
int ptlog_where_parse(const char *text, ptlog_where **out);
/* 1 if ev's fields make the expression true, 0 if not, -1 out of memory. */
int ptlog_where_match(ptlog_where *w, ptlog_src *src, const tracelog_event *ev);
void ptlog_where_free(ptlog_where *w);
/* A where of its own (its bindings are a cache): for another thread. NULL without memory. */
ptlog_where *ptlog_where_clone(const ptlog_where *w);
/*
 * Checks the expression against every schema of src's event types: a field
 * that none has, or a name or text that no enum or flags field of that name
 * has among its values (a NAME against a number field), is a usage error,
 * printed with the close candidates. 0 or PTLOG_EXIT_USAGE.
 */
int ptlog_where_check(const ptlog_where *w, ptlog_src *src);

typedef struct ptlog_select {
    char **globs;
    size_t nglobs;
    uint32_t *pids;
    size_t npids;
    uint64_t *tids;
    size_t ntids;
    int no_system;
    ptlog_where *where;   /* --where, NULL if none */
    ptlog_timearg begin, end;
    uint64_t limit;       /* 0: no limit */
    int has_limit;
    /* resolved once the first event is known */
    uint64_t origin;      /* timestamp of the log's first event */
    uint64_t begin_ns, end_ns;
    int have_begin, have_end;
    int resolved;         /* ptlog_select_resolve ran: a later call changes nothing */
    uint64_t read;        /* events read before the one kept last */
    /* verdict per event id below 4096: 0 unknown, 1 keep, 2 drop */
    unsigned char verdict[4096];
    const char *verdict_name[4096];
} ptlog_select;

/* Option codes of the selection options (getopt_long values). */
enum {
    PTLOG_OPT_EVENT = 256,
    PTLOG_OPT_PID,
    PTLOG_OPT_TID,
    PTLOG_OPT_BEGIN,
    PTLOG_OPT_END,
    PTLOG_OPT_LIMIT,
    PTLOG_OPT_NO_SYSTEM,
    PTLOG_OPT_WHERE
};

/* Parses one selection option; 1 if it was one, 0 if not, -1 on a bad value (printed). */
int ptlog_select_option(ptlog_select *s, int opt, const char *arg);
/* Resolves relative times against the first event's timestamp. */
void ptlog_select_resolve(ptlog_select *s, uint64_t origin);
/* 1 if the event passes the selection (name may be NULL: unknown id). */
int ptlog_select_event(ptlog_select *s, const tracelog_event *ev, const char *name);
/* 1 if ptlog_select_event keeps every event (once resolved): the event loop then skips it. */
int ptlog_select_keeps_all(const ptlog_select *s);
/* Whether the event loop keeps ev: 1, 0, or -1 without memory (--where). every: ptlog_select_keeps_all. */
static inline int ptlog_select_keep(ptlog_select *s, int every, ptlog_src *src, const tracelog_event *ev,
                                    const char *name)
{
    int keep = every || ptlog_select_event(s, ev, name);
    return keep && s->where ? ptlog_where_match(s->where, src, ev) : keep;
}
int ptlog_select_is_trivial(const ptlog_select *s);
void ptlog_select_free(ptlog_select *s);

/* src.c: runs the source to its end through `each` (name: the event's type name, or NULL); the exit code. */
int ptlog_src_events(ptlog_src *src, ptlog_select *sel,
                     int (*each)(void *ctx, const tracelog_event *ev, const char *name), void *ctx);

/*
 * A sink: what each event kept becomes (dump's lines, JSON's objects),
 * written into out. A sink that can format on several threads (par.c)
 * gives copy, resume and free_copy; else they are NULL.
 */
typedef struct ptlog_sink {
    int (*each)(void *state, const tracelog_event *ev, const char *name);
    void *state;
    ptlog_out *out; /* where each writes */
    /* A state of its own, as state was before the first event, writing into out and reading src; NULL without
       memory. Its each must not fail (errors go to out's err). */
    void *(*copy)(const void *state, ptlog_out *out, ptlog_src *src);
    /* state as after `kept` events, the last at prev_ts (--delta's previous time, JSON's separating comma). */
    void (*resume)(void *state, uint64_t kept, uint64_t prev_ts);
    void (*free_copy)(void *state);
    /* Reading in ranges (parts.c): a range's text is made from a state resumed as after 0 events, and
       `joint` goes between the texts of two ranges that both hold events ("" for none). NULL when a
       text depends on the events before it (--delta): not in ranges. */
    const char *joint;
} ptlog_sink;

/* ptlog_src_events into sink, formatting on PTLOG_FORMAT_THREADS threads when sink and src allow: the
   output is the one thread's, byte for byte. */
int ptlog_sink_events(ptlog_src *src, ptlog_select *sel, const ptlog_sink *sink);
#define PTLOG_FORMAT_THREADS_MAX 16
/* parts.c: the log read in ranges on `threads` threads besides the calling one; the exit code, or -1
   (nothing read, or only the first event, read again) when it does not apply. */
int ptlog_parts_events(ptlog_src *src, ptlog_select *sel, const ptlog_sink *sink, int threads);
/* Reads PTLOG_FORMAT_THREADS (call before any command runs): 0, or PTLOG_EXIT_USAGE after a message. */
int ptlog_format_threads_init(void);

/* ---- threads (workers.c) ------------------------------------------------------ */

/* A number of threads: digits only, 0 to max. 0 with *n set, or -1. */
int ptlog_parse_threads(const char *v, int max, int *n);
/* The CPUs this process may run on (1 when unknown). */
int ptlog_cpus(void);
/* pthread_create of a thread with every signal blocked: handlers (cleanup.c) run on ptlog's own thread. 0 or
   an errno. */
int ptlog_thread_start(pthread_t *t, void *(*fn)(void *), void *arg);

/* ---- sinks --------------------------------------------------------------------------- */

/* How JSON outputs write an event's ts (--ts; README.md, "JSON schema"). */
typedef enum ptlog_ts_form {
    PTLOG_TS_NS = 0,  /* integer ns since the epoch (the default) */
    PTLOG_TS_TEXT,    /* "SECONDS.NNNNNNNNN" */
    PTLOG_TS_RELATIVE /* signed integer ns since the creation time (format.ts_origin_ns) */
} ptlog_ts_form;

/* The options of the text sink (dump), and ts of the JSON ones. */
typedef struct ptlog_dump_opts {
    int relative;
    int local;
    int color; /* -1: only on a terminal and without NO_COLOR (decided by the sink), 0 never, 1 always */
    int delta; /* also the time since the previous event printed */
    int hex;   /* payloads raw, not decoded with their schemas */
    ptlog_ts_form ts; /* JSON outputs */
} ptlog_dump_opts;

typedef struct ptlog_info_opts {
    int json;
    int quick;   /* from the block index only */
    int threads; /* per-thread table */
} ptlog_info_opts;

/* convert.c: dump is convert to PTLOG_FMT_TEXT */
int ptlog_cmd_dump(const char *path, ptlog_format from, ptlog_select *sel, const ptlog_dump_opts *opts,
                   const char *out_path);
/* dump.c: the text sink, one line per event of src. */
int ptlog_write_text(ptlog_src *src, ptlog_out *out, ptlog_select *sel, const ptlog_dump_opts *opts);
/* info.c */
int ptlog_cmd_info(const char *path, const ptlog_info_opts *opts, const char *out_path);
/* verify.c */
int ptlog_cmd_verify(const char *path, int quiet);
/* convert.c */
int ptlog_cmd_convert(const char *in_path, ptlog_format from, ptlog_format to, const char *out_path,
                      ptlog_select *sel, const ptlog_dump_opts *opts);
/* Writes src's selected events to out_path in format `to` (PTLOG_FMT_TEXT: with the options text; JSON with
   its ts; NULL: the defaults), then closes src. Exit code. */
int ptlog_convert_src(ptlog_src *src, ptlog_format to, const char *out_path, ptlog_select *sel,
                      const ptlog_dump_opts *text);
/* Merges the inputs by timestamp (merge.c) into out_path, in format `to`. */
int ptlog_cmd_merge(char **paths, size_t n, ptlog_format to, const char *out_path, ptlog_select *sel,
                    const ptlog_dump_opts *opts);
/* merge.c: a source of the events of n inputs in timestamp order, types unified by name. */
int ptlog_merge_src_open(char **paths, size_t n, ptlog_src **out);
/* record.c: ptlog as a trace controller. argv[0] is the command's name. */
int ptlog_cmd_record(int argc, char **argv);
int ptlog_cmd_attach(int argc, char **argv);

/* json_out.c: JSON document (lines = 0) or JSON Lines (lines = 1) of all events of src, ts written as asked. */
int ptlog_write_json(ptlog_src *src, ptlog_out *out, int lines, ptlog_select *sel, ptlog_ts_form ts);
/* Appends a JSON string literal of s[0..n) to out. */
void ptlog_json_string(ptlog_out *out, const char *s, size_t n);
/* Writes the "attributes" object of m (no key). */
void ptlog_json_attributes(ptlog_out *out, const tracelog_metadata *m);
/* Writes a u64 value (as a "0x..." string above INT64_MAX, which JSON parsers cannot hold). */
void ptlog_json_u64(ptlog_out *out, uint64_t v);
/* JSON string of s[0..n) into dst (room for 6n + 2), its length; invalid UTF-8 becomes U+FFFD. */
size_t ptlog_json_quote(const char *s, size_t n, char *dst);
/*
 * Writes the JSON members "name":value of f's present fields (README.md,
 * "JSON schema"), each key prefixed by key_prefix, with a leading comma when
 * comma is set (then a field named like one of chrome's own args keys, with
 * an empty prefix, becomes "field_NAME"). Field by field through the schema:
 * what chrome.c falls back to without memory for a plan.
 */
void ptlog_json_field_members(ptlog_out *out, const tracelog_fields *f, const char *key_prefix, int comma);
/* Whether a field named name must not take its own name as a key of Chrome's args (chrome.c). */
int ptlog_chrome_reserved_key(const char *name);
/* chrome.c */
int ptlog_write_chrome(ptlog_src *src, ptlog_out *out, ptlog_select *sel);
/* perfetto.c: Perfetto's protobuf trace (tools/ptlog/README.md, "Perfetto trace"). */
int ptlog_write_perfetto(ptlog_src *src, ptlog_out *out, ptlog_select *sel);

/* ---- processes, threads and slices of the trace viewers' outputs (tracks.c) ---------- */

#define PTLOG_TRACKS_MAX_DEPTH 256 /* open slices per thread; deeper begins are instant events */
/* Threads (over all processes) one output draws: about 400 bytes of state each. More is an error (README.md,
   "Limits"): a log of a few KiB can name a million threads, and no viewer shows that many tracks. */
#define PTLOG_TRACKS_MAX_THREADS 65536
#define PTLOG_TRACKS_MAX_OPEN (1u << 20) /* open slices over all threads; past them begins are instant events */

typedef struct ptlog_track_thread {
    uint64_t pthread;
    uint32_t ktid;     /* kernel thread id, 0 unknown */
    uint32_t tid;      /* as written: the kernel tid, or a small number unique in the process */
    uint32_t serial;   /* 1, 2, ... over processes and threads, in order of creation */
    uint32_t *open;    /* event ids of the open slices, innermost last */
    size_t nopen, cap;
} ptlog_track_thread;

typedef struct ptlog_track_process {
    uint32_t pid;      /* as recorded */
    uint32_t out_pid;  /* as written: below 2^31 */
    uint32_t serial;
    uint32_t nthreads;
    uint32_t next_tid;        /* the next small number to try for a thread without kernel tid */
    ptlog_idmap thread_index; /* pthread -> index in threads (its latest thread) */
    ptlog_idmap tids_taken;   /* tids written for this process */
    ptlog_track_thread *threads;
    size_t cap;
} ptlog_track_process;

/* Called once per new process (thread NULL) and thread, before its first event; non-zero: out of memory. */
typedef int (*ptlog_track_fn)(void *ctx, const ptlog_track_process *p, const ptlog_track_thread *t);
/* A slice still open at the end: its base name name[0..n) ("" if its type has no name). */
typedef void (*ptlog_close_fn)(void *ctx, const ptlog_track_process *p, const ptlog_track_thread *t,
                               const char *name, size_t n);

/* A type name's shape as a slice's: its length, and X's length in "X:begin" / "X.begin" and in "X:end" / "X.end" (0: not so). */
typedef struct ptlog_slice_shape {
    const char *name; /* NULL: an empty slot */
    size_t len, begin, end;
    char begin_sep, end_sep;
} ptlog_slice_shape;
#define PTLOG_SHAPE_SLOTS 64

typedef struct ptlog_tracks {
    ptlog_src *src;
    ptlog_track_fn on_new;
    void *ctx;
    ptlog_idmap process_index; /* pid -> index in processes */
    ptlog_track_process *processes; /* moves as it grows: pointers are valid until the next new process */
    size_t nprocesses, cap;
    uint32_t big_pids;         /* pids above INT32_MAX renumbered so far */
    uint32_t serials;
    size_t nthreads, nopen;    /* over all processes */
    int too_many;              /* ptlog_tracks_place failed for PTLOG_TRACKS_MAX_THREADS, not for memory */
    /* The last event's process and thread (events come in runs): indexes, which growth does not move. */
    size_t last_process, last_thread;
    int have_last;
    ptlog_slice_shape shapes[PTLOG_SHAPE_SLOTS]; /* by the type name's address: the source's names stay put */
} ptlog_tracks;

void ptlog_tracks_init(ptlog_tracks *t, ptlog_src *src, ptlog_track_fn on_new, void *ctx);
/* The process of pid, created on first use; NULL when out of memory. */
ptlog_track_process *ptlog_tracks_process(ptlog_tracks *t, uint32_t pid);
/* The thread of ev in p, created on first use; NULL when out of memory or past PTLOG_TRACKS_MAX_THREADS. */
ptlog_track_thread *ptlog_tracks_thread(ptlog_tracks *t, ptlog_track_process *p, const tracelog_event *ev);
/* Length of X in "X:WORD" or "X.WORD", its separator in *sep; 0 if name is not of that form. */
size_t ptlog_slice_base_len(const char *name, const char *word, char *sep);
/*
 * Where ev goes: its process and thread (created on first use) and what it
 * does there: 'B' opens a slice, 'E' closes the innermost one, 'i' is an
 * instant; *len is the length of the name to show (a slice's base name).
 * *name NULL (an id the log does not name) becomes "event#ID", written in
 * unknown. -1 when out of memory, or (too_many set) for a thread past
 * PTLOG_TRACKS_MAX_THREADS: ptlog_tracks_error says which.
 */
int ptlog_tracks_place(ptlog_tracks *t, const tracelog_event *ev, const char **name, char unknown[32], size_t *len,
                       ptlog_track_process **p, ptlog_track_thread **th);
/* After ptlog_tracks_place's -1: reports it (the source's name, what to do) and returns the exit status. */
int ptlog_tracks_error(const ptlog_tracks *t);
/* Calls fn for every slice still open, innermost first, and closes it. */
void ptlog_tracks_close_open(ptlog_tracks *t, ptlog_close_fn fn, void *ctx);
void ptlog_tracks_free(ptlog_tracks *t);

/* fields.c: typed payloads (README.md, "Typed events"). */
typedef void (*ptlog_name_writer)(void *ctx, uint32_t id, const char *name);
/* Decodes ev with ptlog_event_schema's schema into *f: 1, or 0 when untyped. */
int ptlog_event_fields(ptlog_src *src, const tracelog_event *ev, tracelog_fields *f);
/* Calls fn with tracelog_fields_format's text of present field i. 0, or -1 (no memory). */
int ptlog_field_text(const tracelog_fields *f, size_t i, void (*fn)(void *ctx, const char *s, size_t n),
                     void *ctx);
/*
 * A schema's fields as dump and JSON print them, resolved once per schema
 * (not per event): type, where the payload holds each, and the text before
 * its value (" name = ", ", name = "; "\"name\":", ",\"name\":").
 */
#define PTLOG_FIELD_HEAD 80 /* ", " + a name (63 bytes at most) + " = ", rounded up to 16 (ptlog_copy_blocks) */
typedef struct ptlog_field_plan {
    tracelog_field_type type;
    uint32_t offset, size; /* size 0: variable, the rest of the payload */
    const char *name;      /* the schema's (borrowed as the schema is) */
    size_t name_len;
    uint8_t dump_len, json_len;
    char dump_head[PTLOG_FIELD_HEAD], json_head[PTLOG_FIELD_HEAD];
    /* Chrome's args keys: "NAME": ("field_NAME": for a name Chrome's own args keys take) and an E's
       "end_NAME": (chrome.c) */
    uint8_t chrome_len[2];
    char chrome_head[2][PTLOG_FIELD_HEAD];
} ptlog_field_plan;
typedef struct ptlog_plan {
    const tracelog_schema *schema;
    size_t n;
    ptlog_field_plan *f;
    /* When every field is a number or char text: the bytes the fields' text may take at most (with the
       blocks the writers copy past their end), so that an event's fields are written into one reservation
       (ptlog_out_room); else 0, and each is written through the output. */
    uint32_t dump_room, json_room;
} ptlog_plan;
/* The plans of the schemas seen, by schema (zero-initialise; ptlog_plans_free). */
typedef struct ptlog_plans {
    ptlog_by_schema index; /* schema -> its plan in v */
    ptlog_plan *v;
} ptlog_plans;
const ptlog_plan *ptlog_plan_make(ptlog_plans *ps, const tracelog_schema *s);
/* s's plan (made the first time); NULL when out of memory. Inline: once per typed event. */
static inline const ptlog_plan *ptlog_plan_of(ptlog_plans *ps, const tracelog_schema *s)
{
    size_t i = ptlog_by_schema_find(&ps->index, s);
    return i != SIZE_MAX ? &ps->v[i] : ptlog_plan_make(ps, s);
}
void ptlog_plans_free(ptlog_plans *ps);
/* An f32 (size 4) or f64 field at p, as a double (an f32 widened exactly). */
static inline double ptlog_load_float(const uint8_t *p, size_t size)
{
    uint64_t bits = ptlog_load_le(p, size);
    if (size == 4) {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, sizeof f);
        return f;
    }
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

/* An f32 or f64 field at p as its text (tracelog_double_text) into out[0..TRACELOG_DOUBLE_TEXT_MAX); its length. */
static inline size_t ptlog_plan_float_text(const ptlog_field_plan *fp, const uint8_t *p, char *out)
{
    double v = ptlog_load_float(p, fp->size);
    return fp->size == 4 ? tracelog_float_text((float)v, out) : tracelog_double_text(v, out);
}

/* A field at p (where the plan puts it in the payload) as an unsigned, or a sign-extended signed, integer. */
uint64_t ptlog_plan_load(const ptlog_field_plan *fp, const uint8_t *p);
/*
 * A char field's text p[0..*n) up to its first NUL (*n becomes its length):
 * written in double quotes in one copy, and 1, when it is plain ASCII
 * (ptlog_plain_ascii, at most 256 bytes: most are); else 0, nothing
 * written (the caller escapes it).
 */
int ptlog_put_plain_text(ptlog_out *out, const char *p, size_t *n);
/* The same written at o (room for PTLOG_PLAIN_TEXT_ROOM bytes): the end of the text, or NULL. */
char *ptlog_plain_text_at(char *o, const char *p, size_t *n);
#define PTLOG_PLAIN_TEXT_ROOM (256 + 2)
/*
 * JSON's "name":value members of f, whose plan has a json_room, written into one reservation
 * (integers past 2^53, nan and inf as strings; text to escape, and those strings, through the
 * output). Dump's fields are written the same way by ptlog_fields_dump.
 */
void ptlog_plan_members(ptlog_out *out, const ptlog_plan *plan, const tracelog_fields *f);
/* Present field i's JSON value, through its plan fp (f's schema's): what "fields" and Chrome's args hold. */
void ptlog_json_plan_value(ptlog_out *out, const ptlog_field_plan *fp, const tracelog_fields *f, size_t i);
#define PTLOG_JSON_SAFE_INT ((uint64_t)1 << 53) /* larger integers lose digits in doubles */
/* The integer (sign neg, magnitude mag) at q (room for 32 bytes), in JSON quoted past 2^53: its end. */
char *ptlog_integer_at(char *q, int neg, uint64_t mag, int json);

/*
 * Writes "[ SIZE-FLAG] { field = value, ... }" for a typed event and
 * returns 1; returns 0, writing nothing, for an untyped one. Event names in
 * event sets are written by put_name (name NULL for an id src does not name).
 * plans: the schemas' plans, kept by the caller across events.
 */
int ptlog_fields_dump(ptlog_out *out, ptlog_src *src, ptlog_plans *plans, const tracelog_event *ev,
                      ptlog_name_writer put_name, void *ctx);

/* ptl_out.c: a new .ptl log of the selected events, with src's attributes and types. */
int ptlog_write_ptl(ptlog_src *src, ptlog_out *out, ptlog_select *sel);

/* Largest event payload ptlog reads or writes: what a .ptl chunk of the largest size (16 MiB) holds. */
#define PTLOG_PAYLOAD_MAX ((16u << 20) - 75u)

/* Chunk size for a log holding payloads of the source's max_data_size. */
uint32_t ptlog_chunk_size_for(const tracelog_metadata *m);
/* Reports a writer failure on out_name and returns its exit code. */
int ptlog_writer_error(const char *out_name, tracelog_writer *w, tracelog_status st);
/* Defines event type id in w. What the input asks and no log can hold (a name changed, more types or
   schema text than format-spec 9.1 allows) is reported on in_name, exit 3; other failures as above. */
int ptlog_writer_define(tracelog_writer *w, const char *in_name, const char *out_name, uint32_t id,
                        const char *name, const char *schema);

/* tracelog_policy_name, or "unknown" for a value read from a damaged file (info and JSON output). */
static inline const char *ptlog_policy_text(tracelog_policy p)
{
    const char *name = tracelog_policy_name(p);
    return name ? name : "unknown";
}

#endif
