// kiln/frontend/ops_attention.h — the Attention family: scaled_dot_product_attention, as
// torch.nn.functional's.
#pragma once

#include "frontend/tensor.h"
#include <optional>

namespace kiln {

// softmax(q k^T * scale + mask) v over query [..., L, E], key [..., S, E], value [..., S, Ev].
// attn_mask: bool (true = attend) or the query's dtype (added), broadcast to [..., L, S];
// is_causal: query i attends to keys j <= i (no attn_mask then); scale: 1 / sqrt(E) by default;
// enable_gqa: key and value heads (dim -3) are shared by query heads in groups. A query row
// whose keys are all masked gives zeros, as PyTorch's math kernel does.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false);

// The gradients of scaled_dot_product_attention's query, key and value (no dropout, no grouped
// heads: key and value already have the query's heads) given the output's gradient `grad_out`
// and the output `out` itself; attn_mask, is_causal and scale as the forward took them (scale
// given). Each gradient has the output's batch dims (those of q, k, v and the mask broadcast; a
// mask may broadcast the query's rows too) and the query's dtype; summing over dims that
// broadcast is the caller's. The node that scaled_dot_product_attention's
// derivative rule records (a cuda program runs it on FlashAttention-2's backward kernel).
struct AttentionGrads {
  Tensor query, key, value;
};
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& query, const Tensor& key,
                                                     const Tensor& value, const Tensor& out,
                                                     const std::optional<Tensor>& attn_mask, bool is_causal,
                                                     double scale);

}  // namespace kiln
