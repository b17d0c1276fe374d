// kiln/frontend/ops_resample.cpp — interpolate, upsample_*2d and the index-based pad modes
// (frontend/ops_resample.h).
//
// Resampling is separable: each spatial dim is resampled on its own, the last dim first, which
// for bilinear gives PyTorch's h0 * (w0 * x00 + w1 * x01) + h1 * (...) term for term. Per dim
// the source positions are computed in the graph from iotas, with PyTorch's formulas in its
// compute dtype (a decomposition records no eager constants): nearest takes one source row
// (an expand of views when the size grows by an integer factor, decided from the static
// sizes, else an index_select), linear takes two (index_select) weighted by lambdas. Only the
// two neighbours enter a value, so an inf or NaN stays where PyTorch has it. upsample_nearest2d
// and upsample_bilinear2d are Core nodes whose decomposition is this resampling.
// Padding by mode is a cat of slices: reflect's mirrored rows one by one, replicate's edge row
// expanded, circular's opposite end.
#include "frontend/ops_resample.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_pool.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <string>

namespace kiln {

namespace {

using ir::Expr;

// Elements [start, end) of dim d, with symbolic bounds.
Tensor slice_expr(const Tensor& t, int64_t d, const Expr& start, const Expr& end) {
  return dispatch1(ir::OpKind::slice, {t}, {d, start, end, Expr(1)});
}

// `t` with dim d of size 1 expanded to `n`.
Tensor expand_dim(const Tensor& t, int64_t d, int64_t n) {
  std::vector<Expr> sizes = sym_sizes(t);
  sizes[static_cast<size_t>(d)] = Expr(n);
  return sym_expand(t, sizes);
}

ScalarType compute_dtype(ScalarType t) { return t == ScalarType::Double ? t : ScalarType::Float; }

// ---- source positions, as PyTorch's CPU kernels compute them (UpSample.h) ----------------------

// The scale from output to input positions: 1 / scale_factor when one was given, else in / out.
double source_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 0.0;
  return scale && *scale > 0 ? 1.0 / *scale : static_cast<double>(in) / static_cast<double>(out);
}

std::vector<int64_t> nearest_sources(int64_t in, int64_t out, std::optional<double> scale) {
  std::vector<int64_t> src(static_cast<size_t>(out));
  const float s = static_cast<float>(source_scale(in, out, false, scale));  // PyTorch computes in f32
  for (int64_t o = 0; o < out; ++o) {
    if (out == in) src[static_cast<size_t>(o)] = o;
    else if (out == 2 * in) src[static_cast<size_t>(o)] = o >> 1;
    else src[static_cast<size_t>(o)] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
  }
  return src;
}

// ---- one dim -------------------------------------------------------------------------------------

// Positions 0..n-1 of dim d of a rank-`rank` tensor, shaped to broadcast along it.
Tensor positions_along(int64_t n, int64_t d, int64_t rank, ScalarType dtype, Device device) {
  std::vector<Expr> shape(static_cast<size_t>(rank), Expr(1));
  shape[static_cast<size_t>(d)] = Expr(n);
  return sym_reshape(sym_iota(Expr(n), dtype, device), shape);
}

// `x` with dim d taken from rows `src` (nearest). The rows are known here (static sizes),
// which picks the form; the general one computes them in the graph, as PyTorch does in f32:
// min(floor(o * scale), in - 1).
Tensor take_rows(const Tensor& x, int64_t d, const std::vector<int64_t>& src, int64_t in, std::optional<double> scale) {
  const int64_t out = static_cast<int64_t>(src.size());
  bool identity = out == in, repeat = out % in == 0;
  for (int64_t o = 0; o < out; ++o) {
    identity = identity && src[static_cast<size_t>(o)] == o;
    repeat = repeat && src[static_cast<size_t>(o)] == o / (out / in);
  }
  if (identity) return x;
  if (repeat) {  // each row k times: a view, fused into its consumer
    std::vector<Expr> merged = sym_sizes(x);
    merged[static_cast<size_t>(d)] = Expr(out);
    return sym_reshape(expand_dim(x.unsqueeze(d + 1), d + 1, out / in), merged);
  }
  const float s = static_cast<float>(source_scale(in, out, false, scale));
  const Tensor o = sym_iota(Expr(out), ScalarType::Float, x.device());
  const Tensor rows = clamp_max(floor(o * Scalar(static_cast<double>(s))).to(ScalarType::Int64), Scalar(in - 1));
  return x.index_select(d, rows);
}

// `x` (in the compute dtype T) with dim d linearly resampled: PyTorch's source index i0, its
// neighbour i1 and the weights l0, l1, computed in the graph in T as its CPU kernels compute
// them (UpSample.h: area_pixel_compute_source_index, guard_index_and_lambda).
Tensor blend_rows(const Tensor& x, int64_t d, int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  const ScalarType T = x.dtype();
  const Tensor o = positions_along(out, d, x.dim(), T, x.device());
  const double s = T == ScalarType::Double ? source_scale(in, out, align_corners, scale)
                                           : static_cast<double>(static_cast<float>(source_scale(in, out, align_corners, scale)));
  Tensor i0 = o.to(ScalarType::Int64), i1 = i0, l1 = zeros_like(o);
  if (out != in) {
    const Tensor real = align_corners ? o * Scalar(s) : clamp_min((o + Scalar(0.5)) * Scalar(s) - Scalar(0.5), Scalar(0.0));
    i0 = clamp_max(real.to(ScalarType::Int64), Scalar(in - 1));
    l1 = clamp(real - i0.to(T), Scalar(0.0), Scalar(1.0));
    i1 = where(lt(i0, in - 1), i0 + 1, i0);
  }
  const Tensor l0 = 1 - l1;
  auto rows = [&](const Tensor& i) { return x.index_select(d, sym_reshape(i, {Expr(out)})); };
  return rows(i0) * l0 + rows(i1) * l1;
}

struct Plan {
  std::vector<int64_t> in, out;
  std::vector<std::optional<double>> scales;  // passed to the source positions
};

Tensor resample(const Tensor& input, const Plan& p, bool linear, bool align_corners) {
  // PyTorch's CPU kernels resample floating point and uint8 (nearest only) tensors.
  if (!is_floating_point(input.dtype()) && (linear || input.dtype() != ScalarType::UInt8))
    fail(linear ? "upsample_linear" : "upsample_nearest", "\"{}\" not implemented for '{}': expected a floating-point{} input",
         linear ? "upsample_linear" : "upsample_nearest", c10_type_name(input.dtype()), linear ? "" : " or uint8");
  const int64_t first = input.dim() - static_cast<int64_t>(p.in.size());
  Tensor x = linear ? input.to(compute_dtype(input.dtype())) : input;
  for (size_t i = p.in.size(); i-- > 0;) {
    const int64_t d = first + static_cast<int64_t>(i);
    x = linear ? blend_rows(x, d, p.in[i], p.out[i], align_corners, p.scales[i])
               : take_rows(x, d, nearest_sources(p.in[i], p.out[i], p.scales[i]), p.in[i], p.scales[i]);
  }
  return linear ? x.to(input.dtype()) : (x.is_same(input) ? input.clone() : x);
}

// The static spatial sizes of input (a symbolic one is pinned by the read).
std::vector<int64_t> spatial_sizes(const Tensor& input, size_t k) {
  std::vector<int64_t> in;
  for (size_t i = 0; i < k; ++i) in.push_back(input.size(input.dim() - static_cast<int64_t>(k) + static_cast<int64_t>(i)));
  return in;
}

void check_sizes(std::string_view op, const Plan& p) {
  for (size_t i = 0; i < p.in.size(); ++i)
    if (p.in[i] <= 0 || p.out[i] <= 0)
      fail(op, "Input and output sizes should be greater than 0, but got input ({}) and output ({})", shape_str(p.in),
           shape_str(p.out));
}

}  // namespace

Tensor interpolate(const Tensor& input, std::optional<std::vector<int64_t>> size,
                   std::optional<std::vector<double>> scale_factor, std::string_view mode,
                   std::optional<bool> align_corners, std::optional<bool> recompute_scale_factor) {
  const std::string_view op = "interpolate";
  if (input.dim() < 3 || input.dim() > 5)
    fail(op, "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | linear | "
             "bilinear | trilinear | area (got {})", input.dim(), mode);
  const size_t k = static_cast<size_t>(input.dim() - 2);
  const bool linear = mode == "linear" || mode == "bilinear" || mode == "trilinear";
  if (!linear && mode != "nearest" && mode != "area")
    fail(op, "mode \"{}\" is not supported; kiln implements nearest, linear, bilinear, trilinear and area", mode);
  if (linear) {
    const size_t need = mode == "linear" ? 1 : mode == "bilinear" ? 2 : 3;
    if (k != need) fail(op, "Got {}D input, but {} mode needs {}D input", input.dim(), mode, need + 2);
  } else if (align_corners.has_value()) {
    fail(op, "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear");
  }
  if (size && scale_factor) fail(op, "only one of size or scale_factor should be defined");
  if (!size && !scale_factor) fail(op, "either size or scale_factor should be defined");
  Plan p;
  p.in = spatial_sizes(input, k);
  if (size) {
    if (size->size() != 1 && size->size() != k)
      fail(op, "Input and output must have the same number of spatial dimensions, but got input with spatial "
               "dimensions of {} and output size of {}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
               "and output size in (o1, o2, ...,oK) format.", shape_str(p.in), shape_str(*size));
    for (size_t i = 0; i < k; ++i) p.out.push_back((*size)[size->size() == 1 ? 0 : i]);
    p.scales.assign(k, std::nullopt);
  } else {
    if (scale_factor->size() != 1 && scale_factor->size() != k)
      fail(op, "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial "
               "dimensions of {} and scale_factor of {} entries. Please provide input tensor in (N, C, d1, d2, ...,dK) "
               "format and scale_factor in (s1, s2, ...,sK) format.", shape_str(p.in), scale_factor->size());
    for (size_t i = 0; i < k; ++i) {
      const double s = (*scale_factor)[scale_factor->size() == 1 ? 0 : i];
      p.out.push_back(static_cast<int64_t>(std::floor(static_cast<double>(p.in[i]) * s)));
      // Recomputing the scale (or area mode) derives it from the sizes instead.
      p.scales.push_back(recompute_scale_factor.value_or(false) ? std::nullopt : std::optional<double>(s));
    }
  }
  check_sizes(op, p);
  if (mode == "area") {
    if (k == 1) return adaptive_avg_pool1d(input, p.out);
    if (k == 2) return adaptive_avg_pool2d(input, p.out);
    return adaptive_avg_pool3d(input, p.out);
  }
  // 4-D nearest and bilinear record their Core nodes, as PyTorch's interpolate calls them.
  if (k == 2 && mode == "nearest")
    return upsample_nearest2d(input, p.out, p.scales[0], p.scales[1]);
  if (k == 2 && mode == "bilinear")
    return upsample_bilinear2d(input, p.out, align_corners.value_or(false), p.scales[0], p.scales[1]);
  return resample(input, p, linear, align_corners.value_or(false));
}

// The upsample nodes: scales are attributes, 0 for none (as PyTorch, a scale <= 0 is unused).
Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scales_h,
                          std::optional<double> scales_w) {
  return dispatch1(ir::OpKind::upsample_nearest2d, {input},
                   {output_size.vec(), scales_h.value_or(0.0), scales_w.value_or(0.0)});
}

Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scales_h, std::optional<double> scales_w) {
  return dispatch1(ir::OpKind::upsample_bilinear2d, {input},
                   {output_size.vec(), align_corners, scales_h.value_or(0.0), scales_w.value_or(0.0)});
}

namespace {

Tensor upsample2d(std::string_view op, const decomp::DecompArgs& a, bool linear, bool align_corners) {
  const Tensor& input = a.in(0);
  const std::vector<int64_t>& output_size = a.attr<std::vector<int64_t>>("output_size");
  if (input.dim() != 4) fail(op, "Non-empty 4D data tensor expected but got a tensor with sizes {}", shape_str(input.sizes()));
  if (output_size.size() != 2) fail(op, "It is expected output_size equals to 2, but got size {}", output_size.size());
  auto scale = [&](std::string_view name) -> std::optional<double> {
    const double v = a.attr<double>(name);
    return v > 0 ? std::optional<double>(v) : std::nullopt;
  };
  Plan p{spatial_sizes(input, 2), output_size, {scale("scales_h"), scale("scales_w")}};
  check_sizes(op, p);
  return resample(input, p, linear, align_corners);
}

}  // namespace

namespace decomp {

std::vector<Tensor> upsample_nearest2d(const DecompArgs& a) { return {upsample2d("upsample_nearest2d", a, false, false)}; }
std::vector<Tensor> upsample_bilinear2d(const DecompArgs& a) {
  return {upsample2d("upsample_bilinear2d", a, true, a.attr<bool>("align_corners"))};
}

}  // namespace decomp

Tensor pad_by_mode(const Tensor& self, IntArrayRef pad, std::string_view mode) {
  const std::string_view op = "pad";
  if (pad.size() % 2 != 0) fail(op, "Padding length must be divisible by 2");
  const int64_t n = static_cast<int64_t>(pad.size() / 2);
  if (n < 1 || n > 3 || (self.dim() != n + 1 && self.dim() != n + 2))
    fail(op, "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now: padding {} dims in {} mode "
             "needs a {}-D or {}-D input, but got input of size {}", n, mode, n + 1, n + 2, shape_str(self.sizes()));
  Tensor out = self;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t d = self.dim() - 1 - i, l = pad[2 * i], r = pad[2 * i + 1];
    const Expr L = sym_size(self, d);
    if (l < 0 || r < 0)
      fail(op, "negative padding ({}, {}) crops only in constant mode; kiln's {} mode takes non-negative padding", l, r, mode);
    if (mode == "reflect" && (!ir::sym_lt(Expr(l), L) || !ir::sym_lt(Expr(r), L)))
      fail(op, "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({}, "
               "{}) at dimension {} of input {}", l, r, d, shape_str(self.sizes()));
    if (mode == "circular" && (ir::sym_lt(L, Expr(l)) || ir::sym_lt(L, Expr(r))))
      fail(op, "Padding value causes wrapping around more than once.");
    if (mode == "replicate" && (l > 0 || r > 0) && ir::sym_eq(L, Expr(0)))
      fail(op, "input tensor of size {} cannot be padded in replicate mode along dim {} of size 0",
           shape_str(self.sizes()), d);
    std::vector<Tensor> parts;
    if (mode == "reflect") {
      for (int64_t k = l; k >= 1; --k) parts.push_back(slice_expr(out, d, Expr(k), Expr(k + 1)));
      parts.push_back(out);
      for (int64_t k = 1; k <= r; ++k) parts.push_back(slice_expr(out, d, L - Expr(k + 1), L - Expr(k)));
    } else if (mode == "replicate") {
      if (l > 0) parts.push_back(expand_dim(slice_expr(out, d, Expr(0), Expr(1)), d, l));
      parts.push_back(out);
      if (r > 0) parts.push_back(expand_dim(slice_expr(out, d, L - Expr(1), L), d, r));
    } else {  // circular
      if (l > 0) parts.push_back(slice_expr(out, d, L - Expr(l), L));
      parts.push_back(out);
      if (r > 0) parts.push_back(slice_expr(out, d, Expr(0), Expr(r)));
    }
    if (parts.size() > 1) out = cat(parts, d);
  }
  return out.is_same(self) ? self.clone() : out;
}

}  // namespace kiln

namespace kiln {

namespace {

// PyTorch's reflect_coordinates: x reflected into [twice_low / 2, twice_high / 2].
Tensor reflect(const Tensor& x, double twice_low, double twice_high) {
  if (twice_low == twice_high) return zeros_like(x);
  const double low = twice_low / 2, span = (twice_high - twice_low) / 2;
  const Tensor in = abs(x - low);
  const Tensor extra = fmod(in, span);
  const Tensor flips = floor(in / span);
  return where(eq(fmod(flips, 2.0), 0.0), extra + low, span - extra + low);
}

// A grid coordinate in [-1, 1] as a position along a dim of `size` (PyTorch's
// grid_sampler_unnormalize).
Tensor unnormalize(const Tensor& c, int64_t size, bool align) {
  const double n = static_cast<double>(size);
  return align ? (c + 1) / 2 * (n - 1) : ((c + 1) * n - 1) / 2;
}

// A position moved inside [0, size - 1] by the padding mode (compute_coordinates); "zeros"
// leaves it, and the reads outside count as 0.
Tensor pad_coordinate(const Tensor& x, int64_t size, std::string_view padding, bool align) {
  const double n = static_cast<double>(size);
  if (padding == "border") return clamp(x, 0.0, n - 1);
  if (padding == "reflection") return clamp(align ? reflect(x, 0, 2 * (n - 1)) : reflect(x, -1, 2 * n - 1), 0.0, n - 1);
  return x;
}

// PyTorch's cubic convolution weights (A = -0.75) of the four taps around t in [0, 1).
std::array<Tensor, 4> cubic_weights(const Tensor& t) {
  const double A = -0.75;
  auto near = [&](const Tensor& x) { return ((x * (A + 2) - (A + 3)) * x) * x + 1; };        // |x| <= 1
  auto far = [&](const Tensor& x) { return ((x * A - 5 * A) * x + 8 * A) * x - 4 * A; };     // 1 < |x| < 2
  const Tensor u = 1 - t;
  return {far(t + 1), near(t), near(u), far(u + 1)};
}

}  // namespace

namespace {

Tensor grid_sample_impl(const Tensor& input, const Tensor& grid, std::string_view mode, std::string_view padding_mode,
                        std::optional<bool> align_corners) {
  const std::string_view op = "grid_sampler";
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    fail(op, "nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{}'", mode);
  if (padding_mode != "zeros" && padding_mode != "border" && padding_mode != "reflection")
    fail(op, "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', but got: '{}'",
         padding_mode);
  if (!((input.dim() == 4 || input.dim() == 5) && grid.dim() == input.dim()))
    fail(op, "grid_sampler(): expected 4D or 5D input and grid with same number of dimensions, but got input with sizes "
             "{} and grid with sizes {}",
         shape_str(input.sizes()), shape_str(grid.sizes()));
  if (input.size(0) != grid.size(0))
    fail(op, "grid_sampler(): expected grid and input to have same batch size, but got input with sizes {} and grid with "
             "sizes {}",
         shape_str(input.sizes()), shape_str(grid.sizes()));
  if (grid.size(-1) != input.dim() - 2)
    fail(op, "grid_sampler(): expected grid to have size {} in last dimension, but got grid with sizes {}", input.dim() - 2,
         shape_str(grid.sizes()));
  if (input.dtype() != grid.dtype())
    fail(op, "grid_sampler(): expected input and grid to have same dtype, but input has {} and grid has {}",
         c10_type_name(input.dtype()), c10_type_name(grid.dtype()));
  if (!is_floating_point(input.dtype()))
    fail(op, "\"grid_sampler_{}d_cpu\" not implemented for '{}'", input.dim() - 2, c10_type_name(input.dtype()));
  const bool align = align_corners.value_or(false);
  const int64_t k = input.dim() - 2;  // spatial dims
  const int64_t N = input.size(0), C = input.size(1);
  // Per spatial dim, outermost first: its size, its stride in a plane and its grid coordinate
  // (the grid lists x (the last dim) first).
  std::vector<int64_t> size, stride(static_cast<size_t>(k), 1), out_sizes{N, C};
  int64_t plane = 1, points = 1;
  for (int64_t d = 0; d < k; ++d) size.push_back(input.size(2 + d));
  for (int64_t d = k; d-- > 0;) {
    stride[static_cast<size_t>(d)] = plane;
    plane *= size[static_cast<size_t>(d)];
  }
  for (int64_t d = 1; d <= k; ++d) {
    out_sizes.push_back(grid.size(d));
    points *= grid.size(d);
  }
  if (plane == 0 || C == 0 || N == 0 || points == 0) return zeros(out_sizes, TensorOptions(input.dtype()).device(input.device()));
  std::vector<Tensor> pos;  // [N, *out], the unnormalized position along each spatial dim
  for (int64_t d = 0; d < k; ++d) pos.push_back(unnormalize(grid.select(-1, k - 1 - d), size[static_cast<size_t>(d)], align));
  const Tensor planes = input.reshape({N, C, plane});
  // The input at integer positions `at` (one per dim) where they lie inside it, else 0.
  auto read = [&](const std::vector<Tensor>& at) {
    Tensor inside, flat;
    for (size_t d = 0; d < at.size(); ++d) {
      const double hi = static_cast<double>(size[d] - 1);
      const Tensor in_d = logical_and(ge(at[d], 0.0), le(at[d], hi));
      inside = inside.defined() ? logical_and(inside, in_d) : in_d;
      const Tensor term = clamp(at[d], 0.0, hi) * static_cast<double>(stride[d]);
      flat = flat.defined() ? flat + term : term;
    }
    const Tensor index = flat.to(ScalarType::Int64).reshape({N, 1, points}).expand({N, C, points});
    std::vector<int64_t> shape = out_sizes;
    const Tensor v = planes.gather(2, index).reshape(shape);
    return where(inside.unsqueeze(1), v, 0.0);
  };
  if (mode == "nearest") {
    std::vector<Tensor> at;
    for (int64_t d = 0; d < k; ++d)
      at.push_back(round(pad_coordinate(pos[static_cast<size_t>(d)], size[static_cast<size_t>(d)], padding_mode, align)));
    return read(at);
  }
  if (mode == "bicubic") {
    // PyTorch pads each tap's integer position, not the sampled one. Four taps per dim with
    // cubic convolution weights: rows along x are blended first, then those along y (and z).
    std::vector<Tensor> base;
    std::vector<std::array<Tensor, 4>> weights;
    for (int64_t d = 0; d < k; ++d) {
      base.push_back(floor(pos[static_cast<size_t>(d)]));
      weights.push_back(cubic_weights(pos[static_cast<size_t>(d)] - base.back()));
    }
    std::vector<Tensor> at(static_cast<size_t>(k));
    std::function<Tensor(int64_t)> blend = [&](int64_t d) -> Tensor {
      if (d == k) return read(at);
      Tensor sum;
      for (int64_t i = 0; i < 4; ++i) {
        at[static_cast<size_t>(d)] = pad_coordinate(base[static_cast<size_t>(d)] + static_cast<double>(i - 1),
                                                    size[static_cast<size_t>(d)], padding_mode, align);
        const Tensor term = blend(d + 1) * weights[static_cast<size_t>(d)][static_cast<size_t>(i)].unsqueeze(1);
        sum = sum.defined() ? sum + term : term;
      }
      return sum;
    };
    return blend(0);
  }
  // (Bi/tri)linear: the 2^k corners in PyTorch's order (the outermost dim slowest; x fastest),
  // each weighted by the product of its per-dim weights, x's first.
  std::vector<Tensor> lo, w_lo, w_hi;
  for (int64_t d = 0; d < k; ++d) {
    const Tensor p = pad_coordinate(pos[static_cast<size_t>(d)], size[static_cast<size_t>(d)], padding_mode, align);
    const Tensor p0 = floor(p);
    lo.push_back(p0);
    w_lo.push_back(p0 + 1 - p);
    w_hi.push_back(p - p0);
  }
  Tensor out;
  for (int64_t corner = 0; corner < (int64_t{1} << k); ++corner) {
    std::vector<Tensor> at;
    Tensor w;
    for (int64_t d = k; d-- > 0;) {  // x first in the weight's product
      const bool hi = (corner >> (k - 1 - d)) & 1;
      const Tensor wd = hi ? w_hi[static_cast<size_t>(d)] : w_lo[static_cast<size_t>(d)];
      w = w.defined() ? w * wd : wd;
    }
    for (int64_t d = 0; d < k; ++d) {
      const bool hi = (corner >> (k - 1 - d)) & 1;
      at.push_back(hi ? lo[static_cast<size_t>(d)] + 1 : lo[static_cast<size_t>(d)]);
    }
    const Tensor term = read(at) * w.unsqueeze(1);
    out = out.defined() ? out + term : term;
  }
  return out;
}

constexpr std::string_view kInterpolation[] = {"bilinear", "nearest", "bicubic"};
constexpr std::string_view kPadding[] = {"zeros", "border", "reflection"};

}  // namespace

// 4-D inputs record the grid_sampler_2d node (modes numbered as ATen numbers them); 5-D ones
// (Core ATen has no grid_sampler_3d) and bad arguments go to the implementation itself.
Tensor grid_sample(const Tensor& input, const Tensor& grid, std::string_view mode, std::string_view padding_mode,
                   std::optional<bool> align_corners) {
  const auto* m = std::find(std::begin(kInterpolation), std::end(kInterpolation), mode);
  const auto* p = std::find(std::begin(kPadding), std::end(kPadding), padding_mode);
  if (input.dim() != 4 || m == std::end(kInterpolation) || p == std::end(kPadding))
    return grid_sample_impl(input, grid, mode, padding_mode, align_corners);
  return dispatch1(ir::OpKind::grid_sampler_2d, {input, grid},
                   {static_cast<int64_t>(m - std::begin(kInterpolation)), static_cast<int64_t>(p - std::begin(kPadding)),
                    align_corners.value_or(false)});
}

namespace decomp {

std::vector<Tensor> grid_sampler_2d(const DecompArgs& a) {
  const int64_t m = a.attr<int64_t>("interpolation_mode"), p = a.attr<int64_t>("padding_mode");
  if (m < 0 || m > 2 || p < 0 || p > 2)
    fail("grid_sampler_2d", "interpolation_mode must be 0 (bilinear), 1 (nearest) or 2 (bicubic) and padding_mode 0, 1 or 2, "
         "got {} and {}", m, p);
  return {grid_sample_impl(a.in(0), a.in(1), kInterpolation[m], kPadding[p], a.attr<bool>("align_corners"))};
}

}  // namespace decomp

}  // namespace kiln

namespace kiln {

// The per-mode pads record their Core node; its decomposition is pad_by_mode.
#define KILN_PAD_NODE(name, dims, mode)                                                                           \
  Tensor name(const Tensor& self, IntArrayRef p) { return dispatch1(ir::OpKind::name, {self}, {p.vec()}); }    \
  namespace decomp {                                                                                            \
  std::vector<Tensor> name(const DecompArgs& a) {                                                               \
    const std::vector<int64_t>& p = a.attr<std::vector<int64_t>>("padding");                                   \
    if (p.size() != 2 * (dims)) fail(#name, "padding size is expected to be {}, but got: {}", 2 * (dims), p.size()); \
    return {pad_by_mode(a.in(0), p, mode)};                                                                      \
  }                                                                                                             \
  }
KILN_PAD_NODE(reflection_pad1d, 1, "reflect")
KILN_PAD_NODE(reflection_pad2d, 2, "reflect")
KILN_PAD_NODE(reflection_pad3d, 3, "reflect")
KILN_PAD_NODE(replication_pad1d, 1, "replicate")
KILN_PAD_NODE(replication_pad2d, 2, "replicate")
KILN_PAD_NODE(replication_pad3d, 3, "replicate")
#undef KILN_PAD_NODE

}  // namespace kiln
