// kiln/nn/attention.h — MultiheadAttention and TransformerEncoderLayer, as torch::nn's, with
// PyTorch's parameter names (in_proj_weight, in_proj_bias, out_proj.*; self_attn, linear1,
// linear2, norm1, norm2, dropout*), so their state_dicts load into each other.
//
// MultiheadAttention takes [L, N, E] (batch_first: [N, L, E]; unbatched: [L, E]) and returns
// (output, weights). Masks follow PyTorch: a bool attn_mask or key_padding_mask marks with true
// the positions that may NOT be attended to; a float one is added to the scores. is_causal is
// only a hint that attn_mask is causal, and needs one, as in PyTorch. need_weights computes the probabilities explicitly
// (averaged over heads unless average_attn_weights is false); without it the product runs as
// scaled_dot_product_attention and weights is undefined.
#pragma once

#include "nn/activation.h"
#include "nn/linear.h"
#include "nn/module.h"
#include "nn/normalization.h"

#include <optional>
#include <string>
#include <tuple>

namespace kiln::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads) : embed_dim_(embed_dim), num_heads_(num_heads) {}
  MultiheadAttentionOptions& dropout(double p) {
    dropout_ = p;
    return *this;
  }
  MultiheadAttentionOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  MultiheadAttentionOptions& batch_first(bool on) {
    batch_first_ = on;
    return *this;
  }
  int64_t embed_dim_, num_heads_;
  double dropout_ = 0.0;
  bool bias_ = true;
  bool batch_first_ = false;
};

class MultiheadAttentionImpl : public Module {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);
  void reset_parameters();
  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const std::optional<Tensor>& key_padding_mask = std::nullopt,
                                     bool need_weights = true, const std::optional<Tensor>& attn_mask = std::nullopt,
                                     bool average_attn_weights = true, bool is_causal = false);
  void pretty_print(std::ostream& os) const override;

  MultiheadAttentionOptions options;
  Tensor in_proj_weight, in_proj_bias;  // [3E, E], [3E]: query, key and value stacked
  Linear out_proj{nullptr};
};
KILN_MODULE(MultiheadAttention);

struct TransformerEncoderLayerOptions {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerEncoderLayerOptions& dim_feedforward(int64_t d) {
    dim_feedforward_ = d;
    return *this;
  }
  TransformerEncoderLayerOptions& dropout(double p) {
    dropout_ = p;
    return *this;
  }
  TransformerEncoderLayerOptions& activation(std::string a) {  // "relu" or "gelu"
    activation_ = std::move(a);
    return *this;
  }
  TransformerEncoderLayerOptions& layer_norm_eps(double e) {
    layer_norm_eps_ = e;
    return *this;
  }
  TransformerEncoderLayerOptions& batch_first(bool on) {
    batch_first_ = on;
    return *this;
  }
  TransformerEncoderLayerOptions& norm_first(bool on) {
    norm_first_ = on;
    return *this;
  }
  TransformerEncoderLayerOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  int64_t d_model_, nhead_;
  int64_t dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  std::string activation_ = "relu";
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false, norm_first_ = false, bias_ = true;
};

class TransformerEncoderLayerImpl : public Module {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  Tensor forward(const Tensor& src, const std::optional<Tensor>& src_mask = std::nullopt,
                 const std::optional<Tensor>& src_key_padding_mask = std::nullopt, bool is_causal = false);

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr}, linear2{nullptr};
  Dropout dropout{nullptr}, dropout1{nullptr}, dropout2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
};
KILN_MODULE(TransformerEncoderLayer);

}  // namespace kiln::nn
