/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI and ext4. */
#ifndef TRACELOG_CRC32C_H
#define TRACELOG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Continues a CRC-32C: crc is the value returned for the preceding bytes
 * (0 to start). tl_crc32c(0, "123456789", 9) == 0xE3069283.
 */
uint32_t tl_crc32c(uint32_t crc, const void *data, size_t len);

#endif
