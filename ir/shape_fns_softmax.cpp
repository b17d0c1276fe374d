// kiln/ir/shape_fns_softmax.cpp — shape functions of softmax, log_softmax and logsumexp.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

TensorType infer_softmax(OpKind op, const Types& in, const AttrList& attrs) {
  const Device device = common_device(op, in);
  const TensorType& x = in[0];
  switch (as_softmax(op)) {
    case SoftmaxOp::softmax:
    case SoftmaxOp::log_softmax: {
      const int64_t dim = attrs.get<int64_t>(op, "dim");
      check_dim(op, dim, x.rank(), /*allow_scalar=*/true);
      const ScalarType dt = attrs.get<ScalarType>(op, "dtype");
      const bool last = x.rank() == 0 || dim == x.rank() - 1;
      check_floating(op, dt, fmt::format("{}{}", op_name(op), last ? "_lastdim_kernel_impl" : "_kernel_impl"));
      return TensorType(dt, x.sizes, device);
    }
    case SoftmaxOp::logsumexp: {
      const ScalarType dt = is_floating_point(x.dtype) ? x.dtype : ScalarType::Float;
      return TensorType(dt, reduced_sizes(op, x, attrs.get<std::vector<int64_t>>(op, "dims"), attrs.get<bool>(op, "keepdim")),
                        device);
    }
  }
  internal_fail("infer_softmax: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
