// kiln/nn/normalization.cpp — LayerNorm, RMSNorm, GroupNorm and BatchNorm1d/2d/3d
// (nn/normalization.h).
#include "nn/normalization.h"

#include "base/error.h"
#include "frontend/grad_mode.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_norm.h"
#include "nn/init.h"

#include <ostream>

namespace kiln::nn {

LayerNormImpl::LayerNormImpl(const LayerNormOptions& o) : Module("LayerNorm"), options(o) {
  if (o.elementwise_affine_) {
    weight = register_parameter("weight", kiln::empty(o.normalized_shape_));
    bias = register_parameter("bias", o.bias_ ? kiln::empty(o.normalized_shape_) : Tensor());
  }
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) const {
  return layer_norm(input, options.normalized_shape_, weight.defined() ? std::optional<Tensor>(weight) : std::nullopt,
                    bias.defined() ? std::optional<Tensor>(bias) : std::nullopt, options.eps_);
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm([";
  for (size_t i = 0; i < options.normalized_shape_.size(); ++i) os << (i ? ", " : "") << options.normalized_shape_[i];
  os << "], eps=" << options.eps_ << ", elementwise_affine=" << (options.elementwise_affine_ ? "true" : "false") << ")";
}

namespace {
std::optional<Tensor> maybe(const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; }
}  // namespace

RMSNormImpl::RMSNormImpl(const RMSNormOptions& o) : Module("RMSNorm"), options(o) {
  if (o.elementwise_affine_) weight = register_parameter("weight", kiln::empty(o.normalized_shape_));
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& input) const {
  return rms_norm(input, options.normalized_shape_, maybe(weight), options.eps_);
}

GroupNormImpl::GroupNormImpl(const GroupNormOptions& o) : Module("GroupNorm"), options(o) {
  if (o.num_groups_ <= 0 || o.num_channels_ % o.num_groups_ != 0)
    fail("GroupNorm", "num_channels must be divisible by num_groups, got {} channels and {} groups", o.num_channels_,
         o.num_groups_);
  if (o.affine_) {
    weight = register_parameter("weight", kiln::empty({o.num_channels_}));
    bias = register_parameter("bias", kiln::empty({o.num_channels_}));
  }
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) const {
  return group_norm(input, options.num_groups_, maybe(weight), maybe(bias), options.eps_);
}

template <size_t D>
BatchNormImpl<D>::BatchNormImpl(const BatchNormOptions& o) : Module("BatchNorm" + std::to_string(D) + "d"), options(o) {
  if (o.affine_) {
    weight = register_parameter("weight", kiln::empty({o.num_features_}));
    bias = register_parameter("bias", kiln::empty({o.num_features_}));
  }
  if (o.track_running_stats_) {
    running_mean = register_buffer("running_mean", zeros({o.num_features_}));
    running_var = register_buffer("running_var", ones({o.num_features_}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, ScalarType::Int64));
  }
  reset_parameters();
}

template <size_t D> void BatchNormImpl<D>::reset_running_stats() {
  if (!options.track_running_stats_) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D> void BatchNormImpl<D>::reset_parameters() {
  reset_running_stats();
  if (weight.defined()) init::ones_(weight);
  if (bias.defined()) init::zeros_(bias);
}

template <size_t D> Tensor BatchNormImpl<D>::forward(const Tensor& input) {
  const int64_t dims = input.dim();
  const bool ok = D == 1 ? (dims == 2 || dims == 3) : dims == static_cast<int64_t>(D) + 2;
  if (!ok)
    fail(name(), "expected {} input (got {}D input)", D == 1 ? std::string("2D or 3D") : std::to_string(D + 2) + "D",
         dims);
  double factor = options.momentum_.value_or(0.0);
  if (is_training() && options.track_running_stats_) {
    NoGradGuard no_grad;
    num_batches_tracked.add_(1);
    if (!options.momentum_) factor = 1.0 / static_cast<double>(num_batches_tracked.item<int64_t>());
  }
  // Batch statistics in training, and in evaluation without running statistics.
  const bool use_batch = is_training() || !options.track_running_stats_;
  return batch_norm(input, maybe(weight), maybe(bias), maybe(running_mean), maybe(running_var), use_batch, factor,
                    options.eps_);
}

template <size_t D> void BatchNormImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.num_features_ << ", eps=" << options.eps_ << ", momentum=";
  if (options.momentum_) os << *options.momentum_;
  else os << "None";
  os << ", affine=" << (options.affine_ ? "true" : "false")
     << ", track_running_stats=" << (options.track_running_stats_ ? "true" : "false") << ")";
}

template class BatchNormImpl<1>;
template class BatchNormImpl<2>;
template class BatchNormImpl<3>;

}  // namespace kiln::nn
