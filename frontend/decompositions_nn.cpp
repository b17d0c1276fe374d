// kiln/frontend/decompositions_nn.cpp — decompositions of softmax, log_softmax, layer_norm,
// rms_norm, gelu, silu, relu, mean and var.
//
// Each reads like the math and follows PyTorch's numerics: f16/bf16 inputs compute in f32
// (opmath_dtype) and cast the result back, softmax subtracts the row maximum, var and
// layer_norm (and ops_norm.cpp's norms, through moments()) take their statistics from
// deviations() (for f32 one pass in f64 over shifted data, for f64 the two-pass (x - mean)^2
// form), rms_norm multiplies by its weight after casting back as at::rms_norm does. A reduction
// over an empty dim list reduces nothing (IR semantics), which only a rank-0 input produces from
// the frontend.
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/ops_nn.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"
#include "frontend/views.h"
#include "frontend/decompositions_detail.h"

#include <cmath>
#include <limits>
#include <optional>
#include <numbers>
#include <vector>

namespace kiln::decomp {

namespace {

// Sum over `dims`; an empty list reduces nothing.
Tensor sum_dims(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (dims.empty()) return x;
  return kiln::sum(x, dims, keepdim);
}

// The number of elements `dims` cover (an expression when the sizes are symbolic).
ir::Expr count(const Tensor& x, const std::vector<int64_t>& dims) {
  ir::Expr n(1);
  for (int64_t d : dims) n = n * (x.dim() == 0 ? ir::Expr(1) : sym_size(x, d));
  return n;
}

// A quotient whose divisor may be 0: 0/0's NaN has no fixed sign (x86 computes a negative one
// at run time, LLVM folds a constant 0/0 to a positive one), so a static and a dynamic program,
// eager and compiled, would disagree in the sign bit. It is made the positive NaN, which every
// mode gives and PyTorch prints (as kiln does) as nan. NaNs from the data pass as they are.
Tensor canonical_nan(const Tensor& q) {
  if (!is_floating_point(q.dtype())) return q;
  return where(isnan(q), Scalar(std::numeric_limits<double>::quiet_NaN()), q);
}

// t / n in t's dtype; a symbolic count is read at run time. An empty count gives NaN (0/0).
Tensor divide_by_count(const Tensor& t, const ir::Expr& n) {
  const std::optional<int64_t> c = n.maybe_const();
  if (c && *c != 0) return t / Scalar(*c);
  return canonical_nan(c ? t / Scalar(int64_t{0}) : t / sym_scalar_tensor(n, t.dtype(), t.device()));
}

// Mean over `dims`, computed as sum / count.
Tensor mean_dims(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return divide_by_count(sum_dims(x, dims, keepdim), count(x, dims));
}

// The trailing dims that normalized_shape covers.
std::vector<int64_t> trailing_dims(const Tensor& x, size_t k) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - static_cast<int64_t>(k); d < x.dim(); ++d) dims.push_back(d);
  return dims;
}

// x shifted by its maximum along dim (so exp cannot overflow); x must have elements on dim.
Tensor shifted(const Tensor& x, int64_t dim) { return x - amax(x, {dim}, /*keepdim=*/true); }

// The mean of x over `dims` and the sum of squared deviations from it, both keepdim. An f32 x
// (f16 and bf16 compute in f32) takes one pass in f64 over the data shifted by its slice's
// first element K: s1 = sum(x - K), s2 = sum((x - K)^2), mean = K + s1/n, ss = s2 - s1 s1/n
// (returned in f64, for the caller to divide before it rounds). The two sums read x
// independently, so a row kernel no longer waits for the mean before it starts the second sum
// (layer_norm [64, 64]: its kernel alone 2.26 -> 1.74 us on this host). f64 holds the squares of
// f32 values exactly and the shift removes the cancellation of the textbook E[x^2] - E[x]^2 (K is
// a sample of the slice, so |mean - K| is of the order of the spread): the error stays below the
// two-pass form's, which centred on the mean rounded to f32 (docs/decisions.md). An f64 x keeps
// the two-pass form (f64 has no wider type to take the cancellation), as does an empty slice.
struct Deviations {
  Tensor mean, ss;
};

Deviations deviations(const Tensor& x, const std::vector<int64_t>& dims) {
  bool empty = dims.empty();
  for (int64_t d : dims) empty = empty || ir::sym_eq(sym_size(x, d), ir::Expr(0));
  if (x.dtype() != kFloat32 || empty) {
    Tensor mean = mean_dims(x, dims, /*keepdim=*/true);
    Tensor centered = x - mean;
    return {mean, sum_dims(centered * centered, dims, /*keepdim=*/true)};
  }
  Tensor k = x;
  for (int64_t d : dims) k = k.narrow(d, 0, 1);
  const Tensor k64 = k.to(kFloat64);
  const Tensor d = x.to(kFloat64) - k64;
  const Tensor s1 = sum_dims(d, dims, /*keepdim=*/true);
  const Tensor s2 = sum_dims(d * d, dims, /*keepdim=*/true);
  const Tensor shift = divide_by_count(s1, count(x, dims));
  return {(k64 + shift).to(kFloat32), clamp_min(s2 - s1 * shift, 0)};
}

}  // namespace

Moments moments(const Tensor& x, const std::vector<int64_t>& dims) {
  const Deviations d = deviations(x, dims);
  return {d.mean, divide_by_count(d.ss, count(x, dims)).to(x.dtype())};
}

// softmax(x)_i = exp(x_i - max x) * (1 / sum_j exp(x_j - max x))
Tensor softmax(const DecompArgs& a) {
  const int64_t dim = a.attr<int64_t>("dim");
  const ScalarType dtype = a.attr<ScalarType>("dtype");
  Tensor x = a.in(0).to(dtype).to(opmath_dtype(dtype));
  if (x.dim() > 0 && ir::sym_eq(sym_size(x, dim), ir::Expr(0))) return x.to(dtype);
  Tensor e = exp(shifted(x, dim));
  // Times the reciprocal of the sum, as PyTorch's CPU kernel: one division per row, not per
  // element.
  return (e * reciprocal(sum_dims(e, {dim}, /*keepdim=*/true))).to(dtype);
}

// log_softmax(x)_i = (x_i - max x) - log sum_j exp(x_j - max x)
Tensor log_softmax(const DecompArgs& a) {
  const int64_t dim = a.attr<int64_t>("dim");
  const ScalarType dtype = a.attr<ScalarType>("dtype");
  Tensor x = a.in(0).to(dtype).to(opmath_dtype(dtype));
  if (x.dim() > 0 && ir::sym_eq(sym_size(x, dim), ir::Expr(0))) return x.to(dtype);
  Tensor s = shifted(x, dim);
  return (s - log(sum_dims(exp(s), {dim}, /*keepdim=*/true))).to(dtype);
}

// logsumexp(x) = log(sum(exp(x - m))) + m with m the maximum over dims, replaced by 0 where it
// is infinite (so a row of -inf gives -inf and a row holding +inf gives +inf, not NaN). An
// empty reduction gives -inf (the log of an empty sum).
Tensor logsumexp(const DecompArgs& a) {
  const std::vector<int64_t>& dims = a.attr<std::vector<int64_t>>("dims");
  const bool keepdim = a.attr<bool>("keepdim");
  const ScalarType dt = a.in(0).is_floating_point() ? a.in(0).dtype() : get_default_dtype();
  Tensor x = a.in(0).to(opmath_dtype(dt));
  if (dims.empty()) return x.to(dt);
  for (int64_t d : dims)  // the log of an empty sum: -inf
    if (ir::sym_eq(sym_size(x, d), ir::Expr(0))) return log(sum_dims(x, dims, keepdim)).to(dt);
  Tensor m = amax(x, dims, /*keepdim=*/true);
  m = where(isinf(m), zeros({}, m.options()), m);
  Tensor out = log(sum_dims(exp(x - m), dims, /*keepdim=*/true)) + m;
  if (!keepdim) out = out.squeeze(dims);
  return out.to(dt);
}

// layer_norm(x) = (x - E[x]) / sqrt(Var[x] + eps) * weight + bias over the trailing dims.
Tensor layer_norm(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t> dims = trailing_dims(x, a.attr<std::vector<int64_t>>("normalized_shape").size());
  const double eps = a.attr<double>("eps");
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  const Moments m = moments(xc, dims);
  Tensor out = (xc - m.mean) * rsqrt(m.var + eps);
  if (const Tensor* w = a.opt(1)) out = out * *w;
  if (const Tensor* b = a.opt(2)) out = out + *b;
  return out.to(x.dtype());
}

// rms_norm(x) = x / sqrt(E[x^2] + eps) * weight over the trailing dims.
Tensor rms_norm(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t> dims = trailing_dims(x, a.attr<std::vector<int64_t>>("normalized_shape").size());
  const double eps = a.attr<double>("eps");
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  Tensor out = (xc * rsqrt(mean_dims(xc * xc, dims, /*keepdim=*/true) + eps)).to(x.dtype());
  if (const Tensor* w = a.opt(1)) out = (out * *w).to(out.dtype());
  return out;
}

// gelu(x) = x/2 (1 + erf(x / sqrt 2)), or with "tanh": x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
// computed as x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)) since 1 + tanh(u) = 2 sigmoid(2u): one exp
// and one division instead of tanh, and no cancellation in 1 + tanh(u) for large negative x.
Tensor gelu(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  Tensor y;
  if (a.attr<std::string>("approximate") == "tanh") {
    const double beta = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;  // sqrt(2 / pi)
    const double kappa = 0.044715;
    Tensor inner = (xc + (xc * xc * xc) * kappa) * beta;
    y = xc * sigmoid(inner * 2);
  } else {
    y = xc * 0.5 * (erf(xc * (1 / std::numbers::sqrt2)) + 1);
  }
  return y.to(x.dtype());
}

// silu(x) = x * sigmoid(x)
Tensor silu(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  return (xc * sigmoid(xc)).to(x.dtype());
}

// relu(x) = max(x, 0), NaN propagating (clamp).
Tensor relu(const DecompArgs& a) { return clamp_min(a.in(0), 0); }

// mean(x) = sum(x) / n, summed in f32 for an f16/bf16 dtype (the input is cast straight to
// the compute dtype, as PyTorch's CPU mean does).
Tensor mean(const DecompArgs& a) {
  const std::vector<int64_t>& dims = a.attr<std::vector<int64_t>>("dims");
  const ScalarType dtype = a.attr<ScalarType>("dtype");
  Tensor x = a.in(0).to(opmath_dtype(dtype));
  return mean_dims(x, dims, a.attr<bool>("keepdim")).to(dtype);
}

// var(x) = sum((x - mean x)^2) / max(n - correction, 0)
Tensor var(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  const std::vector<int64_t>& dims = a.attr<std::vector<int64_t>>("dims");
  const double correction = a.attr<Scalar>("correction").to_double();
  Tensor xc = x.to(opmath_dtype(x.dtype()));
  Tensor ss = deviations(xc, dims).ss;
  if (!a.attr<bool>("keepdim") && !dims.empty()) ss = ss.squeeze(dims);
  const ir::Expr n = count(x, dims);
  if (!n.is_const() && correction == std::floor(correction) && std::fabs(correction) < 1e15) {
    // A symbolic count: max(n - correction, 0) is read at run time.
    const ir::Expr denom = ir::max(n - ir::Expr(static_cast<int64_t>(correction)), ir::Expr(0));
    return canonical_nan(ss / sym_scalar_tensor(denom, ss.dtype(), ss.device())).to(x.dtype());
  }
  const int64_t count_value = n.is_const() ? n.as_const() : ir::ShapeEnv::current()->specialize(n);
  const double denom = std::max(static_cast<double>(count_value) - correction, 0.0);
  // No degrees of freedom: ss / 0 is inf, or NaN (0/0) for a constant or empty slice.
  return (denom == 0.0 ? canonical_nan(ss / denom) : ss / denom).to(x.dtype());
}

}  // namespace kiln::decomp
