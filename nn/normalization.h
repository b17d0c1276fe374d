// kiln/nn/normalization.h — the norm layers, as torch::nn's. Affine weights start at ones,
// biases at zeros.
//   LayerNorm, RMSNorm   over the trailing normalized_shape dims
//   GroupNorm            over groups of channels of [N, C, *]
//   BatchNorm1d/2d/3d    per channel over the batch and space of [N, C] / [N, C, L], [N, C, H, W],
//                        [N, C, D, H, W]: batch statistics in training (updating the running_mean
//                        and running_var buffers in place, and num_batches_tracked), the running
//                        ones in evaluation. momentum nullopt: a cumulative average, 1 /
//                        num_batches_tracked (read with item(), so compile() runs it eagerly).
#pragma once

#include "nn/module.h"

#include <optional>
#include <vector>

namespace kiln::nn {

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  LayerNormOptions& eps(double e) {
    eps_ = e;
    return *this;
  }
  LayerNormOptions& elementwise_affine(bool on) {
    elementwise_affine_ = on;
    return *this;
  }
  LayerNormOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
  bool bias_ = true;
};

class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;

  LayerNormOptions options;
  Tensor weight, bias;  // undefined without elementwise_affine (bias: or without bias)
};
KILN_MODULE(LayerNorm);

struct RMSNormOptions {
  RMSNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  RMSNormOptions& eps(std::optional<double> e) {
    eps_ = e;
    return *this;
  }
  RMSNormOptions& elementwise_affine(bool on) {
    elementwise_affine_ = on;
    return *this;
  }
  std::vector<int64_t> normalized_shape_;
  std::optional<double> eps_;  // default: the input dtype's machine epsilon, as PyTorch
  bool elementwise_affine_ = true;
};

class RMSNormImpl : public Module {
 public:
  explicit RMSNormImpl(const RMSNormOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input) const;

  RMSNormOptions options;
  Tensor weight;
};
KILN_MODULE(RMSNorm);

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GroupNormOptions& eps(double e) {
    eps_ = e;
    return *this;
  }
  GroupNormOptions& affine(bool on) {
    affine_ = on;
    return *this;
  }
  int64_t num_groups_, num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};

class GroupNormImpl : public Module {
 public:
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  explicit GroupNormImpl(const GroupNormOptions& options);
  void reset_parameters();
  Tensor forward(const Tensor& input) const;

  GroupNormOptions options;
  Tensor weight, bias;
};
KILN_MODULE(GroupNorm);

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  BatchNormOptions& eps(double e) {
    eps_ = e;
    return *this;
  }
  BatchNormOptions& momentum(std::optional<double> m) {
    momentum_ = m;
    return *this;
  }
  BatchNormOptions& affine(bool on) {
    affine_ = on;
    return *this;
  }
  BatchNormOptions& track_running_stats(bool on) {
    track_running_stats_ = on;
    return *this;
  }
  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true;
  bool track_running_stats_ = true;
};

// D: the spatial dims (1: [N, C] or [N, C, L]; 2: [N, C, H, W]; 3: [N, C, D, H, W]).
template <size_t D> class BatchNormImpl : public Module {
 public:
  explicit BatchNormImpl(const BatchNormOptions& options);
  explicit BatchNormImpl(int64_t num_features) : BatchNormImpl(BatchNormOptions(num_features)) {}
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};
using BatchNorm1dImpl = BatchNormImpl<1>;
using BatchNorm2dImpl = BatchNormImpl<2>;
using BatchNorm3dImpl = BatchNormImpl<3>;
KILN_MODULE(BatchNorm1d);
KILN_MODULE(BatchNorm2d);
KILN_MODULE(BatchNorm3d);
extern template class BatchNormImpl<1>;
extern template class BatchNormImpl<2>;
extern template class BatchNormImpl<3>;

}  // namespace kiln::nn
