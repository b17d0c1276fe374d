// kiln/runtime/cuda/cubin_key.h — the compile-cache key of a CUDA module, without loading NVRTC on a warm start.
//
// A cubin is cached under sha256 of kiln's version and build, NVRTC's version, the target
// architecture and the module's source. NVRTC's version is the costly part: reading it means
// loading libnvrtc and its builtins (about 5 ms with both in the page cache, 130 ms cold), which
// was most of a disk-warm first call. So the disk cache remembers it: under
// "nvrtc-version-<sha256 of nvrtc_fingerprint()>" it keeps the version, the path NVRTC was loaded
// from and that file's identity. A process whose fingerprint (the loader's candidate files,
// LD_LIBRARY_PATH, the loader cache, the executable) matches, and whose recorded library file
// is unchanged, takes the version from there and never loads NVRTC unless a kernel misses the
// cache. Anything else loads NVRTC and records it again.
#pragma once

#include <string>

namespace kiln::rt {

class DiskCache;

// NVRTC's version ("13.0"; "" without NVRTC), from the record in `disk` when it is valid (found
// once per process). The record is a fact of this machine: never kept in a remote cache.
std::string nvrtc_version_for_keys(DiskCache* disk);

// The key `source` compiled for sm_<sm> is stored under (without the "cuda-" prefix).
std::string cubin_key(const std::string& source, int sm, DiskCache* disk);

// Before compiling (NVRTC is loaded then anyway): makes sure the version keys use is the
// version of the NVRTC this process loaded (a copy another library loaded first, a loader path
// the fingerprint does not see), rewriting the record when it was not. True when it changed,
// and keys must be computed again.
bool confirm_nvrtc_version(DiskCache* disk);

}  // namespace kiln::rt
