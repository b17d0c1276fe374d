// kiln/frontend/ops_cast.cpp — the Cast family's frontend: to (convert_element_type) and clone;
// and no_grad_copy's decomposition.
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"

namespace kiln {

using ir::OpKind;

Tensor to(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  return dispatch1(OpKind::convert_element_type, {self}, {dtype});
}

Tensor clone(const Tensor& self) { return dispatch1(OpKind::clone, {self}); }

namespace decomp {

std::vector<Tensor> no_grad_copy(const DecompArgs& a) { return {dispatch1(OpKind::detach, {a.in(1)})}; }

}  // namespace decomp

}  // namespace kiln
