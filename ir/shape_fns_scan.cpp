// kiln/ir/shape_fns_scan.cpp — shape functions of the scans (cumsum, cummax, ...): the input's type.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

namespace kiln::ir::shape_detail {

TensorType infer_scan(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_scan(op)) {
    case ScanOp::cumsum:
    case ScanOp::cumprod:
    case ScanOp::cummax:
    case ScanOp::cummin:
    case ScanOp::logcumsumexp:
      check_dim(op, attrs.get<int64_t>(op, "dim"), in[0].rank(), /*allow_scalar=*/true);
      return in[0];
  }
  internal_fail("infer_scan: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
