// kiln/base/sha256.cpp — sha256_hex over libcrypto, opened on first use (base/libcrypto.h).
#include "base/sha256.h"

#include "base/libcrypto.h"

namespace kiln {

std::string sha256_hex(std::string_view bytes) {
  const std::array<unsigned char, 32> md = sha256(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(64, '0');
  for (size_t i = 0; i < md.size(); ++i) {
    hex[2 * i] = kHex[md[i] >> 4];
    hex[2 * i + 1] = kHex[md[i] & 15];
  }
  return hex;
}

}  // namespace kiln
