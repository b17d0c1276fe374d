// kiln/frontend/ops_attention.cpp — the Attention family (frontend/ops_attention.h):
// scaled_dot_product_attention and its decomposition, the math path. Without dropout the op is
// recorded whole (the cpu backend runs it as one library kernel, runtime/cpu/extern_attention.cpp;
// other backends decompose it).
#include "frontend/ops_attention.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/symbolic.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_dropout.h"
#include "frontend/ops_softmax.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <cmath>
#include <limits>
#include <vector>

namespace kiln {

namespace {

bool present(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

// The checks attention and its backward make of q, k, v (of one dtype) and the mask, as PyTorch's.
void check_operands(std::string_view op, const Tensor& query, const Tensor& key, const Tensor& value,
                    const std::optional<Tensor>& attn_mask, bool is_causal) {
  if (!is_floating_point(query.dtype()))
    fail(op, "expected floating-point query, key and value, but got {}", c10_type_name(query.dtype()));
  if (query.dim() < 2 || key.dim() < 2 || value.dim() < 2)
    fail(op, "expected query, key and value of at least 2 dims ([..., L, E]), but got {}, {} and {}",
         shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  if (!ir::sym_eq(sym_size(query, -1), sym_size(key, -1)) || !ir::sym_eq(sym_size(key, -2), sym_size(value, -2)))
    fail(op, "query {} and key {} must agree on the embedding dim, and key and value {} on the sequence length",
         shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  if (is_causal && present(attn_mask))
    fail(op, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  if (present(attn_mask) && attn_mask->dtype() != ScalarType::Bool && attn_mask->dtype() != query.dtype())
    fail(op, "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and "
             "query.dtype: {} instead.", c10_type_name(attn_mask->dtype()), c10_type_name(query.dtype()));
}

// softmax(q @ k^T * scale + mask) in q's dtype, with PyTorch's rule that a masked row seeing no
// key is zeros; the mask (bool: which keys each query attends to; else added) may be null.
Tensor attention_probs(const Tensor& q, const Tensor& k, const Tensor* mask, bool is_causal, double s) {
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  Tensor scores = matmul(q, k.transpose(-2, -1)) * s;
  std::optional<Tensor> allowed;  // bool [.., L, S]: which keys each query attends to
  if (is_causal) {
    const Tensor i = sym_iota(sym_size(q, -2), kLong, q.device()).unsqueeze(1);
    const Tensor j = sym_iota(sym_size(k, -2), kLong, q.device()).unsqueeze(0);
    allowed = le(j, i);
  } else if (mask) {
    if (mask->dtype() == ScalarType::Bool) allowed = *mask;
    else scores = scores + mask->to(q.dtype());
  }
  if (allowed) scores = masked_fill(scores, logical_not(*allowed), kNegInf);
  Tensor probs = softmax(scores, -1);
  // A row with every key masked (all -inf) would be NaN: PyTorch's math kernel gives zeros.
  if (mask) probs = masked_fill(probs, all(eq(scores, kNegInf), -1, /*keepdim=*/true), 0);
  return probs;
}

// The math path: the probabilities, dropout on them, and their product with v.
Tensor sdpa_math(const Tensor& query, const Tensor& k, const Tensor& v, const std::optional<Tensor>& attn_mask,
                 double dropout_p, bool is_causal, double s) {
  Tensor probs = attention_probs(query, k, present(attn_mask) ? &*attn_mask : nullptr, is_causal, s);
  if (dropout_p > 0) probs = dropout(probs, dropout_p, true);
  return matmul(probs, v);
}


}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  const std::string_view op = "scaled_dot_product_attention";
  if (query.dtype() != key.dtype() || query.dtype() != value.dtype())
    fail(op, "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and "
             "value.dtype: {} instead.", c10_type_name(query.dtype()), c10_type_name(key.dtype()),
         c10_type_name(value.dtype()));
  check_operands(op, query, key, value, attn_mask, is_causal);
  Tensor k = key, v = value;
  if (enable_gqa && query.dim() >= 3 && key.size(-3) != query.size(-3)) {
    const int64_t hq = query.size(-3), hk = key.size(-3);
    if (hk == 0 || hq % hk != 0)
      fail(op, "number of heads in key and value ({}) must divide the number of query heads ({}) with enable_gqa",
           hk, hq);
    auto share = [&](const Tensor& t) {  // [..., hk, S, E] -> [..., hk * (hq / hk), S, E], each head repeated
      std::vector<int64_t> grown = t.sizes().vec();
      grown.insert(grown.end() - 2, hq / hk);
      std::vector<int64_t> merged = t.sizes().vec();
      merged[merged.size() - 3] = hq;
      return t.unsqueeze(-3).expand(grown).reshape(merged);
    };
    k = share(key);
    v = share(value);
  }
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  // Without dropout the op is recorded whole (the cpu backend fuses it; others decompose it).
  if (dropout_p > 0) return sdpa_math(query, k, v, attn_mask, dropout_p, is_causal, s);
  std::vector<Tensor> ins{query, k, v};
  if (present(attn_mask)) ins.push_back(*attn_mask);
  return dispatch1(ir::OpKind::scaled_dot_product_attention, std::move(ins), {is_causal, s});
}

AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& query, const Tensor& key,
                                                     const Tensor& value, const Tensor& out,
                                                     const std::optional<Tensor>& attn_mask, bool is_causal,
                                                     double scale) {
  const std::string_view op = "scaled_dot_product_attention_backward";
  for (const Tensor* t : {&grad_out, &query, &key, &value, &out})
    if (!t->defined()) fail(op, "received an undefined tensor");
  for (const Tensor* t : {&grad_out, &key, &value, &out})
    if (t->dtype() != query.dtype())
      fail(op, "expected grad_out, query, key, value and out of one dtype, got {}, {}, {}, {} and {}",
           c10_type_name(grad_out.dtype()), c10_type_name(query.dtype()), c10_type_name(key.dtype()),
           c10_type_name(value.dtype()), c10_type_name(out.dtype()));
  check_operands(op, query, key, value, attn_mask, is_causal);
  // out is [batch..., L, Ev]: the batch dims q, k and v broadcast to and the scores' rows, with
  // the mask broadcast over them as the forward's decomposition shapes it; grad_out is out's shape.
  auto batch_of = [](const Tensor& t) {
    std::vector<ir::Expr> s = sym_sizes(t);
    s.resize(s.size() - 2);
    return s;
  };
  std::vector<ir::Expr> want = sym_broadcast_shapes(op, sym_broadcast_shapes(op, batch_of(query), batch_of(key)),
                                                    batch_of(value));
  want.push_back(sym_size(query, -2));
  want.push_back(sym_size(key, -2));
  if (present(attn_mask)) want = sym_broadcast_shapes(op, want, sym_sizes(*attn_mask));
  want.back() = sym_size(value, -1);
  if (!sym_same_sizes(sym_sizes(out), want) || !sym_same_sizes(sym_sizes(grad_out), want))
    fail(op, "expected out and grad_out of the attention's output size {} (query {}, key {}, value {}), got {} and {}",
         ir::str(want), shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()),
         shape_str(out.sizes()), shape_str(grad_out.sizes()));
  std::vector<Tensor> ins{grad_out, query, key, value, out};
  if (present(attn_mask)) ins.push_back(*attn_mask);
  std::vector<Tensor> r =
      dispatch(OpCall{ir::OpKind::scaled_dot_product_attention_backward, std::move(ins), ir::AttrList({is_causal, scale})});
  return {r.at(0), r.at(1), r.at(2)};
}

namespace decomp {
std::vector<Tensor> scaled_dot_product_attention(const DecompArgs& a) {
  const std::optional<Tensor> mask = a.opt(3) ? std::optional<Tensor>(*a.opt(3)) : std::nullopt;
  return {sdpa_math(a.in(0), a.in(1), a.in(2), mask, 0.0, a.attr<bool>("is_causal"), a.attr<double>("scale"))};
}

// FlashAttention's backward with the probabilities in memory. With P = softmax(q k^T s + mask),
// O = P v and g the output's gradient:
//   dv = P^T g,   dP = g v^T,   dS = P * (dP - rowsum(g * O)),
//   dq = dS k s,  dk = dS^T q s,  and an added mask's gradient is dS.
// A row that sees no key has P = 0 (its output is zeros) and gives nothing. f16/bf16 compute in
// f32, as the forward does.
AttentionBackwardMath attention_backward_math(const Tensor& grad, const Tensor& query, const Tensor& key,
                                              const Tensor& value, const Tensor& out, const Tensor* mask,
                                              bool is_causal, double s) {
  const ScalarType in_t = query.dtype(), t = opmath_dtype(in_t);
  const Tensor q = query.to(t), k = key.to(t), v = value.to(t), o = out.to(t), g = grad.to(t);
  const Tensor p = attention_probs(q, k, mask, is_causal, s);
  const Tensor dp = matmul(g, v.transpose(-2, -1));
  const Tensor ds = p * (dp - sum(g * o, {-1}, /*keepdim=*/true));
  return {(matmul(ds, k) * s).to(in_t), (matmul(ds.transpose(-2, -1), q) * s).to(in_t),
          matmul(p.transpose(-2, -1), g).to(in_t), ds};
}

std::vector<Tensor> scaled_dot_product_attention_backward(const DecompArgs& a) {
  AttentionBackwardMath m = attention_backward_math(a.in(0), a.in(1), a.in(2), a.in(3), a.in(4), a.opt(5),
                                                    a.attr<bool>("is_causal"), a.attr<double>("scale"));
  return {m.dq, m.dk, m.dv};
}
}  // namespace decomp

}  // namespace kiln
