// kiln/frontend/ops_sort.cpp — sorting and the ops built on it (frontend/ops_sort.h).
//
// One prim does the sorting: argsort (stable, NaN above every number). The rest records
// ordinary prims around it, as PyTorch's decompositions do:
//   sort, topk, kthvalue   positions from argsort (narrowed), values gathered by them;
//   median, nanmedian      the position in sorted order ((n - 1) / 2 of the numbers, or the
//                          first NaN) gathered from argsort, then the value;
//   mode                   runs of equal sorted values: each run's start is a running maximum
//                          of start positions (the cummax prim), the longest run's first end
//                          is an argmax — the smallest of the most frequent values — and its
//                          position is that of its last element in stable order;
//   unique(_consecutive)   run starts flagged, kept by a data-dependent selection (eager);
//   randperm               argsort of Philox draws;
//   searchsorted/bucketize the count of boundaries that PyTorch's binary search would pass.
// Checks and messages are PyTorch's.
#include "frontend/ops_sort.h"

#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <limits>
#include <string>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

Tensor argsort_prim(const Tensor& self, int64_t d, bool descending) {
  return dispatch1(OpKind::argsort, {self}, {d, descending});
}

// The size of the sorted dim (1 for a 0-dim tensor).
ir::Expr dim_size(const Tensor& self, int64_t d) { return self.dim() == 0 ? ir::Expr(1) : sym_size(self, d); }

// values gathered at `idx` along d (a 0-dim self is its own value).
Tensor take(const Tensor& self, int64_t d, const Tensor& idx) { return self.dim() == 0 ? self.clone() : self.gather(d, idx); }

std::tuple<Tensor, Tensor> squeezed(Tensor values, Tensor indices, int64_t d, bool keepdim) {
  if (keepdim || values.dim() == 0) return {values, indices};
  return {values.squeeze(d), indices.squeeze(d)};
}

// Refuses the reduction of an empty dim with PyTorch's message.
void check_nonempty(std::string_view op, const Tensor& self, int64_t d, std::string_view what) {
  if (self.dim() > 0 && sym_eq(sym_size(self, d), ir::Expr(0)))
    fail(op, "{}(): Expected reduction dim {} to have non-zero size.", what, d);
}

// median / nanmedian along d of a tensor with at least one dim, keepdim-shaped.
std::tuple<Tensor, Tensor> median_impl(const Tensor& self, int64_t d, bool ignore_nan) {
  const Tensor order = argsort_prim(self, d, false);
  const Tensor n = sym_scalar_tensor(sym_size(self, d), ScalarType::Int64, self.device());
  Tensor pos;
  if (is_floating_point(self.dtype())) {
    const Tensor nans = isnan(self).sum({d}, /*keepdim=*/true);
    if (ignore_nan) {
      const Tensor numbers = n - nans;  // all NaN: position 0, the first NaN
      pos = where(gt(numbers, 0), div(numbers - 1, 2, "floor"), Scalar(int64_t{0}));
    } else {  // sorted NaNs follow the numbers: the first NaN is at n - nans
      pos = where(gt(nans, 0), n - nans, div(n - 1, 2, "floor"));
    }
  } else {
    std::vector<ir::Expr> kept = sym_sizes(self);
    kept[static_cast<size_t>(d)] = ir::Expr(1);
    pos = sym_expand(div(n - 1, 2, "floor").reshape({}), kept);
  }
  const Tensor idx = order.gather(d, pos);
  return {self.gather(d, idx), idx};
}

std::tuple<Tensor, Tensor> median_dim(std::string_view op, const Tensor& self, int64_t dim, bool keepdim, bool ignore_nan) {
  const int64_t d = normalize_dim(op, dim, self.dim());
  if (self.dim() == 0) {
    auto [v, i] = median_impl(self.reshape({1}), 0, ignore_nan);
    return {v.reshape({}), i.reshape({})};
  }
  check_nonempty(op, self, d, op);
  auto [v, i] = median_impl(self, d, ignore_nan);
  return squeezed(v, i, d, keepdim);
}

Tensor median_all(const Tensor& self, bool ignore_nan) {
  const Tensor flat = sym_reshape(self, {sym_numel(self)});
  if (sym_eq(sym_numel(self), ir::Expr(0))) {
    // PyTorch returns NaN, converted to the dtype as x86 converts it: the lowest int64 or
    // int32, 0 for narrower integers, true for bool.
    const TensorOptions opts = TensorOptions(self.dtype()).device(self.device());
    switch (self.dtype()) {
      case ScalarType::Int64: return full({}, std::numeric_limits<int64_t>::min(), opts);
      case ScalarType::Int32: return full({}, std::numeric_limits<int32_t>::min(), opts);
      case ScalarType::Bool: return full({}, true, opts);
      default:
        return full({}, is_floating_point(self.dtype()) ? std::numeric_limits<double>::quiet_NaN() : 0.0, opts);
    }
  }
  return std::get<0>(median_impl(flat, 0, ignore_nan)).reshape({});
}

// The data of `t` decides a result's size: refused while tracing.
void require_values(std::string_view op, const Tensor& t) {
  if (t.is_traced() || Tracer::current())
    fail_data_dependent(op, "the size of the result depends on the values of the input, which a traced function does "
                            "not have; compile() runs such a function eagerly");
}

// 1-D int64 positions of the true elements of a 1-D bool tensor.
Tensor flagged(const Tensor& flags) { return nonzero(flags).reshape({-1}); }

// The (values, inverse, counts) of runs of equal slices along d of x, flagged by `starts`.
std::tuple<Tensor, Tensor, Tensor> runs(const Tensor& x, int64_t d, const Tensor& starts, bool return_inverse,
                                        bool return_counts) {
  const TensorOptions i64 = TensorOptions(ScalarType::Int64).device(x.device());
  const Tensor first = flagged(starts);
  const Tensor values = x.index_select(d, first);
  const Tensor group = cumsum(starts, 0) - 1;
  Tensor inverse = return_inverse ? group : empty({0}, i64);
  Tensor counts = empty({0}, i64);
  if (return_counts)
    counts = zeros({first.size(0)}, i64).scatter_add(0, group, ones({starts.size(0)}, i64));
  return {values, inverse, counts};
}

}  // namespace

// ---- sort, argsort, topk, kthvalue ---------------------------------------------------------------

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending) {
  std::vector<Tensor> r = dispatch(OpCall{OpKind::sort, {self}, ir::AttrList({normalize_dim("sort", dim, self.dim()), descending})});
  return {r.at(0), r.at(1)};
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> /*stable*/, int64_t dim, bool descending) {
  return sort(self, dim, descending);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending) {
  return argsort_prim(self, normalize_dim("argsort", dim, self.dim()), descending);
}

Tensor msort(const Tensor& self) { return std::get<0>(sort(self, 0)); }

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  std::vector<Tensor> r = dispatch(OpCall{OpKind::topk, {self},
                                          ir::AttrList({k, normalize_dim("topk", dim, self.dim()), largest, sorted})});
  return {r.at(0), r.at(1)};
}

namespace decomp {

std::vector<Tensor> sort(const DecompArgs& a) {
  const Tensor& self = a.in(0);
  const int64_t d = a.attr<int64_t>("dim");
  const Tensor idx = argsort_prim(self, d, a.attr<bool>("descending"));
  return {take(self, d, idx), idx};
}

std::vector<Tensor> topk(const DecompArgs& a) {
  const Tensor& self = a.in(0);
  const int64_t k = a.attr<int64_t>("k"), d = a.attr<int64_t>("dim");
  if (self.dtype() == ScalarType::Bool) fail("topk", "\"topk_cpu\" not implemented for 'Bool'");
  if (k < 0 || !sym_le(ir::Expr(k), dim_size(self, d))) fail("topk", "selected index k out of range");
  Tensor idx = argsort_prim(self, d, a.attr<bool>("largest"));  // sorted or not, the order is sorted
  if (self.dim() > 0) idx = idx.narrow(d, 0, k);
  return {take(self, d, idx), idx};
}

}  // namespace decomp

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = normalize_dim("kthvalue", dim, self.dim());
  if (self.dtype() == ScalarType::Bool) fail("kthvalue", "\"kthvalue_cpu\" not implemented for 'Bool'");
  if (k < 1 || !sym_le(ir::Expr(k), dim_size(self, d)))
    fail("kthvalue", "kthvalue(): selected number k out of range for dimension {}", d);
  if (self.dim() == 0) return {self.clone(), zeros({}, TensorOptions(ScalarType::Int64).device(self.device()))};
  const Tensor idx = argsort_prim(self, d, false).narrow(d, k - 1, 1);
  return squeezed(self.gather(d, idx), idx, d, keepdim);
}

// ---- median, nanmedian, mode ---------------------------------------------------------------------

Tensor median(const Tensor& self) { return median_all(self, false); }
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  return median_dim("median", self, dim, keepdim, false);
}
Tensor nanmedian(const Tensor& self) { return median_all(self, true); }
std::tuple<Tensor, Tensor> nanmedian(const Tensor& self, int64_t dim, bool keepdim) {
  return median_dim("nanmedian", self, dim, keepdim, true);
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = normalize_dim("mode", dim, self.dim());
  if (self.dim() == 0) return {self.clone(), zeros({}, TensorOptions(ScalarType::Int64).device(self.device()))};
  check_nonempty("mode", self, d, "mode");
  const auto [sorted, order] = sort(self, d);
  // A run starts at position 0 and wherever a value differs from the one before (NaN differs).
  std::vector<ir::Expr> first = sym_sizes(self);
  first[static_cast<size_t>(d)] = ir::Expr(1);
  const Tensor starts = cat({sym_full(first, true, ScalarType::Bool, self.device()),
                             ne(sorted.slice(d, 1, std::nullopt), sorted.slice(d, 0, -1))},
                            d);
  const Tensor pos = sym_positions(self, d);
  const Tensor run_start = dispatch1(OpKind::cummax, {where(starts, pos, Scalar(int64_t{0}))}, {d});
  const Tensor best = argmax(pos - run_start, d, /*keepdim=*/true);
  return squeezed(sorted.gather(d, best), order.gather(d, best), d, keepdim);
}

// ---- unique, unique_consecutive --------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool /*sorted*/, bool return_inverse, bool return_counts) {
  require_values("unique", self);
  const Tensor flat = self.reshape({-1});
  const auto [sorted, order] = sort(flat, 0);
  const int64_t n = flat.size(0);
  const Tensor starts = n == 0 ? empty({0}, TensorOptions(ScalarType::Bool).device(self.device()))
                               : cat({ones({1}, TensorOptions(ScalarType::Bool).device(self.device())), ne(sorted.slice(0, 1, std::nullopt),
                                                                                   sorted.slice(0, 0, -1))});
  auto [values, group, counts] = runs(sorted, 0, starts, return_inverse, return_counts);
  Tensor inverse = group;
  if (return_inverse)
    inverse = zeros({n}, TensorOptions(ScalarType::Int64).device(self.device())).scatter(0, order, group).reshape(self.sizes());
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& self, int64_t dim, bool /*sorted*/, bool return_inverse,
                                              bool return_counts) {
  require_values("unique_dim", self);
  const int64_t d = normalize_dim("unique_dim", dim, self.dim(), /*allow_scalar=*/false);
  const int64_t n = self.size(d);
  int64_t m = 1;  // elements per slice
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d) m *= self.size(k);
  const Tensor rows = self.movedim(d, 0).reshape({n, m});  // one row per slice
  const TensorOptions i64 = TensorOptions(ScalarType::Int64).device(self.device());
  // Lexicographic order of the rows: stable sorts by each column, the last column first.
  Tensor order = arange(n, i64);
  for (int64_t c = rows.size(1); c-- > 0;) {
    const Tensor key = rows.index_select(0, order).select(1, c);
    order = order.index_select(0, argsort_prim(key, 0, false));
  }
  const Tensor sorted = rows.index_select(0, order);
  Tensor starts = empty({0}, TensorOptions(ScalarType::Bool).device(self.device()));
  if (n > 0) {
    Tensor differs = ne(sorted.slice(0, 1, std::nullopt), sorted.slice(0, 0, -1));
    differs = rows.size(1) == 0 ? zeros({n - 1}, TensorOptions(ScalarType::Bool).device(self.device())) : differs.any(1);
    starts = cat({ones({1}, TensorOptions(ScalarType::Bool).device(self.device())), differs});
  }
  auto [values, group, counts] = runs(self.movedim(d, 0).index_select(0, order), 0, starts, return_inverse, return_counts);
  Tensor inverse = group;
  if (return_inverse) inverse = zeros({n}, i64).scatter(0, order, group);
  return {values.movedim(0, d), inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& self, bool return_inverse, bool return_counts,
                                                      std::optional<int64_t> dim) {
  require_values("unique_consecutive", self);
  const Tensor x = dim ? self : self.reshape({-1});
  const int64_t d = normalize_dim("unique_consecutive", dim.value_or(0), x.dim(), /*allow_scalar=*/false);
  const int64_t n = x.size(d);
  Tensor starts = empty({0}, TensorOptions(ScalarType::Bool).device(self.device()));
  if (n > 0) {
    Tensor differs = ne(x.slice(d, 1, std::nullopt), x.slice(d, 0, -1)).movedim(d, 0);
    if (differs.dim() > 1) differs = differs.reshape({n - 1, -1}).any(1);
    starts = cat({ones({1}, TensorOptions(ScalarType::Bool).device(self.device())), differs});
  }
  auto [values, inverse, counts] = runs(x, d, starts, return_inverse, return_counts);
  if (return_inverse && !dim) inverse = inverse.reshape(self.sizes());
  return {values, inverse, counts};
}

// ---- randperm --------------------------------------------------------------------------------------

Tensor randperm(int64_t n, TensorOptions opts) {
  if (n < 0) fail("randperm", "n must be non-negative, got{}", n);
  const Device dev = opts.device_or();
  return argsort(rand({n}, TensorOptions(ScalarType::Double).device(dev)), 0).to(opts.dtype_or(ScalarType::Int64));
}

// ---- searchsorted, bucketize ---------------------------------------------------------------------------

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  const std::string_view op = "searchsorted";
  if (side) {
    if (*side != "left" && *side != "right") fail(op, "side can only be 'left' or 'right' but got {}", *side);
    if (*side == "left" && right)
      fail(op, "side and right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  if (sorted_sequence.dim() == 0) fail(op, "boundaries tensor should have positive dimension, but got 0 dimension");
  if (sorted_sequence.dim() != 1) {
    bool match = sorted_sequence.dim() == self.dim();
    for (int64_t d = 0; match && d + 1 < self.dim(); ++d) match = sym_eq(sym_size(sorted_sequence, d), sym_size(self, d));
    if (!match)
      fail(op, "boundaries tensor should be 1 dimension or the first N-1 dimensions of boundaries tensor and input value "
               "tensor must match, but we got boundaries tensor {} and input value tensor {}",
           shape_str(sorted_sequence.sizes()), shape_str(self.sizes()));
  }
  Tensor seq = sorted_sequence;
  if (sorter) {
    if (sorter->dtype() != ScalarType::Int64)
      fail(op, "sorter must be a tensor of long dtype but got dtype {}", c10_type_name(sorter->dtype()));
    if (sorter->sizes().vec() != sorted_sequence.sizes().vec())
      fail(op, "boundary and sorter must have the same size, but got boundary tensor {}and got sorter tensor {}",
           shape_str(sorted_sequence.sizes()), shape_str(sorter->sizes()));
    seq = sorted_sequence.gather(-1, *sorter);
  }
  if (self.dtype() == ScalarType::Bool || seq.dtype() == ScalarType::Bool)
    fail(op, "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  const ScalarType common = result_type(seq, self);
  const Tensor bounds = seq.to(common), values = self.to(common).unsqueeze(-1);  // [..., N, 1]
  const Tensor b = sorted_sequence.dim() == 1 ? bounds : bounds.unsqueeze(-2);    // [M] or [..., 1, M]
  // PyTorch's binary search moves past a boundary b while !(b >= v) (left) or !(b > v)
  // (right); over sorted boundaries without NaN it stops after exactly that many.
  const Tensor passed = right ? logical_not(gt(b, values)) : logical_not(ge(b, values));
  const Tensor count = passed.sum({-1});
  return out_int32 ? count.to(ScalarType::Int32) : count;
}

Tensor searchsorted(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  // The number converts to the boundaries' dtype unchecked, as PyTorch's does (300 as uint8 is 44).
  const Tensor value = wrapped_number(self, result_type(sorted_sequence, self), sorted_sequence.device());
  return searchsorted(sorted_sequence, value, out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& self, const Tensor& boundaries, bool out_int32, bool right) {
  if (boundaries.dim() != 1)
    fail("bucketize", "boundaries tensor must be 1 dimension, but got dim({})", boundaries.dim());
  return searchsorted(boundaries, self, out_int32, right);
}

Tensor bucketize(const Scalar& self, const Tensor& boundaries, bool out_int32, bool right) {
  return bucketize(wrapped_number(self, result_type(self, boundaries), boundaries.device()), boundaries, out_int32, right);
}

}  // namespace kiln
