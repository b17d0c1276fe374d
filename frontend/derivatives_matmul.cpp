// kiln/frontend/derivatives_matmul.cpp — the Matmul family's derivatives (frontend/derivatives.h):
// for c = a @ b, da = g @ b^T and db = a^T @ g (batched for bmm).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_mm(const GradArgs& a) {
  return {a.need(0) ? mm(a.grad(), a.in(1).t()) : Tensor(), a.need(1) ? mm(a.in(0).t(), a.grad()) : Tensor()};
}

std::vector<Tensor> d_bmm(const GradArgs& a) {
  return {a.need(0) ? bmm(a.grad(), a.in(1).transpose(1, 2)) : Tensor(),
          a.need(1) ? bmm(a.in(0).transpose(1, 2), a.grad()) : Tensor()};
}

}  // namespace

void add_matmul_derivatives(DerivativeTable& t) {
  t.rule(OpKind::mm, d_mm, bit(0) | bit(1), kNone, bit(0) | bit(1));
  t.rule(OpKind::bmm, d_bmm, bit(0) | bit(1), kNone, bit(0) | bit(1));
}

}  // namespace kiln::autograd
