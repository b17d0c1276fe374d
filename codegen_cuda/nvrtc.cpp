// kiln/codegen_cuda/nvrtc.cpp — dlopen-based NVRTC loader and the PTX and cubin compile entry points.
//
// The few NVRTC entry points kiln uses are declared here as function-pointer types (no CUDA
// header is needed to build). Loading happens once per process (a function-local static):
// libnvrtc.so.13 through the loader path, then the fixed toolkit locations; then the builtins
// library libnvrtc-builtins.so.<major>.<minor> from the same directory as libnvrtc, by absolute
// path and RTLD_GLOBAL. The handles stay open for the life of the process.
#include "codegen_cuda/nvrtc.h"

#include "base/dl_symbol.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace kiln::cuda {

namespace {

// NVRTC's C API, as far as kiln uses it (nvrtc.h: nvrtcResult is an int-sized enum, 0 = success).
struct NvrtcProgramImpl;
using nvrtcProgram = NvrtcProgramImpl*;
using nvrtcResult = int;
using VersionFn = nvrtcResult (*)(int*, int*);
using CreateProgramFn = nvrtcResult (*)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                        const char* const*);
using CompileProgramFn = nvrtcResult (*)(nvrtcProgram, int, const char* const*);
using DestroyProgramFn = nvrtcResult (*)(nvrtcProgram*);
using GetSizeFn = nvrtcResult (*)(nvrtcProgram, size_t*);
using GetTextFn = nvrtcResult (*)(nvrtcProgram, char*);
using GetErrorStringFn = const char* (*)(nvrtcResult);
using GetNumSupportedArchsFn = nvrtcResult (*)(int*);
using GetSupportedArchsFn = nvrtcResult (*)(int*);

constexpr const char* kLibraryCandidates[] = {
    "libnvrtc.so.13",
    "/usr/local/cuda/lib64/libnvrtc.so.13",
    "/usr/local/cuda-13.0/lib64/libnvrtc.so.13",
    "/usr/local/cuda/targets/x86_64-linux/lib/libnvrtc.so.13",
};

struct Nvrtc {
  std::string error;  // empty when usable
  std::string include_dir;
  std::string path;  // the file libnvrtc was loaded from
  int major = 0, minor = 0;
  VersionFn version = nullptr;
  CreateProgramFn create = nullptr;
  CompileProgramFn compile = nullptr;
  DestroyProgramFn destroy = nullptr;
  GetSizeFn ptx_size = nullptr;
  GetTextFn ptx = nullptr;
  GetSizeFn cubin_size = nullptr;
  GetTextFn cubin = nullptr;
  std::vector<int> archs;  // real architectures NVRTC compiles for (75, 80, ..., 90, ...)
  GetSizeFn log_size = nullptr;
  GetTextFn log = nullptr;
  GetErrorStringFn error_string = nullptr;

  std::string describe(nvrtcResult rc) const {
    const char* s = error_string ? error_string(rc) : nullptr;
    return s ? fmt::format("{} ({})", s, rc) : fmt::format("NVRTC error {}", rc);
  }
};

Nvrtc load() {
  Nvrtc n;
  std::string tried;
  void* lib = dlopen_first(kLibraryCandidates, tried);
  if (!lib) {
    n.error = "NVRTC is not available (libnvrtc.so.13 could not be loaded):" + tried;
    return n;
  }
  bind_symbol(lib, "libnvrtc", "nvrtcVersion", n.version, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcCreateProgram", n.create, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcCompileProgram", n.compile, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcDestroyProgram", n.destroy, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetPTXSize", n.ptx_size, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetPTX", n.ptx, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetCUBINSize", n.cubin_size, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetCUBIN", n.cubin, n.error);
  GetNumSupportedArchsFn num_archs = nullptr;
  GetSupportedArchsFn archs = nullptr;
  bind_symbol(lib, "libnvrtc", "nvrtcGetNumSupportedArchs", num_archs, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetSupportedArchs", archs, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetProgramLogSize", n.log_size, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetProgramLog", n.log, n.error);
  bind_symbol(lib, "libnvrtc", "nvrtcGetErrorString", n.error_string, n.error);
  if (!n.error.empty()) return n;
  if (nvrtcResult rc = n.version(&n.major, &n.minor); rc != 0) {
    n.error = "nvrtcVersion failed: " + n.describe(rc);
    return n;
  }
  int count = 0;
  if (nvrtcResult rc = num_archs(&count); rc != 0 || count <= 0) {
    n.error = "nvrtcGetNumSupportedArchs failed: " + n.describe(rc);
    return n;
  }
  n.archs.resize(static_cast<size_t>(count));
  if (nvrtcResult rc = archs(n.archs.data()); rc != 0) {
    n.error = "nvrtcGetSupportedArchs failed: " + n.describe(rc);
    return n;
  }

  // The builtins library sits next to libnvrtc; load it by absolute path, globally.
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(n.version), &info) || !info.dli_fname) {
    n.error = "cannot locate the directory of libnvrtc (dladdr failed)";
    return n;
  }
  n.path = info.dli_fname;
  const std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path();
  const std::filesystem::path builtins = dir / fmt::format("libnvrtc-builtins.so.{}.{}", n.major, n.minor);
  if (!dlopen(builtins.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
    const char* err = dlerror();
    n.error = fmt::format("NVRTC {}.{} is loaded but its builtins library is not: {}", n.major, n.minor,
                          err ? err : builtins.string());
    return n;
  }
  std::error_code ec;
  for (const std::filesystem::path& inc : {dir / ".." / "include", std::filesystem::path("/usr/local/cuda/include")}) {
    if (std::filesystem::exists(inc / "cuda_fp16.h", ec)) {
      n.include_dir = std::filesystem::weakly_canonical(inc, ec).string();
      if (ec) n.include_dir = inc.string();
      break;
    }
  }
  return n;
}

std::atomic<bool> g_loading{false};

const Nvrtc& nvrtc() {
  static const Nvrtc n = (g_loading.store(true), load());
  return n;
}

// LD_LIBRARY_PATH's directories in order; an empty entry is the working directory, as the
// loader reads it.
std::vector<std::string> split_path_list(const char* list) {
  std::vector<std::string> out;
  if (!list || !*list) return out;
  std::string cur;
  for (const char* c = list; ; ++c) {
    if (*c == ':' || *c == '\0') {
      out.push_back(cur.empty() ? "." : cur);
      cur.clear();
      if (!*c) break;
    } else {
      cur += *c;
    }
  }
  return out;
}

}  // namespace

bool nvrtc_available(std::string* why) {
  const Nvrtc& n = nvrtc();
  if (why) *why = n.error;
  return n.error.empty();
}

std::string nvrtc_version() {
  const Nvrtc& n = nvrtc();
  return n.error.empty() ? fmt::format("{}.{}", n.major, n.minor) : std::string();
}

std::vector<int> nvrtc_supported_archs() { return nvrtc().archs; }

bool nvrtc_loaded() { return g_loading.load(); }

std::string nvrtc_library_path() { return nvrtc().path; }

std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "absent";
  return fmt::format("{} {}.{:09} {} {}", static_cast<long long>(st.st_size), static_cast<long long>(st.st_mtim.tv_sec),
                     static_cast<long>(st.st_mtim.tv_nsec), static_cast<unsigned long long>(st.st_ino),
                     static_cast<unsigned long long>(st.st_dev));
}

std::string nvrtc_fingerprint() {
  const char* llp = std::getenv("LD_LIBRARY_PATH");
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  std::string fp = fmt::format("LD_LIBRARY_PATH={}\nexe={} {}\n/etc/ld.so.cache {}\n", llp ? llp : "", exe.string(),
                               file_identity(exe.string()), file_identity("/etc/ld.so.cache"));
  for (const char* candidate : kLibraryCandidates) {
    if (candidate[0] == '/') {
      fp += fmt::format("{} {}\n", candidate, file_identity(candidate));
      continue;
    }
    for (const std::string& dir : split_path_list(llp)) {
      const std::string path = dir + "/" + candidate;
      fp += fmt::format("{} {}\n", path, file_identity(path));
    }
  }
  return fp;
}

namespace {

// One NVRTC run: --gpu-architecture=<arch> (compute_XX: PTX; sm_XX: a cubin, read as well).
NvrtcResult run_nvrtc(const std::string& source, const std::string& arch, std::vector<std::string> extra_options) {
  NvrtcResult r;
  r.source = source;
  r.arch = arch;
  const Nvrtc& n = nvrtc();
  if (!n.error.empty()) {
    r.log = n.error;
    return r;
  }
  const bool want_cubin = arch.rfind("sm_", 0) == 0;
  std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17"};
  if (!n.include_dir.empty()) options.push_back("-I" + n.include_dir);
  for (std::string& o : extra_options) options.push_back(std::move(o));
  std::vector<const char*> argv;
  for (const std::string& o : options) argv.push_back(o.c_str());

  nvrtcProgram prog = nullptr;
  if (nvrtcResult rc = n.create(&prog, source.c_str(), "kiln_kernel.cu", 0, nullptr, nullptr); rc != 0) {
    r.log = "nvrtcCreateProgram failed: " + n.describe(rc);
    return r;
  }
  const nvrtcResult rc = n.compile(prog, static_cast<int>(argv.size()), argv.data());
  size_t log_size = 0;
  if (n.log_size(prog, &log_size) == 0 && log_size > 1) {
    std::string log(log_size, '\0');
    if (n.log(prog, log.data()) == 0) r.log.assign(log.c_str());
  }
  // Reads one of the program's outputs (PTX is NUL-terminated text, a cubin is binary).
  auto read = [&](GetSizeFn size_fn, GetTextFn text_fn, const char* what, std::string& out) {
    size_t size = 0;
    if (nvrtcResult src = size_fn(prog, &size); src != 0 || size == 0) {
      r.log += fmt::format("\nnvrtcGet{}Size failed: {}", what, n.describe(src));
      return false;
    }
    std::string bytes(size, '\0');
    if (nvrtcResult grc = text_fn(prog, bytes.data()); grc != 0) {
      r.log += fmt::format("\nnvrtcGet{} failed: {}", what, n.describe(grc));
      return false;
    }
    out = std::move(bytes);
    return true;
  };
  if (rc != 0) {
    r.log = fmt::format("nvrtcCompileProgram failed: {} (options: {})\n{}", n.describe(rc), fmt::join(options, " "), r.log);
  } else if (want_cubin) {
    r.ok = read(n.cubin_size, n.cubin, "CUBIN", r.cubin);
  } else if (read(n.ptx_size, n.ptx, "PTX", r.ptx)) {
    r.ptx.resize(std::strlen(r.ptx.c_str()));
    r.ok = true;
  }
  n.destroy(&prog);
  return r;
}

}  // namespace

NvrtcResult compile_to_ptx(const std::string& source, const std::string& arch, std::vector<std::string> extra_options) {
  return run_nvrtc(source, arch, std::move(extra_options));
}

NvrtcResult compile_for_device(const std::string& source, int sm, std::vector<std::string> extra_options) {
  const std::vector<int> archs = nvrtc_supported_archs();
  if (archs.empty() || std::find(archs.begin(), archs.end(), sm) != archs.end())
    return run_nvrtc(source, fmt::format("sm_{}", sm), std::move(extra_options));
  // A device newer than this NVRTC: PTX for the newest architecture below it, which the
  // driver compiles for the device when the module is loaded.
  int best = 0;
  for (int a : archs)
    if (a < sm) best = std::max(best, a);
  if (best == 0) {
    NvrtcResult r;
    r.source = source;
    r.arch = fmt::format("sm_{}", sm);
    r.log = fmt::format("NVRTC {} cannot compile for sm_{}: it supports sm_{}", nvrtc_version(), sm, fmt::join(archs, ", sm_"));
    return r;
  }
  NvrtcResult r = run_nvrtc(source, fmt::format("compute_{}", best), std::move(extra_options));
  r.log = fmt::format("NVRTC {} has no sm_{}: PTX for compute_{}, compiled by the driver at load\n", nvrtc_version(), sm,
                      best) + r.log;
  return r;
}

}  // namespace kiln::cuda
