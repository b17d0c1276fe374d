// kiln/nn/conv.cpp — Conv1d/2d/3d and ConvTranspose1d/2d/3d (nn/conv.h).
#include "nn/conv.h"

#include "base/error.h"
#include "frontend/ops_conv.h"
#include "frontend/ops_factory.h"
#include "nn/init.h"

#include <cmath>
#include <ostream>

namespace kiln::nn {

namespace {

std::vector<int64_t> expand(const std::vector<int64_t>& v, size_t d, const char* what, const std::string& module) {
  if (v.size() == d) return v;
  if (v.size() == 1) return std::vector<int64_t>(d, v[0]);
  fail(module, "{} must have 1 or {} values, got {}", what, d, v.size());
}

// The options with every list expanded to D values, checked.
template <size_t D> ConvOptions<D> expanded(const ConvOptions<D>& o, const std::string& n) {
  ConvOptions<D> e = o;
  e.kernel_size_ = expand(o.kernel_size_, D, "kernel_size", n);
  e.stride_ = expand(o.stride_, D, "stride", n);
  e.padding_ = expand(o.padding_, D, "padding", n);
  e.dilation_ = expand(o.dilation_, D, "dilation", n);
  e.output_padding_ = expand(o.output_padding_, D, "output_padding", n);
  if (o.groups_ <= 0) fail(n, "groups must be a positive integer, got {}", o.groups_);
  if (o.in_channels_ % o.groups_ != 0) fail(n, "in_channels must be divisible by groups");
  if (o.out_channels_ % o.groups_ != 0) fail(n, "out_channels must be divisible by groups");
  return e;
}

// kaiming_uniform_(a = sqrt(5)) for the weight, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias.
void reset_conv(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

void print_list(std::ostream& os, const std::vector<int64_t>& v) {
  os << "(";
  for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
  os << (v.size() == 1 ? ",)" : ")");
}

}  // namespace

template <size_t D>
ConvImpl<D>::ConvImpl(const ConvOptions<D>& o)
    : Module("Conv" + std::to_string(D) + "d"), options(expanded(o, "Conv" + std::to_string(D) + "d")) {
  std::vector<int64_t> shape{o.out_channels_, o.in_channels_ / o.groups_};
  shape.insert(shape.end(), options.kernel_size_.begin(), options.kernel_size_.end());
  weight = register_parameter("weight", kiln::empty(shape));
  bias = register_parameter("bias", o.bias_ ? kiln::empty({o.out_channels_}) : Tensor());
  reset_parameters();
}

template <size_t D> void ConvImpl<D>::reset_parameters() { reset_conv(weight, bias); }

template <size_t D> Tensor ConvImpl<D>::forward(const Tensor& input) const {
  const std::optional<Tensor> b = bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
  const ConvOptions<D>& o = options;
  if (o.padding_mode_) {
    const ConvPadding p(*o.padding_mode_);
    if constexpr (D == 1) return conv1d(input, weight, b, o.stride_, p, o.dilation_, o.groups_);
    if constexpr (D == 2) return conv2d(input, weight, b, o.stride_, p, o.dilation_, o.groups_);
    if constexpr (D == 3) return conv3d(input, weight, b, o.stride_, p, o.dilation_, o.groups_);
  }
  if constexpr (D == 1) return conv1d(input, weight, b, o.stride_, o.padding_, o.dilation_, o.groups_);
  if constexpr (D == 2) return conv2d(input, weight, b, o.stride_, o.padding_, o.dilation_, o.groups_);
  return conv3d(input, weight, b, o.stride_, o.padding_, o.dilation_, o.groups_);
}

template <size_t D> void ConvImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.in_channels_ << ", " << options.out_channels_ << ", kernel_size=";
  print_list(os, options.kernel_size_);
  os << ", stride=";
  print_list(os, options.stride_);
  if (options.padding_mode_) {
    os << ", padding=" << *options.padding_mode_;
  } else {
    os << ", padding=";
    print_list(os, options.padding_);
  }
  if (options.groups_ != 1) os << ", groups=" << options.groups_;
  if (!bias.defined()) os << ", bias=false";
  os << ")";
}

template <size_t D>
ConvTransposeImpl<D>::ConvTransposeImpl(const ConvOptions<D>& o)
    : Module("ConvTranspose" + std::to_string(D) + "d"), options(expanded(o, "ConvTranspose" + std::to_string(D) + "d")) {
  if (o.padding_mode_) fail(name(), "padding '{}' is only supported for convolutions", *o.padding_mode_);
  std::vector<int64_t> shape{o.in_channels_, o.out_channels_ / o.groups_};
  shape.insert(shape.end(), options.kernel_size_.begin(), options.kernel_size_.end());
  weight = register_parameter("weight", kiln::empty(shape));
  bias = register_parameter("bias", o.bias_ ? kiln::empty({o.out_channels_}) : Tensor());
  reset_parameters();
}

template <size_t D> void ConvTransposeImpl<D>::reset_parameters() { reset_conv(weight, bias); }

template <size_t D> Tensor ConvTransposeImpl<D>::forward(const Tensor& input) const {
  const std::optional<Tensor> b = bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
  const ConvOptions<D>& o = options;
  if constexpr (D == 1)
    return conv_transpose1d(input, weight, b, o.stride_, o.padding_, o.output_padding_, o.groups_, o.dilation_);
  if constexpr (D == 2)
    return conv_transpose2d(input, weight, b, o.stride_, o.padding_, o.output_padding_, o.groups_, o.dilation_);
  return conv_transpose3d(input, weight, b, o.stride_, o.padding_, o.output_padding_, o.groups_, o.dilation_);
}

template <size_t D> void ConvTransposeImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.in_channels_ << ", " << options.out_channels_ << ", kernel_size=";
  print_list(os, options.kernel_size_);
  os << ", stride=";
  print_list(os, options.stride_);
  os << ", padding=";
  print_list(os, options.padding_);
  os << ", output_padding=";
  print_list(os, options.output_padding_);
  if (!bias.defined()) os << ", bias=false";
  os << ")";
}

template class ConvImpl<1>;
template class ConvImpl<2>;
template class ConvImpl<3>;
template class ConvTransposeImpl<1>;
template class ConvTransposeImpl<2>;
template class ConvTransposeImpl<3>;

}  // namespace kiln::nn
