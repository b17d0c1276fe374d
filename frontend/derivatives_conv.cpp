// kiln/frontend/derivatives_conv.cpp — the Conv family's derivative (frontend/derivatives.h):
// the convolution prim's rule is convolution_backward (frontend/ops_conv.h), which writes each
// of the three gradients as another convolution.
#include "frontend/derivatives_detail.h"
#include "frontend/ops_conv.h"

namespace kiln::autograd {

namespace {

using ir::OpKind;

std::vector<Tensor> d_convolution(const GradArgs& a) {
  const bool has_bias = a.input_meta.size() > 2;
  ConvolutionGrads r = convolution_backward(
      a.grad(), a.in(0), a.in(1), a.attr<std::vector<int64_t>>("stride"), a.attr<std::vector<int64_t>>("padding"),
      a.attr<std::vector<int64_t>>("dilation"), a.attr<bool>("transposed"),
      a.attr<std::vector<int64_t>>("output_padding"), a.attr<int64_t>("groups"),
      {a.need(0), a.need(1), has_bias && a.need(2)});
  std::vector<Tensor> out{r.input, r.weight};
  if (has_bias) out.push_back(r.bias);
  return out;
}

}  // namespace

void add_conv_derivatives(DerivativeTable& t) {
  // Saves input (for the weight's gradient) and weight (for the input's).
  t.rule(OpKind::convolution, d_convolution, bit(0) | bit(1));
}

}  // namespace kiln::autograd
