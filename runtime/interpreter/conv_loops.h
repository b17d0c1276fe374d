// kiln/runtime/interpreter/conv_loops.h — the direct convolution loops (aten.convolution semantics),
// shared by the interpreter's reference (interp_conv.cpp) and the library kernel for integer
// dtypes (extern_conv.cpp), which no library kiln uses computes.
//
// 1- and 2-D convolutions are treated as 3-D ones whose leading spatial dims have size 1. A
// convolution sums, for each output element, input[n, g * C_in/g + c, o * stride - padding +
// k * dilation] * weight[oc, c, k] over c and k; a transposed convolution scatters each input
// element times the weight to output position i * stride - padding + k * dilation. Sums run in
// float for f16, bf16 and f32 (PyTorch's CPU kernels accumulate in f32), in double for f64 and
// in wrapping uint64 for integers (the result is the dtype's wrapped sum, as PyTorch's); the
// bias is added last and the result rounded once. Operands are contiguous. An f64
// convolution's zero padding takes part in its products (an infinite weight over it gives NaN);
// other dtypes' padded taps add nothing (docs/decisions/numerics-and-semantics.md).
#pragma once

#include "ir/attr.h"
#include "ir/op.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kiln::rt {

using Dims3 = std::array<int64_t, 3>;

// The last `n` entries of a 3-entry spatial list, front-filled with `fill`.
inline Dims3 spatial3(const std::vector<int64_t>& v, size_t skip, int64_t fill) {
  Dims3 r{fill, fill, fill};
  const size_t n = v.size() - skip;
  for (size_t i = 0; i < n; ++i) r[3 - n + i] = v[skip + i];
  return r;
}

struct ConvParams {
  int64_t batch, c_in, c_out, groups;
  Dims3 in, out, kernel, stride, padding, dilation;
  bool transposed;
};

template <typename T>
void conv_loops(const ConvParams& p, const T* x, const T* w, const T* bias, T* y) {
  // Integers accumulate in uint64 (wrapping, as PyTorch's integer GEMM wraps in the dtype).
  using Acc = std::conditional_t<std::is_same_v<T, double>, double,
                                 std::conditional_t<std::is_integral_v<T>, uint64_t, float>>;
  const int64_t cig = p.c_in / p.groups, cog = p.c_out / p.groups;
  const int64_t in_sp = p.in[0] * p.in[1] * p.in[2], out_sp = p.out[0] * p.out[1] * p.out[2];
  const int64_t k_sp = p.kernel[0] * p.kernel[1] * p.kernel[2];
  std::vector<Acc> acc(static_cast<size_t>(p.batch * p.c_out * out_sp), Acc(0));
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t g = 0; g < p.groups; ++g)
      for (int64_t oc = 0; oc < cog; ++oc)
        for (int64_t ic = 0; ic < cig; ++ic) {
          const int64_t cin = g * cig + ic, cout = g * cog + oc;
          // Weight [C_out, C_in/g, k] for a convolution, [C_in, C_out/g, k] when transposed.
          const T* wk = p.transposed ? w + (cin * cog + oc) * k_sp : w + (cout * cig + ic) * k_sp;
          const T* xc = x + (n * p.c_in + cin) * in_sp;
          Acc* yc = acc.data() + (n * p.c_out + cout) * out_sp;
          for (int64_t k0 = 0; k0 < p.kernel[0]; ++k0)
            for (int64_t k1 = 0; k1 < p.kernel[1]; ++k1)
              for (int64_t k2 = 0; k2 < p.kernel[2]; ++k2) {
                const Acc wv = static_cast<Acc>(wk[(k0 * p.kernel[1] + k1) * p.kernel[2] + k2]);
                const Dims3 k{k0, k1, k2};
                // Walk the positions of the side that is iterated (the output for a
                // convolution, the input for a transposed one) and map to the other.
                const Dims3& walk = p.transposed ? p.in : p.out;
                const Dims3& other = p.transposed ? p.out : p.in;
                for (int64_t a = 0; a < walk[0]; ++a)
                  for (int64_t b = 0; b < walk[1]; ++b)
                    for (int64_t c = 0; c < walk[2]; ++c) {
                      const Dims3 at{a, b, c};
                      Dims3 to{};
                      bool inside = true;
                      for (int d = 0; d < 3; ++d) {
                        to[d] = at[d] * p.stride[d] - p.padding[d] + k[d] * p.dilation[d];
                        inside = inside && to[d] >= 0 && to[d] < other[d];
                      }
                      const int64_t walk_i = (a * walk[1] + b) * walk[2] + c;
                      if (!inside) {
                        // A tap on the zero padding: f64 multiplies the padded zero by the
                        // weight (0 * inf = NaN), as PyTorch's and kiln's f64 im2col do; f32,
                        // f16 and bf16 skip it, as oneDNN and PyTorch's mkldnn path do. A
                        // transposed convolution's taps past its output multiply nothing.
                        if constexpr (std::is_same_v<T, double>)
                          if (!p.transposed && !std::isfinite(wv)) yc[walk_i] += 0.0 * wv;
                        continue;
                      }
                      const int64_t other_i = (to[0] * other[1] + to[1]) * other[2] + to[2];
                      if (p.transposed) yc[other_i] += static_cast<Acc>(xc[walk_i]) * wv;
                      else yc[walk_i] += static_cast<Acc>(xc[other_i]) * wv;
                    }
              }
        }
  for (int64_t n = 0; n < p.batch; ++n)
    for (int64_t c = 0; c < p.c_out; ++c)
      for (int64_t i = 0; i < out_sp; ++i) {
        const int64_t at = (n * p.c_out + c) * out_sp + i;
        Acc v = acc[static_cast<size_t>(at)];
        if (bias) v += static_cast<Acc>(bias[c]);
        y[at] = static_cast<T>(v);
      }
}


// The geometry of a convolution of x [N, C, *spatial] by w with the convolution prim's attributes.
inline ConvParams conv_params(const std::vector<int64_t>& xs, const std::vector<int64_t>& ws, const ir::AttrList& attrs,
                              std::vector<int64_t>* out_sizes) {
  const ir::OpKind kind = ir::OpKind::convolution;
  ConvParams p{};
  p.transposed = attrs.get<bool>(kind, "transposed");
  p.groups = attrs.get<int64_t>(kind, "groups");
  p.batch = xs[0];
  p.c_in = xs[1];
  p.c_out = p.transposed ? ws[1] * p.groups : ws[0];
  p.in = spatial3(xs, 2, 1);
  p.kernel = spatial3(ws, 2, 1);
  p.stride = spatial3(attrs.get<std::vector<int64_t>>(kind, "stride"), 0, 1);
  p.padding = spatial3(attrs.get<std::vector<int64_t>>(kind, "padding"), 0, 0);
  p.dilation = spatial3(attrs.get<std::vector<int64_t>>(kind, "dilation"), 0, 1);
  const Dims3 out_pad = spatial3(attrs.get<std::vector<int64_t>>(kind, "output_padding"), 0, 0);
  *out_sizes = {p.batch, p.c_out};
  for (int d = 0; d < 3; ++d) {
    p.out[d] = p.transposed
                   ? (p.in[d] - 1) * p.stride[d] - 2 * p.padding[d] + p.dilation[d] * (p.kernel[d] - 1) + out_pad[d] + 1
                   : (p.in[d] + 2 * p.padding[d] - p.dilation[d] * (p.kernel[d] - 1) - 1) / p.stride[d] + 1;
    if (d >= 3 - static_cast<int>(xs.size() - 2)) out_sizes->push_back(p.out[d]);
  }
  return p;
}

}  // namespace kiln::rt
