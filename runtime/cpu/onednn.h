// kiln/runtime/cpu/onednn.h — oneDNN's kernels (convolutions, their weight gradient, SGEMM),
// in libkiln_onednn, opened on first use.
//
// oneDNN is the largest library kiln calls (about 1.3 ms of loading and relocation in every
// process that links it, measured with dlopen on the bench host), and most processes never
// run a convolution or a large f32 product: an exported program's softmax, a training step of
// an MLP on small batches. So libkiln does not link it. runtime/cpu/onednn_conv.cpp, the only
// file that includes oneDNN's headers (test_layering.cpp checks it), builds libkiln_onednn,
// which links libkiln and oneDNN; onednn() opens it beside libkiln (then on the loader's path)
// the first time a kernel needs it, as libkiln_llvm is opened for the first compile.
#pragma once

#include "frontend/tensor.h"

#include <cstdint>
#include <vector>

namespace kiln::rt {

// A convolution's attributes (the convolution prim's, ir/ops.def).
struct ConvArgs {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  bool transposed = false;
  int64_t groups = 1;
};

struct OneDnn {
  // y = conv(x, w) (+ bias), f32, every tensor strided as it is; oneDNN's primitives are
  // cached by shape (runtime/cpu/extern_conv.cpp's header).
  void (*conv)(const Tensor& x, const Tensor& w, const Tensor* bias, const Tensor& y, const ConvArgs& a);
  // dw = the weight's gradient of conv(src, .) given diff_dst, f32.
  void (*weight_grad)(const Tensor& src, const Tensor& diff_dst, const Tensor& dw, const ConvArgs& a);
  // dnnl_sgemm, row-major, ta/tb 'N' or 'T'; 0 on success, else oneDNN's status.
  int (*sgemm)(char ta, char tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
};

// The kernels, libkiln_onednn opened on the first call; kiln::Error naming every path tried
// when it cannot be opened.
const OneDnn& onednn();

}  // namespace kiln::rt

// libkiln_onednn's entry point.
extern "C" const kiln::rt::OneDnn* kiln_onednn_entry();
