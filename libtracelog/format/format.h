/*
 * The .ptl format, major version 1 (1.0 and 1.1): file header and block
 * framing (format-spec/ptl-format.md sections 3 and 4). Pure encoding and
 * decoding of bytes in memory; no I/O.
 */
#ifndef TRACELOG_FORMAT_H
#define TRACELOG_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "tracelog/common.h"

/* "\x8BPTL\r\n\x1A\n": see the spec for why each byte is there. */
#define TL_FILE_MAGIC "\x8BPTL\r\n\x1A\n"
#define TL_FILE_MAGIC_LEN 8
#define TL_HEADER_SIZE 64        /* header size written by this version */
#define TL_HEADER_SIZE_MAX 4096  /* largest header a reader accepts */
#define TL_INCOMPAT_KEYED_CHUNKS 1u /* chunks may have the keyed body of format 1.1 (spec 6.8) */
#define TL_INCOMPAT_KNOWN TL_INCOMPAT_KEYED_CHUNKS /* incompatible feature bits this version understands */
/* Every ring segment the writer entered starts with a SEGMENT block, and the ring's newest block is
   followed by an END marker (format 1.1, spec 3.1, 7.4, 7.5). */
#define TL_COMPAT_SEGMENT_HEADERS 1u
#define TL_COMPAT_KNOWN TL_COMPAT_SEGMENT_HEADERS /* compatible feature bits this version writes */

/*
 * Limits shared by writer and reader (spec 9.1): a writer never writes more
 * than a reader with its default options accepts, so no name, schema or
 * thread definition written is refused by a default reader.
 */
#define TL_LOG_EVENT_TYPES_MAX 65536u      /* distinct event ids per log */
#define TL_LOG_SCHEMA_BYTES_MAX (4u << 20) /* canonical schema text per log */
#define TL_LOG_THREADS_MAX (1u << 20)      /* thread definitions per log */

#define TL_LAYOUT_SEQUENTIAL 0   /* blocks follow one another to the end of the file */
#define TL_LAYOUT_RING 1         /* durable region, then a ring of segments (LOOP logs) */

typedef struct tl_file_header {
    uint16_t major, minor;
    uint32_t header_size;
    uint32_t incompat_flags, compat_flags;
    uint64_t salt;
    uint64_t created_ns;
    uint8_t layout;
    uint32_t segment_size;
    uint64_t ring_offset;
    uint32_t segment_count;
} tl_file_header;

/* Writes the TL_HEADER_SIZE bytes of h (header_size forced to TL_HEADER_SIZE, CRC computed). */
void tl_header_encode(const tl_file_header *h, uint8_t out[TL_HEADER_SIZE]);

/*
 * Decodes a header from buf[0..len). Needs at least 16 bytes to learn the
 * header size; returns TRACELOG_E_TRUNCATED with *need set when len is short.
 * Checks magic, version, size, CRC, feature bits and ring geometry.
 */
tracelog_status tl_header_decode(const uint8_t *buf, size_t len, tl_file_header *h,
                                       size_t *need, tracelog_error *err);

/* The 32-bit seed of every block checksum, derived from the file's salt. */
static inline uint32_t tl_salt32(uint64_t salt) { return (uint32_t)(salt ^ (salt >> 32)); }

/* Block framing. */
#define TL_BLOCK_SYNC "\x8B" "BLK"
#define TL_BLOCK_HEADER_SIZE 32

enum tl_block_type {
    TL_BLOCK_METADATA = 1,
    TL_BLOCK_EVENT_TYPES = 2,
    TL_BLOCK_CHUNK = 3,
    TL_BLOCK_STATUS = 4,
    TL_BLOCK_TRAILER = 5,
    TL_BLOCK_PADDING = 6,
    TL_BLOCK_THREADS = 7, /* format 1.1 */
    TL_BLOCK_SEGMENT = 8, /* format 1.1: first block of a ring segment */
    TL_BLOCK_END = 9,     /* format 1.1: the END marker after a ring's newest block (no payload, its seq) */
};

typedef struct tl_block_header {
    uint16_t type;
    uint16_t flags;
    uint64_t seq;
    uint32_t payload_len;
    uint32_t payload_crc;
} tl_block_header;

/* Bytes a block with this payload occupies in the file (header, payload, padding to 8). */
static inline uint64_t tl_block_span(uint32_t payload_len)
{
    return TL_BLOCK_HEADER_SIZE + (((uint64_t)payload_len + 7) & ~(uint64_t)7);
}

/* Fills out[0..32) (the payload CRC must already be in h->payload_crc). */
void tl_block_header_encode(const tl_block_header *h, uint32_t salt32,
                                  uint8_t out[TL_BLOCK_HEADER_SIZE]);

typedef enum tl_block_check {
    TL_BLOCK_OK = 0,
    TL_BLOCK_BAD_SYNC,      /* not a block header (or never-written space) */
    TL_BLOCK_BAD_CRC,       /* header checksum mismatch */
} tl_block_check;

/* Validates and decodes a block header. ignore_crc skips the checksum test. */
tl_block_check tl_block_header_decode(const uint8_t in[TL_BLOCK_HEADER_SIZE],
                                            uint32_t salt32, int ignore_crc,
                                            tl_block_header *h);

uint32_t tl_block_payload_crc(uint32_t salt32, const void *payload, size_t len);

/* Trailer tail: the last 16 bytes of a cleanly closed sequential log. */
#define TL_END_MAGIC "\x8BPTLEND\n"
#define TL_INDEX_ENTRY_SIZE 40

#endif
