// kiln/runtime/cuda/cuda_modules.cpp — cubins by key, modules by (device, key) (cuda_modules.h).
#include "runtime/cuda/cuda_modules.h"

#include "base/crc32c.h"
#include "base/error.h"
#include "codegen_cuda/nvrtc.h"
#include "runtime/cuda/cubin_key.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

namespace kiln::rt {

namespace {

std::mutex& modules_mu() {
  static auto* m = new std::mutex();
  return *m;
}
// Loaded modules by (device, key), and their functions by (device, key, entry); never destroyed.
std::map<std::pair<int, std::string>, cuda::ModuleHandle>& modules() {
  static auto* m = new std::map<std::pair<int, std::string>, cuda::ModuleHandle>();
  return *m;
}
std::map<std::tuple<int, std::string, std::string>, cuda::FunctionHandle>& functions() {
  static auto* m = new std::map<std::tuple<int, std::string, std::string>, cuda::FunctionHandle>();
  return *m;
}

}  // namespace

// The cubin (or PTX) of a module's source for architecture `sm` from the cache: its image is
// empty on a miss.
ModuleCode cached_module(const std::string& source, int sm, CompileCache* store) {
  ModuleCode mc;
  mc.key = cubin_key(source, sm, store ? store->disk() : nullptr);
  if (store)
    if (std::optional<std::string> img = store->load("cuda-" + mc.key, mc.from)) mc.image = std::move(*img);
  if (mc.image.empty()) mc.from = CodeSource::Compiled;
  return mc;
}

// A missed module compiled by NVRTC (which the caller has checked is available), saved under
// its key. A module of several kernels is optimized on every core (--split-compile=0).
void compile_module(ModuleCode& mc, const std::string& source, size_t kernels, int sm, CompileCache* store) {
  DiskCache* disk = store ? store->disk() : nullptr;
  if (confirm_nvrtc_version(disk)) mc.key = cubin_key(source, sm, disk);  // keyed by the NVRTC that compiles it
  std::vector<std::string> options;
  if (kernels > 1) options.push_back("--split-compile=0");
  cuda::NvrtcResult r = cuda::compile_for_device(source, sm, std::move(options));
  mc.log = r.log;
  if (!r.ok) {
    mc.error = fmt::format("NVRTC could not compile the module for {}", r.arch);
    return;
  }
  mc.image = r.cubin.empty() ? r.ptx + std::string(1, '\0') : r.cubin;  // PTX is loaded as a C string
  if (store) store->save("cuda-" + mc.key, mc.image);
}

// The function `entry` of module `mc` on `device`, the module loaded once per device.
cuda::FunctionHandle load_function(int device, const ModuleCode& mc, const std::string& entry) {
  std::lock_guard lock(modules_mu());
  auto fit = functions().find({device, mc.key, entry});
  if (fit != functions().end()) return fit->second;
  auto [it, inserted] = modules().try_emplace({device, mc.key}, nullptr);
  if (inserted) {
    try {
      it->second = cuda::module_load(device, mc.image);
    } catch (...) {
      modules().erase(it);
      throw;
    }
  }
  const cuda::FunctionHandle fn = cuda::module_function(device, it->second, entry);
  functions().emplace(std::make_tuple(device, mc.key, entry), fn);
  return fn;
}

std::optional<ModuleCode> library_module(const std::string* package_image, std::string_view what,
                                         const std::string& source, size_t kernels, int sm, std::string_view op) {
  ModuleCode code;
  if (package_image) {
    code.key = fmt::format("package {} {:08x} {}", what, crc32c(*package_image), package_image->size());
    code.image = *package_image;
    code.from = CodeSource::Disk;
    return code;
  }
  CompileCache* store = compile_cache();
  code = cached_module(source, sm, store);
  if (!code.image.empty()) return code;
  if (!cuda::nvrtc_available()) return std::nullopt;
  compile_module(code, source, kernels, sm, store);
  if (!code.error.empty()) throw InternalError(fmt::format("[{}] {}:\n{}", op, code.error, code.log));
  return code;
}

}  // namespace kiln::rt
