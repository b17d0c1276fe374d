// kiln/codegen_cpu/jit.h — the process-wide ORC LLJIT session that optimizes and links kernels.
//
// Every generated CPU kernel is an LLVM function with the C signature KernelFn. The kernel
// builder (codegen_cpu/kernel_codegen) creates an llvm::Module in its own LLVMContext, sets
// the data layout and triple reported here, and hands both to Jit::add_module, which runs
// the new-pass-manager O3 pipeline for the host CPU (loop interleaving off, loop and SLP
// vectorization on), links the module into the one LLJIT of the process and returns the
// addresses of the requested symbols. glibc's libmvec is visible to the JIT so that calls
// to vector math variants resolve. No LLVM header is included here: the LLVM types are
// forward-declared so that this header can be used outside codegen_cpu/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class LLVMContext;
}  // namespace llvm

namespace kiln::cpu {

// Every generated kernel has this C signature. args[i] points at element 0 of buffer i;
// params are the runtime integer parameters; [begin, end) is the range of grid dim 0 to run.
using KernelFn = void (*)(void* const* args, const int64_t* params, int64_t begin, int64_t end);

struct JitArtifacts {
  std::string llvm_ir;   // optimized module as text (when want_ir)
  std::string assembly;  // host assembly of the optimized module (when want_asm)
};

struct JitTimings {
  double optimize_ms = 0, codegen_ms = 0;
};

class Jit {
 public:
  // One LLJIT per process, created on first use (thread safe).
  static Jit& instance();

  // Optimizes the module (new pass manager O3 for the host CPU, LoopInterleaving=false,
  // LoopVectorization and SLP on), links it and returns the addresses of `names` in order.
  // want_ir/want_asm: fill artifacts (optimized IR text; assembly via the target machine).
  // Throws kiln::InternalError (with LLVM's message) if verification or linking fails.
  // May be called from several threads at once.
  std::vector<void*> add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                const std::vector<std::string>& names, bool want_ir, bool want_asm,
                                JitArtifacts* artifacts, JitTimings* timings);

  // Data layout / triple strings of the host target machine (the kernel builder sets them on modules).
  const std::string& data_layout() const;
  const std::string& target_triple() const;

  ~Jit();
  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

 private:
  Jit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::cpu
