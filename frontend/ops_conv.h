// kiln/frontend/ops_conv.h — convolutions: conv1d/2d/3d, conv_transpose1d/2d/3d and the
// general convolution they all record.
//
// Names, argument order, defaults and semantics follow libtorch (at::conv2d,
// at::conv_transpose2d, at::convolution): a stride, padding, dilation or output_padding
// list of one entry applies to every spatial dim; conv1d/2d/3d also take padding "valid" or
// "same" (stride 1 only; an odd total padding puts the extra element at the end, as PyTorch
// does); an input without the batch dim ([C, *spatial]) gives an output without it. Each
// records one convolution prim (ir/ops.def), which the CPU backend runs on oneDNN (f64:
// im2col + BLAS) and the interpreter runs as direct loops.
#pragma once

#include "frontend/tensor.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace kiln {

// The padding "valid" or "same" of conv1d/2d/3d, as a type of its own: a plain string_view
// parameter would make conv2d(x, w, b, 1, 0) ambiguous (0 converts to a null const char*).
struct ConvPadding {
  std::string_view mode;
  template <size_t N> ConvPadding(const char (&s)[N]) : mode(s) {}  // NOLINT: implicit by design
  ConvPadding(std::string_view s) : mode(s) {}                       // NOLINT
  ConvPadding(const std::string& s) : mode(s) {}                     // NOLINT
};

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups);

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
// padding: "valid" or "same".
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              ConvPadding padding, IntArrayRef dilation = 1, int64_t groups = 1);

// weight: [C_in, C_out / groups, *kernel]. Note libtorch's order: groups before dilation.
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = 1, IntArrayRef padding = 0, IntArrayRef output_padding = 0,
                        int64_t groups = 1, IntArrayRef dilation = 1);

// The gradients of convolution(input, weight, bias, ...) given grad_output, the gradient of its
// output (at::convolution_backward): output_mask picks which of the input's, the weight's and
// the bias's to compute (the others are undefined). Each is another convolution: the input's
// is the transposed convolution of grad_output by the same weight (a convolution, for a
// transposed one), the weight's is a convolution of the input by grad_output with the batch
// as the reduced channel dim, and the bias's sums grad_output over the batch and space.
struct ConvolutionGrads {
  Tensor input, weight, bias;
};
ConvolutionGrads convolution_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                      IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                      IntArrayRef output_padding, int64_t groups, std::array<bool, 3> output_mask);
// The weight's gradient alone, given the weight's spatial sizes instead of the weight (what
// convolution_backward records for output_mask[1]; the cpu runs it as oneDNN's backward-weights
// primitive). Lists as in convolution_backward, one entry per spatial dim or one for all.
Tensor convolution_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef kernel_size,
                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                   int64_t groups);

}  // namespace kiln
