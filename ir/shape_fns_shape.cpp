// kiln/ir/shape_fns_shape.cpp — shape functions of cat and constant_pad.
//
// New sizes are computed with Expr arithmetic. Sizes that must agree (cat's other dims) must
// be equal expressions: a graph whose sizes cannot be shown equal is rejected rather than run
// on a guess.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

namespace {

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

}  // namespace

TensorType infer_shape(OpKind op, const Types& in, const AttrList& attrs) {
  switch (as_shape(op)) {
    case ShapeOp::cat: return infer_cat(op, in, attrs);
    case ShapeOp::constant_pad: return infer_constant_pad(op, in[0], attrs);
  }
  internal_fail("infer_shape: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
