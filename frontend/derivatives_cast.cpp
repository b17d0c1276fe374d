// kiln/frontend/derivatives_cast.cpp — the Cast family's derivatives (frontend/derivatives.h):
// a conversion's gradient converts back to the input's dtype; a clone's is the gradient; a
// detach has none (it is where a traced graph stops gradients); a write under NoGradGuard
// (no_grad_copy) passes it to the written tensor.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_convert(const GradArgs& a) { return one(a.grad().to(a.meta(0).dtype)); }
std::vector<Tensor> d_clone(const GradArgs& a) { return one(a.grad()); }
// The write is invisible to the gradient: it passes to the written tensor's earlier value.
std::vector<Tensor> d_no_grad_copy(const GradArgs& a) { return {a.grad(), Tensor()}; }

}  // namespace

void add_cast_derivatives(DerivativeTable& t) {
  t.rule(OpKind::convert_element_type, d_convert);
  t.rule(OpKind::clone, d_clone);
  t.none(OpKind::detach, "it stops gradients");
  t.rule(OpKind::no_grad_copy, d_no_grad_copy);
}

}  // namespace kiln::autograd
