// kiln/frontend/derivatives_linear.cpp — the Linear family's derivatives (frontend/derivatives.h).
//
// cdist and pdist have rules of their own, PyTorch's _cdist_backward: through the
// decomposition, p = 2 would divide by a zero distance (NaN where two rows coincide), and
// p = inf would share the gradient among tied coordinates where PyTorch gives each its sign.
// With diff = x1_i - x2_j and d = dist_ij, the gradient of x1_i sums over j of g_ij times
//   p = 0: 0;   p = 1: sign(diff);   p = 2: diff / d;   p = inf: sign(diff) where |diff| = d;
//   else: sign(diff) |diff|^(p-1) / d^(p-1);
// each 0 where d = 0. p = 2 is written with matrix products, the others over [P, R, M].
//
// cross_entropy has a rule of its own, written from the input: through the decomposition the
// gradient would reach the target's log-probability by scattering back through a gather, and
// the row statistics twice. With p = softmax(x) over the class dim, O the target's one-hot (0
// on ignored rows), w the class weights (1 without), W = sum w, C classes, eps the label
// smoothing, w_t = sum_c O w (the row's target weight) and G the gradient of each row's loss
// (g for 'none' and 'sum', g / S for 'mean' with S = sum w_t), on the rows that count:
//   dx = G ((1 - eps) w_t + eps W / C) p - G ((1 - eps) O w + eps w / C)
// All of it is one pass over x after the row statistics. PyTorch does not differentiate the
// class weights; kiln does, from the same quantities with nll = -log p[t]:
//   dw = sum over rows of G ((1 - eps) O nll - eps / C log p), less g loss / S times each
//        class's count of valid rows for 'mean' (S depends on w too).
// The other composites of the family (linear, matmul, addmm, baddbmm, einsum) are
// differentiated through their decompositions.
#include "frontend/derivatives_detail.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops_softmax.h"

#include <cmath>
#include <string>

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

// Sums a [.., C, ..] tensor over every dim but the class dim.
Tensor sum_but(const Tensor& t, int64_t class_dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < t.dim(); ++d)
    if (d != class_dim) dims.push_back(d);
  return dims.empty() ? t : sum(t, dims);
}

// Class probabilities: loss_i = -sum_c w_c q_ic log p_ic with q = (1 - eps) target + eps / C,
// G = g, or g / rows for the mean:
//   dx = G ((sum_c w_c q_ic) p - w q),  dtarget = -(1 - eps) G w log p,  dw = -sum_i G q log p.
std::vector<Tensor> d_cross_entropy_probabilities(const GradArgs& a) {
  const size_t n = a.input_meta.size();
  const bool weighted = n > 2;
  std::vector<Tensor> out(n);
  const std::string& reduction = a.attr<std::string>("reduction");
  const double eps = a.attr<double>("label_smoothing");
  const ScalarType t = decomp::opmath_dtype(promote_types(a.meta(0).dtype, a.meta(1).dtype));
  const Tensor x = a.in(0).to(t), target = a.in(1).to(t);
  const int64_t cd = x.dim() == 1 ? 0 : 1;
  Tensor q = target;
  if (eps > 0) q = q * (1.0 - eps) + eps / static_cast<double>(x.size(cd));
  Tensor w;
  if (weighted) {
    std::vector<ir::Expr> shape(static_cast<size_t>(x.dim()), ir::Expr(1));
    shape[static_cast<size_t>(cd)] = a.meta(2).sizes.at(0);
    w = sym_reshape(a.in(2).to(t), shape);
  }
  const Tensor wq = weighted ? q * w : q;
  Tensor G = a.grad(0).to(t);
  if (reduction == "mean") {
    std::vector<ir::Expr> rows = sym_sizes(x);
    rows.erase(rows.begin() + cd);
    G = G / sym_scalar_tensor(sym_product(rows), t, x.device());
  }
  if (reduction == "none") G = G.unsqueeze(cd);
  if (a.need(0)) out[0] = (G * (sum(wq, {cd}, /*keepdim=*/true) * kiln::softmax(x, cd) - wq)).to(a.meta(0).dtype);
  if (a.need(1) || (weighted && a.need(2))) {
    const Tensor glogp = G * kiln::log_softmax(x, cd);
    if (a.need(1)) out[1] = (-(1.0 - eps) * (weighted ? glogp * w : glogp)).to(a.meta(1).dtype);
    if (weighted && a.need(2)) out[2] = (-sum_but(glogp * q, cd)).to(a.meta(2).dtype);
  }
  return out;
}

std::vector<Tensor> d_cross_entropy(const GradArgs& a) {
  if (is_floating_point(a.meta(1).dtype)) return d_cross_entropy_probabilities(a);
  const size_t n = a.input_meta.size();
  const bool weighted = n > 2;
  const bool need_w = weighted && a.need(2);
  std::vector<Tensor> out(n);
  if (!a.need(0) && !need_w) return out;
  const std::string& reduction = a.attr<std::string>("reduction");
  const int64_t ignore_index = a.attr<int64_t>("ignore_index");
  const double eps = a.attr<double>("label_smoothing");
  const ScalarType t = decomp::opmath_dtype(a.meta(0).dtype);
  const Tensor x = a.in(0).to(t);
  const Tensor& target = a.in(1);
  const int64_t cd = x.dim() == 1 ? 0 : 1;
  if (sym_size(x, cd).maybe_const() == 0) {  // no classes: every row is ignored, nothing to pass back
    if (a.need(0)) out[0] = a.meta(0).zeros();
    if (need_w) out[2] = a.meta(2).zeros();
    return out;
  }
  const double classes = eps > 0 ? static_cast<double>(x.size(cd)) : 1.0;

  const Tensor valid = ne(target, Scalar(ignore_index));
  const Tensor onehot = logical_and(eq(sym_positions(x, cd), target.unsqueeze(cd)), valid.unsqueeze(cd)).to(t);
  Tensor w;  // the class weights, shaped to broadcast along the class dim
  if (weighted) {
    std::vector<ir::Expr> shape(static_cast<size_t>(x.dim()), ir::Expr(1));
    shape[static_cast<size_t>(cd)] = a.meta(2).sizes.at(0);
    w = sym_reshape(a.in(2).to(t), shape);
  }
  const Tensor w_t = weighted ? sum(onehot * w, {cd}) : valid.to(t);
  const Tensor g = a.grad(0).to(t);
  const bool mean = reduction == "mean";
  const Tensor S = mean ? w_t.sum() : Tensor();
  const Tensor G = where(valid, mean ? g / S : g, Scalar(0.0)).unsqueeze(cd);  // 0 on ignored rows

  if (a.need(0)) {
    const Tensor p = kiln::softmax(x, cd);
    const Tensor ow = weighted ? onehot * w : onehot;
    Tensor dx;
    if (eps > 0) {
      const Tensor W = weighted ? w.sum() : sym_scalar_tensor(sym_size(x, cd), t, x.device());
      const Tensor coef = (w_t * (1.0 - eps)).unsqueeze(cd) + W * (eps / classes);
      const Tensor smooth = weighted ? w * (eps / classes) : sym_full({}, eps / classes, t, x.device());
      dx = G * (coef * p - (ow * (1.0 - eps) + smooth));
    } else {
      dx = G * (w_t.unsqueeze(cd) * p - ow);
    }
    out[0] = dx.to(a.meta(0).dtype);
  }
  if (need_w) {
    const Tensor logp = kiln::log_softmax(x, cd);
    const Tensor nll = -sum(logp * onehot, {cd}, /*keepdim=*/true);
    Tensor per = onehot * nll * (1.0 - eps);
    if (eps > 0) per = per - valid.unsqueeze(cd).to(t) * logp * (eps / classes);
    Tensor dw = sum_but(G * per, cd);
    if (mean) dw = dw - sum_but(onehot, cd) * (g * a.out(0).to(t) / S);
    out[2] = dw.to(a.meta(2).dtype);
  }
  return out;
}

}  // namespace

void add_linear_derivatives(DerivativeTable& t) {
  t.rule(OpKind::cdist, d_cdist, bit(0) | bit(1), bit(0));
  t.rule(OpKind::pdist, d_pdist, bit(0), bit(0));
  t.rule(OpKind::cross_entropy, d_cross_entropy, bit(0) | bit(1) | bit(2), bit(0));
}

}  // namespace kiln::autograd
