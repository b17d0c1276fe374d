// kiln/frontend/derivatives_norm.cpp — the Norm family's derivatives (frontend/derivatives.h).
//
// The rules record Core ATen's backward nodes (frontend/ops_norm.h), so that a backend at the
// core level sees a training step's norm gradients whole:
//   - layer_norm keeps no statistics: its tape saves the input and the weight, and the rule
//     recomputes mean and rstd (two reductions per row) for native_layer_norm_backward.
//     Because the recomputation is written with kiln ops, a second derivative also sees how
//     the statistics depend on the input;
//   - native_layer_norm keeps the statistics it returns, which are not differentiable, as in
//     PyTorch;
//   - native_group_norm keeps its statistics too, but they are differentiable, as in PyTorch:
//     gradients reaching mean or rstd add d mean / dx = 1 / M and d rstd / dx =
//     -rstd^3 (x - mean) / M over each group's M elements.
// The backward nodes' own rules (second derivatives) follow PyTorch's: mean and rstd are not
// differentiable inputs, and the input's gradient is that of the backward formula as a
// function of the input, statistics included. So the rule pulls back through the
// decomposition with the statistics held fixed, then folds their cotangents into the input's
// with the two derivatives above (which need no eps: d rstd / d var = -rstd^3 / 2).
// rms_norm and batch norm are differentiated through their decompositions.
#include "frontend/decompositions.h"
#include "frontend/derivatives_detail.h"
#include "frontend/function_transforms.h"
#include "frontend/ops_norm.h"
#include "frontend/symbolic.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

// native_layer_norm_backward for the gradients `a` needs, from the statistics over the last k
// dims (shaped to broadcast against the input).
std::vector<Tensor> layer_norm_grads(const GradArgs& a, const Tensor& mean, const Tensor& rstd) {
  const std::vector<int64_t>& shape = a.attr<std::vector<int64_t>>("normalized_shape");
  const size_t n = a.input_meta.size();
  const std::optional<Tensor> weight = n > 1 ? std::optional<Tensor>(a.in(1)) : std::nullopt;
  auto [gx, gw, gb] = native_layer_norm_backward(a.grad(0), a.in(0), shape, mean, rstd, weight,
                                                 {a.need(0), n > 1 && a.need(1), n > 2 && a.need(2)});
  std::vector<Tensor> out(n);
  out[0] = gx;
  if (n > 1 && gw.defined()) out[1] = gw.to(a.meta(1).dtype);
  if (n > 2 && gb.defined()) out[2] = gb.to(a.meta(2).dtype);
  return out;
}

std::vector<Tensor> d_layer_norm(const GradArgs& a) {
  const size_t k = a.attr<std::vector<int64_t>>("normalized_shape").size();
  const ScalarType in_t = a.meta(0).dtype;
  const ScalarType t = (in_t == ScalarType::Half || in_t == ScalarType::BFloat16) ? ScalarType::Float : in_t;
  const Tensor x = a.in(0).to(t);
  std::vector<int64_t> inner;
  for (int64_t d = x.dim() - static_cast<int64_t>(k); d < x.dim(); ++d) inner.push_back(d);
  const Tensor mean = x.mean(inner, /*keepdim=*/true);
  const Tensor xc = x - mean;
  const Tensor rstd = rsqrt((xc * xc).mean(inner, /*keepdim=*/true) + a.attr<double>("eps"));
  return layer_norm_grads(a, mean, rstd);  // in the compute dtype, as the decomposition reads them
}

std::vector<Tensor> d_native_layer_norm(const GradArgs& a) { return layer_norm_grads(a, a.out(1), a.out(2)); }

// d mean / dx and d rstd / dx applied to the cotangents gmean and grstd of a norm's statistics:
// x [.., M] seen so that mean, rstd and their cotangents [.., 1] broadcast over the M elements.
Tensor statistics_grad(const Tensor& x, const Tensor& mean, const Tensor& rstd, const Tensor& gmean, const Tensor& grstd,
                       double M) {
  return (gmean - grstd * rstd * rstd * rstd * (x - mean)) / M;
}

std::vector<Tensor> d_native_group_norm(const GradArgs& a) {
  const size_t n = a.input_meta.size();
  const int64_t N = a.attr<int64_t>("N"), C = a.attr<int64_t>("C"), HxW = a.attr<int64_t>("HxW");
  const int64_t group = a.attr<int64_t>("group");
  std::vector<Tensor> out(n);
  if (a.has_grad(0)) {
    const std::optional<Tensor> weight = n > 1 ? std::optional<Tensor>(a.in(1)) : std::nullopt;
    auto [gx, gw, gb] = native_group_norm_backward(a.grad(0), a.in(0), a.out(1), a.out(2), weight, N, C, HxW, group,
                                                   {a.need(0), n > 1 && a.need(1), n > 2 && a.need(2)});
    out[0] = gx;
    if (n > 1 && gw.defined()) out[1] = gw.to(a.meta(1).dtype);
    if (n > 2 && gb.defined()) out[2] = gb.to(a.meta(2).dtype);
  }
  if (a.need(0) && (a.has_grad(1) || a.has_grad(2))) {
    const ScalarType in_t = a.meta(0).dtype;
    const ScalarType t = (in_t == ScalarType::Half || in_t == ScalarType::BFloat16) ? ScalarType::Float : in_t;
    const std::vector<ir::Expr> grouped{ir::Expr(N), ir::Expr(group), ir::Expr(C / group * HxW)};
    const std::vector<ir::Expr> stat{ir::Expr(N), ir::Expr(group), ir::Expr(1)};
    const double M = static_cast<double>(C / group * HxW);
    const Tensor x = sym_reshape(a.in(0).to(t), grouped);
    const Tensor mean = sym_reshape(a.out(1).to(t), stat), rstd = sym_reshape(a.out(2).to(t), stat);
    const Tensor gx = sym_reshape(statistics_grad(x, mean, rstd, sym_reshape(a.grad(1).to(t), stat),
                                                  sym_reshape(a.grad(2).to(t), stat), M),
                                  a.meta(0).sizes)
                          .to(in_t);
    out[0] = out[0].defined() ? out[0] + gx : gx;
  }
  return out;
}

// The rule of native_layer_norm_backward and native_group_norm_backward (inputs grad_out,
// input, mean, rstd, weight?): `grouped` views a tensor of the input's shape as [.., M] and
// `stat` the statistics as [.., 1].
template <typename Grouped, typename Stat>
std::vector<Tensor> norm_backward_rule(const GradArgs& a, Grouped grouped, Stat stat, double M) {
  std::vector<Tensor> cot(a.output_meta.size());
  for (size_t j = 0; j < cot.size(); ++j)
    if (a.has_grad(j)) cot[j] = a.grads[j];
  const ir::OpKind op = a.op;
  const ir::AttrList attrs = a.attrs;
  std::vector<Tensor> g =
      vjp([&](const std::vector<Tensor>& in) { return run_decomposition(op, in, attrs); }, a.inputs).pullback(cot);
  g.resize(a.inputs.size());
  if (a.need(1)) {
    const ScalarType in_t = a.meta(1).dtype;
    const ScalarType t = (in_t == ScalarType::Half || in_t == ScalarType::BFloat16) ? ScalarType::Float : in_t;
    const Tensor fold = statistics_grad(grouped(a.in(1).to(t)), stat(a.in(2).to(t)), stat(a.in(3).to(t)),
                                        stat(g[2].to(t)), stat(g[3].to(t)), M);
    g[1] = g[1] + sym_reshape(fold, a.meta(1).sizes).to(in_t);
  }
  g[2] = g[3] = Tensor();  // not differentiable, as in PyTorch
  return g;
}

std::vector<Tensor> d_native_layer_norm_backward(const GradArgs& a) {
  const std::vector<ir::Expr>& sizes = a.meta(1).sizes;
  const size_t k = a.attr<std::vector<int64_t>>("normalized_shape").size();
  std::vector<ir::Expr> rows(sizes.begin(), sizes.end() - static_cast<std::ptrdiff_t>(k));
  const ir::Expr M = sym_product({sizes.end() - static_cast<std::ptrdiff_t>(k), sizes.end()});
  std::vector<ir::Expr> grouped = rows, stat = rows;
  grouped.push_back(M);
  stat.push_back(ir::Expr(1));
  const std::optional<int64_t> m = M.maybe_const();
  if (!m) fail("native_layer_norm_backward", "a second derivative needs static normalized sizes, got {}", ir::str(sizes));
  return norm_backward_rule(
      a, [&](const Tensor& t) { return sym_reshape(t, grouped); }, [&](const Tensor& t) { return sym_reshape(t, stat); },
      static_cast<double>(*m));
}

std::vector<Tensor> d_native_group_norm_backward(const GradArgs& a) {
  const int64_t N = a.attr<int64_t>("N"), C = a.attr<int64_t>("C"), HxW = a.attr<int64_t>("HxW");
  const int64_t group = a.attr<int64_t>("group");
  const int64_t M = C / group * HxW;
  return norm_backward_rule(
      a, [&](const Tensor& t) { return sym_reshape(t, {ir::Expr(N), ir::Expr(group), ir::Expr(M)}); },
      [&](const Tensor& t) { return sym_reshape(t, {ir::Expr(N), ir::Expr(group), ir::Expr(1)}); },
      static_cast<double>(M));
}

}  // namespace

void add_norm_derivatives(DerivativeTable& t) {
  t.rule(OpKind::layer_norm, d_layer_norm, bit(0) | bit(1));
  t.rule(OpKind::native_layer_norm, d_native_layer_norm, bit(0) | bit(1), bit(1) | bit(2)).outputs = bit(0);
  t.rule(OpKind::native_group_norm, d_native_group_norm, bit(0) | bit(1), bit(1) | bit(2));
  t.rule(OpKind::native_layer_norm_backward, d_native_layer_norm_backward, kAll);
  t.rule(OpKind::native_group_norm_backward, d_native_group_norm_backward, kAll);
}

}  // namespace kiln::autograd
