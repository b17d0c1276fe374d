// kiln/runtime/cpu/blas_library.cpp — dlopen of OpenBLAS with OPENBLAS_CORETYPE chosen from CPUID.
#include "runtime/cpu/blas_library.h"

#include "base/dl_symbol.h"
#include "base/host_cpu.h"
#include "runtime/openmp.h"
#include "base/error.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

namespace kiln::rt {

std::string blas_core_for_host() {
  // base/host_cpu.h rather than __builtin_cpu_supports, whose libgcc copy in libkiln would
  // run its own CPUID pass in every process's start.
  if (host_has_avx512()) return "SkylakeX";
  if (host_has_avx2()) return "Haswell";
  return "";
}

namespace {

constexpr const char* kLibrary = "libopenblas.so.0";

BlasLibrary load() {
  BlasLibrary b;
  // An OpenBLAS the process has already loaded made its choice in its constructor.
  void* lib = dlopen_if_loaded(kLibrary);
  if (!lib) {
    (void)openmp();  // an OpenMP build of OpenBLAS finds libgomp opened with kiln's wait (openmp.h)
    const std::string core = blas_core_for_host();
    const bool set = !core.empty() && std::getenv("OPENBLAS_CORETYPE") == nullptr;
    if (set) setenv("OPENBLAS_CORETYPE", core.c_str(), 0);
    lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
    if (set) unsetenv("OPENBLAS_CORETYPE");  // child processes make their own choice
  }
  if (!lib) fail("matmul", "cannot load {} (install Debian's libopenblas0): {}", kLibrary, dlerror());
  std::string error;
  bind_symbol(lib, kLibrary, "cblas_sgemm", b.sgemm, error);
  bind_symbol(lib, kLibrary, "cblas_dgemm", b.dgemm, error);
  void (*set_threads)(int) = nullptr;
  char* (*corename)() = nullptr;
  bind_symbol(lib, kLibrary, "openblas_set_num_threads", set_threads, error);
  bind_symbol(lib, kLibrary, "openblas_get_corename", corename, error);
  if (!error.empty()) fail("matmul", "{}", error);
  set_threads(1);  // kiln's pool splits the work (parallel_gemm.h)
  b.core = corename();
  return b;
}

}  // namespace

const BlasLibrary& blas() {
  static BlasLibrary library;
  static std::once_flag loaded;
  std::call_once(loaded, [] { library = load(); });
  return library;
}

}  // namespace kiln::rt
