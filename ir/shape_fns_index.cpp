// kiln/ir/shape_fns_index.cpp — shape functions of the indexing prims (gather, scatter,
// index_select, scatter_reduce); the indexing Core ops are shaped by their decompositions.
//
// They follow PyTorch's shape rules for index tensors (int64, same rank, index no larger than
// the input outside `dim`).
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

// The first dim d (d != skip_dim; skip_dim -1 checks every d) where index.size(d) is known to
// exceed other.size(d), or -1.
int64_t index_misfit(const TensorType& index, const TensorType& other, int64_t skip_dim) {
  for (int64_t d = 0; d < nonempty_rank(index); ++d) {
    if (d == skip_dim) continue;
    if (known_lt(size_or_one(other, d), size_or_one(index, d))) return d;
  }
  return -1;
}

}  // namespace

TensorType infer_index(OpKind op, const Types& in, const AttrList& attrs) {
  // The indexing Core ops (embedding, index, index_put, ...) are shaped by their
  // decompositions; infer_types never asks for them.
  if (op_info(op).level != OpLevel::Prim) internal_fail("infer_index: {} is shaped by its decomposition", op_name(op));
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
      if (const int64_t d = index_misfit(index, self, dim); d >= 0)
        fail(op_name(op),
             "Size does not match at dimension {} expected index {} to be no larger than self {} apart from dimension {}",
             d, sizes_str(index), sizes_str(self), dim);
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
      if (index_misfit(index, self, dim) >= 0 || index_misfit(index, src, -1) >= 0)
        fail(op_name(op),
             "Expected index {} to be no larger than self {} apart from dimension {} and to be no larger size than src {}",
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
    case IndexOp::embedding:
    case IndexOp::embedding_dense_backward:
    case IndexOp::embedding_bag:
    case IndexOp::index:
    case IndexOp::index_put:
    case IndexOp::masked_scatter:
    case IndexOp::slice_scatter:
    case IndexOp::select_scatter: break;  // rejected above
  }
  internal_fail("infer_index: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
