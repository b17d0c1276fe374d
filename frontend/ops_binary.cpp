// kiln/frontend/ops_binary.cpp — the Binary family's frontend: arithmetic, comparisons,
// bitwise and logical ops (tensor-tensor, tensor-scalar and scalar-tensor), the binary and
// compound-assignment operators, and the whole-tensor comparisons equal and allclose.
//
// Each op computes the result dtype with PyTorch's rules (frontend/promotion.h) and its own
// dtype rule (Rule below), casts and broadcasts both operands (frontend/operands.h) and
// dispatches one prim, so that prims always see equal dtypes and shapes.
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/operands.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"
#include "frontend/arg_checks.h"
#include "frontend/ops_factory.h"
#include "frontend/symbolic.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

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
    Tensor al = wrapped_number(alpha, dt, ops[1].device());
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

void check_eager(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.is_traced() || b.is_traced()) {
    fail(op, "{}() reads tensor values and cannot run on traced tensors; use eq()/isclose-style ops with all() and "
             "where() instead",
         op);
  }
}

}  // namespace

// ---- binary ----

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

// torch.square is pow(x, 2): bool squares to int64.
Tensor square(const Tensor& self) {
  Tensor x = self.dtype() == ScalarType::Bool ? self.to(ScalarType::Int64) : self;
  return dispatch1(OpKind::mul, {x, x});
}

// ---- operators ----

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

// ---- whole-tensor comparisons (eager) ----

bool equal(const Tensor& a, const Tensor& b) {
  check_eager("equal", a, b);
  if (a.device() != b.device()) {
    fail("equal", "Expected all tensors to be on the same device, but found at least two devices, {} and {}!",
         a.device().str(), b.device().str());
  }
  // Operands of different dtypes compare after promotion, as eq does (PyTorch 2.x: an f32 1.0
  // equals an i64 1; an f32 1.0000001 does not equal the f64 one).
  if (!(a.sizes() == b.sizes())) return false;
  return all(eq(a, b)).item<bool>();
}

// torch.isclose followed by all(): |a - b| <= atol + rtol * |b| where finite, plus exact
// equality (infinities) and, with equal_nan, NaN against NaN.
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  check_eager("allclose", a, b);
  if (a.dtype() != b.dtype()) fail("allclose", "{} did not match {}", c10_type_name(a.dtype()), c10_type_name(b.dtype()));
  if (rtol < 0) fail("allclose", "rtol must be greater than or equal to zero, but got {}", rtol);
  if (atol < 0) fail("allclose", "atol must be greater than or equal to zero, but got {}", atol);
  Tensor close = eq(a, b);
  if (equal_nan && a.is_floating_point()) close = logical_or(close, logical_and(isnan(a), isnan(b)));
  if (rtol != 0 || atol != 0) {
    Tensor ca = a.dtype() == ScalarType::Bool ? a.to(get_default_dtype()) : a;
    Tensor cb = b.dtype() == ScalarType::Bool ? b.to(get_default_dtype()) : b;
    Tensor allowed = add(abs(mul(Scalar(rtol), cb)), Scalar(atol));
    Tensor actual = abs(sub(ca, cb));
    close = logical_or(close, logical_and(isfinite(actual), le(actual, allowed)));
  }
  return all(close).item<bool>();
}

}  // namespace kiln
