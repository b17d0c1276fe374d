// kiln/frontend/ops_reduction.cpp — the Reduction family (sum, prod, amax/amin, max/min,
// argmax/argmin, any/all) and the Scan family (cumsum, cumprod, cummax/cummin with indices,
// logcumsumexp). mean and var are the Moments family (frontend/ops_moments.cpp), logsumexp the
// Softmax family (frontend/ops_softmax.cpp).
//
// Dims are normalized (negative dims count from the end), checked for duplicates and sorted
// before the prim sees them; an empty dim list means every dim, as torch.sum(x, dim=[]).
// Integral and bool inputs sum and multiply in int64 unless a dtype is given, which casts the
// input first.
#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"
#include "frontend/ops_factory.h"
#include "base/error.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"
#include "frontend/ops.h"
#include "frontend/ops_reduction.h"
#include "frontend/ops_view.h"

#include <algorithm>
#include <string>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

Tensor reduce(OpKind kind, const Tensor& x, std::vector<int64_t> dims, bool keepdim) {
  return dispatch1(kind, {x}, {std::move(dims), keepdim});
}

// amax/amin/max/min/argmax/argmin have no identity: reduced dims must be non-empty.
void check_nonzero_dims(std::string_view op, const Tensor& self, const std::vector<int64_t>& dims) {
  for (int64_t d : dims) {
    if (ir::sym_eq(sym_size(self, d), ir::Expr(0))) fail(op, "{}(): Expected reduction dim {} to have non-zero size.", op, d);
  }
}

void check_nonempty(std::string_view op, const Tensor& self) {
  if (ir::sym_eq(sym_numel(self), ir::Expr(0))) {
    fail(op, "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with "
             "the 'dim' argument.",
         op);
  }
}


}  // namespace

// Normalized, sorted, unique dims; {} stands for every dim.
std::vector<int64_t> reduce_dims(std::string_view op, const Tensor& self, IntArrayRef dims) {
  int64_t rank = self.dim();
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(d);
    return out;
  }
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 1)), false);
  for (int64_t d : dims) {
    int64_t n = normalize_dim(op, d, rank);
    if (seen[static_cast<size_t>(n)]) fail(op, "dim {} appears multiple times in the list of dims", n);
    seen[static_cast<size_t>(n)] = true;
    out.push_back(n);
  }
  // A 0-dim tensor accepts dim 0 / -1 but has no dim to reduce.
  if (rank == 0) return {};
  std::sort(out.begin(), out.end());
  return out;
}

// The dtype sum/prod/cumsum/cumprod compute in.
ScalarType accumulate_dtype(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), true) ? ScalarType::Int64 : self.dtype();
}

// ---- sum, prod -----------------------------------------------------------------------------

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) { return sum(self, {}, false, dtype); }

Tensor sum(const Tensor& self, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  std::vector<int64_t> d = reduce_dims("sum", self, dims);
  return reduce(OpKind::sum, self.to(accumulate_dtype(self, dtype)), std::move(d), keepdim);
}

Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) {
  std::vector<int64_t> d = reduce_dims("prod", self, {});
  return reduce(OpKind::prod, self.to(accumulate_dtype(self, dtype)), std::move(d), false);
}

Tensor prod(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  std::vector<int64_t> d = reduce_dims("prod", self, IntArrayRef(dim));
  return reduce(OpKind::prod, self.to(accumulate_dtype(self, dtype)), std::move(d), keepdim);
}


// ---- amax, amin, max, min, argmax, argmin -------------------------------------------------------------

Tensor amax(const Tensor& self, IntArrayRef dims, bool keepdim) {
  std::vector<int64_t> d = reduce_dims("amax", self, dims);
  check_nonzero_dims("amax", self, d);
  return reduce(OpKind::amax, self, std::move(d), keepdim);
}

Tensor amin(const Tensor& self, IntArrayRef dims, bool keepdim) {
  std::vector<int64_t> d = reduce_dims("amin", self, dims);
  check_nonzero_dims("amin", self, d);
  return reduce(OpKind::amin, self, std::move(d), keepdim);
}

Tensor max(const Tensor& self) {
  check_nonempty("max", self);
  return reduce(OpKind::amax, self, reduce_dims("max", self, {}), false);
}

Tensor min(const Tensor& self) {
  check_nonempty("min", self);
  return reduce(OpKind::amin, self, reduce_dims("min", self, {}), false);
}

static Tensor arg_reduce(OpKind kind, std::string_view op, const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  ir::AttrValue d = std::monostate{};
  if (dim) {
    int64_t n = normalize_dim(op, *dim, self.dim());
    if (self.dim() > 0 && ir::sym_eq(sym_size(self, n), ir::Expr(0))) fail(op, "{}(): Expected reduction dim {} to have non-zero size.", op, n);
    d = n;
  } else {
    check_nonempty(op, self);
  }
  // A 0-dim input is reduced as its one-element vector (the index is 0 either way): the fuser's
  // group walk and the kernel builder disagreed on a reduction over no dims inside a row kernel
  // (fuzz seed 7420031: "kernel ... computes other nodes than its fusion group").
  if (self.dim() == 0) return dispatch1(kind, {self.reshape({1})}, {int64_t{0}, false});
  return dispatch1(kind, {self}, {d, keepdim});
}

Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(OpKind::argmax, "argmax", self, dim, keepdim);
}

// max/min along a dim: the amax/amin prim for the values and argmax/argmin for the indices, so
// a NaN is both the value and (its first position) the index, as in PyTorch. Bool inputs take
// their indices from a uint8 copy (PyTorch's max.dim accepts bool; its argmax does not).
static std::tuple<Tensor, Tensor> max_min_dim(bool is_max, const Tensor& self, int64_t dim, bool keepdim) {
  const char* op = is_max ? "max" : "min";
  const int64_t d = normalize_dim(op, dim, self.dim());
  if (self.dim() > 0 && ir::sym_eq(sym_size(self, d), ir::Expr(0)))
    fail(op, "{}(): Expected reduction dim {} to have non-zero size.", op, d);
  std::vector<int64_t> dims = reduce_dims(op, self, IntArrayRef(d));
  const Tensor keyed = self.dtype() == ScalarType::Bool ? self.to(ScalarType::UInt8) : self;
  Tensor indices = dispatch1(is_max ? OpKind::argmax : OpKind::argmin, {keyed}, {d, keepdim});
  // Differentiated, the values are read at the indices, so that the gradient goes to the one
  // element the index names, as PyTorch's max.dim backward does (amax's shares it among ties).
  if (self.dim() > 0 && ((GradMode::is_enabled() && self.requires_grad()) || TracingForGrad::is_enabled())) {
    Tensor at = keepdim ? indices : indices.unsqueeze(d);
    Tensor values = self.gather(d, at);
    return {keepdim ? values : values.squeeze(d), indices};
  }
  Tensor values = reduce(is_max ? OpKind::amax : OpKind::amin, self, dims, keepdim);
  return {values, indices};
}

std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) { return max_min_dim(true, self, dim, keepdim); }
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) { return max_min_dim(false, self, dim, keepdim); }

Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce(OpKind::argmin, "argmin", self, dim, keepdim);
}

// ---- any, all ------------------------------------------------------------------------------------

namespace {
// any/all produce bool, except that uint8 inputs give uint8 (as PyTorch documents).
Tensor logical_reduce(OpKind kind, const Tensor& self, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor r = reduce(kind, self, dims, keepdim);
  return self.dtype() == ScalarType::UInt8 ? r.to(ScalarType::UInt8) : r;
}
}  // namespace

Tensor any(const Tensor& self) { return logical_reduce(OpKind::any, self, reduce_dims("any", self, {}), false); }
Tensor any(const Tensor& self, int64_t dim, bool keepdim) {
  return logical_reduce(OpKind::any, self, reduce_dims("any", self, IntArrayRef(dim)), keepdim);
}
Tensor all(const Tensor& self) { return logical_reduce(OpKind::all, self, reduce_dims("all", self, {}), false); }
Tensor all(const Tensor& self, int64_t dim, bool keepdim) {
  return logical_reduce(OpKind::all, self, reduce_dims("all", self, IntArrayRef(dim)), keepdim);
}
Tensor any(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return logical_reduce(OpKind::any, self, reduce_dims("any", self, dims), keepdim);
}
Tensor all(const Tensor& self, IntArrayRef dims, bool keepdim) {
  return logical_reduce(OpKind::all, self, reduce_dims("all", self, dims), keepdim);
}

}  // namespace kiln
