// kiln/codegen_cpu/jit.h — the process-wide JIT: optimize, emit objects, link.
//
// Every generated CPU kernel is an LLVM function with the C signature KernelFn. The kernel
// builder (codegen_cpu/kernel_codegen) creates an llvm::Module in its own LLVMContext, sets
// the data layout and triple reported here, and hands it over in three steps: optimize (the
// new-pass-manager O3 pipeline for the host CPU, loop interleaving off, loop and SLP
// vectorization on), emit_object (relocatable object code for the host, position
// independent, small code model: the same bytes whatever process emits them); linking is
// codegen_cpu/linked_code.h's, kiln's own loader, no LLVM. Object code is
// what the persistent compile cache stores: a later process links it without running LLVM.
// glibc's libmvec and libm are searched first, so that calls to vector math variants
// resolve. No LLVM header is included here: the LLVM types are forward-declared so that this
// header can be used outside codegen_cpu/.
#pragma once

#include "codegen_cpu/linked_code.h"
#include "ir/kernel_abi.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Module;
class LLVMContext;
}  // namespace llvm

namespace kiln::cpu {

// The code generation settings optimize and emit_object apply, for cache keys
// (codegen_cpu/module_cache.h): a change to them must change this text.
inline constexpr const char* kCodegenSettings = "O3 no-interleave pic small";

// Every generated kernel has the C signature ir::KernelFn (ir/kernel_abi.h).
using KernelFn = ir::KernelFn;

struct JitArtifacts {
  std::string llvm_ir;   // optimized module as text (when want_ir)
  std::string assembly;  // host assembly of the optimized module (when want_asm)
};

struct JitTimings {
  double optimize_ms = 0, codegen_ms = 0;
};

class Jit {
 public:
  // One per process, created on first use (thread safe); its compiler and linker are set
  // up on first use of each.
  static Jit& instance();

  // Verifies and optimizes the module in place (O3 for the host CPU, LoopInterleaving=false,
  // LoopVectorization and SLP on); want_ir: the optimized module's text into artifacts.
  // Throws kiln::InternalError (with LLVM's message) if the module does not verify.
  // `llvm_cpu` names another CPU to optimize and emit for, with that CPU's features and none of
  // the host's (base/cpu_level.h: "x86-64-v3" for an exported program's portable code);
  // empty: the host.
  void optimize(llvm::Module& m, bool want_ir, JitArtifacts* artifacts, JitTimings* timings,
                const std::string& llvm_cpu = {});
  // The module's object code for the host (or llvm_cpu); want_asm: its assembly into artifacts as well.
  std::string emit_object(llvm::Module& m, bool want_asm, JitArtifacts* artifacts, const std::string& llvm_cpu = {});
  // optimize, emit_object and link_objects (linked_code.h) in one call; a link failure is an
  // InternalError.
  // May be called from several threads at once.
  std::shared_ptr<const LinkedCode> add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                               const std::vector<std::string>& names, bool want_ir, bool want_asm,
                                               JitArtifacts* artifacts, JitTimings* timings);

  // Data layout / triple strings of the host target machine (the kernel builder sets them on modules).
  const std::string& data_layout() const;
  const std::string& target_triple() const;
  // Whether this process has set up LLVM's compiler (registered the target, made a target
  // machine): false while every kernel came from a cache.
  bool compiler_started() const;

  Jit(const Jit&) = delete;
  Jit& operator=(const Jit&) = delete;

 private:
  Jit();
  ~Jit();  // never runs: the instance lives until exit, as code a static object owns may
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kiln::cpu
