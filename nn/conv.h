// kiln/nn/conv.h — Conv1d/2d/3d and ConvTranspose1d/2d/3d, as torch::nn's. A convolution's
// weight is [out, in / groups, *kernel], a transposed one's [in, out / groups, *kernel]; weight
// and bias [out] are drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in)) with fan_in = weight.size(1) *
// prod(kernel) (PyTorch's kaiming_uniform_(a = sqrt(5)) and bias rule). Padding is a size per
// dim, or kSame / kValid for a convolution; output_padding is the transposed one's; padding_mode
// "zeros" only.
#pragma once

#include "nn/module.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::nn {

// The padding modes "same" and "valid", as torch::kSame and torch::kValid.
struct PaddingSame {};
struct PaddingValid {};
inline constexpr PaddingSame kSame{};
inline constexpr PaddingValid kValid{};

template <size_t D> struct ConvOptions {
  // kernel_size, stride, padding and dilation: one value for every dim, or D values.
  ConvOptions(int64_t in_channels, int64_t out_channels, std::vector<int64_t> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(std::move(kernel_size)) {}
  ConvOptions(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvOptions(in_channels, out_channels, std::vector<int64_t>{kernel_size}) {}
  ConvOptions& stride(std::vector<int64_t> s) { return set(stride_, std::move(s)); }
  ConvOptions& stride(int64_t s) { return stride(std::vector<int64_t>{s}); }
  ConvOptions& padding(std::vector<int64_t> p) {
    padding_mode_.reset();
    return set(padding_, std::move(p));
  }
  ConvOptions& padding(int64_t p) { return padding(std::vector<int64_t>{p}); }
  ConvOptions& padding(PaddingSame) {
    padding_mode_ = "same";
    return *this;
  }
  ConvOptions& padding(PaddingValid) {
    padding_mode_ = "valid";
    return *this;
  }
  ConvOptions& dilation(std::vector<int64_t> d) { return set(dilation_, std::move(d)); }
  ConvOptions& dilation(int64_t d) { return dilation(std::vector<int64_t>{d}); }
  ConvOptions& output_padding(std::vector<int64_t> p) { return set(output_padding_, std::move(p)); }  // transposed
  ConvOptions& output_padding(int64_t p) { return output_padding(std::vector<int64_t>{p}); }
  ConvOptions& groups(int64_t g) {
    groups_ = g;
    return *this;
  }
  ConvOptions& bias(bool on) {
    bias_ = on;
    return *this;
  }

  int64_t in_channels_, out_channels_;
  std::vector<int64_t> kernel_size_, stride_{1}, padding_{0}, dilation_{1}, output_padding_{0};
  std::optional<std::string> padding_mode_;
  int64_t groups_ = 1;
  bool bias_ = true;

 private:
  ConvOptions& set(std::vector<int64_t>& field, std::vector<int64_t> v) {
    field = std::move(v);
    return *this;
  }
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;
using Conv3dOptions = ConvOptions<3>;
using ConvTranspose1dOptions = ConvOptions<1>;
using ConvTranspose2dOptions = ConvOptions<2>;
using ConvTranspose3dOptions = ConvOptions<3>;

template <size_t D> class ConvImpl : public Module {
 public:
  ConvImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvImpl(const ConvOptions<D>& options);
  void reset_parameters();
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;

  ConvOptions<D> options;  // every list expanded to D values
  Tensor weight, bias;
};
using Conv1dImpl = ConvImpl<1>;
using Conv2dImpl = ConvImpl<2>;
using Conv3dImpl = ConvImpl<3>;
KILN_MODULE(Conv1d);
KILN_MODULE(Conv2d);
KILN_MODULE(Conv3d);


template <size_t D> class ConvTransposeImpl : public Module {
 public:
  ConvTransposeImpl(int64_t in_channels, int64_t out_channels, int64_t kernel_size)
      : ConvTransposeImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  explicit ConvTransposeImpl(const ConvOptions<D>& options);
  void reset_parameters();
  Tensor forward(const Tensor& input) const;
  void pretty_print(std::ostream& os) const override;

  ConvOptions<D> options;
  Tensor weight, bias;
};
using ConvTranspose1dImpl = ConvTransposeImpl<1>;
using ConvTranspose2dImpl = ConvTransposeImpl<2>;
using ConvTranspose3dImpl = ConvTransposeImpl<3>;
KILN_MODULE(ConvTranspose1d);
KILN_MODULE(ConvTranspose2d);
KILN_MODULE(ConvTranspose3d);

extern template class ConvImpl<1>;
extern template class ConvImpl<2>;
extern template class ConvImpl<3>;
extern template class ConvTransposeImpl<1>;
extern template class ConvTransposeImpl<2>;
extern template class ConvTransposeImpl<3>;

}  // namespace kiln::nn
