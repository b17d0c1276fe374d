// kiln/ir/shape_fns_matmul.cpp — shape functions of mm and bmm (inner sizes must be equal
// expressions).
#include "base/error.h"
#include "ir/shape_fns_detail.h"

namespace kiln::ir::shape_detail {

TensorType infer_matmul(OpKind op, const Types& in, const AttrList& attrs) {
  (void)attrs;
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  const Device device = common_device(op, in);
  check_same_dtype(op, a, b);
  if (a.dtype == ScalarType::Bool) fail(op_name(op), "expected a non-bool tensor, got bool");
  switch (as_matmul(op)) {
    case MatmulOp::mm: {
      if (a.rank() != 2 || b.rank() != 2)
        fail(op_name(op), "expected 2-D tensors, got {}-D and {}-D", a.rank(), b.rank());
      if (!same_size(a.sizes[1], b.sizes[0]))
        fail(op_name(op), "shapes {} and {} cannot be multiplied", sizes_str(a), sizes_str(b));
      return TensorType(a.dtype, {a.sizes[0], b.sizes[1]}, device);
    }
    case MatmulOp::bmm: {
      if (a.rank() != 3 || b.rank() != 3)
        fail(op_name(op), "expected 3-D tensors, got {}-D and {}-D", a.rank(), b.rank());
      if (!same_size(a.sizes[0], b.sizes[0]))
        fail(op_name(op), "batch sizes must be equal, got {} and {}", a.sizes[0].str(), b.sizes[0].str());
      if (!same_size(a.sizes[2], b.sizes[1]))
        fail(op_name(op), "shapes {} and {} cannot be multiplied", sizes_str(a), sizes_str(b));
      return TensorType(a.dtype, {a.sizes[0], a.sizes[1], b.sizes[2]}, device);
    }
  }
  internal_fail("infer_matmul: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
