// kiln/frontend/derivatives_dropout.cpp — the Dropout family's derivative (frontend/derivatives.h):
// native_dropout's input gradient is g where the mask kept an element, scaled by 1 / (1 - p) in
// training (0 for p = 1, as PyTorch's native_dropout_backward), and g itself in evaluation. The
// mask is saved, not redrawn.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_native_dropout(const GradArgs& a) {
  const double p = a.attr<double>("p");
  if (!a.attr<bool>("train")) return one(a.grad(0));
  const double scale = p == 1 ? 0.0 : 1 / (1 - p);
  const Tensor g = a.grad(0);
  return one(where(a.out(1), g * scale, Scalar(0.0)).to(g.dtype()));
}

}  // namespace

void add_dropout_derivatives(DerivativeTable& t) {
  t.rule(OpKind::native_dropout, d_native_dropout, kNone, bit(1));
}

}  // namespace kiln::autograd
