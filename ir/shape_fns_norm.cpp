// kiln/ir/shape_fns_norm.cpp — shape functions of layer_norm and rms_norm (native_* norms are
// shaped by their decompositions).
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <string>

namespace kiln::ir::shape_detail {

namespace {

// layer_norm / rms_norm: normalized_shape against the input's trailing sizes and the affine
// parameters (PyTorch's _check_layer_norm_inputs wording).
void check_norm_inputs(OpKind op, const Types& in, const std::vector<int64_t>& normalized_shape,
                       const std::vector<std::string_view>& param_names) {
  const TensorType& x = in[0];
  check_floating(op, x.dtype, op_name(op));
  const std::string ns = ints_str(normalized_shape);
  if (normalized_shape.empty())
    fail(op_name(op),
         "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but got "
         "normalized_shape = {}",
         ns);
  const std::vector<Expr> want = to_exprs(normalized_shape);
  for (size_t i = 1; i < in.size(); ++i) {
    if (!same_sizes(in[i].sizes, want))
      fail(op_name(op), "Expected {} to be of same shape as normalized_shape, but got {} of shape {} and normalized_shape = {}",
           param_names[i - 1], param_names[i - 1], sizes_str(in[i]), ns);
    // layer_norm's affine parameters have the input's dtype, or f32 for an f16/bf16 input
    // (PyTorch's mixed-type CPU kernel). rms_norm takes a weight of any dtype, bool and integers
    // included, as PyTorch 2.x's composite does: the result is multiplied by it and cast back to
    // the input's dtype.
    if (op == OpKind::rms_norm) continue;
    check_floating(op, in[i].dtype, op_name(op));
    const bool mixed_ok = in[i].dtype == ScalarType::Float && (x.dtype == ScalarType::Half || x.dtype == ScalarType::BFloat16);
    if (op == OpKind::layer_norm && in[i].dtype != x.dtype && !mixed_ok)
      fail(op_name(op), "mixed dtype (CPU): expect parameter to have scalar type of {}, got {} of {}", c10_type_name(x.dtype),
           param_names[i - 1], c10_type_name(in[i].dtype));
  }
  const int64_t k = static_cast<int64_t>(normalized_shape.size());
  bool ok = x.rank() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = same_size(x.sizes[x.rank() - k + i], want[i]);
  if (!ok) {
    std::string star = "[*";
    for (int64_t s : normalized_shape) star += fmt::format(", {}", s);
    fail(op_name(op), "Given normalized_shape={}, expected input with shape {}], but got input of size{}", ns, star,
         sizes_str(x));
  }
}

}  // namespace

TensorType infer_norm(OpKind op, const Types& in, const AttrList& attrs) {
  const Device device = common_device(op, in);
  const TensorType& x = in[0];
  switch (as_norm(op)) {
    case NormOp::layer_norm:
      check_norm_inputs(op, in, attrs.get<std::vector<int64_t>>(op, "normalized_shape"), {"weight", "bias"});
      return TensorType(x.dtype, x.sizes, device);
    case NormOp::rms_norm:
      check_norm_inputs(op, in, attrs.get<std::vector<int64_t>>(op, "normalized_shape"), {"weight"});
      return TensorType(x.dtype, x.sizes, device);
    case NormOp::native_layer_norm:
    case NormOp::native_group_norm:
    case NormOp::native_batch_norm:
    case NormOp::native_layer_norm_backward:
    case NormOp::native_group_norm_backward:
      break;  // shaped by their decomposition (infer_types never asks)
  }
  internal_fail("infer_norm: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
