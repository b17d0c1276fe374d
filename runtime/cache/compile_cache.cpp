// kiln/runtime/cache/compile_cache.cpp — entry format, the disk cache, and the process's cache.
#include "runtime/cache/compile_cache.h"

#include "runtime/cache/cache_auth.h"
#include "runtime/log.h"
#include "runtime/cache/remote_cache.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <vector>

namespace kiln::rt {

namespace {

namespace fs = std::filesystem;

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'O', 'B', 'J', '\n'};
constexpr uint32_t kFormatVersion = 1;
constexpr const char* kSuffix = ".kobj";

// FNV-1a, 64 bits: detects damaged entries (not an adversary).
uint64_t checksum(std::string_view a, std::string_view b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (std::string_view s : {a, b})
    for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

template <typename T> void put(std::string& out, T v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
template <typename T> bool get(std::string_view& in, T& v) {
  if (in.size() < sizeof v) return false;
  std::memcpy(&v, in.data(), sizeof v);
  in.remove_prefix(sizeof v);
  return true;
}

std::string short_key(std::string_view key) { return std::string(key.substr(0, 16)); }

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

}  // namespace

size_t max_cache_entry_bytes(size_t key_size) {
  return sizeof kMagic + sizeof(uint32_t) * 2 + key_size + sizeof(uint64_t) * 2 + kMaxCacheObjectBytes;
}

std::string encode_cache_entry(std::string_view key, std::string_view object) {
  std::string out(kMagic, sizeof kMagic);
  put(out, kFormatVersion);
  put(out, static_cast<uint32_t>(key.size()));
  out += key;
  put(out, static_cast<uint64_t>(object.size()));
  put(out, checksum(key, object));
  out += object;
  return out;
}

std::optional<std::string> decode_cache_entry(std::string_view in, std::string_view key, std::string* why) {
  auto bad = [&](std::string reason) -> std::optional<std::string> {
    if (why) *why = std::move(reason);
    return std::nullopt;
  };
  if (in.size() < sizeof kMagic || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0) return bad("not a kiln cache entry");
  in.remove_prefix(sizeof kMagic);
  uint32_t version = 0, key_len = 0;
  if (!get(in, version)) return bad("truncated header");
  if (version != kFormatVersion) return bad(fmt::format("entry format {} (this kiln reads {})", version, kFormatVersion));
  if (!get(in, key_len) || in.size() < key_len) return bad("truncated key");
  if (in.substr(0, key_len) != key) return bad(fmt::format("saved under another key ({})", short_key(in.substr(0, key_len))));
  in.remove_prefix(key_len);
  uint64_t size = 0, sum = 0;
  if (!get(in, size) || !get(in, sum)) return bad("truncated header");
  if (size > kMaxCacheObjectBytes) return bad(fmt::format("the header claims {} bytes of code, more than an entry holds", size));
  if (in.size() != size) return bad(fmt::format("{} bytes of object code where the header says {}", in.size(), size));
  if (checksum(key, in) != sum) return bad("checksum mismatch");
  return std::string(in);
}

// ---- DiskCache -------------------------------------------------------------------------------

DiskCache::DiskCache(std::string dir, int64_t max_bytes) : dir_(std::move(dir)), max_bytes_(max_bytes) {
  std::error_code ec;
  const fs::path parent = fs::path(dir_).parent_path();
  if (!parent.empty()) fs::create_directories(parent, ec);
  if (::mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    warn_once("cache-dir:" + dir_, fmt::format("cannot create the compile cache directory {}: {}; the disk cache is off",
                                               dir_, std::strerror(errno)));
    return;
  }
  struct stat st {};
  if (::stat(dir_.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    warn_once("cache-dir:" + dir_, fmt::format("the compile cache path {} is not a directory; the disk cache is off", dir_));
    return;
  }
  if (st.st_uid != ::geteuid()) {
    warn_once("cache-dir:" + dir_, fmt::format("the compile cache directory {} is owned by uid {}, not by this user "
                                               "(uid {}); the disk cache is off",
                                               dir_, st.st_uid, ::geteuid()));
    return;
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    warn_once("cache-dir:" + dir_, fmt::format("others can write to the compile cache directory {} (mode {:03o}); "
                                               "the disk cache is off (chmod 700 it to use it)",
                                               dir_, st.st_mode & 0777));
    return;
  }
  usable_ = true;
}

std::string DiskCache::path_of(std::string_view key) const { return dir_ + "/" + std::string(key) + kSuffix; }

std::optional<std::string> DiskCache::load(const std::string& key) {
  if (!usable_) return std::nullopt;
  const std::string path = path_of(key);
  // O_NONBLOCK: a FIFO planted under an entry's name must not block the open (nor every
  // compile behind it); O_NOFOLLOW: a link is not an entry.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  if (fd < 0) {
    KILN_LOG_IF(LogChannel::Cache, "disk miss {}", short_key(key));
    return std::nullopt;
  }
  std::string why;
  std::optional<std::string> object;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
  } else if (st.st_uid != ::geteuid()) {
    why = fmt::format("owned by uid {}, not by this user", st.st_uid);
  } else if (static_cast<uint64_t>(st.st_size) > max_cache_entry_bytes(key.size())) {
    // Checked before a byte is allocated: a sparse file can claim any size.
    why = fmt::format("{} bytes, more than an entry of this key can hold ({})", st.st_size,
                      max_cache_entry_bytes(key.size()));
  } else {
    std::string bytes(static_cast<size_t>(st.st_size), '\0');
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += static_cast<size_t>(n);
    }
    bytes.resize(got);
    object = decode_cache_entry(bytes, key, &why);
    if (object) {
      const struct timespec times[2] = {{0, UTIME_OMIT}, {0, UTIME_NOW}};  // mtime = last use
      ::futimens(fd, times);
    }
  }
  ::close(fd);
  if (!object) {
    KILN_LOG_IF(LogChannel::Cache, "disk entry {} ignored ({}); it is rebuilt", short_key(key), why);
    ::unlink(path.c_str());
    return std::nullopt;
  }
  KILN_LOG_IF(LogChannel::Cache, "disk hit {} ({} bytes)", short_key(key), object->size());
  return object;
}

void DiskCache::save(const std::string& key, std::string_view object) {
  if (!usable_) return;
  if (object.size() > kMaxCacheObjectBytes) {
    KILN_LOG_IF(LogChannel::Cache, "disk entry {} not saved: {} bytes of code, more than an entry holds ({})",
                short_key(key), object.size(), kMaxCacheObjectBytes);
    return;
  }
  static std::atomic<uint64_t> counter{0};
  const std::string bytes = encode_cache_entry(key, object);
  const std::string tmp = fmt::format("{}/.tmp-{}-{}-{}", dir_, ::getpid(), counter.fetch_add(1), short_key(key));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  bool ok = fd >= 0 && write_all(fd, bytes);
  if (fd >= 0) ok = ::close(fd) == 0 && ok;
  ok = ok && ::rename(tmp.c_str(), path_of(key).c_str()) == 0;
  if (!ok) {
    KILN_LOG_IF(LogChannel::Cache, "disk entry {} not saved: {}", short_key(key), std::strerror(errno));
    ::unlink(tmp.c_str());
    return;
  }
  KILN_LOG_IF(LogChannel::Cache, "disk saved {} ({} bytes)", short_key(key), bytes.size());
  // The directory is scanned only when what it held at the last scan plus what this process
  // saved since could pass the limit, or an hour after the last scan (stale temporary files):
  // a scan per save made a run of 10,000 compiles quadratic.
  saved_since_scan_ += static_cast<int64_t>(bytes.size());
  const auto now = std::chrono::steady_clock::now();
  if (scanned_bytes_ < 0 || scanned_bytes_ + saved_since_scan_ > max_bytes_ || now - last_scan_ > std::chrono::hours(1))
    evict();
}

void DiskCache::remove(const std::string& key) {
  if (usable_) ::unlink(path_of(key).c_str());
}

void DiskCache::evict() {
  struct Item {
    fs::file_time_type used;
    uintmax_t size;
    fs::path path;
  };
  std::vector<Item> items;
  uintmax_t total = 0;
  std::error_code ec;
  const fs::file_time_type stale = fs::file_time_type::clock::now() - std::chrono::hours(1);
  for (const fs::directory_entry& e : fs::directory_iterator(dir_, ec)) {
    if (e.path().filename().string().rfind(".tmp-", 0) == 0) {
      // A writer killed between creating its temporary file and renaming it; live writers
      // rename within milliseconds.
      std::error_code e1;
      if (e.last_write_time(e1) < stale && !e1) fs::remove(e.path(), e1);
      continue;
    }
    if (e.path().extension() != kSuffix) continue;
    std::error_code e1, e2;
    const uintmax_t size = e.file_size(e1);
    const fs::file_time_type used = e.last_write_time(e2);
    if (e1 || e2) continue;  // removed meanwhile by another process
    items.push_back({used, size, e.path()});
    total += size;
  }
  last_scan_ = std::chrono::steady_clock::now();
  saved_since_scan_ = 0;
  scanned_bytes_ = static_cast<int64_t>(total);
  if (total <= static_cast<uintmax_t>(max_bytes_)) return;
  std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) { return a.used < b.used; });
  int removed = 0;
  for (const Item& it : items) {
    if (total <= static_cast<uintmax_t>(max_bytes_)) break;
    if (fs::remove(it.path, ec)) ++removed;
    total -= it.size;
  }
  scanned_bytes_ = static_cast<int64_t>(total);
  KILN_LOG_IF(LogChannel::Cache, "disk cache over {} bytes: {} least recently used entries removed", max_bytes_, removed);
}

// ---- CompileCache ----------------------------------------------------------------------------

CompileCache::CompileCache(const Config& cfg) {
  if (!cfg.cache_dir.empty()) disk_ = std::make_unique<DiskCache>(cfg.cache_dir, cfg.cache_size_bytes);
  if (!cfg.remote_cache.empty()) {
    // A shared cache anyone with write access to the server could fill is never trusted:
    // without the fleet key it is neither read nor written.
    std::string why;
    if (std::optional<std::string> key = load_fleet_key(cfg, &why))
      remote_ = std::make_unique<RemoteCache>(cfg.remote_cache, std::move(*key));
    else
      warn_once("remote-cache-key", fmt::format("KILN_REMOTE_CACHE is set, but {}; the remote compile cache is off "
                                                "(docs/security.md)", why));
  }
}

CompileCache::~CompileCache() = default;

std::optional<std::string> CompileCache::load(const std::string& key, CodeSource& from) {
  if (disk_) {
    if (std::optional<std::string> o = disk_->load(key)) {
      from = CodeSource::Disk;
      return o;
    }
  }
  if (!remote_) return std::nullopt;
  std::optional<std::string> bytes = remote_->get(key);
  if (!bytes) return std::nullopt;
  std::string why;
  std::optional<std::string> object = decode_cache_entry(*bytes, key, &why);
  if (!object) {
    KILN_LOG_IF(LogChannel::Cache, "remote entry {} ignored ({}); it is rebuilt", short_key(key), why);
    remote_->remove(key);
    return std::nullopt;
  }
  from = CodeSource::Remote;
  if (disk_) disk_->save(key, *object);
  return object;
}

void CompileCache::save(const std::string& key, std::string_view object) {
  if (disk_) disk_->save(key, object);
  if (remote_) remote_->set(key, encode_cache_entry(key, object));
}

void CompileCache::discard(const std::string& key, const std::string& why) {
  KILN_LOG_IF(LogChannel::Cache, "cached object {} does not link ({}); it is rebuilt", short_key(key), why);
  if (disk_) disk_->remove(key);
  if (remote_) remote_->remove(key);
}

CompileCache* compile_cache() {
  static std::mutex mu;
  static const Config* built_for = nullptr;
  static CompileCache* current = nullptr;
  static auto* all = new std::vector<std::unique_ptr<CompileCache>>();  // kept: compilations may hold one
  const Config& c = config();
  std::lock_guard<std::mutex> lock(mu);
  if (&c != built_for) {
    built_for = &c;
    current = nullptr;
    if (!c.disable_cache && (!c.cache_dir.empty() || !c.remote_cache.empty())) {
      all->push_back(std::make_unique<CompileCache>(c));
      current = all->back().get();
    }
  }
  return current;
}

}  // namespace kiln::rt
