// kiln/ir/shape_fns_cast.cpp — the Cast family's shape function: the target dtype of a
// conversion, the input's for a clone.
#include "ir/shape_fns_detail.h"

#include "base/error.h"

#include <optional>
#include <string>

namespace kiln::ir::shape_detail {

TensorType infer_cast(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_cast(op)) {
    case CastOp::convert_element_type: {
      TensorType out = in[0];
      out.dtype = attrs.get<ScalarType>(op, "dtype");
      return out;
    }
    case CastOp::clone:
    case CastOp::detach: return in[0];
    case CastOp::no_grad_copy: break;  // shaped by its decomposition (infer_types never asks)
  }
  internal_fail("infer_cast: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
