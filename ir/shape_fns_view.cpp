// kiln/ir/shape_fns_view.cpp — shape functions of the view prims.
//
// The frontend normalizes arguments before it creates these prims (slice bounds clamped, -1
// sizes resolved), so the IR rejects anything else rather than guessing. Sizes may be
// symbolic: view sizes are computed with Expr arithmetic (a slice has (end - start - 1)//step
// + 1 elements), and a bound is rejected only when it is known to be violated (the difference
// folds to a constant).
#include "base/error.h"
#include "ir/shape_fns_detail.h"
#include <algorithm>
#include <string>

namespace kiln::ir::shape_detail {

namespace {

// Throws unless `dims` is a permutation of [0, rank).
void check_permutation(OpKind op, const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  bool ok = static_cast<int64_t>(dims.size()) == rank;
  for (int64_t d : dims) {
    if (!ok) break;
    if (d < 0 || d >= rank || seen[d])
      ok = false;
    else
      seen[d] = true;
  }
  if (!ok) fail(op_name(op), "dims {} is not a permutation of [0, {})", ints_str(dims), rank);
}

TensorType infer_reshape(OpKind op, const TensorType& a, const std::vector<Expr>& size) {
  Expr numel(1);
  for (const Expr& s : size) {
    check_size_nonneg(op, s, "sizes (with -1 resolved by the frontend)");
    numel = numel * s;
  }
  if (auto d = known_diff(a.numel(), numel); d && *d != 0)
    fail(op_name(op), "shape '{}' is invalid for input of size {}", str(size), a.numel().str());
  TensorType out = a;
  out.sizes = size;
  return out;
}

TensorType infer_expand(OpKind op, const TensorType& a, const std::vector<Expr>& size) {
  const int64_t ndim = static_cast<int64_t>(size.size());
  if (ndim < a.rank())
    fail(op_name(op),
         "the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
         ndim, a.rank());
  for (int64_t i = 0; i < ndim; ++i) {
    const Expr& target = size[i];
    check_size_nonneg(op, target, "expanded sizes (with -1 resolved by the frontend)");
    int64_t d = i - (ndim - a.rank());
    if (d < 0) continue;  // a new leading dimension
    const Expr& have = a.sizes[d];
    if (known_one(have) || same_size(have, target)) continue;
    fail(op_name(op),
         "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  "
         "Target sizes: {}.  Tensor sizes: {}",
         target.str(), have.str(), i, str(size), sizes_str(a));
  }
  TensorType out = a;
  out.sizes = size;
  return out;
}

// The number of elements of x[start:end:step] (0 <= start <= end, step > 0). The
// overflow-free form is (end - start - 1)//step + 1 (0 when end == start). With a symbolic
// extent and a constant step the equal (end - start + step - 1)//step is used instead,
// which the Expr simplifier reduces (x[1:s0:2] has s0//2 elements), provided its constant
// term stays inside int64.
Expr slice_length(const Expr& start, const Expr& end, const Expr& step) {
  const Expr extent = end - start;
  const std::optional<int64_t> st = step.maybe_const();
  if (!extent.maybe_const() && st) {
    int64_t c = 0;  // the extent's constant term
    bool overflow = false;
    if (extent.kind() == ExprKind::Add)
      for (const Expr& term : extent.operands())
        if (auto k = term.maybe_const()) overflow |= __builtin_add_overflow(c, *k, &c);
    if (!overflow && !__builtin_add_overflow(c, *st - 1, &c)) return floordiv(extent + Expr(*st - 1), step);
  }
  return floordiv(extent - Expr(1), step) + Expr(1);
}

TensorType infer_slice(OpKind op, const TensorType& a, const AttrList& attrs) {
  if (a.rank() == 0) fail(op_name(op), "slice() cannot be applied to a 0-dim tensor.");
  const int64_t dim = attrs.get<int64_t>(op, "dim");
  check_dim(op, dim, a.rank());
  const Expr& start = attrs.get<Expr>(op, "start");
  const Expr& end = attrs.get<Expr>(op, "end");
  const Expr& step = attrs.get<Expr>(op, "step");
  if (auto s = step.maybe_const(); s && *s <= 0) fail(op_name(op), "slice step must be positive, got {}", *s);
  const Expr& size = a.sizes[dim];
  if (known_lt(start, Expr(0)) || known_lt(end, start) || known_lt(size, end))
    fail(op_name(op),
         "expected 0 <= start <= end <= size (bounds are clamped by the frontend), got start {}, end {} for size {}",
         start.str(), end.str(), size.str());
  TensorType out = a;
  out.sizes[dim] = slice_length(start, end, step);
  return out;
}

TensorType infer_squeeze(OpKind op, const TensorType& a, const std::vector<int64_t>& dims) {
  std::vector<bool> drop(a.sizes.size(), false);
  for (int64_t d : dims) {
    check_dim(op, d, a.rank());
    if (drop[d]) fail(op_name(op), "dim {} appears more than once in dims {}", d, ints_str(dims));
    if (!known_one(a.sizes[d]))
      fail(op_name(op), "dimension {} has size {}; only dimensions of size 1 can be squeezed", d, a.sizes[d].str());
    drop[d] = true;
  }
  TensorType out = a;
  out.sizes.clear();
  for (size_t d = 0; d < a.sizes.size(); ++d)
    if (!drop[d]) out.sizes.push_back(a.sizes[d]);
  return out;
}

TensorType infer_diagonal(OpKind op, const TensorType& a, const AttrList& attrs) {
  const int64_t offset = attrs.get<int64_t>(op, "offset");
  const int64_t d1 = attrs.get<int64_t>(op, "dim1");
  const int64_t d2 = attrs.get<int64_t>(op, "dim2");
  check_dim(op, d1, a.rank());
  check_dim(op, d2, a.rank());
  if (d1 == d2) fail(op_name(op), "diagonal dimensions cannot be identical {}, {}", d1, d2);
  const Expr& n1 = a.sizes[d1];
  const Expr& n2 = a.sizes[d2];
  Expr diag = offset >= 0 ? max(min(n1, n2 - Expr(offset)), Expr(0)) : max(min(n1 + Expr(offset), n2), Expr(0));
  TensorType out = a;
  out.sizes.clear();
  for (int64_t d = 0; d < a.rank(); ++d)
    if (d != d1 && d != d2) out.sizes.push_back(a.sizes[d]);
  out.sizes.push_back(diag);
  return out;
}

TensorType infer_as_strided(OpKind op, const TensorType& a, const AttrList& attrs) {
  const auto& size = attrs.get<std::vector<Expr>>(op, "size");
  const auto& stride = attrs.get<std::vector<Expr>>(op, "stride");
  if (size.size() != stride.size())
    fail(op_name(op), "mismatch in length of strides and shape: {} sizes and {} strides", size.size(), stride.size());
  for (const Expr& s : size) check_size_nonneg(op, s, "sizes");
  for (const Expr& s : stride)
    if (auto c = s.maybe_const(); c && *c < 0)
      fail(op_name(op), "Negative strides are not supported at the moment, got strides: {}", str(stride));
  check_size_nonneg(op, attrs.get<Expr>(op, "storage_offset"), "storage_offset");
  TensorType out = a;
  out.sizes = size;
  return out;
}

}  // namespace

TensorType infer_view(OpKind op, const Types& in, const AttrList& attrs) {
  const TensorType& a = in[0];
  switch (as_view(op)) {
    case ViewOp::reshape: return infer_reshape(op, a, attrs.get<std::vector<Expr>>(op, "size"));
    case ViewOp::expand: return infer_expand(op, a, attrs.get<std::vector<Expr>>(op, "size"));
    case ViewOp::permute: {
      const auto& dims = attrs.get<std::vector<int64_t>>(op, "dims");
      check_permutation(op, dims, a.rank());
      TensorType out = a;
      for (size_t i = 0; i < dims.size(); ++i) out.sizes[i] = a.sizes[dims[i]];
      return out;
    }
    case ViewOp::slice: return infer_slice(op, a, attrs);
    case ViewOp::squeeze: return infer_squeeze(op, a, attrs.get<std::vector<int64_t>>(op, "dims"));
    case ViewOp::unsqueeze: {
      const int64_t dim = attrs.get<int64_t>(op, "dim");
      if (dim < 0 || dim > a.rank())
        fail(op_name(op), "dim {} out of range for a tensor of rank {} (IR dims are normalized to [0, {}])", dim,
             a.rank(), a.rank());
      TensorType out = a;
      out.sizes.insert(out.sizes.begin() + dim, Expr(1));
      return out;
    }
    case ViewOp::diagonal: return infer_diagonal(op, a, attrs);
    case ViewOp::as_strided: return infer_as_strided(op, a, attrs);
  }
  internal_fail("infer_view: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
