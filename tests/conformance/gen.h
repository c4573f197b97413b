/*
 * The vector builder: writes .ptl bytes from the specification
 * (format-spec/ptl-format.md) with its own encoders, independent of
 * libtracelog's writer, and keeps the reading the specification requires
 * (vec_reading) next to them. Valid blocks update the expected reading as
 * the spec's reading rules say; damage is declared by each vector.
 */
#ifndef TL_VEC_GEN_H
#define TL_VEC_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "vec_out.h"

typedef struct bytes {
    uint8_t *p;
    size_t len, cap;
} bytes;

void b_put(bytes *b, const void *p, size_t n);
void b_u8(bytes *b, uint8_t v);
void b_u32(bytes *b, uint32_t v);
void b_u64(bytes *b, uint64_t v);
void b_fill(bytes *b, uint8_t v, size_t n);
void b_free(bytes *b);

/* CBOR writers: shortest heads unless told the width (1, 2, 4, 8 bytes of argument, 0: in the head). */
void cb_head(bytes *b, unsigned major, uint64_t arg);
void cb_head_w(bytes *b, unsigned major, uint64_t arg, int width);
void cb_uint(bytes *b, uint64_t v);
void cb_text(bytes *b, const char *s);
void cb_textn(bytes *b, const void *s, size_t n);
void cb_map(bytes *b, uint64_t pairs);
void cb_array(bytes *b, uint64_t items);
void cb_bool(bytes *b, int v);
void cb_raw(bytes *b, const char *hex); /* hex digits, spaces ignored */

/* Where a block goes and how it is spoiled. */
typedef struct bopt {
    int has_seq;
    uint64_t seq;
    int has_at; /* write at this offset (ring), not at the end of the file */
    uint64_t at;
    uint16_t flags;
    uint32_t reserved;
    int has_len; /* declare this payload_len instead of the real one */
    uint32_t len;
    int bad_header_crc, bad_payload_crc;
    uint8_t pad_byte; /* value of the alignment padding */
    int no_apply;     /* the expected reading ignores this block */
} bopt;

/* The vector being built. */
typedef struct vec {
    const char *name, *about;
    bytes file;
    uint64_t salt;
    uint32_t salt32, header_size;
    int layout;
    uint64_t next_seq;
    vec_reading want;
    int have_meta, have_status, closed, clean_set, clean_value;
    uint64_t status_seq;
    uint32_t max_block_size, max_chunk_size, max_event_types, max_threads; /* 0: the reader's default */
    /* What a trailer repeats: every type defined and every chunk written so far. */
    struct { uint32_t id; const char *name; } defined[64];
    size_t ndefined;
    struct { uint64_t offset, seq, min_ts, max_ts; uint32_t count; } index[64];
    size_t nindex;
} vec;

extern vec V;

/* Header fields; a zero field means "the default" only where said. */
typedef struct hopt {
    const char *magic;     /* NULL: the magic; else 8 bytes */
    int has_major, has_minor;
    uint16_t major, minor;
    uint32_t header_size;  /* 0: 64 */
    uint32_t incompat, compat;
    uint64_t salt;         /* 0: the default salt */
    uint64_t created_ns;   /* 0: T0 */
    uint8_t layout;
    uint8_t reserved41;
    uint32_t segment_size, segment_count;
    uint64_t ring_offset;
    int bad_crc;
} hopt;

#define SALT_DEFAULT 0x0123456789ABCDEFull
#define T0 1700000000000000000ull

void vec_begin(const char *name, const char *about);
void vec_header(const hopt *h); /* NULL: a sequential header with the defaults */
/* Declares what the spec says the reader finds besides what valid blocks give. */
void expect_problem(const char *condition, uint64_t offset, uint64_t length);
void expect_open(const char *condition);
void expect_clean(int clean);
void expect_event(const tracelog_event *ev);

/* Blocks. Each returns the block's offset. */
uint64_t w_block(uint16_t type, const void *payload, size_t len, const bopt *o);
/* Bytes the block written at off takes (from its declared payload_len). */
uint64_t span_at(uint64_t off);
uint64_t w_meta(const tracelog_metadata *m, const bopt *o);
uint64_t w_meta_cbor(const bytes *cbor, const bopt *o); /* no expectation: declare it */
/* The 14 pairs the reference writer writes, in its order (no map head). */
void meta_pairs(bytes *b, const tracelog_metadata *m);
uint64_t w_types(const uint32_t *ids, const char *const *names, size_t n, const bopt *o);
uint64_t w_status(const tracelog_log_status *st, const bopt *o);

/* A chunk being built: columns as section 6.3 lays them out. */
typedef struct chunk {
    uint64_t min_ts, max_ts;
    uint32_t count;
    bytes flags, col[6], data; /* col: ts, id, pid, tid, addr, len */
    uint8_t codec;
    uint8_t reserved[7];
    int zstd_checksum, zstd_no_size, zstd_extra_frame;
    int has_raw_size;
    uint32_t raw_size; /* declared instead of the real body size */
} chunk;

/* Encodes events as the reference writer does (flags only where a value changes). */
void chunk_events(chunk *c, const tracelog_event *ev, size_t n);
void chunk_free(chunk *c);
/* The CHUNK payload of c: chunk header and stored body. */
void chunk_payload(const chunk *c, bytes *payload);
/* Writes a CHUNK block of a whole payload (listed for the trailer); the first `deliver` events are expected. */
uint64_t w_payload(const bytes *payload, const tracelog_event *ev, long deliver, const bopt *o);
/* The CHUNK payload of ev in a keyed body (6.8), payloads as rows, stored raw, chunk_flags 0 (byte 26). */
void keyed_payload(const tracelog_event *ev, size_t n, bytes *payload);
/* Writes a CHUNK block; the first `deliver` events (-1: all) are expected. */
uint64_t w_chunk(chunk *c, const tracelog_event *ev, long deliver, const bopt *o);
/* Shorthand: the events encoded and written, all expected. */
uint64_t w_events(const tracelog_event *ev, size_t n, const bopt *o);

typedef struct topt {
    int no_status, no_types, junk_after_map, bad_end_magic, short_count;
    uint8_t pad_byte;
    const bytes *extra_key; /* a key and value appended to the map */
    int bad_status;         /* "status" holds a wrong type */
    int garbage_index;      /* index entries and trailer_offset that point nowhere */
    int no_index;           /* index_count 0, as format 1.1 writers write (5.5) */
} topt;
uint64_t w_trailer(const tracelog_log_status *st, const topt *t, const bopt *o);

void vec_end(void);

/* An event (kernel_tid 0: the 1.0 chunk body of section 6 does not store it). */
static inline tracelog_event ev_make(uint64_t ts, uint32_t id, uint32_t pid, uint64_t tid, uint64_t addr,
                                     uint32_t trunc, uint32_t len, const void *payload)
{
    return (tracelog_event){.timestamp_ns = ts, .event_id = id, .pid = pid, .tid = tid, .address = addr,
                            .truncation = trunc, .payload_len = len, .payload = payload};
}

/* Standard content. */
extern const tracelog_metadata META_STD;
void std_events(tracelog_event ev[3]);

/* Output: write the files into dir, or (check) compare them with those there. */
void gen_start(const char *dir, int check);
int gen_finish(void);
/* Files of dir that belong to no vector (README.md aside); returns how many, each printed. */
unsigned gen_check_extra_files(const char *dir, const char *const *names, size_t n);

#endif

