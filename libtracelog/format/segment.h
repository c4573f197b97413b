/*
 * The SEGMENT block of a ring (format-spec/ptl-format.md 2.2, 4.5, 7.4, 8.5;
 * format 1.1): the first block of every ring segment the writer enters,
 * saying which segment it is, on which lap, and how far earlier laps wrote
 * into it. Pure encoding and decoding; no I/O.
 */
#ifndef TRACELOG_SEGMENT_H
#define TRACELOG_SEGMENT_H

#include <stdint.h>

#include "format/format.h"

#define TL_SEGMENT_PAYLOAD_SIZE 16
/* Bytes the SEGMENT block takes at the start of each segment. */
#define TL_SEGMENT_SPAN (TL_BLOCK_HEADER_SIZE + TL_SEGMENT_PAYLOAD_SIZE)

typedef struct tl_segment_info {
    uint32_t index;  /* the segment's number, 0 .. segment_count - 1 */
    uint32_t extent; /* bytes of the segment written by earlier laps (0 on the first lap) */
    uint64_t lap;    /* passes of the writer over the ring before this one */
} tl_segment_info;

void tl_segment_encode(const tl_segment_info *s, uint8_t out[TL_SEGMENT_PAYLOAD_SIZE]);

/* 0, or -1 when the payload is not the 16 bytes of a SEGMENT block. */
int tl_segment_decode(const uint8_t *p, uint32_t len, tl_segment_info *s);

#endif
