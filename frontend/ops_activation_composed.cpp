// kiln/frontend/ops_activation_composed.cpp — the activations written with the ops they are
// made of (frontend/ops_activation.h): softsign, tanhshrink, hardshrink, softshrink, threshold,
// glu, prelu, rrelu.
//
// None is a node of its own: each checks what PyTorch checks, with its wording and in its order,
// then records (or runs) its parts, which trace, fuse, compile and differentiate through their
// own rules. The selections are written so that their gradients are ATen's too: hardshrink and
// softshrink pass the gradient wherever x is outside [-lambd, lambd], NaN included; threshold
// passes it where x > threshold; prelu's weight receives x * grad where x <= 0, summed over
// everything but the channel.
#include "frontend/ops_activation.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/decompositions_detail.h"
#include "base/half.h"
#include "base/scalar.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"

#include <fmt/format.h>

#include <cmath>
#include <vector>

namespace kiln {

namespace {

// f(x) with f16 and bf16 computed in f32 (opmath_dtype) and rounded once, as ATen's CPU kernels
// compute them.
template <typename F> Tensor in_f32(const Tensor& self, F f) {
  const ScalarType compute = decomp::opmath_dtype(self.dtype());
  return compute == self.dtype() ? f(self) : f(self.to(compute)).to(self.dtype());
}

// `v` as an element of `dtype` holds it (lambd.to<scalar_t>() in ATen): f16 and bf16 round it.
double as_element(double v, ScalarType dtype) {
  if (dtype == ScalarType::Half) return static_cast<float>(Half(static_cast<float>(v)));
  if (dtype == ScalarType::BFloat16) return static_cast<float>(BFloat16(static_cast<float>(v)));
  if (dtype == ScalarType::Float) return static_cast<float>(v);
  return v;
}

// Where x lies in [-lambd, lambd] (false for NaN).
Tensor inside(const Tensor& x, const Scalar& lambd) {
  return logical_and(ge(x, -lambd.to_double()), le(x, lambd.to_double()));
}

}  // namespace

Tensor softsign(const Tensor& self) { return div(self, add(abs(self), 1)); }

Tensor tanhshrink(const Tensor& self) { return sub(self, tanh(self)); }

Tensor hardshrink(const Tensor& self, const Scalar& lambd) {
  check_floating_kernel("hardshrink", "hardshrink_cpu", self.dtype());
  check_scalar_fits("hardshrink", lambd, self.dtype());
  return where(inside(self, as_element(lambd.to_double(), self.dtype())), 0, self);
}

Tensor softshrink(const Tensor& self, const Scalar& lambd) {
  check_floating_kernel("softshrink", "softshrink_check", self.dtype());
  const double l = lambd.to_double(), max = finfo_max(self.dtype());
  if (!(l >= 0 && l <= max))
    fail("softshrink", "lambda must be in range [0, {:g}] for input dtype {}, but found {:g}", max,
         c10_type_name(self.dtype()), l);
  // lambd as the dtype holds it (f16 and bf16 round it; the comparison and the shift are then
  // computed in f32, as ATen's kernel). Outside: x shifted toward zero by lambd (NaN stays NaN,
  // with the gradient passing: sign's gradient is zero); inside: x * 0, a zero of x's sign (as
  // ATen's scalar loop; its vectorized loop gives +0).
  const double e = as_element(l, self.dtype());
  return in_f32(self, [&](const Tensor& x) { return where(inside(x, e), mul(x, 0), sub(x, mul(sign(x), e))); });
}

Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  if (self.dtype() == ScalarType::Bool) fail("threshold", "\"threshold_cpu\" not implemented for 'Bool'");
  // The threshold is converted to the dtype ATen's CPU kernel compares in (f32 for f16 and bf16,
  // whose elements it widens; the input's own dtype otherwise: for integers, 1.5 is 1), the value
  // to the input's dtype.
  const ScalarType compare = decomp::opmath_dtype(self.dtype());
  check_scalar_fits("threshold", threshold, compare);
  check_scalar_fits("threshold", value, self.dtype());
  const Tensor t = scalar_tensor(threshold, self.options().dtype(compare)), v = scalar_tensor(value, self.options());
  return where(le(compare == self.dtype() ? self : self.to(compare), t), v, self);
}

Tensor glu(const Tensor& self, int64_t dim) {
  if (self.dim() == 0) fail("glu", "glu does not support scalars because halving size must be even");
  const int64_t d = normalize_dim("glu", dim, self.dim());
  const int64_t n = self.size(d);
  if (n % 2 != 0) fail("glu", "Halving dimension must be even, but dimension {} is size {}", d, n);
  check_floating_kernel("glu", "glu_cpu", self.dtype());
  return in_f32(self, [&](const Tensor& x) { return mul(narrow(x, d, 0, n / 2), sigmoid(narrow(x, d, n / 2, n / 2))); });
}

Tensor prelu(const Tensor& self, const Tensor& weight) {
  if (self.dtype() != weight.dtype())
    fail("prelu", "prelu: Type promoting not supported. Got {} and {}", c10_type_name(self.dtype()),
         c10_type_name(weight.dtype()));
  if (weight.numel() != 1) {
    if (self.dim() == 0) fail("prelu", "Not allow zero-dim input tensor.");
    // The channel count is read (pinning a symbolic size) only when there is a slope per channel.
    const int64_t channels = self.dim() > 1 ? self.size(1) : 1;
    if (channels != weight.numel())
      fail("prelu", "Mismatch of parameter numbers and input channel size. Found parameter numbers = {} and channel size = {}.",
           weight.numel(), channels);
  }
  if (weight.dim() > 1)
    fail("prelu", "prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {}", weight.dim());
  check_floating_kernel("prelu", "prelu_cpu", self.dtype());
  // The weight along dim 1 (or broadcast whole), with self's rank.
  Tensor w = weight;
  if (self.dim() != weight.dim()) {
    std::vector<int64_t> shape(static_cast<size_t>(self.dim()), 1);
    if (self.dim() > 1) shape[1] = weight.numel();
    w = weight.reshape(shape);
  }
  return where(gt(self, 0), self, mul(w, self));
}

Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training) {
  const double lo = lower.to_double(), hi = upper.to_double();
  if (!std::isfinite(lo)) fail("rrelu", "rrelu: lower bound must be finite, got {}", lo);
  if (!std::isfinite(hi)) fail("rrelu", "rrelu: upper bound must be finite, got {}", hi);
  if (!(lo <= hi)) fail("rrelu", "Lower bound should be less than or equal to the upper bound");
  if (!training) return leaky_relu(self, (lo + hi) / 2);
  check_floating_kernel("rrelu", "rrelu_with_noise_out_cpu", self.dtype());
  // One slope per element, used where x <= 0 (so the gradient at 0 is the slope, as ATen's
  // noise is there). kiln draws one for every element (ATen's CPU kernel only for x <= 0): a
  // seed gives kiln's Philox slopes, never PyTorch's.
  const Tensor slope = add(mul(rand_like(self), hi - lo), lo);
  return where(le(self, 0), mul(self, slope), self);
}

}  // namespace kiln
