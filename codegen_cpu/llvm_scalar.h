// kiln/codegen_cpu/llvm_scalar.h — LLVM IR for kiln's scalar ops (private to codegen_cpu).
//
// The kernel builder turns each ir::KInst of kind Compute into LLVM IR through emit_compute,
// and reductions through reduce_identity / reduce_combine / emit_argcmp. Values live in two
// types: the storage type (what a buffer holds: bool as i8, f16 as half, bf16 as bfloat)
// and the compute type (bool as i1, f16/bf16 as float, the rest natural). The semantics are
// exactly those of the reference interpreter (runtime/interp_*.cpp), PyTorch's: integer
// floor division and remainder, NaN-propagating maximum/minimum, round half to even, x86-like
// float->int casts, wrapping integer arithmetic. One deliberate difference: integer division
// or remainder by zero, which the interpreter reports as an error, yields 0 here (generated
// code cannot throw). Transcendental functions compute through glibc's libmvec (or kiln's own
// f32 code), scalar and vector code alike; their accuracy is documented in codegen_cpu/llvm_math.h.
#pragma once

#include "base/dtype.h"
#include "base/scalar.h"
#include "ir/kernel.h"

#include <llvm/IR/IRBuilder.h>

#include <vector>

namespace kiln::cpu {

struct ScalarEmitter {
  llvm::IRBuilder<>& b;
  llvm::Module& m;
  // The widest vector registers the code's target has (base/cpu_level.h: the host's, or an
  // exported level's): which vector variants of libm calls it may name.
  int vector_bits;
};

// Type of a value of `t` in memory (bool: i8, f16: half, bf16: bfloat).
llvm::Type* storage_type(llvm::LLVMContext& c, ScalarType t);
// Type a value is computed in (bool: i1, f16/bf16: float, others natural).
llvm::Type* compute_type(llvm::LLVMContext& c, ScalarType t);
// storage -> compute
llvm::Value* from_storage(ScalarEmitter& e, ScalarType t, llvm::Value* stored);
// compute -> storage (f32->f16/bf16 round to nearest even, as base/half.h)
llvm::Value* to_storage(ScalarEmitter& e, ScalarType t, llvm::Value* computed);
// A constant in compute type.
llvm::Value* emit_const(ScalarEmitter& e, ScalarType t, const Scalar& v);
// A Compute instruction: `in` gives the dtypes of the operands (the result dtype is inst.dtype);
// operands are in compute type; the result is in compute type of inst.dtype.
llvm::Value* emit_compute(ScalarEmitter& e, const ir::KInst& inst, const std::vector<ScalarType>& in,
                          const std::vector<llvm::Value*>& operands);
// A Random instruction (codegen_cpu/llvm_random.cpp): element `index` (i64) of the Philox draw
// (seed, offset), in compute type of inst.dtype, bit for bit frontend/ops_random.h's.
llvm::Value* emit_random(ScalarEmitter& e, const ir::KInst& inst, llvm::Value* index, llvm::Value* seed,
                         llvm::Value* offset);
// Converts an i64 (index) value to compute type of t (for KOp::Index with a non-i64 dtype).
llvm::Value* from_index(ScalarEmitter& e, ScalarType t, llvm::Value* i64);
// Reductions (not argmax/argmin, which the kernel builder handles as (value, index) pairs
// using emit_argcmp): identity element and combine, with the interpreter's NaN rules
// (runtime/interpreter/interp_reduction.cpp). Accumulation dtype = stage acc_dtype. Float sum/prod combine
// carries the `reassoc` flag (only that) so the loop vectorizer can vectorize it.
llvm::Value* reduce_identity(ScalarEmitter& e, ir::ReductionOp op, ScalarType acc);
llvm::Value* reduce_combine(ScalarEmitter& e, ir::ReductionOp op, ScalarType acc, llvm::Value* a, llvm::Value* x);
// For argmax/argmin: i1 "x should replace the current best" (NaN wins, first index kept on ties).
llvm::Value* emit_argcmp(ScalarEmitter& e, ir::ReductionOp op, ScalarType t, llvm::Value* best, llvm::Value* x);

}  // namespace kiln::cpu
