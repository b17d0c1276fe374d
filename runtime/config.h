// kiln/runtime/config.h — every environment variable kiln reads, parsed once into rt::Config.
//
// No other file calls getenv: a new variable is added here, parsed in config.cpp and documented
// in the table of docs/env.md. config() parses the environment on first use (thread safe) and
// then costs one atomic load. Invalid values never fail: they print one warning on stderr
// ("[kiln:warning] ...", through the log sink of runtime/log.h) and fall back to the default.
// reload_config_for_testing() re-reads the environment after setenv(); a Config reference
// obtained earlier stays valid (old snapshots are kept alive until exit).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

// KILN_ALLOCATOR: how CPU tensor storage is allocated (runtime/allocator.h).
enum class AllocatorKind { Caching, System };
// KILN_SGEMM: which SGEMM runs f32 products past 64^3 multiply-adds (runtime/cpu/parallel_gemm.h).
enum class SgemmChoice { OneDnn, Kiln };

struct Config {
  // KILN_LOG: bit i set <=> LogChannel(i) enabled (runtime/log.h).
  uint32_t log_channels = 0;
  // KILN_DEBUG_DIR: directory for per-compilation stage dumps; empty = no dumps.
  std::string debug_dir;
  // KILN_NUM_THREADS: threads used by parallel_for, the caller included (>= 1).
  int num_threads = 1;
  // KILN_CACHE_DIR: persistent compile cache directory (default $XDG_CACHE_HOME/kiln or
  // ~/.cache/kiln); empty when no home directory could be found.
  std::string cache_dir;
  // KILN_DISABLE_CACHE: true = never read or write the disk cache (nor the remote one).
  bool disable_cache = false;
  // KILN_CACHE_SIZE: most bytes of entries the disk cache keeps (least recently used go
  // first); a number with an optional K/M/G suffix. Default 1 GiB.
  int64_t cache_size_bytes = int64_t{1} << 30;
  // KILN_REMOTE_CACHE: redis://[[user]:password@]host[:port][/db] of a shared compile cache;
  // empty = none.
  std::string remote_cache;
  // KILN_REMOTE_CACHE_KEY: the fleet's secret that authenticates remote entries
  // (runtime/cache/cache_auth.h); KILN_REMOTE_CACHE_KEY_FILE: a private file holding it. Without
  // either, the remote cache stays off.
  std::string remote_cache_key;
  std::string remote_cache_key_file;
  // KILN_ALLOCATOR: caching (default) or system.
  AllocatorKind allocator = AllocatorKind::Caching;
  // KILN_ALLOCATOR_CACHE_MB: most bytes the caching allocator keeps in its free lists.
  size_t allocator_cache_bytes = size_t{2048} << 20;
  // KILN_SGEMM: onednn, or kiln (kiln's own for products of 16+ rows, oneDNN's for fewer).
  SgemmChoice sgemm = SgemmChoice::OneDnn;
  // KILN_VERIFY: true = every call of a compiled function (cpu backend) also runs the
  // reference interpreter on the traced graph and raises kiln::Error when results differ.
  bool verify = false;
  // KILN_ALLOW_TF32: f32 matmul on cuda may use TF32 tensor cores (PyTorch's allow_tf32).
  bool allow_tf32 = false;
  // KILN_CUDA_ROW_THREADS: block width of cuda row kernels with constant sizes (0: the rule;
  // else a multiple of 32 in [32, 1024]); KILN_CUDA_ROW_CACHE: whether they may keep repeated
  // loads in registers (passes/schedule.h ScheduleTarget). Tuning and benchmarking knobs.
  int64_t cuda_row_threads = 0;
  bool cuda_row_cache = true;
  // KILN_PERF_MAP: true = name every linked CPU kernel in /tmp/perf-<pid>.map for perf.
  bool perf_map = false;
  // KILN_REPRO_DIR: directory where compile() writes a (minimized) repro when a backend
  // fails with a non-user error or KILN_VERIFY finds a mismatch; empty = no repros.
  std::string repro_dir;

  // The disk cache is used: not disabled and a directory is known.
  bool disk_cache_enabled() const { return !disable_cache && !cache_dir.empty(); }
};

// Looks up one variable; returns nullptr when unset. Lets tests parse a fake environment.
using EnvLookup = std::function<const char*(const char* name)>;

// Parses a configuration from `env`. Each problem found appends one warning text (without the
// "[kiln:warning]" prefix) to `warnings`; nothing is printed.
Config parse_config(const EnvLookup& env, std::vector<std::string>& warnings);

// Default thread count: std::thread::hardware_concurrency(), at least 1.
int default_num_threads();

namespace detail {
extern std::atomic<const Config*> g_config;  // nullptr before the first parse
const Config& load_config_slow();            // parses the process environment once
}  // namespace detail

// The process configuration (parsed from the environment on first call).
inline const Config& config() {
  if (const Config* c = detail::g_config.load(std::memory_order_acquire)) return *c;
  return detail::load_config_slow();
}

// Re-reads the process environment (after setenv in tests), printing its warnings again.
// Not meant for concurrent use with code that is reading configuration.
void reload_config_for_testing();

// The names of every environment variable kiln reads, in the order of docs/env.md.
const std::vector<std::string_view>& config_variable_names();

}  // namespace kiln::rt
