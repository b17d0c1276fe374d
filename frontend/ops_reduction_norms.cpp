// kiln/frontend/ops_reduction_norms.cpp — vector norms (frontend/ops.h): linalg_vector_norm and
// norm, which record other reductions; and renorm, which scales slices by their norms.
//
//   ord 2     sqrt(sum(x^2))         ord inf   amax(|x|)       ord 0   the number of nonzeros
//   ord 1     sum(|x|)               ord -inf  amin(|x|)       other   sum(|x|^ord)^(1/ord)
//
// Floating inputs only (an optional dtype converts first, never narrowing), f16 and bf16 computed
// in f32 and rounded once, as PyTorch 2.15. The gradient is PyTorch's, 0 where the norm is 0,
// at a zero element (a positive ord) and over a slice holding a zero (a negative ord, whose
// norm is 0 there): the formulas' own derivatives are 0/0 or 0 * inf at those points, so each
// zero is replaced before the root and the power are taken and the value chosen with `where`,
// which passes 0 back for the branch it drops. inf and -inf share their gradient among the
// elements at the extreme, as amax and amin do.
#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops.h"
#include "frontend/ops_reduction.h"
#include "frontend/ops_view.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"

#include <fmt/format.h>

#include <cmath>
#include <string>
#include <vector>

namespace kiln {

namespace {

// `ord` as PyTorch writes it in messages: 2, -1, inf, -inf, 0.5.
std::string ord_text(double ord) {
  if (std::isinf(ord)) return ord > 0 ? "inf" : "-inf";
  if (ord == std::floor(ord) && std::abs(ord) < 1e15) return std::to_string(static_cast<int64_t>(ord));
  return fmt::format("{}", ord);
}

// x with its zeros replaced by 1 (what pow and sqrt take), and where they were.
std::pair<Tensor, Tensor> nonzero_or_one(const Tensor& x) {
  const Tensor zero = eq(x, 0);
  return {where(zero, 1.0, x), zero};
}

}  // namespace

Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord, IntArrayRef dims, bool keepdim,
                          std::optional<ScalarType> dtype) {
  constexpr std::string_view op = "linalg.vector_norm";
  if (!is_floating_point(self.dtype()))
    fail(op, "linalg.vector_norm: Expected a floating point or complex tensor as input. Got {}", c10_type_name(self.dtype()));
  if (dtype) {
    if (!is_floating_point(*dtype))
      fail(op, "linalg.vector_norm: dtype should be floating point or complex, but got {}", c10_type_name(*dtype));
    if (promote_types(self.dtype(), *dtype) != *dtype)
      fail(op, "linalg.vector_norm: the dtype of the input ({}) should be convertible without narrowing to the specified "
               "dtype ({})",
           c10_type_name(self.dtype()), c10_type_name(*dtype));
  }
  const double p = ord.to_double();
  const std::vector<int64_t> reduced = reduce_dims(op, self, dims);
  if (p < 0 || std::isinf(p)) {  // no identity: an empty reduction has no value (PyTorch's words)
    if (dims.empty() && ir::sym_eq(sym_numel(self), ir::Expr(0)))
      fail(op, "linalg.vector_norm cannot compute the {} norm on an empty tensor because the operation does not have an "
               "identity",
           ord_text(p));
    for (int64_t d : dims.empty() ? std::vector<int64_t>{} : reduced)
      if (ir::sym_eq(sym_size(self, d), ir::Expr(0)))
        fail(op, "linalg.vector_norm cannot compute the {} norm on the dimension {}because this dimension is empty and "
                 "the operation does not have an identity",
             ord_text(p), d);
  }
  const ScalarType out = dtype.value_or(self.dtype());
  const ScalarType compute = decomp::opmath_dtype(out);
  const Tensor a = abs(self.to(compute));
  Tensor r;
  if (std::isinf(p)) {
    r = p > 0 ? amax(a, dims, keepdim) : amin(a, dims, keepdim);
  } else if (p == 0) {
    // 1 per nonzero (NaN included); a zero contributes a * 0, so that the result takes part in
    // autograd with a zero gradient, as PyTorch's does.
    r = sum(where(ne(a, 0), 1.0, mul(a, 0.0)), dims, keepdim);
  } else if (p == 1) {
    r = sum(a, dims, keepdim);
  } else {
    // sum(|x|^p) ^ (1/p), the zeros replaced before pow. For p > 0 a zero element adds 0 and a
    // zero sum gives 0; for p < 0 a zero element (0^p = inf) makes its slice's norm 0.
    const auto [base, zero] = nonzero_or_one(a);
    const Tensor powered = where(zero, 0.0, p == 2 ? mul(base, base) : pow(base, p));
    const Tensor total = sum(powered, dims, keepdim);
    const auto [safe, total_zero] = nonzero_or_one(total);
    r = p == 2 ? sqrt(safe) : pow(safe, 1.0 / p);
    r = where(p > 0 ? total_zero : any(zero, dims, keepdim), 0.0, r);
  }
  return r.to(out);
}

Tensor norm(const Tensor& self, const std::optional<Scalar>& p, IntArrayRef dims, bool keepdim) {
  return linalg_vector_norm(self, p.value_or(Scalar(2.0)), dims, keepdim);
}

Tensor norm(const Tensor& self, const Scalar& p) { return linalg_vector_norm(self, p); }

// ATen's renorm: each slice along dim scaled by maxnorm / (norm + 1e-7) where its norm exceeds
// maxnorm, the norm and the factor in f32 for f16 and bf16 (the factor then rounded to self's dtype).
Tensor renorm(const Tensor& self, const Scalar& p, int64_t dim, const Scalar& maxnorm) {
  constexpr std::string_view op = "renorm";
  if (!(p.to_double() > 0)) fail(op, "renorm: non-positive-norm not supported");
  if (!(maxnorm.to_double() >= 0)) fail(op, "renorm: expected maxnorm to be >= 0 but got {:g}", maxnorm.to_double());
  if (self.dim() <= 1) fail(op, "renorm: input needs at least 2 dimensions, got {} dimensions", self.dim());
  const int64_t d = normalize_dim(op, dim, self.dim());
  std::vector<int64_t> others;
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d) others.push_back(k);
  const ScalarType compute = decomp::opmath_dtype(self.dtype());
  const Tensor norms = compute == self.dtype() ? linalg_vector_norm(self, p.to_double(), others, /*keepdim=*/true)
                                               : linalg_vector_norm(self, p.to_double(), others, /*keepdim=*/true, compute);
  const double limit = maxnorm.to_double();
  const Tensor factor = where(gt(norms, limit), div(Scalar(limit), add(norms, 1e-7)), Scalar(1.0));
  return mul(self, factor.to(self.dtype()));
}

}  // namespace kiln
