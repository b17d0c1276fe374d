// kiln/runtime/interpreter/scatter_fold.h — the arithmetic of scatter_reduce, shared by the reference
// interpreter (runtime/interpreter/interp_index.cpp) and the library kernel (runtime/cpu/extern_index.cpp).
//
// A position folds each scattered value in with sum, prod, max or min (mean sums and divides
// once at the end by how many values it received, self counted when included): integers wrap
// around, f16/bf16 compute in float and round after every step, NaN wins max and min — the
// element-wise order of PyTorch's CPU kernels. With include_self false a position restarts
// from the fold's identity when its first value arrives.
#pragma once

#include "base/half.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace kiln::rt {

enum class Fold { Sum, Prod, Max, Min };

inline Fold fold_of(const std::string& r) {
  if (r == "sum" || r == "mean") return Fold::Sum;
  if (r == "prod") return Fold::Prod;
  if (r == "amax") return Fold::Max;
  return Fold::Min;
}

template <typename T> void fold_into(Fold f, T& dst, T x) {
  if constexpr (std::is_same_v<T, bool>) {
    dst = f == Fold::Sum || f == Fold::Max ? (dst || x) : (dst && x);
  } else if constexpr (std::is_integral_v<T>) {  // wraps around
    const uint64_t a = static_cast<uint64_t>(static_cast<int64_t>(dst)), b = static_cast<uint64_t>(static_cast<int64_t>(x));
    switch (f) {
      case Fold::Sum: dst = static_cast<T>(a + b); break;
      case Fold::Prod: dst = static_cast<T>(a * b); break;
      case Fold::Max: dst = std::max(dst, x); break;
      case Fold::Min: dst = std::min(dst, x); break;
    }
  } else {  // f16/bf16 computed in float and rounded, as PyTorch's CPU kernels do
    using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
    const C a = static_cast<C>(dst), b = static_cast<C>(x);
    C r = a;
    switch (f) {
      case Fold::Sum: r = a + b; break;
      case Fold::Prod: r = a * b; break;
      case Fold::Max: r = std::isnan(a) ? a : (std::isnan(b) || b > a ? b : a); break;
      case Fold::Min: r = std::isnan(a) ? a : (std::isnan(b) || b < a ? b : a); break;
    }
    dst = T(r);
  }
}

// The identity a position restarts from when include_self is false.
template <typename T> T fold_identity(Fold f) {
  switch (f) {
    case Fold::Sum: return T(0);
    case Fold::Prod: return T(1);
    case Fold::Max:
      if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::lowest();
      else return T(-std::numeric_limits<float>::infinity());
    case Fold::Min:
      if constexpr (std::is_integral_v<T>) return std::numeric_limits<T>::max();
      else return T(std::numeric_limits<float>::infinity());
  }
  return T(0);
}

// x / count for mean: floor division for integers, the dtype's division for floats.
template <typename T> T mean_of(T sum, int64_t count) {
  if constexpr (std::is_same_v<T, bool>) return sum;
  else if constexpr (std::is_integral_v<T>) {
    const int64_t s = static_cast<int64_t>(sum), q = s / count;
    return static_cast<T>(q - ((s % count != 0) && ((s < 0) != (count < 0)) ? 1 : 0));
  } else if constexpr (std::is_same_v<T, double>) return sum / static_cast<double>(count);
  else return T(static_cast<float>(sum) / static_cast<float>(count));
}

}  // namespace kiln::rt
