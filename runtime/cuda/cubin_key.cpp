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

}  // namespace

std::string nvrtc_version_for_keys(DiskCache* disk) {
  static std::mutex mu;
  static std::optional<std::string> version;
  static bool recorded = false;
  std::lock_guard lock(mu);
  if (version && (recorded || !disk)) return *version;
  const std::string name = disk ? "nvrtc-version-" + sha256_hex(cuda::nvrtc_fingerprint()) : "";
  if (!version && disk && !cuda::nvrtc_loaded()) {
    if (std::optional<std::string> record = disk->load(name))
      if ((version = version_from_record(*record))) {
        recorded = true;
        return *version;
      }
  }
  if (!version) version = cuda::nvrtc_version();
  if (disk && !version->empty()) {
    const std::string path = cuda::nvrtc_library_path();
    disk->save(name, fmt::format("{}\n{}\n{}", *version, path, cuda::file_identity(path)));
    recorded = true;
  }
  return *version;
}

std::string cubin_key(const std::string& source, int sm, DiskCache* disk) {
  return sha256_hex(fmt::format("kiln {} cuda; {}; nvrtc {}; sm_{}\n{}", KILN_VERSION_STRING, build_id(),
                                nvrtc_version_for_keys(disk), sm, source));
}

}  // namespace kiln::rt
