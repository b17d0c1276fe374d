// kiln/frontend/ops_pointwise.cpp — unary, binary and ternary pointwise ops and the operators.
//
// Each op validates its operands, computes the result dtype with PyTorch's rules
// (frontend/promotion.h), casts every operand to it with to(dtype), broadcasts with expand
// and dispatches one prim, so that prims always see equal dtypes and shapes. Scalars become
// 0-dim `full` tensors of the computed dtype on the tensor operand's device, then expand.
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "frontend/views.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;

ScalarType operand_type(const TensorOrScalar& op) {
  if (const Tensor* t = std::get_if<Tensor>(&op)) return t->dtype();
  return std::get<Scalar>(op).type();
}

// The device of the tensor operands; all must agree, except that a 0-dim CPU tensor may
// join tensors on another device (as PyTorch allows).
Device common_device(std::string_view op, const std::vector<TensorOrScalar>& operands) {
  std::optional<Device> dev;
  std::optional<Device> cpu_scalar;
  for (const TensorOrScalar& o : operands) {
    const Tensor* t = std::get_if<Tensor>(&o);
    if (!t) continue;
    if (t->dim() == 0 && t->device().is_cpu()) {
      cpu_scalar = t->device();
      continue;
    }
    if (!dev) {
      dev = t->device();
    } else if (*dev != t->device()) {
      fail(op, "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
           dev->str(), t->device().str());
    }
  }
  if (dev) return *dev;
  if (cpu_scalar) return *cpu_scalar;
  return Device();
}

// The broadcast shape of some tensors: integers, or expressions when any is traced with
// symbolic sizes (decided with guards, frontend/symbolic.h).
struct BroadcastShape {
  bool symbolic = false;
  std::vector<int64_t> ints;
  std::vector<ir::Expr> exprs;

  BroadcastShape(std::string_view op, const std::vector<const Tensor*>& ts) {
    for (const Tensor* t : ts) symbolic = symbolic || is_symbolic(*t);
    for (size_t i = 0; i < ts.size(); ++i) {
      if (symbolic) exprs = i == 0 ? sym_sizes(*ts[i]) : sym_broadcast_shapes(op, exprs, sym_sizes(*ts[i]));
      else ints = i == 0 ? ts[i]->sizes().vec() : broadcast_shapes(op, ints, ts[i]->sizes());
    }
  }
  Tensor expand(const Tensor& t) const {
    if (symbolic) return sym_expand(t, exprs);
    return t.sizes() == IntArrayRef(ints) ? t : t.expand(ints);
  }
};

std::vector<const Tensor*> tensors_in(const std::vector<TensorOrScalar>& operands) {
  std::vector<const Tensor*> ts;
  for (const TensorOrScalar& o : operands)
    if (const Tensor* t = std::get_if<Tensor>(&o)) ts.push_back(t);
  return ts;
}

// Turns every operand into a tensor of `dtype` with the broadcast shape of the tensors.
std::vector<Tensor> promote_and_broadcast(std::string_view op, const std::vector<TensorOrScalar>& operands,
                                          ScalarType dtype) {
  Device device = common_device(op, operands);
  const BroadcastShape shape(op, tensors_in(operands));
  std::vector<Tensor> out;
  out.reserve(operands.size());
  for (const TensorOrScalar& o : operands) {
    Tensor t;
    if (const Tensor* pt = std::get_if<Tensor>(&o)) {
      t = pt->to(dtype);
      if (t.device() != device && !t.is_traced()) t = t.to(device);  // a 0-dim cpu tensor joins as a scalar
    } else {
      t = scalar_tensor(std::get<Scalar>(o), TensorOptions(dtype).device(device));
    }
    out.push_back(shape.expand(t));
  }
  return out;
}

// How a binary op derives its computation dtype from result_type.
enum class Rule {
  Common,      // result_type
  NoBool,      // result_type; bool is an error
  Float,       // result_type; integral and bool become the default float dtype
  FloatOnly,   // result_type; must be floating (hypot: PyTorch's kernel has no integral version)
  IntegralOr,  // result_type; must be integral or bool (bitwise and/or/xor)
  Integral,    // result_type; must be integral, not bool (shifts)
};

// Two tensors of one dtype promote to it; result_type's operand list is built otherwise only.
ScalarType common_dtype(const TensorOrScalar& a, const TensorOrScalar& b) {
  const Tensor* x = std::get_if<Tensor>(&a);
  const Tensor* y = std::get_if<Tensor>(&b);
  if (x && y && x->defined() && y->defined() && x->dtype() == y->dtype()) return x->dtype();
  return result_type({a, b});
}

ScalarType binary_dtype(std::string_view op, const TensorOrScalar& a, const TensorOrScalar& b, Rule rule) {
  ScalarType dt = common_dtype(a, b);
  switch (rule) {
    case Rule::Common: break;
    case Rule::NoBool:
      if (dt == ScalarType::Bool) fail(op, "{} is not supported for bool tensors", op);
      break;
    case Rule::Float:
      if (is_integral(dt, /*include_bool=*/true)) dt = get_default_dtype();
      break;
    case Rule::FloatOnly:
      if (!is_floating_point(dt)) fail(op, "\"{}_cpu\" not implemented for '{}'", op, c10_type_name(dt));
      break;
    case Rule::IntegralOr:
      if (!is_integral(dt, /*include_bool=*/true)) {
        fail(op, "{} is only supported for integer and boolean tensors, but got {}", op, c10_type_name(dt));
      }
      break;
    case Rule::Integral:
      if (!is_integral(dt, /*include_bool=*/false)) {
        fail(op, "{} is only supported for integer tensors, but got {}", op, c10_type_name(dt));
      }
      break;
  }
  return dt;
}

// promote_and_broadcast of two operands. Two eager tensors of `dtype`, one shape and one device
// (the common eager call) are already what it would return, and go on as they are.
std::vector<Tensor> binary_operands(std::string_view op, const TensorOrScalar& a, const TensorOrScalar& b,
                                    ScalarType dtype) {
  const Tensor* x = std::get_if<Tensor>(&a);
  const Tensor* y = std::get_if<Tensor>(&b);
  if (x && y && x->defined() && y->defined()) {
    const TensorImpl* p = x->impl();
    const TensorImpl* q = y->impl();
    if (!p->is_traced() && !q->is_traced() && p->dtype() == dtype && q->dtype() == dtype &&
        p->device() == q->device() && p->sizes() == q->sizes())
      return {*x, *y};
  }
  return promote_and_broadcast(op, {a, b}, dtype);
}

Tensor binary(OpKind kind, std::string_view op, const TensorOrScalar& a, const TensorOrScalar& b, Rule rule) {
  ScalarType dt = binary_dtype(op, a, b, rule);
  return dispatch1(kind, binary_operands(op, a, b, dt));
}

// logical_and/or/xor: each operand is tested against zero in its own dtype.
Tensor logical(OpKind kind, std::string_view op, const TensorOrScalar& a, const TensorOrScalar& b) {
  std::vector<Tensor> ops = promote_and_broadcast(op, {a, b}, ScalarType::Bool);
  return dispatch1(kind, {ops[0], ops[1]});
}

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

void alpha_check(std::string_view op, ScalarType dtype, const Scalar& alpha) {
  if (alpha.is_bool() && dtype != ScalarType::Bool) fail(op, "Boolean alpha only supported for Boolean results.");
  if (!is_floating_point(dtype) && alpha.is_floating_point()) {
    fail(op, "For integral input tensors, argument alpha must not be a floating point number.");
  }
}

void sub_check(std::string_view op, ScalarType a, ScalarType b) {
  if (a == ScalarType::Bool && b == ScalarType::Bool) {
    fail(op, "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` "
             "operator instead.");
  }
  if (a == ScalarType::Bool || b == ScalarType::Bool) {
    fail(op, "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
             "mask, use the `~` or `logical_not()` operator instead.");
  }
}

bool is_one(const Scalar& s) { return !s.is_floating_point() ? s.to_int() == 1 : s.to_double() == 1.0; }

// self + alpha * other, or self - alpha * other.
Tensor add_sub(OpKind kind, std::string_view op, const TensorOrScalar& a, const TensorOrScalar& b, const Scalar& alpha) {
  if (kind == OpKind::sub) sub_check(op, operand_type(a), operand_type(b));
  ScalarType dt = common_dtype(a, b);
  alpha_check(op, dt, alpha);
  std::vector<Tensor> ops = binary_operands(op, a, b, dt);
  if (!is_one(alpha)) {
    Tensor al = scalar_tensor(alpha, TensorOptions(dt).device(ops[1].device()));
    ops[1] = dispatch1(OpKind::mul, {ops[1], sym_expand(al, sym_sizes(ops[1]))});
  }
  return dispatch1(kind, std::move(ops));
}

void check_rounding_mode(std::optional<std::string_view> mode) {
  if (mode && *mode != "trunc" && *mode != "floor") {
    fail("div", "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'", *mode);
  }
}

Tensor div_impl(const TensorOrScalar& a, const TensorOrScalar& b, std::optional<std::string_view> mode) {
  check_rounding_mode(mode);
  if (!mode) {
    ScalarType dt = binary_dtype("div", a, b, Rule::Float);
    return dispatch1(OpKind::div, binary_operands("div", a, b, dt), {std::monostate{}});
  }
  ScalarType dt = binary_dtype("div", a, b, Rule::NoBool);
  return dispatch1(OpKind::div, binary_operands("div", a, b, dt), {std::string(*mode)});
}

Tensor where_impl(const Tensor& cond, const TensorOrScalar& a, const TensorOrScalar& b) {
  if (cond.dtype() != ScalarType::Bool) {
    fail("where", "expected condition to be a boolean tensor, but got a tensor with dtype {}", c10_type_name(cond.dtype()));
  }
  ScalarType dt = result_type({a, b});
  Device device = common_device("where", {cond, a, b});
  // Broadcast all three; the condition keeps its dtype.
  std::vector<const Tensor*> ts{&cond};
  for (const TensorOrScalar* o : {&a, &b})
    if (const Tensor* t = std::get_if<Tensor>(o)) ts.push_back(t);
  const BroadcastShape shape("where", ts);
  auto prep = [&](const TensorOrScalar& o) {
    Tensor t = std::holds_alternative<Tensor>(o) ? std::get<Tensor>(o).to(dt)
                                                 : scalar_tensor(std::get<Scalar>(o), TensorOptions(dt).device(device));
    return shape.expand(t);
  };
  Tensor c = shape.expand(cond);
  return dispatch1(OpKind::where, {c, prep(a), prep(b)});
}

// clamp over already-promoted operands: both bounds use the clamp prim, one bound
// maximum/minimum (NaN in the input or a bound propagates either way, as in PyTorch).
Tensor clamp_impl(const std::vector<TensorOrScalar>& operands, bool has_min, bool has_max) {
  if (!has_min && !has_max) fail("clamp", "At least one of 'min' or 'max' must not be None");
  ScalarType dt = result_type(operands);
  if (dt == ScalarType::Bool) {
    // PyTorch: one tensor bound runs maximum/minimum, which bool supports; its clamp kernels
    // (both bounds, or a scalar bound) are not instantiated for bool.
    const bool scalar_bound = std::any_of(operands.begin() + 1, operands.end(),
                                          [](const TensorOrScalar& o) { return std::holds_alternative<Scalar>(o); });
    if (scalar_bound || (has_min && has_max)) {
      const char* kernel = !scalar_bound ? "clamp_cpu"
                           : has_min && has_max ? "clamp_scalar_cpu"
                           : has_min            ? "clamp_min_scalar_cpu"
                                                : "clamp_max_scalar_cpu";
      fail("clamp", "\"{}\" not implemented for 'Bool'", kernel);
    }
  }
  for (const TensorOrScalar& o : operands)  // scalar bounds convert checked, as PyTorch's clamp
    if (const Scalar* bound = std::get_if<Scalar>(&o)) check_scalar_fits("clamp", *bound, dt);
  std::vector<Tensor> ops = promote_and_broadcast("clamp", operands, dt);
  if (has_min && has_max) return dispatch1(OpKind::clamp, {ops[0], ops[1], ops[2]});
  return dispatch1(has_min ? OpKind::maximum : OpKind::minimum, {ops[0], ops[1]});
}

}  // namespace

// ---- unary -------------------------------------------------------------------------------------

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

Tensor relu(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) fail("relu", "Boolean inputs not supported for relu");
  return dispatch1(OpKind::relu, {self});  // composite: clamp_min(self, 0)
}

// torch.square is pow(x, 2): bool squares to int64.
Tensor square(const Tensor& self) {
  Tensor x = self.dtype() == ScalarType::Bool ? self.to(ScalarType::Int64) : self;
  return dispatch1(OpKind::mul, {x, x});
}

// ---- binary ------------------------------------------------------------------------------------

#define KILN_BINARY_RULE(name, rule)                                                                    \
  Tensor name(const Tensor& self, const Tensor& other) { return binary(OpKind::name, #name, self, other, rule); } \
  Tensor name(const Tensor& self, const Scalar& other) { return binary(OpKind::name, #name, self, other, rule); } \
  Tensor name(const Scalar& self, const Tensor& other) { return binary(OpKind::name, #name, self, other, rule); }
KILN_BINARY_RULE(mul, Rule::Common)
KILN_BINARY_RULE(remainder, Rule::NoBool)
KILN_BINARY_RULE(fmod, Rule::NoBool)
KILN_BINARY_RULE(atan2, Rule::Float)
KILN_BINARY_RULE(hypot, Rule::FloatOnly)
KILN_BINARY_RULE(copysign, Rule::Float)
KILN_BINARY_RULE(maximum, Rule::Common)
KILN_BINARY_RULE(minimum, Rule::Common)
KILN_BINARY_RULE(fmax, Rule::Common)
KILN_BINARY_RULE(fmin, Rule::Common)
KILN_BINARY_RULE(eq, Rule::Common)
KILN_BINARY_RULE(ne, Rule::Common)
KILN_BINARY_RULE(lt, Rule::Common)
KILN_BINARY_RULE(le, Rule::Common)
KILN_BINARY_RULE(gt, Rule::Common)
KILN_BINARY_RULE(ge, Rule::Common)
KILN_BINARY_RULE(bitwise_and, Rule::IntegralOr)
KILN_BINARY_RULE(bitwise_or, Rule::IntegralOr)
KILN_BINARY_RULE(bitwise_xor, Rule::IntegralOr)
KILN_BINARY_RULE(bitwise_left_shift, Rule::Integral)
KILN_BINARY_RULE(bitwise_right_shift, Rule::Integral)
#undef KILN_BINARY_RULE

#define KILN_LOGICAL(name)                                                                                     \
  Tensor name(const Tensor& self, const Tensor& other) { return logical(OpKind::name, #name, self, other); } \
  Tensor name(const Tensor& self, const Scalar& other) { return logical(OpKind::name, #name, self, other); } \
  Tensor name(const Scalar& self, const Tensor& other) { return logical(OpKind::name, #name, self, other); }
KILN_LOGICAL(logical_and) KILN_LOGICAL(logical_or) KILN_LOGICAL(logical_xor)
#undef KILN_LOGICAL

// pow: integers to negative integer scalar powers are an error (NumPy), as in PyTorch.
Tensor pow(const Tensor& self, const Tensor& other) { return binary(OpKind::pow, "pow", self, other, Rule::NoBool); }
Tensor pow(const Tensor& self, const Scalar& other) {
  if (is_integral(self.dtype(), true) && !other.is_floating_point() && other.to_int() < 0) {
    fail("pow", "Integers to negative integer powers are not allowed.");
  }
  return binary(OpKind::pow, "pow", self, other, Rule::NoBool);
}
Tensor pow(const Scalar& self, const Tensor& other) { return binary(OpKind::pow, "pow", self, other, Rule::NoBool); }

Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return add_sub(OpKind::add, "add", self, other, alpha);
}
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add_sub(OpKind::add, "add", self, other, alpha);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  return add_sub(OpKind::sub, "sub", self, other, alpha);
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add_sub(OpKind::sub, "sub", self, other, alpha);
}
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add_sub(OpKind::sub, "rsub", other, self, alpha);
}

Tensor div(const Tensor& self, const Tensor& other) { return div_impl(self, other, std::nullopt); }
Tensor div(const Tensor& self, const Scalar& other) { return div_impl(self, other, std::nullopt); }
Tensor div(const Scalar& self, const Tensor& other) { return div_impl(self, other, std::nullopt); }
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode) {
  return div_impl(self, other, rounding_mode);
}
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode) {
  return div_impl(self, other, rounding_mode);
}
Tensor true_divide(const Tensor& self, const Tensor& other) { return div_impl(self, other, std::nullopt); }
Tensor true_divide(const Tensor& self, const Scalar& other) { return div_impl(self, other, std::nullopt); }
Tensor true_divide(const Scalar& self, const Tensor& other) { return div_impl(self, other, std::nullopt); }
Tensor floor_divide(const Tensor& self, const Tensor& other) { return div_impl(self, other, "floor"); }
Tensor floor_divide(const Tensor& self, const Scalar& other) { return div_impl(self, other, "floor"); }
Tensor floor_divide(const Scalar& self, const Tensor& other) { return div_impl(self, other, "floor"); }

// ---- ternary -----------------------------------------------------------------------------------

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  return where_impl(condition, self, other);
}
Tensor where(const Tensor& condition, const Scalar& self, const Tensor& other) {
  return where_impl(condition, self, other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other) {
  return where_impl(condition, self, other);
}
Tensor where(const Tensor& condition, const Scalar& self, const Scalar& other) {
  return where_impl(condition, self, other);
}

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  std::vector<TensorOrScalar> operands{self};
  if (min) operands.emplace_back(*min);
  if (max) operands.emplace_back(*max);
  return clamp_impl(operands, min.has_value(), max.has_value());
}

Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  bool has_min = min && min->defined();
  bool has_max = max && max->defined();
  std::vector<TensorOrScalar> operands{self};
  if (has_min) operands.emplace_back(*min);
  if (has_max) operands.emplace_back(*max);
  return clamp_impl(operands, has_min, has_max);
}

Tensor clamp_min(const Tensor& self, const Scalar& min) { return clamp(self, std::optional<Scalar>(min), std::nullopt); }
Tensor clamp_max(const Tensor& self, const Scalar& max) { return clamp(self, std::nullopt, std::optional<Scalar>(max)); }

// ---- lerp, addcmul, addcdiv, nan_to_num -----------------------------------------------------------

namespace {

// lerp's operands: self, end and a tensor weight share one floating dtype (PyTorch checks
// them, it does not promote); all three broadcast.
Tensor lerp_impl(const Tensor& self, const Tensor& end, const TensorOrScalar& weight) {
  if (end.dtype() != self.dtype())
    fail("lerp", "expected dtype {} for `end` but got dtype {}", c10_type_name(self.dtype()), c10_type_name(end.dtype()));
  const Tensor* w = std::get_if<Tensor>(&weight);
  if (w && w->dtype() != self.dtype())
    fail("lerp", "expected dtype {} for `weight` but got dtype {}", c10_type_name(self.dtype()), c10_type_name(w->dtype()));
  if (!is_floating_point(self.dtype()))
    fail("lerp", "\"{}\" not implemented for '{}'", w ? "lerp_kernel_tensor" : "lerp_kernel_scalar", c10_type_name(self.dtype()));
  std::vector<Tensor> ops = promote_and_broadcast("lerp", {self, end, weight}, self.dtype());
  return dispatch1(OpKind::lerp, {ops[0], ops[1], ops[2]});
}

Tensor addc_impl(OpKind kind, std::string_view op, const Tensor& self, const Tensor& t1, const Tensor& t2,
                 const Scalar& value) {
  const ScalarType dt = result_type({self, t1, t2});
  if (kind == OpKind::addcdiv && is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true))
    fail(op, "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true "
             "division of tensor1 and tensor2. Use (input + value * tensor1 / tensor2) for float inputs.");
  if (kind == OpKind::addcmul && dt == ScalarType::Bool) fail(op, "\"addcmul_cpu_out\" not implemented for 'Bool'");
  if (kind == OpKind::addcdiv && !is_floating_point(dt)) fail(op, "\"addcdiv_cpu_out\" not implemented for '{}'", c10_type_name(dt));
  check_scalar_fits(op, value, dt);
  std::vector<Tensor> ops = promote_and_broadcast(op, {self, t1, t2}, dt);
  // PyTorch converts value to the dtype: a float value truncates for integer tensors.
  const Scalar v = is_floating_point(dt) || value.is_bool() ? value : Scalar(value.to_int());
  return dispatch1(kind, {ops[0], ops[1], ops[2]}, {v});
}

}  // namespace

Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight) { return lerp_impl(self, end, weight); }
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight) { return lerp_impl(self, end, weight); }

Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return addc_impl(OpKind::addcmul, "addcmul", self, tensor1, tensor2, value);
}
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value) {
  return addc_impl(OpKind::addcdiv, "addcdiv", self, tensor1, tensor2, value);
}

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf, std::optional<double> neginf) {
  const double big = finfo_max(self.dtype());
  return dispatch1(OpKind::nan_to_num, {self}, {nan.value_or(0.0), posinf.value_or(big), neginf.value_or(-big)});
}

// ---- operators ---------------------------------------------------------------------------------

Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator!(const Tensor& a) { return logical_not(a); }

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator-(const Scalar& a, const Tensor& b) { return rsub(b, a); }

#define KILN_DEFINE_OPERATOR(op, fn)                                           \
  Tensor operator op(const Tensor& a, const Tensor& b) { return fn(a, b); }    \
  Tensor operator op(const Tensor& a, const Scalar& b) { return fn(a, b); }    \
  Tensor operator op(const Scalar& a, const Tensor& b) { return fn(a, b); }
KILN_DEFINE_OPERATOR(*, mul) KILN_DEFINE_OPERATOR(/, div) KILN_DEFINE_OPERATOR(%, remainder)
KILN_DEFINE_OPERATOR(&, bitwise_and) KILN_DEFINE_OPERATOR(|, bitwise_or) KILN_DEFINE_OPERATOR(^, bitwise_xor)
KILN_DEFINE_OPERATOR(<<, bitwise_left_shift) KILN_DEFINE_OPERATOR(>>, bitwise_right_shift)
KILN_DEFINE_OPERATOR(==, eq) KILN_DEFINE_OPERATOR(!=, ne) KILN_DEFINE_OPERATOR(<, lt)
KILN_DEFINE_OPERATOR(<=, le) KILN_DEFINE_OPERATOR(>, gt) KILN_DEFINE_OPERATOR(>=, ge)
#undef KILN_DEFINE_OPERATOR

Tensor& operator+=(Tensor& a, const Tensor& b) { return a.add_(b); }
Tensor& operator+=(Tensor& a, const Scalar& b) { return a.add_(b); }
Tensor& operator-=(Tensor& a, const Tensor& b) { return a.sub_(b); }
Tensor& operator-=(Tensor& a, const Scalar& b) { return a.sub_(b); }
Tensor& operator*=(Tensor& a, const Tensor& b) { return a.mul_(b); }
Tensor& operator*=(Tensor& a, const Scalar& b) { return a.mul_(b); }
Tensor& operator/=(Tensor& a, const Tensor& b) { return a.div_(b); }
Tensor& operator/=(Tensor& a, const Scalar& b) { return a.div_(b); }

}  // namespace kiln
