// kiln/runtime/cuda/cuda_modules.h — CUDA C modules: cubins by key from the compile cache or NVRTC, loaded once per device.
//
// The cuda backend's plans (one module of generated kernels per compilation) and kiln's library
// kernels written in CUDA C (the device sort, cuda_sort.h; attention, cuda_attention.h) share this path: a module's source
// is keyed with the compiling NVRTC and the architecture (cubin_key.h), looked up in the
// persistent compile cache first (a process whose modules are all there never loads NVRTC),
// compiled on a miss and saved, and loaded into a device's context once; its functions are
// looked up once per (device, key, entry). Loaded modules live until the process exits.
#pragma once

#include "codegen_cuda/driver.h"
#include "runtime/cache/compile_cache.h"

#include <optional>
#include <string>
#include <string_view>

namespace kiln::rt {

// A module's image and the key it is cached and loaded under.
struct ModuleCode {
  std::string key, image, log;
  CodeSource from = CodeSource::Compiled;
  std::string error;  // set when NVRTC failed
};

// The cubin (or PTX) of a module's source for architecture `sm` from the cache: its image is
// empty on a miss.
ModuleCode cached_module(const std::string& source, int sm, CompileCache* store);

// A missed module compiled by NVRTC (which the caller has checked is available), saved under
// its key. A module of several kernels is optimized on every core (--split-compile=0).
void compile_module(ModuleCode& mc, const std::string& source, size_t kernels, int sm, CompileCache* store);

// A library module's code (kiln's sort and attention kernels, written in CUDA C): the image a
// loaded package provided (`package_image`, else null; `what` names it in the key), else the
// cache's, else NVRTC's (`kernels` entry points). nullopt when neither has it and NVRTC is
// absent: the caller computes the op another way. NVRTC's errors throw InternalError naming `op`.
std::optional<ModuleCode> library_module(const std::string* package_image, std::string_view what,
                                         const std::string& source, size_t kernels, int sm, std::string_view op);

// The function `entry` of module `mc` on `device`, the module loaded once per device.
cuda::FunctionHandle load_function(int device, const ModuleCode& mc, const std::string& entry);

}  // namespace kiln::rt
