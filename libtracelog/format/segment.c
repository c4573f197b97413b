/* The SEGMENT block's payload (format-spec 7.4): encoding and checked decoding. */
#include "format/segment.h"

#include "common/bytes.h"

void tl_segment_encode(const tl_segment_info *s, uint8_t out[TL_SEGMENT_PAYLOAD_SIZE])
{
    tl_store32(out, s->index);
    tl_store32(out + 4, s->extent);
    tl_store64(out + 8, s->lap);
}

int tl_segment_decode(const uint8_t *p, uint32_t len, tl_segment_info *s)
{
    if (len != TL_SEGMENT_PAYLOAD_SIZE)
        return -1;
    s->index = tl_load32(p);
    s->extent = tl_load32(p + 4);
    s->lap = tl_load64(p + 8);
    return 0;
}
