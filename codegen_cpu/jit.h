// kiln/codegen_cpu/jit.h — the process-wide JIT: optimize, emit objects, link.
//
// Every generated CPU kernel is an LLVM function with the C signature KernelFn. The kernel
// builder (codegen_cpu/kernel_codegen) creates an llvm::Module in its own LLVMContext, sets
// the data layout and triple reported here, and hands it over in three steps: optimize (the
// new-pass-manager O3 pipeline for the host CPU, loop interleaving off, loop and SLP
// vectorization on), emit_object (relocatable object code for the host, position
// independent, small code model: the same bytes whatever process emits them) and
// link_object, which maps object code into a region of its own with kiln's object loader
// (codegen_cpu/object_loader.h, no LLVM) and returns the symbols' addresses. Object code is
// what the persistent compile cache stores: a later process links it without running LLVM.
// glibc's libmvec and libm are searched first, so that calls to vector math variants
// resolve. No LLVM header is included here: the LLVM types are forward-declared so that this
// header can be used outside codegen_cpu/.
#pragma once

#include "codegen_cpu/object_loader.h"
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

// Every generated kernel has the C signature ir::KernelFn (ir/kernel_abi.h).
using KernelFn = ir::KernelFn;

// Object code linked into the process: its kernels stay callable while a LinkedCode exists.
// The last owner's release unmaps the code: a process that compiles a fresh function per
// shape does not grow by each module it no longer runs.
class LinkedCode {
 public:
  ~LinkedCode();
  LinkedCode(const LinkedCode&) = delete;
  LinkedCode& operator=(const LinkedCode&) = delete;
  const std::vector<void*>& addrs() const;

 private:
  friend class Jit;
  explicit LinkedCode(std::unique_ptr<LoadedCode> code);
  std::unique_ptr<LoadedCode> code_;
};

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
  void optimize(llvm::Module& m, bool want_ir, JitArtifacts* artifacts, JitTimings* timings);
  // The module's object code for the host; want_asm: its assembly into artifacts as well.
  std::string emit_object(llvm::Module& m, bool want_asm, JitArtifacts* artifacts);
  // Links object code into a region of its own (names need only be unique within one
  // object) and returns the code, with the addresses of `names` in order. Object code that
  // does not link (a damaged cache entry, a missing symbol) is removed again: the result is
  // null and *error says why. perf_labels (KILN_PERF_MAP): a name for each of `names` in
  // /tmp/perf-<pid>.map, so that perf's profiles name the kernels (codegen_cpu/perf_map.h).
  std::shared_ptr<const LinkedCode> link_object(std::string_view object, const std::vector<std::string>& names,
                                                std::string* error,
                                                const std::vector<std::string>* perf_labels = nullptr);
  // The same for the objects of one module compiled in parts (codegen_cpu/object_bundle.h):
  // all link into one region, and `names` may be defined by any of them.
  std::shared_ptr<const LinkedCode> link_objects(const std::vector<std::string_view>& objects,
                                                 const std::vector<std::string>& names, std::string* error,
                                                 const std::vector<std::string>* perf_labels = nullptr);
  // optimize, emit_object and link_object in one call; a link failure is an InternalError.
  // May be called from several threads at once.
  std::shared_ptr<const LinkedCode> add_module(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                                               const std::vector<std::string>& names, bool want_ir, bool want_asm,
                                               JitArtifacts* artifacts, JitTimings* timings);
  // Modules of linked code that are still owned (tests of the code's lifetime).
  int64_t live_modules() const;

  // Data layout / triple strings of the host target machine (the kernel builder sets them on modules).
  const std::string& data_layout() const;
  const std::string& target_triple() const;
  // Everything besides the IR that the object code depends on: LLVM's version, the target
  // triple, CPU name and features, and the code generation settings (a cache key's part).
  const std::string& target_key() const;
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
