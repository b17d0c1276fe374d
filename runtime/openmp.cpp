// kiln/runtime/openmp.cpp — opening libgomp with kiln's choice of idle wait (openmp.h).
#include "runtime/openmp.h"

#include "base/dl_symbol.h"
#include "runtime/log.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <vector>

namespace kiln::rt {

namespace {

constexpr const char* kLibrary = "libgomp.so.1";

std::mutex g_policy_mutex;
OpenMpPolicy g_policy;  // guarded by g_policy_mutex
bool g_loaded = false;  // guarded by g_policy_mutex

bool user_set(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (std::getenv(n)) return true;
  return false;
}

// dlopen()s libgomp. When the process has not loaded it yet, the policy's variables the user
// left alone are in the environment while libgomp's constructor reads them, and removed again:
// child processes make their own choice.
void* open_library() {
  std::lock_guard<std::mutex> lock(g_policy_mutex);
  g_loaded = true;
  if (void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) return lib;  // its choice is made
  std::vector<const char*> set;
  const std::string spin = std::to_string(std::max(g_policy.spin_count, 0));
  if (!user_set({"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"})) setenv("GOMP_SPINCOUNT", spin.c_str(), 0), set.push_back("GOMP_SPINCOUNT");
  if (g_policy.bind_threads && !user_set({"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}))
    setenv("OMP_PROC_BIND", "true", 0), set.push_back("OMP_PROC_BIND");
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  for (const char* n : set) unsetenv(n);
  return lib;
}

OpenMp* load() {
  void* lib = open_library();
  std::string error;
  if (!lib) {
    const char* why = dlerror();
    error = fmt::format("cannot open {}: {}", kLibrary, why ? why : "not found");
  } else {
    static OpenMp table;
    bind_symbol(lib, kLibrary, "GOMP_parallel", table.parallel, error);
    bind_symbol(lib, kLibrary, "omp_get_thread_num", table.thread_num, error);
    bind_symbol(lib, kLibrary, "omp_get_num_threads", table.team_size, error);
    bind_symbol(lib, kLibrary, "omp_in_parallel", table.in_parallel, error);
    bind_symbol(lib, kLibrary, "omp_get_max_threads", table.max_threads, error);
    bind_symbol(lib, kLibrary, "omp_set_num_threads", table.set_num_threads, error);
    if (error.empty()) return &table;
  }
  KILN_LOG_IF(LogChannel::Perf, "threads: {}; CPU kernels run on the calling thread only", error);
  return nullptr;
}

std::once_flag g_once;
OpenMp* g_table = nullptr;

}  // namespace

const OpenMp* openmp() {
  std::call_once(g_once, [] { g_table = load(); });
  return g_table;
}

bool set_openmp_policy(const OpenMpPolicy& policy) {
  std::lock_guard<std::mutex> lock(g_policy_mutex);
  if (g_loaded || dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) return false;
  g_policy = policy;
  return true;
}

}  // namespace kiln::rt
