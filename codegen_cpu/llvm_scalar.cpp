// kiln/codegen_cpu/llvm_scalar.cpp — LLVM IR for kiln's scalar ops (stub; filled in next).
//
// Placeholder bodies so that code against codegen_cpu/llvm_scalar.h links.
#include "codegen_cpu/llvm_scalar.h"

#include "frontend/error.h"

namespace kiln::cpu {

llvm::Type* storage_type(llvm::LLVMContext&, ScalarType) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Type* compute_type(llvm::LLVMContext&, ScalarType) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Value* from_storage(ScalarEmitter&, ScalarType, llvm::Value*) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Value* to_storage(ScalarEmitter&, ScalarType, llvm::Value*) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Value* emit_const(ScalarEmitter&, ScalarType, const Scalar&) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Value* emit_compute(ScalarEmitter&, const ir::KInst&, const std::vector<ScalarType>&,
                          const std::vector<llvm::Value*>&) {
  internal_fail("llvm_scalar: not implemented yet");
}
llvm::Value* from_index(ScalarEmitter&, ScalarType, llvm::Value*) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Value* reduce_identity(ScalarEmitter&, ir::ReductionOp, ScalarType) { internal_fail("llvm_scalar: not implemented yet"); }
llvm::Value* reduce_combine(ScalarEmitter&, ir::ReductionOp, ScalarType, llvm::Value*, llvm::Value*) {
  internal_fail("llvm_scalar: not implemented yet");
}
llvm::Value* emit_argcmp(ScalarEmitter&, ir::ReductionOp, ScalarType, llvm::Value*, llvm::Value*) {
  internal_fail("llvm_scalar: not implemented yet");
}

}  // namespace kiln::cpu
