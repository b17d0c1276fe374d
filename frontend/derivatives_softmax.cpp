// kiln/frontend/derivatives_softmax.cpp — the Softmax family's derivatives (frontend/derivatives.h),
// each written from its output instead of through the decomposition (which would save the
// shifted exponentials and differentiate the max):
//   softmax      dx = y * (g - sum(g * y))          (saves y)
//   log_softmax  dx = g - exp(y) * sum(g)           (saves y)
//   logsumexp    dx = g * exp(x - y), 0 where x = -inf (a row of -inf has no slope)
// f16/bf16 compute in f32, as the forward does. softmax and log_softmax with a `dtype` run on
// the input cast to it (PyTorch: _softmax(x.to(dtype))), so their gradient is rounded to that
// dtype before it is cast to the input's (a bf16 softmax of an f64 input has a bf16 gradient).
#include "frontend/derivatives_detail.h"

#include <limits>

namespace kiln::autograd {

namespace {

using ir::OpKind;

ScalarType opmath(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

std::vector<Tensor> d_softmax(const GradArgs& a) {
  const int64_t dim = a.attr<int64_t>("dim");
  const ScalarType t = opmath(a.out(0).dtype());
  const Tensor y = a.out(0).to(t), g = a.grad().to(t);
  const Tensor gy = g * y;
  return one((gy - y * sum(gy, {dim}, /*keepdim=*/true)).to(a.out(0).dtype()).to(a.meta(0).dtype));
}

std::vector<Tensor> d_log_softmax(const GradArgs& a) {
  const int64_t dim = a.attr<int64_t>("dim");
  const ScalarType t = opmath(a.out(0).dtype());
  const Tensor y = a.out(0).to(t), g = a.grad().to(t);
  return one((g - exp(y) * sum(g, {dim}, /*keepdim=*/true)).to(a.out(0).dtype()).to(a.meta(0).dtype));
}

std::vector<Tensor> d_logsumexp(const GradArgs& a) {
  const std::vector<int64_t>& dims = a.attr<std::vector<int64_t>>("dims");
  const bool keepdim = a.attr<bool>("keepdim");
  const ScalarType t = opmath(a.in(0).dtype());
  const Tensor x = a.in(0).to(t);
  const Tensor y = expand_reduced(a.out(0).to(t), a.meta(0), dims, keepdim);
  const Tensor g = expand_reduced(a.grad().to(t), a.meta(0), dims, keepdim);
  const Tensor slope = where(eq(x, -std::numeric_limits<double>::infinity()), 0.0, exp(x - y));
  return one((g * slope).to(a.meta(0).dtype));
}

}  // namespace

void add_softmax_derivatives(DerivativeTable& t) {
  t.rule(OpKind::softmax, d_softmax, kNone, bit(0));
  t.rule(OpKind::log_softmax, d_log_softmax, kNone, bit(0));
  t.rule(OpKind::logsumexp, d_logsumexp, bit(0), bit(0));
}

}  // namespace kiln::autograd
