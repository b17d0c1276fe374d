// kiln/frontend/derivatives_shape.cpp — the Shape family's derivatives (frontend/derivatives.h):
// cat splits g along the dim into its inputs' extents; constant_pad crops g by padding it with
// the negated pads (PyTorch's constant_pad_nd backward).
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_cat(const GradArgs& a) {
  const int64_t d = a.attr<int64_t>("dim");
  std::vector<Tensor> out;
  ir::Expr at = 0;
  const Tensor g = a.grad();
  for (size_t i = 0; i < a.input_meta.size(); ++i) {
    const ir::Expr len = a.meta(i).sizes[static_cast<size_t>(d)];
    if (a.need(i)) {
      if (at.is_const() && len.is_const())
        out.push_back(g.narrow(d, at.as_const(), len.as_const()));
      else
        out.push_back(dispatch1(OpKind::slice, {g}, {d, at, at + len, ir::Expr(1)}));
    } else {
      out.emplace_back();
    }
    at = at + len;
  }
  return out;
}

std::vector<Tensor> d_constant_pad(const GradArgs& a) {
  std::vector<int64_t> pad = a.attr<std::vector<int64_t>>("pad");
  for (int64_t& p : pad) p = -p;
  return one(constant_pad_nd(a.grad(), pad, 0));
}

}  // namespace

void add_shape_derivatives(DerivativeTable& t) {
  t.rule(OpKind::cat, d_cat);
  t.rule(OpKind::constant_pad, d_constant_pad);
}

}  // namespace kiln::autograd
