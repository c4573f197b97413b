#include "zstd_frame.h"

#include <string.h>

static const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull,
                      P4 = 0x85EBCA77C2B2AE63ull, P5 = 0x27D4EB2F165667C5ull;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint32_t rd32(const uint8_t *p) { return (uint32_t)p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t round64(uint64_t acc, uint64_t in) { return rotl(acc + in * P2, 31) * P1; }
static uint64_t merge(uint64_t acc, uint64_t v) { return (acc ^ round64(0, v)) * P1 + P4; }

/* XXH64 as the xxHash specification gives it (zstd's content checksum is its low 32 bits). */
uint64_t xxh64(const uint8_t *p, size_t n, uint64_t seed)
{
    const uint8_t *end = p + n;
    uint64_t h;
    if (n >= 32) {
        uint64_t v1 = seed + P1 + P2, v2 = seed + P2, v3 = seed, v4 = seed - P1;
        for (; end - p >= 32; p += 32) {
            v1 = round64(v1, rd64(p));
            v2 = round64(v2, rd64(p + 8));
            v3 = round64(v3, rd64(p + 16));
            v4 = round64(v4, rd64(p + 24));
        }
        h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
        h = merge(merge(merge(merge(h, v1), v2), v3), v4);
    } else {
        h = seed + P5;
    }
    h += n;
    for (; end - p >= 8; p += 8)
        h = rotl(h ^ round64(0, rd64(p)), 27) * P1 + P4;
    if (end - p >= 4) {
        h = rotl(h ^ (rd32(p) * P1), 23) * P2 + P3;
        p += 4;
    }
    for (; p < end; p++)
        h = rotl(h ^ (*p * P5), 11) * P1;
    h ^= h >> 33;
    h *= P2;
    h ^= h >> 29;
    h *= P3;
    h ^= h >> 32;
    return h;
}

void zstd_frame(bytes *out, const uint8_t *content, size_t n, int checksum, int no_size, int extra_frame)
{
    b_u32(out, 0xFD2FB528u);
    /* Frame_Header_Descriptor: FCS_flag (bits 7-6), Single_Segment (5), Content_Checksum (2). */
    uint8_t fhd = (uint8_t)(checksum ? 0x04 : 0);
    if (no_size) {
        b_u8(out, fhd);
        b_u8(out, 0x30); /* Window_Descriptor: 2^(10+6) = 64 KiB */
    } else if (n < 256) {
        b_u8(out, fhd | 0x20);
        b_u8(out, (uint8_t)n);
    } else if (n < 65536 + 256) {
        b_u8(out, fhd | 0x20 | 0x40);
        b_u8(out, (uint8_t)(n - 256));
        b_u8(out, (uint8_t)((n - 256) >> 8));
    } else {
        b_u8(out, fhd | 0x20 | 0x80);
        b_u32(out, (uint32_t)n);
    }
    uint32_t bh = 1u | 0u << 1 | (uint32_t)n << 3; /* Last_Block, Raw_Block, Block_Size */
    b_u8(out, (uint8_t)bh);
    b_u8(out, (uint8_t)(bh >> 8));
    b_u8(out, (uint8_t)(bh >> 16));
    b_put(out, content, n);
    if (checksum)
        b_u32(out, (uint32_t)xxh64(content, n, 0));
    if (extra_frame) { /* an empty skippable frame */
        b_u32(out, 0x184D2A50u);
        b_u32(out, 0);
    }
}
