// kiln/base/libcrypto.cpp — libcrypto's digests, opened on first use (libcrypto.h).
#include "base/libcrypto.h"

#include "base/dl_symbol.h"
#include "base/error.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>

namespace kiln {

namespace {

struct Crypto {
  decltype(&OPENSSL_init_crypto) init = nullptr;
  decltype(&EVP_MD_fetch) fetch = nullptr;
  decltype(&EVP_Digest) digest = nullptr;
  decltype(&HMAC) hmac = nullptr;
  decltype(&CRYPTO_memcmp) memcmp = nullptr;
  const EVP_MD* sha256 = nullptr;  // fetched once: an implicit fetch per digest costs more than the digest
  std::string error;
};

const Crypto& crypto() {
  static const Crypto c = [] {
    Crypto c;
    std::string tried;
    static const char* const kPaths[] = {"libcrypto.so.3"};
    void* lib = dlopen_first(kPaths, tried);
    if (!lib) {
      c.error = "kiln hashes with OpenSSL's libcrypto, which could not be opened (apt-get install libssl3):" + tried;
      return c;
    }
    bind_symbol(lib, "libcrypto.so.3", "OPENSSL_init_crypto", c.init, c.error);
    bind_symbol(lib, "libcrypto.so.3", "EVP_MD_fetch", c.fetch, c.error);
    bind_symbol(lib, "libcrypto.so.3", "EVP_Digest", c.digest, c.error);
    bind_symbol(lib, "libcrypto.so.3", "HMAC", c.hmac, c.error);
    bind_symbol(lib, "libcrypto.so.3", "CRYPTO_memcmp", c.memcmp, c.error);
    if (!c.error.empty()) return c;
    // Without the system's openssl.cnf and the legacy table of every cipher and digest, which
    // kiln's two digests do not need: the first digest 1.6 -> 0.4 ms (measured with dlopen on
    // the bench host).
    c.init(OPENSSL_INIT_NO_LOAD_CONFIG | OPENSSL_INIT_NO_ADD_ALL_CIPHERS | OPENSSL_INIT_NO_ADD_ALL_DIGESTS, nullptr);
    c.sha256 = c.fetch(nullptr, "SHA256", nullptr);
    if (!c.sha256) c.error = "OpenSSL's default provider has no SHA256";
    return c;
  }();
  if (!c.error.empty()) throw Error(c.error);
  return c;
}

}  // namespace

std::array<unsigned char, 32> sha256(std::string_view bytes) {
  const Crypto& c = crypto();
  std::array<unsigned char, 32> md{};
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (c.digest(bytes.data(), bytes.size(), out, &len, c.sha256, nullptr) != 1 || len != md.size())
    internal_fail("SHA-256 failed in OpenSSL");
  std::copy(out, out + md.size(), md.begin());
  return md;
}

std::array<unsigned char, 32> hmac_sha256_bytes(std::string_view key, std::string_view data) {
  const Crypto& c = crypto();
  std::array<unsigned char, 32> md{};
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (!c.hmac(c.sha256, key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
              data.size(), out, &len) ||
      len != md.size())
    internal_fail("HMAC-SHA-256 failed in OpenSSL");
  std::copy(out, out + md.size(), md.begin());
  return md;
}

bool equal_in_constant_time(const void* a, const void* b, size_t n) { return crypto().memcmp(a, b, n) == 0; }

}  // namespace kiln
