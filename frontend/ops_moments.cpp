// kiln/frontend/ops_moments.cpp — the Moments family's frontend (frontend/ops_moments.h): mean,
// var and std (sqrt of var).
//
// Both need a floating dtype and are composites: their decompositions
// (frontend/decompositions_moments.cpp) compute float16/bfloat16 in float32; their shape
// functions are ir/shape_fns_moments.cpp.
#include "frontend/ops_moments.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"
#include "frontend/ops_reduction.h"

#include <optional>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

Tensor mean_impl(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  ScalarType in_dtype = accumulate_dtype(self, dtype);
  if (!is_floating_point(in_dtype)) {
    fail("mean", "mean(): could not infer output dtype. {} dtype must be either a floating point or complex dtype. Got: {}",
         dtype ? "Optional" : "Input", c10_type_name(dtype ? *dtype : self.dtype()));
  }
  std::vector<int64_t> d = reduce_dims("mean", self, dims);
  // PyTorch computes half and bfloat16 means as float32 sum and division, then casts back:
  // the mean composite (frontend/decompositions_moments.cpp) sums in f32 for f16/bf16 and divides.
  return dispatch1(OpKind::mean, {self}, {std::move(d), keepdim, in_dtype});
}

Tensor var_impl(const Tensor& self, IntArrayRef dims, const Scalar& correction, bool keepdim) {
  if (!is_floating_point(self.dtype())) fail("var", "std and var only support floating point and complex dtypes");
  std::vector<int64_t> d = reduce_dims("var", self, dims);
  return dispatch1(OpKind::var, {self}, {std::move(d), correction, keepdim});
}

}  // namespace

Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) { return mean_impl(self, {}, false, dtype); }

Tensor mean(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  return mean_impl(self, dims, keepdim, dtype);
}

Tensor var(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) {
  return var_impl(self, dims, correction.value_or(Scalar(int64_t{1})), keepdim);
}

Tensor std(const Tensor& self, IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) {
  return sqrt(var(self, dims, correction, keepdim));
}

Tensor Tensor::var(IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) const {
  return kiln::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) const {
  return kiln::std(*this, dims, correction, keepdim);
}

}  // namespace kiln
