// kiln/frontend/derivatives_ternary.cpp — the Ternary family's derivatives (frontend/derivatives.h).
//
// where(c, x, z) routes g to x where c holds and to z elsewhere (c is bool: none). clamp(x, lo,
// hi) with tensor bounds gives x the gradient where lo <= x <= hi, and each bound where it
// decided the result, as PyTorch's clamp_backward does.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_where(const GradArgs& a) {
  const Tensor& c = a.in(0);
  return {Tensor(), a.need(1) ? where(c, a.grad(), Scalar(0.0)) : Tensor(),
          a.need(2) ? where(c, Scalar(0.0), a.grad()) : Tensor()};
}

std::vector<Tensor> d_clamp(const GradArgs& a) {
  const Tensor& x = a.in(0);
  const Tensor& lo = a.in(1);
  const Tensor& hi = a.in(2);
  const Tensor zero = a.meta(0).zeros();
  return {a.need(0) ? where(logical_and(ge(x, lo), le(x, hi)), a.grad(), zero) : Tensor(),
          a.need(1) ? where(lt(x, lo), a.grad(), zero) : Tensor(),
          a.need(2) ? where(gt(x, hi), a.grad(), zero) : Tensor()};
}

}  // namespace

void add_ternary_derivatives(DerivativeTable& t) {
  t.rule(OpKind::where, d_where, bit(0));
  t.rule(OpKind::clamp, d_clamp, bit(0) | bit(1) | bit(2));
}

}  // namespace kiln::autograd
