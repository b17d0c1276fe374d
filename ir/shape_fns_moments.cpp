// kiln/ir/shape_fns_moments.cpp — shape functions of mean and var (dims normalized by the frontend).
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

std::vector<Expr> reduced_sizes(OpKind op, const TensorType& t, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<bool> reduce(static_cast<size_t>(t.rank()), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    check_dim(op, dims[i], t.rank(), /*allow_scalar=*/true);
    if (i > 0 && dims[i] <= dims[i - 1]) fail(op_name(op), "dims must be sorted and unique, got {}", ints_str(dims));
    if (t.rank() > 0) reduce[static_cast<size_t>(dims[i])] = true;
  }
  std::vector<Expr> out;
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (!reduce[static_cast<size_t>(d)]) out.push_back(t.sizes[d]);
    else if (keepdim) out.emplace_back(1);
  }
  return out;
}

TensorType infer_moments(OpKind op, const Types& in, const AttrList& attrs) {
  const Device device = common_device(op, in);
  const TensorType& x = in[0];
  switch (as_moments(op)) {
    case MomentsOp::mean: {
      const ScalarType dt = attrs.get<ScalarType>(op, "dtype");
      if (!is_floating_point(dt))
        fail(op_name(op),
             "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
             "Got: {}",
             c10_type_name(dt));
      return TensorType(dt, reduced_sizes(op, x, attrs.get<std::vector<int64_t>>(op, "dims"), attrs.get<bool>(op, "keepdim")),
                        device);
    }
    case MomentsOp::var:
      if (!is_floating_point(x.dtype)) fail(op_name(op), "std and var only support floating point and complex dtypes");
      return TensorType(x.dtype, reduced_sizes(op, x, attrs.get<std::vector<int64_t>>(op, "dims"), attrs.get<bool>(op, "keepdim")),
                        device);
  }
  internal_fail("infer_moments: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
