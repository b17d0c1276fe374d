// kiln/base/sha256.cpp — sha256_hex over OpenSSL's EVP digest.
#include "base/sha256.h"

#include "base/error.h"

#include <openssl/evp.h>

namespace kiln {

std::string sha256_hex(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr) != 1 || len != 32)
    internal_fail("SHA-256 failed in OpenSSL");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(64, '0');
  for (unsigned int i = 0; i < len; ++i) {
    hex[2 * i] = kHex[md[i] >> 4];
    hex[2 * i + 1] = kHex[md[i] & 15];
  }
  return hex;
}

}  // namespace kiln
