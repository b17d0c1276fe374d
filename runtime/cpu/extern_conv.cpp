// kiln/runtime/cpu/extern_conv.cpp — the convolution prim as an extern kernel: oneDNN for f32
// (and for f16/bf16, computed in f32; runtime/cpu/onednn.h, in libkiln_onednn), im2col +
// OpenBLAS dgemm for f64; and the weight's gradient (convolution_backward_weight, a Core node
// the cpu runs whole) as oneDNN's backward-weights primitive.
//
// oneDNN was chosen over kiln's own im2col + BLAS by measurement (docs/decisions.md, "The
// convolution kernel"): on a ResNet 3x3 conv [32, 64, 56, 56] on this 2-core host oneDNN's
// brgconv ran at ~190 GFLOP/s against ~50 for im2col + OpenBLAS, whose im2col matrix is
// nine times the input. The primitive is created with format `any` so that oneDNN picks its
// blocked layouts; the user's strided tensors are reordered in and out, which the figure
// includes. Primitives are cached by everything that shapes them (dims, strides, dtype and
// attributes), so a warm call only executes. oneDNN has no f64 convolution: f64 runs the
// textbook im2col (col2im for a transposed convolution) around cblas_dgemm, batch by batch
// and group by group. Integer convolutions (which no library here computes) run the direct
// loops of runtime/interpreter/conv_loops.h, the interpreter's own, in wrapping integer arithmetic as
// PyTorch's; bool ones are rejected by the shape function, as PyTorch's CPU kernels do.
#include "runtime/cpu/extern_kernels.h"

#include "runtime/cpu/blas_library.h"
#include "runtime/cpu/onednn.h"
#include "runtime/cpu/parallel_gemm.h"
#include "runtime/interpreter/conv_loops.h"
#include "runtime/thread_pool.h"

#include "base/error.h"
#include "base/tensor_impl.h"
#include "frontend/decompositions.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"

#include <fmt/format.h>

#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace kiln::rt {

namespace {

ConvArgs conv_args(const ir::AttrList& attrs) {
  const ir::OpKind k = ir::OpKind::convolution;
  return {attrs.get<std::vector<int64_t>>(k, "stride"), attrs.get<std::vector<int64_t>>(k, "padding"),
          attrs.get<std::vector<int64_t>>(k, "dilation"), attrs.get<std::vector<int64_t>>(k, "output_padding"),
          attrs.get<bool>(k, "transposed"), attrs.get<int64_t>(k, "groups")};
}

// ---- im2col + dgemm (f64) ---------------------------------------------------------------------

// Spatial geometry of one convolution, as flat loops over up to 3 spatial dims.
struct Geometry {
  std::vector<int64_t> in, out, kernel;
  int64_t in_numel = 1, out_numel = 1, k_numel = 1;
};

// For kernel offset `k` and output position `o` (flat), the flat input position or -1 when
// it falls in the padding.
int64_t input_pos(const Geometry& g, const ConvArgs& a, int64_t k, int64_t o) {
  int64_t pos = 0;
  for (size_t d = g.in.size(); d-- > 0;) {
    const int64_t kd = k % g.kernel[d], od = o % g.out[d];
    k /= g.kernel[d];
    o /= g.out[d];
    const int64_t i = od * a.stride[d] - a.padding[d] + kd * a.dilation[d];
    if (i < 0 || i >= g.in[d]) return -1;
    int64_t scale = 1;
    for (size_t e = d + 1; e < g.in.size(); ++e) scale *= g.in[e];
    pos += i * scale;
  }
  return pos;
}

void dgemm_conv(const Tensor& x0, const Tensor& w0, const Tensor* bias, const Tensor& y, const ConvArgs& a) {
  const Tensor x = x0.contiguous(), w = w0.contiguous();
  const auto& xs = x.impl()->sizes();
  const auto& ys = y.impl()->sizes();
  const auto& ws = w.impl()->sizes();
  Geometry g;
  for (size_t d = 2; d < xs.size(); ++d) {
    // A transposed convolution is the adjoint of the convolution from y's geometry to x's.
    g.in.push_back(a.transposed ? ys[d] : xs[d]);
    g.out.push_back(a.transposed ? xs[d] : ys[d]);
    g.kernel.push_back(ws[d]);
    g.in_numel *= g.in.back();
    g.out_numel *= g.out.back();
    g.k_numel *= g.kernel.back();
  }
  const int64_t G = a.groups, N = xs[0];
  const int64_t c_small = a.transposed ? ys[1] / G : xs[1] / G;  // channels of the "input" side per group
  const int64_t c_big = a.transposed ? xs[1] / G : ys[1] / G;    // channels of the "output" side per group
  const int64_t rows = c_small * g.k_numel, L = g.out_numel;
  if (rows > INT_MAX || L > INT_MAX || c_big > INT_MAX) fail("convolution", "sizes exceed the BLAS limit of {}", INT_MAX);
  std::vector<double> col(static_cast<size_t>(rows * L));
  const double* xp = static_cast<const double*>(x.data_ptr());
  const double* wp = static_cast<const double*>(w.data_ptr());
  Tensor yc = y.is_contiguous() ? y : empty(y.sizes(), TensorOptions(kDouble));
  double* yp = static_cast<double*>(yc.data_ptr());
  const int64_t y_plane = a.transposed ? g.in_numel : g.out_numel;
  std::memset(yp, 0, static_cast<size_t>(N * ys[1] * y_plane) * sizeof(double));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t gi = 0; gi < G; ++gi) {
      // Weight block of this group: [c_big, rows] for a convolution, [c_big, rows] read from
      // [IC, OC/G, k] = [G][c_big][c_small * k] for a transposed one: the same row-major shape.
      const double* wg = wp + gi * c_big * rows;
      if (!a.transposed) {
        const double* xg = xp + (n * xs[1] + gi * c_small) * g.in_numel;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t c = r / g.k_numel, k = r % g.k_numel;
          for (int64_t o = 0; o < L; ++o) {
            const int64_t i = input_pos(g, a, k, o);
            col[static_cast<size_t>(r * L + o)] = i < 0 ? 0.0 : xg[c * g.in_numel + i];
          }
        }
        blas().dgemm(BlasLibrary::kRowMajor, BlasLibrary::kNoTrans, BlasLibrary::kNoTrans, static_cast<int>(c_big), static_cast<int>(L),
                    static_cast<int>(rows), 1.0, wg, static_cast<int>(rows), col.data(), static_cast<int>(L), 0.0,
                    yp + (n * ys[1] + gi * c_big) * L, static_cast<int>(L));
      } else {
        // col = W_g^T [rows, c_big] @ x[n, g] [c_big, L]; then scatter-add (col2im) into y.
        const double* xg = xp + (n * xs[1] + gi * c_big) * L;
        blas().dgemm(BlasLibrary::kRowMajor, BlasLibrary::kTrans, BlasLibrary::kNoTrans, static_cast<int>(rows), static_cast<int>(L),
                    static_cast<int>(c_big), 1.0, wg, static_cast<int>(rows), xg, static_cast<int>(L), 0.0, col.data(),
                    static_cast<int>(L));
        double* yg = yp + (n * ys[1] + gi * c_small) * g.in_numel;
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t c = r / g.k_numel, k = r % g.k_numel;
          for (int64_t o = 0; o < L; ++o) {
            const int64_t i = input_pos(g, a, k, o);
            if (i >= 0) yg[c * g.in_numel + i] += col[static_cast<size_t>(r * L + o)];
          }
        }
      }
    }
  if (bias) {
    const Tensor b = bias->contiguous();
    const double* bp = static_cast<const double*>(b.data_ptr());
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < ys[1]; ++c)
        for (int64_t i = 0; i < y_plane; ++i) yp[(n * ys[1] + c) * y_plane + i] += bp[c];
  }
  if (!yc.is_same(y)) Tensor(y).copy_(yc);
}

// ---- one tap per output cell: a transposed convolution as one GEMM (f32) ------------------------

// A transposed convolution whose kernel equals its stride, without padding, dilation, output
// padding or groups (U-Net's 2x2 upsampling with stride 2) gives every output cell exactly one
// tap of one input cell: out[n, oc, s * k + t] = sum_ic w[ic, oc, t] * x[n, ic, s] (+ bias[oc])
// per spatial dim. That is one product per image, T[OC * K, S] = W^T [OC * K, IC] @ X [IC, S]
// (K taps, S input cells), whose tap planes are then spread over the output with the bias.
// oneDNN 2.6's deconvolution primitive took 0.2-0.5 ms for each of U-Net's three ([2, 32, 32,
// 32] -> [2, 16, 64, 64]: 17 MFLOP), several times the product's time (docs/decisions/ops-nn.md).
bool one_tap_per_cell(const Tensor& w, const ConvArgs& a) {
  if (!a.transposed || a.groups != 1) return false;
  for (size_t i = 0; i < a.stride.size(); ++i)
    if (a.padding[i] != 0 || a.output_padding[i] != 0 || a.dilation[i] != 1 || a.stride[i] != w.size(static_cast<int64_t>(i) + 2))
      return false;
  return true;
}

void one_tap_deconv(const Tensor& x0, const Tensor& w0, const Tensor* bias, const Tensor& y, const ConvArgs& a) {
  const Tensor x = x0.contiguous(), w = w0.contiguous();
  const int64_t N = x.size(0), IC = x.size(1), OC = w.size(1), dims = x.dim() - 2;
  int64_t S = 1, K = 1;
  for (int64_t d = 0; d < dims; ++d) {
    S *= x.size(d + 2);
    K *= w.size(d + 2);
  }
  const int64_t rows = OC * K;
  if (rows > INT_MAX || S > INT_MAX || IC > INT_MAX) fail("convolution", "sizes exceed the BLAS limit of {}", INT_MAX);
  Tensor yc = y.is_contiguous() ? y : empty(y.sizes(), TensorOptions(kFloat));
  // Where input cell s and tap t land in an output plane: at cell[s] + tap[t].
  std::vector<int64_t> ostride(static_cast<size_t>(dims)), cell(static_cast<size_t>(S)), tap(static_cast<size_t>(K));
  for (int64_t d = dims, st = 1; d-- > 0;) {
    ostride[static_cast<size_t>(d)] = st;
    st *= yc.size(d + 2);
  }
  auto place = [&](std::vector<int64_t>& out, bool taps) {
    for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
      int64_t rest = i, pos = 0;
      for (int64_t d = dims; d-- > 0;) {
        const int64_t extent = taps ? w.size(d + 2) : x.size(d + 2);
        const int64_t c = rest % extent;
        rest /= extent;
        pos += (taps ? c : c * a.stride[static_cast<size_t>(d)]) * ostride[static_cast<size_t>(d)];
      }
      out[static_cast<size_t>(i)] = pos;
    }
  };
  place(cell, false);
  place(tap, true);
  const Tensor t = empty({N, rows, S}, TensorOptions(kFloat));
  const float* xp = static_cast<const float*>(x.data_ptr());
  const float* wp = static_cast<const float*>(w.data_ptr());
  float* tp = static_cast<float*>(t.data_ptr());
  for (int64_t n = 0; n < N; ++n)
    gemm<float>(BlasLibrary::kTrans, BlasLibrary::kNoTrans, rows, S, IC, wp, rows, xp + n * IC * S, S, tp + n * rows * S,
                S, /*parallel=*/true);
  const Tensor b = bias ? bias->contiguous() : Tensor();
  const float* bp = bias ? static_cast<const float*>(b.data_ptr()) : nullptr;
  float* yp = static_cast<float*>(yc.data_ptr());
  const int64_t plane = S * K;
  parallel_for(N * OC, std::max<int64_t>(1, 16384 / plane), [&](int64_t lo, int64_t hi) {
    for (int64_t nc = lo; nc < hi; ++nc) {
      const float add = bp ? bp[nc % OC] : 0.0f;
      float* out = yp + nc * plane;
      const float* src = tp + nc * K * S;  // T[n, oc * K + t, s]: rows (n, oc) are consecutive
      for (int64_t k = 0; k < K; ++k)
        for (int64_t s = 0; s < S; ++s) out[cell[static_cast<size_t>(s)] + tap[static_cast<size_t>(k)]] = src[k * S + s] + add;
    }
  });
  if (!yc.is_same(y)) Tensor(y).copy_(yc);
}

// Integer dtypes: the direct loops over contiguous operands, into y (through a contiguous
// buffer when y is strided).
void integer_conv(const Tensor& x0, const Tensor& w0, const Tensor* bias0, const Tensor& y, const ir::AttrList& attrs) {
  const Tensor x = x0.contiguous(), w = w0.contiguous();
  const Tensor bias = bias0 ? bias0->contiguous() : Tensor();
  std::vector<int64_t> out_sizes;
  const ConvParams p = conv_params(x.sizes().vec(), w.sizes().vec(), attrs, &out_sizes);
  Tensor yc = y.is_contiguous() ? y : empty(y.sizes(), TensorOptions(y.dtype()));
  dispatch_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      conv_loops<T>(p, static_cast<const T*>(x.data_ptr()), static_cast<const T*>(w.data_ptr()),
                    bias.defined() ? static_cast<const T*>(bias.data_ptr()) : nullptr, static_cast<T*>(yc.data_ptr()));
    } else {
      internal_fail("integer_conv: {}", dtype_name(x.dtype()));
    }
  });
  if (!yc.is_same(y)) Tensor(y).copy_(yc);
}

// The bias [C] shaped to add over an output of rank `rank` ([C, 1, ...]).
Tensor channel_bias(const Tensor& bias, int64_t rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank - 1), 1);
  shape[0] = bias.numel();
  return bias.reshape(shape);
}

// convolution_backward_weight: oneDNN's backward-weights primitive for f32 (f16/bf16 in f32,
// rounded once); other dtypes, and geometries oneDNN's size rule does not describe (a
// transposed convolution whose output_padding reaches the stride), run the node's
// decomposition, convolutions with the batch as channels.
void conv_weight_grad(const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  const ir::OpKind k = ir::OpKind::convolution_backward_weight;
  const bool transposed = attrs.get<bool>(k, "transposed");
  ConvArgs a{attrs.get<std::vector<int64_t>>(k, "stride"), attrs.get<std::vector<int64_t>>(k, "padding"),
             attrs.get<std::vector<int64_t>>(k, "dilation"), {}, false, attrs.get<int64_t>(k, "groups")};
  a.output_padding.assign(a.stride.size(), 0);
  // The convolution whose weight this is reads src and writes dst: a transposed one's adjoint.
  const Tensor& src = transposed ? ins.at(0) : ins.at(1);
  const Tensor& dst = transposed ? ins.at(1) : ins.at(0);
  if (out.numel() == 0) return;
  Tensor dw = out;
  if (src.numel() == 0 || dst.numel() == 0) {
    dw.zero_();
    return;
  }
  const std::vector<int64_t> kernel = attrs.get<std::vector<int64_t>>(k, "kernel_size");
  bool described = true;
  for (size_t i = 0; i < kernel.size(); ++i) {
    const int64_t d = static_cast<int64_t>(i) + 2;
    const int64_t span = src.size(d) + 2 * a.padding[i] - a.dilation[i] * (kernel[i] - 1) - 1;
    described = described && span >= 0 && span / a.stride[i] + 1 == dst.size(d);
  }
  const ScalarType dt = out.dtype();
  if (!described || (dt != kFloat && dt != kHalf && dt != kBFloat16)) {
    dw.copy_(run_decomposition(k, ins, attrs).at(0));
    return;
  }
  if (dt != kFloat) {
    Tensor dw32 = empty(dw.sizes(), TensorOptions(kFloat));
    onednn().weight_grad(src.to(kFloat), dst.to(kFloat), dw32, a);
    dw.copy_(dw32);
    return;
  }
  onednn().weight_grad(src, dst, dw, a);
}

}  // namespace

void extern_conv(ir::OpKind op, const std::vector<Tensor>& ins, const ir::AttrList& attrs, const Tensor& out) {
  if (op == ir::OpKind::convolution_backward_weight) return conv_weight_grad(ins, attrs, out);
  const ConvArgs a = conv_args(attrs);
  const Tensor& x = ins.at(0);
  const Tensor& w = ins.at(1);
  const Tensor* bias = ins.size() > 2 ? &ins[2] : nullptr;
  if (out.numel() == 0) return;
  Tensor y = out;
  // Nothing to sum (no input channels or an empty batch is caught above): the bias alone.
  if (x.numel() == 0 || w.numel() == 0) {
    y.zero_();
    if (bias) y.add_(channel_bias(*bias, y.dim()));
    return;
  }
  const ScalarType dt = x.dtype();
  if (dt == kDouble) return dgemm_conv(x, w, bias, y, a);
  if (is_integral(dt, /*include_bool=*/false)) return integer_conv(x, w, bias, y, attrs);
  if (dt != kFloat) {  // f16 / bf16: compute in f32, round once
    Tensor b32 = bias ? bias->to(kFloat) : Tensor();
    Tensor y32 = empty(y.sizes(), TensorOptions(kFloat));
    extern_conv(ir::OpKind::convolution, bias ? std::vector<Tensor>{x.to(kFloat), w.to(kFloat), b32} : std::vector<Tensor>{x.to(kFloat), w.to(kFloat)},
                attrs, y32);
    y.copy_(y32);
    return;
  }
  // oneDNN's padding_r is padding - output_padding; where that is negative the last output
  // cells get no contribution: compute into the view without them over a bias-filled output.
  ConvArgs trimmed = a;
  std::vector<int64_t> view_sizes = y.sizes().vec();
  bool trim = false;
  for (size_t i = 0; i < a.padding.size(); ++i)
    if (a.padding[i] < a.output_padding[i]) {
      view_sizes[i + 2] -= a.output_padding[i] - a.padding[i];
      trimmed.output_padding[i] = a.padding[i];
      trim = true;
    }
  if (one_tap_per_cell(w, a)) return one_tap_deconv(x, w, bias, y, a);
  if (!trim) return onednn().conv(x, w, bias, y, a);
  y.zero_();
  onednn().conv(x, w, nullptr, y.as_strided(view_sizes, y.strides(), y.storage_offset()), trimmed);
  if (bias) y.add_(channel_bias(*bias, y.dim()));
}

}  // namespace kiln::rt
