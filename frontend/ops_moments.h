// kiln/frontend/ops_moments.h — the Moments family: var and std (mean is declared with the
// reductions in frontend/ops.h).
//
// Names, argument order, defaults and semantics follow libtorch. Each validates its arguments
// with PyTorch's wording, resolves defaults and dispatches one composite op: traced, it is
// recorded as a single node that passes/decompose.h expands; eager, its decomposition runs
// prim by prim.
#pragma once

#include "frontend/tensor.h"
#include <optional>
#include <tuple>
#include <type_traits>

namespace kiln {

// Variance over dims ({} means every dim); correction defaults to 1 (Bessel's correction).
Tensor var(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction = std::nullopt,
           bool keepdim = false);
// Variance over every dim (unbiased: correction 1, else 0). A template that takes exactly
// `bool`: a braced dim list (`var(x, {1})`) then selects the dims overload above instead of
// converting 1 to `unbiased` (with no default template argument, which would be used when
// the braced list leaves Bool undeduced).
template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
Tensor var(const Tensor& self, Bool unbiased) {
  return var(self, IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
}
inline Tensor var(const Tensor& self) { return var(self, true); }
// Standard deviation: sqrt(var) with the same arguments.
Tensor std(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction = std::nullopt,
           bool keepdim = false);
template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
Tensor std(const Tensor& self, Bool unbiased) {
  return std(self, IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
}
inline Tensor std(const Tensor& self) { return std(self, true); }

// Moments that record other ops (frontend/ops_moments_pairs.cpp). nanmean: the mean of the
// elements that are not NaN. var_mean, std_mean: (var, mean) and (std, mean) over the same dims.
Tensor nanmean(const Tensor& self, IntArrayRef dims = {}, bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, IntArrayRef dims = {},
                                    const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, IntArrayRef dims = {},
                                    const std::optional<Scalar>& correction = std::nullopt, bool keepdim = false);
// Over every dim with Bessel's correction or without: exactly `bool`, as var(self, unbiased).
template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, Bool unbiased) {
  return var_mean(self, IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
}
template <typename Bool, std::enable_if_t<std::is_same_v<Bool, bool>, int> = 0>
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, Bool unbiased) {
  return std_mean(self, IntArrayRef{}, Scalar(int64_t{unbiased ? 1 : 0}));
}

}  // namespace kiln
