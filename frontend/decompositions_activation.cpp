// kiln/frontend/decompositions_activation.cpp — decompositions of elu, leaky_relu, hardtanh,
// hardswish, hardsigmoid, mish and softplus.
//
// Each follows PyTorch's CPU kernel (aten/src/ATen/native/cpu/Activation.cpp): f16/bf16 compute
// in f32 and round once; a NaN input gives NaN (every select tests `x > 0`-style conditions,
// false for NaN, and the other branch propagates it).
#include "frontend/decompositions_detail.h"
#include "frontend/ops.h"

namespace kiln::decomp {

namespace {

Tensor opmath(const Tensor& x) { return x.to(opmath_dtype(x.dtype())); }

}  // namespace

// elu(x) = scale * x for x > 0, else scale * alpha * (exp(input_scale * x) - 1).
Tensor elu(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const double alpha = a.attr<double>("alpha"), scale = a.attr<double>("scale");
  const double input_scale = a.attr<double>("input_scale");
  Tensor xc = opmath(x);
  return where(xc > 0, xc * scale, expm1(xc * input_scale) * (alpha * scale)).to(x.dtype());
}

// leaky_relu(x) = x for x > 0, else negative_slope * x.
Tensor leaky_relu(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = opmath(x);
  return where(xc > 0, xc, xc * a.attr<double>("negative_slope")).to(x.dtype());
}

// hardtanh(x) = clamp(x, min_val, max_val); integer inputs clamp to integer bounds.
Tensor hardtanh(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Scalar lo = a.attr<Scalar>("min_val"), hi = a.attr<Scalar>("max_val");
  if (!x.is_floating_point()) {
    lo = Scalar(lo.to<int64_t>());
    hi = Scalar(hi.to<int64_t>());
  }
  return clamp(x, lo, hi);
}

// hardsigmoid(x) = clamp(x + 3, 0, 6) / 6
Tensor hardsigmoid(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  return (clamp(opmath(x) + 3, 0, 6) / 6).to(x.dtype());
}

// hardswish(x) = x * clamp(x + 3, 0, 6) / 6
Tensor hardswish(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = opmath(x);
  return (xc * clamp(xc + 3, 0, 6) / 6).to(x.dtype());
}

// mish(x) = x * tanh(log(1 + exp(x)))
Tensor mish(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = opmath(x);
  return (xc * tanh(log1p(exp(xc)))).to(x.dtype());
}

// softplus(x) = x where beta * x > threshold, else log(1 + exp(beta * x)) / beta.
Tensor softplus(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const double beta = a.attr<double>("beta"), threshold = a.attr<double>("threshold");
  Tensor xc = opmath(x);
  Tensor bx = xc * beta;
  return where(bx > threshold, xc, log1p(exp(bx)) / beta).to(x.dtype());
}

}  // namespace kiln::decomp
