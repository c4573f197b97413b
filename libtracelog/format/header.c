/* The file header (format-spec section 3): encoding and checked decoding. */
#include "format/format.h"

#include <string.h>

#include "common/bytes.h"
#include "common/crc32c.h"
#include "common/error.h"

void tl_header_encode(const tl_file_header *h, uint8_t out[TL_HEADER_SIZE])
{
    memset(out, 0, TL_HEADER_SIZE);
    memcpy(out, TL_FILE_MAGIC, TL_FILE_MAGIC_LEN);
    tl_store16(out + 8, h->major);
    tl_store16(out + 10, h->minor);
    tl_store32(out + 12, TL_HEADER_SIZE);
    tl_store32(out + 16, h->incompat_flags);
    tl_store32(out + 20, h->compat_flags);
    tl_store64(out + 24, h->salt);
    tl_store64(out + 32, h->created_ns);
    out[40] = h->layout;
    tl_store32(out + 44, h->segment_size);
    tl_store64(out + 48, h->ring_offset);
    tl_store32(out + 56, h->segment_count);
    tl_store32(out + 60, tl_crc32c(0, out, 60));
}

tracelog_status tl_header_decode(const uint8_t *buf, size_t len, tl_file_header *h,
                                       size_t *need, tracelog_error *err)
{
    *need = 16;
    if (len < TL_FILE_MAGIC_LEN || memcmp(buf, TL_FILE_MAGIC, TL_FILE_MAGIC_LEN) != 0) {
        if (len < TL_FILE_MAGIC_LEN && memcmp(buf, TL_FILE_MAGIC, len) == 0)
            return tl_fail(err, TRACELOG_E_TRUNCATED, 0, 0, "file ends inside the header (%zu bytes)", len);
        return tl_fail(err, TRACELOG_E_BAD_MAGIC, 0, 0, "not a .ptl log: bad magic");
    }
    if (len < 16)
        return tl_fail(err, TRACELOG_E_TRUNCATED, 0, 0, "file ends inside the header (%zu bytes)", len);
    memset(h, 0, sizeof *h);
    h->major = tl_load16(buf + 8);
    h->minor = tl_load16(buf + 10);
    h->header_size = tl_load32(buf + 12);
    if (h->major != TRACELOG_FORMAT_MAJOR)
        return tl_fail(err, TRACELOG_E_UNSUPPORTED_VERSION, 0, 8,
                             "format version %u.%u: this reader supports %u.x",
                             h->major, h->minor, TRACELOG_FORMAT_MAJOR);
    if (h->header_size < TL_HEADER_SIZE || h->header_size > TL_HEADER_SIZE_MAX || h->header_size % 8)
        return tl_fail(err, TRACELOG_E_CORRUPT, 0, 12, "bad header size %u", h->header_size);
    *need = h->header_size;
    if (len < h->header_size)
        return tl_fail(err, TRACELOG_E_TRUNCATED, 0, 0, "file ends inside the header (%zu of %u bytes)",
                             len, h->header_size);
    uint32_t crc = tl_load32(buf + h->header_size - 4);
    if (crc != tl_crc32c(0, buf, h->header_size - 4))
        return tl_fail(err, TRACELOG_E_CHECKSUM, 0, h->header_size - 4, "header checksum mismatch");
    h->incompat_flags = tl_load32(buf + 16);
    h->compat_flags = tl_load32(buf + 20);
    h->salt = tl_load64(buf + 24);
    h->created_ns = tl_load64(buf + 32);
    h->layout = buf[40];
    h->segment_size = tl_load32(buf + 44);
    h->ring_offset = tl_load64(buf + 48);
    h->segment_count = tl_load32(buf + 56);
    if (h->incompat_flags & ~TL_INCOMPAT_KNOWN)
        return tl_fail(err, TRACELOG_E_UNSUPPORTED_VERSION, 0, 16,
                             "file needs features this reader lacks (incompatible flags 0x%x)",
                             h->incompat_flags);
    if (h->layout == TL_LAYOUT_SEQUENTIAL) {
        if (h->segment_size || h->ring_offset || h->segment_count)
            return tl_fail(err, TRACELOG_E_CORRUPT, 0, 44, "ring fields set in a sequential log");
    } else if (h->layout == TL_LAYOUT_RING) {
        if (h->segment_size < 4096 || h->segment_size % 8 || h->segment_count < 2 ||
            h->ring_offset < h->header_size || h->ring_offset % 8 || h->ring_offset > (1ull << 48))
            return tl_fail(err, TRACELOG_E_CORRUPT, 0, 44, "bad ring geometry");
    } else {
        return tl_fail(err, TRACELOG_E_UNSUPPORTED_VERSION, 0, 40, "unknown layout %u", h->layout);
    }
    return TRACELOG_OK;
}
