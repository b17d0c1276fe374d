// kiln/frontend/ops_linear_distances.cpp — cosine_similarity and pairwise_distance
// (frontend/ops_linear.h), which record a vector norm and pointwise ops.
//
// As PyTorch 2.15 computes them (measured): cosine_similarity divides each operand by its
// 2-norm along dim, clamped below at eps (the gradient passing through the unclamped norm), and
// sums their product along dim after broadcasting (integer operands in the common floating
// dtype); pairwise_distance is the p-norm of x1 - x2 + eps along the last dim of the broadcast
// result.
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_view.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"

#include <algorithm>

namespace kiln {

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  constexpr std::string_view op = "cosine_similarity";
  const ScalarType dt = result_type(x1, x2);
  if (!is_floating_point(dt))
    fail(op, "expected common dtype to be floating point, yet common dtype is {}", c10_type_name(dt));
  const std::vector<ir::Expr> shape = sym_broadcast_shapes(op, sym_sizes(x1), sym_sizes(x2));
  const int64_t d = normalize_dim(op, dim, static_cast<int64_t>(shape.size()));
  // Only integer and bool operands convert: an f16 operand's norm and quotient stay in f16.
  auto operand = [&](const Tensor& x) { return sym_expand(is_floating_point(x.dtype()) ? x : x.to(dt), shape); };
  // The norm clamped at eps, the clamp outside autograd as ATen's in-place clamp under no_grad:
  // the value is max(norm, eps), the gradient the norm's own.
  auto unit = [&](const Tensor& x) {
    const Tensor n = linalg_vector_norm(x, 2, {d}, true);
    return div(x, add(n, sub(clamp_min(n, eps), n).detach()));
  };
  return sum(mul(unit(operand(x1)), unit(operand(x2))), {d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return norm(add(sub(x1, x2), eps), Scalar(p), {last}, keepdim);
}

}  // namespace kiln
