// kiln/frontend/derivatives_activation.cpp — the Activation family's derivatives
// (frontend/derivatives.h).
//
// relu has a rule of its own, PyTorch's threshold_backward on the saved result: g where the
// result is above 0 (NaN passes g on, as in PyTorch), 0 elsewhere, x = 0 included. Its
// decomposition is a clamp against the scalar 0 and +inf, whose rule would also stop g at
// x = +inf; the rule is also one comparison instead of two in a training step's backward.
// The other activations are differentiated through their decompositions.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_relu(const GradArgs& a) {
  const Tensor g = a.grad(0);
  return one(where(le(a.out(0), Scalar(0.0)), Scalar(0.0), g).to(g.dtype()));
}

}  // namespace

void add_activation_derivatives(DerivativeTable& t) { t.rule(OpKind::relu, d_relu, kNone, bit(0)); }

}  // namespace kiln::autograd
