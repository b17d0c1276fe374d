// kiln/frontend/derivatives_ternary.cpp — the Ternary family's derivatives (frontend/derivatives.h).
//
// where(c, x, z) routes g to x where c holds and to z elsewhere (c is bool: none). clamp(x, lo,
// hi) gives x the gradient where lo < x < hi and each bound where it decided the result, as
// PyTorch's clamp_backward does (ties below).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_where(const GradArgs& a) {
  const Tensor& c = a.in(0);
  return {Tensor(), a.need(1) ? where(c, a.grad(), Scalar(0.0)) : Tensor(),
          a.need(2) ? where(c, Scalar(0.0), a.grad()) : Tensor()};
}

// At x equal to a bound, PyTorch shares g half and half between x and a tensor bound, and
// gives x nothing against a scalar bound (clamp(x, 0.0), hardtanh, relu6). The frontend records
// clamp with tensor bounds as maximum and minimum, which share ties, and clamp with scalar bounds
// as this prim (frontend/ops_ternary.cpp); a bound of the prim that wants a gradient (a graph
// written by hand) is taken for a tensor.
std::vector<Tensor> d_clamp(const GradArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& lo = a.in(1);
  const Tensor& hi = a.in(2);
  const Tensor g = a.grad();
  const Tensor half = g * 0.5;
  std::vector<Tensor> out(3);
  if (a.need(0)) {
    Tensor dx = where(logical_and(gt(x, lo), lt(x, hi)), g, Scalar(0.0));
    if (a.need(1)) dx = where(eq(x, lo), half, dx);
    if (a.need(2)) dx = where(eq(x, hi), half, dx);
    out[0] = dx;
  }
  if (a.need(1)) out[1] = sum_to(where(lt(x, lo), g, where(eq(x, lo), half, Scalar(0.0))), a.meta(1).sizes);
  if (a.need(2)) out[2] = sum_to(where(gt(x, hi), g, where(eq(x, hi), half, Scalar(0.0))), a.meta(2).sizes);
  return out;
}

}  // namespace

void add_ternary_derivatives(DerivativeTable& t) {
  t.rule(OpKind::where, d_where, bit(0));
  t.rule(OpKind::clamp, d_clamp, bit(0) | bit(1) | bit(2));
}

}  // namespace kiln::autograd
