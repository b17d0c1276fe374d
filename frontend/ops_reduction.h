// kiln/frontend/ops_reduction.h — internal: what the reduction-shaped families share (Reduction,
// Scan, Moments, Softmax): dim lists as the prims take them and the dtype sums accumulate in.
// The public reductions are declared in frontend/ops.h. Not part of the public API.
#pragma once

#include "base/dtype.h"
#include "frontend/tensor.h"

#include <optional>
#include <string_view>
#include <vector>

namespace kiln {

// Normalized (negative dims count from the end), sorted, unique dims; {} stands for every dim.
// A repeated dim fails, naming op.
std::vector<int64_t> reduce_dims(std::string_view op, const Tensor& self, IntArrayRef dims);

// The dtype sum, prod, cumsum and cumprod compute in: dtype when given, else int64 for
// integral and bool inputs and the input's dtype otherwise.
ScalarType accumulate_dtype(const Tensor& self, std::optional<ScalarType> dtype);

}  // namespace kiln
