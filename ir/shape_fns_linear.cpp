// kiln/ir/shape_fns_linear.cpp — shape functions of linear, matmul, addmm, baddbmm and
// cross_entropy (cdist and pdist are shaped by their decompositions).
//
// matmul follows torch.matmul: 1-D operands are promoted and the promoted dim dropped again,
// batch dims broadcast. cross_entropy checks the target against the input with PyTorch's
// messages (class dim 1, or 0 for a 1-D input): class indices, or class probabilities of the
// input's shape.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

namespace {

// Broadcasts two batch shapes (right-aligned); sizes must be equal expressions or 1.
std::vector<Expr> broadcast_batch(OpKind op, const std::vector<Expr>& a, const std::vector<Expr>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<Expr> out(n, Expr(1));
  for (size_t i = 0; i < n; ++i) {
    const Expr x = i < n - a.size() ? Expr(1) : a[i - (n - a.size())];
    const Expr y = i < n - b.size() ? Expr(1) : b[i - (n - b.size())];
    if (y == Expr(1) || same_size(x, y)) out[i] = x;
    else if (x == Expr(1)) out[i] = y;
    else
      fail(op_name(op), "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}",
           x.str(), y.str(), i);
  }
  return out;
}

TensorType infer_matmul_composite(OpKind op, const TensorType& a, const TensorType& b, const Device& device) {
  const int64_t da = a.rank(), db = b.rank();
  if (da == 0 || db == 0)
    fail(op_name(op), "both arguments to matmul need to be at least 1D, but they are {}D and {}D", da, db);
  check_same_dtype(op, a, b);
  if (a.dtype == ScalarType::Bool) fail(op_name(op), "expected a non-bool tensor, got bool");
  const Expr ka = a.sizes[da - 1];
  const Expr kb = db == 1 ? b.sizes[0] : b.sizes[db - 2];
  if (!same_size(ka, kb)) fail(op_name(op), "shapes {} and {} cannot be multiplied", sizes_str(a), sizes_str(b));
  std::vector<Expr> batch_a(a.sizes.begin(), a.sizes.begin() + std::max<int64_t>(da - 2, 0));
  std::vector<Expr> batch_b(b.sizes.begin(), b.sizes.begin() + std::max<int64_t>(db - 2, 0));
  std::vector<Expr> out = broadcast_batch(op, batch_a, batch_b);
  if (da > 1) out.push_back(a.sizes[da - 2]);
  if (db > 1) out.push_back(b.sizes[db - 1]);
  return TensorType(a.dtype, std::move(out), device);
}

TensorType infer_cross_entropy(OpKind op, const Types& in, const AttrList& attrs) {
  const TensorType& x = in[0];
  const TensorType& target = in[1];
  const std::string& reduction = attrs.get<std::string>(op, "reduction");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    fail(op_name(op), "{} is not a valid value for reduction", reduction);
  const double smoothing = attrs.get<double>(op, "label_smoothing");
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    fail(op_name(op), "label_smoothing must be between 0.0 and 1.0. Got: {}", smoothing);
  if (x.rank() < 1) fail(op_name(op), "Expected 1 or more dimensions (got {})", x.rank());
  check_floating(op, x.dtype, "log_softmax_lastdim_kernel_impl");
  const int64_t class_dim = x.rank() == 1 ? 0 : 1;
  std::vector<Expr> want;  // the target's expected sizes: the input's without the class dim
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != class_dim) want.push_back(x.sizes[d]);
  // A target of the input's shape holds class probabilities.
  const bool probabilities = target.rank() == x.rank() && same_sizes(target.sizes, x.sizes);
  ScalarType out = x.dtype;
  if (probabilities) {
    if (!is_floating_point(target.dtype))
      fail(op_name(op), "Expected floating point type for target with class probabilities, got {}",
           c10_type_name(target.dtype));
    if (attrs.get<int64_t>(op, "ignore_index") >= 0)
      fail(op_name(op), "ignore_index is not supported for floating point target");
    out = promote_types(x.dtype, target.dtype);
  } else if (x.rank() <= 2 && target.rank() > 1) {
    fail(op_name(op), "0D or 1D target tensor expected, multi-target not supported");
  } else if (target.dtype != ScalarType::Int64) {
    fail(op_name(op), "expected scalar type Long but found {}", c10_type_name(target.dtype));
  } else if (x.rank() <= 2) {
    if (x.rank() == 2 && target.rank() == 1 && !same_size(target.sizes[0], x.sizes[0]))
      fail(op_name(op), "Expected input batch_size ({}) to match target batch_size ({}).", x.sizes[0].str(),
           target.sizes[0].str());
    if (target.rank() != static_cast<int64_t>(want.size()))
      fail(op_name(op), "Expected target size {}, got {}", str(want), sizes_str(target));
  } else if (!same_sizes(target.sizes, want)) {
    fail(op_name(op), "Expected target size {}, got {}", str(want), sizes_str(target));
  }
  if (in.size() == 3) {
    const TensorType& w = in[2];
    if (w.rank() != 1 || !same_size(w.sizes[0], x.sizes[class_dim]))
      fail(op_name(op),
           "weight tensor should be defined either for all {} classes or no classes but got weight tensor of shape: {}",
           x.sizes[class_dim].str(), sizes_str(w));
    check_same_dtype(op, x, w);
  }
  if (reduction == "none") return TensorType(out, want, x.device);
  return TensorType(out, {}, x.device);
}

}  // namespace

TensorType infer_linear(OpKind op, const Types& in, const AttrList& attrs) {
  const Device device = common_device(op, in);
  const TensorType& x = in[0];
  switch (as_linear(op)) {
    case LinearOp::linear: {
      const TensorType& w = in[1];
      if (w.rank() < 1 || w.rank() > 2)
        fail(op_name(op), "weight must be 1-D or 2-D, got {}-D", w.rank());
      TensorType wt = w;
      if (w.rank() == 2) wt.sizes = {w.sizes[1], w.sizes[0]};
      TensorType out = infer_matmul_composite(op, x, wt, device);
      if (in.size() == 3) {
        check_same_dtype(op, x, in[2]);
        if (!same_sizes(broadcast_batch(op, out.sizes, in[2].sizes), out.sizes))
          fail(op_name(op), "bias of shape {} does not broadcast to the output shape {}", sizes_str(in[2]),
               sizes_str(out));
      }
      return out;
    }
    case LinearOp::cross_entropy: {
      TensorType out = infer_cross_entropy(op, in, attrs);
      out.device = device;
      return out;
    }
    case LinearOp::matmul: return infer_matmul_composite(op, x, in[1], device);
    case LinearOp::addmm:
    case LinearOp::addmm_activation:
    case LinearOp::baddbmm: {
      const int64_t r = op == OpKind::baddbmm ? 3 : 2;
      const TensorType& a = in[1];
      const TensorType& b = in[2];
      if (a.rank() != r || b.rank() != r)
        fail(op_name(op), "{} must be {}-D tensors, got {}-D and {}-D", r == 2 ? "mat1 and mat2" : "batch1 and batch2",
             r, a.rank(), b.rank());
      check_same_dtype(op, a, b);
      check_same_dtype(op, x, a);
      if (a.dtype == ScalarType::Bool) fail(op_name(op), "\"addmm_impl_cpu_\" not implemented for 'Bool'");
      if (op == OpKind::addmm_activation && !is_floating_point(a.dtype))
        fail(op_name(op), "expected floating-point operands, got {}", c10_type_name(a.dtype));
      TensorType out = infer_matmul_composite(op, a, b, device);
      if (!same_sizes(broadcast_batch(op, out.sizes, x.sizes), out.sizes))
        fail(op_name(op), "self of shape {} does not broadcast to the product's shape {}", sizes_str(x), sizes_str(out));
      return out;
    }
    case LinearOp::cdist:
    case LinearOp::pdist:
      break;  // shaped by their decomposition (infer_types never asks)
  }
  internal_fail("infer_linear: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
