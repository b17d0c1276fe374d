// kiln/frontend/ops_pointwise.cpp — the Pointwise family's frontend: lerp, addcmul, addcdiv,
// nan_to_num, and tril/triu (masks by position). Each checks what PyTorch checks and
// dispatches one composite op (frontend/decompositions_pointwise.cpp).
#include "frontend/arg_checks.h"
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/operands.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"
#include "frontend/ops_factory.h"

#include <optional>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

// lerp's operands: self and end share one dtype (PyTorch checks it, it does not promote them),
// and so does a tensor weight, unless it is 0-dim: then the three promote together under the
// 0-dim rules, as PyTorch 2.x does (an integer self with a 0-dim float weight computes in that
// float; a 0-dim f64 weight leaves an f32 self f32). The dtype computed in must be floating. All
// three broadcast.
Tensor lerp_impl(const Tensor& self, const Tensor& end, const TensorOrScalar& weight) {
  if (end.dtype() != self.dtype())
    fail("lerp", "expected dtype {} for `end` but got dtype {}", cpp_type_name(self.dtype()), cpp_type_name(end.dtype()));
  const Tensor* w = std::get_if<Tensor>(&weight);
  if (w && w->dim() != 0 && w->dtype() != self.dtype())
    fail("lerp", "expected dtype {} for `weight` but got dtype {}", cpp_type_name(self.dtype()), cpp_type_name(w->dtype()));
  const ScalarType dt = w && w->dim() == 0 ? result_type({self, end, *w}) : self.dtype();
  if (!is_floating_point(dt))
    fail("lerp", "\"{}\" not implemented for '{}'", w ? "lerp_kernel_tensor" : "lerp_kernel_scalar", c10_type_name(dt));
  std::vector<Tensor> ops = promote_and_broadcast("lerp", {self, end, weight}, dt);
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

// tril / triu: a 2-D or batched matrix.
Tensor triangle(ir::OpKind kind, std::string_view op, const Tensor& self, int64_t diagonal) {
  if (self.dim() < 2) fail(op, "{}: input tensor must have at least 2 dimensions", op);
  return dispatch1(kind, {self}, {diagonal});
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

Tensor tril(const Tensor& self, int64_t diagonal) { return triangle(OpKind::tril, "tril", self, diagonal); }
Tensor triu(const Tensor& self, int64_t diagonal) { return triangle(OpKind::triu, "triu", self, diagonal); }

}  // namespace kiln
