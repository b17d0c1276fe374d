// kiln/runtime/cache/cache_auth.h — the fleet key and authenticated entries of the shared compile cache.
//
// Whoever can write to the Redis server behind KILN_REMOTE_CACHE could otherwise make every
// worker link and run their code. So a remote entry is sealed with HMAC-SHA-256 under a secret
// the fleet shares (KILN_REMOTE_CACHE_KEY, or a file named by KILN_REMOTE_CACHE_KEY_FILE that
// only its owner can read or write), over the entry's Redis key and its bytes: an entry that
// fails the check — forged, altered, or copied under another key — is never linked and never
// copied to the disk cache. Without a key the remote tier stays off (runtime/cache/remote_cache.h).
// Sealed form: "KILNMAC1" | 32-byte tag | the entry (runtime/cache/compile_cache.h's format).
#pragma once

#include "runtime/config.h"

#include <optional>
#include <string>
#include <string_view>

namespace kiln::rt {

// Keys shorter than this are refused: a guessable key is no key.
inline constexpr size_t kMinFleetKeyBytes = 16;

// The fleet key from the configuration: KILN_REMOTE_CACHE_KEY, else the contents of
// KILN_REMOTE_CACHE_KEY_FILE (a regular file owned by this user with no group or other
// permission bits, trailing newline dropped). Nothing, with *why, when neither is usable.
std::optional<std::string> load_fleet_key(const Config& c, std::string* why);

// HMAC-SHA-256 of `data` under `key` (32 bytes).
std::string hmac_sha256(std::string_view key, std::string_view data);

std::string seal_remote_entry(std::string_view key, std::string_view name, std::string_view entry);
// The entry inside `sealed` when its tag checks out for `name`; else nothing, with *why.
std::optional<std::string> open_remote_entry(std::string_view key, std::string_view name, std::string_view sealed,
                                             std::string* why);

}  // namespace kiln::rt
