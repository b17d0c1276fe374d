// kiln/ir/shape_fns_sort.cpp — shape functions of argsort (sort and topk are shaped by their
// decompositions).
#include "base/error.h"
#include "ir/shape_fns_detail.h"

namespace kiln::ir::shape_detail {

TensorType infer_sort(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_sort(op)) {
    case SortOp::argsort: {
      check_dim(op, attrs.get<int64_t>(op, "dim"), in[0].rank(), /*allow_scalar=*/true);
      TensorType out = in[0];
      out.dtype = ScalarType::Int64;
      return out;
    }
    case SortOp::sort:
    case SortOp::topk: break;  // shaped by their decomposition (infer_types never asks)
  }
  internal_fail("infer_sort: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
