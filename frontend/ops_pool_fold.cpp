// kiln/frontend/ops_pool_fold.cpp — the Pool family's sliding blocks: unfold and fold
// (frontend/ops_pool.h), recorded as prims, and col2im's decomposition.
//
// unfold pads the input and stacks one strided slice per kernel offset: views and a stack,
// fused into one kernel. fold is the adjoint: every element of the columns is added at its
// position in the padded output by one scatter_add over the flattened planes (the positions
// are integers computed here from the static sizes), then the padding is cropped. The
// scatter visits the kernel offsets, then the blocks, in order, for each plane, which is the
// order PyTorch's col2im adds them in, so float sums agree bit for bit.
#include "frontend/ops_pool.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"

#include <fmt/format.h>

#include <string>
#include <vector>

namespace kiln {

namespace {

std::vector<int64_t> pair_of(std::string_view op, std::string_view what, IntArrayRef v) {
  if (v.size() == 1) return {v[0], v[0]};
  if (v.size() != 2) fail(op, "{} must be an int or a tuple of two ints, got {}", what, shape_str(v));
  return v.vec();
}

struct Blocks {
  std::vector<int64_t> k, d, p, s;
  int64_t blocks_h = 0, blocks_w = 0;
};

Blocks geometry(std::string_view op, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
                IntArrayRef stride, int64_t H, int64_t W) {
  Blocks b{pair_of(op, "kernel_size", kernel_size), pair_of(op, "dilation", dilation), pair_of(op, "padding", padding),
           pair_of(op, "stride", stride)};
  for (int i = 0; i < 2; ++i) {
    if (b.k[i] <= 0) fail(op, "kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}", b.k[0], b.k[1]);
    if (b.s[i] <= 0) fail(op, "stride should be greater than zero, but got stride_height: {} stride_width: {}", b.s[0], b.s[1]);
    if (b.d[i] <= 0)
      fail(op, "dilation should be greater than zero, but got dilation_height: {} dilation_width: {}", b.d[0], b.d[1]);
    if (b.p[i] < 0) fail(op, "padding should be non-negative, but got padding_height: {} padding_width: {}", b.p[0], b.p[1]);
  }
  b.blocks_h = (H + 2 * b.p[0] - (b.d[0] * (b.k[0] - 1) + 1)) / b.s[0] + 1;
  b.blocks_w = (W + 2 * b.p[1] - (b.d[1] * (b.k[1] - 1) + 1)) / b.s[1] + 1;
  if (b.blocks_h < 1 || b.blocks_w < 1)
    fail(op, "Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), "
             "calculated shape of the array of sliding blocks as ({}, {}), but its components must be at least one.",
         H, W, b.k[0], b.k[1], b.d[0], b.d[1], b.p[0], b.p[1], b.blocks_h, b.blocks_w);
  return b;
}

}  // namespace

Tensor unfold(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  const std::string_view op = "im2col";
  const bool batched = input.dim() == 4;
  bool ok = input.dim() == 3 || batched;
  for (int64_t i = batched ? 1 : 0; ok && i < input.dim(); ++i) ok = input.size(i) != 0;
  if (!ok)
    fail(op, "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, "
             "but got: {}",
         shape_str(input.sizes()));
  if (!is_floating_point(input.dtype())) fail(op, "\"im2col_out_cpu\" not implemented for '{}'", c10_type_name(input.dtype()));
  const Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t N = x.size(0), C = x.size(1);
  const Blocks b = geometry(op, kernel_size, dilation, padding, stride, x.size(2), x.size(3));
  const Tensor xp = constant_pad_nd(x, {b.p[1], b.p[1], b.p[0], b.p[0]});
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < b.k[0]; ++i)
    for (int64_t j = 0; j < b.k[1]; ++j)
      taps.push_back(xp.slice(2, i * b.d[0], i * b.d[0] + (b.blocks_h - 1) * b.s[0] + 1, b.s[0])
                         .slice(3, j * b.d[1], j * b.d[1] + (b.blocks_w - 1) * b.s[1] + 1, b.s[1]));
  const Tensor cols = stack(taps, 2).reshape({N, C * b.k[0] * b.k[1], b.blocks_h * b.blocks_w});
  return batched ? cols : cols.squeeze(0);
}

namespace {

Tensor fold_prims(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
                  IntArrayRef padding, IntArrayRef stride) {
  const std::string_view op = "col2im";
  const bool batched = input.dim() == 3;
  bool ok = input.dim() == 2 || batched;
  for (int64_t i = batched ? 1 : 0; ok && i < input.dim(); ++i) ok = input.size(i) != 0;
  if (!ok)
    fail(op, "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, "
             "but got: {}",
         shape_str(input.sizes()));
  if (!is_floating_point(input.dtype())) fail(op, "\"col2im_out_cpu\" not implemented for '{}'", c10_type_name(input.dtype()));
  const std::vector<int64_t> out = pair_of(op, "output_size", output_size);
  const Tensor x = batched ? input : input.unsqueeze(0);
  const Blocks b = geometry(op, kernel_size, dilation, padding, stride, out[0], out[1]);
  const int64_t K = b.k[0] * b.k[1], N = x.size(0), L = x.size(2);
  if (x.size(1) % K != 0)
    fail(op, "Expected size of input's dimension 1 to be divisible by the product of kernel_size, but got "
             "input.size(1)={} and kernel_size=({}, {})",
         x.size(1), b.k[0], b.k[1]);
  if (L != b.blocks_h * b.blocks_w)
    fail(op, "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), stride=({}, {}), "
             "expected size of input's dimension 2 to match the calculated number of sliding blocks {} * {} = {}, but got "
             "input.size(2)={}.",
         out[0], out[1], b.k[0], b.k[1], b.d[0], b.d[1], b.p[0], b.p[1], b.s[0], b.s[1], b.blocks_h, b.blocks_w,
         b.blocks_h * b.blocks_w, L);
  const int64_t C = x.size(1) / K, Hp = out[0] + 2 * b.p[0], Wp = out[1] + 2 * b.p[1];
  // The padded-plane position of column element (i, j, block (oh, ow)), from iotas (a
  // decomposition records its constants): (i d0 + oh s0) Wp + (j d1 + ow s1).
  const TensorOptions i64 = TensorOptions(ScalarType::Int64).device(x.device());
  const Tensor i = arange(b.k[0], i64).reshape({b.k[0], 1, 1, 1}), j = arange(b.k[1], i64).reshape({1, b.k[1], 1, 1});
  const Tensor oh = arange(b.blocks_h, i64).reshape({1, 1, b.blocks_h, 1});
  const Tensor ow = arange(b.blocks_w, i64).reshape({1, 1, 1, b.blocks_w});
  const Tensor where_to = (i * b.d[0] + oh * b.s[0]) * Wp + (j * b.d[1] + ow * b.s[1]);  // [kh, kw, bh, bw]
  const Tensor index = where_to.reshape({1, 1, K * L}).expand({N, C, K * L});
  const Tensor planes = zeros({N, C, Hp * Wp}, TensorOptions(x.dtype()).device(x.device()))
                            .scatter_add(2, index, x.reshape({N, C, K * L}));
  const Tensor img = planes.reshape({N, C, Hp, Wp}).slice(2, b.p[0], b.p[0] + out[0]).slice(3, b.p[1], b.p[1] + out[1]);
  return batched ? img : img.squeeze(0);
}

}  // namespace

// fold records the col2im node (Core ATen's name), its lists expanded to two entries.
Tensor fold(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
            IntArrayRef stride) {
  const std::string_view op = "col2im";
  return dispatch1(ir::OpKind::col2im, {input},
                   {pair_of(op, "output_size", output_size), pair_of(op, "kernel_size", kernel_size),
                    pair_of(op, "dilation", dilation), pair_of(op, "padding", padding), pair_of(op, "stride", stride)});
}

namespace decomp {

std::vector<Tensor> col2im(const DecompArgs& a) {
  return {fold_prims(a.in(0), a.attr<std::vector<int64_t>>("output_size"), a.attr<std::vector<int64_t>>("kernel_size"),
                     a.attr<std::vector<int64_t>>("dilation"), a.attr<std::vector<int64_t>>("padding"),
                     a.attr<std::vector<int64_t>>("stride"))};
}

}  // namespace decomp

}  // namespace kiln
