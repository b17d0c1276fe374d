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

// The math path: softmax(q @ k^T * scale + mask) @ v, with PyTorch's rule that a masked row
// seeing no key is zeros, and dropout on the probabilities.
Tensor sdpa_math(const Tensor& query, const Tensor& k, const Tensor& v, const std::optional<Tensor>& attn_mask,
                 double dropout_p, bool is_causal, double s) {
  Tensor scores = matmul(query, k.transpose(-2, -1)) * s;
  std::optional<Tensor> allowed;  // bool [.., L, S]: which keys each query attends to
  if (is_causal) {
    const Tensor i = sym_iota(sym_size(query, -2), kLong, query.device()).unsqueeze(1);
    const Tensor j = sym_iota(sym_size(k, -2), kLong, query.device()).unsqueeze(0);
    allowed = le(j, i);
  } else if (present(attn_mask)) {
    if (attn_mask->dtype() == ScalarType::Bool) allowed = *attn_mask;
    else scores = scores + *attn_mask;
  }
  if (allowed) scores = masked_fill(scores, logical_not(*allowed), -std::numeric_limits<double>::infinity());
  Tensor probs = softmax(scores, -1);
  // A row with every key masked (all -inf) would be NaN: PyTorch's math kernel gives zeros.
  if (present(attn_mask))
    probs = masked_fill(probs, all(eq(scores, -std::numeric_limits<double>::infinity()), -1, /*keepdim=*/true), 0);
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

namespace decomp {
std::vector<Tensor> scaled_dot_product_attention(const DecompArgs& a) {
  const std::optional<Tensor> mask = a.opt(3) ? std::optional<Tensor>(*a.opt(3)) : std::nullopt;
  return {sdpa_math(a.in(0), a.in(1), a.in(2), mask, 0.0, a.attr<bool>("is_causal"), a.attr<double>("scale"))};
}
}  // namespace decomp

}  // namespace kiln
