// kiln/codegen_cpu/llvm_scalar_unary.cpp — LLVM IR for the unary pointwise prims.
//
// Mirrors runtime/interpreter/interp_unary.cpp: integers wrap (abs and neg of the minimum give it back),
// round is half to even (llvm.roundeven), sign(NaN) = 0 and sign(-0.0) = +0.0, signbit reads
// the sign bit (so -0.0 and -NaN are negative), the rounding ops return integers unchanged.
// Transcendental functions go through emit_math (libmvec or kiln's own code, llvm_math.h);
// sqrt, rsqrt = 1/sqrt, reciprocal, floor, ceil, trunc, round are exact IEEE operations.
#include "codegen_cpu/llvm_math.h"
#include "base/error.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

namespace kiln::cpu::detail {

namespace {

llvm::Value* rounding(ScalarEmitter& e, ScalarType t, llvm::Intrinsic::ID id, llvm::Value* x) {
  return is_float_dtype(t) ? intrinsic1(e, id, x) : x;
}

llvm::Value* one(llvm::Value* x) { return llvm::ConstantFP::get(x->getType(), 1.0); }

}  // namespace

llvm::Value* emit_unary(ScalarEmitter& e, ir::UnaryOp op, ScalarType t, llvm::Value* x) {
  using ir::UnaryOp;
  using llvm::Intrinsic::ID;
  auto& b = e.b;
  const bool flt = is_float_dtype(t);
  llvm::Type* ty = x->getType();
  auto m1 = [&](MathFn fn) { return emit_math(e, fn, {x}); };
  switch (op) {
    case UnaryOp::abs:
      if (flt) return intrinsic1(e, llvm::Intrinsic::fabs, x);
      if (!is_signed(t)) return x;
      return b.CreateBinaryIntrinsic(llvm::Intrinsic::abs, x, b.getFalse());  // abs(INT_MIN) = INT_MIN
    case UnaryOp::neg: return flt ? b.CreateFNeg(x) : b.CreateNeg(x);
    case UnaryOp::exp: return m1(MathFn::exp);
    case UnaryOp::exp2: return m1(MathFn::exp2);
    case UnaryOp::expm1: return m1(MathFn::expm1);
    case UnaryOp::log: return m1(MathFn::log);
    case UnaryOp::log2: return m1(MathFn::log2);
    case UnaryOp::log10: return m1(MathFn::log10);
    case UnaryOp::log1p: return m1(MathFn::log1p);
    case UnaryOp::sqrt: return intrinsic1(e, llvm::Intrinsic::sqrt, x);
    case UnaryOp::rsqrt: return b.CreateFDiv(one(x), intrinsic1(e, llvm::Intrinsic::sqrt, x));
    case UnaryOp::reciprocal: return b.CreateFDiv(one(x), x);
    case UnaryOp::sin: return m1(MathFn::sin);
    case UnaryOp::cos: return m1(MathFn::cos);
    case UnaryOp::tan: return m1(MathFn::tan);
    case UnaryOp::asin: return m1(MathFn::asin);
    case UnaryOp::acos: return m1(MathFn::acos);
    case UnaryOp::atan: return m1(MathFn::atan);
    case UnaryOp::sinh: return m1(MathFn::sinh);
    case UnaryOp::cosh: return m1(MathFn::cosh);
    case UnaryOp::tanh: return m1(MathFn::tanh);
    case UnaryOp::asinh: return m1(MathFn::asinh);
    case UnaryOp::acosh: return m1(MathFn::acosh);
    case UnaryOp::atanh: return m1(MathFn::atanh);
    case UnaryOp::erf: return m1(MathFn::erf);
    case UnaryOp::erfc: return m1(MathFn::erfc);
    case UnaryOp::erfinv: return emit_erfinv(e, x);
    case UnaryOp::lgamma: return m1(MathFn::lgamma);
    case UnaryOp::sigmoid:  // 1 / (1 + exp(-x)), as the interpreter
      return b.CreateFDiv(one(x), b.CreateFAdd(one(x), emit_math(e, MathFn::exp, {b.CreateFNeg(x)})));
    case UnaryOp::floor: return rounding(e, t, llvm::Intrinsic::floor, x);
    case UnaryOp::ceil: return rounding(e, t, llvm::Intrinsic::ceil, x);
    case UnaryOp::round: return rounding(e, t, llvm::Intrinsic::roundeven, x);
    case UnaryOp::trunc: return rounding(e, t, llvm::Intrinsic::trunc, x);
    case UnaryOp::frac: return b.CreateFSub(x, intrinsic1(e, llvm::Intrinsic::trunc, x));
    case UnaryOp::sign:
      if (t == ScalarType::Bool) return x;
      if (flt) {  // (0 < x) - (x < 0): NaN -> 0, -0.0 -> +0.0
        llvm::Value* zero = llvm::ConstantFP::get(ty, 0.0);
        return b.CreateFSub(b.CreateUIToFP(b.CreateFCmpOLT(zero, x), ty), b.CreateUIToFP(b.CreateFCmpOLT(x, zero), ty));
      } else {
        llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
        llvm::Value* pos = b.CreateZExt(is_signed(t) ? b.CreateICmpSGT(x, zero) : b.CreateICmpNE(x, zero), ty);
        llvm::Value* neg = is_signed(t) ? b.CreateZExt(b.CreateICmpSLT(x, zero), ty) : zero;
        return b.CreateSub(pos, neg);
      }
    case UnaryOp::signbit:
      if (flt) {
        llvm::Type* it = b.getIntNTy(ty->getPrimitiveSizeInBits());
        return b.CreateICmpSLT(b.CreateBitCast(x, it), llvm::ConstantInt::get(it, 0));
      }
      if (!is_signed(t)) return b.getFalse();
      return b.CreateICmpSLT(x, llvm::ConstantInt::get(ty, 0));
    case UnaryOp::isnan: return flt ? is_nan(e, x) : b.getFalse();
    case UnaryOp::isinf:
      if (!flt) return b.getFalse();
      return b.CreateFCmpOEQ(intrinsic1(e, llvm::Intrinsic::fabs, x), llvm::ConstantFP::getInfinity(ty));
    case UnaryOp::isfinite:
      if (!flt) return b.getTrue();
      return b.CreateFCmpOLT(intrinsic1(e, llvm::Intrinsic::fabs, x), llvm::ConstantFP::getInfinity(ty));
    case UnaryOp::bitwise_not: return b.CreateNot(x);
    case UnaryOp::logical_not: return b.CreateNot(truthy(e, x));
  }
  internal_fail("emit_unary: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::cpu::detail
