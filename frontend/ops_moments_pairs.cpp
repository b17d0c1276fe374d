// kiln/frontend/ops_moments_pairs.cpp — moments of libtorch that record other ops
// (frontend/ops_moments.h): nanmean, var_mean and std_mean.
//
// nanmean is nansum over the count of non-NaN elements (floating dtypes only); var_mean and
// std_mean are var (std) and mean over the same dims, in that order, as torch returns them.
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_moments.h"

#include <tuple>

namespace kiln {

Tensor nanmean(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  if (!is_floating_point(self.dtype()))
    fail("nanmean", "nanmean(): expected input to have floating point or complex dtype but got {}",
         c10_type_name(self.dtype()));
  if (dtype && !is_floating_point(*dtype))
    fail("nanmean", "nanmean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
                    "dtype. Got: {}",
         c10_type_name(*dtype));
  const Tensor count = sum(logical_not(isnan(self)), dims, keepdim);
  return div(nansum(self, dims, keepdim, dtype), count);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction,
                                    bool keepdim) {
  if (!is_floating_point(self.dtype())) fail("var_mean", "var_mean only support floating point and complex dtypes");
  return {var(self, dims, correction, keepdim), mean(self, dims, keepdim)};
}

std::tuple<Tensor, Tensor> std_mean(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction,
                                    bool keepdim) {
  if (!is_floating_point(self.dtype())) fail("std_mean", "std_mean only support floating point and complex dtypes");
  return {std(self, dims, correction, keepdim), mean(self, dims, keepdim)};
}

}  // namespace kiln
