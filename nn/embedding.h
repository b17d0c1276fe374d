// kiln/nn/embedding.h — Embedding, as torch::nn::Embedding: a lookup table [num_embeddings,
// embedding_dim] drawn from N(0, 1), with the padding row (if any) zeroed and left out of the
// gradient.
#pragma once

#include "nn/module.h"

#include <optional>

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

}  // namespace kiln::nn
