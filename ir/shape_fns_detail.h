// kiln/ir/shape_fns_detail.h — internal: the per-family shape functions and their helpers.
//
// infer_types() (ir/shape_fns.cpp) checks the input count and the dtype traits shared by all
// families, then calls one of these per-family functions; each switches over its family's
// enum with no default. The helpers below phrase the common checks once so that every
// family words its errors the same way. Not part of the public API.
#pragma once

#include "base/error.h"
#include "ir/attr.h"
#include "ir/op.h"
#include "ir/shape_env.h"
#include "ir/tensor_type.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln::ir::shape_detail {

using Types = std::vector<TensorType>;

// One function per family, in ir/shape_fns_<family>.cpp (the family's name in ir/op.cpp
// family_name). Pool, Resample, Attention, Dropout and Rearrange have none: each of their ops
// is shaped by its decomposition (infer_types).
TensorType infer_unary(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_binary(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_ternary(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_cast(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_reduction(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_scan(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_view(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_shape(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_index(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_factory(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_random(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_matmul(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_conv(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_sort(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_activation(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_softmax(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_moments(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_norm(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_linear(OpKind op, const Types& in, const AttrList& attrs);
TensorType infer_pointwise(OpKind op, const Types& in, const AttrList& attrs);

// "[1, 2, 3]".
inline std::string ints_str(const std::vector<int64_t>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

// Throws PyTorch's "\"kernel\" not implemented for 'Int'" unless dt is floating.
inline void check_floating(OpKind op, ScalarType dt, std::string_view kernel) {
  if (!is_floating_point(dt)) fail(op_name(op), "\"{}\" not implemented for '{}'", kernel, c10_type_name(dt));
}

// Sizes after reducing `dims` (each a valid dim, sorted and unique) of t (shape_fns_moments.cpp).
std::vector<Expr> reduced_sizes(OpKind op, const TensorType& t, const std::vector<int64_t>& dims, bool keepdim);

// "[2, s0]".
inline std::string sizes_str(const TensorType& t) { return str(t.sizes); }

// a - b when it folds to a constant (the two sizes differ by a known amount), else nullopt.
inline std::optional<int64_t> known_diff(const Expr& a, const Expr& b) { return (a - b).maybe_const(); }
// Whether a < b is known to hold (a and b differ by a known negative amount).
inline bool known_lt(const Expr& a, const Expr& b) {
  auto d = known_diff(a, b);
  return d && *d < 0;
}

// Throws unless `dim` lies in [0, rank) (IR dims are normalized by the frontend). A 0-dim
// tensor accepts dim 0 when allow_scalar, as PyTorch's dim-taking ops do.
inline void check_dim(OpKind op, int64_t dim, int64_t rank, bool allow_scalar = false) {
  int64_t bound = (allow_scalar && rank == 0) ? 1 : rank;
  if (dim < 0 || dim >= bound)
    fail(op_name(op), "dim {} out of range for a tensor of rank {} (IR dims are normalized to [0, {}))", dim, rank,
         bound);
}

// Throws unless every tensor is on the same device; returns that device.
inline Device common_device(OpKind op, const Types& in) {
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].device != in[0].device)
      fail(op_name(op), "expected all tensors to be on the same device, got {} and {}", in[0].device.str(),
           in[i].device.str());
  return in.empty() ? Device() : in[0].device;
}

// Throws unless a and b have equal dtypes (prims see promoted operands).
inline void check_same_dtype(OpKind op, const TensorType& a, const TensorType& b) {
  if (a.dtype != b.dtype)
    fail(op_name(op), "operands must have equal dtypes, got {} and {}", dtype_short_name(a.dtype),
         dtype_short_name(b.dtype));
}

// Whether two sizes are equal: structurally, or, when symbolic, as decided (and guarded) by
// the trace's ShapeEnv (ir/shape_env.h). Without one, different expressions are different.
inline bool same_size(const Expr& a, const Expr& b) {
  if (a == b) return true;
  if (a.is_const() && b.is_const()) return false;
  ShapeEnv* env = ShapeEnv::current();
  return env && env->guard_bool(eq(a, b));
}
inline bool same_sizes(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!same_size(a[i], b[i])) return false;
  return true;
}

// Throws unless a and b have equal sizes (same_size per dim).
inline void check_same_shape(OpKind op, const TensorType& a, const TensorType& b) {
  if (!same_sizes(a.sizes, b.sizes))
    fail(op_name(op), "operands must have equal shapes, got {} and {}", sizes_str(a), sizes_str(b));
}

// Throws when a (symbolic) size is known to be negative.
inline void check_size_nonneg(OpKind op, const Expr& s, std::string_view what) {
  if (auto c = s.maybe_const(); c && *c < 0) fail(op_name(op), "{} must be non-negative, got {}", what, *c);
}

}  // namespace kiln::ir::shape_detail
