// kiln/frontend/decompositions_pointwise.cpp — decompositions of lerp, addcmul, addcdiv,
// nan_to_num, tril and triu.
//
// The frontend has promoted and broadcast the tensor operands (equal dtypes and shapes) and
// resolved every default, so each rule is the formula of PyTorch's CPU kernel.
#include "frontend/decompositions_detail.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"

#include <limits>

namespace kiln::decomp {

// lerp(a, b, w) = a + w (b - a) for |w| < 0.5, else b - (b - a)(1 - w): exact at both ends.
Tensor lerp(const DecompArgs& a) {
  const ScalarType dt = a.in(0).dtype();
  const Tensor x = a.in(0).to(opmath_dtype(dt)), end = a.in(1).to(opmath_dtype(dt)), w = a.in(2).to(opmath_dtype(dt));
  Tensor diff = end - x;
  return where(abs(w) < 0.5, x + w * diff, end - diff * (1 - w)).to(dt);
}

// addcmul(x, t1, t2, value) = x + (value * t1) * t2, in PyTorch's order
Tensor addcmul(const DecompArgs& a) {
  const Scalar& value = a.attr<Scalar>("value");
  return a.in(0) + (a.in(1) * value) * a.in(2);
}

// addcdiv(x, t1, t2, value) = x + (value * t1) / t2, in PyTorch's order
Tensor addcdiv(const DecompArgs& a) {
  const Scalar& value = a.attr<Scalar>("value");
  return a.in(0) + (a.in(1) * value) / a.in(2);
}

// NaN, +inf and -inf replaced by the given finite values; integers and bools pass through.
Tensor nan_to_num(const DecompArgs& a) {
  const Tensor& x = a.in(0);
  if (!x.is_floating_point()) return x.clone();
  Tensor out = where(isnan(x), Scalar(a.attr<double>("nan")), x);
  out = where(eq(x, Scalar(std::numeric_limits<double>::infinity())), Scalar(a.attr<double>("posinf")), out);
  return where(eq(x, Scalar(-std::numeric_limits<double>::infinity())), Scalar(a.attr<double>("neginf")), out);
}

namespace {

// Whether element (i, j) of x's trailing matrix is kept: j - i <= diagonal (lower) or >= (upper).
Tensor triangle(const DecompArgs& a, bool lower) {
  const Tensor& x = a.in(0);
  const int64_t k = a.attr<int64_t>("diagonal");
  Tensor rows = sym_iota(sym_size(x, -2), ScalarType::Int64, x.device()).unsqueeze(1);
  Tensor cols = sym_iota(sym_size(x, -1), ScalarType::Int64, x.device()).unsqueeze(0);
  Tensor offset = cols - rows;
  Tensor keep = lower ? le(offset, Scalar(k)) : ge(offset, Scalar(k));
  return where(keep, x, zeros({}, x.options()));
}

}  // namespace

Tensor tril(const DecompArgs& a) { return triangle(a, true); }
Tensor triu(const DecompArgs& a) { return triangle(a, false); }

}  // namespace kiln::decomp
