// kiln/ir/shape_fns_binary.cpp — the Binary family's shape function.
//
// Binary prims see operands the frontend has already broadcast and promoted, so they require
// equal shapes and equal dtypes rather than computing a common one: "[add] operands must have
// equal shapes, got [2, 3] and [3]". What remains besides is each op's own rule (div's
// rounding mode).
#include "ir/shape_fns_detail.h"

#include "base/error.h"

#include <optional>
#include <string>

namespace kiln::ir::shape_detail {

TensorType infer_binary(OpKind op, const Types& in, const AttrList& attrs) {
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  common_device(op, in);
  check_same_shape(op, a, b);
  check_same_dtype(op, a, b);
  switch (as_binary(op)) {
    case BinaryOp::div: {
      std::optional<std::string> mode = attrs.get_opt<std::string>(op, "rounding_mode");
      if (mode && *mode != "trunc" && *mode != "floor")
        fail(op_name(op), "expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'", *mode);
      if (!mode && !is_floating_point(a.dtype))
        fail(op_name(op), "true division (rounding_mode none) expects floating point operands, got {}",
             dtype_name(a.dtype));
      return a;
    }
    case BinaryOp::add:
    case BinaryOp::sub:
    case BinaryOp::mul:
    case BinaryOp::remainder:
    case BinaryOp::fmod:
    case BinaryOp::pow:
    case BinaryOp::atan2:
    case BinaryOp::hypot:
    case BinaryOp::copysign:
    case BinaryOp::maximum:
    case BinaryOp::minimum:
    case BinaryOp::fmax:
    case BinaryOp::fmin:
    case BinaryOp::eq:
    case BinaryOp::ne:
    case BinaryOp::lt:
    case BinaryOp::le:
    case BinaryOp::gt:
    case BinaryOp::ge:
    case BinaryOp::logical_and:
    case BinaryOp::logical_or:
    case BinaryOp::logical_xor:
    case BinaryOp::bitwise_and:
    case BinaryOp::bitwise_or:
    case BinaryOp::bitwise_xor:
    case BinaryOp::bitwise_left_shift:
    case BinaryOp::bitwise_right_shift: return a;
  }
  internal_fail("infer_binary: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
