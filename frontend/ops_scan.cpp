// kiln/frontend/ops_scan.cpp — the Scan family's frontend: cumsum, cumprod, cummax/cummin
// (with the int64 index of the running extreme), logcumsumexp. Integral and bool inputs scan in
// int64 unless a dtype is given (frontend/ops_reduction.h accumulate_dtype).
#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_reduction.h"
#include "frontend/ops_view.h"
#include "frontend/symbolic.h"

#include <tuple>

namespace kiln {

using ir::OpKind;

namespace {

Tensor scan(OpKind kind, std::string_view op, const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  int64_t d = normalize_dim(op, dim, self.dim());
  const ScalarType acc = accumulate_dtype(self, dtype);
  // PyTorch has no bool kernel for the sums and products. (It returns an empty input without
  // reaching a kernel; kiln raises for it too, so that the error does not depend on a size.)
  if (acc == ScalarType::Bool) fail(op, "\"{}_out_cpu\" not implemented for 'Bool'", op);
  Tensor x = self.to(acc);
  return dispatch1(kind, {x}, {d});
}

}  // namespace

// ---- scans ----------------------------------------------------------------------------------------

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return scan(OpKind::cumsum, "cumsum", self, dim, dtype);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return scan(OpKind::cumprod, "cumprod", self, dim, dtype);
}

namespace {

// cummax/cummin: the running extreme, and the latest position where the input equals it (or
// both are NaN) — itself a running maximum of positions, as PyTorch's ">=" update gives.
std::tuple<Tensor, Tensor> cum_extreme(OpKind kind, std::string_view op, const Tensor& self, int64_t dim) {
  const int64_t d = normalize_dim(op, dim, self.dim());
  Tensor values = dispatch1(kind, {self}, {d});
  Tensor reached = eq(self, values);
  if (is_floating_point(self.dtype())) reached = logical_or(reached, logical_and(isnan(self), isnan(values)));
  if (self.dim() == 0) return {values, zeros({}, TensorOptions(ScalarType::Int64).device(self.device()))};
  const Tensor idx = dispatch1(OpKind::cummax, {where(reached, sym_positions(self, d), Scalar(int64_t{0}))}, {d});
  return {values, idx};
}

}  // namespace

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) { return cum_extreme(OpKind::cummax, "cummax", self, dim); }
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) { return cum_extreme(OpKind::cummin, "cummin", self, dim); }

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  return dispatch1(OpKind::logcumsumexp, {self}, {normalize_dim("logcumsumexp", dim, self.dim())});
}

}  // namespace kiln
