// kiln/nn/loss.h — the loss modules, as torch::nn's: each holds its options (and a class weight or
// pos_weight as a buffer, so that it moves with the module) and calls its function in
// frontend/ops_linear.h with the reduction "mean" (default), "sum" or "none".
//   MSELoss, L1Loss, SmoothL1Loss(beta), HuberLoss(delta), CrossEntropyLoss(weight, ignore_index,
//   label_smoothing), NLLLoss(weight, ignore_index), BCELoss(weight), BCEWithLogitsLoss(weight,
//   pos_weight), KLDivLoss(log_target), SoftMarginLoss, MarginRankingLoss(margin),
//   HingeEmbeddingLoss(margin), CosineEmbeddingLoss(margin), PoissonNLLLoss(log_input, full, eps),
//   GaussianNLLLoss(full, eps), TripletMarginLoss(margin, p, eps, swap),
//   MultiLabelSoftMarginLoss(weight), MultiMarginLoss(p, margin, weight), MultiLabelMarginLoss,
//   CTCLoss(blank, zero_infinity)
#pragma once

#include "base/error.h"
#include "frontend/ops_linear.h"
#include "nn/module.h"

#include <optional>
#include <string>
#include <utility>

namespace kiln::nn {

// The base of every loss: its reduction.
class LossImpl : public Module {
 public:
  LossImpl(std::string name, std::string reduction) : Module(std::move(name)), reduction(std::move(reduction)) {}
  std::string reduction;

 protected:
  // A weight kept as a buffer (moved with the module), or none.
  std::optional<Tensor> buffer(const char* name, const std::optional<Tensor>& t) {
    if (!t) return std::nullopt;
    return register_buffer(name, t->detach());  // the module's own handle: to() leaves the caller's tensor alone
  }
};

#define KILN_PAIR_LOSS(Name, fn)                                                                             \
  class Name##Impl : public LossImpl {                                                                       \
   public:                                                                                                   \
    explicit Name##Impl(std::string reduction = "mean") : LossImpl(#Name, std::move(reduction)) {}           \
    Tensor forward(const Tensor& input, const Tensor& target) const { return fn(input, target, reduction); } \
  };                                                                                                         \
  KILN_MODULE(Name)

KILN_PAIR_LOSS(MSELoss, mse_loss);
KILN_PAIR_LOSS(L1Loss, l1_loss);
KILN_PAIR_LOSS(SoftMarginLoss, soft_margin_loss);
KILN_PAIR_LOSS(MultiLabelMarginLoss, multilabel_margin_loss);
#undef KILN_PAIR_LOSS

class SmoothL1LossImpl : public LossImpl {
 public:
  explicit SmoothL1LossImpl(std::string reduction = "mean", double beta = 1.0)
      : LossImpl("SmoothL1Loss", std::move(reduction)), beta(beta) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return smooth_l1_loss(input, target, reduction, beta);
  }
  double beta;
};
KILN_MODULE(SmoothL1Loss);

class HuberLossImpl : public LossImpl {
 public:
  explicit HuberLossImpl(std::string reduction = "mean", double delta = 1.0)
      : LossImpl("HuberLoss", std::move(reduction)), delta(delta) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return huber_loss(input, target, reduction, delta);
  }
  double delta;
};
KILN_MODULE(HuberLoss);

class CrossEntropyLossImpl : public LossImpl {
 public:
  explicit CrossEntropyLossImpl(const std::optional<Tensor>& weight = std::nullopt, int64_t ignore_index = -100,
                                std::string reduction = "mean", double label_smoothing = 0.0)
      : LossImpl("CrossEntropyLoss", std::move(reduction)),
        ignore_index(ignore_index),
        label_smoothing(label_smoothing) {
    this->weight = buffer("weight", weight);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing);
  }
  std::optional<Tensor> weight;
  int64_t ignore_index;
  double label_smoothing;
};
KILN_MODULE(CrossEntropyLoss);

class NLLLossImpl : public LossImpl {
 public:
  explicit NLLLossImpl(const std::optional<Tensor>& weight = std::nullopt, int64_t ignore_index = -100,
                       std::string reduction = "mean")
      : LossImpl("NLLLoss", std::move(reduction)), ignore_index(ignore_index) {
    this->weight = buffer("weight", weight);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return nll_loss(input, target, weight, reduction, ignore_index);
  }
  std::optional<Tensor> weight;
  int64_t ignore_index;
};
KILN_MODULE(NLLLoss);

class BCELossImpl : public LossImpl {
 public:
  explicit BCELossImpl(const std::optional<Tensor>& weight = std::nullopt, std::string reduction = "mean")
      : LossImpl("BCELoss", std::move(reduction)) {
    this->weight = buffer("weight", weight);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return binary_cross_entropy(input, target, weight, reduction);
  }
  std::optional<Tensor> weight;
};
KILN_MODULE(BCELoss);

class BCEWithLogitsLossImpl : public LossImpl {
 public:
  explicit BCEWithLogitsLossImpl(const std::optional<Tensor>& weight = std::nullopt, std::string reduction = "mean",
                                 const std::optional<Tensor>& pos_weight = std::nullopt)
      : LossImpl("BCEWithLogitsLoss", std::move(reduction)) {
    this->weight = buffer("weight", weight);
    this->pos_weight = buffer("pos_weight", pos_weight);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction);
  }
  std::optional<Tensor> weight, pos_weight;
};
KILN_MODULE(BCEWithLogitsLoss);

class KLDivLossImpl : public LossImpl {
 public:
  explicit KLDivLossImpl(std::string reduction = "mean", bool log_target = false)
      : LossImpl("KLDivLoss", std::move(reduction)), log_target(log_target) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return kl_div(input, target, reduction, log_target);
  }
  bool log_target;
};
KILN_MODULE(KLDivLoss);

class MarginRankingLossImpl : public LossImpl {
 public:
  explicit MarginRankingLossImpl(double margin = 0.0, std::string reduction = "mean")
      : LossImpl("MarginRankingLoss", std::move(reduction)), margin(margin) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) const {
    return margin_ranking_loss(input1, input2, target, margin, reduction);
  }
  double margin;
};
KILN_MODULE(MarginRankingLoss);

class HingeEmbeddingLossImpl : public LossImpl {
 public:
  explicit HingeEmbeddingLossImpl(double margin = 1.0, std::string reduction = "mean")
      : LossImpl("HingeEmbeddingLoss", std::move(reduction)), margin(margin) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return hinge_embedding_loss(input, target, margin, reduction);
  }
  double margin;
};
KILN_MODULE(HingeEmbeddingLoss);

class CosineEmbeddingLossImpl : public LossImpl {
 public:
  explicit CosineEmbeddingLossImpl(double margin = 0.0, std::string reduction = "mean")
      : LossImpl("CosineEmbeddingLoss", std::move(reduction)), margin(margin) {}
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) const {
    return cosine_embedding_loss(input1, input2, target, margin, reduction);
  }
  double margin;
};
KILN_MODULE(CosineEmbeddingLoss);

class PoissonNLLLossImpl : public LossImpl {
 public:
  explicit PoissonNLLLossImpl(bool log_input = true, bool full = false, double eps = 1e-8,
                              std::string reduction = "mean")
      : LossImpl("PoissonNLLLoss", std::move(reduction)), log_input(log_input), full(full), eps(eps) {}
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return poisson_nll_loss(input, target, log_input, full, eps, reduction);
  }
  bool log_input, full;
  double eps;
};
KILN_MODULE(PoissonNLLLoss);

class GaussianNLLLossImpl : public LossImpl {
 public:
  explicit GaussianNLLLossImpl(bool full = false, double eps = 1e-6, std::string reduction = "mean")
      : LossImpl("GaussianNLLLoss", std::move(reduction)), full(full), eps(eps) {}
  Tensor forward(const Tensor& input, const Tensor& target, const Tensor& var) const {
    return gaussian_nll_loss(input, target, var, full, eps, reduction);
  }
  bool full;
  double eps;
};
KILN_MODULE(GaussianNLLLoss);

class TripletMarginLossImpl : public LossImpl {
 public:
  explicit TripletMarginLossImpl(double margin = 1.0, double p = 2.0, double eps = 1e-6, bool swap = false,
                                 std::string reduction = "mean")
      : LossImpl("TripletMarginLoss", std::move(reduction)), margin(margin), p(p), eps(eps), swap(swap) {}
  Tensor forward(const Tensor& anchor, const Tensor& positive, const Tensor& negative) const {
    return triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap, reduction);
  }
  double margin, p, eps;
  bool swap;
};
KILN_MODULE(TripletMarginLoss);

class MultiLabelSoftMarginLossImpl : public LossImpl {
 public:
  explicit MultiLabelSoftMarginLossImpl(const std::optional<Tensor>& weight = std::nullopt,
                                        std::string reduction = "mean")
      : LossImpl("MultiLabelSoftMarginLoss", std::move(reduction)) {
    this->weight = buffer("weight", weight);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return multilabel_soft_margin_loss(input, target, weight, reduction);
  }
  std::optional<Tensor> weight;
};
KILN_MODULE(MultiLabelSoftMarginLoss);

class MultiMarginLossImpl : public LossImpl {
 public:
  explicit MultiMarginLossImpl(double p = 1.0, double margin = 1.0, const std::optional<Tensor>& weight = std::nullopt,
                               std::string reduction = "mean")
      : LossImpl("MultiMarginLoss", std::move(reduction)), p(p), margin(margin) {
    if (p != 1 && p != 2) fail("MultiMarginLoss", "only p == 1 and p == 2 supported");
    if (weight && weight->dim() != 1)
      fail("MultiMarginLoss", "MultiMarginLoss: expected weight to be None or 1D tensor, got {}D instead",
           weight->dim());
    this->weight = buffer("weight", weight);
  }
  Tensor forward(const Tensor& input, const Tensor& target) const {
    return multi_margin_loss(input, target, p, margin, weight, reduction);
  }
  double p, margin;
  std::optional<Tensor> weight;
};
KILN_MODULE(MultiMarginLoss);

class CTCLossImpl : public LossImpl {
 public:
  explicit CTCLossImpl(int64_t blank = 0, std::string reduction = "mean", bool zero_infinity = false)
      : LossImpl("CTCLoss", std::move(reduction)), blank(blank), zero_infinity(zero_infinity) {}
  Tensor forward(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                 const Tensor& target_lengths) const {
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity);
  }
  Tensor forward(const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                 IntArrayRef target_lengths) const {
    return ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity);
  }
  int64_t blank;
  bool zero_infinity;
};
KILN_MODULE(CTCLoss);

}  // namespace kiln::nn
