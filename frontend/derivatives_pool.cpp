// kiln/frontend/derivatives_pool.cpp — the Pool family's derivatives (frontend/derivatives.h).
//
// The 2-D poolings' rules record Core ATen's backward nodes (frontend/ops_pool.h), so that a
// backend at the core level sees a training step's pooling gradients whole:
//   - max_pool2d_with_indices: max_pool2d_with_indices_backward routes each output's gradient
//     to the input element its index names (overlapping windows add up). As in PyTorch, one
//     element per window gets the gradient, even where several tie for the maximum;
//   - avg_pool2d: avg_pool2d_backward;
//   - adaptive_avg_pool2d: adaptive_avg_pool2d_backward (ATen's _adaptive_avg_pool2d_backward).
// max_pool3d_with_indices scatters the same way without a node. The 3-D average pools, col2im
// and the pads are linear and are differentiated through their decompositions.
#include "frontend/derivatives_detail.h"
#include "frontend/ops_pool.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

using Ints = std::vector<int64_t>;

std::vector<Tensor> d_max_pool2d_with_indices(const GradArgs& a) {
  return one(max_pool2d_with_indices_backward(a.grad(0), a.in(0), a.attr<Ints>("kernel_size"), a.attr<Ints>("stride"),
                                              a.attr<Ints>("padding"), a.attr<Ints>("dilation"),
                                              a.attr<bool>("ceil_mode"), a.out(1)));
}

std::vector<Tensor> d_max_pool3d_with_indices(const GradArgs& a) {
  return one(max_pool3d_with_indices_backward(a.grad(0), a.in(0), a.out(1)));
}

std::vector<Tensor> d_avg_pool2d(const GradArgs& a) {
  const int64_t divisor = a.attr<int64_t>("divisor_override");
  return one(avg_pool2d_backward(a.grad(0), a.in(0), a.attr<Ints>("kernel_size"), a.attr<Ints>("stride"),
                                 a.attr<Ints>("padding"), a.attr<bool>("ceil_mode"), a.attr<bool>("count_include_pad"),
                                 divisor == 0 ? std::nullopt : std::optional<int64_t>(divisor)));
}

std::vector<Tensor> d_adaptive_avg_pool2d(const GradArgs& a) {
  return one(adaptive_avg_pool2d_backward(a.grad(0), a.in(0)));
}

}  // namespace

void add_pool_derivatives(DerivativeTable& t) {
  // The input is saved for its shape, as PyTorch's tape saves self.
  t.rule(OpKind::max_pool2d_with_indices, d_max_pool2d_with_indices, bit(0), bit(1));
  t.rule(OpKind::max_pool3d_with_indices, d_max_pool3d_with_indices, bit(0), bit(1));
  t.rule(OpKind::avg_pool2d, d_avg_pool2d, bit(0));
  t.rule(OpKind::adaptive_avg_pool2d, d_adaptive_avg_pool2d, bit(0));
}

}  // namespace kiln::autograd
