// kiln/base/crc32c.cpp — CRC-32C with the SSE4.2 crc32 instruction (crc32c.h).
#include "base/crc32c.h"

#include <nmmintrin.h>

#include <cstring>

namespace kiln {

__attribute__((target("sse4.2"))) uint32_t crc32c(std::string_view bytes) {
  uint64_t crc = 0xffffffffu;
  const char* p = bytes.data();
  size_t n = bytes.size();
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    crc = _mm_crc32_u64(crc, word);
  }
  uint32_t c = static_cast<uint32_t>(crc);
  for (; n > 0; ++p, --n) c = _mm_crc32_u8(c, static_cast<unsigned char>(*p));
  return c ^ 0xffffffffu;
}

}  // namespace kiln
