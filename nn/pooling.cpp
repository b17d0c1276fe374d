// kiln/nn/pooling.cpp — the pooling, reshaping and resampling modules (nn/pooling.h).
#include "nn/pooling.h"

#include "base/error.h"
#include "frontend/ops_pool.h"
#include "frontend/ops_resample.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kiln::nn {

namespace {

std::string name_of(const char* kind, int d) { return fmt::format("{}{}d", kind, d); }

// PyTorch prints a single value as itself and several as a tuple.
std::string py(const std::vector<int64_t>& v) {
  if (v.size() == 1) return std::to_string(v[0]);
  return fmt::format("({})", fmt::join(v, ", "));
}
const char* py(bool b) { return b ? "True" : "False"; }

void check_window(const std::string& name, int d, const std::vector<int64_t>& kernel,
                  const std::vector<int64_t>& stride, const std::vector<int64_t>& padding) {
  auto ok = [&](const std::vector<int64_t>& v, bool empty_ok) {
    return (empty_ok && v.empty()) || v.size() == 1 || v.size() == static_cast<size_t>(d);
  };
  if (!ok(kernel, false) || !ok(stride, true) || !ok(padding, false))
    fail(name, "kernel_size, stride and padding take 1 or {} values, got kernel_size {}, stride {}, padding {}", d,
         py(kernel), py(stride), py(padding));
}

}  // namespace

template <int D> MaxPoolImpl<D>::MaxPoolImpl(MaxPoolOptions o) : Module(name_of("MaxPool", D)), options(std::move(o)) {
  check_window(name(), D, options.kernel_size_, options.stride_, options.padding_);
}

template <int D> Tensor MaxPoolImpl<D>::forward(const Tensor& x) const {
  const MaxPoolOptions& o = options;
  if constexpr (D == 1) return max_pool1d(x, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
  if constexpr (D == 2) return max_pool2d(x, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
  if constexpr (D == 3) return max_pool3d(x, o.kernel_size_, o.stride_, o.padding_, o.dilation_, o.ceil_mode_);
}

template <int D> void MaxPoolImpl<D>::pretty_print(std::ostream& os) const {
  const MaxPoolOptions& o = options;
  os << fmt::format("{}(kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={})", name(), py(o.kernel_size_),
                    py(o.stride_.empty() ? o.kernel_size_ : o.stride_), py(o.padding_), py(o.dilation_),
                    py(o.ceil_mode_));
}

template <int D> AvgPoolImpl<D>::AvgPoolImpl(AvgPoolOptions o) : Module(name_of("AvgPool", D)), options(std::move(o)) {
  check_window(name(), D, options.kernel_size_, options.stride_, options.padding_);
  if (D == 1 && options.divisor_override_) fail(name(), "divisor_override is not an option of AvgPool1d");
}

template <int D> Tensor AvgPoolImpl<D>::forward(const Tensor& x) const {
  const AvgPoolOptions& o = options;
  if constexpr (D == 1) return avg_pool1d(x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_);
  if constexpr (D == 2)
    return avg_pool2d(x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_, o.divisor_override_);
  if constexpr (D == 3)
    return avg_pool3d(x, o.kernel_size_, o.stride_, o.padding_, o.ceil_mode_, o.count_include_pad_, o.divisor_override_);
}

template <int D> void AvgPoolImpl<D>::pretty_print(std::ostream& os) const {
  const AvgPoolOptions& o = options;
  os << fmt::format("{}(kernel_size={}, stride={}, padding={})", name(), py(o.kernel_size_),
                    py(o.stride_.empty() ? o.kernel_size_ : o.stride_), py(o.padding_));
}

template <int D>
AdaptiveAvgPoolImpl<D>::AdaptiveAvgPoolImpl(std::vector<int64_t> size)
    : Module(name_of("AdaptiveAvgPool", D)), output_size(std::move(size)) {
  if (output_size.size() != 1 && output_size.size() != static_cast<size_t>(D))
    fail(name(), "output_size takes 1 or {} values, got {}", D, py(output_size));
}

template <int D> Tensor AdaptiveAvgPoolImpl<D>::forward(const Tensor& x) const {
  std::vector<int64_t> size;
  for (int i = 0; i < D; ++i) size.push_back(output_size.size() == 1 ? output_size[0] : output_size[static_cast<size_t>(i)]);
  if constexpr (D == 1) return adaptive_avg_pool1d(x, size);
  if constexpr (D == 2) return adaptive_avg_pool2d(x, size);
  if constexpr (D == 3) return adaptive_avg_pool3d(x, size);
}

template <int D> void AdaptiveAvgPoolImpl<D>::pretty_print(std::ostream& os) const {
  os << fmt::format("{}(output_size={})", name(), py(output_size));
}

template class MaxPoolImpl<1>;
template class MaxPoolImpl<2>;
template class MaxPoolImpl<3>;
template class AvgPoolImpl<1>;
template class AvgPoolImpl<2>;
template class AvgPoolImpl<3>;
template class AdaptiveAvgPoolImpl<1>;
template class AdaptiveAvgPoolImpl<2>;
template class AdaptiveAvgPoolImpl<3>;

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << fmt::format("Flatten(start_dim={}, end_dim={})", start_dim, end_dim);
}

Tensor UnflattenImpl::forward(const Tensor& x) const {
  const int64_t rank = x.dim();
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank) fail("Unflatten", "dim {} is out of range for an input of {} dims", dim, rank);
  std::vector<int64_t> shape;
  for (int64_t i = 0; i < rank; ++i) {
    if (i != d) {
      shape.push_back(x.size(i));
      continue;
    }
    for (int64_t s : sizes) shape.push_back(s);
  }
  return x.view(shape);
}

void UnflattenImpl::pretty_print(std::ostream& os) const {
  os << fmt::format("Unflatten(dim={}, unflattened_size=({}))", dim, fmt::join(sizes, ", "));
}

UpsampleImpl::UpsampleImpl(UpsampleOptions o) : Module("Upsample"), options(std::move(o)) {
  if (options.size_.has_value() == options.scale_factor_.has_value())
    fail("Upsample", "give exactly one of size and scale_factor");
}

Tensor UpsampleImpl::forward(const Tensor& x) const {
  return interpolate(x, options.size_, options.scale_factor_, options.mode_, options.align_corners_);
}

void UpsampleImpl::pretty_print(std::ostream& os) const {
  os << "Upsample(";
  if (options.size_) os << "size=" << py(*options.size_);
  if (options.scale_factor_) {
    const auto& s = *options.scale_factor_;
    os << "scale_factor=" << (s.size() == 1 ? fmt::format("{:.1f}", s[0]) : fmt::format("({:.1f})", fmt::join(s, ", ")));
  }
  os << ", mode='" << options.mode_ << "')";
}

}  // namespace kiln::nn
