// kiln/frontend/ops_reduction_counts.cpp — reductions of libtorch that record other ops
// (frontend/ops.h): nansum, count_nonzero and aminmax.
//
// nansum sums with NaN replaced by 0 (integer and bool inputs sum as sum does, to int64);
// count_nonzero sums `self != 0` as int64; aminmax is amin and amax over the same dims, with
// PyTorch 2.15's error for an empty reduction (aminmax has no identity).
#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_reduction.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"

#include <tuple>
#include <vector>

namespace kiln {

Tensor nansum(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  const Tensor x = is_floating_point(self.dtype()) ? where(isnan(self), 0.0, self) : self;
  return sum(x, dims, keepdim, dtype);
}

Tensor count_nonzero(const Tensor& self, IntArrayRef dims) {
  return sum(ne(self, 0), dims, /*keepdim=*/false, ScalarType::Int64);
}

std::tuple<Tensor, Tensor> aminmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  std::vector<int64_t> dims;
  if (dim) dims.push_back(*dim);
  const std::vector<int64_t> reduced = reduce_dims("aminmax", self, dims);
  if (dim) {
    if (self.dim() > 0 && ir::sym_eq(sym_size(self, reduced.at(0)), ir::Expr(0)))
      fail("aminmax", "aminmax: Expected reduction dim {} to have non-zero size.", reduced.at(0));
  } else if (ir::sym_eq(sym_numel(self), ir::Expr(0))) {
    fail("aminmax", "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity.");
  }
  if (!dim && keepdim) {  // every dim, kept as 1s
    std::vector<int64_t> all(static_cast<size_t>(self.dim()));
    for (size_t d = 0; d < all.size(); ++d) all[d] = static_cast<int64_t>(d);
    return {amin(self, all, true), amax(self, all, true)};
  }
  return {amin(self, dims, keepdim), amax(self, dims, keepdim)};
}

}  // namespace kiln
