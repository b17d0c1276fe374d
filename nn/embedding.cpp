// kiln/nn/embedding.cpp — Embedding (nn/embedding.h).
#include "nn/embedding.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "nn/init.h"

#include <ostream>

namespace kiln::nn {

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : Module("Embedding"), options(o) {
  if (o.num_embeddings_ < 0 || o.embedding_dim_ < 0)
    fail("Embedding", "num_embeddings and embedding_dim must be non-negative, got {} and {}", o.num_embeddings_,
         o.embedding_dim_);
  if (o.padding_idx_) {
    const int64_t p = *o.padding_idx_;
    if (p >= o.num_embeddings_ || p < -o.num_embeddings_)
      fail("Embedding", "Padding_idx must be within num_embeddings, got {} for {} embeddings", p, o.num_embeddings_);
    options.padding_idx_ = p < 0 ? p + o.num_embeddings_ : p;
  }
  weight = register_parameter("weight", kiln::empty({o.num_embeddings_, o.embedding_dim_}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (options.padding_idx_) {
    NoGradGuard no_grad;
    weight.select(0, *options.padding_idx_).fill_(0);
  }
}

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  return embedding(weight, indices, options.padding_idx_.value_or(-1), options.scale_grad_by_freq_);
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(num_embeddings=" << options.num_embeddings_ << ", embedding_dim=" << options.embedding_dim_;
  if (options.padding_idx_) os << ", padding_idx=" << *options.padding_idx_;
  os << ")";
}

}  // namespace kiln::nn
