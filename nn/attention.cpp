// kiln/nn/attention.cpp — MultiheadAttention and TransformerEncoderLayer (nn/attention.h).
#include "nn/attention.h"

#include "base/error.h"
#include "frontend/ops.h"
#include "frontend/ops_attention.h"
#include "frontend/ops_dropout.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_linear.h"
#include "frontend/ops_softmax.h"
#include "nn/init.h"

#include <cmath>
#include <limits>
#include <ostream>

namespace kiln::nn {

namespace {

// A mask as scores to add: a bool one's true positions become -inf, a float one is itself.
Tensor additive(const Tensor& mask, ScalarType dtype) {
  if (mask.dtype() == ScalarType::Bool)
    return where(mask, -std::numeric_limits<double>::infinity(), 0.0).to(dtype);
  if (!is_floating_point(mask.dtype()))
    fail("MultiheadAttention", "only bool and floating types of masks are supported, got {}", dtype_name(mask.dtype()));
  return mask.to(dtype);
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& o)
    : Module("MultiheadAttention"), options(o) {
  if (o.embed_dim_ <= 0 || o.num_heads_ <= 0 || o.embed_dim_ % o.num_heads_ != 0)
    fail("MultiheadAttention", "embed_dim must be divisible by num_heads, got {} and {}", o.embed_dim_, o.num_heads_);
  const int64_t E = o.embed_dim_;
  in_proj_weight = register_parameter("in_proj_weight", kiln::empty({3 * E, E}));
  in_proj_bias = register_parameter("in_proj_bias", o.bias_ ? kiln::empty({3 * E}) : Tensor());
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(o.bias_)));
  reset_parameters();
}

void MultiheadAttentionImpl::reset_parameters() {
  init::xavier_uniform_(in_proj_weight);
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const std::optional<Tensor>& key_padding_mask,
                                                           bool need_weights, const std::optional<Tensor>& attn_mask,
                                                           bool average_attn_weights, bool is_causal) {
  const std::string_view op = "MultiheadAttention";
  const int64_t E = options.embed_dim_, H = options.num_heads_, Dh = E / H;
  const bool batched = query.dim() == 3;
  if (query.dim() != 2 && query.dim() != 3) fail(op, "query should be unbatched 2D or batched 3D tensor but received {}-D query tensor", query.dim());
  if (key.dim() != query.dim() || value.dim() != query.dim())
    fail(op, "key and value must have the query's rank {}, got {} and {}", query.dim(), key.dim(), value.dim());
  // To [L, N, E].
  auto seq_first = [&](const Tensor& t) {
    if (!batched) return t.unsqueeze(1);
    return options.batch_first_ ? t.transpose(0, 1) : t;
  };
  const Tensor q_in = seq_first(query), k_in = seq_first(key), v_in = seq_first(value);
  if (q_in.size(2) != E) fail(op, "was expecting embedding dimension of {}, but got {}", E, q_in.size(2));
  const int64_t L = q_in.size(0), N = q_in.size(1), S = k_in.size(0);
  if (v_in.size(0) != S) fail(op, "key and value must have the same sequence length, got {} and {}", S, v_in.size(0));
  auto project = [&](const Tensor& x, int64_t i) {
    const Tensor w = in_proj_weight.slice(0, i * E, (i + 1) * E);
    const std::optional<Tensor> b = in_proj_bias.defined() ? std::optional<Tensor>(in_proj_bias.slice(0, i * E, (i + 1) * E))
                                                           : std::nullopt;
    return linear(x, w, b);  // [len, N, E]
  };
  // [len, N, E] -> [N, H, len, Dh]
  auto heads = [&](const Tensor& x, int64_t len) { return x.reshape({len, N, H, Dh}).permute({1, 2, 0, 3}); };
  const Tensor q = heads(project(q_in, 0), L), k = heads(project(k_in, 1), S), v = heads(project(v_in, 2), S);
  const ScalarType dt = q.dtype();

  // One additive mask, broadcastable to [N, H, L, S].
  std::optional<Tensor> mask;
  if (attn_mask) {
    const Tensor& m = *attn_mask;
    if (m.dim() == 2) {
      if (m.size(0) != L || m.size(1) != S) fail(op, "The shape of the 2D attn_mask is {}, but should be [{}, {}].", shape_str(m.sizes()), L, S);
      mask = additive(m, dt);
    } else if (m.dim() == 3) {
      if (m.size(0) != N * H || m.size(1) != L || m.size(2) != S)
        fail(op, "The shape of the 3D attn_mask is {}, but should be [{}, {}, {}].", shape_str(m.sizes()), N * H, L, S);
      mask = additive(m, dt).reshape({N, H, L, S});
    } else {
      fail(op, "attn_mask's dimension {} is not supported", m.dim());
    }
  } else if (is_causal) {
    fail(op, "Need attn_mask if specifying the is_causal hint");  // as PyTorch: the hint describes attn_mask
  }
  if (key_padding_mask) {
    const Tensor kpm = batched ? *key_padding_mask : key_padding_mask->unsqueeze(0);
    if (kpm.dim() != 2 || kpm.size(0) != N || kpm.size(1) != S)
      fail(op, "expecting key_padding_mask shape of [{}, {}], but got {}", N, S, shape_str(key_padding_mask->sizes()));
    const Tensor padding = additive(kpm, dt).reshape({N, 1, 1, S});
    mask = mask ? *mask + padding : padding;
  }
  const double p = is_training() ? options.dropout_ : 0.0;

  Tensor out, weights;  // out: [N, H, L, Dh]
  if (need_weights) {
    Tensor scores = matmul(q * (1.0 / std::sqrt(static_cast<double>(Dh))), k.transpose(-2, -1));
    if (mask) scores = scores + *mask;
    Tensor probs = softmax(scores, -1);
    if (p > 0) probs = kiln::dropout(probs, p, true);  // PyTorch returns the weights after dropout too
    weights = average_attn_weights ? probs.mean({1}) : probs;  // [N, L, S] or [N, H, L, S]
    out = matmul(probs, v);
    if (!batched) weights = weights.squeeze(0);
  } else {
    out = scaled_dot_product_attention(q, k, v, mask, p);
  }
  Tensor y = out_proj(out.permute({2, 0, 1, 3}).reshape({L, N, E}));  // [L, N, E]
  if (!batched) y = y.squeeze(1);
  else if (options.batch_first_) y = y.transpose(0, 1);
  return {y, weights};
}

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const {
  os << "MultiheadAttention(embed_dim=" << options.embed_dim_ << ", num_heads=" << options.num_heads_ << ")";
}

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& o)
    : Module("TransformerEncoderLayer"), options(o) {
  if (o.activation_ != "relu" && o.activation_ != "gelu")
    fail("TransformerEncoderLayer", "activation should be relu/gelu, not {}", o.activation_);
  self_attn = register_module("self_attn", MultiheadAttention(MultiheadAttentionOptions(o.d_model_, o.nhead_)
                                                                   .dropout(o.dropout_)
                                                                   .bias(o.bias_)
                                                                   .batch_first(o.batch_first_)));
  linear1 = register_module("linear1", Linear(LinearOptions(o.d_model_, o.dim_feedforward_).bias(o.bias_)));
  dropout = register_module("dropout", Dropout(o.dropout_));
  linear2 = register_module("linear2", Linear(LinearOptions(o.dim_feedforward_, o.d_model_).bias(o.bias_)));
  norm1 = register_module("norm1", LayerNorm(LayerNormOptions({o.d_model_}).eps(o.layer_norm_eps_).bias(o.bias_)));
  norm2 = register_module("norm2", LayerNorm(LayerNormOptions({o.d_model_}).eps(o.layer_norm_eps_).bias(o.bias_)));
  dropout1 = register_module("dropout1", Dropout(o.dropout_));
  dropout2 = register_module("dropout2", Dropout(o.dropout_));
}

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const std::optional<Tensor>& src_mask,
                                            const std::optional<Tensor>& src_key_padding_mask, bool is_causal) {
  auto attention = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn->forward(x, x, x, src_key_padding_mask, false, src_mask, true, is_causal)));
  };
  auto feed_forward = [&](const Tensor& x) {
    const Tensor h = linear1(x);
    return dropout2(linear2(dropout(options.activation_ == "gelu" ? gelu(h) : relu(h))));
  };
  Tensor x = src;
  if (options.norm_first_) {
    x = x + attention(norm1(x));
    return x + feed_forward(norm2(x));
  }
  x = norm1(x + attention(x));
  return norm2(x + feed_forward(x));
}

}  // namespace kiln::nn
