// kiln/frontend/derivatives_attention.cpp — the Attention family's derivative (frontend/derivatives.h).
//
// scaled_dot_product_attention has a rule of its own, the backward of FlashAttention: the tape
// keeps q, k, v, the mask and the output, not the [..., L, S] probabilities, and the backward
// computes them again (one more q @ k^T). With P = softmax(q k^T s + mask), O = P v and g the
// output's gradient:
//   dv = P^T g,   dP = g v^T,   dS = P * (dP - rowsum(g * O)),
//   dq = dS k s,  dk = dS^T q s,  and an additive mask's gradient is dS;
// each summed to its input's shape where batch dims broadcast. A row that sees no key has P = 0
// (its output is zeros) and gives nothing. f16/bf16 compute in f32, as the forward does.
#include "frontend/derivatives_detail.h"

#include "frontend/ops_softmax.h"

#include <limits>

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_sdpa(const GradArgs& a) {
  const bool causal = a.attr<bool>("is_causal");
  const double s = a.attr<double>("scale");
  const ScalarType in_t = a.meta(0).dtype;
  const ScalarType t = (in_t == ScalarType::Half || in_t == ScalarType::BFloat16) ? ScalarType::Float : in_t;
  const Tensor q = a.in(0).to(t), k = a.in(1).to(t), v = a.in(2).to(t);
  const Tensor o = a.out(0).to(t), g = a.grad(0).to(t);
  const bool has_mask = a.input_meta.size() > 3;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;
  std::optional<Tensor> allowed;
  if (causal) {
    const Tensor i = sym_iota(sym_size(q, -2), ScalarType::Int64, q.device()).unsqueeze(1);
    const Tensor j = sym_iota(sym_size(k, -2), ScalarType::Int64, q.device()).unsqueeze(0);
    allowed = le(j, i);
  } else if (has_mask) {
    const Tensor& m = a.in(3);
    if (m.dtype() == ScalarType::Bool) allowed = m;
    else scores = scores + m.to(t);
  }
  if (allowed) scores = masked_fill(scores, logical_not(*allowed), kNegInf);
  Tensor p = softmax(scores, -1);
  if (has_mask) p = masked_fill(p, all(eq(scores, kNegInf), -1, /*keepdim=*/true), 0);
  const Tensor dp = matmul(g, v.transpose(-2, -1));
  const Tensor ds = p * (dp - sum(g * o, {-1}, /*keepdim=*/true));
  std::vector<Tensor> out(a.input_meta.size());
  auto back = [&](const Tensor& x, size_t i) { return sum_to(x, a.meta(i).sizes).to(a.meta(i).dtype); };
  if (a.need(0)) out[0] = back(matmul(ds, k) * s, 0);
  if (a.need(1)) out[1] = back(matmul(ds.transpose(-2, -1), q) * s, 1);
  if (a.need(2)) out[2] = back(matmul(p.transpose(-2, -1), g), 2);
  if (has_mask && a.need(3)) out[3] = back(ds, 3);
  return out;
}

}  // namespace

void add_attention_derivatives(DerivativeTable& t) {
  // Saves q, k, v, the mask and the output (the probabilities are computed again).
  t.rule(OpKind::scaled_dot_product_attention, d_sdpa, bit(0) | bit(1) | bit(2) | bit(3), bit(0));
}

}  // namespace kiln::autograd
