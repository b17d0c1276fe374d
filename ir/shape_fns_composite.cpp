// kiln/ir/shape_fns_composite.cpp — shape functions of the composite ops (softmax, norms,
// activations, mean/var, linear, cross_entropy, matmul).
//
// Composite nodes carry attributes the frontend has already resolved (dims normalized, the
// optional dtype and eps filled in), so these functions check what a graph read from text
// could still get wrong and give the output type. The frontend checks the same conditions
// first with PyTorch's wording; the messages here keep that wording where it applies.
#include "base/error.h"
#include "ir/shape_fns_detail.h"

#include <algorithm>
#include <string>

namespace kiln::ir::shape_detail {

namespace {

std::string ints_str(const std::vector<int64_t>& v) { return fmt::format("[{}]", fmt::join(v, ", ")); }

void check_floating(OpKind op, ScalarType dt, std::string_view kernel) {
  if (!is_floating_point(dt)) fail(op_name(op), "\"{}\" not implemented for '{}'", kernel, c10_type_name(dt));
}

// Sizes after reducing `dims` (normalized, sorted, unique) of t.
std::vector<Expr> reduced_sizes(OpKind op, const TensorType& t, const std::vector<int64_t>& dims, bool keepdim) {
  std::vector<bool> reduce(static_cast<size_t>(t.rank()), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    check_dim(op, dims[i], t.rank(), /*allow_scalar=*/true);
    if (i > 0 && dims[i] <= dims[i - 1]) fail(op_name(op), "dims must be sorted and unique, got {}", ints_str(dims));
    if (t.rank() > 0) reduce[static_cast<size_t>(dims[i])] = true;
  }
  std::vector<Expr> out;
  for (int64_t d = 0; d < t.rank(); ++d) {
    if (!reduce[static_cast<size_t>(d)]) out.push_back(t.sizes[d]);
    else if (keepdim) out.emplace_back(1);
  }
  return out;
}

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
    check_floating(op, in[i].dtype, op_name(op));
    // layer_norm's affine parameters have the input's dtype, or f32 for an f16/bf16 input
    // (PyTorch's mixed-type CPU kernel); rms_norm accepts any floating dtype, as PyTorch does.
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
  if (target.dtype != ScalarType::Int64)
    fail(op_name(op), "expected scalar type Long but found {}", c10_type_name(target.dtype));
  const int64_t class_dim = x.rank() == 1 ? 0 : 1;
  std::vector<Expr> want;  // the target's expected sizes: the input's without the class dim
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != class_dim) want.push_back(x.sizes[d]);
  if (x.rank() <= 2) {
    if (target.rank() > 1) fail(op_name(op), "0D or 1D target tensor expected, multi-target not supported");
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
  if (reduction == "none") return TensorType(x.dtype, target.sizes, x.device);
  return TensorType(x.dtype, {}, x.device);
}

}  // namespace

TensorType infer_composite(OpKind op, const Types& in, const AttrList& attrs) {
  const Device device = common_device(op, in);
  const TensorType& x = in[0];
  switch (as_decomposable(op)) {
    case DecomposableOp::softmax:
    case DecomposableOp::log_softmax: {
      const int64_t dim = attrs.get<int64_t>(op, "dim");
      check_dim(op, dim, x.rank(), /*allow_scalar=*/true);
      const ScalarType dt = attrs.get<ScalarType>(op, "dtype");
      const bool last = x.rank() == 0 || dim == x.rank() - 1;
      check_floating(op, dt, fmt::format("{}{}", op_name(op), last ? "_lastdim_kernel_impl" : "_kernel_impl"));
      return TensorType(dt, x.sizes, device);
    }
    case DecomposableOp::layer_norm:
      check_norm_inputs(op, in, attrs.get<std::vector<int64_t>>(op, "normalized_shape"), {"weight", "bias"});
      return TensorType(x.dtype, x.sizes, device);
    case DecomposableOp::rms_norm:
      check_norm_inputs(op, in, attrs.get<std::vector<int64_t>>(op, "normalized_shape"), {"weight"});
      return TensorType(x.dtype, x.sizes, device);
    case DecomposableOp::gelu: {
      const std::string& approximate = attrs.get<std::string>(op, "approximate");
      if (approximate != "none" && approximate != "tanh")
        fail(op_name(op), "approximate argument must be either none or tanh.");
      check_floating(op, x.dtype, "GeluKernelImpl");
      return x;
    }
    case DecomposableOp::silu: check_floating(op, x.dtype, "silu_cpu"); return x;
    case DecomposableOp::relu:
      if (x.dtype == ScalarType::Bool) fail(op_name(op), "Boolean inputs not supported for relu");
      return x;
    case DecomposableOp::mean: {
      const ScalarType dt = attrs.get<ScalarType>(op, "dtype");
      if (!is_floating_point(dt))
        fail(op_name(op),
             "mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. "
             "Got: {}",
             c10_type_name(dt));
      return TensorType(dt, reduced_sizes(op, x, attrs.get<std::vector<int64_t>>(op, "dims"), attrs.get<bool>(op, "keepdim")),
                        device);
    }
    case DecomposableOp::var:
      if (!is_floating_point(x.dtype)) fail(op_name(op), "std and var only support floating point and complex dtypes");
      return TensorType(x.dtype, reduced_sizes(op, x, attrs.get<std::vector<int64_t>>(op, "dims"), attrs.get<bool>(op, "keepdim")),
                        device);
    case DecomposableOp::linear: {
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
    case DecomposableOp::cross_entropy: {
      TensorType out = infer_cross_entropy(op, in, attrs);
      out.device = device;
      return out;
    }
    case DecomposableOp::matmul: return infer_matmul_composite(op, x, in[1], device);
    case DecomposableOp::elu:
    case DecomposableOp::leaky_relu:
    case DecomposableOp::hardswish:
    case DecomposableOp::hardsigmoid:
    case DecomposableOp::mish:
    case DecomposableOp::softplus: {
      const std::string kernel = op == OpKind::elu ? "elu_cpu" : fmt::format("{}_cpu", op_name(op));
      check_floating(op, x.dtype, kernel);
      return x;
    }
    case DecomposableOp::hardtanh:
      if (x.dtype == ScalarType::Bool) fail(op_name(op), "Bool inputs not supported for hardtanh");
      return x;
    case DecomposableOp::logsumexp: {
      const ScalarType dt = is_floating_point(x.dtype) ? x.dtype : ScalarType::Float;
      return TensorType(dt, reduced_sizes(op, x, attrs.get<std::vector<int64_t>>(op, "dims"), attrs.get<bool>(op, "keepdim")),
                        device);
    }
    case DecomposableOp::lerp:
    case DecomposableOp::addcmul:
    case DecomposableOp::addcdiv:
      for (size_t i = 1; i < in.size(); ++i) {
        check_same_dtype(op, x, in[i]);
        check_same_shape(op, x, in[i]);
      }
      if (op == OpKind::lerp) check_floating(op, x.dtype, "lerp_kernel_tensor");
      if (op == OpKind::addcmul && x.dtype == ScalarType::Bool) fail(op_name(op), "\"addcmul_cpu_out\" not implemented for 'Bool'");
      if (op == OpKind::addcdiv && !is_floating_point(x.dtype)) fail(op_name(op), "Integer division with addcdiv is no longer supported");
      return x;
    case DecomposableOp::nan_to_num: return x;
    case DecomposableOp::tril:
    case DecomposableOp::triu:
      if (x.rank() < 2) fail(op_name(op), "{}: input tensor must have at least 2 dimensions", op_name(op));
      return x;
    case DecomposableOp::addmm:
    case DecomposableOp::baddbmm: {
      const int64_t r = op == OpKind::addmm ? 2 : 3;
      const TensorType& a = in[1];
      const TensorType& b = in[2];
      if (a.rank() != r || b.rank() != r)
        fail(op_name(op), "{} must be {}-D tensors, got {}-D and {}-D", op == OpKind::addmm ? "mat1 and mat2" : "batch1 and batch2",
             r, a.rank(), b.rank());
      check_same_dtype(op, a, b);
      check_same_dtype(op, x, a);
      if (a.dtype == ScalarType::Bool) fail(op_name(op), "\"addmm_impl_cpu_\" not implemented for 'Bool'");
      TensorType out = infer_matmul_composite(op, a, b, device);
      if (!same_sizes(broadcast_batch(op, out.sizes, x.sizes), out.sizes))
        fail(op_name(op), "self of shape {} does not broadcast to the product's shape {}", sizes_str(x), sizes_str(out));
      return out;
    }
    case DecomposableOp::max_pool2d_with_indices:
    case DecomposableOp::max_pool3d_with_indices:
    case DecomposableOp::avg_pool2d:
    case DecomposableOp::avg_pool3d:
    case DecomposableOp::adaptive_avg_pool2d:
    case DecomposableOp::adaptive_avg_pool3d:
    case DecomposableOp::native_layer_norm:
    case DecomposableOp::native_group_norm:
    case DecomposableOp::embedding:
    case DecomposableOp::sort:
    case DecomposableOp::topk:
    case DecomposableOp::grid_sampler_2d:
    case DecomposableOp::col2im:
    case DecomposableOp::masked_scatter:
    case DecomposableOp::slice_scatter:
    case DecomposableOp::select_scatter:
    case DecomposableOp::flip:
    case DecomposableOp::repeat:
    case DecomposableOp::reflection_pad1d:
    case DecomposableOp::reflection_pad2d:
    case DecomposableOp::reflection_pad3d:
    case DecomposableOp::replication_pad1d:
    case DecomposableOp::replication_pad2d:
    case DecomposableOp::replication_pad3d:
    case DecomposableOp::cdist:
    case DecomposableOp::pdist:
    case DecomposableOp::scaled_dot_product_attention:
    case DecomposableOp::native_batch_norm:
    case DecomposableOp::native_dropout:
    case DecomposableOp::index:
    case DecomposableOp::index_put:
    case DecomposableOp::embedding_bag:
    case DecomposableOp::upsample_nearest2d:
    case DecomposableOp::upsample_bilinear2d:
      break;  // shaped by their decomposition (infer_types never asks)
  }
  internal_fail("infer_composite: unhandled op {}", op_name(op));
}

}  // namespace kiln::ir::shape_detail
