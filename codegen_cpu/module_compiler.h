// kiln/codegen_cpu/module_compiler.h — the LLVM half of the CPU code generator, behind one
// interface, in a library of its own that the process opens on its first compile.
//
// libkiln holds everything a program needs to run, including linking cached object code
// (codegen_cpu/linked_code.h); it does not link LLVM. Turning kernels into object code is
// libkiln_llvm's (codegen_cpu/kernel_codegen.cpp, jit.cpp, llvm_*.cpp): module_compiler()
// opens it with dlopen on first use, from the directory libkiln was loaded from (the build
// tree, or the installed prefix's lib/), else by the dynamic loader's search path, so a
// process whose kernels all come from a cache never loads libLLVM. No LLVM header is included
// here.
#pragma once

#include "base/cpu_level.h"
#include "ir/kernel.h"

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln::cpu {

// One module's object code, and what inspection asked for.
struct CompiledModule {
  std::string object;    // x86-64 ELF relocatable
  std::string llvm_ir;   // the optimized module (want_ir)
  std::string assembly;  // host assembly (want_asm)
  double build_ms = 0, optimize_ms = 0, emit_ms = 0;
};

class ModuleCompiler {
 public:
  virtual ~ModuleCompiler() = default;
  // The kernels as one module (kernels[i] named names[i]), optimized for `level` (the host:
  // native_cpu_level()) and emitted as object code. LLVM's diagnostics go to *diagnostics (when
  // set), never to stderr. Throws InternalError when LLVM fails.
  virtual CompiledModule compile(const std::vector<const ir::Kernel*>& kernels, const std::vector<std::string>& names,
                                 bool want_ir, bool want_asm, const std::function<void(std::string_view)>* diagnostics,
                                 const CpuLevel& level) const = 0;
  // The unoptimized LLVM IR of one kernel, for inspection and tests.
  virtual std::string kernel_llvm_ir(const ir::Kernel& k) const = 0;
};

// The LLVM half, opened on first use (thread safe). Throws kiln::Error naming the library and
// dlopen's message when it cannot be opened.
const ModuleCompiler& module_compiler();
// Whether this process has opened it (a process served from caches has not).
bool module_compiler_loaded();

// Which build of libkiln_llvm this process compiles with, for the module keys
// (module_cache.h): "llvm-half build-id:<hex>" of the library in the process or, unopened, of
// the file module_compiler() would open first (libkiln's directory), read without loading it;
// "llvm-half unknown" when neither is there. A rebuilt libkiln_llvm gets fresh keys even when
// libkiln itself is unchanged.
const std::string& module_compiler_id();

}  // namespace kiln::cpu

// Defined by libkiln_llvm: its ModuleCompiler.
extern "C" const kiln::cpu::ModuleCompiler* kiln_llvm_module_compiler();
