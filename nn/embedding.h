// kiln/nn/embedding.h — Embedding and EmbeddingBag, as torch::nn's: a lookup table
// [num_embeddings, embedding_dim] drawn from N(0, 1), with the padding row (if any) zeroed and
// left out of the gradient. EmbeddingBag reduces each bag ("sum", "mean" or "max") of a 2-D
// input, or of a 1-D input cut by offsets, optionally weighting each index (mode "sum").
#pragma once

#include "nn/module.h"

#include <optional>
#include <string>

namespace kiln::nn {

struct EmbeddingOptions {
  EmbeddingOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingOptions& padding_idx(int64_t i) {
    padding_idx_ = i;
    return *this;
  }
  EmbeddingOptions& scale_grad_by_freq(bool on) {
    scale_grad_by_freq_ = on;
    return *this;
  }
  int64_t num_embeddings_, embedding_dim_;
  std::optional<int64_t> padding_idx_;  // negative counts from the end, as in PyTorch
  bool scale_grad_by_freq_ = false;
};

class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingImpl(EmbeddingOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingImpl(const EmbeddingOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& indices) const;
  void pretty_print(std::ostream& os) const override;

  EmbeddingOptions options;
  Tensor weight;
};
KILN_MODULE(Embedding);

struct EmbeddingBagOptions {
  EmbeddingBagOptions(int64_t num_embeddings, int64_t embedding_dim)
      : num_embeddings_(num_embeddings), embedding_dim_(embedding_dim) {}
  EmbeddingBagOptions& mode(std::string m) {
    mode_ = std::move(m);
    return *this;
  }
  EmbeddingBagOptions& include_last_offset(bool on) {
    include_last_offset_ = on;
    return *this;
  }
  EmbeddingBagOptions& padding_idx(int64_t i) {
    padding_idx_ = i;
    return *this;
  }
  int64_t num_embeddings_, embedding_dim_;
  std::string mode_ = "mean";
  bool include_last_offset_ = false;
  std::optional<int64_t> padding_idx_;
};

class EmbeddingBagImpl : public Module {
 public:
  EmbeddingBagImpl(int64_t num_embeddings, int64_t embedding_dim)
      : EmbeddingBagImpl(EmbeddingBagOptions(num_embeddings, embedding_dim)) {}
  explicit EmbeddingBagImpl(const EmbeddingBagOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input, const std::optional<Tensor>& offsets = std::nullopt,
                 const std::optional<Tensor>& per_sample_weights = std::nullopt) const;
  void pretty_print(std::ostream& os) const override;

  EmbeddingBagOptions options;
  Tensor weight;
};
KILN_MODULE(EmbeddingBag);

}  // namespace kiln::nn
