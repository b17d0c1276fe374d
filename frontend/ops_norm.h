// kiln/frontend/ops_norm.h — batch, instance and group normalization, and the native_* forms
// that also return the statistics, layer_norm and rms_norm, and torch.nn.functional.normalize.
//
// Names, argument order, defaults and semantics follow libtorch (at::batch_norm,
// at::native_batch_norm, at::instance_norm, at::group_norm, at::native_group_norm,
// at::native_layer_norm). The input is [N, C, *]; statistics are computed in f32 for f16/bf16
// inputs (f64 for f64), and a parameter or running statistic may be f32 beside an f16/bf16
// input, as on PyTorch's CPU. In training, running_mean and running_var are updated in place
// with `momentum` (the variance unbiased); inside a compiled function they are captured
// tensors, and the update is written back after every call (docs/decisions.md).
//
// layer_norm is a Core node; the native_* forms record Core nodes that also return the
// statistics (ir/ops.def); batch, instance and group norm record native_batch_norm and
// native_group_norm (or, with dynamic sizes, the ops they are made of). Decomposed, each is
// means and pointwise math that fuse into one or two kernels.
#pragma once

#include "frontend/tensor.h"

#include <array>
#include <optional>
#include <tuple>

namespace kiln {

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool cudnn_enabled = true);
// (output, save_mean, save_invstd): the batch statistics in training, empty [0] tensors in evaluation.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var, bool training,
                                                     double momentum, double eps);
// Per-sample, per-channel statistics over the spatial dims; the running statistics (optional)
// take the mean over the batch.
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                     bool use_input_stats, double momentum, double eps, bool cudnn_enabled = true);
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-05, bool cudnn_enabled = true);
// (output, mean [N, group], rstd [N, group]); the input holds N * C * HxW elements.
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps);
// (output, mean, rstd); mean and rstd keep the normalized dims with size 1.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps);

// The gradients (grad_input, grad_weight, grad_bias) of native_layer_norm / native_group_norm
// from grad_out and the forward's statistics (at::native_layer_norm_backward,
// at::native_group_norm_backward). output_mask picks which to compute; the others are
// undefined. They record Core nodes (ir/ops.def), which the Norm family's derivative rules
// record. ATen's layer-norm form also takes the bias, only to read whether it is defined: here
// output_mask[2] says it.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              std::array<bool, 3> output_mask);
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N,
                                                              int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> output_mask);

// Normalizes over the trailing dims named by normalized_shape. A missing (or undefined)
// weight or bias is skipped.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
// eps defaults to torch.finfo(input.dtype).eps.
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt);
// input / max(||input||_p over dim, eps), the norm broadcast back over dim, as
// torch.nn.functional.normalize writes it (libtorch: F::normalize with NormalizeFuncOptions).
Tensor normalize(const Tensor& input, double p = 2.0, int64_t dim = 1, double eps = 1e-12);

}  // namespace kiln
