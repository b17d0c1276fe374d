// kiln/frontend/promotion.h — PyTorch's type promotion: result_type over tensors and scalars.
//
// Operands fall in three priority groups: tensors with dims, 0-dim tensors, and wrapped
// numbers (scalars). A lower group only matters when it is of a higher category
// (bool < integral < floating) than every higher group: int8_tensor + 5 stays int8,
// int8_tensor + 2.5 becomes the default float dtype, float16_tensor + 0-dim float64 stays
// float16, int32_tensor + 0-dim float64 becomes float64.
#pragma once

#include "frontend/tensor.h"

#include <variant>
#include <vector>

namespace kiln {

using TensorOrScalar = std::variant<Tensor, Scalar>;

ScalarType result_type(const std::vector<TensorOrScalar>& operands);
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
ScalarType result_type(const Scalar& a, const Tensor& b);
ScalarType result_type(const Scalar& a, const Scalar& b);
// Whether a value of `from` can be cast to `to` without changing category downwards
// (PyTorch's can_cast: float -> int and non-bool -> bool are not allowed).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace kiln
