// kiln/frontend/decompositions_activation.cpp — the Activation family's decompositions: gelu,
// silu, relu, elu, leaky_relu, hardtanh, hardswish, hardsigmoid, mish and softplus.
//
// Each follows PyTorch's CPU kernel (aten/src/ATen/native/cpu/Activation.cpp): f16/bf16 compute
// in f32 and round once; a NaN input gives NaN (every select tests `x > 0`-style conditions,
// false for NaN, and the other branch propagates it).
#include "frontend/decompositions_detail.h"
#include "frontend/ops.h"

#include <numbers>
#include <string>

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

// gelu(x) = x/2 (1 + erf(x / sqrt 2)), or with "tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// computed as x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) since 1 + tanh(u) = 2 sigmoid(2u): one exp
// and one division instead of tanh, and no cancellation in 1 + tanh(u) for large negative x.
Tensor gelu(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  Tensor y;
  if (a.attr<std::string>("approximate") == "tanh") {
    const double beta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
    const double kappa = 0.044715;
    Tensor inner = (xc + (xc * xc * xc) * kappa) * beta;
    y = xc * sigmoid(inner * 2);
  } else {
    y = xc * 0.5 * (erf(xc * (1 / std::numbers::sqrt2)) + 1);
  }
  return y.to(x.dtype());
}

// silu(x) = x * sigmoid(x)
Tensor silu(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  return (xc * sigmoid(xc)).to(x.dtype());
}

// relu(x) = max(x, 0), NaN propagating (clamp).
Tensor relu(const DecompArgs& a) { return clamp_min(a.in(0), 0); }

}  // namespace kiln::decomp
