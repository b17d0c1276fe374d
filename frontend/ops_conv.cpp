// kiln/frontend/ops_conv.cpp — the convolutions of frontend/ops_conv.h.
//
// Every entry point normalizes its arguments as PyTorch's convolution front end does
// (single-entry lists expanded per spatial dim, an unbatched input given a batch dim of 1,
// "same" padding turned into a symmetric padding plus, where the total is odd, a constant
// pad of the input's end) and records the convolution prim, whose shape function checks
// the shapes, groups and dtypes (ir/shape_fns_conv.cpp).
#include "frontend/ops_conv.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"
#include "ir/shape_fns.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace kiln {

namespace {

bool present(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

// A one-entry list applies to every spatial dim (PyTorch's expand_param_if_needed).
std::vector<int64_t> per_dim(std::string_view op, std::string_view what, IntArrayRef v, size_t spatial) {
  if (v.size() == 1) return std::vector<int64_t>(spatial, v[0]);
  if (v.size() != spatial)
    fail(op, "expected {} to be a single integer value or a list of {} values to match the convolution dimensions, but "
             "got {}={}",
         what, spatial, what, shape_str(v));
  return v.vec();
}

// The rank check of conv1d/2d/3d and conv_transpose*: [C, *spatial] or [N, C, *spatial].
bool batched_input(std::string_view op, const Tensor& input, size_t spatial) {
  const int64_t r = input.dim();
  const int64_t want = static_cast<int64_t>(spatial) + 2;
  if (r != want && r != want - 1)
    fail(op, "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}", want - 1, want, op,
         shape_str(input.sizes()));
  return r == want;
}

Tensor record(std::string_view op, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
              const std::vector<int64_t>& dilation, bool transposed, const std::vector<int64_t>& output_padding,
              int64_t groups) {
  if (!input.defined() || !weight.defined()) fail(op, "received an undefined tensor");
  if (groups <= 0) fail(op, "non-positive groups is not supported");
  for (int64_t s : stride)
    if (s <= 0) fail(op, "non-positive stride is not supported");
  for (int64_t p : padding)
    if (p < 0) fail(op, "negative padding is not supported");
  for (int64_t d : dilation)
    if (d <= 0) fail(op, "dilation should be greater than zero");
  if (weight.dim() != input.dim())
    fail(op, "Expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional input of size {} instead",
         weight.dim(), weight.dim(), shape_str(weight.sizes()), input.dim(), shape_str(input.sizes()));
  if (input.dtype() != weight.dtype())
    fail(op, "Input type ({}) and weight type ({}) should be the same", c10_type_name(input.dtype()),
         c10_type_name(weight.dtype()));
  // The kernel size shapes the output and the library call: it is static. A traced weight's
  // symbolic kernel dims are read (which guards them) and the weight recorded at those sizes.
  Tensor w = weight;
  if (is_symbolic(weight)) {
    std::vector<ir::Expr> sizes = sym_sizes(weight);
    for (size_t d = 2; d < sizes.size(); ++d) sizes[d] = ir::Expr(weight.size(static_cast<int64_t>(d)));
    if (sizes != sym_sizes(weight)) w = sym_reshape(weight, sizes);
  }
  // Channels and output sizes, decided with guards where the sizes are symbolic (the shape
  // function can only check what folds to a constant).
  if (is_symbolic(input) || is_symbolic(w)) {
    const ir::Expr c_in = sym_size(input, 1);
    const ir::Expr w_in = transposed ? sym_size(w, 0) : sym_size(w, 1) * ir::Expr(groups);
    if (!ir::sym_eq(c_in, w_in))
      fail(op, "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
           groups, ir::str(sym_sizes(w)), ir::str(sym_sizes(input)), w_in.str(), c_in.str());
    const ir::Expr c_out = transposed ? sym_size(w, 1) * ir::Expr(groups) : sym_size(w, 0);
    if (present(bias) && (bias->dim() != 1 || !ir::sym_eq(sym_size(*bias, 0), c_out)))
      fail(op, "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {}",
           ir::str(sym_sizes(w)), c_out.str(), ir::str(sym_sizes(*bias)));
    for (size_t i = 0; i < stride.size(); ++i) {
      const int64_t d = static_cast<int64_t>(i) + 2;
      const ir::Expr o = ir::conv_output_size(sym_size(input, d), w.size(d), stride[i], padding[i], dilation[i],
                                              transposed, output_padding[i]);
      if (ir::sym_lt(o, ir::Expr(1)))
        fail(op, "Given input size per channel {}, calculated output size {} in dim {} is too small",
             ir::str(sym_sizes(input)), o.str(), d);
    }
  }
  std::vector<Tensor> ins{input, w};
  if (present(bias)) {
    if (bias->dtype() != input.dtype())
      fail(op, "Input type ({}) and bias type ({}) should be the same", c10_type_name(input.dtype()),
           c10_type_name(bias->dtype()));
    ins.push_back(*bias);
  }
  return dispatch1(ir::OpKind::convolution, std::move(ins),
                   {stride, padding, dilation, transposed, output_padding, groups});
}

Tensor conv_nd(std::string_view op, size_t spatial, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
               int64_t groups) {
  const bool batched = batched_input(op, input, spatial);
  const Tensor x = batched ? input : input.unsqueeze(0);
  Tensor y = record(op, x, weight, bias, per_dim(op, "stride", stride, spatial), per_dim(op, "padding", padding, spatial),
                    per_dim(op, "dilation", dilation, spatial), false, std::vector<int64_t>(spatial, 0), groups);
  return batched ? y : y.squeeze(0);
}

Tensor conv_nd(std::string_view op, size_t spatial, const Tensor& input, const Tensor& weight,
               const std::optional<Tensor>& bias, IntArrayRef stride, std::string_view padding, IntArrayRef dilation,
               int64_t groups) {
  if (padding == "valid")
    return conv_nd(op, spatial, input, weight, bias, stride, IntArrayRef(int64_t{0}), dilation, groups);
  if (padding != "same") fail(op, "Invalid padding string: '{}'", padding);
  const std::vector<int64_t> s = per_dim(op, "stride", stride, spatial);
  for (int64_t v : s)
    if (v != 1) fail(op, "padding='same' is not supported for strided convolutions");
  const std::vector<int64_t> d = per_dim(op, "dilation", dilation, spatial);
  if (weight.dim() != static_cast<int64_t>(spatial) + 2)
    fail(op, "Expected {}-dimensional weight for padding='same', got weight of size {}", spatial + 2,
         shape_str(weight.sizes()));
  // Total padding d * (k - 1) per dim: half on each side, the odd element at the end.
  std::vector<int64_t> sym(spatial), extra;  // extra: constant_pad_nd's list, last dim first
  bool odd = false;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t total = d[i] * (weight.size(static_cast<int64_t>(i) + 2) - 1);
    sym[i] = total / 2;
    odd = odd || total % 2 != 0;
  }
  for (size_t i = spatial; i-- > 0;) {
    extra.push_back(0);
    extra.push_back(d[i] * (weight.size(static_cast<int64_t>(i) + 2) - 1) % 2);
  }
  batched_input(op, input, spatial);
  const Tensor x = odd ? constant_pad_nd(input, extra) : input;
  return conv_nd(op, spatial, x, weight, bias, s, sym, d, groups);
}

Tensor conv_transpose_nd(std::string_view op, size_t spatial, const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  const bool batched = batched_input(op, input, spatial);
  const Tensor x = batched ? input : input.unsqueeze(0);
  const std::vector<int64_t> s = per_dim(op, "stride", stride, spatial), d = per_dim(op, "dilation", dilation, spatial);
  const std::vector<int64_t> op_pad = per_dim(op, "output_padding", output_padding, spatial);
  for (size_t i = 0; i < spatial; ++i)
    if (op_pad[i] < 0 || op_pad[i] >= std::max(s[i], d[i]))
      fail(op, "output padding must be smaller than either stride or dilation, but got output_padding={}, stride={}, "
               "dilation={}",
           shape_str(op_pad), shape_str(s), shape_str(d));
  Tensor y = record(op, x, weight, bias, s, per_dim(op, "padding", padding, spatial), d, true, op_pad, groups);
  return batched ? y : y.squeeze(0);
}

}  // namespace

Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups) {
  const int64_t r = input.dim();
  if (r < 3 || r > 5)
    fail("convolution", "expected a 3-D, 4-D or 5-D input ([N, C, *spatial]), got input of size {}",
         shape_str(input.sizes()));
  const size_t spatial = static_cast<size_t>(r - 2);
  return record("convolution", input, weight, bias, per_dim("convolution", "stride", stride, spatial),
                per_dim("convolution", "padding", padding, spatial),
                per_dim("convolution", "dilation", dilation, spatial), transposed,
                per_dim("convolution", "output_padding", output_padding, spatial), groups);
}

namespace {

// The weight's gradient of a (non-transposed) convolution of x [N, G*cg, *S] giving
// gy [N, G*og, *O]: dw[g*og+o, c, k] = sum over n and positions p of
// x[n, g*cg+c, p*stride + k*dilation - padding] * gy[n, g*og+o, p]. That is a convolution of x
// with the channels as the batch and the batch as the channels ([cg, G*N, *S]) by gy as the
// weight ([G*og, N, *O]), with stride and dilation swapped; its output is at least the kernel
// size and is cut to it.
Tensor conv_weight_grad(const Tensor& gy, const Tensor& x, const std::vector<int64_t>& kernel,
                        const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                        const std::vector<int64_t>& dilation, int64_t groups) {
  Tensor xt;
  if (groups == 1) {
    xt = x.transpose(0, 1);
  } else {
    std::vector<ir::Expr> xs = sym_sizes(x);
    const ir::Expr n = xs[0], cg = ir::floordiv(xs[1], ir::Expr(groups));
    std::vector<ir::Expr> split{n, ir::Expr(groups), cg};
    split.insert(split.end(), xs.begin() + 2, xs.end());
    xt = sym_reshape(x, split).transpose(0, 2);  // [cg, G, N, *S]
    std::vector<ir::Expr> merged{cg, ir::Expr(groups) * n};
    merged.insert(merged.end(), xs.begin() + 2, xs.end());
    xt = sym_reshape(xt, merged);
  }
  const std::vector<int64_t> no_pad(stride.size(), 0);
  Tensor w = record("convolution_backward", xt, gy.transpose(0, 1), std::nullopt, dilation, padding, stride, false,
                    no_pad, groups);
  for (size_t i = 0; i < kernel.size(); ++i) {
    const int64_t d = static_cast<int64_t>(i) + 2;
    if (w.size(d) != kernel[i]) w = w.narrow(d, 0, kernel[i]);
  }
  return w.transpose(0, 1);
}

// convolution_backward's decomposition: each gradient output_mask asks for as another
// convolution (the others are left out).
std::vector<Tensor> convolution_backward_impl(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                              const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                                              const std::vector<int64_t>& dilation, bool transposed, int64_t groups,
                                              std::array<bool, 3> output_mask) {
  constexpr std::string_view op = "convolution_backward";
  const size_t spatial = static_cast<size_t>(input.dim() - 2);
  std::vector<int64_t> kernel;
  for (size_t i = 0; i < spatial; ++i) kernel.push_back(weight.size(static_cast<int64_t>(i) + 2));
  ConvolutionGrads r;
  r.input = r.weight = r.bias = decomp::left_out(grad_output);
  if (output_mask[0]) {
    if (transposed) {
      r.input = record(op, grad_output, weight, std::nullopt, stride, padding, dilation, false,
                       std::vector<int64_t>(spatial, 0), groups);
    } else {
      // The transposed convolution's output_padding restores the input positions the forward
      // stride skipped at the end.
      std::vector<int64_t> restore(spatial, 0);
      for (size_t i = 0; i < spatial; ++i) {
        if (stride[i] == 1) continue;
        const int64_t d = static_cast<int64_t>(i) + 2;
        const ir::Expr covered = (sym_size(grad_output, d) - ir::Expr(1)) * ir::Expr(stride[i]) -
                                 ir::Expr(2 * padding[i]) + ir::Expr(dilation[i] * (kernel[i] - 1) + 1);
        // With dynamic sizes the rest is read at the hints and guarded (PyTorch's guard_int).
        const ir::Expr rest = sym_size(input, d) - covered;
        std::optional<int64_t> r = rest.maybe_const();
        if (!r && ir::ShapeEnv::current()) r = ir::ShapeEnv::current()->specialize(rest);
        if (!r)
          fail(op, "a strided convolution's input gradient needs static spatial sizes; input {} has a dynamic dim {}",
               ir::str(sym_sizes(input)), d);
        restore[i] = *r;
      }
      r.input = record(op, grad_output, weight, std::nullopt, stride, padding, dilation, true, restore, groups);
    }
  }
  if (output_mask[1])
    r.weight = convolution_backward_weight(grad_output, input, kernel, stride, padding, dilation, transposed, groups);
  if (output_mask[2]) {
    std::vector<int64_t> dims{0};
    for (size_t i = 0; i < spatial; ++i) dims.push_back(static_cast<int64_t>(i) + 2);
    r.bias = sum(grad_output, dims);
  }
  return {r.input, r.weight, r.bias};
}

}  // namespace

ConvolutionGrads convolution_backward(const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                                      IntArrayRef stride_, IntArrayRef padding_, IntArrayRef dilation_, bool transposed,
                                      IntArrayRef output_padding_, int64_t groups, std::array<bool, 3> output_mask) {
  constexpr std::string_view op = "convolution_backward";
  if (!grad_output.defined() || !input.defined() || !weight.defined()) fail(op, "received an undefined tensor");
  if (input.dim() < 3 || input.dim() > 5 || grad_output.dim() != input.dim() || weight.dim() != input.dim())
    fail(op, "expected grad_output, input and weight of one rank between 3 and 5 ([N, C, *spatial]), got {}, {} and {}",
         ir::str(sym_sizes(grad_output)), ir::str(sym_sizes(input)), ir::str(sym_sizes(weight)));
  if (grad_output.dtype() != input.dtype() || weight.dtype() != input.dtype())
    fail(op, "expected grad_output, input and weight of one dtype, got {}, {} and {}", c10_type_name(grad_output.dtype()),
         c10_type_name(input.dtype()), c10_type_name(weight.dtype()));
  if (groups < 1) fail(op, "non-positive groups is not supported, got groups={}", groups);
  const size_t spatial = static_cast<size_t>(input.dim() - 2);
  const std::vector<int64_t> s = per_dim(op, "stride", stride_, spatial), p = per_dim(op, "padding", padding_, spatial);
  const std::vector<int64_t> dl = per_dim(op, "dilation", dilation_, spatial);
  const std::vector<int64_t> op_pad = per_dim(op, "output_padding", output_padding_, spatial);
  for (size_t i = 0; i < spatial; ++i) {
    const auto d = static_cast<int64_t>(i) + 2;
    const ir::Expr want =
        ir::conv_output_size(sym_size(input, d), weight.size(d), s[i], p[i], dl[i], transposed, op_pad[i]);
    if (!ir::sym_eq(sym_size(grad_output, d), want))
      fail(op, "expected grad_output of the convolution's output size {} in dim {}, got grad_output {} (input {}, weight {})",
           want.str(), d, ir::str(sym_sizes(grad_output)), ir::str(sym_sizes(input)), ir::str(sym_sizes(weight)));
  }
  std::vector<Tensor> r = dispatch(OpCall{
      ir::OpKind::convolution_backward,
      {grad_output, input, weight},
      ir::AttrList({s, p, dl, transposed, op_pad, groups,
                    std::vector<int64_t>{output_mask[0], output_mask[1], output_mask[2]}})});
  r = decomp::masked_results(std::move(r), output_mask);
  return {r.at(0), r.at(1), r.at(2)};
}

Tensor convolution_backward_weight(const Tensor& grad_output, const Tensor& input, IntArrayRef kernel_size,
                                   IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                                   int64_t groups) {
  constexpr std::string_view op = "convolution_backward_weight";
  if (!grad_output.defined() || !input.defined()) fail(op, "received an undefined tensor");
  if (input.dim() < 3 || input.dim() > 5 || grad_output.dim() != input.dim())
    fail(op, "expected grad_output and input of one rank between 3 and 5 ([N, C, *spatial]), got {} and {}",
         ir::str(sym_sizes(grad_output)), ir::str(sym_sizes(input)));
  if (grad_output.dtype() != input.dtype())
    fail(op, "expected grad_output and input of one dtype, got {} and {}", c10_type_name(grad_output.dtype()),
         c10_type_name(input.dtype()));
  if (groups < 1) fail(op, "non-positive groups is not supported, got groups={}", groups);
  const size_t spatial = static_cast<size_t>(input.dim() - 2);
  const std::vector<int64_t> k = per_dim(op, "kernel_size", kernel_size, spatial), s = per_dim(op, "stride", stride, spatial);
  const std::vector<int64_t> p = per_dim(op, "padding", padding, spatial), dl = per_dim(op, "dilation", dilation, spatial);
  for (size_t i = 0; i < spatial; ++i) {
    if (k[i] < 1 || s[i] < 1 || p[i] < 0 || dl[i] < 1)
      fail(op, "expected kernel_size, stride and dilation >= 1 and padding >= 0, got kernel_size={}, stride={}, "
               "padding={}, dilation={}",
           shape_str(k), shape_str(s), shape_str(p), shape_str(dl));
    // grad_output has the convolution's output size (a transposed one's, up to an
    // output_padding below max(stride, dilation)).
    const auto d = static_cast<int64_t>(i) + 2;
    const ir::Expr want = ir::conv_output_size(sym_size(input, d), k[i], s[i], p[i], dl[i], transposed, 0);
    const ir::Expr extra = sym_size(grad_output, d) - want;
    const std::optional<int64_t> e = extra.maybe_const();
    const bool fits = transposed ? (!e || (*e >= 0 && *e < std::max(s[i], dl[i]))) : ir::sym_eq(extra, ir::Expr(0));
    if (!fits)
      fail(op, "expected grad_output of the {}convolution's output size {} in dim {}, got grad_output {} (input {})",
           transposed ? "transposed " : "", want.str(), d, ir::str(sym_sizes(grad_output)), ir::str(sym_sizes(input)));
  }
  for (const Tensor* t : {&grad_output, &input}) {
    const std::optional<int64_t> c = sym_size(*t, 1).maybe_const();
    if (c && *c % groups != 0)
      fail(op, "expected the channels of grad_output {} and input {} to be divisible by groups={}",
           ir::str(sym_sizes(grad_output)), ir::str(sym_sizes(input)), groups);
  }
  return dispatch1(ir::OpKind::convolution_backward_weight, {grad_output, input}, {k, s, p, dl, transposed, groups});
}

namespace decomp {

std::vector<Tensor> convolution_backward(const DecompArgs& a) {
  return convolution_backward_impl(a.in(0), a.in(1), a.in(2), a.attr<std::vector<int64_t>>("stride"),
                                   a.attr<std::vector<int64_t>>("padding"), a.attr<std::vector<int64_t>>("dilation"),
                                   a.attr<bool>("transposed"), a.attr<int64_t>("groups"), output_mask(a));
}

// A transposed convolution's weight is that of the convolution from its output back to its
// input: the roles of grad_output and input swap.
std::vector<Tensor> convolution_backward_weight(const DecompArgs& a) {
  const auto kernel = a.attr<std::vector<int64_t>>("kernel_size"), stride = a.attr<std::vector<int64_t>>("stride");
  const auto padding = a.attr<std::vector<int64_t>>("padding"), dilation = a.attr<std::vector<int64_t>>("dilation");
  const int64_t groups = a.attr<int64_t>("groups");
  return {a.attr<bool>("transposed") ? conv_weight_grad(a.in(1), a.in(0), kernel, stride, padding, dilation, groups)
                                     : conv_weight_grad(a.in(0), a.in(1), kernel, stride, padding, dilation, groups)};
}

}  // namespace decomp

#define KILN_CONV_ND(name, n)                                                                                       \
  Tensor name(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,     \
              IntArrayRef padding, IntArrayRef dilation, int64_t groups) {                                          \
    return conv_nd(#name, n, input, weight, bias, stride, padding, dilation, groups);                              \
  }                                                                                                                 \
  Tensor name(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,     \
              ConvPadding padding, IntArrayRef dilation, int64_t groups) {                                          \
    return conv_nd(#name, n, input, weight, bias, stride, padding.mode, dilation, groups);                              \
  }
KILN_CONV_ND(conv1d, 1)
KILN_CONV_ND(conv2d, 2)
KILN_CONV_ND(conv3d, 3)
#undef KILN_CONV_ND

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return conv_transpose_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, output_padding, groups, dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return conv_transpose_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, output_padding, groups, dilation);
}
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation) {
  return conv_transpose_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, output_padding, groups, dilation);
}

}  // namespace kiln
