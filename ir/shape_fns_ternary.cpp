// kiln/ir/shape_fns_ternary.cpp — the Ternary family's shape function (where, clamp): equal
// shapes, equal dtypes (where's condition bool).
#include "ir/shape_fns_detail.h"

#include "base/error.h"

#include <optional>
#include <string>

namespace kiln::ir::shape_detail {

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

}  // namespace kiln::ir::shape_detail
