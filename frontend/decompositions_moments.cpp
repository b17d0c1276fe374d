// kiln/frontend/decompositions_moments.cpp — the Moments family's decompositions (mean, var) and
// the statistics the Norm and Softmax families share: sum_dims, mean_dims and moments
// (frontend/decompositions_detail.h).
//
// They follow PyTorch's numerics: f16/bf16 inputs compute in f32 (opmath_dtype) and cast the
// result back; var and the norms take their statistics from deviations() (for f32 one pass in
// f64 over shifted data, for f64 the two-pass (x - mean)^2 form). A reduction over an empty dim
// list reduces nothing (IR semantics), which only a rank-0 input produces from the frontend.
#include "frontend/decompositions_detail.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

namespace kiln::decomp {

namespace {

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
  return c && *c != 0 ? sym_div(t, n) : canonical_nan(sym_div(t, n));
}

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

Tensor sum_dims(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  if (dims.empty()) return x;
  return kiln::sum(x, dims, keepdim);
}

Tensor mean_dims(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return divide_by_count(sum_dims(x, dims, keepdim), count(x, dims));
}

Moments moments(const Tensor& x, const std::vector<int64_t>& dims) {
  const Deviations d = deviations(x, dims);
  return {d.mean, divide_by_count(d.ss, count(x, dims)).to(x.dtype())};
}

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
