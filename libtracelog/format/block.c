/* Block headers (format-spec section 4): encoding, decoding and the payload checksum. */
#include "format/format.h"

#include <string.h>

#include "common/bytes.h"
#include "common/crc32c.h"

void tl_block_header_encode(const tl_block_header *h, uint32_t salt32,
                                  uint8_t out[TL_BLOCK_HEADER_SIZE])
{
    memcpy(out, TL_BLOCK_SYNC, 4);
    tl_store16(out + 4, h->type);
    tl_store16(out + 6, h->flags);
    tl_store64(out + 8, h->seq);
    tl_store32(out + 16, h->payload_len);
    tl_store32(out + 20, h->payload_crc);
    tl_store32(out + 24, 0);
    tl_store32(out + 28, tl_crc32c(salt32, out, 28));
}

tl_block_check tl_block_header_decode(const uint8_t in[TL_BLOCK_HEADER_SIZE],
                                            uint32_t salt32, int ignore_crc,
                                            tl_block_header *h)
{
    if (memcmp(in, TL_BLOCK_SYNC, 4) != 0)
        return TL_BLOCK_BAD_SYNC;
    if (!ignore_crc && tl_load32(in + 28) != tl_crc32c(salt32, in, 28))
        return TL_BLOCK_BAD_CRC;
    h->type = tl_load16(in + 4);
    h->flags = tl_load16(in + 6);
    h->seq = tl_load64(in + 8);
    h->payload_len = tl_load32(in + 16);
    h->payload_crc = tl_load32(in + 20);
    /* flags and the reserved word are written as zero and ignored on read,
       so that a later minor version can use them. */
    return TL_BLOCK_OK;
}

uint32_t tl_block_payload_crc(uint32_t salt32, const void *payload, size_t len)
{
    return tl_crc32c(salt32, payload, len);
}
