// kiln/codegen_cpu/llvm_scalar.cpp — value types, conversions, constants, reductions and the
// emit_compute dispatcher of the LLVM scalar emitter.
//
// Storage types: bool i8, f16 half, bf16 i16 (converted with integer operations, exactly as
// base/half.h does, so that no backend bf16 instruction with denormal flushing is
// involved), others natural. Compute types: bool i1, f16/bf16 float, others natural. A value
// of dtype f16/bf16 is always kept exactly representable in that dtype: every instruction
// producing f16/bf16 rounds its f32 result (round_to_dtype), so a fused chain of f16 ops
// gives the interpreter's results, which stores every intermediate tensor in f16.
// The per-family op emitters live in llvm_scalar_unary.cpp and llvm_scalar_binary.cpp.
#include "codegen_cpu/llvm_scalar.h"

#include "codegen_cpu/llvm_math.h"
#include "base/error.h"
#include "base/half.h"
#include "ir/op.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <limits>

namespace kiln::cpu {

using namespace detail;

namespace detail {

bool is_float_dtype(ScalarType t) { return is_floating_point(t); }

llvm::Value* fconst(ScalarEmitter&, llvm::Type* t, double v) { return llvm::ConstantFP::get(t, v); }
llvm::Value* iconst(llvm::Type* t, uint64_t v) { return llvm::ConstantInt::get(t, v); }

llvm::Value* is_nan(ScalarEmitter& e, llvm::Value* x) { return e.b.CreateFCmpUNO(x, x); }

llvm::Value* truthy(ScalarEmitter& e, llvm::Value* x) {
  llvm::Type* t = x->getType();
  if (t->isIntegerTy(1)) return x;
  if (t->isFloatingPointTy()) return e.b.CreateFCmpUNE(x, llvm::ConstantFP::get(t, 0.0));
  return e.b.CreateICmpNE(x, llvm::ConstantInt::get(t, 0));
}

llvm::Value* intrinsic1(ScalarEmitter& e, unsigned id, llvm::Value* x) {
  return e.b.CreateUnaryIntrinsic(static_cast<llvm::Intrinsic::ID>(id), x);
}
llvm::Value* intrinsic2(ScalarEmitter& e, unsigned id, llvm::Value* x, llvm::Value* y) {
  return e.b.CreateBinaryIntrinsic(static_cast<llvm::Intrinsic::ID>(id), x, y);
}

llvm::Value* round_to_dtype(ScalarEmitter& e, ScalarType t, llvm::Value* x) {
  if (t != ScalarType::Half && t != ScalarType::BFloat16) return x;
  return from_storage(e, t, to_storage(e, t, x));
}

llvm::Value* convert(ScalarEmitter& e, ScalarType from, ScalarType to, llvm::Value* x) {
  auto& b = e.b;
  llvm::LLVMContext& c = e.m.getContext();
  if (from == to) return x;
  llvm::Type* dst = compute_type(c, to);
  if (to == ScalarType::Bool) return truthy(e, x);
  if (from == ScalarType::Bool) return is_float_dtype(to) ? b.CreateUIToFP(x, dst) : b.CreateZExt(x, dst);
  const bool from_float = is_float_dtype(from), to_float = is_float_dtype(to);
  if (!from_float && !to_float) return b.CreateIntCast(x, dst, is_signed(from));
  if (from_float && !to_float) {
    // As PyTorch's x86 build (interp_math.h, convert): int64 and uint8 through int64, where NaN
    // and values outside [-2^63, 2^63) give INT64_MIN (x86's cvttsd2si); int32, int16 and int8
    // through int32, where they give INT32_MIN.
    const bool via32 = float_to_int_via_int32(to);
    const double bound = via32 ? 2147483648.0 : 9223372036854775808.0;
    llvm::Type* it = via32 ? b.getInt32Ty() : b.getInt64Ty();
    llvm::Type* ft = x->getType();
    llvm::Value* in_range = b.CreateAnd(b.CreateFCmpOGE(x, llvm::ConstantFP::get(ft, -bound)),
                                        b.CreateFCmpOLT(x, llvm::ConstantFP::get(ft, bound)));
    llvm::Value* lowest = via32 ? llvm::ConstantInt::get(it, static_cast<uint64_t>(std::numeric_limits<int32_t>::min()), true)
                                : llvm::ConstantInt::get(it, static_cast<uint64_t>(std::numeric_limits<int64_t>::min()));
    llvm::Value* i = b.CreateSelect(in_range, b.CreateFPToSI(x, it), lowest);
    return b.CreateTrunc(i, dst);  // no-op for i64 and i32
  }
  llvm::Value* f;
  if (!from_float)
    f = is_signed(from) ? b.CreateSIToFP(x, dst) : b.CreateUIToFP(x, dst);
  else
    f = b.CreateFPCast(x, dst);  // fpext / fptrunc / nothing
  return round_to_dtype(e, to, f);
}

}  // namespace detail

llvm::Type* storage_type(llvm::LLVMContext& c, ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return llvm::Type::getInt8Ty(c);
    case ScalarType::UInt8: return llvm::Type::getInt8Ty(c);
    case ScalarType::Int8: return llvm::Type::getInt8Ty(c);
    case ScalarType::Int16: return llvm::Type::getInt16Ty(c);
    case ScalarType::Int32: return llvm::Type::getInt32Ty(c);
    case ScalarType::Int64: return llvm::Type::getInt64Ty(c);
    case ScalarType::Half: return llvm::Type::getHalfTy(c);
    case ScalarType::BFloat16: return llvm::Type::getInt16Ty(c);
    case ScalarType::Float: return llvm::Type::getFloatTy(c);
    case ScalarType::Double: return llvm::Type::getDoubleTy(c);
  }
  internal_fail("storage_type: unknown dtype {}", static_cast<int>(t));
}

llvm::Type* compute_type(llvm::LLVMContext& c, ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return llvm::Type::getInt1Ty(c);
    case ScalarType::Half:
    case ScalarType::BFloat16: return llvm::Type::getFloatTy(c);
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64:
    case ScalarType::Float:
    case ScalarType::Double: return storage_type(c, t);
  }
  internal_fail("compute_type: unknown dtype {}", static_cast<int>(t));
}

llvm::Value* from_storage(ScalarEmitter& e, ScalarType t, llvm::Value* stored) {
  auto& b = e.b;
  switch (t) {
    case ScalarType::Bool: return b.CreateICmpNE(stored, b.getInt8(0));
    case ScalarType::Half: return b.CreateFPExt(stored, b.getFloatTy());
    case ScalarType::BFloat16:
      return b.CreateBitCast(b.CreateShl(b.CreateZExt(stored, b.getInt32Ty()), 16), b.getFloatTy());
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64:
    case ScalarType::Float:
    case ScalarType::Double: return stored;
  }
  internal_fail("from_storage: unknown dtype {}", static_cast<int>(t));
}

llvm::Value* to_storage(ScalarEmitter& e, ScalarType t, llvm::Value* computed) {
  auto& b = e.b;
  switch (t) {
    case ScalarType::Bool: return b.CreateZExt(computed, b.getInt8Ty());
    case ScalarType::Half: return b.CreateFPTrunc(computed, b.getHalfTy());  // IEEE round to nearest even
    case ScalarType::BFloat16: {  // base/half.h float_to_bf16_bits
      llvm::Value* x = b.CreateBitCast(computed, b.getInt32Ty());
      llvm::Value* hi = b.CreateLShr(x, 16);
      llvm::Value* nan = b.CreateOr(hi, b.getInt32(0x40));
      llvm::Value* rounded = b.CreateLShr(b.CreateAdd(x, b.CreateAdd(b.getInt32(0x7fff), b.CreateAnd(hi, b.getInt32(1)))), 16);
      llvm::Value* is_nan_bits = b.CreateICmpUGT(b.CreateAnd(x, b.getInt32(0x7fffffff)), b.getInt32(0x7f800000));
      return b.CreateTrunc(b.CreateSelect(is_nan_bits, nan, rounded), b.getInt16Ty());
    }
    case ScalarType::UInt8:
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64:
    case ScalarType::Float:
    case ScalarType::Double: return computed;
  }
  internal_fail("to_storage: unknown dtype {}", static_cast<int>(t));
}

llvm::Value* emit_const(ScalarEmitter& e, ScalarType t, const Scalar& v) {
  llvm::LLVMContext& c = e.m.getContext();
  llvm::Type* ty = compute_type(c, t);
  switch (t) {
    case ScalarType::Bool: return llvm::ConstantInt::get(ty, v.to_bool() ? 1 : 0);
    // Scalar::to converts a floating value as PyTorch does: int32, int16 and int8 through int32.
    case ScalarType::UInt8: return llvm::ConstantInt::get(ty, v.to<uint8_t>());
    case ScalarType::Int8: return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v.to<int8_t>()), true);
    case ScalarType::Int16: return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v.to<int16_t>()), true);
    case ScalarType::Int32: return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v.to<int32_t>()), true);
    case ScalarType::Int64: return llvm::ConstantInt::get(ty, static_cast<uint64_t>(v.to<int64_t>()));
    case ScalarType::Half: return llvm::ConstantFP::get(ty, static_cast<double>(static_cast<float>(v.to<Half>())));
    case ScalarType::BFloat16: return llvm::ConstantFP::get(ty, static_cast<double>(static_cast<float>(v.to<BFloat16>())));
    case ScalarType::Float: return llvm::ConstantFP::get(ty, static_cast<double>(v.to<float>()));
    case ScalarType::Double: return llvm::ConstantFP::get(ty, v.to_double());
  }
  internal_fail("emit_const: unknown dtype {}", static_cast<int>(t));
}

llvm::Value* from_index(ScalarEmitter& e, ScalarType t, llvm::Value* i64) { return convert(e, ScalarType::Int64, t, i64); }

namespace {

void check_accepts(const ir::OpInfo& info, ScalarType t) {
  const bool ok = !(info.has(ir::traits::FloatOnly) && !is_float_dtype(t)) &&
                  !(info.has(ir::traits::IntOnly) && is_float_dtype(t)) &&
                  !(info.has(ir::traits::NoBool) && t == ScalarType::Bool);
  if (!ok) internal_fail("emit_compute: {} does not accept dtype {}", info.name, dtype_name(t));
}

// clamp(x, lo, hi) = min(max(x, lo), hi) as std::min/std::max do it; a NaN bound gives NaN.
llvm::Value* emit_clamp(ScalarEmitter& e, ScalarType t, llvm::Value* x, llvm::Value* lo, llvm::Value* hi) {
  auto& b = e.b;
  if (is_float_dtype(t)) {
    llvm::Value* m = b.CreateSelect(b.CreateFCmpOLT(x, lo), lo, x);   // std::max(x, lo)
    llvm::Value* r = b.CreateSelect(b.CreateFCmpOLT(hi, m), hi, m);   // std::min(m, hi)
    llvm::Value* nan_bound = b.CreateOr(is_nan(e, lo), is_nan(e, hi));
    return b.CreateSelect(nan_bound, llvm::ConstantFP::getQNaN(x->getType()), r);
  }
  const bool s = is_signed(t);
  llvm::Value* m = b.CreateSelect(s ? b.CreateICmpSLT(x, lo) : b.CreateICmpULT(x, lo), lo, x);
  return b.CreateSelect(s ? b.CreateICmpSLT(hi, m) : b.CreateICmpULT(hi, m), hi, m);
}

}  // namespace

llvm::Value* emit_compute(ScalarEmitter& e, const ir::KInst& inst, const std::vector<ScalarType>& in,
                          const std::vector<llvm::Value*>& operands) {
  const ir::OpInfo& info = ir::op_info(inst.op);
  auto need = [&](size_t n) {
    if (in.size() != n || operands.size() != n)
      internal_fail("emit_compute: {} takes {} operands, got {} dtypes and {} values", info.name, n, in.size(), operands.size());
  };
  llvm::Value* r = nullptr;
  switch (info.family) {
    case ir::OpFamily::Unary:
      need(1);
      check_accepts(info, in[0]);
      r = emit_unary(e, ir::as_unary(inst.op), in[0], operands[0]);
      break;
    case ir::OpFamily::Binary:
      need(2);
      check_accepts(info, in[0]);
      r = emit_binary(e, ir::as_binary(inst.op), inst.attrs, in[0], operands[0], operands[1]);
      break;
    case ir::OpFamily::Ternary:
      need(3);
      switch (ir::as_ternary(inst.op)) {
        case ir::TernaryOp::where: r = e.b.CreateSelect(operands[0], operands[1], operands[2]); break;
        case ir::TernaryOp::clamp:
          check_accepts(info, in[0]);
          r = emit_clamp(e, in[0], operands[0], operands[1], operands[2]);
          break;
      }
      break;
    case ir::OpFamily::Cast:
      need(1);
      switch (ir::as_cast(inst.op)) {
        case ir::CastOp::convert_element_type: r = convert(e, in[0], inst.dtype, operands[0]); break;
        case ir::CastOp::clone:
        case ir::CastOp::detach: r = operands[0]; break;
        case ir::CastOp::no_grad_copy: internal_fail("llvm: no_grad_copy is decomposed before kernels");
      }
      break;
    case ir::OpFamily::Reduction:
    case ir::OpFamily::Scan:
    case ir::OpFamily::View:
    case ir::OpFamily::Shape:
    case ir::OpFamily::Index:
    case ir::OpFamily::Factory:
    case ir::OpFamily::Random:
    case ir::OpFamily::Matmul:
    case ir::OpFamily::Conv:
    case ir::OpFamily::Sort:
    KILN_CASE_COMPOSITE_FAMILIES:
    case ir::OpFamily::Custom: internal_fail("emit_compute: {} is not an elementwise prim", info.name);
  }
  if (r == nullptr) internal_fail("emit_compute: {} produced no value", info.name);
  r = round_to_dtype(e, inst.dtype, r);
  if (r->getType() != compute_type(e.m.getContext(), inst.dtype))
    internal_fail("emit_compute: {} on {} does not produce dtype {}", info.name, dtype_name(in.empty() ? inst.dtype : in[0]),
                  dtype_name(inst.dtype));
  return r;
}

// ---- reductions -----------------------------------------------------------------------------

llvm::Value* reduce_identity(ScalarEmitter& e, ir::ReductionOp op, ScalarType acc) {
  llvm::Type* t = compute_type(e.m.getContext(), acc);
  const bool flt = is_float_dtype(acc);
  auto int_extreme = [&](bool max) -> llvm::Value* {
    const unsigned w = t->getIntegerBitWidth();
    if (acc == ScalarType::Bool) return llvm::ConstantInt::get(t, max ? 1 : 0);
    if (is_signed(acc)) return llvm::ConstantInt::get(t, max ? llvm::APInt::getSignedMaxValue(w) : llvm::APInt::getSignedMinValue(w));
    return llvm::ConstantInt::get(t, max ? llvm::APInt::getMaxValue(w) : llvm::APInt::getMinValue(w));
  };
  switch (op) {
    case ir::ReductionOp::sum: return flt ? llvm::ConstantFP::get(t, 0.0) : llvm::ConstantInt::get(t, 0);
    case ir::ReductionOp::prod: return flt ? llvm::ConstantFP::get(t, 1.0) : llvm::ConstantInt::get(t, 1);
    case ir::ReductionOp::amax: return flt ? llvm::ConstantFP::getInfinity(t, true) : int_extreme(false);
    case ir::ReductionOp::amin: return flt ? llvm::ConstantFP::getInfinity(t, false) : int_extreme(true);
    case ir::ReductionOp::any: return e.b.getInt1(false);
    case ir::ReductionOp::all: return e.b.getInt1(true);
    case ir::ReductionOp::argmax:
    case ir::ReductionOp::argmin: internal_fail("reduce_identity: {} is built from emit_argcmp", ir::reduction_name(op));
  }
  internal_fail("reduce_identity: unknown op {}", static_cast<int>(op));
}

llvm::Value* reduce_combine(ScalarEmitter& e, ir::ReductionOp op, ScalarType acc, llvm::Value* a, llvm::Value* x) {
  auto& b = e.b;
  const bool flt = is_float_dtype(acc), bl = acc == ScalarType::Bool, s = is_signed(acc);
  const bool logical = op == ir::ReductionOp::any || op == ir::ReductionOp::all;
  if (!logical && x->getType() != a->getType())
    internal_fail("reduce_combine: {} value type differs from the {} accumulator", ir::reduction_name(op), dtype_name(acc));
  // Only `reassoc`: lets the loop vectorizer reorder the fold, nothing else changes.
  auto reassociable = [](llvm::Value* r) {
    llvm::FastMathFlags reassoc;
    reassoc.setAllowReassoc();
    if (auto* i = llvm::dyn_cast<llvm::Instruction>(r)) i->setFastMathFlags(reassoc);
    return r;
  };
  switch (op) {
    case ir::ReductionOp::sum:
      if (flt) return reassociable(b.CreateFAdd(a, x));
      return bl ? b.CreateOr(a, x) : b.CreateAdd(a, x);
    case ir::ReductionOp::prod:
      if (flt) return reassociable(b.CreateFMul(a, x));
      return bl ? b.CreateAnd(a, x) : b.CreateMul(a, x);
    case ir::ReductionOp::amax:
      if (flt) return intrinsic2(e, llvm::Intrinsic::maximum, a, x);
      return intrinsic2(e, s ? llvm::Intrinsic::smax : llvm::Intrinsic::umax, a, x);
    case ir::ReductionOp::amin:
      if (flt) return intrinsic2(e, llvm::Intrinsic::minimum, a, x);
      return intrinsic2(e, s ? llvm::Intrinsic::smin : llvm::Intrinsic::umin, a, x);
    case ir::ReductionOp::any: return b.CreateOr(truthy(e, a), truthy(e, x));
    case ir::ReductionOp::all: return b.CreateAnd(truthy(e, a), truthy(e, x));
    case ir::ReductionOp::argmax:
    case ir::ReductionOp::argmin: internal_fail("reduce_combine: {} is built from emit_argcmp", ir::reduction_name(op));
  }
  internal_fail("reduce_combine: unknown op {}", static_cast<int>(op));
}

llvm::Value* emit_argcmp(ScalarEmitter& e, ir::ReductionOp op, ScalarType t, llvm::Value* best, llvm::Value* x) {
  auto& b = e.b;
  bool max = false;
  switch (op) {
    case ir::ReductionOp::argmax: max = true; break;
    case ir::ReductionOp::argmin: max = false; break;
    case ir::ReductionOp::sum:
    case ir::ReductionOp::prod:
    case ir::ReductionOp::amax:
    case ir::ReductionOp::amin:
    case ir::ReductionOp::any:
    case ir::ReductionOp::all: internal_fail("emit_argcmp: {} is not argmax/argmin", ir::reduction_name(op));
  }
  if (is_float_dtype(t)) {  // NaN wins and then sticks; ties keep the earlier element
    llvm::Value* better = max ? b.CreateFCmpOGT(x, best) : b.CreateFCmpOLT(x, best);
    return b.CreateAnd(b.CreateNot(is_nan(e, best)), b.CreateOr(is_nan(e, x), better));
  }
  const bool s = is_signed(t);
  if (max) return s ? b.CreateICmpSGT(x, best) : b.CreateICmpUGT(x, best);
  return s ? b.CreateICmpSLT(x, best) : b.CreateICmpULT(x, best);
}

}  // namespace kiln::cpu
