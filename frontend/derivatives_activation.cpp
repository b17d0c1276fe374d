// kiln/frontend/derivatives_activation.cpp — the Activation family's derivatives
// (frontend/derivatives.h).
//
// relu has a rule of its own, PyTorch's threshold_backward on the saved result: g where the
// result is above 0 (NaN passes g on, as in PyTorch), 0 elsewhere, x = 0 included. Its
// decomposition is a clamp against the scalar 0 and +inf, whose rule would also stop g at
// x = +inf; the rule is also one comparison instead of two in a training step's backward.
// hardsigmoid has one too, PyTorch's hardsigmoid_backward: g / 6 strictly inside (-3, 3) and 0
// elsewhere (the bounds and NaN included, as its decomposition's scalar clamp gives), with 1/6
// rounded to f32 in every dtype as PyTorch's kernels take it (through the decomposition an f64
// gradient was g / 6 exactly, about 3e-8 relative from PyTorch's; the backward fuzzer met it at
// seed 6510885).
// The other activations are differentiated through their decompositions.
#include "frontend/decompositions_detail.h"
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_relu(const GradArgs& a) {
  const Tensor g = a.grad(0);
  return one(where(le(a.out(0), Scalar(0.0)), Scalar(0.0), g).to(g.dtype()));
}

std::vector<Tensor> d_hardsigmoid(const GradArgs& a) {
  const Tensor g = a.grad(0);
  const Tensor& x = a.in(0);
  const Tensor inside = logical_and(gt(x, Scalar(-3.0)), lt(x, Scalar(3.0)));
  constexpr double kOneSixth = static_cast<double>(1.0f / 6.0f);
  // f16/bf16 in f32, rounded once (a Scalar operand would take g's dtype and round 1/6 to it).
  const Tensor wide = g.to(decomp::opmath_dtype(g.dtype()));
  return one(where(inside, wide * Scalar(kOneSixth), Scalar(0.0)).to(g.dtype()));
}

}  // namespace

void add_activation_derivatives(DerivativeTable& t) {
  t.rule(OpKind::relu, d_relu, kNone, bit(0));
  t.rule(OpKind::hardsigmoid, d_hardsigmoid, bit(0));
}

}  // namespace kiln::autograd
