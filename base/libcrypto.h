// kiln/base/libcrypto.h — SHA-256 and HMAC-SHA-256 from OpenSSL's libcrypto, opened on first use.
//
// libcrypto costs a process about 1.4 ms to load and relocate (measured by dlopen on the
// bench host), more than anything else libkiln links but oneDNN. Most processes never hash:
// an exported program's sections are checked with CRC32C (base/crc32c.h). So libcrypto is not
// linked: the first hash dlopens libcrypto.so.3, initializes it without the system's
// configuration or its legacy cipher tables, and binds the functions used here (their types
// come from OpenSSL's headers, so a mismatch does not compile). A host without it gets a
// kiln::Error saying so.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace kiln {

std::array<unsigned char, 32> sha256(std::string_view bytes);
std::array<unsigned char, 32> hmac_sha256_bytes(std::string_view key, std::string_view data);
// Compares in time independent of where the bytes differ (CRYPTO_memcmp).
bool equal_in_constant_time(const void* a, const void* b, size_t n);

}  // namespace kiln
