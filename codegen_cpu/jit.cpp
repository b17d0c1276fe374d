// kiln/codegen_cpu/jit.cpp — the process-wide ORC LLJIT session (stub; filled in next).
//
// Placeholder bodies so that code against codegen_cpu/jit.h links.
#include "codegen_cpu/jit.h"

#include "frontend/error.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace kiln::cpu {

struct Jit::Impl {
  std::string layout, triple;
};

Jit::Jit() : impl_(std::make_unique<Impl>()) {}
Jit::~Jit() = default;

Jit& Jit::instance() {
  static Jit jit;
  return jit;
}

std::vector<void*> Jit::add_module(std::unique_ptr<llvm::Module>, std::unique_ptr<llvm::LLVMContext>,
                                   const std::vector<std::string>&, bool, bool, JitArtifacts*, JitTimings*) {
  internal_fail("Jit::add_module: not implemented yet");
}

const std::string& Jit::data_layout() const { return impl_->layout; }
const std::string& Jit::target_triple() const { return impl_->triple; }

}  // namespace kiln::cpu
