// kiln/frontend/ops_activation.cpp — the Activation family (frontend/ops_activation.h): gelu, silu, elu (and selu, celu
// over it), leaky_relu, hardtanh (and relu6), hardswish, hardsigmoid, mish, softplus.
//
// Each checks what PyTorch checks, with its wording, and dispatches one composite op
// (frontend/decompositions_activation.cpp); the shape functions repeat the dtype checks for
// graphs read from text.
#include "frontend/ops_activation.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/dispatch.h"

namespace kiln {

using ir::OpKind;

Tensor elu(const Tensor& self, double alpha, double scale, double input_scale) {
  check_floating_kernel("elu", "elu_cpu", self.dtype());
  return dispatch1(OpKind::elu, {self}, {alpha, scale, input_scale});
}

Tensor selu(const Tensor& self) {
  constexpr double kAlpha = 1.6732632423543772848170429916717;
  constexpr double kScale = 1.0507009873554804934193349852946;
  return elu(self, kAlpha, kScale, 1.0);
}

Tensor celu(const Tensor& self, double alpha) {
  if (alpha == 0.0) fail("celu", "ZeroDivisionError: alpha cannot be 0 for CELU");
  return elu(self, alpha, 1.0, 1.0 / alpha);
}

Tensor leaky_relu(const Tensor& self, double negative_slope) {
  check_floating_kernel("leaky_relu", "leaky_relu_cpu", self.dtype());
  return dispatch1(OpKind::leaky_relu, {self}, {negative_slope});
}

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  if (self.dtype() == ScalarType::Bool) fail("hardtanh", "Bool inputs not supported for hardtanh");
  if (min_val.to_double() > max_val.to_double())
    fail("hardtanh", "min_val cannot be greater than max_val, got {} and {}", min_val.to_double(), max_val.to_double());
  return dispatch1(OpKind::hardtanh, {self}, {min_val, max_val});
}

Tensor relu6(const Tensor& self) { return hardtanh(self, 0, 6); }

Tensor hardswish(const Tensor& self) {
  check_floating_kernel("hardswish", "hardswish_cpu", self.dtype());
  return dispatch1(OpKind::hardswish, {self});
}

Tensor hardsigmoid(const Tensor& self) {
  check_floating_kernel("hardsigmoid", "hardsigmoid_cpu", self.dtype());
  return dispatch1(OpKind::hardsigmoid, {self});
}

Tensor mish(const Tensor& self) {
  check_floating_kernel("mish", "mish_cpu", self.dtype());
  return dispatch1(OpKind::mish, {self});
}

Tensor softplus(const Tensor& self, double beta, double threshold) {
  check_floating_kernel("softplus", "softplus_cpu", self.dtype());
  return dispatch1(OpKind::softplus, {self}, {beta, threshold});
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") fail("gelu", "approximate argument must be either none or tanh.");
  return dispatch1(OpKind::gelu, {self}, {std::string(approximate)});
}

Tensor silu(const Tensor& self) { return dispatch1(OpKind::silu, {self}); }

Tensor relu(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) fail("relu", "Boolean inputs not supported for relu");
  return dispatch1(OpKind::relu, {self});  // composite: clamp_min(self, 0)
}

}  // namespace kiln
