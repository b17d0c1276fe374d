// kiln/codegen_cpu/kernel_codegen.h — ir::Kernel -> LLVM IR -> native code through the JIT.
//
// Each kernel becomes a function with the KernelFn signature (codegen_cpu/jit.h): a loop over
// [begin, end) of grid dim 0 (the runtime splits that range across threads), the other grid
// dims nested inside, and per grid point the kernel's stages as loop nests. Buffer pointers
// are passed to an always-inlined body function as `noalias` parameters, so the loop
// vectorizer needs no runtime alias checks. The kernels of one plan are linked together: one
// module, or several compiled at once on the runtime's threads (CodegenOptions::parallel), in
// one mapping (codegen_cpu/linked_code.h); identical kernels are compiled once. No LLVM header is included here.
#pragma once

#include "base/cpu_level.h"
#include "codegen_cpu/jit.h"
#include "base/object_store.h"
#include "ir/kernel.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

struct CompiledKernel {
  KernelFn fn = nullptr;
  std::string symbol;  // its name in the module (unique within its module)
};

struct CodegenResult {
  std::vector<CompiledKernel> kernels;  // in the order given
  std::string llvm_ir;                  // optimized module (when asked)
  std::string assembly;                 // host assembly (when asked)
  double lookup_ms = 0;  // the key, and the lookups in this process and in the store
  // codegen: emit + link, or link only. A module compiled in parts: the longest part's times.
  double build_ms = 0, optimize_ms = 0, codegen_ms = 0;
  CodeSource source = CodeSource::Compiled;
  std::string key;  // the module's cache key (hex SHA-256)
  // The linked module: the kernels' addresses are valid while it is held.
  std::shared_ptr<const LinkedCode> code;
};

struct CodegenOptions {
  bool want_ir = false;   // inspection: compiled afresh, caches neither read nor written
  bool want_asm = false;
  ObjectStore* store = nullptr;  // the persistent caches, or none
  bool reuse_linked = true;      // link the same module again from this process's table
  // LLVM's diagnostics while compiling (remarks such as "loop not vectorized", warnings), one
  // message per call; none reach stderr. The runtime passes its KILN_LOG=kernels channel.
  std::function<void(std::string_view)> diagnostics;
  // KILN_PERF_MAP: when not empty, every kernel this call links is named "<perf_label><kernel
  // name>" in /tmp/perf-<pid>.map (codegen_cpu/perf_map.h). A module this process linked
  // before keeps the name of its first link.
  std::string perf_label;
  // Runs body(0), ..., body(n - 1), on several threads where it can (the runtime passes its
  // pool's parallel_for): a plan of several kernels then compiles as up to `threads` LLVM
  // modules at once, linked together. Unset: one module on the calling thread.
  std::function<void(size_t n, const std::function<void(size_t)>& body)> parallel;
  size_t threads = 1;
  // The CPU the code is for (base/cpu_level.h): this host, or an x86-64 level an exported
  // program carries code for. The kernels must have been scheduled for its vector_bits.
  CpuLevel level = native_cpu_level();
};

// Links the kernels' object code from this process, or from `store` (base/object_store.h),
// found by module_key (codegen_cpu/module_cache.h), which needs no LLVM; or else builds the
// LLVM module, compiles it and saves its object code to `store`. Throws InternalError on an LLVM
// failure.
CodegenResult compile_kernels(const std::vector<const ir::Kernel*>& kernels, const CodegenOptions& opts = {});

// The kernels linked from `bundle`, the object code compile_kernels made for exactly these
// kernels (an exported program's, runtime/export): no cache and no LLVM. Nullopt with the
// reason in *why when the bundle is damaged or does not define every kernel.
std::optional<CodegenResult> link_kernels(const std::vector<const ir::Kernel*>& kernels, std::string_view bundle,
                                          std::string* why);

// The unoptimized LLVM IR of one kernel, for inspection and tests.
std::string kernel_llvm_ir(const ir::Kernel& k);

}  // namespace kiln::cpu
