/*
 * Zstandard frames (RFC 8878) written by hand, so that the vectors do not
 * depend on how a given libzstd version compresses: one Raw block holding
 * the content, the Frame_Content_Size present (unless no_size), an optional
 * content checksum (XXH64), and an optional empty skippable frame after it.
 */
#ifndef TL_VEC_ZSTD_FRAME_H
#define TL_VEC_ZSTD_FRAME_H

#include "gen.h"

void zstd_frame(bytes *out, const uint8_t *content, size_t n, int checksum, int no_size, int extra_frame);
uint64_t xxh64(const uint8_t *p, size_t n, uint64_t seed);

#endif
