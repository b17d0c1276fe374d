// kiln/ir/shape_fns_pointwise.cpp — the Pointwise family's shape function (lerp, addcmul,
// addcdiv, nan_to_num, tril, triu): the frontend promoted and broadcast the operands, as for the
// elementwise prims.
#include "ir/shape_fns_detail.h"

#include "base/error.h"

#include <optional>
#include <string>

namespace kiln::ir::shape_detail {

// The pointwise composites (lerp, addcmul, addcdiv, nan_to_num, tril, triu): the frontend
// promoted and broadcast their operands, as for the prims.
TensorType infer_pointwise(OpKind op, const Types& in, const AttrList& /*attrs*/) {
  const TensorType& x = in[0];
  switch (as_pointwise(op)) {
    case PointwiseOp::lerp:
    case PointwiseOp::addcmul:
    case PointwiseOp::addcdiv:
      for (size_t i = 1; i < in.size(); ++i) {
        check_same_dtype(op, x, in[i]);
        check_same_shape(op, x, in[i]);
      }
      if (op == OpKind::lerp) check_floating(op, x.dtype, "lerp_kernel_tensor");
      if (op == OpKind::addcmul && x.dtype == ScalarType::Bool) fail(op_name(op), "\"addcmul_cpu_out\" not implemented for 'Bool'");
      if (op == OpKind::addcdiv && !is_floating_point(x.dtype)) fail(op_name(op), "Integer division with addcdiv is no longer supported");
      return x;
    case PointwiseOp::nan_to_num: return x;
    case PointwiseOp::tril:
    case PointwiseOp::triu:
      if (x.rank() < 2) fail(op_name(op), "{}: input tensor must have at least 2 dimensions", op_name(op));
      return x;
  }
  internal_fail("infer_pointwise: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
