// kiln/runtime/openmp.cpp — opening libgomp with kiln's choice of idle wait (openmp.h).
#include "runtime/openmp.h"

#include "base/dl_symbol.h"
#include "runtime/log.h"
#include "runtime/thread_pool.h"

#include <dlfcn.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::rt {

namespace {

constexpr const char* kLibrary = "libgomp.so.1";

std::mutex g_policy_mutex;
OpenMpPolicy g_policy;  // guarded by g_policy_mutex
bool g_loaded = false;  // guarded by g_policy_mutex

// Whether the user set a variable whose name starts with one of `prefixes` (libgomp from GCC 13
// on also reads suffixed forms: OMP_WAIT_POLICY_ALL, OMP_PROC_BIND_DEV_1, ...).
bool user_set(std::initializer_list<std::string_view> prefixes) {
  for (char** e = environ; e && *e; ++e) {
    const std::string_view var(*e);
    for (std::string_view p : prefixes)
      if (var.substr(0, p.size()) == p && var.size() > p.size() && (var[p.size()] == '=' || var[p.size()] == '_'))
        return true;
  }
  return false;
}

// The CPUs this thread may run on, as OMP_PLACES ("{3},{0},{1},{2}"), starting with the one it
// runs on now: the calling thread keeps its CPU and the workers take the next ones, so that
// several processes started together start from different CPUs, as the scheduler put them.
// "" when the thread may run on one CPU only.
std::string places_from_here() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2) return "";
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  const int here = sched_getcpu();
  const auto at = std::find(cpus.begin(), cpus.end(), here);
  if (at != cpus.end()) std::rotate(cpus.begin(), at, cpus.end());
  std::string places;
  for (int c : cpus) places += fmt::format("{}{{{}}}", places.empty() ? "" : ",", c);
  return places;
}

// dlopen()s libgomp. When the process has not loaded it yet, the policy's variables the user
// left alone are in the environment while libgomp's constructor reads them, and removed again:
// child processes make their own choice. (setenv and unsetenv change environ: a process with
// threads of its own that read the environment calls openmp() early, before starting them.)
void* open_library() {
  std::lock_guard<std::mutex> lock(g_policy_mutex);
  g_loaded = true;
  if (void* lib = dlopen_if_loaded(kLibrary)) return lib;  // its choice is made
  std::vector<const char*> set;
  const std::string spin = std::to_string(std::max(g_policy.spin_count, 0));
  if (!user_set({"GOMP_SPINCOUNT", "OMP_WAIT_POLICY"})) setenv("GOMP_SPINCOUNT", spin.c_str(), 0), set.push_back("GOMP_SPINCOUNT");
  // Binding is for a team: one thread is not bound to anything.
  if (g_policy.bind_threads && num_threads() > 1 && !user_set({"OMP_PROC_BIND", "OMP_PLACES", "GOMP_CPU_AFFINITY"}))
    if (const std::string places = places_from_here(); !places.empty()) {
      setenv("OMP_PLACES", places.c_str(), 0), set.push_back("OMP_PLACES");
      setenv("OMP_PROC_BIND", "true", 0), set.push_back("OMP_PROC_BIND");
    }
  void* lib = dlopen(kLibrary, RTLD_LAZY | RTLD_LOCAL);  // lazily bound: most of its functions are never called
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
  // Every CPU kernel then runs on one thread: said once, since that is a slowdown nobody asked for.
  warn_once("openmp", fmt::format("{}; CPU kernels run on the calling thread only", error));
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
  if (g_loaded || dlopen_if_loaded(kLibrary)) return false;
  g_policy = policy;
  return true;
}

}  // namespace kiln::rt
