/*
 * A reader's named conditions (spec section 8.8): their names and status
 * codes from the one table in condition.h, and which condition a failed
 * header check stands for.
 */
#include "format/condition.h"

static const struct {
    const char *name;
    tracelog_status code;
} conditions[] = {
#define TL_CONDITION_ROW_(e, name, code) {name, code},
    TL_CONDITION_MAP(TL_CONDITION_ROW_)
#undef TL_CONDITION_ROW_
};

const char *tl_condition_name(tl_condition c)
{
    return (unsigned)c < TL_COND_COUNT ? conditions[c].name : NULL;
}

tracelog_status tl_condition_status(tl_condition c)
{
    return (unsigned)c < TL_COND_COUNT ? conditions[c].code : TRACELOG_E_INVAL;
}

/*
 * tl_header_decode reports the offset of the field at fault: 8 major, 12
 * header_size, 16 incompatible_flags, 40 layout, 44 the ring fields, and
 * header_size - 4 (at least 60) the checksum. Each header check is thus one
 * (code, offset) pair; the conformance vectors hdr-* pin every one.
 */
tl_condition tl_header_condition(tracelog_status code, uint64_t offset)
{
    switch (code) {
    case TRACELOG_E_TRUNCATED: return TL_COND_TRUNCATED_HEADER;
    case TRACELOG_E_BAD_MAGIC: return TL_COND_BAD_MAGIC;
    case TRACELOG_E_CHECKSUM: return TL_COND_HEADER_CRC_MISMATCH;
    case TRACELOG_E_NOT_SEEKABLE: return TL_COND_RING_NOT_SEEKABLE;
    case TRACELOG_E_CORRUPT: return offset == 12 ? TL_COND_BAD_HEADER_SIZE : TL_COND_BAD_GEOMETRY;
    case TRACELOG_E_UNSUPPORTED_VERSION:
        return offset == 8 ? TL_COND_UNSUPPORTED_MAJOR : offset == 16 ? TL_COND_UNSUPPORTED_FEATURE
                                                                      : TL_COND_UNKNOWN_LAYOUT;
    default: return TL_COND_COUNT;
    }
}
