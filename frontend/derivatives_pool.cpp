// kiln/frontend/derivatives_pool.cpp — the Pool family's derivatives (frontend/derivatives.h).
//
// max_pool2d/3d_with_indices route each output's gradient to the input element its index
// names (a scatter-add over the flattened spatial dims, so overlapping windows add up), as
// PyTorch's max_pool2d_with_indices_backward does: one element per window gets the gradient,
// even where several tie for the maximum. The average and adaptive pools, col2im and the
// pads are linear and are differentiated through their decompositions.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_max_pool_with_indices(const GradArgs& a) {
  const size_t spatial = a.attr<std::vector<int64_t>>("kernel_size").size();
  const std::vector<ir::Expr>& in_sizes = a.meta(0).sizes;
  const size_t lead = in_sizes.size() - spatial;
  const Tensor g = a.grad(0), idx = a.out(1);
  std::vector<ir::Expr> flat_in(in_sizes.begin(), in_sizes.begin() + static_cast<std::ptrdiff_t>(lead));
  std::vector<ir::Expr> flat_out = flat_in;
  flat_in.push_back(sym_product({in_sizes.begin() + static_cast<std::ptrdiff_t>(lead), in_sizes.end()}));
  const std::vector<ir::Expr> out_sizes = sym_sizes(idx);
  flat_out.push_back(sym_product({out_sizes.begin() + static_cast<std::ptrdiff_t>(lead), out_sizes.end()}));
  const Tensor zero = sym_full(flat_in, 0, g.dtype(), g.device());
  const Tensor r = zero.scatter_add(static_cast<int64_t>(lead), sym_reshape(idx, flat_out),
                                    sym_reshape(g.contiguous(), flat_out));
  return one(sym_reshape(r, in_sizes));
}

}  // namespace

void add_pool_derivatives(DerivativeTable& t) {
  t.rule(OpKind::max_pool2d_with_indices, d_max_pool_with_indices, kNone, bit(1));
  t.rule(OpKind::max_pool3d_with_indices, d_max_pool_with_indices, kNone, bit(1));
}

}  // namespace kiln::autograd
