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

}  // namespace kiln
