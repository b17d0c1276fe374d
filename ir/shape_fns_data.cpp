// kiln/ir/shape_fns_data.cpp — shape functions of data movement, indexing, factories,
// random and matrix multiplication prims.
//
// cat and constant_pad compute new sizes with Expr arithmetic; gather/scatter follow
// PyTorch's shape rules for index tensors (int64, same rank, index no larger than the input
// outside `dim`); factories and random prims take their type from their attributes. Sizes
// that must agree (cat's other dims, mm's inner dims) must be equal expressions: a graph
// whose sizes cannot be shown equal is rejected rather than run on a guess.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

namespace {

// PyTorch treats 0-dim index/self tensors as 1-D of size 1 in gather/scatter shape checks.
int64_t nonempty_rank(const TensorType& t) { return t.rank() == 0 ? 1 : t.rank(); }
Expr size_or_one(const TensorType& t, int64_t d) { return t.rank() == 0 ? Expr(1) : t.sizes[d]; }

void check_index_dtype(OpKind op, const TensorType& index) {
  if (index.dtype != ScalarType::Int64 && index.dtype != ScalarType::Int32)
    fail(op_name(op), "{}(): Expected dtype {} for index, got {}", op_name(op),
         op == OpKind::index_select ? "int32 or int64" : "int32/int64", dtype_name(index.dtype));
}

TensorType infer_cat(OpKind op, const Types& in, const AttrList& attrs) {
  const TensorType& first = in[0];
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i].rank() == 0) fail(op_name(op), "zero-dimensional tensor (at position {}) cannot be concatenated", i);
    if (in[i].dtype != first.dtype)
      fail(op_name(op),
           "expected all tensors to have the same dtype (the frontend promotes), got {} and {} at position {}",
           dtype_short_name(first.dtype), dtype_short_name(in[i].dtype), i);
    if (in[i].rank() != first.rank())
      fail(op_name(op), "Tensors must have same number of dimensions: got {} and {}", first.rank(), in[i].rank());
  }
  const int64_t dim = attrs.get<int64_t>(op, "dim");
  check_dim(op, dim, first.rank());
  TensorType out = first;
  out.device = common_device(op, in);
  Expr total(0);
  for (size_t i = 0; i < in.size(); ++i) {
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d == dim || same_size(in[i].sizes[d], first.sizes[d])) continue;
      fail(op_name(op),
           "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for tensor number {} "
           "in the list.",
           dim, first.sizes[d].str(), in[i].sizes[d].str(), i);
    }
    total = total + in[i].sizes[dim];
  }
  out.sizes[dim] = total;
  return out;
}

TensorType infer_constant_pad(OpKind op, const TensorType& a, const AttrList& attrs) {
  const auto& pad = attrs.get<std::vector<int64_t>>(op, "pad");
  if (pad.size() % 2 != 0) fail(op_name(op), "Length of pad must be even but instead it equals {}", pad.size());
  if (static_cast<int64_t>(pad.size() / 2) > a.rank())
    fail(op_name(op),
         "Length of pad should be no more than twice the number of dimensions of the input. Pad length is {} while the "
         "input has {} dimensions.",
         pad.size(), a.rank());
  TensorType out = a;
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    const int64_t d = a.rank() - 1 - static_cast<int64_t>(i);
    const int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
    Expr size = a.sizes[d] + Expr(lo) + Expr(hi);
    if (auto c = size.maybe_const(); c && *c < 0)
      fail(op_name(op),
           "The input size {}, plus negative padding {} and {} resulted in a negative output size, which is invalid. "
           "Check dimension {} of your input.",
           a.sizes[d].str(), lo, hi, d);
    out.sizes[d] = size;
  }
  return out;
}

// index.size(d) <= other.size(d) where known (d != skip_dim; skip_dim -1 checks every d).
bool index_fits(const TensorType& index, const TensorType& other, int64_t skip_dim) {
  for (int64_t d = 0; d < nonempty_rank(index); ++d) {
    if (d == skip_dim) continue;
    if (known_lt(size_or_one(other, d), size_or_one(index, d))) return false;
  }
  return true;
}

}  // namespace

TensorType infer_shape(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_shape(op)) {
    case ShapeOp::cat: return infer_cat(op, in, attrs);
    case ShapeOp::constant_pad: return infer_constant_pad(op, in[0], attrs);
  }
  internal_fail("infer_shape: unhandled op {}", op_name(op));
}

TensorType infer_index(OpKind op, const Types& in, const AttrList& attrs) {
  const TensorType& self = in[0];
  const TensorType& index = in[1];
  common_device(op, in);
  check_index_dtype(op, index);
  const int64_t dim = attrs.get<int64_t>(op, "dim");
  check_dim(op, dim, self.rank(), /*allow_scalar=*/true);
  switch (as_index(op)) {
    case IndexOp::gather: {
      if (nonempty_rank(index) != nonempty_rank(self))
        fail(op_name(op), "Index tensor must have the same number of dimensions as input tensor");
      if (!index_fits(index, self, dim))
        fail(op_name(op),
             "Size does not match at dimension {} expected index {} to be smaller than self {} apart from dimension {}",
             dim, sizes_str(index), sizes_str(self), dim);
      TensorType out = self;
      out.sizes = index.sizes;
      return out;
    }
    case IndexOp::scatter:
    case IndexOp::scatter_add:
    case IndexOp::scatter_reduce: {
      if (op == OpKind::scatter_reduce) {
        const std::string& r = attrs.get<std::string>(op, "reduce");
        if (r != "sum" && r != "prod" && r != "mean" && r != "amax" && r != "amin")
          fail(op_name(op), "reduce argument must be either sum, prod, mean, amax or amin, got {}", r);
      }
      const TensorType& src = in[2];
      if (src.dtype != self.dtype)
        fail(op_name(op), "Expected self.dtype to be equal to src.dtype, got {} and {}", dtype_short_name(self.dtype),
             dtype_short_name(src.dtype));
      if (nonempty_rank(index) != nonempty_rank(self) || nonempty_rank(src) != nonempty_rank(self))
        fail(op_name(op), "Index tensor must have the same number of dimensions as self tensor");
      if (!index_fits(index, self, dim) || !index_fits(index, src, -1))
        fail(op_name(op),
             "Expected index {} to be smaller than self {} apart from dimension {} and to be smaller size than src {}",
             sizes_str(index), sizes_str(self), dim, sizes_str(src));
      return self;
    }
    case IndexOp::index_select: {
      if (index.rank() > 1)
        fail(op_name(op), "Index is supposed to be a vector, got a tensor of rank {}", index.rank());
      Expr count = index.rank() == 0 ? Expr(1) : index.sizes[0];
      TensorType out = self;
      if (self.rank() == 0) {
        if (auto c = count.maybe_const(); c && *c != 1)
          fail(op_name(op), "Index to scalar can have only 1 value, got {} value(s)", *c);
        return out;
      }
      out.sizes[dim] = count;
      return out;
    }
  }
  internal_fail("infer_index: unhandled op {}", op_name(op));
}

TensorType infer_factory(OpKind op, const Types& in, const AttrList& attrs) {
  (void)in;
  const ScalarType dtype = attrs.get<ScalarType>(op, "dtype");
  const Device device = attrs.get<Device>(op, "device");
  switch (as_factory(op)) {
    case FactoryOp::iota: {
      if (dtype == ScalarType::Bool)
        fail(op_name(op), "dtype bool is not supported (PyTorch: \"arange_cpu\" not implemented for 'Bool')");
      const Expr& length = attrs.get<Expr>(op, "length");
      check_size_nonneg(op, length, "length");
      return TensorType(dtype, {length}, device);
    }
    case FactoryOp::full: {
      const auto& size = attrs.get<std::vector<Expr>>(op, "size");
      for (const Expr& s : size) check_size_nonneg(op, s, "sizes");
      return TensorType(dtype, size, device);
    }
  }
  internal_fail("infer_factory: unhandled op {}", op_name(op));
}

TensorType infer_random(OpKind op, const Types& in, const AttrList& attrs) {
  (void)in;
  const ScalarType dtype = attrs.get<ScalarType>(op, "dtype");
  const Device device = attrs.get<Device>(op, "device");
  const auto& size = attrs.get<std::vector<Expr>>(op, "size");
  if (!is_floating_point(dtype)) fail(op_name(op), "expected a floating point dtype, got {}", dtype_name(dtype));
  for (const Expr& s : size) check_size_nonneg(op, s, "sizes");
  switch (as_random(op)) {
    case RandomOp::uniform: {
      const double low = attrs.get<double>(op, "low"), high = attrs.get<double>(op, "high");
      if (!(low <= high))
        fail(op_name(op), "expects to return a [from, to) range, but found from={} > to={}", low, high);
      return TensorType(dtype, size, device);
    }
    case RandomOp::normal: {
      const double std = attrs.get<double>(op, "std");
      if (!(std >= 0.0)) fail(op_name(op), "expects std >= 0.0, but found std {}", std);
      return TensorType(dtype, size, device);
    }
  }
  internal_fail("infer_random: unhandled op {}", op_name(op));
}

TensorType infer_matmul(OpKind op, const Types& in, const AttrList& attrs) {
  (void)attrs;
  const TensorType& a = in[0];
  const TensorType& b = in[1];
  const Device device = common_device(op, in);
  check_same_dtype(op, a, b);
  if (a.dtype == ScalarType::Bool) fail(op_name(op), "expected a non-bool tensor, got bool");
  switch (as_matmul(op)) {
    case MatmulOp::mm: {
      if (a.rank() != 2 || b.rank() != 2)
        fail(op_name(op), "expected 2-D tensors, got {}-D and {}-D", a.rank(), b.rank());
      if (!same_size(a.sizes[1], b.sizes[0]))
        fail(op_name(op), "shapes {} and {} cannot be multiplied", sizes_str(a), sizes_str(b));
      return TensorType(a.dtype, {a.sizes[0], b.sizes[1]}, device);
    }
    case MatmulOp::bmm: {
      if (a.rank() != 3 || b.rank() != 3)
        fail(op_name(op), "expected 3-D tensors, got {}-D and {}-D", a.rank(), b.rank());
      if (!same_size(a.sizes[0], b.sizes[0]))
        fail(op_name(op), "batch sizes must be equal, got {} and {}", a.sizes[0].str(), b.sizes[0].str());
      if (!same_size(a.sizes[2], b.sizes[1]))
        fail(op_name(op), "shapes {} and {} cannot be multiplied", sizes_str(a), sizes_str(b));
      return TensorType(a.dtype, {a.sizes[0], a.sizes[1], b.sizes[2]}, device);
    }
  }
  internal_fail("infer_matmul: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
