// kiln/runtime/interpreter/interp_binary.cpp — the interpreter's binary pointwise prims.
//
// Operands have equal sizes and dtypes (the frontend promotes and broadcasts; broadcasting
// reaches here as zero strides). One switch over BinaryOp (no default) picks the scalar math,
// written once as small functors on the compute type (float for f16/bf16), and map_binary()
// runs the one strided loop for every op. PyTorch CPU semantics throughout:
//  - integers wrap around; bool add is `or`, bool mul is `and`;
//  - div: true division (floats), "trunc", or "floor" (Python's floor division); integer
//    division, remainder and fmod by zero throw "[op] ZeroDivisionError";
//  - remainder takes the divisor's sign (Python's %), fmod the dividend's (C's fmod);
//  - integer pow by repeated squaring, with PyTorch's answers for negative exponents;
//  - maximum/minimum propagate NaN, fmax/fmin ignore it; comparisons with NaN are false
//    except ne; shifts by a negative amount or by the bit width or more are defined.
#include "base/error.h"
#include "runtime/interpreter/interp_kernels.h"
#include "runtime/interpreter/interp_math.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace kiln::rt::interp {

namespace {

constexpr std::string_view kBinaryNames[] = {
#define KILN_BINARY_OP(name, level, traits, schema) #name,
#include "ir/ops.def"
};

// Applies fn to every pair of elements (converted to their compute type) and returns a fresh
// contiguous tensor. Element types outside `A` are rejected with a kiln::Error.
template <Accept A, Result R, typename Fn>
Tensor map_binary(ir::BinaryOp op, const Tensor& a, const Tensor& b, Fn fn) {
  const std::string_view name = kBinaryNames[static_cast<size_t>(op)];
  check_same_sizes(name, {&a, &b});
  check_same_dtype(name, {&a, &b});
  return dispatch_dtype(a.dtype(), [&](auto tag) -> Tensor {
    using T = decltype(tag);
    if constexpr (!accepts_v<A, T>) {
      reject_dtype(name, a.dtype());
    } else {
      using Out = std::conditional_t<R == Result::Bool, bool, T>;
      Tensor out = empty_contiguous(sizes_of(a), scalar_type_of<Out>);
      loop2<Out, T, T>(out, a, b, [&](T x, T y) -> Out {
        if constexpr (R == Result::Bool)
          return static_cast<bool>(fn(load(x), load(y)));
        else
          return store<T>(static_cast<compute_t<T>>(fn(load(x), load(y))));
      });
      return out;
    }
  });
}

template <typename C> inline constexpr bool is_fp_v = std::is_floating_point_v<C>;

// ---- arithmetic -----------------------------------------------------------------------------

struct Add {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>)
      return a || b;
    else if constexpr (is_fp_v<C>)
      return a + b;
    else
      return wrap_add(a, b);
  }
};

struct Sub {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      return a - b;
    else
      return wrap_sub(a, b);
  }
};

struct Mul {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_bool_v<C>)
      return a && b;
    else if constexpr (is_fp_v<C>)
      return a * b;
    else
      return wrap_mul(a, b);
  }
};

[[noreturn]] void zero_division(std::string_view op) { fail(op, "ZeroDivisionError"); }

// Truncating integer division; INT_MIN / -1 wraps to INT_MIN (C++ would overflow).
template <typename C> C int_div_trunc(C a, C b, std::string_view op) {
  if (b == C(0)) zero_division(op);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return wrap_neg(a);
  return static_cast<C>(a / b);
}

// C's %: the sign of the dividend; INT_MIN % -1 = 0 (C++ would overflow).
template <typename C> C int_rem_trunc(C a, C b, std::string_view op) {
  if (b == C(0)) zero_division(op);
  if constexpr (std::is_signed_v<C>)
    if (b == C(-1)) return C(0);
  return static_cast<C>(a % b);
}

struct TrueDiv {
  template <typename C> C operator()(C a, C b) const { return a / b; }  // floats only
};

struct DivTrunc {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      return std::trunc(a / b);
    else
      return int_div_trunc(a, b, "div");
  }
};

// Python's floor division. For floats this is CPython's float_floor_div, as PyTorch uses:
// (a - fmod(a, b)) / b is nearly integral; correct it by one when fmod has the wrong sign,
// then round it to the nearest integer; a zero quotient takes the sign of a / b, and division
// by zero gives the IEEE quotient (+-inf or NaN).
struct DivFloor {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>) {
      if (b == C(0)) return a / b;
      const C mod = std::fmod(a, b);
      C div = (a - mod) / b;
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
      if (div == C(0)) return std::copysign(C(0), a / b);
      C floordiv = std::floor(div);
      if (div - floordiv > C(0.5)) floordiv += C(1);
      return floordiv;
    } else {
      const C q = int_div_trunc(a, b, "div");
      const C r = int_rem_trunc(a, b, "div");
      // Round toward -inf: one less when the division was inexact and the signs differ.
      return (r != C(0) && is_negative(a) != is_negative(b)) ? wrap_sub(q, C(1)) : q;
    }
  }
};

// Python's %: the result has the sign of the divisor.
struct Remainder {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>) {
      C mod = std::fmod(a, b);
      if (mod != C(0) && (b < C(0)) != (mod < C(0))) mod += b;
      return mod;
    } else {
      C r = int_rem_trunc(a, b, "remainder");
      if (r != C(0) && is_negative(r) != is_negative(b)) r = wrap_add(r, b);
      return r;
    }
  }
};

struct Fmod {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      return std::fmod(a, b);
    else
      return int_rem_trunc(a, b, "fmod");
  }
};

// Floats: std::pow. Integers: repeated squaring with wrap-around; a negative exponent gives
// 1 for base 1, +-1 for base -1 (by the exponent's parity) and 0 otherwise (PyTorch's powi).
struct Pow {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>) {
      return std::pow(a, b);
    } else {
      if (is_negative(b)) {
        if (a == C(1)) return C(1);
        if constexpr (std::is_signed_v<C>)
          if (a == C(-1)) return (b % C(2) != C(0)) ? C(-1) : C(1);
        return C(0);
      }
      C result = C(1);
      for (uint64_t e = static_cast<uint64_t>(b); e != 0; e >>= 1) {
        if (e & 1u) result = wrap_mul(result, a);
        a = wrap_mul(a, a);
      }
      return result;
    }
  }
};

// ---- min / max ------------------------------------------------------------------------------

struct Maximum {  // NaN wins; bool is `or`
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    if constexpr (is_bool_v<C>)
      return a || b;
    else
      return std::max(a, b);
  }
};

struct Minimum {  // NaN wins; bool is `and`
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
    if constexpr (is_bool_v<C>)
      return a && b;
    else
      return std::min(a, b);
  }
};

struct Fmax {  // NaN loses (the other operand is returned); integers as maximum
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      return std::fmax(a, b);
    else
      return Maximum{}(a, b);
  }
};

struct Fmin {
  template <typename C> C operator()(C a, C b) const {
    if constexpr (is_fp_v<C>)
      return std::fmin(a, b);
    else
      return Minimum{}(a, b);
  }
};

// ---- bits -----------------------------------------------------------------------------------

// PyTorch: a negative shift or one by the bit width or more gives 0; otherwise the shift
// happens on the unsigned representation (bits shifted out are lost, no overflow).
struct ShiftLeft {
  template <typename C> C operator()(C a, C b) const {
    constexpr int width = sizeof(C) * CHAR_BIT;
    const auto shift = static_cast<std::make_signed_t<C>>(b);
    if (shift < 0 || shift >= width) return C(0);
    return static_cast<C>(static_cast<uint64_t>(a) << shift);
  }
};

// PyTorch: arithmetic shift for signed types, logical for unsigned; a negative shift or one
// by (width - 1 for signed, width for unsigned) or more shifts every bit out, leaving -1 for
// negative values and 0 otherwise.
struct ShiftRight {
  template <typename C> C operator()(C a, C b) const {
    constexpr int max_shift = sizeof(C) * CHAR_BIT - (std::is_signed_v<C> ? 1 : 0);
    const auto shift = static_cast<std::make_signed_t<C>>(b);
    if (shift < 0 || shift >= max_shift) return is_negative(a) ? static_cast<C>(-1) : C(0);
    return static_cast<C>(a >> shift);
  }
};

// Integer bitwise ops go through uint64_t so that narrow types never promote to int.
template <typename C, typename F> C bits(C a, C b, F f) {
  if constexpr (is_bool_v<C>)
    return static_cast<bool>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
  else
    return static_cast<C>(f(static_cast<uint64_t>(a), static_cast<uint64_t>(b)));
}

template <typename C> bool truthy(C x) { return x != C(0); }  // NaN is true

}  // namespace

Tensor binary(ir::BinaryOp op, const Tensor& a, const Tensor& b, const ir::AttrList& attrs) {
  using ir::BinaryOp;
  constexpr Accept Any = Accept::Any;
  constexpr Accept NoBool = Accept::NoBool;
  constexpr Accept Float = Accept::FloatOnly;
  constexpr Accept Int = Accept::IntOnly;
  constexpr Result S = Result::Same;
  constexpr Result B = Result::Bool;
  switch (op) {
    case BinaryOp::add: return map_binary<Any, S>(op, a, b, Add{});
    case BinaryOp::sub: return map_binary<NoBool, S>(op, a, b, Sub{});
    case BinaryOp::mul: return map_binary<Any, S>(op, a, b, Mul{});
    case BinaryOp::div: {
      const std::optional<std::string> mode = attrs.get_opt<std::string>(ir::OpKind::div, "rounding_mode");
      if (!mode) return map_binary<Float, S>(op, a, b, TrueDiv{});  // the frontend promotes ints
      if (*mode == "trunc") return map_binary<NoBool, S>(op, a, b, DivTrunc{});
      if (*mode == "floor") return map_binary<NoBool, S>(op, a, b, DivFloor{});
      fail("div", "rounding_mode must be none, \"trunc\" or \"floor\", got \"{}\"", *mode);
    }
    case BinaryOp::remainder: return map_binary<NoBool, S>(op, a, b, Remainder{});
    case BinaryOp::fmod: return map_binary<NoBool, S>(op, a, b, Fmod{});
    case BinaryOp::pow: return map_binary<NoBool, S>(op, a, b, Pow{});
    case BinaryOp::atan2: return map_binary<Float, S>(op, a, b, [](auto x, auto y) { return std::atan2(x, y); });
    case BinaryOp::hypot: return map_binary<Float, S>(op, a, b, [](auto x, auto y) { return std::hypot(x, y); });
    case BinaryOp::copysign:
      return map_binary<Float, S>(op, a, b, [](auto x, auto y) { return std::copysign(x, y); });
    case BinaryOp::maximum: return map_binary<Any, S>(op, a, b, Maximum{});
    case BinaryOp::minimum: return map_binary<Any, S>(op, a, b, Minimum{});
    case BinaryOp::fmax: return map_binary<Any, S>(op, a, b, Fmax{});
    case BinaryOp::fmin: return map_binary<Any, S>(op, a, b, Fmin{});
    case BinaryOp::eq: return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return x == y; });
    case BinaryOp::ne: return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return x != y; });
    case BinaryOp::lt: return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return x < y; });
    case BinaryOp::le: return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return x <= y; });
    case BinaryOp::gt: return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return x > y; });
    case BinaryOp::ge: return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return x >= y; });
    case BinaryOp::logical_and:
      return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return truthy(x) && truthy(y); });
    case BinaryOp::logical_or:
      return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return truthy(x) || truthy(y); });
    case BinaryOp::logical_xor:
      return map_binary<Any, B>(op, a, b, [](auto x, auto y) { return truthy(x) != truthy(y); });
    case BinaryOp::bitwise_and:
      return map_binary<Int, S>(op, a, b, [](auto x, auto y) { return bits(x, y, [](uint64_t p, uint64_t q) { return p & q; }); });
    case BinaryOp::bitwise_or:
      return map_binary<Int, S>(op, a, b, [](auto x, auto y) { return bits(x, y, [](uint64_t p, uint64_t q) { return p | q; }); });
    case BinaryOp::bitwise_xor:
      return map_binary<Int, S>(op, a, b, [](auto x, auto y) { return bits(x, y, [](uint64_t p, uint64_t q) { return p ^ q; }); });
    case BinaryOp::bitwise_left_shift:
      return map_binary<Accept::IntNoBool, S>(op, a, b, ShiftLeft{});
    case BinaryOp::bitwise_right_shift:
      return map_binary<Accept::IntNoBool, S>(op, a, b, ShiftRight{});
  }
  internal_fail("binary: unknown op {}", static_cast<int>(op));
}

}  // namespace kiln::rt::interp
