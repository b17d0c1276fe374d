// kiln/codegen_cpu/llvm_scalar_binary.cpp — LLVM IR for the binary pointwise prims.
//
// Mirrors runtime/interpreter/interp_binary.cpp, branch-free (selects) so that loops vectorize:
//  - integers wrap; bool add is `or`, bool mul is `and`;
//  - div "trunc"/"floor" and remainder/fmod on integers: INT_MIN / -1 wraps to INT_MIN and
//    INT_MIN % -1 = 0. Division (and remainder, fmod) by an integer zero gives 0: the
//    interpreter throws ZeroDivisionError there, which generated code cannot do;
//  - float floor division is CPython's float_floor_div, remainder takes the divisor's sign;
//  - integer pow by repeated squaring unrolled over the exponent's bits, with PyTorch's
//    answers for negative exponents; float pow, atan2 and hypot call libm (llvm_math.h);
//  - maximum/minimum propagate NaN (a canonical quiet NaN), fmax/fmin ignore it; both pick
//    like std::max / std::min otherwise (fmax(-0.0, +0.0) = -0.0 as glibc's fmax);
//  - shifts by a negative amount or by the bit width or more are defined (0, or -1 / 0 for
//    right shifts of negative / non-negative values).
#include "codegen_cpu/llvm_math.h"
#include "base/error.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <optional>
#include <string>

namespace kiln::cpu::detail {

namespace {

struct IntDiv {
  llvm::Value* q;  // truncating quotient (0 when b == 0)
  llvm::Value* r;  // C remainder (0 when b == 0)
};

// Truncating division and remainder with the interpreter's INT_MIN / -1 rules and 0 for b == 0.
IntDiv int_div(ScalarEmitter& e, ScalarType t, llvm::Value* a, llvm::Value* b) {
  auto& B = e.b;
  llvm::Type* ty = a->getType();
  llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  llvm::Value* b_zero = B.CreateICmpEQ(b, zero);
  if (!is_signed(t)) {
    llvm::Value* safe = B.CreateSelect(b_zero, one, b);
    return {B.CreateSelect(b_zero, zero, B.CreateUDiv(a, safe)), B.CreateSelect(b_zero, zero, B.CreateURem(a, safe))};
  }
  llvm::Value* b_m1 = B.CreateICmpEQ(b, llvm::ConstantInt::getAllOnesValue(ty));
  llvm::Value* special = B.CreateOr(b_zero, b_m1);
  llvm::Value* safe = B.CreateSelect(special, one, b);
  llvm::Value* q = B.CreateSelect(b_zero, zero, B.CreateSelect(b_m1, B.CreateNeg(a), B.CreateSDiv(a, safe)));
  llvm::Value* r = B.CreateSelect(special, zero, B.CreateSRem(a, safe));
  return {q, r};
}

llvm::Value* is_neg(ScalarEmitter& e, ScalarType t, llvm::Value* x) {
  if (!is_signed(t)) return e.b.getFalse();
  return e.b.CreateICmpSLT(x, llvm::ConstantInt::get(x->getType(), 0));
}

// (mod != 0) && ((b < 0) != (mod < 0)), with C's float comparisons (NaN != 0 is true).
llvm::Value* fixup_needed(ScalarEmitter& e, llvm::Value* mod, llvm::Value* b) {
  auto& B = e.b;
  llvm::Value* zero = llvm::ConstantFP::get(mod->getType(), 0.0);
  return B.CreateAnd(B.CreateFCmpUNE(mod, zero), B.CreateXor(B.CreateFCmpOLT(b, zero), B.CreateFCmpOLT(mod, zero)));
}

llvm::Value* float_floor_div(ScalarEmitter& e, llvm::Value* a, llvm::Value* b) {
  auto& B = e.b;
  llvm::Type* ty = a->getType();
  auto c = [&](double v) { return llvm::ConstantFP::get(ty, v); };
  llvm::Value* quot = B.CreateFDiv(a, b);
  llvm::Value* mod = B.CreateFRem(a, b);
  llvm::Value* div = B.CreateFDiv(B.CreateFSub(a, mod), b);
  div = B.CreateSelect(fixup_needed(e, mod, b), B.CreateFSub(div, c(1.0)), div);
  llvm::Value* fl = intrinsic1(e, llvm::Intrinsic::floor, div);
  fl = B.CreateSelect(B.CreateFCmpOGT(B.CreateFSub(div, fl), c(0.5)), B.CreateFAdd(fl, c(1.0)), fl);
  llvm::Value* r = B.CreateSelect(B.CreateFCmpOEQ(div, c(0.0)), intrinsic2(e, llvm::Intrinsic::copysign, c(0.0), quot), fl);
  return B.CreateSelect(B.CreateFCmpOEQ(b, c(0.0)), quot, r);
}

llvm::Value* int_pow(ScalarEmitter& e, ScalarType t, llvm::Value* a, llvm::Value* p) {
  auto& B = e.b;
  llvm::Type* ty = a->getType();
  const unsigned w = ty->getIntegerBitWidth();
  llvm::Value* zero = llvm::ConstantInt::get(ty, 0);
  llvm::Value* one = llvm::ConstantInt::get(ty, 1);
  llvm::Value* result = one;
  llvm::Value* base = a;
  // A non-negative exponent has at most w (unsigned) or w - 1 (signed) significant bits.
  const unsigned bits = is_signed(t) ? w - 1 : w;
  for (unsigned i = 0; i < bits; ++i) {
    llvm::Value* bit = B.CreateICmpNE(B.CreateAnd(p, llvm::ConstantInt::get(ty, uint64_t{1} << i)), zero);
    result = B.CreateSelect(bit, B.CreateMul(result, base), result);
    if (i + 1 < bits) base = B.CreateMul(base, base);
  }
  if (!is_signed(t)) return result;
  // Negative exponent: 1 for base 1, +-1 for base -1 by parity, else 0.
  llvm::Value* odd = B.CreateICmpNE(B.CreateAnd(p, one), zero);
  llvm::Value* m1 = llvm::ConstantInt::getAllOnesValue(ty);
  llvm::Value* negp = B.CreateSelect(B.CreateICmpEQ(a, one), one,
                                     B.CreateSelect(B.CreateICmpEQ(a, m1), B.CreateSelect(odd, m1, one), zero));
  return B.CreateSelect(B.CreateICmpSLT(p, zero), negp, result);
}

llvm::Value* shift_left(ScalarEmitter& e, llvm::Value* a, llvm::Value* s) {
  auto& B = e.b;
  llvm::Type* ty = a->getType();
  const unsigned w = ty->getIntegerBitWidth();
  // The shift amount read as signed (make_signed_t<C>): negative or >= width gives 0.
  llvm::Value* out_of_range = B.CreateICmpUGE(s, llvm::ConstantInt::get(ty, w));
  llvm::Value* safe = B.CreateSelect(out_of_range, llvm::ConstantInt::get(ty, 0), s);
  return B.CreateSelect(out_of_range, llvm::ConstantInt::get(ty, 0), B.CreateShl(a, safe));
}

llvm::Value* shift_right(ScalarEmitter& e, ScalarType t, llvm::Value* a, llvm::Value* s) {
  auto& B = e.b;
  llvm::Type* ty = a->getType();
  const unsigned w = ty->getIntegerBitWidth();
  const unsigned max_shift = is_signed(t) ? w - 1 : w;
  // Unsigned compare: a negative amount (as signed) is a huge unsigned one.
  llvm::Value* out_of_range = B.CreateICmpUGE(s, llvm::ConstantInt::get(ty, max_shift));
  llvm::Value* safe = B.CreateSelect(out_of_range, llvm::ConstantInt::get(ty, 0), s);
  llvm::Value* shifted = is_signed(t) ? B.CreateAShr(a, safe) : B.CreateLShr(a, safe);
  llvm::Value* fill = B.CreateSelect(is_neg(e, t, a), llvm::ConstantInt::getAllOnesValue(ty), llvm::ConstantInt::get(ty, 0));
  return B.CreateSelect(out_of_range, fill, shifted);
}

// std::max(a, b) = (a < b) ? b : a; std::min(a, b) = (b < a) ? b : a.
llvm::Value* pick(ScalarEmitter& e, ScalarType t, bool max, llvm::Value* a, llvm::Value* b) {
  auto& B = e.b;
  if (t == ScalarType::Bool) return max ? B.CreateOr(a, b) : B.CreateAnd(a, b);
  llvm::Value* x = max ? a : b;
  llvm::Value* y = max ? b : a;
  llvm::Value* lt = is_float_dtype(t) ? B.CreateFCmpOLT(x, y) : is_signed(t) ? B.CreateICmpSLT(x, y) : B.CreateICmpULT(x, y);
  return B.CreateSelect(lt, b, a);
}

llvm::Value* cmp(ScalarEmitter& e, ScalarType t, llvm::CmpInst::Predicate fp, llvm::CmpInst::Predicate sp,
                 llvm::CmpInst::Predicate up, llvm::Value* a, llvm::Value* b) {
  if (is_float_dtype(t)) return e.b.CreateFCmp(fp, a, b);
  return e.b.CreateICmp(is_signed(t) ? sp : up, a, b);
}

}  // namespace

llvm::Value* emit_binary(ScalarEmitter& e, ir::BinaryOp op, const ir::AttrList& attrs, ScalarType t, llvm::Value* a,
                         llvm::Value* b) {
  using ir::BinaryOp;
  using P = llvm::CmpInst::Predicate;
  auto& B = e.b;
  const bool flt = is_float_dtype(t), bl = t == ScalarType::Bool;
  switch (op) {
    case BinaryOp::add: return flt ? B.CreateFAdd(a, b) : bl ? B.CreateOr(a, b) : B.CreateAdd(a, b);
    case BinaryOp::sub: return flt ? B.CreateFSub(a, b) : B.CreateSub(a, b);
    case BinaryOp::mul: return flt ? B.CreateFMul(a, b) : bl ? B.CreateAnd(a, b) : B.CreateMul(a, b);
    case BinaryOp::div: {
      const std::optional<std::string> mode = attrs.get_opt<std::string>(ir::OpKind::div, "rounding_mode");
      if (!mode) {
        if (!flt) internal_fail("emit_binary: true division of integer dtype {}", dtype_name(t));
        return B.CreateFDiv(a, b);
      }
      if (*mode == "trunc") return flt ? intrinsic1(e, llvm::Intrinsic::trunc, B.CreateFDiv(a, b)) : int_div(e, t, a, b).q;
      if (*mode == "floor") {
        if (flt) return float_floor_div(e, a, b);
        const IntDiv d = int_div(e, t, a, b);
        llvm::Value* adjust = B.CreateAnd(B.CreateICmpNE(d.r, llvm::ConstantInt::get(a->getType(), 0)),
                                          B.CreateXor(is_neg(e, t, a), is_neg(e, t, b)));
        return B.CreateSelect(adjust, B.CreateSub(d.q, llvm::ConstantInt::get(a->getType(), 1)), d.q);
      }
      internal_fail("emit_binary: div rounding_mode \"{}\"", *mode);
    }
    case BinaryOp::remainder: {
      if (flt) {
        llvm::Value* mod = B.CreateFRem(a, b);
        return B.CreateSelect(fixup_needed(e, mod, b), B.CreateFAdd(mod, b), mod);
      }
      llvm::Value* r = int_div(e, t, a, b).r;
      llvm::Value* adjust = B.CreateAnd(B.CreateICmpNE(r, llvm::ConstantInt::get(a->getType(), 0)),
                                        B.CreateXor(is_neg(e, t, r), is_neg(e, t, b)));
      return B.CreateSelect(adjust, B.CreateAdd(r, b), r);
    }
    case BinaryOp::fmod: return flt ? B.CreateFRem(a, b) : int_div(e, t, a, b).r;
    case BinaryOp::pow: return flt ? emit_math(e, MathFn::pow, {a, b}) : int_pow(e, t, a, b);
    case BinaryOp::atan2: return emit_math(e, MathFn::atan2, {a, b});
    case BinaryOp::hypot: return emit_math(e, MathFn::hypot, {a, b});
    case BinaryOp::copysign: return intrinsic2(e, llvm::Intrinsic::copysign, a, b);
    case BinaryOp::maximum:
    case BinaryOp::minimum: {
      llvm::Value* r = pick(e, t, op == BinaryOp::maximum, a, b);
      if (!flt) return r;
      return B.CreateSelect(B.CreateFCmpUNO(a, b), llvm::ConstantFP::getQNaN(a->getType()), r);
    }
    case BinaryOp::fmax:
    case BinaryOp::fmin: {
      llvm::Value* r = pick(e, t, op == BinaryOp::fmax, a, b);
      if (!flt) return r;
      return B.CreateSelect(is_nan(e, a), b, B.CreateSelect(is_nan(e, b), a, r));
    }
    case BinaryOp::eq: return cmp(e, t, P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ, a, b);
    case BinaryOp::ne: return cmp(e, t, P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE, a, b);
    case BinaryOp::lt: return cmp(e, t, P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT, a, b);
    case BinaryOp::le: return cmp(e, t, P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE, a, b);
    case BinaryOp::gt: return cmp(e, t, P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT, a, b);
    case BinaryOp::ge: return cmp(e, t, P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE, a, b);
    case BinaryOp::logical_and: return B.CreateAnd(truthy(e, a), truthy(e, b));
    case BinaryOp::logical_or: return B.CreateOr(truthy(e, a), truthy(e, b));
    case BinaryOp::logical_xor: return B.CreateXor(truthy(e, a), truthy(e, b));
    case BinaryOp::bitwise_and: return B.CreateAnd(a, b);
    case BinaryOp::bitwise_or: return B.CreateOr(a, b);
    case BinaryOp::bitwise_xor: return B.CreateXor(a, b);
    case BinaryOp::bitwise_left_shift: return shift_left(e, a, b);
    case BinaryOp::bitwise_right_shift: return shift_right(e, t, a, b);
  }
  internal_fail("emit_binary: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::cpu::detail
