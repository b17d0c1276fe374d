// kiln/runtime/interpreter/interp_unary.cpp — the interpreter's unary pointwise prims.
//
// One switch over UnaryOp (no default) picks the scalar math — a small generic lambda or
// functor applied to the compute type (float for f16/bf16, the element type otherwise) — and
// the dtype rule of the op; map_unary() runs the one strided loop for every op. Semantics
// are PyTorch's on the CPU: integers wrap around (abs and neg of the minimum value give it
// back), rounding is half to even, sign(NaN) = 0, signbit sees -0.0, and the rounding ops
// return integer inputs unchanged.
#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interp_math.h"

#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

constexpr std::string_view kUnaryNames[] = {
#define KILN_UNARY_OP(name, level, traits, schema) #name,
#include "ir/ops.def"
};

// Applies fn to every element of `a` (converted to its compute type) and returns a fresh
// contiguous tensor. Element types outside `A` are rejected with a kiln::Error.
template <Accept A, Result R, typename Fn>
Tensor map_unary(ir::UnaryOp op, const Tensor& a, Fn fn) {
  const std::string_view name = kUnaryNames[static_cast<size_t>(op)];
  return dispatch_dtype(a.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (!accepts_v<A, T>) {
      reject_dtype(name, a.dtype());
    } else {
      using Out = std::conditional_t<R == Result::Bool, bool, T>;
      Tensor out = empty_contiguous(sizes_of(a), scalar_type_of<Out>);
      loop1<Out, T>(out, a, [&](T x) -> Out {
        if constexpr (R == Result::Bool)
          return static_cast<bool>(fn(load(x)));
        else
          return store<T>(static_cast<compute_t<T>>(fn(load(x))));
      });
      return out;
    }
  });
}

// ---- scalar math that needs more than one std:: call ----------------------------------------

struct Abs {
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      return std::fabs(x);  // abs(-0.0) = 0.0, abs(NaN) = NaN
    else
      return is_negative(x) ? wrap_neg(x) : x;  // abs(INT_MIN) wraps to INT_MIN
  }
};

struct Neg {
  template <typename C> C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      return -x;  // neg(0.0) = -0.0
    else
      return wrap_neg(x);  // also uint8: neg(1) = 255
  }
};

// floor/ceil/round/trunc: integers are returned unchanged (PyTorch copies them).
template <typename C, typename F> C rounding(C x, F f) {
  if constexpr (std::is_floating_point_v<C>)
    return f(x);
  else
    return x;
}

// PyTorch's sign: (0 < x) - (x < 0), so sign(NaN) = 0 and sign(-0.0) = +0.0; bool is itself.
struct Sign {
  template <typename C> C operator()(C x) const {
    if constexpr (is_bool_v<C>)
      return x;
    else if constexpr (std::is_floating_point_v<C>)
      return static_cast<C>(static_cast<int>(C(0) < x) - static_cast<int>(x < C(0)));
    else
      return static_cast<C>(static_cast<int>(C(0) < x) - static_cast<int>(is_negative(x)));
  }
};

// PyTorch's signbit: the sign bit of floats (-0.0 and -NaN are negative), x < 0 for integers.
struct Signbit {
  template <typename C> bool operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>)
      return std::signbit(x);
    else
      return is_negative(x);
  }
};

// 1 / (1 + exp(-x)): for x -> -inf exp(-x) overflows to inf and the result is 0, for
// x -> +inf it is 1; no cancellation happens anywhere, so this form is accurate as is.
struct Sigmoid {
  template <typename C> C operator()(C x) const { return C(1) / (C(1) + std::exp(-x)); }
};

// The inverse error function, for |y| (the result takes y's sign). A rational approximation
// (Pavlis's: a central range |y| <= 0.7 and a tail in sqrt(-log((1-|y|)/2))) gives about 1e-7
// relative accuracy in the central range, and two Newton steps on erf(x) = |y| (derivative
// 2/sqrt(pi) exp(-x^2)) take it to the precision of C. In the tail the residual is written
// (1 - |y|) - erfc(x): 1 - |y| is exact there and erfc keeps its relative precision, where
// erf(x) - |y| would cancel (near |y| = 1 that loses 1/(1 - |y|) ulp); the approximation is
// rougher far out (1 - |y| ~ 1e-10 and below), so the tail takes four steps. PyTorch takes two
// steps on erf(x) - y everywhere, which is ~1e-14 off near |y| = 1 - 1e-10: we are closer to the
// true value. erfinv(+-1) = +-inf, |y| > 1 gives NaN, NaN propagates.
struct Erfinv {
  template <typename C> C operator()(C y) const {
    const C ay = std::fabs(y);
    if (ay > C(1)) return std::numeric_limits<C>::quiet_NaN();
    if (ay == C(1)) return std::copysign(std::numeric_limits<C>::infinity(), y);
    const C two_over_sqrt_pi = C(1.1283791670955125738961589);
    C x;
    if (ay <= C(0.7)) {
      const C z = ay * ay;
      const C num = ((C(-0.140543331) * z + C(0.914624893)) * z + C(-1.645349621)) * z + C(0.886226899);
      const C den = (((C(0.012229801) * z + C(-0.329097515)) * z + C(1.442710462)) * z + C(-2.118377725)) * z + C(1);
      x = ay * num / den;
      for (int step = 0; step < 2; ++step) x -= (std::erf(x) - ay) / (two_over_sqrt_pi * std::exp(-x * x));
    } else {  // also NaN, which flows through unchanged
      const C tail = C(1) - ay;
      const C z = std::sqrt(-std::log(tail / C(2)));
      const C num = ((C(1.641345311) * z + C(3.429567803)) * z + C(-1.624906493)) * z + C(-1.970840454);
      const C den = (C(1.637067800) * z + C(3.543889200)) * z + C(1);
      x = num / den;
      for (int step = 0; step < 4; ++step) x -= (tail - std::erfc(x)) / (two_over_sqrt_pi * std::exp(-x * x));
    }
    return std::copysign(x, y);
  }
};

}  // namespace

Tensor unary(ir::UnaryOp op, const Tensor& a) {
  using ir::UnaryOp;
  constexpr Accept F = Accept::FloatOnly;
  constexpr Result S = Result::Same;
  constexpr Result B = Result::Bool;
  switch (op) {
    case UnaryOp::abs: return map_unary<Accept::NoBool, S>(op, a, Abs{});
    case UnaryOp::neg: return map_unary<Accept::NoBool, S>(op, a, Neg{});
    case UnaryOp::exp: return map_unary<F, S>(op, a, [](auto x) { return std::exp(x); });
    case UnaryOp::exp2: return map_unary<F, S>(op, a, [](auto x) { return std::exp2(x); });
    case UnaryOp::expm1: return map_unary<F, S>(op, a, [](auto x) { return std::expm1(x); });
    case UnaryOp::log: return map_unary<F, S>(op, a, [](auto x) { return std::log(x); });
    case UnaryOp::log2: return map_unary<F, S>(op, a, [](auto x) { return std::log2(x); });
    case UnaryOp::log10: return map_unary<F, S>(op, a, [](auto x) { return std::log10(x); });
    case UnaryOp::log1p: return map_unary<F, S>(op, a, [](auto x) { return std::log1p(x); });
    case UnaryOp::sqrt: return map_unary<F, S>(op, a, [](auto x) { return std::sqrt(x); });
    case UnaryOp::rsqrt:
      return map_unary<F, S>(op, a, [](auto x) { return decltype(x)(1) / std::sqrt(x); });
    case UnaryOp::reciprocal: return map_unary<F, S>(op, a, [](auto x) { return decltype(x)(1) / x; });
    case UnaryOp::sin: return map_unary<F, S>(op, a, [](auto x) { return std::sin(x); });
    case UnaryOp::cos: return map_unary<F, S>(op, a, [](auto x) { return std::cos(x); });
    case UnaryOp::tan: return map_unary<F, S>(op, a, [](auto x) { return std::tan(x); });
    case UnaryOp::asin: return map_unary<F, S>(op, a, [](auto x) { return std::asin(x); });
    case UnaryOp::acos: return map_unary<F, S>(op, a, [](auto x) { return std::acos(x); });
    case UnaryOp::atan: return map_unary<F, S>(op, a, [](auto x) { return std::atan(x); });
    case UnaryOp::sinh: return map_unary<F, S>(op, a, [](auto x) { return std::sinh(x); });
    case UnaryOp::cosh: return map_unary<F, S>(op, a, [](auto x) { return std::cosh(x); });
    case UnaryOp::tanh: return map_unary<F, S>(op, a, [](auto x) { return std::tanh(x); });
    case UnaryOp::asinh: return map_unary<F, S>(op, a, [](auto x) { return std::asinh(x); });
    case UnaryOp::acosh: return map_unary<F, S>(op, a, [](auto x) { return std::acosh(x); });
    case UnaryOp::atanh: return map_unary<F, S>(op, a, [](auto x) { return std::atanh(x); });
    case UnaryOp::erf: return map_unary<F, S>(op, a, [](auto x) { return std::erf(x); });
    case UnaryOp::erfc: return map_unary<F, S>(op, a, [](auto x) { return std::erfc(x); });
    case UnaryOp::erfinv: return map_unary<F, S>(op, a, Erfinv{});
    case UnaryOp::lgamma: return map_unary<F, S>(op, a, [](auto x) { return std::lgamma(x); });
    case UnaryOp::sigmoid: return map_unary<F, S>(op, a, Sigmoid{});
    case UnaryOp::floor:
      return map_unary<Accept::NoBool, S>(op, a, [](auto x) { return rounding(x, [](auto v) { return std::floor(v); }); });
    case UnaryOp::ceil:
      return map_unary<Accept::NoBool, S>(op, a, [](auto x) { return rounding(x, [](auto v) { return std::ceil(v); }); });
    case UnaryOp::round:  // half to even: nearbyint under the default rounding mode
      return map_unary<Accept::NoBool, S>(op, a,
                                          [](auto x) { return rounding(x, [](auto v) { return std::nearbyint(v); }); });
    case UnaryOp::trunc:
      return map_unary<Accept::NoBool, S>(op, a, [](auto x) { return rounding(x, [](auto v) { return std::trunc(v); }); });
    case UnaryOp::frac: return map_unary<F, S>(op, a, [](auto x) { return x - std::trunc(x); });
    case UnaryOp::sign: return map_unary<Accept::Any, S>(op, a, Sign{});
    case UnaryOp::signbit: return map_unary<Accept::Any, B>(op, a, Signbit{});
    case UnaryOp::isnan:
      return map_unary<Accept::Any, B>(op, a, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>)
          return std::isnan(x);
        else
          return false;
      });
    case UnaryOp::isinf:
      return map_unary<Accept::Any, B>(op, a, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>)
          return std::isinf(x);
        else
          return false;
      });
    case UnaryOp::isfinite:
      return map_unary<Accept::Any, B>(op, a, [](auto x) {
        if constexpr (std::is_floating_point_v<decltype(x)>)
          return std::isfinite(x);
        else
          return true;
      });
    case UnaryOp::bitwise_not:
      return map_unary<Accept::IntOnly, S>(op, a, [](auto x) {
        using C = decltype(x);
        if constexpr (is_bool_v<C>)
          return !x;
        else
          return static_cast<C>(~static_cast<uint64_t>(x));
      });
    case UnaryOp::logical_not:
      return map_unary<Accept::Any, B>(op, a, [](auto x) { return x == decltype(x)(0); });
  }
  internal_fail("unary: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
