// kiln/frontend/derivatives_scan.cpp — the Scan family's derivatives (frontend/derivatives.h).
//
//   cumsum        the reversed cumulative sum of g;
//   cumprod       sum_{j>=i} g_j * y_j / x_i, with the first zero of each slice (where that is
//                 0/0) and everything after it handled exactly (see d_cumprod);
//   cummax/cummin g added at the position each running extreme came from;
//   logcumsumexp  sum_{j>=i} g_j exp(x_i - y_j), in log space per sign of g.
#include "frontend/derivatives_detail.h"

#include <limits>

namespace kiln::autograd {

namespace {

using ir::OpKind;

int64_t dim_of(const GradArgs& a) { return a.attr<int64_t>("dim"); }

Tensor reverse_cumsum(const Tensor& t, int64_t d) { return flip(cumsum(flip(t, {d}), d), {d}); }

std::vector<Tensor> d_cumsum(const GradArgs& a) {
  if (a.meta(0).sizes.empty()) return one(a.grad());
  return one(reverse_cumsum(a.grad(), dim_of(a)));
}

// dy_j/dx_i = prod_{k<=j, k!=i} x_k for i <= j. Where no x before i is zero and x_i is not,
// grad_i = sum_{j>=i} g_j y_j / x_i. At the first zero k of a slice that formula is 0/0; there
// grad_k = sum_{j>=k} g_j y'_j with y' the cumulative product of x with x_k replaced by 1 (the
// product of every other factor). After it every product contains x_k: 0.
std::vector<Tensor> d_cumprod(const GradArgs& a) {
  const Tensor& x = a.in(0);
  if (x.dim() == 0) return one(a.grad());
  const int64_t d = dim_of(a);
  const Tensor g = a.grad();
  const Tensor& y = a.out(0);
  const Tensor zero = eq(x, 0);
  const Tensor zeros_so_far = cumsum(zero.to(ScalarType::Int64), d);
  const Tensor first = logical_and(zero, eq(zeros_so_far, 1));
  const Tensor y_without = cumprod(where(first, Scalar(1.0), x), d);
  const Tensor at_first = reverse_cumsum(g * y_without, d);
  const Tensor plain = reverse_cumsum(g * y, d) / where(zero, Scalar(1.0), x);
  return one(where(first, at_first, where(gt(zeros_so_far, 0), Scalar(0.0), plain)));
}

std::vector<Tensor> d_cumextreme(const GradArgs& a) {
  const Tensor& x = a.in(0);
  if (x.dim() == 0) return one(a.grad());
  const int64_t d = dim_of(a);
  const Tensor idx = std::get<0>(cummax(where(logical_or(eq(x, a.out(0)), logical_and(isnan(x), isnan(a.out(0)))),
                                              sym_positions(x, d), Scalar(int64_t{0})),
                                        d));
  return one(a.meta(0).zeros().scatter_add(d, idx, a.grad()));
}

// grad_i = sum_{j>=i} g_j exp(x_i - y_j). Split g by sign and sum each part in log space:
// log sum_{j>=i} |g_j| exp(-y_j) is a reversed logcumsumexp of log|g_j| - y_j.
std::vector<Tensor> d_logcumsumexp(const GradArgs& a) {
  const Tensor& x = a.in(0);
  if (x.dim() == 0) return one(a.grad());
  const int64_t d = dim_of(a);
  const Tensor& y = a.out(0);
  const Tensor g = a.grad();
  const double ninf = -std::numeric_limits<double>::infinity();
  auto part = [&](const Tensor& mag) {
    const Tensor l = where(gt(mag, 0), log(mag) - y, Scalar(ninf));
    return exp(flip(logcumsumexp(flip(l, {d}), d), {d}) + x);
  };
  return one(part(clamp_min(g, 0)) - part(clamp_min(-g, 0)));
}

}  // namespace

void add_scan_derivatives(DerivativeTable& t) {
  t.rule(OpKind::cumsum, d_cumsum);
  t.rule(OpKind::cumprod, d_cumprod, bit(0), bit(0));
  t.rule(OpKind::cummax, d_cumextreme, bit(0), bit(0));
  t.rule(OpKind::cummin, d_cumextreme, bit(0), bit(0));
  t.rule(OpKind::logcumsumexp, d_logcumsumexp, bit(0), bit(0));
}

}  // namespace kiln::autograd
