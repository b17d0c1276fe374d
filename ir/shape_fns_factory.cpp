// kiln/ir/shape_fns_factory.cpp — shape functions of the factories (iota, full): the type
// comes from the attributes.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

namespace kiln::ir::shape_detail {

TensorType infer_factory(OpKind op, const Types& in, const AttrList& attrs) {
  (void)in;
  const ScalarType dtype = attrs.get<ScalarType>(op, "dtype");
  const Device device = attrs.get<Device>(op, "device");
  switch (as_factory(op)) {
    case FactoryOp::iota: {
      if (dtype == ScalarType::Bool)
        fail(op_name(op), "dtype bool is not supported (PyTorch: \"arange_cpu\" not implemented for 'Bool')");
      const Expr& length = attrs.get<Expr>(op, "length");
      check_size_nonneg(op, length, "length");
      return TensorType(dtype, {length}, device);
    }
    case FactoryOp::full: {
      const auto& size = attrs.get<std::vector<Expr>>(op, "size");
      for (const Expr& s : size) check_size_nonneg(op, s, "sizes");
      return TensorType(dtype, size, device);
    }
  }
  internal_fail("infer_factory: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
