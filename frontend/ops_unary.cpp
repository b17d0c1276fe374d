// kiln/frontend/ops_unary.cpp — the Unary family's frontend: abs, neg, the float math (exp,
// log, sin, ..., sigmoid), rounding, sign and the predicates, bitwise_not, logical_not, and
// the unary operators (-, ~, !).
//
// Float-only math computes integral and bool inputs in the default float dtype; rounding is
// the identity (a copy) on integers and an error on bool, as PyTorch's kernels.
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/operands.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"

#include <cmath>

namespace kiln {

using ir::OpKind;

namespace {

// Float-only unary math: integral and bool inputs compute in the default float dtype.
Tensor unary_float(OpKind kind, const Tensor& self) {
  ScalarType dt = is_integral(self.dtype(), true) ? get_default_dtype() : self.dtype();
  return dispatch1(kind, {self.to(dt)});
}

// floor/ceil/round/trunc: the identity (a copy) on integers, an error on bool.
Tensor rounding(OpKind kind, std::string_view op, const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) fail(op, "{} is not supported for bool tensors", op);
  if (is_integral(self.dtype(), false)) return clone(self);
  return dispatch1(kind, {self});
}

}  // namespace

// ---- unary ----

Tensor abs(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) fail("abs", "abs is not supported for bool tensors");  // as torch's abs_cpu
  return dispatch1(OpKind::abs, {self});
}

Tensor neg(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) {
    fail("neg", "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, "
                "use the `~` or `logical_not()` operator instead.");
  }
  return dispatch1(OpKind::neg, {self});
}
Tensor negative(const Tensor& self) { return neg(self); }

#define KILN_FLOAT_UNARY(name) \
  Tensor name(const Tensor& self) { return unary_float(OpKind::name, self); }
KILN_FLOAT_UNARY(exp) KILN_FLOAT_UNARY(exp2) KILN_FLOAT_UNARY(expm1) KILN_FLOAT_UNARY(log)
KILN_FLOAT_UNARY(log2) KILN_FLOAT_UNARY(log10) KILN_FLOAT_UNARY(log1p) KILN_FLOAT_UNARY(sqrt)
KILN_FLOAT_UNARY(rsqrt) KILN_FLOAT_UNARY(reciprocal) KILN_FLOAT_UNARY(sin) KILN_FLOAT_UNARY(cos)
KILN_FLOAT_UNARY(tan) KILN_FLOAT_UNARY(asin) KILN_FLOAT_UNARY(acos) KILN_FLOAT_UNARY(atan)
KILN_FLOAT_UNARY(sinh) KILN_FLOAT_UNARY(cosh) KILN_FLOAT_UNARY(tanh) KILN_FLOAT_UNARY(asinh)
KILN_FLOAT_UNARY(acosh) KILN_FLOAT_UNARY(atanh) KILN_FLOAT_UNARY(erf) KILN_FLOAT_UNARY(erfc)
KILN_FLOAT_UNARY(erfinv) KILN_FLOAT_UNARY(lgamma) KILN_FLOAT_UNARY(sigmoid)
#undef KILN_FLOAT_UNARY

Tensor floor(const Tensor& self) { return rounding(OpKind::floor, "floor", self); }
Tensor ceil(const Tensor& self) { return rounding(OpKind::ceil, "ceil", self); }
Tensor round(const Tensor& self) { return rounding(OpKind::round, "round", self); }

// PyTorch's round.decimals: x * 10^d rounded half to even, then / 10^d (for d < 0: x / 10^-d
// rounded, then * 10^-d), in the input's dtype.
Tensor round(const Tensor& self, int64_t decimals) {
  if (decimals == 0) return round(self);
  if (!is_floating_point(self.dtype())) fail("round", "round_decimals is not supported for integral tensors");
  const double ten_pow = std::pow(10.0, static_cast<double>(decimals < 0 ? -decimals : decimals));
  return decimals > 0 ? round(self * ten_pow) / ten_pow : round(self / ten_pow) * ten_pow;
}
Tensor trunc(const Tensor& self) { return rounding(OpKind::trunc, "trunc", self); }

Tensor frac(const Tensor& self) {
  if (!self.is_floating_point()) {
    fail("frac", "frac is only supported for floating point tensors, but got a tensor with dtype {}",
         c10_type_name(self.dtype()));
  }
  return dispatch1(OpKind::frac, {self});
}

Tensor sign(const Tensor& self) { return dispatch1(OpKind::sign, {self}); }
Tensor signbit(const Tensor& self) { return dispatch1(OpKind::signbit, {self}); }
Tensor isnan(const Tensor& self) { return dispatch1(OpKind::isnan, {self}); }
Tensor isinf(const Tensor& self) { return dispatch1(OpKind::isinf, {self}); }
Tensor isfinite(const Tensor& self) { return dispatch1(OpKind::isfinite, {self}); }
Tensor logical_not(const Tensor& self) { return dispatch1(OpKind::logical_not, {self}); }

Tensor bitwise_not(const Tensor& self) {
  if (!is_integral(self.dtype(), true)) {
    fail("bitwise_not", "bitwise_not is only supported for integer and boolean tensors, but got {}",
         c10_type_name(self.dtype()));
  }
  return dispatch1(OpKind::bitwise_not, {self});
}

// ---- operators ----

Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator!(const Tensor& a) { return logical_not(a); }

}  // namespace kiln
