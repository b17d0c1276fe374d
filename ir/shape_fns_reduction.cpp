// kiln/ir/shape_fns_reduction.cpp — the Reduction family's shape function.
//
// The frontend normalizes dims before it creates these prims (each in [0, rank), sorted and
// unique), so the IR rejects anything else rather than guessing.
#include "base/error.h"
#include "ir/shape_fns_detail.h"
#include <string>

namespace kiln::ir::shape_detail {

namespace {

// Reduction dims: each in [0, rank), strictly increasing.
void check_reduction_dims(OpKind op, const std::vector<int64_t>& dims, int64_t rank) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= rank || (i > 0 && dims[i] <= dims[i - 1]))
      fail(op_name(op), "dims must be normalized (each in [0, {}), sorted, unique), got {}", rank, ints_str(dims));
  }
}

// Sizes after reducing `dims` (sorted) of `in`.
std::vector<Expr> reduced_sizes(const TensorType& in, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<Expr> out;
  for (int64_t d = 0; d < in.rank(); ++d) {
    bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    if (!reduced)
      out.push_back(in.sizes[d]);
    else if (keepdim)
      out.push_back(Expr(1));
  }
  return out;
}

// max/min-style reductions have no identity: a reduced dim known to be empty is an error.
void check_nonempty_reduced(OpKind op, const TensorType& in, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    if (in.sizes[d].maybe_const() == 0) fail(op_name(op), "Expected reduction dim {} to have non-zero size.", d);
}

}  // namespace

TensorType infer_reduction(OpKind op, const Types& in, const AttrList& attrs) {
  const TensorType& a = in[0];
  const bool keepdim = attrs.get<bool>(op, "keepdim");
  TensorType out = a;
  switch (as_reduction(op)) {
    case ReductionOp::sum:
    case ReductionOp::prod:
    case ReductionOp::any:  // any/all: bool result (BoolOut) set by infer_types
    case ReductionOp::all: {
      const auto& dims = attrs.get<std::vector<int64_t>>(op, "dims");
      check_reduction_dims(op, dims, a.rank());
      out.sizes = reduced_sizes(a, dims, keepdim);
      return out;
    }
    case ReductionOp::amax:
    case ReductionOp::amin: {
      const auto& dims = attrs.get<std::vector<int64_t>>(op, "dims");
      check_reduction_dims(op, dims, a.rank());
      check_nonempty_reduced(op, a, dims);
      out.sizes = reduced_sizes(a, dims, keepdim);
      return out;
    }
    case ReductionOp::argmax:
    case ReductionOp::argmin: {
      if (a.dtype == ScalarType::Bool)
        fail(op_name(op), "expected a non-bool tensor, got bool (PyTorch: \"{}_cpu\" not implemented for 'Bool')",
             op_name(op));
      out.dtype = ScalarType::Int64;
      std::optional<int64_t> dim = attrs.get_opt<int64_t>(op, "dim");
      if (!dim) {  // over the flattened tensor
        if (a.numel().maybe_const() == 0)
          fail(op_name(op), "Expected reduction dim to be specified for input.numel() == 0.");
        out.sizes.assign(keepdim ? a.sizes.size() : 0, Expr(1));
        return out;
      }
      check_dim(op, *dim, a.rank(), /*allow_scalar=*/true);
      if (a.rank() == 0) return out;
      check_nonempty_reduced(op, a, {*dim});
      out.sizes = reduced_sizes(a, {*dim}, keepdim);
      return out;
    }
  }
  internal_fail("infer_reduction: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
