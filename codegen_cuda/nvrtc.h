// kiln/codegen_cuda/nvrtc.h — CUDA C source -> PTX with NVRTC, loaded at run time with dlopen.
//
// kiln builds and runs without the CUDA toolkit: NVRTC (libnvrtc.so.13) is opened on first use,
// then its builtins library by absolute path from libnvrtc's own directory (RTLD_GLOBAL; a
// builtins library missing from the loader cache otherwise fails every compile). Nothing here
// throws for a compiler problem: a compile error gives ok = false with NVRTC's log and the
// source, and a machine without NVRTC gives ok = false with the reason, so the caller decides
// (fall back, report). The CUDA include directory next to libnvrtc (../include), when it
// exists, is passed with -I so that kernels may include cuda_fp16.h and cuda_bf16.h.
#pragma once

#include <string>
#include <vector>

namespace kiln::cuda {

struct NvrtcResult {
  bool ok = false;
  std::string ptx;     // the PTX text (ok only)
  std::string log;     // NVRTC's log (warnings when ok; the errors, or why NVRTC is missing, when not)
  std::string source;  // the source that was compiled, for dumps and error reports
};

// Whether NVRTC and its builtins could be loaded; if not and `why` is given, the reason.
bool nvrtc_available(std::string* why = nullptr);

// NVRTC's version as "major.minor" ("13.0"), or "" when it is not available.
std::string nvrtc_version();

// Compiles `source` for the virtual architecture `arch` ("compute_90") to PTX. Options always
// passed: --gpu-architecture=<arch>, -std=c++17 and -I<cuda include dir>; then extra_options.
NvrtcResult compile_to_ptx(const std::string& source, const std::string& arch = "compute_90",
                           std::vector<std::string> extra_options = {});

}  // namespace kiln::cuda
