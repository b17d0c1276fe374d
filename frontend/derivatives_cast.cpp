// kiln/frontend/derivatives_cast.cpp — the Cast family's derivatives (frontend/derivatives.h):
// a conversion's gradient converts back to the input's dtype; a clone's is the gradient; a
// detach has none (it is where a traced graph stops gradients).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_convert(const GradArgs& a) { return one(a.grad().to(a.meta(0).dtype)); }
std::vector<Tensor> d_clone(const GradArgs& a) { return one(a.grad()); }

}  // namespace

void add_cast_derivatives(DerivativeTable& t) {
  t.rule(OpKind::convert_element_type, d_convert);
  t.rule(OpKind::clone, d_clone);
  t.none(OpKind::detach, "it stops gradients");
}

}  // namespace kiln::autograd
