// kiln/frontend/ops_index_scatter.cpp — the Index family's positional reads and writes: gather,
// index_select, scatter, scatter_add, scatter_reduce, index_add, index_reduce, index_copy,
// slice_scatter, select_scatter,
// masked_scatter, index_put; and reading by advanced indexing: index. (masked_fill, nonzero,
// embedding and take_along_dim are frontend/ops_index.cpp.)
//
// gather, index_select, scatter, scatter_add and scatter_reduce are prims; the rest record prims, as PyTorch's decompositions do:
//   index_add        scatter_add along dim with the index spread over the other dims;
//   index_reduce     scatter_reduce, and index_copy scatter, spread the same way (so an index out
//                    of [0, size) is the scatter's error: neither wraps negative positions);
//   slice/select_scatter  scatter of src at start + step * i;
//   masked_scatter   where(mask, source's k-th element for the k-th true position, self),
//                    k from a running count of the mask (traceable: no value decides a size);
//   index, index_put the advanced dims moved to the front and flattened, so that the index
//                    tensors, broadcast and made non-negative, combine into one position per
//                    element: index_select reads, scatter / scatter_add writes. Bool masks
//                    among the indices become their nonzero() coordinates (eager only).
// Checks and messages are PyTorch's.
#include "base/error.h"
#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

namespace kiln {

using ir::OpKind;

namespace {

void check_index_dtype(std::string_view op, const Tensor& index) {
  if (index.dtype() != ScalarType::Int64 && index.dtype() != ScalarType::Int32)
    fail(op, "{}(): Expected dtype int64 for index", op);
}

// `index` (1-D or 0-dim, n entries) shaped to lie along `dim` of a tensor of rank `rank`.
Tensor along(const Tensor& index, int64_t dim, int64_t rank) {
  std::vector<ir::Expr> shape(static_cast<size_t>(std::max<int64_t>(rank, 1)), ir::Expr(1));
  shape[static_cast<size_t>(dim)] = sym_numel(index);
  return sym_reshape(index.to(ScalarType::Int64), shape);
}

void check_index_dtype_32_64(std::string_view op, const Tensor& index) {
  if (index.dtype() != ScalarType::Int64 && index.dtype() != ScalarType::Int32)
    fail(op, "{}(): Expected dtype int32/int64 for index", op);
}

// gather/scatter: ranks agree (0-dim counts as 1-D) and the index fits.
void scatter_gather_shape_check(std::string_view op, const Tensor& self, int64_t dim, const Tensor& index,
                                const Tensor* src) {
  auto nonempty_dim = [](const Tensor& t) { return std::max<int64_t>(t.dim(), 1); };
  // Sizes as expressions: a traced index and self of one symbolic size compare without a guard
  // (reading integer sizes pinned each to its trace-time value: one compile per batch size).
  auto nonempty_size = [](const Tensor& t, int64_t d) { return t.dim() == 0 ? ir::Expr(1) : sym_size(t, d); };
  const bool gather = op == "gather";  // scatter's checks name self (with a scalar value too)
  int64_t rank = nonempty_dim(self);
  if (nonempty_dim(index) != rank) {
    fail(op, "Index tensor must have the same number of dimensions as {} tensor", gather ? "input" : "self");
  }
  if (src && nonempty_dim(*src) != rank) fail(op, "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t d = 0; d < rank; ++d) {
    const ir::Expr isz = nonempty_size(index, d);
    bool bad = d != dim && ir::sym_lt(nonempty_size(self, d), isz);
    if (src) bad = bad || ir::sym_lt(nonempty_size(*src, d), isz);
    if (!bad) continue;
    if (src) {
      fail(op, "Expected index {} to be no larger than self {} apart from dimension {} and to be no larger size than src {}",
           shape_str(index.sizes()), shape_str(self.sizes()), dim, shape_str(src->sizes()));
    }
    if (!gather) {
      fail(op, "Expected index {} to be no larger than self {} apart from dimension {}", shape_str(index.sizes()),
           shape_str(self.sizes()), dim);
    }
    fail(op, "Size does not match at dimension {} expected index {} to be no larger than self {} apart from dimension {}", d,
         shape_str(index.sizes()), shape_str(self.sizes()), dim);
  }
}

// PyTorch's 0-dim operands of gather, scatter and index_select act as 1-element 1-D ones (its
// ensure_nonempty_dim). The prims are recorded on 1-element views of them, and the result is
// viewed back to PyTorch's shape, so that every index prim the frontend records has operands of
// one rank, at least 1, and runs as a kernel (passes/lower_index.h), on cuda too.
Tensor nonempty(const Tensor& t) { return t.dim() == 0 ? sym_reshape(t, {ir::Expr(1)}) : t; }
Tensor as_0dim_if(bool zero_dim, const Tensor& r) { return zero_dim ? sym_reshape(r, {}) : r; }

// The scatter prims (scatter, scatter_add, scatter_reduce) on nonempty operands; the result has
// self's shape.
Tensor record_scatter(OpKind kind, const Tensor& self, const Tensor& index, const Tensor& src,
                      std::vector<ir::AttrValue> attrs) {
  return as_0dim_if(self.dim() == 0, dispatch1(kind, {nonempty(self), nonempty(index), nonempty(src)}, std::move(attrs)));
}

Tensor scatter_impl(OpKind kind, std::string_view op, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor& src) {
  int64_t d = normalize_dim(op, dim, self.dim());
  check_index_dtype_32_64(op, index);
  if (self.dtype() != src.dtype()) fail(op, "Expected self.dtype to be equal to src.dtype");
  scatter_gather_shape_check(op, self, d, index, &src);
  return record_scatter(kind, self, index, src, {d});
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index) {
  int64_t d = normalize_dim("gather", dim, self.dim());
  check_index_dtype_32_64("gather", index);
  scatter_gather_shape_check("gather", self, d, index, nullptr);
  return as_0dim_if(index.dim() == 0, dispatch1(OpKind::gather, {nonempty(self), nonempty(index)}, {d}));
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(OpKind::scatter, "scatter", self, dim, index, src);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  // PyTorch converts the value after checking the dim, the index and the shapes, and only when
  // there is an element to write.
  const int64_t d = normalize_dim("scatter", dim, self.dim());
  check_index_dtype_32_64("scatter", index);
  scatter_gather_shape_check("scatter", self, d, index, nullptr);
  if (sym_numel(index).maybe_const() != 0) check_scalar_fits("scatter", value, self.dtype());
  Tensor src = wrapped_number(value, self.dtype(), self.device());
  if (index.dim() > 0) src = sym_expand(src, sym_sizes(index));
  return scatter_impl(OpKind::scatter, "scatter", self, dim, index, src);
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl(OpKind::scatter_add, "scatter_add", self, dim, index, src);
}

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index) {
  // PyTorch's order: the dim, the index's rank, its count for a 0-dim self, its dtype.
  const int64_t d = normalize_dim("index_select", dim, self.dim());
  if (index.dim() > 1) fail("index_select", "index_select(): Index is supposed to be a vector");
  if (self.dim() == 0 && !ir::sym_eq(sym_numel(index), ir::Expr(1)))
    fail("index_select", "index_select(): Index to scalar can have only 1 value, got {} value(s)", index.numel());
  if (index.dtype() != ScalarType::Int64 && index.dtype() != ScalarType::Int32) {
    fail("index_select", "index_select(): Expected dtype int32 or int64 for index");
  }
  const Tensor idx = nonempty(index.to(ScalarType::Int64));
  return as_0dim_if(self.dim() == 0, dispatch1(OpKind::index_select, {nonempty(self), idx}, {d}));
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                      bool include_self) {
  const std::string_view op = "scatter_reduce";
  const int64_t d = normalize_dim(op, dim, self.dim());
  check_index_dtype(op, index);
  if (self.dtype() != src.dtype()) fail(op, "Expected self.dtype to be equal to src.dtype");
  // PyTorch also takes "max" and "min" (scatter's older names) for amax and amin.
  const std::string r = reduce == "max" ? "amax" : reduce == "min" ? "amin" : std::string(reduce);
  if (r != "sum" && r != "prod" && r != "mean" && r != "amax" && r != "amin")
    fail(op, "reduce argument must be either sum, prod, mean, amax or amin, got {}", reduce);
  if (r == "mean" && self.dtype() == ScalarType::Bool)  // PyTorch has no bool kernel for a mean
    fail(op, "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'");
  return record_scatter(OpKind::scatter_reduce, self, index, src, {d, r, include_self});
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  const std::string_view op = "index_add";
  const int64_t d = normalize_dim(op, dim, self.dim());
  if (index.dim() > 1) fail(op, "index_add_(): Index is supposed to be a vector");
  check_index_dtype(op, index);
  if (self.dtype() != source.dtype())
    fail(op, "index_add_(): self ({}) and source ({}) must have the same scalar type", c10_type_name(self.dtype()),
         c10_type_name(source.dtype()));
  if (source.dim() != self.dim() && !(source.dim() <= 1 && self.dim() <= 1))
    fail(op, "index_add_(): Index is supposed to be a vector");  // PyTorch's wording for a rank mismatch
  // Counts as expressions: a traced index and source of one symbolic length compare without a guard.
  const ir::Expr n = sym_numel(index), along_d = source.dim() == 0 ? ir::Expr(1) : sym_size(source, d);
  if (!sym_eq(along_d, n))
    fail(op, "index_add_(): Number of indices ({}) should be equal to source.size(dim) ({})", index.numel(),
         source.dim() == 0 ? 1 : source.size(d));  // integers read only to report: the trace fails anyway
  for (int64_t k = 0; k < self.dim(); ++k)
    if (k != d && !sym_eq(sym_size(self, k), sym_size(source, k)))
      fail(op, "index_add_(): self and source must have the same size at dimension {}; self size = {}, source size = {}",
           k, self.size(k), source.size(k));
  // PyTorch converts alpha to the dtype: a float alpha truncates for integer tensors.
  const Scalar a = is_floating_point(self.dtype()) ? alpha : Scalar(alpha.to_int());
  const Tensor scaled = a.to_double() == 1.0 ? source : source * a;
  const Tensor spread = sym_expand(along(index, d, self.dim()), sym_sizes(scaled.dim() == 0 ? scaled.reshape({1}) : scaled));
  if (self.dim() == 0) return scatter_add(self.reshape({1}), 0, spread, scaled.reshape({1})).reshape({});
  return scatter_add(self, d, spread, scaled.to(self.dtype()));
}

Tensor index_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source, std::string_view reduce,
                    bool include_self) {
  constexpr std::string_view op = "index_reduce";
  if (reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin")
    fail(op, "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}.", reduce);
  const int64_t d = normalize_dim(op, dim, self.dim());
  if (index.dim() > 1)
    fail(op, "index_reduce_(): Index is supposed to be a vector, but got dim: {} with type: {} and size: {}", index.dim(),
         c10_type_name(index.dtype()), shape_str(index.sizes()));
  if (index.dtype() != ScalarType::Int64 && index.dtype() != ScalarType::Int32)
    fail(op, "index_reduce_(): Expected dtype int32/int64 for index but got: {}", c10_type_name(index.dtype()));
  if (self.dtype() != source.dtype())
    fail(op, "index_reduce_(): self ({}) and source ({}) must have the same scalar type", c10_type_name(self.dtype()),
         c10_type_name(source.dtype()));
  const ir::Expr n = sym_numel(index), along_d = source.dim() == 0 ? ir::Expr(1) : sym_size(source, d);
  if (!sym_eq(n, along_d))
    fail(op, "index_reduce_(): Number of indices ({}) should be equal to source.size(dim): ({}), for dim: {}",
         index.numel(), source.dim() == 0 ? 1 : source.size(d), d);
  // A 0-dim operand must match the other's shape whole; otherwise the ranks agree and the sizes
  // outside dim.
  bool shapes_match = self.dim() == source.dim();
  for (int64_t k = 0; shapes_match && k < self.dim(); ++k)
    shapes_match = (k == d && self.dim() > 0 && source.dim() > 0) || sym_eq(sym_size(self, k), sym_size(source, k));
  if (!shapes_match)
    fail(op, "source tensor shape must match self tensor shape, excluding the specified dimension. Got self.shape = {} "
             "source.shape = {}",
         shape_str(self.sizes()), shape_str(source.sizes()));
  if (self.dtype() == ScalarType::Bool) fail(op, "\"index_func_\" not implemented for 'Bool'");
  const Tensor src = source.dim() == 0 ? source.reshape({1}) : source;
  const Tensor spread = sym_expand(along(index, d, self.dim()), sym_sizes(src));
  if (self.dim() == 0) return scatter_reduce(self.reshape({1}), 0, spread, src, reduce, include_self).reshape({});
  return scatter_reduce(self, d, spread, src, reduce, include_self);
}

namespace {

// The sizes of t without dim d (expressions: compared without pinning symbolic sizes).
std::vector<ir::Expr> slice_sizes(const Tensor& t, int64_t d) {
  std::vector<ir::Expr> out;
  for (int64_t k = 0; k < t.dim(); ++k)
    if (k != d) out.push_back(sym_size(t, k));
  return out;
}

// Sizes without dim d, as ATen prints a slice shape: space-separated, no brackets (read as
// integers: only an error message prints them).
std::string slice_shape_text(const Tensor& t, int64_t d) {
  std::string out;
  for (int64_t k = 0; k < t.dim(); ++k)
    if (k != d) out += (out.empty() ? "" : " ") + std::to_string(t.size(k));
  return out;
}

}  // namespace

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  constexpr std::string_view op = "index_copy";
  const int64_t d = normalize_dim(op, dim, self.dim());
  if (index.dim() >= 2) fail(op, "index_copy_(): Index should have dimension 1 or 0 (got {})", index.dim());
  const ir::Expr n = sym_numel(index);
  if (source.dim() == 0 && !sym_eq(n, ir::Expr(1)))
    fail(op, "index_copy_(): When source is scalar, index should have one element (got {})", index.numel());
  if (source.dim() != self.dim() && source.dim() != 0 && self.dim() != 0)
    fail(op, "index_copy_(): When source and destination are not scalars, their dimensionality must match. Source "
             "dimensionality ({}), destination dimensionality ({})",
         source.dim(), self.dim());
  if (index.dtype() != ScalarType::Int64)
    fail(op, "index_copy_(): Expected a long tensor for index, but got {}", c10_type_name(index.dtype()));
  if (self.dtype() != source.dtype())
    fail(op, "index_copy_(): self and source expected to have the same dtype, but got (self) {} and (source) {}",
         c10_type_name(self.dtype()), c10_type_name(source.dtype()));
  if (!sym_same_sizes(slice_sizes(self, d), slice_sizes(source, d)))
    fail(op, "index_copy_(): Source/destination tensor must have same slice shapes. Destination slice shape: {} at "
             "dimension {} and source slice shape: {} at dimension 0.",
         slice_shape_text(self, d), d, slice_shape_text(source, d));
  if (source.dim() != 0 && !sym_eq(n, sym_size(source, d)))
    fail(op, "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})", index.numel(),
         source.size(d));
  const Tensor src = source.dim() == 0 ? source.reshape({1}) : source;
  const Tensor spread = sym_expand(along(index, d, self.dim()), sym_sizes(src));
  if (self.dim() == 0) return scatter(self.reshape({1}), 0, spread, src).reshape({});
  return scatter(self, d, spread, src);
}

namespace {

// The scatter of src over self.slice(d, s, s + step * n, step), s and the end already resolved.
Tensor slice_scatter_prims(std::string_view op, const Tensor& self, const Tensor& src, int64_t d, int64_t s, int64_t e,
                           int64_t step) {
  if (step <= 0) fail(op, "slice step must be positive");
  const int64_t len = e > s ? (e - s + step - 1) / step : 0;
  std::vector<int64_t> want = self.sizes().vec();
  want[static_cast<size_t>(d)] = len;
  if (src.sizes().vec() != want)
    fail(op, "expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
         shape_str(src.sizes()), shape_str(want));
  if (src.dtype() != self.dtype())
    fail(op, "Expected self.dtype to be equal to src.dtype, got {} and {}", c10_type_name(self.dtype()),
         c10_type_name(src.dtype()));
  const Tensor positions = arange(s, s + len * step, step, TensorOptions(ScalarType::Int64).device(self.device()));
  return scatter(self, d, sym_expand(along(positions, d, self.dim()), sym_sizes(src)), src);
}

Tensor masked_scatter_prims(const Tensor& self, const Tensor& mask, const Tensor& source) {
  const std::string_view op = "masked_scatter";
  if (mask.dtype() != ScalarType::Bool)
    fail(op, "masked_scatter_ only supports boolean masks, but got mask with dtype {}", c10_type_name(mask.dtype()));
  if (self.dtype() != source.dtype())
    fail(op, "masked_scatter: expected self and source to have same dtypes but got {} and {}",
         c10_type_name(self.dtype()), c10_type_name(source.dtype()));
  const std::vector<ir::Expr> shape = sym_broadcast_shapes(op, sym_sizes(self), sym_sizes(mask));
  const Tensor m = sym_expand(mask, shape), x = sym_expand(self, shape);
  const ir::Expr total = sym_product(shape);
  const ir::Expr available = sym_numel(source);
  // The k-th true element (row-major) takes source's k-th element. Source is read through a
  // one-element pad: false positions read the pad, and a true position beyond the source's
  // elements reads past the pad, which gather refuses (PyTorch: source has too few elements).
  const Tensor flat_mask = sym_reshape(m, {total});
  const Tensor rank = cumsum(flat_mask, 0) - 1;
  const Tensor n = sym_scalar_tensor(available, ScalarType::Int64, self.device());
  const Tensor pos = where(flat_mask, where(lt(rank, n), rank, n + 1), n);
  const Tensor padded = constant_pad_nd(sym_reshape(source, {available}), {0, 1}, 0);
  return where(m, sym_reshape(padded.gather(0, pos), shape), x);
}

}  // namespace

Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                     std::optional<int64_t> end, int64_t step) {
  const std::string_view op = "slice_scatter";
  if (self.dim() == 0) fail(op, "slice() cannot be applied to a 0-dim tensor.");
  const int64_t d = normalize_dim(op, dim, self.dim());
  const int64_t size = self.size(d);
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  return dispatch1(OpKind::slice_scatter, {self, src}, {d, s, e, step});
}

Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  const std::string_view op = "select_scatter";
  if (self.dim() == 0) fail(op, "select() cannot be applied to a 0-dim tensor.");
  const int64_t d = normalize_dim(op, dim, self.dim());
  const int64_t size = self.size(d);
  if (index < -size || index >= size)
    fail(op, "select(): index {} out of range for tensor of size {} at dimension {}", index, shape_str(self.sizes()), d);
  return dispatch1(OpKind::select_scatter, {self, src}, {d, index < 0 ? index + size : index});
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  return dispatch1(OpKind::masked_scatter, {self, mask, source});
}

namespace decomp {

std::vector<Tensor> slice_scatter(const DecompArgs& a) {
  return {slice_scatter_prims("slice_scatter", a.in(0), a.in(1), a.attr<int64_t>("dim"), a.attr<int64_t>("start"),
                              a.attr<int64_t>("end"), a.attr<int64_t>("step"))};
}

std::vector<Tensor> select_scatter(const DecompArgs& a) {
  const Tensor& self = a.in(0);
  const Tensor& src = a.in(1);
  const int64_t d = a.attr<int64_t>("dim"), i = a.attr<int64_t>("index");
  std::vector<int64_t> want = self.sizes().vec();
  want.erase(want.begin() + d);
  if (src.sizes().vec() != want)
    fail("select_scatter", "expected src to have a size equal to the slice of self. src size = {}, slice size = {}",
         shape_str(src.sizes()), shape_str(want));
  return {slice_scatter_prims("select_scatter", self, src.unsqueeze(d), d, i, i + 1, 1)};
}

std::vector<Tensor> masked_scatter(const DecompArgs& a) { return {masked_scatter_prims(a.in(0), a.in(1), a.in(2))}; }

}  // namespace decomp

// ---- advanced indexing ----------------------------------------------------------------------

namespace {

struct Advanced {
  std::vector<int64_t> dims;          // self's dims with an index tensor, ascending
  std::vector<Tensor> index;          // one non-negative int64 index per such dim, broadcast together
  std::vector<int64_t> rest;          // the other dims, ascending
  bool adjacent = true;               // the indexed dims are consecutive
};

// The integer index tensors of `indices` and the dims of self they index: bool masks become
// their coordinates (eager only: nonzero's size depends on the data), None entries skip a dim.
// These are the inputs of the index and index_put nodes.
struct IndexList {
  std::vector<int64_t> dims;
  std::vector<Tensor> index;
};

IndexList index_list(std::string_view op, const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  IndexList r;
  int64_t d = 0;
  for (const std::optional<Tensor>& ix : indices) {
    if (!ix || !ix->defined()) {
      ++d;
      continue;
    }
    const ScalarType dt = ix->dtype();
    if (dt == ScalarType::Bool || dt == ScalarType::UInt8) {
      for (int64_t k = 0; k < ix->dim(); ++k) {
        if (d + k >= self.dim() || ix->size(k) != self.size(d + k))
          fail(op, "The shape of the mask {} at index {} does not match the shape of the indexed tensor {} at index {}",
               shape_str(ix->sizes()), k, shape_str(self.sizes()), d + k);
      }
      const Tensor coords = nonzero(dt == ScalarType::Bool ? *ix : ne(*ix, 0));  // eager only
      for (int64_t k = 0; k < ix->dim(); ++k, ++d) {
        r.dims.push_back(d);
        r.index.push_back(coords.select(1, k));
      }
      continue;
    }
    if (dt != ScalarType::Int64 && dt != ScalarType::Int32 && dt != ScalarType::Int16 && dt != ScalarType::Int8)
      fail(op, "tensors used as indices must be long, int, byte or bool tensors");
    r.dims.push_back(d++);
    r.index.push_back(*ix);
  }
  if (d > self.dim()) fail(op, "too many indices for tensor of dimension {} (got {})", self.dim(), d);
  if (r.dims.empty()) fail(op, "at least one index must be a tensor");  // x[:, :] is a view, not this op
  return r;
}

// The index tensors checked, wrapped and broadcast (the nodes' decompositions).
Advanced advanced_indices(std::string_view op, const Tensor& self, const std::vector<int64_t>& dims,
                          const std::vector<Tensor>& index) {
  if (dims.size() != index.size() || dims.empty() || !std::is_sorted(dims.begin(), dims.end()) ||
      std::adjacent_find(dims.begin(), dims.end()) != dims.end() || dims.front() < 0 || dims.back() >= self.dim())
    fail(op, "expected one index tensor per indexed dim, with the dims ascending and within the {} dims of self, but got "
             "{} index tensors for dims {}", self.dim(), index.size(), shape_str(dims));
  Advanced a;
  a.dims = dims;
  std::vector<ir::Expr> shape;
  for (const Tensor& ix : index) {
    if (!is_integral(ix.dtype(), /*include_bool=*/false))
      fail(op, "tensors used as indices must be long, int, byte or bool tensors");
    shape = a.index.empty() ? sym_sizes(ix) : sym_broadcast_shapes(op, shape, sym_sizes(ix));
    a.index.push_back(ix);
  }
  for (int64_t d = 0; d < self.dim(); ++d)
    if (std::find(a.dims.begin(), a.dims.end(), d) == a.dims.end()) a.rest.push_back(d);
  a.adjacent = a.dims.back() - a.dims.front() + 1 == static_cast<int64_t>(a.dims.size());
  for (size_t k = 0; k < a.index.size(); ++k) {
    const ir::Expr size = sym_size(self, a.dims[k]);
    const Tensor n = sym_scalar_tensor(size, ScalarType::Int64, self.device());
    Tensor ix = a.index[k].to(ScalarType::Int64);
    ix = where(lt(ix, 0), ix + n, ix);  // negative positions count from the end
    // Gathering the positions themselves checks them ("index 5 is out of bounds").
    ix = sym_reshape(sym_iota(size, ScalarType::Int64, self.device()).gather(0, sym_reshape(ix, {sym_numel(ix)})),
                     sym_sizes(ix));
    a.index[k] = sym_expand(ix, shape);
  }
  return a;
}

// The shape the index tensors broadcast to.
std::vector<ir::Expr> index_shape(const Advanced& a) { return sym_sizes(a.index.front()); }

// self with the indexed dims first (flattened into one) and the rest after: [N, rest...], and
// the flat position of every index element in it.
std::pair<Tensor, Tensor> flatten_advanced(const Tensor& self, const Advanced& a) {
  std::vector<int64_t> perm = a.dims;
  perm.insert(perm.end(), a.rest.begin(), a.rest.end());
  std::vector<ir::Expr> flat_shape{ir::Expr(1)};
  Tensor flat_index;
  for (size_t k = a.dims.size(); k-- > 0;) {  // row-major over the indexed dims
    const Tensor term = a.index[k] * sym_scalar_tensor(flat_shape[0], ScalarType::Int64, self.device());
    flat_index = flat_index.defined() ? flat_index + term : term;
    flat_shape[0] = flat_shape[0] * sym_size(self, a.dims[k]);
  }
  for (int64_t d : a.rest) flat_shape.push_back(sym_size(self, d));
  return {sym_reshape(self.permute(perm), flat_shape), sym_reshape(flat_index, {sym_numel(flat_index)})};
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices) {
  IndexList l = index_list("index", self, indices);
  std::vector<Tensor> in{self};
  in.insert(in.end(), l.index.begin(), l.index.end());
  return dispatch1(ir::OpKind::index, std::move(in), {l.dims});
}

Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate) {
  IndexList l = index_list("index_put", self, indices);
  std::vector<Tensor> in{self, values};
  in.insert(in.end(), l.index.begin(), l.index.end());
  return dispatch1(ir::OpKind::index_put, std::move(in), {l.dims, accumulate});
}

namespace decomp {

std::vector<Tensor> index(const DecompArgs& args) {
  const Tensor& self = args.in(0);
  const Advanced a = advanced_indices("index", self, args.attr<std::vector<int64_t>>("dims"),
                                      std::vector<Tensor>(args.inputs.begin() + 1, args.inputs.end()));
  const auto [flat, pos] = flatten_advanced(self, a);
  std::vector<ir::Expr> out = index_shape(a);
  const size_t nb = out.size();
  for (int64_t d : a.rest) out.push_back(sym_size(self, d));
  Tensor r = sym_reshape(flat.index_select(0, pos), out);
  if (!a.adjacent || a.dims.front() == 0) return {r};
  // Consecutive indexed dims keep their place: the rest dims before them move back in front.
  std::vector<int64_t> perm;
  const int64_t before = a.dims.front();
  for (int64_t k = 0; k < before; ++k) perm.push_back(static_cast<int64_t>(nb) + k);
  for (size_t k = 0; k < nb; ++k) perm.push_back(static_cast<int64_t>(k));
  for (size_t k = nb + static_cast<size_t>(before); k < out.size(); ++k) perm.push_back(static_cast<int64_t>(k));
  return {r.permute(perm)};
}

std::vector<Tensor> index_put(const DecompArgs& args) {
  const std::string_view op = "index_put";
  const Tensor& self = args.in(0);
  const Tensor& values = args.in(1);
  const bool accumulate = args.attr<bool>("accumulate");
  if (values.dtype() != self.dtype())
    fail(op, "Index put requires the source and destination dtypes match, got {} for the destination and {} for the "
             "source.",
         c10_type_name(self.dtype()), c10_type_name(values.dtype()));
  const Advanced a = advanced_indices(op, self, args.attr<std::vector<int64_t>>("dims"),
                                      std::vector<Tensor>(args.inputs.begin() + 2, args.inputs.end()));
  const auto [flat, pos] = flatten_advanced(self, a);
  // values broadcast to the shape index() returns, then laid out as [index elements, rest...].
  const std::vector<ir::Expr> b = index_shape(a);
  std::vector<ir::Expr> result = b;  // index()'s result shape with the indexed block first
  for (int64_t d : a.rest) result.push_back(sym_size(self, d));
  std::vector<ir::Expr> user = result;
  const bool moved = a.adjacent && a.dims.front() > 0;
  std::vector<int64_t> to_front;  // from index()'s layout to the block-first layout
  if (moved) {
    const int64_t before = a.dims.front(), nb = static_cast<int64_t>(b.size());
    user.clear();
    for (int64_t k = 0; k < before; ++k) user.push_back(result[static_cast<size_t>(nb + k)]);
    user.insert(user.end(), b.begin(), b.end());
    for (size_t k = static_cast<size_t>(nb + before); k < result.size(); ++k) user.push_back(result[k]);
    for (int64_t k = 0; k < nb; ++k) to_front.push_back(before + k);
    for (int64_t k = 0; k < before; ++k) to_front.push_back(k);
    for (int64_t k = nb + before; k < static_cast<int64_t>(result.size()); ++k) to_front.push_back(k);
  }
  if (!sym_expandable(sym_sizes(values), user))
    fail(op, "shape mismatch: value tensor of shape {} cannot be broadcast to indexing result of shape {}",
         shape_str(values.sizes()), ir::str(user));
  Tensor v = sym_expand(values, user);
  if (moved) v = v.permute(to_front);
  std::vector<ir::Expr> rows{sym_numel(pos)};
  for (int64_t d : a.rest) rows.push_back(sym_size(self, d));
  v = sym_reshape(v, rows);
  std::vector<ir::Expr> spread_shape(rows.size(), ir::Expr(1));
  spread_shape[0] = rows[0];
  const Tensor spread = sym_expand(sym_reshape(pos, spread_shape), rows);
  const Tensor written = accumulate ? flat.scatter_add(0, spread, v) : flat.scatter(0, spread, v);
  // Back to self's layout: unflatten the block, then undo the permutation.
  std::vector<ir::Expr> unflat;
  for (int64_t d : a.dims) unflat.push_back(sym_size(self, d));
  for (int64_t d : a.rest) unflat.push_back(sym_size(self, d));
  std::vector<int64_t> perm = a.dims;
  perm.insert(perm.end(), a.rest.begin(), a.rest.end());
  std::vector<int64_t> inverse(perm.size());
  for (size_t k = 0; k < perm.size(); ++k) inverse[static_cast<size_t>(perm[k])] = static_cast<int64_t>(k);
  return {sym_reshape(written, unflat).permute(inverse)};
}

}  // namespace decomp

Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values, bool accumulate) {
  self.copy_(index_put(self, indices, values, accumulate));
  return self;
}

}  // namespace kiln
