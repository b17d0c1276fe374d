// kiln/runtime/cache/compile_cache.h — the persistent compile cache: generated kernel modules'
// object code on disk and, optionally, in a shared Redis (runtime/cache/remote_cache.h).
//
// codegen_cpu keys each module by the SHA-256 of its IR and target (codegen_cpu/
// module_cache.h) and asks this cache before running LLVM; a hit skips optimization and
// code generation (compile() entries and eager kernels alike). An entry is one file
// `<dir>/<key>.kobj` holding a header (magic, format version, the full key), the object
// code and a checksum; anything that does not decode (truncated, corrupted, another
// version, another key, a file another user owns) is ignored, logged under KILN_LOG=cache,
// removed and rebuilt. Writes go to a private temporary file renamed into place, so readers
// never see half an entry and two processes writing one key both leave a whole one. The
// directory is created 0700 and refused (one warning, disk cache off) when another user owns
// it or others can write to it. A hit refreshes the entry's modification time; past
// KILN_CACHE_SIZE the least recently used entries are removed.
#pragma once

#include "base/object_store.h"
#include "runtime/config.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace kiln::rt {

class RemoteCache;

// The most object code one entry holds (a module's code or a cubin is far smaller): larger
// objects are not cached, and a file or reply claiming more is refused unread.
inline constexpr size_t kMaxCacheObjectBytes = size_t{32} << 20;
// The bytes of the largest entry under a key of `key_size` bytes.
size_t max_cache_entry_bytes(size_t key_size);

// The entry format shared by the disk and the remote cache.
std::string encode_cache_entry(std::string_view key, std::string_view object);
// The object code of an entry saved under `key`, or nothing with *why set.
std::optional<std::string> decode_cache_entry(std::string_view bytes, std::string_view key, std::string* why);

class DiskCache {
 public:
  // Checks (and creates, 0700) the directory; an unusable one warns once and disables itself.
  DiskCache(std::string dir, int64_t max_bytes);
  bool usable() const { return usable_; }
  const std::string& dir() const { return dir_; }
  std::string path_of(std::string_view key) const;

  std::optional<std::string> load(const std::string& key);
  void save(const std::string& key, std::string_view object);
  void remove(const std::string& key);
  // Removes least recently used entries until the total is at most max_bytes, and temporary
  // files older than an hour (writers killed before their rename). A save runs it when the
  // directory could have passed the limit since the last scan (its total then plus this
  // process's saves since), and at least hourly.
  void evict();

 private:
  std::string dir_;
  int64_t max_bytes_;
  bool usable_ = false;
  int64_t scanned_bytes_ = -1;   // the entries' total at the last scan (-1: none yet)
  int64_t saved_since_scan_ = 0;
  std::chrono::steady_clock::time_point last_scan_{};
};

// Disk first, then the remote cache; a remote hit is copied to disk.
class CompileCache final : public ObjectStore {
 public:
  explicit CompileCache(const Config& cfg);
  ~CompileCache() override;
  std::optional<std::string> load(const std::string& key, CodeSource& from) override;
  void save(const std::string& key, std::string_view object) override;
  void discard(const std::string& key, const std::string& why) override;
  DiskCache* disk() { return disk_.get(); }
  RemoteCache* remote() { return remote_.get(); }

 private:
  std::unique_ptr<DiskCache> disk_;
  std::unique_ptr<RemoteCache> remote_;
};

// The process's cache for the current configuration (rebuilt after
// reload_config_for_testing), or null when KILN_DISABLE_CACHE is set or neither a
// directory nor a remote cache is configured.
CompileCache* compile_cache();

}  // namespace kiln::rt
