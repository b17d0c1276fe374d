// kiln/ir/shape_fns_conv.cpp — the shape function of the convolution prim.
//
// convolution is aten.convolution: an input [N, C_in, *spatial] with 1 to 3 spatial dims, a
// weight [C_out, C_in / groups, *kernel] (transposed: [C_in, C_out / groups, *kernel]), an
// optional bias [C_out], and per-spatial-dim stride, padding, dilation and output_padding
// lists that the frontend has already expanded to one entry per spatial dim. The frontend
// checks the same conditions first in PyTorch's words (frontend/ops_conv.cpp); these checks
// guard graphs read from text and give the output type, with symbolic sizes where the
// input's are.
#include "base/error.h"
#include "ir/shape_fns.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir {

Expr conv_output_size(const Expr& in, int64_t kernel, int64_t stride, int64_t padding, int64_t dilation,
                      bool transposed, int64_t output_padding) {
  if (transposed)
    return (in - Expr(1)) * Expr(stride) - Expr(2 * padding) + Expr(dilation * (kernel - 1) + output_padding + 1);
  return floordiv(in + Expr(2 * padding - dilation * (kernel - 1) - 1), Expr(stride)) + Expr(1);
}

namespace shape_detail {

namespace {



}  // namespace

TensorType infer_conv(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_conv(op)) {
    case ConvOp::convolution: break;
    case ConvOp::convolution_backward:  // shaped by their decompositions (infer_types never asks)
    case ConvOp::convolution_backward_weight:
      internal_fail("infer_conv: {} is shaped by its decomposition", op_name(op));
  }
  const std::string name(op_name(op));
  const TensorType& x = in[0];
  const TensorType& w = in[1];
  const Device device = common_device(op, in);
  const auto& stride = attrs.get<std::vector<int64_t>>(op, "stride");
  const auto& padding = attrs.get<std::vector<int64_t>>(op, "padding");
  const auto& dilation = attrs.get<std::vector<int64_t>>(op, "dilation");
  const auto& output_padding = attrs.get<std::vector<int64_t>>(op, "output_padding");
  const bool transposed = attrs.get<bool>(op, "transposed");
  const int64_t groups = attrs.get<int64_t>(op, "groups");

  if (x.rank() < 3 || x.rank() > 5)
    fail(name, "expected a 3-D, 4-D or 5-D input ([N, C, *spatial]), got {}-D input of size {}", x.rank(), sizes_str(x));
  if (w.rank() != x.rank())
    fail(name, "Expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional input of size {} instead",
         w.rank(), w.rank(), sizes_str(w), x.rank(), sizes_str(x));
  check_same_dtype(op, x, w);
  // PyTorch's CPU convolves every integer dtype but bool; transposed, only int64.
  if (x.dtype == ScalarType::Bool || (transposed && !is_floating_point(x.dtype) && x.dtype != ScalarType::Int64))
    fail(name, "\"{}\" not implemented for '{}'", transposed ? "slow_conv_transpose2d_out_cpu" : "slow_conv2d_cpu",
         c10_type_name(x.dtype));
  const size_t spatial = static_cast<size_t>(x.rank() - 2);
  for (const auto* list : {&stride, &padding, &dilation, &output_padding})
    if (list->size() != spatial)
      fail(name, "stride, padding, dilation and output_padding need {} entries (one per spatial dim), got {}, {}, {} and {}",
           spatial, ints_str(stride), ints_str(padding), ints_str(dilation), ints_str(output_padding));
  for (size_t i = 0; i < spatial; ++i) {
    if (stride[i] <= 0) fail(name, "non-positive stride is not supported, got {}", ints_str(stride));
    if (padding[i] < 0) fail(name, "negative padding is not supported, got {}", ints_str(padding));
    if (dilation[i] <= 0) fail(name, "dilation should be greater than zero, got {}", ints_str(dilation));
    if (output_padding[i] < 0 || (!transposed && output_padding[i] != 0))
      fail(name, "output_padding {} is not valid{}", ints_str(output_padding), transposed ? "" : " for a convolution that is not transposed");
    if (transposed && output_padding[i] >= std::max(stride[i], dilation[i]))
      fail(name, "output padding must be smaller than either stride or dilation, got output_padding {}, stride {}, dilation {}",
           ints_str(output_padding), ints_str(stride), ints_str(dilation));
  }
  if (groups <= 0) fail(name, "non-positive groups is not supported, got {}", groups);

  // Channels: the weight's sizes are those of a parameter, so they are usually constants; a
  // symbolic one is checked where it folds.
  const Expr c_in = x.sizes[1];
  const Expr w_in = transposed ? w.sizes[0] : w.sizes[1] * Expr(groups);
  if (known_diff(c_in, w_in).value_or(0) != 0)
    fail(name, "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
         groups, sizes_str(w), sizes_str(x), w_in.str(), c_in.str());
  const Expr c_out = transposed ? w.sizes[1] * Expr(groups) : w.sizes[0];
  if (!transposed) {
    if (auto oc = w.sizes[0].maybe_const(); oc && *oc % groups != 0)
      fail(name, "Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of size {} instead",
           groups, groups, sizes_str(w));
  } else if (auto ic = w.sizes[0].maybe_const(); ic && *ic % groups != 0) {
    fail(name, "Given transposed=1, weight of size {}, expected input{} to be divisible by groups={}", sizes_str(w),
         sizes_str(x), groups);
  }
  if (in.size() > 2) {
    const TensorType& b = in[2];
    check_same_dtype(op, x, b);
    if (b.rank() != 1 || known_diff(b.sizes[0], c_out).value_or(0) != 0)
      fail(name, "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
           sizes_str(w), c_out.str(), sizes_str(b));
  }

  std::vector<Expr> out{x.sizes[0], c_out};
  for (size_t i = 0; i < spatial; ++i) {
    const std::optional<int64_t> k = w.sizes[i + 2].maybe_const();
    if (!k) fail(name, "the kernel size must be static, got weight of size {}", sizes_str(w));
    const Expr o = conv_output_size(x.sizes[i + 2], *k, stride[i], padding[i], dilation[i], transposed, output_padding[i]);
    if (auto oc = o.maybe_const(); oc && *oc <= 0) {
      std::vector<std::string> ins, outs;
      for (size_t j = 0; j < spatial; ++j) {
        ins.push_back(x.sizes[j + 2].str());
        const auto kj = w.sizes[j + 2].maybe_const();
        outs.push_back(conv_output_size(x.sizes[j + 2], kj.value_or(1), stride[j], padding[j], dilation[j], transposed,
                                        output_padding[j]).str());
      }
      fail(name, "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size is too small",
           fmt::join(ins, " x "), fmt::join(outs, " x "));
    }
    out.push_back(o);
  }
  return TensorType(x.dtype, out, device);
}

}  // namespace shape_detail
}  // namespace kiln::ir
