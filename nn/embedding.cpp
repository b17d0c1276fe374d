// kiln/nn/embedding.cpp — Embedding and EmbeddingBag (nn/embedding.h).
#include "nn/embedding.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "nn/init.h"

#include <ostream>

namespace kiln::nn {

namespace {

// A padding index checked against the table and counted from its end when negative.
std::optional<int64_t> checked_padding(std::optional<int64_t> p, int64_t n, const char* module) {
  if (!p) return p;
  if (*p >= n || *p < -n) fail(module, "padding_idx must be within num_embeddings, got {} for {} embeddings", *p, n);
  return *p < 0 ? *p + n : *p;
}

// A table drawn from N(0, 1) with the padding row zeroed.
void init_table(Tensor& weight, std::optional<int64_t> padding) {
  init::normal_(weight);
  if (padding) {
    NoGradGuard no_grad;
    weight.select(0, *padding).fill_(0);
  }
}

}  // namespace

EmbeddingImpl::EmbeddingImpl(const EmbeddingOptions& o) : Module("Embedding"), options(o) {
  if (o.num_embeddings_ < 0 || o.embedding_dim_ < 0)
    fail("Embedding", "num_embeddings and embedding_dim must be non-negative, got {} and {}", o.num_embeddings_,
         o.embedding_dim_);
  options.padding_idx_ = checked_padding(o.padding_idx_, o.num_embeddings_, "Embedding");
  weight = register_parameter("weight", kiln::empty({o.num_embeddings_, o.embedding_dim_}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() { init_table(weight, options.padding_idx_); }

Tensor EmbeddingImpl::forward(const Tensor& indices) const {
  return embedding(weight, indices, options.padding_idx_.value_or(-1), options.scale_grad_by_freq_);
}

void EmbeddingImpl::pretty_print(std::ostream& os) const {
  os << "Embedding(num_embeddings=" << options.num_embeddings_ << ", embedding_dim=" << options.embedding_dim_;
  if (options.padding_idx_) os << ", padding_idx=" << *options.padding_idx_;
  os << ")";
}


EmbeddingBagImpl::EmbeddingBagImpl(const EmbeddingBagOptions& o) : Module("EmbeddingBag"), options(o) {
  if (o.mode_ != "sum" && o.mode_ != "mean" && o.mode_ != "max")
    fail("EmbeddingBag", "mode has to be one of sum, mean or max, got {}", o.mode_);
  options.padding_idx_ = checked_padding(o.padding_idx_, o.num_embeddings_, "EmbeddingBag");
  weight = register_parameter("weight", kiln::empty({o.num_embeddings_, o.embedding_dim_}));
  reset_parameters();
}

void EmbeddingBagImpl::reset_parameters() { init_table(weight, options.padding_idx_); }

Tensor EmbeddingBagImpl::forward(const Tensor& input, const std::optional<Tensor>& offsets,
                                 const std::optional<Tensor>& per_sample_weights) const {
  return embedding_bag(weight, input, offsets, options.mode_, per_sample_weights, options.include_last_offset_,
                       options.padding_idx_);
}

void EmbeddingBagImpl::pretty_print(std::ostream& os) const {
  os << "EmbeddingBag(" << options.num_embeddings_ << ", " << options.embedding_dim_ << ", mode='" << options.mode_
     << "')";
}

}  // namespace kiln::nn
