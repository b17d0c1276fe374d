// kiln/frontend/decompositions_softmax.cpp — the Softmax family's decompositions: softmax,
// log_softmax and logsumexp. f16/bf16 compute in f32 (opmath_dtype) and cast back; each
// subtracts the maximum before exp, as PyTorch's kernels do.
#include "frontend/decompositions_detail.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <vector>

namespace kiln::decomp {

namespace {

// x shifted by its maximum along dim (so exp cannot overflow); x must have elements on dim.
Tensor shifted(const Tensor& x, int64_t dim) { return x - amax(x, {dim}, /*keepdim=*/true); }

}  // namespace

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

}  // namespace kiln::decomp
