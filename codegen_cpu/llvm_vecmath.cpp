// kiln/codegen_cpu/llvm_vecmath.cpp — kiln's own f32 math functions, emitted inline as
// branch-free LLVM IR.
//
// exp, exp2, expm1, log, log1p, tanh and erf on float (and so on f16/bf16, computed in f32; and
// sigmoid = 1 / (1 + exp(-x)), softmax's exp, gelu's tanh and erf) are emitted here instead of
// calls to libm with libmvec variants: straight-line IR (selects, no branches, no calls) that
// the loop vectorizer widens to whatever the host has (AVX2, AVX-512) and that inlines into the
// fused loop, so nothing leaves the loop. Each lane computes exactly what the scalar code
// computes, so results do not depend on the vector width or on where a loop's remainder starts
// (libmvec's lanes and libm's scalar remainder differ by an ulp or two). f64 keeps libm and
// libmvec (llvm_math.cpp), as do the functions not listed here.
//
// The algorithms (classic range reduction and polynomials; the coefficients of exp and erf are
// the output of tools/fit_erf.py):
//   exp    n = round(x / ln2) (a shift by 1.5 * 2^23), r = x - n ln2 (two-part ln2), e^r a degree-6 polynomial fitted
//          for relative error on |r| <= ln2/2 (5.5e-9, six fused multiply-adds); scaled by 2^n as
//          two factors 2^(n/2) 2^(n - n/2) so that subnormal and near-overflow results round
//          once. x is clamped to [-104, 89] first: the ends underflow to 0 and overflow to inf.
//   exp2   n = round(x), r = (x - n) ln2, as exp.
//   expm1  2^n expm1_r(r) + (2^n - 1), one fused multiply-add, where expm1_r(r) is the Taylor
//          polynomial r + r^2/2 + ... + r^7/5040 (truncation < 2^-27); expm1(+-0) = +-0.
//   log    x = m 2^e with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^23 first),
//          log(m) = f - f^2/2 + f^3 P(f), f = m - 1, P of degree 8 (Cephes' logf), plus e ln2
//          in two parts.
//   log1p  u = 1 + x: log(u) + (x - (u - 1)) / u (the rounding of u corrected to first order);
//          x itself where u == 1.
//   tanh   |x| <= 10: expm1(2|x|) / (expm1(2|x|) + 2) with x's sign, no cancellation at any
//          size; 1 beyond.
//   erf    |x| < 0.85: x P(x^2), P of degree 6; |x| < 3.95: 1 - e^(-x^2) Q(u) with u the
//          centered |x| and Q of degree 12 (a fit of erfc(x) e^(x^2)); 1 beyond; x's sign.
// Special values follow C: NaN in, NaN out; exp(-inf) = 0, exp(inf) = inf, log(0) = -inf,
// log(x < 0) = NaN, log1p(-1) = -inf, tanh/erf(+-inf) = +-1, signed zeros kept.
//
// Accuracy, measured by test/test_cpu_vecmath.cpp against double-precision libm rounded to
// float over every 64th float bit pattern (67M inputs per function) plus edges: see the table
// in docs/compiler.md ("Vector math"). The polynomial evaluations use llvm.fmuladd, which
// becomes an FMA on every host with FMA (the same in scalar and vector code).
#include "codegen_cpu/llvm_math.h"

#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/Module.h>

#include <initializer_list>
#include <limits>

namespace kiln::cpu::detail {

namespace {

// Float IR building with constants and a few idioms.
struct F32 {
  ScalarEmitter& e;
  llvm::IRBuilder<>& b;
  llvm::Type* f;
  llvm::Type* i;

  explicit F32(ScalarEmitter& em) : e(em), b(em.b), f(em.b.getFloatTy()), i(em.b.getInt32Ty()) {}

  llvm::Value* c(double v) const { return llvm::ConstantFP::get(f, v); }
  llvm::Value* ci(int32_t v) const {
    return llvm::ConstantInt::get(i, static_cast<uint64_t>(static_cast<int64_t>(v)), true);
  }
  llvm::Value* fma(llvm::Value* x, llvm::Value* y, llvm::Value* z) const {
    return b.CreateIntrinsic(llvm::Intrinsic::fmuladd, {f}, {x, y, z});
  }
  llvm::Value* add(llvm::Value* x, llvm::Value* y) const { return b.CreateFAdd(x, y); }
  llvm::Value* sub(llvm::Value* x, llvm::Value* y) const { return b.CreateFSub(x, y); }
  llvm::Value* mul(llvm::Value* x, llvm::Value* y) const { return b.CreateFMul(x, y); }
  llvm::Value* div(llvm::Value* x, llvm::Value* y) const { return b.CreateFDiv(x, y); }
  llvm::Value* abs(llvm::Value* x) const { return intrinsic1(e, llvm::Intrinsic::fabs, x); }
  llvm::Value* clamp(llvm::Value* x, double lo, double hi) const {  // NaN becomes lo; callers select NaN back
    return intrinsic2(e, llvm::Intrinsic::minnum, intrinsic2(e, llvm::Intrinsic::maxnum, x, c(lo)), c(hi));
  }
  // The same clamp with NaN passed through (selects on ordered compares, one max/min each).
  llvm::Value* clamp_keeping_nan(llvm::Value* x, double lo, double hi) const {
    llvm::Value* t = sel(b.CreateFCmpOLT(x, c(lo)), c(lo), x);
    return sel(b.CreateFCmpOGT(t, c(hi)), c(hi), t);
  }
  llvm::Value* copysign(llvm::Value* mag, llvm::Value* sign) const {
    return intrinsic2(e, llvm::Intrinsic::copysign, mag, sign);
  }
  llvm::Value* sel(llvm::Value* cond, llvm::Value* x, llvm::Value* y) const { return b.CreateSelect(cond, x, y); }
  llvm::Value* nan_to(llvm::Value* x, llvm::Value* result) const { return sel(is_nan(e, x), x, result); }
  // Horner: coeffs[0] + v (coeffs[1] + v (...)).
  llvm::Value* poly(llvm::Value* v, std::initializer_list<double> coeffs) const {
    const double* k = coeffs.end();
    llvm::Value* acc = c(*--k);
    while (k != coeffs.begin()) acc = fma(acc, v, c(*--k));
    return acc;
  }
  // 2^n for an integer n in [-126, 127] (a normal float).
  llvm::Value* pow2(llvm::Value* n) const { return b.CreateBitCast(b.CreateShl(b.CreateAdd(n, ci(127)), ci(23)), f); }
  llvm::Value* as_int(llvm::Value* x) const { return b.CreateBitCast(x, i); }
  llvm::Value* as_float(llvm::Value* n) const { return b.CreateBitCast(n, f); }
};

constexpr double kLog2e = 1.44269504088896340736;
constexpr double kLn2Hi = 0.693359375;              // 355/512: n * kLn2Hi is exact for |n| < 2^15
constexpr double kLn2Lo = -2.12194440054690583e-4;  // ln2 - kLn2Hi
constexpr double kLn2 = 0.693147180559945309417;

// expm1(r) for |r| <= ln2/2 (a little more is fine): r + r^2 (1/2 + r/6 + ... + r^5/5040).
llvm::Value* expm1_reduced(const F32& m, llvm::Value* r) {
  llvm::Value* p = m.poly(r, {1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040});
  return m.fma(m.mul(r, r), p, r);
}

// The reduced argument of exp: n = round(x / ln2) (as float and int) and r = x - n ln2.
struct Reduced {
  llvm::Value* r;
  llvm::Value* n;  // i32
};

Reduced reduce_ln2(const F32& m, llvm::Value* x) {
  llvm::Value* nf = intrinsic1(m.e, llvm::Intrinsic::roundeven, m.mul(x, m.c(kLog2e)));
  llvm::Value* neg = m.b.CreateFNeg(nf);
  llvm::Value* r = m.fma(neg, m.c(kLn2Hi), x);
  r = m.fma(neg, m.c(kLn2Lo), r);
  return {r, m.b.CreateFPToSI(nf, m.i)};
}

// p * 2^n for n in [-151, 129], rounding once: 2^(n/2) and 2^(n - n/2) are both normal.
llvm::Value* scale(const F32& m, llvm::Value* p, llvm::Value* n) {
  llvm::Value* n1 = m.b.CreateAShr(n, m.ci(1));
  llvm::Value* n2 = m.b.CreateSub(n, n1);
  return m.mul(m.mul(p, m.pow2(n1)), m.pow2(n2));
}

// e^r for |r| <= ln2/2: 1 + r + r^2 (c2 + ... + c6 r^4), a relative-error fit (5.5e-9), six
// fused multiply-adds.
llvm::Value* exp_reduced(const F32& m, llvm::Value* r) {
  return m.poly(r, {1.0, 1.0, 0.4999999403953552, 0.1666652113199234, 0.04166838899254799, 0.008368710987269878,
                    0.0013814427657052875});
}

// A NaN passes through every step (the clamp keeps it, the exponent comes from a float's bits
// rather than fptosi, whose NaN is poison), so no final select is needed. n = round(x / ln2)
// by adding 1.5 * 2^23, whose sum keeps n in its low mantissa bits (round to nearest even).
llvm::Value* exp_f32(const F32& m, llvm::Value* x) {
  constexpr double kShift = 0x1.8p23;
  llvm::Value* xc = m.clamp_keeping_nan(x, -104.0, 89.0);
  llvm::Value* t = m.fma(xc, m.c(kLog2e), m.c(kShift));
  llvm::Value* neg = m.b.CreateFNeg(m.sub(t, m.c(kShift)));
  llvm::Value* r = m.fma(neg, m.c(kLn2Lo), m.fma(neg, m.c(kLn2Hi), xc));
  llvm::Value* n = m.b.CreateSub(m.as_int(t), m.as_int(m.c(kShift)));
  return scale(m, exp_reduced(m, r), n);
}

llvm::Value* exp2_f32(const F32& m, llvm::Value* x) {
  llvm::Value* xc = m.clamp(x, -151.0, 129.0);
  llvm::Value* nf = intrinsic1(m.e, llvm::Intrinsic::roundeven, xc);
  llvm::Value* f = m.sub(xc, nf);  // exact, |f| <= 1/2
  llvm::Value* r = m.fma(f, m.c(kLn2Hi), m.mul(f, m.c(kLn2 - kLn2Hi)));
  return m.nan_to(x, scale(m, exp_reduced(m, r), m.b.CreateFPToSI(nf, m.i)));
}

llvm::Value* expm1_f32(const F32& m, llvm::Value* x) {
  // Below -18 the result is -1 in float; above 89 it overflows.
  const Reduced rd = reduce_ln2(m, m.clamp(x, -18.0, 89.0));
  llvm::Value* em = expm1_reduced(m, rd.r);
  // n may be 128 (x in (88.38, 89]): 2^n = 2^127 * 2.
  llvm::Value* n_lo = m.b.CreateBinaryIntrinsic(llvm::Intrinsic::smin, rd.n, m.ci(127));
  llvm::Value* s = m.pow2(n_lo);
  llvm::Value* res = m.fma(s, em, m.sub(s, m.c(1.0)));
  res = m.mul(res, m.pow2(m.b.CreateSub(rd.n, n_lo)));
  res = m.sel(m.b.CreateFCmpOEQ(x, m.c(0.0)), x, res);  // keeps -0
  return m.nan_to(x, res);
}

llvm::Value* log_f32(const F32& m, llvm::Value* x) {
  // Subnormals: scale into the normal range first.
  llvm::Value* sub = m.b.CreateFCmpOLT(m.abs(x), m.c(0x1p-126));
  llvm::Value* xs = m.sel(sub, m.mul(x, m.c(0x1p23)), x);
  llvm::Value* bits = m.as_int(xs);
  llvm::Value* e = m.b.CreateSub(m.b.CreateAnd(m.b.CreateLShr(bits, m.ci(23)), m.ci(0xff)), m.ci(127));
  e = m.b.CreateSub(e, m.sel(sub, m.ci(23), m.ci(0)));
  llvm::Value* mant = m.as_float(m.b.CreateOr(m.b.CreateAnd(bits, m.ci(0x007fffff)), m.ci(0x3f800000)));  // [1, 2)
  llvm::Value* big = m.b.CreateFCmpOGT(mant, m.c(1.41421356237309504880));
  mant = m.sel(big, m.mul(mant, m.c(0.5)), mant);
  e = m.b.CreateAdd(e, m.b.CreateZExt(big, m.i));
  llvm::Value* ef = m.b.CreateSIToFP(e, m.f);
  llvm::Value* f = m.sub(mant, m.c(1.0));
  llvm::Value* z = m.mul(f, f);
  llvm::Value* p = m.poly(f, {3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1, 1.4249322787e-1,
                              -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2});
  llvm::Value* y = m.fma(m.mul(f, z), p, m.mul(ef, m.c(kLn2Lo)));
  y = m.fma(z, m.c(-0.5), y);
  llvm::Value* res = m.fma(ef, m.c(kLn2Hi), m.add(f, y));
  const double inf = std::numeric_limits<double>::infinity();
  res = m.sel(m.b.CreateFCmpOEQ(x, m.c(inf)), x, res);
  res = m.sel(m.b.CreateFCmpOEQ(x, m.c(0.0)), m.c(-inf), res);
  return m.sel(m.b.CreateFCmpULT(x, m.c(0.0)), m.c(std::numeric_limits<double>::quiet_NaN()), res);  // < 0 or NaN
}

llvm::Value* log1p_f32(const F32& m, llvm::Value* x) {
  llvm::Value* u = m.add(m.c(1.0), x);
  llvm::Value* corr = m.div(m.sub(x, m.sub(u, m.c(1.0))), u);
  const double inf = std::numeric_limits<double>::infinity();
  // u == 0 (x = -1) and u == inf make the correction 0/0 or inf/inf; log(u) alone is right.
  llvm::Value* finite_nonzero = m.b.CreateAnd(m.b.CreateFCmpONE(u, m.c(0.0)), m.b.CreateFCmpONE(u, m.c(inf)));
  llvm::Value* res = m.add(log_f32(m, u), m.sel(finite_nonzero, corr, m.c(0.0)));
  return m.sel(m.b.CreateFCmpOEQ(u, m.c(1.0)), x, res);  // |x| < 2^-24: log1p(x) = x (signed zeros too)
}

llvm::Value* tanh_f32(const F32& m, llvm::Value* x) {
  llvm::Value* a = m.abs(x);
  llvm::Value* em = expm1_f32(m, m.add(a, a));
  llvm::Value* t = m.div(em, m.add(em, m.c(2.0)));
  t = m.sel(m.b.CreateFCmpOGT(a, m.c(10.0)), m.c(1.0), t);
  return m.copysign(t, x);  // NaN stays NaN
}

llvm::Value* erf_f32(const F32& m, llvm::Value* x) {
  llvm::Value* a = m.abs(x);
  // |x| < 0.85: x P(x^2).
  llvm::Value* near =
      m.mul(x, m.poly(m.mul(x, x), {1.128379225730896, -0.37612637877464294, 0.11283747106790543, -0.026862485334277153,
                                    0.005209308583289385, -0.0008244415512308478, 8.836861525196582e-05}));
  // 0.85 <= |x| < 3.95: 1 - e^(-x^2) Q(u), u = (|x| - 2.4) / 1.55 in [-1, 1].
  constexpr double kMid = (0.85 + 3.95) / 2, kHalf = (3.95 - 0.85) / 2;
  llvm::Value* u = m.mul(m.sub(a, m.c(kMid)), m.c(1.0 / kHalf));
  llvm::Value* q = m.poly(
      u, {0.21849873661994934, -0.12335709482431412, 0.06605473160743713, -0.033762190490961075, 0.016552044078707695,
          -0.007807950489223003, 0.0035642748698592186, -0.0015994464047253132, 0.000681078527122736,
          -0.00024330630549229681, 0.00010393375850981101, -7.450450357282534e-05, 2.7203424906474538e-05});
  llvm::Value* g = exp_f32(m, m.b.CreateFNeg(m.mul(a, a)));
  llvm::Value* far = m.fma(m.b.CreateFNeg(g), q, m.c(1.0));
  far = m.sel(m.b.CreateFCmpOGE(a, m.c(3.95)), m.c(1.0), far);
  return m.sel(m.b.CreateFCmpOLT(a, m.c(0.85)), near, m.copysign(far, x));  // NaN: far, stays NaN
}

}  // namespace

llvm::Value* emit_own_math(ScalarEmitter& e, MathFn fn, llvm::Value* x) {
  if (!x->getType()->isFloatTy()) return nullptr;
  const F32 m(e);
  switch (fn) {
    case MathFn::exp: return exp_f32(m, x);
    case MathFn::exp2: return exp2_f32(m, x);
    case MathFn::expm1: return expm1_f32(m, x);
    case MathFn::log: return log_f32(m, x);
    case MathFn::log1p: return log1p_f32(m, x);
    case MathFn::tanh: return tanh_f32(m, x);
    case MathFn::erf: return erf_f32(m, x);
    case MathFn::log2:
    case MathFn::log10:
    case MathFn::sin:
    case MathFn::cos:
    case MathFn::tan:
    case MathFn::asin:
    case MathFn::acos:
    case MathFn::atan:
    case MathFn::sinh:
    case MathFn::cosh:
    case MathFn::asinh:
    case MathFn::acosh:
    case MathFn::atanh:
    case MathFn::erfc:
    case MathFn::lgamma:
    case MathFn::pow:
    case MathFn::atan2:
    case MathFn::hypot: return nullptr;
  }
  return nullptr;
}

}  // namespace kiln::cpu::detail
