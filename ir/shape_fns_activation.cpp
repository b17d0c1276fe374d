// kiln/ir/shape_fns_activation.cpp — shape functions of the activations (gelu, silu, relu, elu, ...).
//
// An activation keeps its input's type; what is checked is the dtype each accepts (floating
// inputs, with PyTorch's "not implemented for" wording naming its CPU kernel) and gelu's
// approximation.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

TensorType infer_activation(OpKind op, const Types& in, const AttrList& attrs) {
  common_device(op, in);  // one device (checked; the result is on it)
  const TensorType& x = in[0];
  switch (as_activation(op)) {
    case ActivationOp::gelu: {
      const std::string& approximate = attrs.get<std::string>(op, "approximate");
      if (approximate != "none" && approximate != "tanh")
        fail(op_name(op), "approximate argument must be either none or tanh.");
      check_floating(op, x.dtype, "GeluKernelImpl");
      return x;
    }
    case ActivationOp::silu: check_floating(op, x.dtype, "silu_cpu"); return x;
    case ActivationOp::relu:
      if (x.dtype == ScalarType::Bool) fail(op_name(op), "Boolean inputs not supported for relu");
      return x;
    case ActivationOp::elu:
    case ActivationOp::leaky_relu:
    case ActivationOp::hardswish:
    case ActivationOp::hardsigmoid:
    case ActivationOp::mish:
    case ActivationOp::softplus: {
      const std::string kernel = op == OpKind::elu ? "elu_cpu" : fmt::format("{}_cpu", op_name(op));
      check_floating(op, x.dtype, kernel);
      return x;
    }
    case ActivationOp::hardtanh:
      if (x.dtype == ScalarType::Bool) fail(op_name(op), "Bool inputs not supported for hardtanh");
      return x;
  }
  internal_fail("infer_activation: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
