// kiln/frontend/derivatives_linear.cpp — the Linear family's derivatives (frontend/derivatives.h).
//
// cdist and pdist have rules of their own, PyTorch's _cdist_backward: through the
// decomposition, p = 2 would divide by a zero distance (NaN where two rows coincide), and
// p = inf would share the gradient among tied coordinates where PyTorch gives each its sign.
// With diff = x1_i - x2_j and d = dist_ij, the gradient of x1_i sums over j of g_ij times
//   p = 0: 0;   p = 1: sign(diff);   p = 2: diff / d;   p = inf: sign(diff) where |diff| = d;
//   else: sign(diff) |diff|^(p-1) / d^(p-1);
// each 0 where d = 0. p = 2 is written with matrix products, the others over [P, R, M].
// The other composites of the family (linear, matmul, addmm, baddbmm, cross_entropy, einsum)
// are differentiated through their decompositions.
#include "frontend/derivatives_detail.h"

#include <cmath>

namespace kiln::autograd {

namespace {

using ir::OpKind;

// The gradient of x1 (broadcast to the output's batch dims) of dist = cdist(x1, x2, p).
Tensor cdist_grad(const Tensor& g, const Tensor& x1, const Tensor& x2, const Tensor& dist, double p) {
  if (p == 2) {
    const Tensor gd = where(eq(dist, 0), Scalar(0.0), g / dist);
    return x1 * sum(gd, {-1}, /*keepdim=*/true) - matmul(gd, x2);
  }
  const Tensor diff = x1.unsqueeze(-2) - x2.unsqueeze(-3);  // [..., P, R, M]
  const Tensor d = dist.unsqueeze(-1);
  Tensor term;
  if (p == 1) {
    term = sign(diff);
  } else if (std::isinf(p)) {
    term = sign(diff) * eq(abs(diff), d).to(diff.dtype());
  } else {
    term = where(logical_or(eq(diff, 0), eq(d, 0)), Scalar(0.0), sign(diff) * pow(abs(diff) / d, p - 1));
  }
  return sum(g.unsqueeze(-1) * term, {-2});
}

std::vector<Tensor> d_cdist(const GradArgs& a) {
  const double p = a.attr<double>("p");
  const Tensor g = a.grad(), &x1 = a.in(0), &x2 = a.in(1), &dist = a.out(0);
  std::vector<Tensor> out(2);
  if (p == 0) {
    if (a.need(0)) out[0] = a.meta(0).zeros();
    if (a.need(1)) out[1] = a.meta(1).zeros();
    return out;
  }
  if (a.need(0)) out[0] = sum_to(cdist_grad(g, x1, x2, dist, p), a.meta(0).sizes);
  if (a.need(1)) out[1] = sum_to(cdist_grad(g.transpose(-1, -2), x2, x1, dist.transpose(-1, -2), p), a.meta(1).sizes);
  return out;
}

// pdist(x) is the upper triangle (i < j, row by row) of cdist(x, x): g scattered into that
// triangle, mirrored (x is both operands), and taken through cdist's rule.
std::vector<Tensor> d_pdist(const GradArgs& a) {
  const double p = a.attr<double>("p");
  if (p == 0) return one(a.meta(0).zeros());
  const std::optional<int64_t> rows = a.meta(0).sizes.at(0).maybe_const();
  if (!rows) fail("pdist", "the gradient of pdist needs a static number of rows, got {}", a.meta(0).sizes[0].str());
  const int64_t n = *rows;
  std::vector<int64_t> at;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) at.push_back(i * n + j);
  const Tensor pos = tensor<int64_t>(at, TensorOptions(ScalarType::Int64).device(a.in(0).device()));
  const Tensor g = a.grad();
  const Tensor upper = zeros({n * n}, g.options()).scatter(0, pos, g).reshape({n, n});
  const Tensor d_upper = zeros({n * n}, g.options()).scatter(0, pos, a.out(0)).reshape({n, n});
  const Tensor& x = a.in(0);
  return one(cdist_grad(upper + upper.t(), x, x, d_upper + d_upper.t(), p));
}

}  // namespace

void add_linear_derivatives(DerivativeTable& t) {
  t.rule(OpKind::cdist, d_cdist, bit(0) | bit(1), bit(0));
  t.rule(OpKind::pdist, d_pdist, bit(0), bit(0));
}

}  // namespace kiln::autograd
