// kiln/frontend/derivatives_detail.h — internal: helpers the derivative rules share.
#pragma once

#include "base/error.h"
#include "frontend/derivatives.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"
#include "frontend/symbolic.h"

#include <vector>

namespace kiln::autograd {

// The gradient of the input of an op that broadcast it to g's shape (expand): g summed over the
// dims that were added or expanded from size 1, to `sizes`.
Tensor sum_to(const Tensor& g, const std::vector<ir::Expr>& sizes);

// The gradient of the input of a view op whose output is `view_of(input)`: g written back into
// zeros of the input's shape at the elements the view reads (summed where the view reads one
// element twice). The element positions come from applying the same view to the positions
// 0..numel-1 of the input (ir::iota), so this works for every view on any sizes, traced or not.
Tensor unview(const Tensor& g, const TensorMeta& input, const std::function<Tensor(const Tensor&)>& view_of,
              bool may_overlap);

// The gradient of a reduction's output expanded back to the input's shape: unsqueezed at the
// reduced dims (unless keepdim) and broadcast.
Tensor expand_reduced(const Tensor& g, const TensorMeta& input, const std::vector<int64_t>& dims, bool keepdim);

// A one-input gradient vector.
inline std::vector<Tensor> one(Tensor g) { return {std::move(g)}; }

}  // namespace kiln::autograd
