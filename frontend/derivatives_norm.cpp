// kiln/frontend/derivatives_norm.cpp — the Norm family's derivatives (frontend/derivatives.h).
//
// layer_norm has a rule of its own: with x^ = (x - mean) * rstd over the normalized dims and
// gx^ = g * weight,
//   dx      = rstd * (gx^ - mean(gx^) - x^ * mean(gx^ * x^))
//   dweight = sum of g * x^ over the outer dims,  dbias = sum of g over the outer dims.
// layer_norm's tape saves the input and the weight and recomputes the statistics (two
// reductions per row) rather than keeping them; native_layer_norm's keeps the statistics it
// returns, which are not differentiable (as in PyTorch). rms_norm and the group and batch norms are differentiated
// through their decompositions.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

// The gradients of layer_norm's input, weight and bias (those `a` needs) from its
// statistics over the last k dims: mean and rstd broadcast against the input.
std::vector<Tensor> layer_norm_backward(const GradArgs& a, size_t k, const Tensor& mean, const Tensor& rstd) {
  const ScalarType in_t = a.meta(0).dtype;
  const ScalarType t = (in_t == ScalarType::Half || in_t == ScalarType::BFloat16) ? ScalarType::Float : in_t;
  const Tensor x = a.in(0).to(t);
  const int64_t rank = x.dim();
  std::vector<int64_t> inner, outer;
  for (int64_t d = 0; d < rank; ++d) (d < rank - static_cast<int64_t>(k) ? outer : inner).push_back(d);
  const Tensor xhat = (x - mean.to(t)) * rstd.to(t);
  const Tensor g = a.grad(0).to(t);
  const bool has_weight = a.input_meta.size() > 1;
  std::vector<Tensor> out(a.input_meta.size());
  if (a.need(0)) {
    const Tensor gxhat = has_weight ? g * a.in(1).to(t) : g;
    out[0] = (rstd.to(t) * (gxhat - gxhat.mean(inner, true) - xhat * (gxhat * xhat).mean(inner, true))).to(in_t);
  }
  auto outer_sum = [&](const Tensor& v, size_t i) {
    return (outer.empty() ? v : sum(v, outer)).to(a.meta(i).dtype);
  };
  if (has_weight && a.need(1)) out[1] = outer_sum(g * xhat, 1);
  if (a.input_meta.size() > 2 && a.need(2)) out[2] = outer_sum(g, 2);
  return out;
}

// layer_norm keeps no statistics: they are recomputed from the saved input.
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
  return layer_norm_backward(a, k, mean, rstd);
}

// native_layer_norm returns its statistics (not differentiable, as in PyTorch) and the tape
// keeps them.
std::vector<Tensor> d_native_layer_norm(const GradArgs& a) {
  return layer_norm_backward(a, a.attr<std::vector<int64_t>>("normalized_shape").size(), a.out(1), a.out(2));
}

}  // namespace

void add_norm_derivatives(DerivativeTable& t) {
  t.rule(OpKind::layer_norm, d_layer_norm, bit(0) | bit(1));
  t.rule(OpKind::native_layer_norm, d_native_layer_norm, bit(0) | bit(1), bit(1) | bit(2)).outputs = bit(0);
}

}  // namespace kiln::autograd
