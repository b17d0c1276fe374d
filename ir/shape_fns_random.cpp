// kiln/ir/shape_fns_random.cpp — shape functions of the random prims (uniform, normal): the
// type comes from the attributes.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

namespace kiln::ir::shape_detail {

TensorType infer_random(OpKind op, const Types& in, const AttrList& attrs) {
  (void)in;
  const ScalarType dtype = attrs.get<ScalarType>(op, "dtype");
  const Device device = attrs.get<Device>(op, "device");
  const auto& size = attrs.get<std::vector<Expr>>(op, "size");
  if (!is_floating_point(dtype)) fail(op_name(op), "expected a floating point dtype, got {}", dtype_name(dtype));
  for (const Expr& s : size) check_size_nonneg(op, s, "sizes");
  switch (as_random(op)) {
    case RandomOp::uniform: {
      const double low = attrs.get<double>(op, "low"), high = attrs.get<double>(op, "high");
      if (!(low <= high))
        fail(op_name(op), "expects to return a [from, to) range, but found from={} > to={}", low, high);
      return TensorType(dtype, size, device);
    }
    case RandomOp::normal: {
      const double std = attrs.get<double>(op, "std");
      if (!(std >= 0.0)) fail(op_name(op), "expects std >= 0.0, but found std {}", std);
      return TensorType(dtype, size, device);
    }
  }
  internal_fail("infer_random: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
