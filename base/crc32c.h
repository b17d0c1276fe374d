// kiln/base/crc32c.h — CRC-32C (Castagnoli), the checksum of an exported program's sections.
//
// A package's checksums find damage (truncation, flipped bits, a partial copy); they do not
// authenticate (docs/export.md). CRC-32C is the checksum of iSCSI, ext4 and Btrfs metadata,
// computed by the SSE4.2 crc32 instruction at several GB/s, and needs no library (SHA-256
// would load libcrypto: 1.4 ms of a process that runs a package).
#pragma once

#include <cstdint>
#include <string_view>

namespace kiln {

uint32_t crc32c(std::string_view bytes);

// Tests only: the same with the 256-byte folds (AVX-512 hosts with VPCLMULQDQ) or without them.
uint32_t crc32c_for_testing(std::string_view bytes, bool fold);

// The CRC-32C of the bytes A then B, from crc32c(A), crc32c(B) and B's length (zlib's
// crc32_combine): long inputs hash in pieces on several threads and join here.
uint32_t crc32c_combine(uint32_t crc_a, uint32_t crc_b, uint64_t length_b);

}  // namespace kiln
