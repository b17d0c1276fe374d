// kiln/ir/shape_fns_unary.cpp — the Unary family's shape function.
//
// The dtype traits (FloatOnly, IntOnly, NoBool) are checked by infer_types() before it runs,
// and BoolOut ops get a bool result there; what remains here is each op's own rule.
#include "ir/shape_fns_detail.h"

#include "base/error.h"

#include <optional>
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

}  // namespace kiln::ir::shape_detail
