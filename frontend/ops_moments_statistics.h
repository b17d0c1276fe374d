// kiln/frontend/ops_moments_statistics.h — libtorch's statistics over samples (the Moments family's
// file for them, frontend/ops_moments_statistics.cpp): cov and corrcoef, quantile and nanquantile,
// histc and bincount, trapezoid and cumulative_trapezoid. Each records existing ops (sums,
// products, sorts, gathers, scatters), so it is traced, compiled and differentiated through their
// rules. Names, defaults, dtypes, check order and messages are PyTorch 2.15's.
#pragma once

#include "frontend/tensor.h"

#include <optional>
#include <string_view>

namespace kiln {

// The covariance matrix of the variables in the rows of self (observations in the columns; a
// 1-D self is one variable), the result squeezed. correction: Bessel's (1) or none (0);
// fweights (integral) and aweights (floating) weigh the observations. Integers give the default
// float dtype. Weights' values are checked (non-negative, a nonzero sum), so traced weights
// raise DataDependentError (compile() runs such a function eagerly).
Tensor cov(const Tensor& self, int64_t correction = 1, const std::optional<Tensor>& fweights = std::nullopt,
           const std::optional<Tensor>& aweights = std::nullopt);
// Pearson's correlation coefficients: cov scaled by the standard deviations, clipped to [-1, 1].
Tensor corrcoef(const Tensor& self);

// The q-th quantiles (q in [0, 1]; a 1-D q puts its dim first) of self along dim (none: all of
// it), interpolating between order statistics: "linear", "lower", "higher", "midpoint" or
// "nearest" (half to even). f32 and f64 only, q of self's dtype. quantile gives NaN for a slice
// holding NaN; nanquantile leaves NaNs out (NaN only for a slice of NaNs).
Tensor quantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor quantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& self, const Tensor& q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");
Tensor nanquantile(const Tensor& self, double q, std::optional<int64_t> dim = std::nullopt, bool keepdim = false,
                   std::string_view interpolation = "linear");

// A histogram of self's values in `bins` equal bins over [min, max] (min == max: the data's
// range, widened by 1 each way when that is one value too); values outside it and NaN are left
// out, max counts in the last bin. Floating inputs; the counts have self's dtype.
Tensor histc(const Tensor& self, int64_t bins = 100, const Scalar& min = 0, const Scalar& max = 0);
// The number of times each value 0, 1, ... occurs in a 1-D non-negative integer tensor (weights:
// their sums), at least minlength long. Its length is the largest value + 1, so a traced self
// raises DataDependentError.
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = std::nullopt, int64_t minlength = 0);

// The trapezoidal rule along dim: samples y at spacing dx, or at the points x (1-D, or shaped
// as y); cumulative_trapezoid keeps the running integral (one fewer element along dim).
Tensor trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Tensor& x, int64_t dim = -1);
Tensor cumulative_trapezoid(const Tensor& y, const Scalar& dx = 1, int64_t dim = -1);

}  // namespace kiln
