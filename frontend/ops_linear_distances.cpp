// kiln/frontend/ops_linear_distances.cpp — cosine_similarity and pairwise_distance
// (frontend/ops_linear.h), which record a vector norm and pointwise ops.
//
// As PyTorch 2.15 computes them (measured): cosine_similarity divides each operand by its
// 2-norm along dim, clamped below at eps, and sums their product along dim, in the operands'
// common floating dtype after broadcasting; pairwise_distance is the p-norm of x1 - x2 + eps
// along the last dim of the broadcast result.
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
  const Tensor a = sym_expand(x1.to(dt), shape), b = sym_expand(x2.to(dt), shape);
  auto unit = [&](const Tensor& x) { return div(x, clamp_min(linalg_vector_norm(x, 2, {d}, true), eps)); };
  return sum(mul(unit(a), unit(b)), {d});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return norm(add(sub(x1, x2), eps), Scalar(p), {last}, keepdim);
}

}  // namespace kiln
