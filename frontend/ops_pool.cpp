// kiln/frontend/ops_pool.cpp — the pooling ops of frontend/ops_pool.h, recorded as prims.
//
// Window pooling pads the input (left: padding; right: padding + stride - 1, enough for the
// last window in ceil mode), takes one strided slice per kernel offset and stacks them on a
// new last dim: [..., *out, K]. max pooling reduces it with amax (and argmax for indices,
// mapped back to flat input positions with iota arithmetic); average pooling sums it and
// divides by each window's element count, itself a window sum over a 1-D mask per dim
// (separable, so the counts of a window are a product). Fused, the pad, the slices, the
// stack and the reduction become one kernel. Sizes are expressions throughout, so a pooling
// traced under Dynamic::True stays dynamic.
//
// Adaptive average pooling multiplies each pooled dim by a pooling matrix P [out, in] whose
// row i holds 1 / (end_i - start_i) over PyTorch's window [floor(i * in / out),
// ceil((i + 1) * in / out)), built from iota; the products run on BLAS (in f32 for f16/bf16).
#include "frontend/ops_pool.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/function_transforms.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"

#include <fmt/format.h>

#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::Expr;

std::vector<int64_t> per_dim(std::string_view op, std::string_view what, IntArrayRef v, size_t n) {
  if (v.size() == 1) return std::vector<int64_t>(n, v[0]);
  if (v.size() != n) fail(op, "{} must either be a single int, or a tuple of {} ints, got {}", what, n, shape_str(v));
  return v.vec();
}

// [C, *pooled] or [N, C, *pooled], with the channel and pooled dims non-empty.
void check_pool_rank(std::string_view op, const Tensor& self, size_t n) {
  const int64_t r = self.dim(), want = static_cast<int64_t>(n) + 2;
  if (r != want && r != want - 1)
    fail(op, "Expected {}D or {}D input tensor, but got input of size {}", want - 1, want, shape_str(self.sizes()));
  for (int64_t d = r - static_cast<int64_t>(n) - 1; d < r; ++d)
    if (ir::sym_eq(sym_size(self, d), Expr(0)))
      fail(op, "Expected input's non-batch dimensions to have positive length, but input has a shape of {}",
           shape_str(self.sizes()));
}

// Window geometry of one pooling over the last n dims.
struct Pool {
  size_t n;
  std::vector<int64_t> k, s, p, d;
  std::vector<Expr> in, out;
  int64_t first;  // index of the first pooled dim
};

Pool geometry(std::string_view op, const Tensor& self, size_t n, IntArrayRef kernel_size, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, bool ceil_mode, bool dilation_counts_in_pad_limit) {
  check_pool_rank(op, self, n);
  Pool g{n, per_dim(op, "kernel_size", kernel_size, n), {}, per_dim(op, "padding", padding, n),
         per_dim(op, "dilation", dilation, n), {}, {}, self.dim() - static_cast<int64_t>(n)};
  g.s = stride.empty() ? g.k : per_dim(op, "stride", stride, n);
  for (size_t i = 0; i < n; ++i) {
    if (g.k[i] <= 0) fail(op, "kernel_size must be greater than zero, but got {}", shape_str(g.k));
    if (g.s[i] <= 0) fail(op, "stride must be greater than zero, but got {}", shape_str(g.s));
    if (g.d[i] <= 0) fail(op, "dilation must be greater than zero, but got {}", shape_str(g.d));
    const int64_t eff = g.d[i] * (g.k[i] - 1) + 1;
    if (g.p[i] < 0 || g.p[i] > (dilation_counts_in_pad_limit ? eff : g.k[i]) / 2)
      fail(op, "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
           g.p[i], g.k[i], g.d[i]);
  }
  std::vector<std::string> ins, outs;
  bool too_small = false;
  for (size_t i = 0; i < n; ++i) {
    const Expr L = sym_size(self, g.first + static_cast<int64_t>(i));
    const int64_t eff = g.d[i] * (g.k[i] - 1) + 1;
    Expr o = floordiv(L + Expr(2 * g.p[i] - eff + (ceil_mode ? g.s[i] - 1 : 0)), Expr(g.s[i])) + Expr(1);
    // ceil mode: the last window must start inside the input or its left padding.
    if (ceil_mode) o = ir::min(o, floordiv(L + Expr(g.p[i] - 1), Expr(g.s[i])) + Expr(1));
    too_small = too_small || ir::sym_lt(o, Expr(1));
    g.in.push_back(L);
    g.out.push_back(o);
    ins.push_back(L.str());
    outs.push_back(o.str());
  }
  if (too_small)
    fail(op, "Given input size: ({}). Calculated output size: ({}). Output size is too small", fmt::join(ins, "x"),
         fmt::join(outs, "x"));
  return g;
}

// The input padded for windowing: `value` on the left (padding) and right (padding + stride - 1).
Tensor pad_for_windows(const Tensor& x, const Pool& g, const Scalar& value) {
  std::vector<int64_t> pads;
  for (size_t i = g.n; i-- > 0;) {
    pads.push_back(g.p[i]);
    pads.push_back(g.p[i] + g.s[i] - 1);
  }
  return constant_pad_nd(x, pads, value);
}

// The K taps of the windows of the padded input, each [..., *out], kernel offsets in row-major
// order: tap k holds every window's k-th element.
std::vector<Tensor> window_taps(const Tensor& xp, const Pool& g) {
  int64_t K = 1;
  for (int64_t k : g.k) K *= k;
  std::vector<Tensor> taps;
  for (int64_t flat = 0; flat < K; ++flat) {
    Tensor t = xp;
    int64_t rest = flat;
    for (size_t i = g.n; i-- > 0;) {
      const int64_t ki = rest % g.k[i];
      rest /= g.k[i];
      const Expr start(ki * g.d[i]);
      t = dispatch1(ir::OpKind::slice, {t},
                    {g.first + static_cast<int64_t>(i), start, start + (g.out[i] - Expr(1)) * Expr(g.s[i]) + Expr(1),
                     Expr(g.s[i])});
    }
    taps.push_back(t);
  }
  return taps;
}

// [..., *out, K]: the windows of the padded input, kernel offsets in row-major order.
Tensor windows(const Tensor& xp, const Pool& g) { return stack(window_taps(xp, g), -1); }

// Windows of up to this many elements are reduced by a fold over their taps (max_pool_impl):
// one pointwise kernel that reads the input in place, where a reduction over stacked windows
// first writes K copies of it. Larger windows stack (the fold's graph grows with K).
constexpr size_t kMaxFoldedTaps = 64;

// `v` [len] shaped to broadcast along pooled dim i of a rank-`rank` tensor.
Tensor along(const Tensor& v, const Pool& g, size_t i, int64_t rank) {
  std::vector<int64_t> shape(static_cast<size_t>(rank - g.first), 1);
  shape[i] = -1;
  return v.reshape(shape);
}

// The position in the last dim of each window's maximum as PyTorch's CPU kernels pick it:
// the first of equal maxima, but the last NaN (their update is `val > max || isnan(val)`).
Tensor window_argmax(const Tensor& w) {
  const Tensor first_max = w.argmax(-1);
  if (!is_floating_point(w.dtype())) return first_max;
  const Tensor nan = isnan(w);
  const Tensor last = sym_scalar_tensor(sym_size(w, -1) - Expr(1), kLong, w.device()) - flip(nan, {-1}).to(kByte).argmax(-1);
  return where(nan.any(-1), last, first_max);
}

Tensor size_tensor(const Expr& e, Device device) {
  if (auto c = e.maybe_const()) return wrapped_number(Scalar(*c), kLong, device);
  return sym_scalar_tensor(e, kLong, device);
}

std::tuple<Tensor, Tensor> max_pool_impl(std::string_view op, size_t n, const Tensor& self, IntArrayRef kernel_size,
                                         IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                         bool want_indices) {
  if (self.dtype() == kBool) fail(op, "\"max_pool\" not implemented for 'Bool'");
  const Pool g = geometry(op, self, n, kernel_size, stride, padding, dilation, ceil_mode, true);
  // Padding never wins: -inf, or the integer dtype's lowest value.
  const Scalar lowest = is_floating_point(self.dtype()) ? Scalar(-std::numeric_limits<double>::infinity())
                                                        : Scalar(iinfo_min(self.dtype()));
  const std::vector<Tensor> taps = window_taps(pad_for_windows(self, g, lowest), g);
  // The values as a fold of maximum over the taps (which propagates NaN as amax does), also when
  // the indices are computed: a compiled inference drops the indices and keeps the fold.
  const bool fold = taps.size() >= 2 && taps.size() <= kMaxFoldedTaps;
  const Tensor w = fold && !want_indices ? Tensor() : stack(taps, -1);
  Tensor values = fold ? maximum(taps[0], taps[1]) : w.amax({-1});
  for (size_t i = 2; fold && i < taps.size(); ++i) values = maximum(values, taps[i]);
  if (!want_indices) return {values, Tensor()};
  // Flat input position of each window's maximum: sum_i pos_i * (product of the later input
  // sizes), pos_i = out_i * stride - padding + k_i * dilation.
  const Tensor k = window_argmax(w);
  const Device dev = self.device();
  Tensor flat;
  int64_t k_after = 1;
  Expr plane_after(1);
  for (size_t i = g.n; i-- > 0;) {
    const Tensor ki = remainder(div(k, Scalar(k_after), "floor"), Scalar(g.k[i]));
    const Tensor oi = along(sym_iota(g.out[i], kLong, dev), g, i, values.dim());
    const Tensor pos = oi * g.s[i] - g.p[i] + ki * g.d[i];
    const std::optional<int64_t> scale = plane_after.maybe_const();
    const Tensor term = scale ? pos * *scale : pos * size_tensor(plane_after, dev);
    flat = flat.defined() ? flat + term : term;
    k_after *= g.k[i];
    plane_after = plane_after * g.in[i];
  }
  return {values, flat};
}

Tensor avg_pool_impl(std::string_view op, size_t n, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                     IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                     std::optional<int64_t> divisor_override) {
  if (self.dtype() == kBool) fail(op, "\"{}\" not implemented for 'Bool'", op);
  if (divisor_override && *divisor_override == 0) fail(op, "divisor must be not zero");
  const Pool g = geometry(op, self, n, kernel_size, stride, padding, IntArrayRef(int64_t{1}), ceil_mode, false);
  // Sums in f32 for f16/bf16 and in int64 for integers, whose average truncates as
  // PyTorch's integer kernel divides.
  const bool floating = is_floating_point(self.dtype());
  const ScalarType acc = !floating ? kLong : (self.dtype() == kHalf || self.dtype() == kBFloat16) ? kFloat : self.dtype();
  const Tensor sum = windows(pad_for_windows(self.to(acc), g, Scalar(int64_t{0})), g).sum({-1});
  Tensor divisor;
  if (divisor_override) {
    divisor = wrapped_number(Scalar(*divisor_override), acc, self.device());
  } else {
    // Elements counted per window, one dim at a time: the window sums of a 1-D mask that is
    // 1 over the input (and over its padding when count_include_pad), 0 past the padded end.
    for (size_t i = 0; i < g.n; ++i) {
      Pool g1{1, {g.k[i]}, {g.s[i]}, {g.p[i]}, {1}, {g.in[i]}, {g.out[i]}, 0};
      const Tensor ones = sym_full({g.in[i]}, Scalar(int64_t{1}), acc, self.device());
      const Tensor mask =
          constant_pad_nd(constant_pad_nd(ones, {g.p[i], g.p[i]}, Scalar(int64_t{count_include_pad ? 1 : 0})),
                          {0, g.s[i] - 1}, Scalar(int64_t{0}));
      const Tensor c = along(windows(mask, g1).sum({-1}), g, i, sum.dim());
      divisor = divisor.defined() ? divisor * c : c;
    }
  }
  return (floating ? sum / divisor : div(sum, divisor, "trunc")).to(self.dtype());
}

// The pooling matrix P [O, L] of one dim: row o holds 1 / (end_o - start_o) over PyTorch's
// window [floor(o * L / O), ceil((o + 1) * L / O)).
Tensor pooling_matrix(const Expr& L, int64_t O, ScalarType acc, Device dev) {
  const Tensor len = size_tensor(L, dev);
  const Tensor oi = arange(O, TensorOptions(kLong).device(dev)).unsqueeze(1);  // [O, 1]
  const Tensor j = sym_iota(L, kLong, dev).unsqueeze(0);                      // [1, L]
  const Tensor start = div(oi * len, Scalar(O), "floor");
  const Tensor end = div((oi + 1) * len + (O - 1), Scalar(O), "floor");
  const Tensor inside = logical_and(ge(j, start), lt(j, end));
  return where(inside, Scalar(1.0), Scalar(0.0)).to(acc) / (end - start).to(acc);
}

// x contracted along pooled dim i with P [out, in]: the dim moved last, matmul(x, P^T), moved back.
Tensor adaptive_avg_pool_impl(std::string_view op, size_t n, const Tensor& self, IntArrayRef output_size) {
  check_pool_rank(op, self, n);
  if (output_size.size() != n) fail(op, "output_size must be {}, got {}", n, shape_str(output_size));
  for (int64_t o : output_size)
    if (o < 0) fail(op, "elements of output_size must be greater than or equal to 0 but received {}", shape_str(output_size));
  if (!is_floating_point(self.dtype()))
    fail(op, "\"adaptive_avg_pool{}d\" not implemented for '{}'", n, c10_type_name(self.dtype()));
  const ScalarType acc = (self.dtype() == kHalf || self.dtype() == kBFloat16) ? kFloat : self.dtype();
  const Device dev = self.device();
  Tensor x = self.to(acc);
  const int64_t first = self.dim() - static_cast<int64_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t dim = first + static_cast<int64_t>(i);
    x = matmul(x.transpose(dim, -1), pooling_matrix(sym_size(self, dim), output_size[i], acc, dev).t()).transpose(dim, -1);
  }
  return x.to(self.dtype());
}

// Its gradient: grad_output contracted along each pooled dim with P itself (P^T's transpose).
Tensor adaptive_avg_pool_backward_impl(const Tensor& grad_output, const Tensor& self, size_t n) {
  const ScalarType acc = (self.dtype() == kHalf || self.dtype() == kBFloat16) ? kFloat : self.dtype();
  Tensor g = grad_output.to(acc);
  const int64_t first = self.dim() - static_cast<int64_t>(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t dim = first + static_cast<int64_t>(i);
    const Tensor P = pooling_matrix(sym_size(self, dim), grad_output.size(dim), acc, self.device());
    g = matmul(g.transpose(dim, -1), P).transpose(dim, -1);
  }
  return g.to(self.dtype());
}

// Adaptive max pooling: window o of a dim of length L covers [floor(o * L / O), ceil((o + 1)
// * L / O)). Each pooled dim is expanded by an index_select into [O, k] (k: the longest
// window; shorter windows repeat their last element, which changes neither the maximum nor
// the first position of it), the window dims are moved last and flattened, and reduced as
// max pooling does; the window position maps back through the same tables.
std::tuple<Tensor, Tensor> adaptive_max_pool_impl(std::string_view op, size_t n, const Tensor& self, IntArrayRef output_size) {
  check_pool_rank(op, self, n);
  if (output_size.size() != n) fail(op, "internal error: output_size must be {}, got {}", n, shape_str(output_size));
  for (int64_t o : output_size)
    if (o <= 0) fail(op, "{}(): Expected output_size to be positive, but got {}", op, shape_str(output_size));
  if (!is_floating_point(self.dtype()))
    fail(op, "\"{}\" not implemented for '{}'", op == "adaptive_max_pool1d" ? "adaptive_max_pool2d" : op,
         c10_type_name(self.dtype()));
  const Device dev = self.device();
  const int64_t first = self.dim() - static_cast<int64_t>(n);
  std::vector<Tensor> tables;  // per pooled dim: [O, k] source positions
  std::vector<int64_t> lengths, ks;
  Tensor x = self;
  for (size_t i = 0; i < n; ++i) {
    const int64_t L = self.size(first + static_cast<int64_t>(i)), O = output_size[i];
    int64_t k = 1;
    for (int64_t o = 0; o < O; ++o) k = std::max(k, (((o + 1) * L + O - 1) / O) - (o * L / O));
    std::vector<int64_t> table;
    for (int64_t o = 0; o < O; ++o)
      for (int64_t j = 0; j < k; ++j) table.push_back(std::min(o * L / O + j, ((o + 1) * L + O - 1) / O - 1));
    const Tensor t = tensor(table, {O * k}, TensorOptions(kLong).device(dev));
    // Dim `first + 2 i` of x (earlier dims already became [O, k] pairs) turns into [O, k].
    const int64_t d = first + 2 * static_cast<int64_t>(i);
    std::vector<int64_t> shape = x.sizes().vec();
    shape[static_cast<size_t>(d)] = k;
    shape.insert(shape.begin() + d, O);
    x = x.index_select(d, t).reshape(shape);
    tables.push_back(t);
    lengths.push_back(L);
    ks.push_back(k);
  }
  std::vector<int64_t> perm, out_shape;
  for (int64_t d = 0; d < first; ++d) perm.push_back(d);
  for (size_t i = 0; i < n; ++i) perm.push_back(first + 2 * static_cast<int64_t>(i));
  for (size_t i = 0; i < n; ++i) perm.push_back(first + 2 * static_cast<int64_t>(i) + 1);
  for (int64_t d = 0; d < first; ++d) out_shape.push_back(self.size(d));
  int64_t K = 1;
  for (size_t i = 0; i < n; ++i) {
    out_shape.push_back(output_size[i]);
    K *= ks[i];
  }
  std::vector<int64_t> win_shape = out_shape;
  win_shape.push_back(K);
  const Tensor w = x.permute(perm).reshape(win_shape);
  const Tensor values = w.amax({-1});
  const Tensor kidx = window_argmax(w);
  Tensor flat;
  int64_t k_after = 1, plane_after = 1;
  for (size_t i = n; i-- > 0;) {
    const Tensor ki = remainder(div(kidx, Scalar(k_after), "floor"), Scalar(ks[i]));
    std::vector<int64_t> along_shape(static_cast<size_t>(values.dim() - first), 1);
    along_shape[i] = output_size[i];
    const Tensor oi = arange(output_size[i], TensorOptions(kLong).device(dev)).reshape(along_shape);
    const Tensor pos = tables[i].index_select(0, (oi * ks[i] + ki).reshape({-1})).reshape(ki.sizes());
    const Tensor term = pos * plane_after;
    flat = flat.defined() ? flat + term : term;
    k_after *= ks[i];
    plane_after *= lengths[i];
  }
  return {values, flat};
}

// max pooling's gradient: each output's gradient added at the flat input position its index
// names (a scatter-add over the flattened pooled dims, so overlapping windows add up).
Tensor max_pool_backward_impl(std::string_view op, size_t n, const Tensor& grad_output, const Tensor& self,
                              const Tensor& indices) {
  check_pool_rank(op, self, n);
  if (!sym_same_sizes(sym_sizes(grad_output), sym_sizes(indices)) || grad_output.dim() != self.dim())
    fail(op, "expected grad_output and indices of one shape with self's rank, got grad_output {}, indices {} and self {}",
         ir::str(sym_sizes(grad_output)), ir::str(sym_sizes(indices)), ir::str(sym_sizes(self)));
  if (indices.dtype() != kLong) fail(op, "expected int64 indices, got {}", c10_type_name(indices.dtype()));
  const std::vector<Expr> in_sizes = sym_sizes(self);
  const auto lead = static_cast<std::ptrdiff_t>(in_sizes.size() - n);
  std::vector<Expr> flat_in(in_sizes.begin(), in_sizes.begin() + lead);
  std::vector<Expr> flat_out = flat_in;
  flat_in.push_back(sym_product({in_sizes.begin() + lead, in_sizes.end()}));
  const std::vector<Expr> out_sizes = sym_sizes(indices);
  flat_out.push_back(sym_product({out_sizes.begin() + lead, out_sizes.end()}));
  const Tensor zero = sym_full(flat_in, 0, grad_output.dtype(), grad_output.device());
  const Tensor r = zero.scatter_add(lead, sym_reshape(indices, flat_out), sym_reshape(grad_output.contiguous(), flat_out));
  return sym_reshape(r, in_sizes);
}

// Average pooling's gradient: the pullback of avg_pool_impl (frontend/function_transforms.h),
// which spreads each output's gradient over its window divided by the window's divisor.
Tensor avg_pool_backward_impl(std::string_view op, size_t n, const Tensor& grad_output, const Tensor& self,
                              IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                              bool count_include_pad, std::optional<int64_t> divisor_override) {
  if (!is_floating_point(self.dtype()) || grad_output.dtype() != self.dtype())
    fail(op, "expected floating grad_output and self of one dtype, got {} and {}", c10_type_name(grad_output.dtype()),
         c10_type_name(self.dtype()));
  const std::vector<int64_t> k = kernel_size.vec(), s = stride.vec(), p = padding.vec();
  VjpResult r = vjp(
      [&](const std::vector<Tensor>& x) {
        return std::vector<Tensor>{avg_pool_impl(op, n, x[0], k, s, p, ceil_mode, count_include_pad, divisor_override)};
      },
      {self});
  if (!sym_same_sizes(sym_sizes(r.outputs.at(0)), sym_sizes(grad_output)))
    fail(op, "expected grad_output of the pooled shape {}, got {}", ir::str(sym_sizes(r.outputs.at(0))),
         ir::str(sym_sizes(grad_output)));
  // Equal sizes, maybe spelled apart (guarded above): the pullback wants the output's own.
  return r.pullback({sym_reshape(grad_output, sym_sizes(r.outputs.at(0)))}).at(0);
}

}  // namespace

// ---- the Core nodes: 2-D and 3-D pooling record one node each (ir/ops.def); their
// decompositions are the implementations above. 1-D pooling records the prims directly.

namespace {

ir::OpKind max_pool_op(size_t n) { return n == 2 ? ir::OpKind::max_pool2d_with_indices : ir::OpKind::max_pool3d_with_indices; }
ir::OpKind avg_pool_op(size_t n) { return n == 2 ? ir::OpKind::avg_pool2d : ir::OpKind::avg_pool3d; }
ir::OpKind adaptive_avg_pool_op(size_t n) {
  return n == 2 ? ir::OpKind::adaptive_avg_pool2d : ir::OpKind::adaptive_avg_pool3d;
}

std::tuple<Tensor, Tensor> max_pool_entry(std::string_view op, size_t n, const Tensor& self, IntArrayRef kernel_size,
                                          IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                          bool want_indices) {
  if (n == 1) return max_pool_impl(op, n, self, kernel_size, stride, padding, dilation, ceil_mode, want_indices);
  const std::vector<int64_t> k = per_dim(op, "kernel_size", kernel_size, n);
  const std::vector<int64_t> s = stride.empty() ? k : per_dim(op, "stride", stride, n);
  // Without indices wanted, an eager call runs a program that computes no indices.
  std::vector<Tensor> r = dispatch(OpCall{max_pool_op(n), {self},
                                          ir::AttrList({k, s, per_dim(op, "padding", padding, n),
                                                        per_dim(op, "dilation", dilation, n), ceil_mode}),
                                          want_indices ? 0u : 2u});
  return {r.at(0), r.at(1)};
}

Tensor avg_pool_entry(std::string_view op, size_t n, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                      IntArrayRef padding, bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  if (n == 1) return avg_pool_impl(op, n, self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  if (divisor_override && *divisor_override == 0) fail(op, "divisor must be not zero");
  const std::vector<int64_t> k = per_dim(op, "kernel_size", kernel_size, n);
  const std::vector<int64_t> s = stride.empty() ? k : per_dim(op, "stride", stride, n);
  return dispatch1(avg_pool_op(n), {self},
                   {k, s, per_dim(op, "padding", padding, n), ceil_mode, count_include_pad, divisor_override.value_or(0)});
}

Tensor adaptive_avg_pool_entry(std::string_view op, size_t n, const Tensor& self, IntArrayRef output_size) {
  if (n == 1) return adaptive_avg_pool_impl(op, n, self, output_size);
  return dispatch1(adaptive_avg_pool_op(n), {self}, {output_size.vec()});
}

}  // namespace

namespace decomp {

namespace {
std::vector<Tensor> max_pool(size_t n, const DecompArgs& a) {
  auto [v, i] = max_pool_impl(ir::op_name(a.op), n, a.in(0), a.attr<std::vector<int64_t>>("kernel_size"),
                              a.attr<std::vector<int64_t>>("stride"), a.attr<std::vector<int64_t>>("padding"),
                              a.attr<std::vector<int64_t>>("dilation"), a.attr<bool>("ceil_mode"), true);
  return {v, i};
}
std::vector<Tensor> avg_pool(size_t n, const DecompArgs& a) {
  const int64_t divisor = a.attr<int64_t>("divisor_override");
  return {avg_pool_impl(ir::op_name(a.op), n, a.in(0), a.attr<std::vector<int64_t>>("kernel_size"),
                        a.attr<std::vector<int64_t>>("stride"), a.attr<std::vector<int64_t>>("padding"),
                        a.attr<bool>("ceil_mode"), a.attr<bool>("count_include_pad"),
                        divisor == 0 ? std::nullopt : std::optional<int64_t>(divisor))};
}
std::vector<Tensor> adaptive_avg_pool(size_t n, const DecompArgs& a) {
  return {adaptive_avg_pool_impl(ir::op_name(a.op), n, a.in(0), a.attr<std::vector<int64_t>>("output_size"))};
}
}  // namespace

std::vector<Tensor> max_pool2d_with_indices(const DecompArgs& a) { return max_pool(2, a); }
std::vector<Tensor> max_pool3d_with_indices(const DecompArgs& a) { return max_pool(3, a); }
std::vector<Tensor> avg_pool2d(const DecompArgs& a) { return avg_pool(2, a); }
std::vector<Tensor> avg_pool3d(const DecompArgs& a) { return avg_pool(3, a); }
std::vector<Tensor> adaptive_avg_pool2d(const DecompArgs& a) { return adaptive_avg_pool(2, a); }
std::vector<Tensor> adaptive_avg_pool3d(const DecompArgs& a) { return adaptive_avg_pool(3, a); }
std::vector<Tensor> max_pool2d_with_indices_backward(const DecompArgs& a) {
  return {max_pool_backward_impl(ir::op_name(a.op), 2, a.in(0), a.in(1), a.in(2))};
}
std::vector<Tensor> avg_pool2d_backward(const DecompArgs& a) {
  const int64_t divisor = a.attr<int64_t>("divisor_override");
  return {avg_pool_backward_impl(ir::op_name(a.op), 2, a.in(0), a.in(1), a.attr<std::vector<int64_t>>("kernel_size"),
                                 a.attr<std::vector<int64_t>>("stride"), a.attr<std::vector<int64_t>>("padding"),
                                 a.attr<bool>("ceil_mode"), a.attr<bool>("count_include_pad"),
                                 divisor == 0 ? std::nullopt : std::optional<int64_t>(divisor))};
}
std::vector<Tensor> adaptive_avg_pool2d_backward(const DecompArgs& a) {
  return {adaptive_avg_pool_backward_impl(a.in(0), a.in(1), 2)};
}

}  // namespace decomp

#define KILN_POOL_ND(n)                                                                                                \
  Tensor max_pool##n##d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,          \
                        IntArrayRef dilation, bool ceil_mode) {                                                        \
    return std::get<0>(                                                                                                \
        max_pool_entry("max_pool" #n "d", n, self, kernel_size, stride, padding, dilation, ceil_mode, false));         \
  }                                                                                                                    \
  std::tuple<Tensor, Tensor> max_pool##n##d_with_indices(const Tensor& self, IntArrayRef kernel_size,                 \
                                                         IntArrayRef stride, IntArrayRef padding,                     \
                                                         IntArrayRef dilation, bool ceil_mode) {                      \
    return max_pool_entry("max_pool" #n "d_with_indices", n, self, kernel_size, stride, padding, dilation, ceil_mode,  \
                          true);                                                                                       \
  }                                                                                                                    \
  Tensor adaptive_avg_pool##n##d(const Tensor& self, IntArrayRef output_size) {                                       \
    return adaptive_avg_pool_entry("adaptive_avg_pool" #n "d", n, self, output_size);                                  \
  }                                                                                                                    \
  std::tuple<Tensor, Tensor> adaptive_max_pool##n##d(const Tensor& self, IntArrayRef output_size) {                   \
    return adaptive_max_pool_impl("adaptive_max_pool" #n "d", n, self, per_dim("adaptive_max_pool" #n "d",           \
                                                                                "output_size", output_size, n));       \
  }
KILN_POOL_ND(1)
KILN_POOL_ND(2)
KILN_POOL_ND(3)
#undef KILN_POOL_ND

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad) {
  return avg_pool_impl("avg_pool1d", 1, self, kernel_size, stride, padding, ceil_mode, count_include_pad, std::nullopt);
}
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_entry("avg_pool2d", 2, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override);
}
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding, bool ceil_mode,
                  bool count_include_pad, std::optional<int64_t> divisor_override) {
  return avg_pool_entry("avg_pool3d", 3, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override);
}

// ---- the backward nodes (ir/ops.def), which the Pool family's derivative rules record ----

Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices) {
  constexpr std::string_view op = "max_pool2d_with_indices_backward";
  const std::vector<int64_t> k = per_dim(op, "kernel_size", kernel_size, 2);
  const std::vector<int64_t> s = stride.empty() ? k : per_dim(op, "stride", stride, 2);
  return dispatch1(ir::OpKind::max_pool2d_with_indices_backward, {grad_output, self, indices},
                   {k, s, per_dim(op, "padding", padding, 2), per_dim(op, "dilation", dilation, 2), ceil_mode});
}

Tensor max_pool3d_with_indices_backward(const Tensor& grad_output, const Tensor& self, const Tensor& indices) {
  return max_pool_backward_impl("max_pool3d_with_indices_backward", 3, grad_output, self, indices);
}

Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                           IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override) {
  constexpr std::string_view op = "avg_pool2d_backward";
  if (divisor_override && *divisor_override == 0) fail(op, "divisor must be not zero");
  const std::vector<int64_t> k = per_dim(op, "kernel_size", kernel_size, 2);
  const std::vector<int64_t> s = stride.empty() ? k : per_dim(op, "stride", stride, 2);
  return dispatch1(ir::OpKind::avg_pool2d_backward, {grad_output, self},
                   {k, s, per_dim(op, "padding", padding, 2), ceil_mode, count_include_pad, divisor_override.value_or(0)});
}

Tensor adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self) {
  constexpr std::string_view op = "adaptive_avg_pool2d_backward";
  check_pool_rank(op, self, 2);
  auto leading = [](const Tensor& t) {
    std::vector<Expr> v = sym_sizes(t);
    v.resize(v.size() >= 2 ? v.size() - 2 : 0);
    return v;
  };
  if (grad_output.dim() != self.dim() || !sym_same_sizes(leading(grad_output), leading(self)))
    fail(op, "expected grad_output {} to have self {}'s leading dims", ir::str(sym_sizes(grad_output)),
         ir::str(sym_sizes(self)));
  if (!is_floating_point(self.dtype()) || grad_output.dtype() != self.dtype())
    fail(op, "expected floating grad_output and self of one dtype, got {} and {}", c10_type_name(grad_output.dtype()),
         c10_type_name(self.dtype()));
  return dispatch1(ir::OpKind::adaptive_avg_pool2d_backward, {grad_output, self}, {});
}

}  // namespace kiln
