// kiln/runtime/cache/cache_auth.cpp — the fleet key (env or a private file) and HMAC-SHA-256 seals (OpenSSL's libcrypto, base/libcrypto.h).
#include "runtime/cache/cache_auth.h"

#include "base/error.h"
#include "base/libcrypto.h"
#include "base/read_file.h"

#include <fmt/format.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <array>
#include <cstring>

namespace kiln::rt {

namespace {

constexpr std::string_view kSealMagic = "KILNMAC1";
constexpr size_t kTagBytes = 32;

std::string tag_of(std::string_view key, std::string_view name, std::string_view entry) {
  std::string data;
  data.reserve(name.size() + 1 + entry.size());
  data.append(name);
  data.push_back('\0');  // the name cannot run into the entry
  data.append(entry);
  return hmac_sha256(key, data);
}

}  // namespace

std::string hmac_sha256(std::string_view key, std::string_view data) {
  const std::array<unsigned char, 32> md = hmac_sha256_bytes(key, data);
  static_assert(md.size() == kTagBytes);
  return std::string(reinterpret_cast<const char*>(md.data()), md.size());
}

std::optional<std::string> load_fleet_key(const Config& c, std::string* why) {
  std::string key;
  if (!c.remote_cache_key.empty()) {
    key = c.remote_cache_key;
  } else if (!c.remote_cache_key_file.empty()) {
    const std::string& path = c.remote_cache_key_file;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      *why = fmt::format("KILN_REMOTE_CACHE_KEY_FILE {}: {}", path, std::strerror(errno));
      return std::nullopt;
    }
    if (!S_ISREG(st.st_mode)) {
      *why = fmt::format("KILN_REMOTE_CACHE_KEY_FILE {} is not a regular file", path);
      return std::nullopt;
    }
    if (st.st_uid != ::geteuid()) {
      *why = fmt::format("KILN_REMOTE_CACHE_KEY_FILE {} is owned by uid {}, not by this user", path, st.st_uid);
      return std::nullopt;
    }
    if ((st.st_mode & 077) != 0) {
      *why = fmt::format("KILN_REMOTE_CACHE_KEY_FILE {} has mode {:03o}; others may read it (chmod 600 it)", path,
                         st.st_mode & 0777);
      return std::nullopt;
    }
    try {
      key = read_regular_file(path, "remote cache", {.max_bytes = 4096, .follow_symlinks = false});
    } catch (const Error& e) {
      *why = e.what();
      return std::nullopt;
    }
    while (!key.empty() && (key.back() == '\n' || key.back() == '\r')) key.pop_back();
  } else {
    *why = "no fleet key is configured (KILN_REMOTE_CACHE_KEY or KILN_REMOTE_CACHE_KEY_FILE)";
    return std::nullopt;
  }
  if (key.size() < kMinFleetKeyBytes) {
    *why = fmt::format("the fleet key has {} bytes; at least {} are needed (for example `openssl rand -hex 32`)",
                       key.size(), kMinFleetKeyBytes);
    return std::nullopt;
  }
  return key;
}

std::string seal_remote_entry(std::string_view key, std::string_view name, std::string_view entry) {
  std::string out(kSealMagic);
  out += tag_of(key, name, entry);
  out.append(entry);
  return out;
}

std::optional<std::string> open_remote_entry(std::string_view key, std::string_view name, std::string_view sealed,
                                             std::string* why) {
  if (sealed.size() < kSealMagic.size() + kTagBytes || sealed.substr(0, kSealMagic.size()) != kSealMagic) {
    *why = "not a sealed kiln entry";
    return std::nullopt;
  }
  const std::string_view tag = sealed.substr(kSealMagic.size(), kTagBytes);
  const std::string_view entry = sealed.substr(kSealMagic.size() + kTagBytes);
  const std::string want = tag_of(key, name, entry);
  if (!equal_in_constant_time(want.data(), tag.data(), kTagBytes)) {
    *why = "its MAC does not match the fleet key (forged, altered, or sealed under another key)";
    return std::nullopt;
  }
  return std::string(entry);
}

}  // namespace kiln::rt
