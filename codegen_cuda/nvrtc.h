// kiln/codegen_cuda/nvrtc.h — CUDA C source -> cubin or PTX with NVRTC, loaded at run time with dlopen.
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
  std::string arch;    // what was compiled for: "sm_90" (a cubin) or "compute_90" (PTX)
  std::string cubin;   // the cubin's bytes (ok, for an sm_ architecture)
  std::string ptx;     // the PTX text (ok, for a compute_ architecture)
  std::string log;     // NVRTC's log (warnings when ok; the errors, or why NVRTC is missing, when not)
  std::string source;  // the source that was compiled, for dumps and error reports
};

// Whether NVRTC and its builtins could be loaded; if not and `why` is given, the reason.
bool nvrtc_available(std::string* why = nullptr);

// NVRTC's version as "major.minor" ("13.0"), or "" when it is not available.
std::string nvrtc_version();

// Whether this process has started loading NVRTC (never loads it).
bool nvrtc_loaded();
// The file NVRTC was loaded from ("" when it is not available); loads it.
std::string nvrtc_library_path();
// Without loading anything: the files the loader would consider for NVRTC, each with its
// file_identity (the fixed candidates, and the bare name in each LD_LIBRARY_PATH directory),
// LD_LIBRARY_PATH itself, the loader cache's identity and the executable. Two processes with
// equal fingerprints load the same NVRTC, unless the library was replaced in place without
// ldconfig, which the identity of nvrtc_library_path() recorded at the first load catches.
std::string nvrtc_fingerprint();
// A file's identity from stat(): "size mtime inode device", or "absent".
std::string file_identity(const std::string& path);

// The real architectures this NVRTC compiles cubins for, as 10*major+minor (75, 80, ..., 90,
// ...); empty when NVRTC is not available.
std::vector<int> nvrtc_supported_archs();

// Compiles `source` for the virtual architecture `arch` ("compute_90") to PTX. Options always
// passed: --gpu-architecture=<arch>, -std=c++17 and -I<cuda include dir>; then extra_options.
// (With an "sm_90" arch it produces a cubin instead, as compile_for_device.)
NvrtcResult compile_to_ptx(const std::string& source, const std::string& arch = "compute_90",
                           std::vector<std::string> extra_options = {});

// Compiles `source` for a device of compute capability `sm` (10*major+minor: 90 for H100,
// 80 for A100): a cubin for sm_<sm> when NVRTC supports that architecture; for a device newer
// than NVRTC, PTX for the newest architecture NVRTC has below it (arch "compute_XX"; the
// driver compiles it at load), with a line in the log that says so.
NvrtcResult compile_for_device(const std::string& source, int sm, std::vector<std::string> extra_options = {});

}  // namespace kiln::cuda
