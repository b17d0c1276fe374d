// kiln/ir/shape_fns_pointwise.cpp — shape functions of the pointwise prims and casts.
//
// Pointwise prims see operands the frontend has already broadcast and promoted, so binary
// and ternary prims require equal shapes and equal dtypes rather than computing a common
// one: "[add] operands must have equal shapes, got [2, 3] and [3]". The dtype traits
// (FloatOnly, IntOnly, NoBool) are checked by infer_types() before these run, and BoolOut
// ops get a bool result there; what remains here is each op's own rule (div's rounding
// mode, where's condition, the target dtype of a cast).
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

TensorType infer_unary(OpKind op, const Types& in, const AttrList& attrs) {
  (void)attrs;
  const TensorType& a = in[0];
  switch (as_unary(op)) {
    // Same type as the input (the BoolOut ones become bool in infer_types).
    case UnaryOp::abs:
    case UnaryOp::neg:
    case UnaryOp::exp:
    case UnaryOp::exp2:
    case UnaryOp::expm1:
    case UnaryOp::log:
    case UnaryOp::log2:
    case UnaryOp::log10:
    case UnaryOp::log1p:
    case UnaryOp::sqrt:
    case UnaryOp::rsqrt:
    case UnaryOp::reciprocal:
    case UnaryOp::sin:
    case UnaryOp::cos:
    case UnaryOp::tan:
    case UnaryOp::asin:
    case UnaryOp::acos:
    case UnaryOp::atan:
    case UnaryOp::sinh:
    case UnaryOp::cosh:
    case UnaryOp::tanh:
    case UnaryOp::asinh:
    case UnaryOp::acosh:
    case UnaryOp::atanh:
    case UnaryOp::erf:
    case UnaryOp::erfc:
    case UnaryOp::erfinv:
    case UnaryOp::lgamma:
    case UnaryOp::sigmoid:
    case UnaryOp::floor:
    case UnaryOp::ceil:
    case UnaryOp::round:
    case UnaryOp::trunc:
    case UnaryOp::frac:
    case UnaryOp::sign:
    case UnaryOp::signbit:
    case UnaryOp::isnan:
    case UnaryOp::isinf:
    case UnaryOp::isfinite:
    case UnaryOp::bitwise_not:
    case UnaryOp::logical_not: return a;
  }
  internal_fail("infer_unary: unhandled op {}", op_name(op));
}

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

TensorType infer_ternary(OpKind op, const Types& in, const AttrList& attrs) {
  (void)attrs;
  common_device(op, in);
  switch (as_ternary(op)) {
    case TernaryOp::where: {
      const TensorType& cond = in[0];
      if (cond.dtype != ScalarType::Bool)
        fail(op_name(op), "expected condition to be a boolean tensor, but got a tensor with dtype {}",
             dtype_name(cond.dtype));
      check_same_shape(op, cond, in[1]);
      check_same_shape(op, in[1], in[2]);
      check_same_dtype(op, in[1], in[2]);
      return in[1];
    }
    case TernaryOp::clamp:
      check_same_shape(op, in[0], in[1]);
      check_same_shape(op, in[0], in[2]);
      check_same_dtype(op, in[0], in[1]);
      check_same_dtype(op, in[0], in[2]);
      return in[0];
  }
  internal_fail("infer_ternary: unhandled op {}", op_name(op));
}

TensorType infer_cast(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_cast(op)) {
    case CastOp::convert_element_type: {
      TensorType out = in[0];
      out.dtype = attrs.get<ScalarType>(op, "dtype");
      return out;
    }
    case CastOp::clone: return in[0];
  }
  internal_fail("infer_cast: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
