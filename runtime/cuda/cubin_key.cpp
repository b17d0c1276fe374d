// kiln/runtime/cuda/cubin_key.cpp — cubin cache keys, with NVRTC's version remembered by the compile cache.
#include "runtime/cuda/cubin_key.h"

#include "base/build_id.h"
#include "base/sha256.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/cache/compile_cache.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>

#ifndef KILN_VERSION_STRING
#define KILN_VERSION_STRING "unknown"
#endif

namespace kiln::rt {

namespace {

// The record's text: "<version>\n<library path>\n<identity of that file>".
std::optional<std::string> version_from_record(const std::string& record) {
  const size_t a = record.find('\n');
  const size_t b = a == std::string::npos ? a : record.find('\n', a + 1);
  if (b == std::string::npos || a == 0) return std::nullopt;
  const std::string path = record.substr(a + 1, b - a - 1);
  if (cuda::file_identity(path) != record.substr(b + 1)) return std::nullopt;  // replaced in place
  return record.substr(0, a);
}

// The version keys use in this process, found once (under its mutex).
struct KeyVersion {
  std::mutex mu;
  std::optional<std::string> version;
  bool recorded = false;  // written to (or read from) a disk cache's record
};
KeyVersion& key_version() {
  static auto* v = new KeyVersion();  // never destroyed
  return *v;
}

std::string record_name() { return "nvrtc-version-" + sha256_hex(cuda::nvrtc_fingerprint()); }

void write_record(DiskCache* disk, const std::string& version) {
  const std::string path = cuda::nvrtc_library_path();
  disk->save(record_name(), fmt::format("{}\n{}\n{}", version, path, cuda::file_identity(path)));
}

}  // namespace

std::string nvrtc_version_for_keys(DiskCache* disk) {
  KeyVersion& k = key_version();
  std::lock_guard lock(k.mu);
  if (k.version && (k.recorded || !disk)) return *k.version;
  if (!k.version && disk && !cuda::nvrtc_loaded()) {
    if (std::optional<std::string> record = disk->load(record_name()))
      if ((k.version = version_from_record(*record))) {
        k.recorded = true;
        return *k.version;
      }
  }
  if (!k.version) k.version = cuda::nvrtc_version();
  if (disk && !k.version->empty()) {
    write_record(disk, *k.version);
    k.recorded = true;
  }
  return *k.version;
}

bool confirm_nvrtc_version(DiskCache* disk) {
  const std::string actual = cuda::nvrtc_version();
  KeyVersion& k = key_version();
  std::lock_guard lock(k.mu);
  if (k.version == actual) return false;
  k.version = actual;
  if (disk && !actual.empty()) write_record(disk, actual);
  return true;
}

std::string cubin_key(const std::string& source, int sm, DiskCache* disk) {
  return sha256_hex(fmt::format("kiln {} cuda; {}; nvrtc {}; sm_{}\n{}", KILN_VERSION_STRING, build_id(),
                                nvrtc_version_for_keys(disk), sm, source));
}

}  // namespace kiln::rt
