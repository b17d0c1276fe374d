// kiln/frontend/ops_cast.cpp — the Cast family's frontend: to (convert_element_type) and clone.
#include "frontend/dispatch.h"
#include "frontend/ops.h"

namespace kiln {

using ir::OpKind;

Tensor to(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  return dispatch1(OpKind::convert_element_type, {self}, {dtype});
}

Tensor clone(const Tensor& self) { return dispatch1(OpKind::clone, {self}); }

}  // namespace kiln
