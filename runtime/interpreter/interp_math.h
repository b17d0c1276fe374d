// kiln/runtime/interpreter/interp_math.h — shared pieces of the interpreter's pointwise prims (internal).
//
// Element types, their compute types (f16/bf16 compute in f32, everything else in itself),
// conversions between any two element types with defined behaviour for every input, integer
// arithmetic that wraps around without undefined behaviour, and the strided loops: one per
// arity, shared by every pointwise op. Per-op math lives in small functors in the .cpp files
// that include this header; the loops here know nothing about ops.
#pragma once

#include "base/dtype.h"
#include "base/error.h"
#include "frontend/tensor.h"
#include "runtime/interpreter/strided_loop.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <vector>

namespace kiln::rt::interp {

// ---- element type traits ------------------------------------------------------------------

template <typename T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool is_float_elem_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
template <typename T>
inline constexpr bool is_bool_v = std::is_same_v<T, bool>;
// Integer element types, bool excluded.
template <typename T>
inline constexpr bool is_int_elem_v = std::is_integral_v<T> && !is_bool_v<T>;

// The type arithmetic happens in: float for Half and BFloat16, the element type otherwise.
template <typename T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <typename T>
compute_t<T> load(T x) {
  return static_cast<compute_t<T>>(x);
}

// Stores a compute-type value into element type T (f16/bf16 round to nearest even).
template <typename T>
T store(compute_t<T> x) {
  return T(x);
}

// Which element types an op accepts (the ops.def traits FloatOnly, IntOnly, NoBool).
enum class Accept { Any, NoBool, FloatOnly, IntOnly, IntNoBool };

// The result dtype of a pointwise map: the operands', or bool.
enum class Result { Same, Bool };

template <Accept A, typename T>
inline constexpr bool accepts_v = A == Accept::Any || (A == Accept::NoBool && !is_bool_v<T>) ||
                                  (A == Accept::FloatOnly && is_float_elem_v<T>) ||
                                  (A == Accept::IntOnly && !is_float_elem_v<T>) ||
                                  (A == Accept::IntNoBool && is_int_elem_v<T>);

[[noreturn]] inline void reject_dtype(std::string_view op, ScalarType t) {
  fail(op, "does not support dtype {}", dtype_name(t));
}

// ---- integer arithmetic that wraps around -------------------------------------------------
// Done in uint64_t (never promoted to int, so never signed overflow); converting the result
// back to a narrower or signed type keeps the low bits (defined modulo 2^n since C++20).

template <typename T>
T wrap_add(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T>
T wrap_sub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename T>
T wrap_mul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <typename T>
T wrap_neg(T a) {
  return static_cast<T>(uint64_t{0} - static_cast<uint64_t>(a));
}
template <typename T>
bool is_negative(T a) {
  if constexpr (std::is_signed_v<T>)
    return a < T(0);
  else
    return false;
}

// ---- conversions --------------------------------------------------------------------------

// Converts one element from type From to type To with PyTorch CPU semantics:
//  - to bool: x != 0 (so NaN -> true); from bool: 0 or 1.
//  - integer -> integer: keeps the low bits (int64 300 -> int8 44, -1 -> uint8 255).
//  - floating -> integer: truncates toward zero, as PyTorch 2.15's x86 build shows (measured
//    for every source and target type; C++ leaves it undefined): int64 and uint8 through
//    int64, where NaN and values outside int64's range become INT64_MIN (x86's cvttsd2si);
//    int32, int16 and int8 through int32, where NaN and values outside int32's range become
//    INT32_MIN (the 32-bit cvttsd2si). The intermediate then wraps to the target like any
//    integer conversion: NaN is 0 in int16, int8 and uint8, and 3e9 is INT32_MIN in int32.
//  - to f16/bf16: through float (as c10::Half(float) does), rounding to nearest even; a double
//    is first rounded to float. Integers convert to float first, too.
//  - float <-> double: IEEE rounding to nearest, overflow to infinity.
template <typename To, typename From>
To convert(From x) {
  if constexpr (std::is_same_v<To, From>) {
    return x;
  } else if constexpr (is_bool_v<To>) {
    return load(x) != compute_t<From>(0);
  } else if constexpr (is_bool_v<From>) {
    if constexpr (is_reduced_float_v<To>)
      return To(x ? 1.0f : 0.0f);
    else
      return static_cast<To>(x ? 1 : 0);
  } else if constexpr (is_int_elem_v<To> && is_int_elem_v<From>) {
    return static_cast<To>(x);
  } else if constexpr (is_int_elem_v<To>) {  // From is floating
    const double d = static_cast<double>(load(x));
    // 2^31 and 2^63 are exact in double; NaN fails both comparisons.
    if constexpr (std::is_signed_v<To> && sizeof(To) <= 4) {
      const bool in_range = d >= -2147483648.0 && d < 2147483648.0;
      return static_cast<To>(in_range ? static_cast<int32_t>(d) : INT32_MIN);
    } else {
      const bool in_range = d >= -9223372036854775808.0 && d < 9223372036854775808.0;
      return static_cast<To>(in_range ? static_cast<int64_t>(d) : INT64_MIN);
    }
  } else if constexpr (is_reduced_float_v<To>) {  // From is an integer or a floating type
    return To(static_cast<float>(load(x)));
  } else {  // To is float or double
    return static_cast<To>(load(x));
  }
}

// ---- strided loops ------------------------------------------------------------------------
// Each calls fn on the input elements (as stored) and writes its result into `out`, which
// has the inputs' sizes and any strides. Inputs may have any strides, zero included.

inline IntArrayRef sizes_of(const Tensor& t) { return t.impl()->sizes(); }
inline const int64_t* strides_of(const Tensor& t) { return t.impl()->strides().data(); }

template <typename Out, typename A, typename Fn>
void loop1(const Tensor& out, const Tensor& a, Fn&& fn) {
  Out* po = static_cast<Out*>(out.data_ptr());
  const A* pa = static_cast<const A*>(a.data_ptr());
  for_each_element<2>(sizes_of(out), {strides_of(out), strides_of(a)},
                      [&](const std::array<int64_t, 2>& o) { po[o[0]] = fn(pa[o[1]]); });
}

template <typename Out, typename A, typename B, typename Fn>
void loop2(const Tensor& out, const Tensor& a, const Tensor& b, Fn&& fn) {
  Out* po = static_cast<Out*>(out.data_ptr());
  const A* pa = static_cast<const A*>(a.data_ptr());
  const B* pb = static_cast<const B*>(b.data_ptr());
  for_each_element<3>(sizes_of(out), {strides_of(out), strides_of(a), strides_of(b)},
                      [&](const std::array<int64_t, 3>& o) { po[o[0]] = fn(pa[o[1]], pb[o[2]]); });
}

template <typename Out, typename A, typename B, typename C, typename Fn>
void loop3(const Tensor& out, const Tensor& a, const Tensor& b, const Tensor& c, Fn&& fn) {
  Out* po = static_cast<Out*>(out.data_ptr());
  const A* pa = static_cast<const A*>(a.data_ptr());
  const B* pb = static_cast<const B*>(b.data_ptr());
  const C* pc = static_cast<const C*>(c.data_ptr());
  for_each_element<4>(sizes_of(out), {strides_of(out), strides_of(a), strides_of(b), strides_of(c)},
                      [&](const std::array<int64_t, 4>& o) { po[o[0]] = fn(pa[o[1]], pb[o[2]], pc[o[3]]); });
}

// Checks that every operand of a pointwise prim has the sizes of the first (the shape
// functions guarantee it; a direct caller of interpret_op might not).
inline void check_same_sizes(std::string_view op, std::initializer_list<const Tensor*> ts) {
  const Tensor& first = **ts.begin();
  for (const Tensor* t : ts)
    if (sizes_of(*t) != sizes_of(first))
      fail(op, "operands must have equal sizes, got {} and {}", shape_str(first.sizes()), shape_str(t->sizes()));
}

inline void check_same_dtype(std::string_view op, std::initializer_list<const Tensor*> ts) {
  const Tensor& first = **ts.begin();
  for (const Tensor* t : ts)
    if (t->dtype() != first.dtype())
      fail(op, "operands must have equal dtypes, got {} and {}", dtype_name(first.dtype()), dtype_name(t->dtype()));
}

// The accumulator of sum/prod/cumsum/cumprod: double for floating types, uint64 (wrapping)
// for integers and bool.
template <typename T> using SumAcc = std::conditional_t<is_float_elem_v<T>, double, uint64_t>;

template <typename T> SumAcc<T> to_sum_acc(T x) {
  if constexpr (std::is_same_v<T, double>)
    return x;
  else if constexpr (is_float_elem_v<T>)
    return static_cast<double>(static_cast<float>(x));
  else
    return static_cast<uint64_t>(static_cast<int64_t>(x));
}

template <typename T> T from_sum_acc(SumAcc<T> a) {
  if constexpr (std::is_same_v<T, bool>)
    return a != 0;
  else if constexpr (std::is_same_v<T, double>)
    return a;
  else if constexpr (is_float_elem_v<T>)
    return T(static_cast<float>(a));
  else
    return static_cast<T>(a);  // modular conversion: the wrap-around of integer arithmetic
}

}  // namespace kiln::rt::interp
