// kiln/nn/pooling.h — pooling, reshaping and resampling modules, as torch::nn's:
//   MaxPool1d/2d/3d      max over windows (kernel_size, stride = kernel_size, padding, dilation,
//                        ceil_mode)
//   AvgPool1d/2d/3d      mean over windows (kernel_size, stride = kernel_size, padding, ceil_mode,
//                        count_include_pad, divisor_override for 2-D and 3-D)
//   AdaptiveAvgPool1d/2d/3d  mean over windows that tile the input into output_size
//   Flatten, Unflatten   reshape dims start_dim..end_dim into one, and one dim into sizes
//   Upsample             interpolate to a size or by a scale factor ("nearest", "linear",
//                        "bilinear", "trilinear")
// None has parameters or buffers; each prints as PyTorch's repr does.
#pragma once

#include "nn/module.h"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace kiln::nn {

// kernel_size, stride and padding take one value for every spatial dim or one per dim.
struct MaxPoolOptions {
  MaxPoolOptions(std::vector<int64_t> kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
  MaxPoolOptions(int64_t kernel_size) : kernel_size_{kernel_size} {}                          // NOLINT
  MaxPoolOptions& stride(std::vector<int64_t> v) { return stride_ = std::move(v), *this; }
  MaxPoolOptions& padding(std::vector<int64_t> v) { return padding_ = std::move(v), *this; }
  MaxPoolOptions& dilation(std::vector<int64_t> v) { return dilation_ = std::move(v), *this; }
  MaxPoolOptions& ceil_mode(bool on) { return ceil_mode_ = on, *this; }
  std::vector<int64_t> kernel_size_, stride_{}, padding_{0}, dilation_{1};  // stride {}: kernel_size
  bool ceil_mode_ = false;
};

struct AvgPoolOptions {
  AvgPoolOptions(std::vector<int64_t> kernel_size) : kernel_size_(std::move(kernel_size)) {}  // NOLINT
  AvgPoolOptions(int64_t kernel_size) : kernel_size_{kernel_size} {}                          // NOLINT
  AvgPoolOptions& stride(std::vector<int64_t> v) { return stride_ = std::move(v), *this; }
  AvgPoolOptions& padding(std::vector<int64_t> v) { return padding_ = std::move(v), *this; }
  AvgPoolOptions& ceil_mode(bool on) { return ceil_mode_ = on, *this; }
  AvgPoolOptions& count_include_pad(bool on) { return count_include_pad_ = on, *this; }
  AvgPoolOptions& divisor_override(std::optional<int64_t> d) { return divisor_override_ = d, *this; }
  std::vector<int64_t> kernel_size_, stride_{}, padding_{0};
  bool ceil_mode_ = false, count_include_pad_ = true;
  std::optional<int64_t> divisor_override_;
};

// D spatial dims (1, 2 or 3).
template <int D> class MaxPoolImpl : public Module {
 public:
  explicit MaxPoolImpl(MaxPoolOptions options);
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;
  MaxPoolOptions options;
};
template <int D> class AvgPoolImpl : public Module {
 public:
  explicit AvgPoolImpl(AvgPoolOptions options);
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;
  AvgPoolOptions options;
};
template <int D> class AdaptiveAvgPoolImpl : public Module {
 public:
  explicit AdaptiveAvgPoolImpl(std::vector<int64_t> output_size);
  explicit AdaptiveAvgPoolImpl(int64_t output_size) : AdaptiveAvgPoolImpl(std::vector<int64_t>{output_size}) {}
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;
  std::vector<int64_t> output_size;
};

using MaxPool1dImpl = MaxPoolImpl<1>;
using MaxPool2dImpl = MaxPoolImpl<2>;
using MaxPool3dImpl = MaxPoolImpl<3>;
using AvgPool1dImpl = AvgPoolImpl<1>;
using AvgPool2dImpl = AvgPoolImpl<2>;
using AvgPool3dImpl = AvgPoolImpl<3>;
using AdaptiveAvgPool1dImpl = AdaptiveAvgPoolImpl<1>;
using AdaptiveAvgPool2dImpl = AdaptiveAvgPoolImpl<2>;
using AdaptiveAvgPool3dImpl = AdaptiveAvgPoolImpl<3>;
KILN_MODULE(MaxPool1d);
KILN_MODULE(MaxPool2d);
KILN_MODULE(MaxPool3d);
KILN_MODULE(AvgPool1d);
KILN_MODULE(AvgPool2d);
KILN_MODULE(AvgPool3d);
KILN_MODULE(AdaptiveAvgPool1d);
KILN_MODULE(AdaptiveAvgPool2d);
KILN_MODULE(AdaptiveAvgPool3d);

class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1)
      : Module("Flatten"), start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) const { return input.flatten(start_dim, end_dim); }
  void pretty_print(std::ostream& os) const override;
  int64_t start_dim, end_dim;
};
KILN_MODULE(Flatten);

class UnflattenImpl : public Module {
 public:
  UnflattenImpl(int64_t dim, std::vector<int64_t> sizes) : Module("Unflatten"), dim(dim), sizes(std::move(sizes)) {}
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;
  int64_t dim;
  std::vector<int64_t> sizes;
};
KILN_MODULE(Unflatten);

struct UpsampleOptions {
  UpsampleOptions& size(std::vector<int64_t> s) { return size_ = std::move(s), *this; }
  UpsampleOptions& scale_factor(std::vector<double> s) { return scale_factor_ = std::move(s), *this; }
  UpsampleOptions& mode(std::string m) { return mode_ = std::move(m), *this; }
  UpsampleOptions& align_corners(std::optional<bool> a) { return align_corners_ = a, *this; }
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  std::string mode_ = "nearest";
  std::optional<bool> align_corners_;
};

class UpsampleImpl : public Module {
 public:
  explicit UpsampleImpl(UpsampleOptions options = {});
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;
  UpsampleOptions options;
};
KILN_MODULE(Upsample);

}  // namespace kiln::nn
