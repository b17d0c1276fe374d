// kiln/frontend/ops_pointwise_math.cpp — libtorch's pointwise functions that record other
// pointwise ops (frontend/ops.h): logaddexp, logaddexp2, xlogy, logit, sinc, deg2rad, rad2deg,
// heaviside, float_power, isclose and ldexp.
//
// Dtypes follow PyTorch 2.15 (measured): logaddexp refuses integers; xlogy, logit, sinc,
// deg2rad and rad2deg give integer and bool inputs the default float dtype; float_power computes
// in f64; heaviside keeps its operands' common dtype, which must be theirs. f16 and bf16 compute
// in f32 and round once, as PyTorch's CPU kernels do. Where a branch is discarded at a point its
// formula cannot take (sinc at 0, xlogy's log 0), that point's operand is replaced first, so
// that the gradient through the discarded branch is 0 and not NaN (the `where` gradient rule).
#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/promotion.h"

#include <cmath>
#include <numbers>
#include <string>

namespace kiln {

namespace {

// dt when it is floating, else the default float dtype (integer and bool inputs).
ScalarType float_result(ScalarType dt) { return is_floating_point(dt) ? dt : get_default_dtype(); }

// log(exp(a) + exp(b)) (base e) or log2(2^a + 2^b), at the larger operand plus log1p of the
// smaller term; equal infinities give themselves (inf - inf would be NaN).
Tensor log_add_exp(std::string_view op, const Tensor& self, const Tensor& other, bool base2) {
  const ScalarType dt = result_type(self, other);
  if (!is_floating_point(dt)) fail(op, "\"{}_cpu\" not implemented for '{}'", op, c10_type_name(dt));
  const Tensor a = self.to(decomp::opmath_dtype(dt)), b = other.to(decomp::opmath_dtype(dt));
  const Tensor m = maximum(a, b), d = abs(sub(a, b));
  const Tensor tail = base2 ? div(log1p(exp2(neg(d))), std::numbers::ln2) : log1p(exp(neg(d)));
  const Tensor same_inf = logical_and(isinf(a), eq(a, b));
  return where(same_inf, a, add(m, tail)).to(dt);
}

}  // namespace

Tensor logaddexp(const Tensor& self, const Tensor& other) { return log_add_exp("logaddexp", self, other, false); }
Tensor logaddexp2(const Tensor& self, const Tensor& other) { return log_add_exp("logaddexp2", self, other, true); }

// x * log(y), 0 where x is 0, NaN where y is NaN (as at::xlogy). The gradient is PyTorch's:
// log(y) for x, also where x is 0, except where y <= 0 as well (0 there); x / y for y, which is 0
// where x is 0 and y <= 0 (torch's is 0 / 0 at y = 0).
Tensor xlogy(const Tensor& self, const Tensor& other) {
  const ScalarType dt = float_result(result_type(self, other));
  const Tensor x = self.to(decomp::opmath_dtype(dt)), y = other.to(decomp::opmath_dtype(dt));
  const Tensor dropped = logical_and(eq(x, 0), le(y, 0));
  const Tensor product = where(dropped, 0.0, mul(x, log(where(dropped, 1.0, y))));
  return where(isnan(y), NAN, product).to(dt);
}
// A number operand takes the result's floating dtype (an integer tensor's 1000 or -1 is not
// converted to the tensor's dtype first).
Tensor xlogy(const Scalar& self, const Tensor& other) {
  const ScalarType dt = float_result(result_type(self, other));
  return xlogy(scalar_tensor(self, TensorOptions(dt).device(other.device())), other);
}
Tensor xlogy(const Tensor& self, const Scalar& other) {
  const ScalarType dt = float_result(result_type(self, other));
  return xlogy(self, scalar_tensor(other, TensorOptions(dt).device(self.device())));
}

// log(x / (1 - x)), x clamped to [eps, 1 - eps] first when eps is given.
Tensor logit(const Tensor& self, std::optional<double> eps) {
  const ScalarType dt = float_result(self.dtype());
  Tensor x = self.to(decomp::opmath_dtype(dt));
  if (eps) {  // as ATen: below lo gives lo, else above hi gives hi (lo wins when eps > 0.5)
    const double lo = *eps, hi = 1.0 - *eps;
    x = where(lt(x, lo), lo, where(gt(x, hi), hi, x));
  }
  return log(div(x, rsub(x, 1))).to(dt);
}

// sin(pi x) / (pi x), 1 at 0.
Tensor sinc(const Tensor& self) {
  const ScalarType dt = float_result(self.dtype());
  const Tensor x = self.to(decomp::opmath_dtype(dt));
  const Tensor zero = eq(x, 0);
  const Tensor px = mul(where(zero, 1.0, x), std::numbers::pi);
  return where(zero, 1.0, div(sin(px), px)).to(dt);
}

Tensor deg2rad(const Tensor& self) {
  const ScalarType dt = float_result(self.dtype());
  return mul(self.to(dt), std::numbers::pi / 180.0);
}

Tensor rad2deg(const Tensor& self) {
  const ScalarType dt = float_result(self.dtype());
  return mul(self.to(dt), 180.0 / std::numbers::pi);
}

// values where self is 0, else 1 where self > 0 and 0 where not (NaN included), as at::heaviside.
Tensor heaviside(const Tensor& self, const Tensor& values) {
  if (self.dtype() != values.dtype())
    fail("heaviside", "heaviside is not yet implemented for tensors with different dtypes.");
  return where(eq(self, 0), values, gt(self, 0).to(self.dtype()));
}

// pow in f64, whatever the operands' dtypes.
Tensor float_power(const Tensor& self, const Tensor& exponent) {
  return pow(self.to(ScalarType::Double), exponent.to(ScalarType::Double));
}
Tensor float_power(const Tensor& self, const Scalar& exponent) {
  return pow(self.to(ScalarType::Double), Scalar(exponent.to_double()));
}
Tensor float_power(const Scalar& self, const Tensor& exponent) {
  return pow(Scalar(self.to_double()), exponent.to(ScalarType::Double));
}

// |self - other| <= atol + |rtol * other| elementwise, or equal (torch.isclose, step by step:
// the error in self's dtype, integers and bool in the default float dtype); a NaN or infinite error is not
// close; NaN is close to NaN only with equal_nan; zero tolerances compare for equality.
Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  if (self.dtype() != other.dtype())
    fail("isclose", "{} did not match {}", c10_type_name(self.dtype()), c10_type_name(other.dtype()));
  if (!(rtol >= 0)) fail("isclose", "rtol must be greater than or equal to zero, but got {}", rtol);
  if (!(atol >= 0)) fail("isclose", "atol must be greater than or equal to zero, but got {}", atol);
  Tensor close = eq(self, other);
  if (equal_nan && is_floating_point(self.dtype())) close = logical_or(close, logical_and(isnan(self), isnan(other)));
  if (rtol == 0 && atol == 0) return close;
  const ScalarType dt = is_floating_point(self.dtype()) ? self.dtype() : get_default_dtype();
  const Tensor a = self.to(dt), b = other.to(dt);
  const Tensor allowed = add(abs(mul(b, rtol)), atol), actual = abs(sub(a, b));
  return logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
}

// self * 2^other. A floating self with an integer exponent scales exactly, as std::ldexp (and
// ATen's kernel) does: f16, bf16 and f32 in f64 (2^e for |e| <= 1000 is exact there, and past
// that the result is 0 or inf in the narrower dtype anyway), f64 by three powers of 2 of the
// same sign (each finite, so only the last product rounds unless the result is subnormal).
// Otherwise ATen's decomposition: a 0-dim 2 in self's floating dtype (the default float dtype
// for integers and bool) raised to other, times self.
Tensor ldexp(const Tensor& self, const Tensor& other) {
  if (other.dtype() == ScalarType::Bool) fail("ldexp", "\"ldexp_cpu_exp\" not implemented for 'Bool'");
  const TensorOptions f64 = TensorOptions(ScalarType::Double).device(self.device());
  if (is_floating_point(self.dtype()) && is_integral(other.dtype(), /*include_bool=*/false)) {
    const ScalarType dt = promote_types(self.dtype(), other.dtype());
    const Tensor two = full({}, 2.0, f64);
    if (self.dtype() != ScalarType::Double)
      return mul(self.to(ScalarType::Double), pow(two, clamp(other, Scalar(-1000), Scalar(1000)).to(ScalarType::Double))).to(dt);
    const Tensor e = clamp(other, Scalar(-2200), Scalar(2200)).to(ScalarType::Int64);
    const Tensor third = div(e, Scalar(3), "trunc"), rest = sub(e, mul(third, Scalar(2)));
    const Tensor step = pow(two, third.to(ScalarType::Double));
    return mul(mul(mul(self, step), step), pow(two, rest.to(ScalarType::Double)));
  }
  const ScalarType two_dtype = is_floating_point(self.dtype()) ? self.dtype() : get_default_dtype();
  return mul(self, pow(full({}, 2.0, TensorOptions(two_dtype).device(self.device())), other));
}

}  // namespace kiln
