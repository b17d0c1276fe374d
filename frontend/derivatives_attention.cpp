// kiln/frontend/derivatives_attention.cpp — the Attention family's derivative (frontend/derivatives.h).
//
// scaled_dot_product_attention has a rule of its own, the backward of FlashAttention: the tape
// keeps q, k, v, the mask and the output, not the [..., L, S] probabilities, and the backward
// computes them again. The gradients of q, k and v are one node, scaled_dot_product_attention_backward
// (frontend/ops_attention.h), which a cuda program runs on a kernel that never writes the
// probabilities; an added mask's gradient is dS itself, [..., L, S], so a rule that needs it takes
// the math with dS in memory (decomp::attention_backward_math) instead. Each gradient is summed to
// its input's shape where batch dims broadcast.
#include "frontend/derivatives_detail.h"

#include "frontend/decompositions_detail.h"
#include "frontend/ops_attention.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_sdpa(const GradArgs& a) {
  const bool causal = a.attr<bool>("is_causal");
  const double s = a.attr<double>("scale");
  const bool has_mask = a.input_meta.size() > 3;
  Tensor dq, dk, dv, dmask;
  if (has_mask && a.need(3) && a.in(3).dtype() != ScalarType::Bool) {
    decomp::AttentionBackwardMath m =
        decomp::attention_backward_math(a.grad(0), a.in(0), a.in(1), a.in(2), a.out(0), &a.in(3), causal, s);
    dq = m.dq, dk = m.dk, dv = m.dv, dmask = m.ds;
  } else {
    const std::optional<Tensor> mask = has_mask ? std::optional<Tensor>(a.in(3)) : std::nullopt;
    AttentionGrads r = scaled_dot_product_attention_backward(a.grad(0), a.in(0), a.in(1), a.in(2), a.out(0), mask,
                                                             causal, s);
    dq = r.query, dk = r.key, dv = r.value;
  }
  std::vector<Tensor> out(a.input_meta.size());
  auto back = [&](const Tensor& x, size_t i) { return sum_to(x, a.meta(i).sizes).to(a.meta(i).dtype); };
  if (a.need(0)) out[0] = back(dq, 0);
  if (a.need(1)) out[1] = back(dk, 1);
  if (a.need(2)) out[2] = back(dv, 2);
  if (dmask.defined()) out[3] = back(dmask, 3);
  return out;
}

}  // namespace

void add_attention_derivatives(DerivativeTable& t) {
  // Saves q, k, v, the mask and the output (the probabilities are computed again).
  t.rule(OpKind::scaled_dot_product_attention, d_sdpa, bit(0) | bit(1) | bit(2) | bit(3), bit(0));
}

}  // namespace kiln::autograd
