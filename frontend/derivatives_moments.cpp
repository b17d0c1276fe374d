// kiln/frontend/derivatives_moments.cpp — the Moments family's derivatives (frontend/derivatives.h).
//
//   mean  g broadcast back over the reduced dims and divided by their element count, in the
//         result's dtype, then cast to the input's: mean(x, dtype=bf16) of an f32 x has a bf16
//         gradient (1/3 as 0.333984375), as PyTorch's mean_backward gives it before its cast.
// var differentiates through its decomposition.
#include "frontend/derivatives_detail.h"

namespace kiln::autograd {

namespace {

std::vector<Tensor> d_mean(const GradArgs& a) {
  const std::vector<int64_t>& dims = a.attr<std::vector<int64_t>>("dims");
  const TensorMeta& m = a.meta(0);
  ir::Expr n(1);
  for (int64_t d : dims) n = n * (m.sizes.empty() ? ir::Expr(1) : m.sizes[static_cast<size_t>(d)]);
  const Tensor g = expand_reduced(a.grad(), m, dims, a.attr<bool>("keepdim"));
  // An empty reduction has no elements to take a gradient: g is empty too, whatever n.
  const std::optional<int64_t> c = n.maybe_const();
  const Tensor q = c ? (*c == 0 ? g : g / Scalar(*c)) : g / sym_scalar_tensor(n, ScalarType::Int64, g.device());
  return one(q.to(a.attr<ScalarType>("dtype")).to(m.dtype));
}

}  // namespace

void add_moments_derivatives(DerivativeTable& t) { t.rule(ir::OpKind::mean, d_mean); }

}  // namespace kiln::autograd
