// kiln/frontend/derivatives_unary.cpp — the Unary family's derivatives (frontend/derivatives.h).
//
// g is the output's gradient, x the input, y the output; each formula is PyTorch's
// (tools/autograd/derivatives.yaml), in the input's dtype. Rounding, sign and frac have
// PyTorch's zero (or identity) gradients; predicates and integer ops have none.
#include "frontend/derivatives_detail.h"

#include <cmath>
#include <numbers>

namespace kiln::autograd {

namespace {

using ir::OpKind;
constexpr uint32_t X = bit(0);  // saved input 0
constexpr uint32_t Y = bit(0);  // saved output 0

const Tensor& x(const GradArgs& a) { return a.in(0); }
const Tensor& y(const GradArgs& a) { return a.out(0); }
Tensor g(const GradArgs& a) { return a.grad(0); }

// digamma (the derivative of lgamma) with kiln's ops: psi(x) = psi(x + 6) - sum_{k<6} 1 / (x + k),
// psi(x + 6) from its asymptotic series (error below 1e-11 from 6 on), and the reflection
// psi(x) = psi(1 - x) - pi / tan(pi x) below 1/2. Poles (0, -1, ...) give infinities, as in PyTorch.
Tensor digamma(const Tensor& x) {
  const Tensor low = lt(x, 0.5);
  const Tensor r = where(low, 1 - x, x);
  const Tensor w = r + 6;
  const Tensor w2 = reciprocal(w * w);
  // log w - 1/(2w) - sum B_2n / (2n w^2n), n = 1..5
  const Tensor series =
      w2 * (1.0 / 12 - w2 * (1.0 / 120 - w2 * (1.0 / 252 - w2 * (1.0 / 240 - w2 * (1.0 / 132)))));
  Tensor psi = log(w) - 0.5 / w - series;
  for (int k = 0; k < 6; ++k) psi = psi - reciprocal(r + k);
  return where(low, psi - std::numbers::pi / tan(x * std::numbers::pi), psi);
}

std::vector<Tensor> d_abs(const GradArgs& a) { return one(g(a) * sign(x(a))); }
std::vector<Tensor> d_lgamma(const GradArgs& a) { return one(g(a) * digamma(x(a))); }
std::vector<Tensor> d_neg(const GradArgs& a) { return one(-g(a)); }
std::vector<Tensor> d_exp(const GradArgs& a) { return one(g(a) * y(a)); }
std::vector<Tensor> d_exp2(const GradArgs& a) { return one(g(a) * y(a) * std::numbers::ln2); }
std::vector<Tensor> d_expm1(const GradArgs& a) { return one(g(a) * (y(a) + 1)); }
std::vector<Tensor> d_log(const GradArgs& a) { return one(g(a) / x(a)); }
std::vector<Tensor> d_log2(const GradArgs& a) { return one(g(a) / (x(a) * std::numbers::ln2)); }
std::vector<Tensor> d_log10(const GradArgs& a) { return one(g(a) / (x(a) * std::numbers::ln10)); }
std::vector<Tensor> d_log1p(const GradArgs& a) { return one(g(a) / (x(a) + 1)); }
std::vector<Tensor> d_sqrt(const GradArgs& a) { return one(g(a) / (y(a) * 2)); }
std::vector<Tensor> d_rsqrt(const GradArgs& a) { return one(g(a) * (y(a) * y(a) * y(a)) * -0.5); }
std::vector<Tensor> d_reciprocal(const GradArgs& a) { return one(-g(a) * y(a) * y(a)); }
std::vector<Tensor> d_sin(const GradArgs& a) { return one(g(a) * cos(x(a))); }
std::vector<Tensor> d_cos(const GradArgs& a) { return one(-g(a) * sin(x(a))); }
std::vector<Tensor> d_tan(const GradArgs& a) { return one(g(a) * (y(a) * y(a) + 1)); }
std::vector<Tensor> d_asin(const GradArgs& a) { return one(g(a) * rsqrt(-(x(a) * x(a)) + 1)); }
std::vector<Tensor> d_acos(const GradArgs& a) { return one(-g(a) * rsqrt(-(x(a) * x(a)) + 1)); }
std::vector<Tensor> d_atan(const GradArgs& a) { return one(g(a) / (x(a) * x(a) + 1)); }
std::vector<Tensor> d_sinh(const GradArgs& a) { return one(g(a) * cosh(x(a))); }
std::vector<Tensor> d_cosh(const GradArgs& a) { return one(g(a) * sinh(x(a))); }
std::vector<Tensor> d_tanh(const GradArgs& a) { return one(g(a) * (-(y(a) * y(a)) + 1)); }
std::vector<Tensor> d_asinh(const GradArgs& a) { return one(g(a) * rsqrt(x(a) * x(a) + 1)); }
std::vector<Tensor> d_acosh(const GradArgs& a) { return one(g(a) * rsqrt(x(a) * x(a) - 1)); }
std::vector<Tensor> d_atanh(const GradArgs& a) { return one(g(a) / (-(x(a) * x(a)) + 1)); }
// d/dx erf(x) = 2/sqrt(pi) exp(-x^2)
std::vector<Tensor> d_erf(const GradArgs& a) {
  return one(g(a) * exp(-(x(a) * x(a))) * (2 * std::numbers::inv_sqrtpi));
}
std::vector<Tensor> d_erfc(const GradArgs& a) {
  return one(g(a) * exp(-(x(a) * x(a))) * (-2 * std::numbers::inv_sqrtpi));
}
// d/dx erfinv(x) = sqrt(pi)/2 exp(erfinv(x)^2)
std::vector<Tensor> d_erfinv(const GradArgs& a) {
  return one(g(a) * exp(y(a) * y(a)) * (0.5 / std::numbers::inv_sqrtpi));
}
std::vector<Tensor> d_sigmoid(const GradArgs& a) { return one(g(a) * y(a) * (-y(a) + 1)); }
// Piecewise constant: zero gradient, as PyTorch gives.
std::vector<Tensor> d_zero(const GradArgs& a) { return one(a.meta(0).zeros()); }
std::vector<Tensor> d_frac(const GradArgs& a) { return one(g(a)); }

}  // namespace

void add_unary_derivatives(DerivativeTable& t) {
  t.rule(OpKind::abs, d_abs, X);
  t.rule(OpKind::neg, d_neg);
  t.rule(OpKind::exp, d_exp, kNone, Y);
  t.rule(OpKind::exp2, d_exp2, kNone, Y);
  t.rule(OpKind::expm1, d_expm1, kNone, Y);
  t.rule(OpKind::log, d_log, X);
  t.rule(OpKind::log2, d_log2, X);
  t.rule(OpKind::log10, d_log10, X);
  t.rule(OpKind::log1p, d_log1p, X);
  t.rule(OpKind::sqrt, d_sqrt, kNone, Y);
  t.rule(OpKind::rsqrt, d_rsqrt, kNone, Y);
  t.rule(OpKind::reciprocal, d_reciprocal, kNone, Y);
  t.rule(OpKind::sin, d_sin, X);
  t.rule(OpKind::cos, d_cos, X);
  t.rule(OpKind::tan, d_tan, kNone, Y);
  t.rule(OpKind::asin, d_asin, X);
  t.rule(OpKind::acos, d_acos, X);
  t.rule(OpKind::atan, d_atan, X);
  t.rule(OpKind::sinh, d_sinh, X);
  t.rule(OpKind::cosh, d_cosh, X);
  t.rule(OpKind::tanh, d_tanh, kNone, Y);
  t.rule(OpKind::asinh, d_asinh, X);
  t.rule(OpKind::acosh, d_acosh, X);
  t.rule(OpKind::atanh, d_atanh, X);
  t.rule(OpKind::erf, d_erf, X);
  t.rule(OpKind::erfc, d_erfc, X);
  t.rule(OpKind::erfinv, d_erfinv, kNone, Y);
  t.rule(OpKind::lgamma, d_lgamma, X);
  t.rule(OpKind::sigmoid, d_sigmoid, kNone, Y);
  for (OpKind op : {OpKind::floor, OpKind::ceil, OpKind::round, OpKind::trunc, OpKind::sign}) t.rule(op, d_zero);
  t.rule(OpKind::frac, d_frac);
  for (OpKind op : {OpKind::signbit, OpKind::isnan, OpKind::isinf, OpKind::isfinite, OpKind::logical_not})
    t.none(op, "its result is bool");
  t.none(OpKind::bitwise_not, "it takes integers");
}

}  // namespace kiln::autograd
