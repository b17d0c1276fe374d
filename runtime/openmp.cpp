// kiln/runtime/openmp.cpp — opening libgomp with kiln's choice of idle wait (openmp.h).
#include "runtime/openmp.h"

#include "base/dl_symbol.h"
#include "runtime/log.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <string>

namespace kiln::rt {

namespace {

constexpr const char* kLibrary = "libgomp.so.1";

std::atomic<OpenMpWait> g_wait{OpenMpWait::Short};
std::atomic<bool> g_loaded{false};

// dlopen()s libgomp. When the process has not loaded it yet and the user chose no wait policy,
// the chosen one is in the environment while libgomp's constructor reads it, and removed again:
// child processes make their own choice.
void* open_library() {
  if (void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) return lib;  // its choice is made
  const bool user_chose = std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr;
  const bool sleep = g_wait.load() == OpenMpWait::Sleep;
  const char* name = sleep ? "OMP_WAIT_POLICY" : "GOMP_SPINCOUNT";
  if (!user_chose) setenv(name, sleep ? "passive" : "10000", 0);
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (!user_chose) unsetenv(name);
  return lib;
}

OpenMp* load() {
  void* lib = open_library();
  g_loaded.store(true);
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

bool set_openmp_wait(OpenMpWait wait) {
  if (g_loaded.load() || dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) return false;
  g_wait.store(wait);
  return true;
}

}  // namespace kiln::rt
