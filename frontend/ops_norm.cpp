// kiln/frontend/ops_norm.cpp — batch, instance and group normalization (frontend/ops_norm.h).
//
// Every form reduces to one affine map per element once the statistics are known, as
// PyTorch's CPU kernels compute it: scale = invstd * weight, shift = bias - mean * scale,
// out = x * scale + shift, in the compute dtype (f32 for f16/bf16) and cast back. Statistics
// come from decomp::moments (for f32 one pass in f64 over data shifted by a sample, for f64 the
// two-pass mean of squared deviations). Sizes may be symbolic: the
// element count behind the unbiased variance is a symbolic scalar, and the size checks guard.
#include "frontend/ops_norm.h"

#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "frontend/grad_mode.h"

#include "base/error.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_moments.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"

#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::Expr;

bool present(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

ScalarType compute_dtype(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

void check_input(std::string_view op, const Tensor& input, int64_t min_dim) {
  if (!is_floating_point(input.dtype()))
    fail(op, "\"{}\" not implemented for '{}': expected a floating-point input", op, c10_type_name(input.dtype()));
  if (input.dim() < min_dim)
    fail(op, "expected an input with at least {} dims ([N, C, *]), but got input of size {}", min_dim,
         shape_str(input.sizes()));
}

// A per-channel tensor (weight, bias, running statistic) of `channels` elements whose dtype
// is the input's, or f32 beside an f16/bf16 input, as PyTorch's CPU kernels accept.
void check_param(std::string_view op, std::string_view what, const std::optional<Tensor>& p, const Expr& channels,
                 ScalarType input_dtype) {
  if (!present(p)) return;
  if (!ir::sym_eq(sym_numel(*p), channels))
    fail(op, "{} should contain {} elements not {}", what, channels.str(), p->numel());
  const ScalarType acc = compute_dtype(input_dtype);
  if (p->dtype() != input_dtype && p->dtype() != acc)
    fail(op, "mixed dtype (CPU): expected {} of dtype {}{}, but got {}", what, c10_type_name(input_dtype),
         acc != input_dtype ? " or " + std::string(c10_type_name(acc)) : std::string(), c10_type_name(p->dtype()));
}

// The input [N, C, *] and its per-channel tensors, checked as batch_norm and instance_norm need.
void check_channel_params(std::string_view op, const Tensor& input, const std::optional<Tensor>& weight,
                          const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                          const std::optional<Tensor>& running_var) {
  check_input(op, input, 2);
  const Expr C = sym_size(input, 1);
  check_param(op, "weight", weight, C, input.dtype());
  check_param(op, "bias", bias, C, input.dtype());
  check_param(op, "running_mean", running_mean, C, input.dtype());
  check_param(op, "running_var", running_var, C, input.dtype());
}

// `t` (C elements) shaped [C, 1, ..., 1] with `trailing` ones, to broadcast against [N, C, *].
Tensor per_channel(const Tensor& t, int64_t trailing, ScalarType dtype) {
  Tensor r = t.reshape({-1}).to(dtype);
  for (int64_t k = 0; k < trailing; ++k) r = r.unsqueeze(-1);
  return r;
}
std::optional<Tensor> per_channel(const std::optional<Tensor>& t, int64_t trailing, ScalarType dtype) {
  if (!present(t)) return std::nullopt;
  return per_channel(*t, trailing, dtype);
}

// The product of `input`'s sizes over `dims`, as a symbolic scalar.
Expr count_over(const Tensor& input, const std::vector<int64_t>& dims) {
  std::vector<Expr> sizes;
  for (int64_t d : dims) sizes.push_back(sym_size(input, d));
  return sym_product(sizes);
}

using decomp::Moments;
using decomp::moments;

// x * scale + shift with scale = invstd * weight and shift = bias - mean * scale (all broadcast).
Tensor affine(const Tensor& xc, const Tensor& mean, const Tensor& invstd, const std::optional<Tensor>& weight_b,
              const std::optional<Tensor>& bias_b) {
  Tensor scale = weight_b ? invstd * *weight_b : invstd;
  Tensor shift = bias_b ? *bias_b - mean * scale : -(mean * scale);
  return xc * scale + shift;
}

// A node's optional tensors are positional (the list ends at the last present one): an absent
// one before a present one becomes a stand-in filled with `fill`, shaped `shape`, in the dtype
// of the last present one.
struct Slot {
  const std::optional<Tensor>& t;
  double fill;
};
std::vector<Tensor> positional_inputs(const Tensor& input, std::initializer_list<Slot> slots, IntArrayRef shape) {
  const std::vector<Slot> list(slots);
  size_t n = 0;
  for (size_t k = 0; k < list.size(); ++k)
    if (present(list[k].t)) n = k + 1;
  std::vector<Tensor> in{input};
  if (n == 0) return in;
  const Tensor& last = *list[n - 1].t;
  for (size_t k = 0; k < n; ++k)
    in.push_back(present(list[k].t) ? *list[k].t
                                    : full(shape, list[k].fill, TensorOptions(last.dtype()).device(last.device())));
  return in;
}

std::optional<Tensor> input_at(const decomp::DecompArgs& a, size_t i) {
  if (const Tensor* t = a.opt(i)) return *t;
  return std::nullopt;
}

// (1 - momentum) * running + momentum * value, in running's dtype.
Tensor running_next(const Tensor& running, const Tensor& value, double momentum) {
  const ScalarType acc = compute_dtype(value.dtype());
  return (running.to(acc) * (1 - momentum) + sym_reshape(value, sym_sizes(running)).to(acc) * momentum)
      .to(running.dtype());
}

// PyTorch's rule (its message too, which names native_batch_norm for every caller): the running
// statistics are buffers, updated without history, so no gradient can reach them, and one that
// requires grad is refused while grad mode is on.
void check_running_stats_need_no_grad(const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var) {
  if (!GradMode::is_enabled()) return;
  for (const auto& [name, t] : {std::pair{"running_mean", &running_mean}, std::pair{"running_var", &running_var}})
    if (present(*t) && (*t)->requires_grad())
      throw Error(std::string("The function 'native_batch_norm' is not differentiable with respect to argument '") +
                  name + "'. This input cannot have requires_grad True.");
}

// running = running_next(...), in place (written back when compiled).
void update_running(const std::optional<Tensor>& running, const Tensor& value, double momentum) {
  if (!present(running)) return;
  Tensor r = *running;
  const Tensor next = running_next(r, value, momentum);
  NoGradGuard no_grad;  // a buffer, as in PyTorch: the update records no history
  r.copy_(next.detach());  // traced: a detach node, so that a compiled backward does not differentiate it
}

// n / (n - 1): the factor turning a biased variance over n elements into an unbiased one.
Tensor bessel(const Expr& n, ScalarType dtype, Device device) {
  Tensor nt = sym_scalar_tensor(n, dtype, device);
  return nt / (nt - 1);
}

struct BatchNormResult {
  Tensor out, mean, invstd;  // mean and invstd: [C] in the compute dtype (training only)
  // The running statistics after this batch (given ones only; unchanged in evaluation).
  std::optional<Tensor> running_mean, running_var;
};

BatchNormResult batch_norm_impl(std::string_view op, const Tensor& input, const std::optional<Tensor>& weight,
                                const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                                const std::optional<Tensor>& running_var, bool training, double momentum, double eps) {
  check_channel_params(op, input, weight, bias, running_mean, running_var);
  if (!training && (!present(running_mean) || !present(running_var)))
    fail(op, "running_mean and running_var must be defined in evaluation mode");
  const ScalarType acc = compute_dtype(input.dtype());
  const int64_t trailing = input.dim() - 2;
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const Expr n = count_over(input, dims);
  if (training && ir::sym_eq(n, Expr(1)))
    fail(op, "Expected more than 1 value per channel when training, got input size {}", shape_str(input.sizes()));
  const std::optional<Tensor> w = per_channel(weight, trailing, acc), b = per_channel(bias, trailing, acc);
  const Tensor xc = input.to(acc);
  BatchNormResult r;
  r.running_mean = running_mean;
  r.running_var = running_var;
  if (!training) {
    const Tensor mean = per_channel(*running_mean, trailing, acc);
    const Tensor invstd = rsqrt(per_channel(*running_var, trailing, acc) + eps);
    r.out = affine(xc, mean, invstd, w, b).to(input.dtype());
    return r;
  }
  const Moments m = moments(xc, dims);
  const Tensor invstd = rsqrt(m.var + eps);
  r.out = affine(xc, m.mean, invstd, w, b).to(input.dtype());
  r.mean = sym_reshape(m.mean, {sym_size(input, 1)});
  r.invstd = sym_reshape(invstd, {sym_size(input, 1)});
  // An empty batch has no statistics: PyTorch leaves the running ones as they are.
  if (!ir::sym_eq(n, Expr(0))) {
    if (present(running_mean)) r.running_mean = running_next(*running_mean, m.mean, momentum);
    if (present(running_var)) r.running_var = running_next(*running_var, m.var * bessel(n, acc, input.device()), momentum);
  }
  return r;
}


}  // namespace

namespace {

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_call(std::string_view op, const Tensor& input,
                                                          const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias,
                                                          const std::optional<Tensor>& running_mean,
                                                          const std::optional<Tensor>& running_var, bool training,
                                                          double momentum, double eps) {
  // Checked here with the caller's name; the node checks again when it is shaped.
  check_channel_params(op, input, weight, bias, running_mean, running_var);
  if (!training && (!present(running_mean) || !present(running_var)))
    fail(op, "running_mean and running_var must be defined in evaluation mode");
  check_running_stats_need_no_grad(running_mean, running_var);
  std::vector<Tensor> r =
      dispatch(OpCall{ir::OpKind::native_batch_norm,
                      positional_inputs(input, {{weight, 1}, {bias, 0}, {running_mean, 0}, {running_var, 1}},
                                        IntArrayRef(input.size(1))),
                      ir::AttrList({training, momentum, eps})});
  // The node is functional: it returns the new running statistics, written back here.
  // Buffers, as in PyTorch: the update records no history.
  if (training) {
    NoGradGuard no_grad;
    if (present(running_mean)) Tensor(*running_mean).copy_(r.at(3).detach());  // detach: as in update_running
    if (present(running_var)) Tensor(*running_var).copy_(r.at(4).detach());
  }
  return {r.at(0), r.at(1), r.at(2)};
}

}  // namespace

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool /*cudnn_enabled*/) {
  return std::get<0>(
      native_batch_norm_call("batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps));
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var, bool training,
                                                     double momentum, double eps) {
  return native_batch_norm_call("native_batch_norm", input, weight, bias, running_mean, running_var, training, momentum,
                                eps);
}

namespace decomp {

std::vector<Tensor> native_batch_norm(const DecompArgs& a) {
  const Tensor& input = a.in(0);
  const bool training = a.attr<bool>("training");
  BatchNormResult r = batch_norm_impl("native_batch_norm", input, input_at(a, 1), input_at(a, 2), input_at(a, 3),
                                      input_at(a, 4), training, a.attr<double>("momentum"), a.attr<double>("eps"));
  // PyTorch returns empty statistics in evaluation, in the compute dtype; absent running
  // statistics come back empty too, unchanged ones as a copy (results are new tensors).
  const TensorOptions opts = TensorOptions().dtype(compute_dtype(input.dtype())).device(input.device());
  auto next = [&](const std::optional<Tensor>& t, size_t i) {
    if (!present(t)) return zeros({0}, opts);
    return t->is_same(a.in(i)) ? t->clone() : *t;
  };
  if (!training) return {r.out, zeros({0}, opts), zeros({0}, opts), next(r.running_mean, 3), next(r.running_var, 4)};
  return {r.out, r.mean.to(input.dtype()), r.invstd.to(input.dtype()), next(r.running_mean, 3),
          next(r.running_var, 4)};
}

}  // namespace decomp

Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                     const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                     bool use_input_stats, double momentum, double eps, bool /*cudnn_enabled*/) {
  const std::string_view op = "instance_norm";
  check_running_stats_need_no_grad(running_mean, running_var);
  if (!use_input_stats) {
    if (!present(running_mean) || !present(running_var))
      fail(op, "Expected running_mean and running_var to be defined when use_input_stats is false");
    return batch_norm_impl(op, input, weight, bias, running_mean, running_var, false, momentum, eps).out;
  }
  check_channel_params(op, input, weight, bias, running_mean, running_var);
  std::vector<int64_t> dims;
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const Expr n = count_over(input, dims);
  if (ir::sym_eq(n, Expr(1)))
    fail(op, "Expected more than 1 spatial element when training, got input size {}", shape_str(input.sizes()));
  const ScalarType acc = compute_dtype(input.dtype());
  const int64_t trailing = input.dim() - 2;
  const std::optional<Tensor> w = per_channel(weight, trailing, acc), b = per_channel(bias, trailing, acc);
  const Tensor xc = input.to(acc);
  const Moments m = moments(xc, dims);  // [N, C, 1, ...]
  Tensor out = affine(xc, m.mean, rsqrt(m.var + eps), w, b).to(input.dtype());
  // The running statistics take the batch mean of the per-sample ones.
  if (!ir::sym_eq(sym_numel(input), Expr(0))) {
    update_running(running_mean, m.mean.flatten(1).mean({0}), momentum);
    update_running(running_var, (m.var * bessel(n, acc, input.device())).flatten(1).mean({0}), momentum);
  }
  return out;
}

namespace {

struct GroupNormResult {
  Tensor out, mean, rstd;  // mean and rstd: [N, group] in the compute dtype
};

// input [N, C, *] seen as [N, group, C / group, *]: statistics per (sample, group).
void check_group_norm(std::string_view op, const Tensor& input, int64_t group, const std::optional<Tensor>& weight,
                      const std::optional<Tensor>& bias) {
  if (input.dim() < 2)
    fail(op, "Expected at least 2 dimensions for input tensor but received {}", input.dim());
  check_input(op, input, 2);
  if (group <= 0) fail(op, "Expected num_groups to be positive, but got num_groups={}", group);
  const Expr C = sym_size(input, 1);
  if (!ir::sym_eq(ir::mod(C, Expr(group)), Expr(0)))
    fail(op, "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and "
             "num_groups={}", shape_str(input.sizes()), group);
  for (const auto& [p, what] : {std::pair{&weight, "weight"}, std::pair{&bias, "bias"}})
    if (present(*p) && (p->value().dim() != 1 || !ir::sym_eq(sym_size(p->value(), 0), C)))
      fail(op, "Expected {} to be a vector of size equal to the number of channels in input, but got {} of shape {} "
               "and input of shape {}", what, what, shape_str(p->value().sizes()), shape_str(input.sizes()));
  check_param(op, "weight", weight, C, input.dtype());
  check_param(op, "bias", bias, C, input.dtype());
}

GroupNormResult group_norm_impl(std::string_view op, const Tensor& input, int64_t group,
                                const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, double eps) {
  check_group_norm(op, input, group, weight, bias);
  const Expr N = sym_size(input, 0), C = sym_size(input, 1);
  const ScalarType acc = compute_dtype(input.dtype());
  const Expr per_group = ir::floordiv(C, Expr(group));
  std::vector<Expr> grouped{N, Expr(group), per_group};
  std::vector<int64_t> dims{2};
  for (int64_t d = 2; d < input.dim(); ++d) {
    grouped.push_back(sym_size(input, d));
    dims.push_back(d + 1);
  }
  const int64_t trailing = input.dim() - 2;
  auto grouped_param = [&](const std::optional<Tensor>& p) -> std::optional<Tensor> {
    if (!present(p)) return std::nullopt;
    return sym_reshape(per_channel(p.value(), trailing, acc), [&] {
      std::vector<Expr> s{Expr(group), per_group};
      for (int64_t k = 0; k < trailing; ++k) s.push_back(Expr(1));
      return s;
    }());
  };
  const Tensor xg = sym_reshape(input.to(acc), grouped);
  const Moments m = moments(xg, dims);  // [N, group, 1, 1, ...]
  const Tensor rstd = rsqrt(m.var + eps);
  GroupNormResult r;
  r.out = sym_reshape(affine(xg, m.mean, rstd, grouped_param(weight), grouped_param(bias)), sym_sizes(input))
              .to(input.dtype());
  r.mean = sym_reshape(m.mean, {N, Expr(group)});
  r.rstd = sym_reshape(rstd, {N, Expr(group)});
  return r;
}

}  // namespace

// With static sizes group_norm records native_group_norm, so that its gradient is the
// native_group_norm_backward node; the node's N, C and HxW are integers, so symbolic sizes
// record the decomposition itself.
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool /*cudnn_enabled*/) {
  if (is_symbolic(input)) return group_norm_impl("group_norm", input, num_groups, weight, bias, eps).out;
  check_group_norm("group_norm", input, num_groups, weight, bias);
  int64_t HxW = 1;
  for (int64_t d = 2; d < input.dim(); ++d) HxW *= input.size(d);
  return std::get<0>(native_group_norm(input, weight, bias, input.size(0), input.size(1), HxW, num_groups, eps));
}

namespace {

std::tuple<Tensor, Tensor, Tensor> native_group_norm_impl(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps) {
  const std::string_view op = "native_group_norm";
  if (N < 0 || C < 0 || HxW < 0 || !ir::sym_eq(sym_numel(input), Expr(N * C * HxW)))
    fail(op, "Expected the input of size {} to hold N * C * HxW = {} * {} * {} elements", shape_str(input.sizes()), N,
         C, HxW);
  if (input.dim() < 2 || !ir::sym_eq(sym_size(input, 0), Expr(N)) || !ir::sym_eq(sym_size(input, 1), Expr(C)))
    fail(op, "Expected input of shape [N, C, *] = [{}, {}, *], but got input of size {}", N, C, shape_str(input.sizes()));
  GroupNormResult r = group_norm_impl(op, input, group, weight, bias, eps);
  return {r.out, r.mean.to(input.dtype()), r.rstd.to(input.dtype())};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_impl(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps) {
  Tensor out = layer_norm(input, normalized_shape, weight, bias, eps);  // checks the shapes with PyTorch's wording
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - static_cast<int64_t>(normalized_shape.size()); d < input.dim(); ++d) dims.push_back(d);
  const Moments m = moments(input.to(compute_dtype(input.dtype())), dims);
  return {out, m.mean.to(input.dtype()), rsqrt(m.var + eps).to(input.dtype())};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps) {
  std::vector<Tensor> r = dispatch(OpCall{ir::OpKind::native_group_norm, positional_inputs(input, {{weight, 1}, {bias, 0}}, IntArrayRef(C)),
                                          ir::AttrList({N, C, HxW, group, eps})});
  return {r.at(0), r.at(1), r.at(2)};
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps) {
  std::vector<Tensor> r = dispatch(OpCall{ir::OpKind::native_layer_norm, positional_inputs(input, {{weight, 1}, {bias, 0}}, normalized_shape),
                                          ir::AttrList({normalized_shape.vec(), eps})});
  return {r.at(0), r.at(1), r.at(2)};
}

namespace {

// native_layer_norm_backward's decomposition. With x^ = (x - mean) * rstd over the last k dims
// and gx^ = grad * weight:
//   grad_input  = rstd * (gx^ - mean(gx^) - x^ * mean(gx^ * x^))
//   grad_weight = sum of grad * x^ over the outer dims,  grad_bias = sum of grad over them.
// f16/bf16 compute in f32; the gradients come back in the input's dtype (the weight's for its
// own and the bias's).
std::vector<Tensor> layer_norm_backward_impl(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                             const Tensor& rstd, const Tensor* weight, size_t k,
                                             std::array<bool, 3> mask) {
  const ScalarType in_t = input.dtype();
  const ScalarType t = decomp::opmath_dtype(in_t);
  const ScalarType param_t = weight ? weight->dtype() : in_t;
  const Tensor x = input.to(t);
  const int64_t rank = x.dim();
  std::vector<int64_t> inner, outer;
  for (int64_t d = 0; d < rank; ++d) (d < rank - static_cast<int64_t>(k) ? outer : inner).push_back(d);
  const Tensor r = rstd.to(t);
  const Tensor xhat = (x - mean.to(t)) * r;
  const Tensor g = grad_out.to(t);
  std::vector<Tensor> out(3, decomp::left_out(input));
  if (mask[0]) {
    const Tensor gxhat = weight ? g * weight->to(t) : g;
    out[0] = (r * (gxhat - gxhat.mean(inner, true) - xhat * (gxhat * xhat).mean(inner, true))).to(in_t);
  }
  auto outer_sum = [&](const Tensor& v) { return (outer.empty() ? v : sum(v, outer)).to(param_t); };
  if (mask[1]) out[1] = outer_sum(g * xhat);
  if (mask[2]) out[2] = outer_sum(g);
  return out;
}

// native_group_norm_backward's decomposition: layer_norm_backward_impl's formulas over each
// group's C / group * HxW elements, with a per-channel weight; grad_weight and grad_bias sum
// over the batch and the spatial positions.
std::vector<Tensor> group_norm_backward_impl(const Tensor& grad_out, const Tensor& input, const Tensor& mean,
                                             const Tensor& rstd, const Tensor* weight, int64_t N, int64_t C,
                                             int64_t HxW, int64_t group, std::array<bool, 3> mask) {
  const ScalarType in_t = input.dtype();
  const ScalarType t = decomp::opmath_dtype(in_t);
  const ScalarType param_t = weight ? weight->dtype() : in_t;
  const std::vector<Expr> grouped{Expr(N), Expr(group), Expr(C / group), Expr(HxW)};
  const std::vector<Expr> stat{Expr(N), Expr(group), Expr(1), Expr(1)};
  const Tensor x = sym_reshape(input.to(t), grouped);
  const Tensor r = sym_reshape(rstd.to(t), stat);
  const Tensor xhat = (x - sym_reshape(mean.to(t), stat)) * r;
  const Tensor g = sym_reshape(grad_out.to(t), grouped);
  std::vector<Tensor> out(3, decomp::left_out(input));
  if (mask[0]) {
    const Tensor gxhat =
        weight ? g * sym_reshape(weight->to(t), {Expr(1), Expr(group), Expr(C / group), Expr(1)}) : g;
    const std::vector<int64_t> inner{2, 3};
    const Tensor gx = r * (gxhat - gxhat.mean(inner, true) - xhat * (gxhat * xhat).mean(inner, true));
    out[0] = sym_reshape(gx, sym_sizes(input)).to(in_t);
  }
  if (mask[1]) out[1] = sym_reshape(sum(g * xhat, {0, 3}), {Expr(C)}).to(param_t);
  if (mask[2]) out[2] = sym_reshape(sum(g, {0, 3}), {Expr(C)}).to(param_t);
  return out;
}

std::vector<int64_t> mask_attr(std::array<bool, 3> m) { return {m[0], m[1], m[2]}; }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              std::array<bool, 3> output_mask) {
  constexpr std::string_view op = "native_layer_norm_backward";
  const auto k = static_cast<int64_t>(normalized_shape.size());
  if (k == 0 || input.dim() < k)
    fail(op, "expected normalized_shape {} to name at most input {}'s {} trailing dims, and at least one",
         shape_str(normalized_shape), ir::str(sym_sizes(input)), input.dim());
  std::vector<Expr> stat = sym_sizes(input);
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) {
    if (!ir::sym_eq(sym_size(input, d), Expr(normalized_shape[static_cast<size_t>(d - (input.dim() - k))])))
      fail(op, "expected input {} to end in normalized_shape {}", ir::str(sym_sizes(input)), shape_str(normalized_shape));
    stat[static_cast<size_t>(d)] = Expr(1);
  }
  if (!sym_same_sizes(sym_sizes(grad_out), sym_sizes(input)))
    fail(op, "expected grad_out of input's shape {}, got {}", ir::str(sym_sizes(input)), ir::str(sym_sizes(grad_out)));
  if (!sym_same_sizes(sym_sizes(mean), stat) || !sym_same_sizes(sym_sizes(rstd), stat))
    fail(op, "expected mean and rstd of shape {} (native_layer_norm's statistics), got {} and {}", ir::str(stat),
         ir::str(sym_sizes(mean)), ir::str(sym_sizes(rstd)));
  if (!is_floating_point(input.dtype()) || grad_out.dtype() != input.dtype())
    fail(op, "expected floating grad_out and input of one dtype, got {} and {}", c10_type_name(grad_out.dtype()),
         c10_type_name(input.dtype()));
  std::vector<Tensor> in{grad_out, input, mean, rstd};
  if (present(weight)) {
    if (weight->sizes() != normalized_shape)
      fail(op, "expected weight of shape {}, got {}", shape_str(normalized_shape), shape_str(weight->sizes()));
    in.push_back(*weight);
  }
  std::vector<Tensor> r = decomp::masked_results(
      dispatch(OpCall{ir::OpKind::native_layer_norm_backward, std::move(in),
                      ir::AttrList({normalized_shape.vec(), mask_attr(output_mask)})}),
      output_mask);
  return {r.at(0), r.at(1), r.at(2)};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N,
                                                              int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> output_mask) {
  constexpr std::string_view op = "native_group_norm_backward";
  if (group <= 0 || C % group != 0)
    fail(op, "Expected number of channels in input to be divisible by num_groups, but got input of shape {} and "
             "num_groups={}",
         ir::str(sym_sizes(input)), group);
  if (N < 0 || HxW < 0 || input.dim() < 2 || !ir::sym_eq(sym_numel(input), Expr(N * C * HxW)) ||
      !ir::sym_eq(sym_size(input, 0), Expr(N)) || !ir::sym_eq(sym_size(input, 1), Expr(C)))
    fail(op, "Expected input of shape [N, C, *] holding N * C * HxW = {} * {} * {} elements, got {}", N, C, HxW,
         ir::str(sym_sizes(input)));
  if (!sym_same_sizes(sym_sizes(grad_out), sym_sizes(input)))
    fail(op, "expected grad_out of input's shape {}, got {}", ir::str(sym_sizes(input)), ir::str(sym_sizes(grad_out)));
  if (!ir::sym_eq(sym_numel(mean), Expr(N * group)) || !ir::sym_eq(sym_numel(rstd), Expr(N * group)))
    fail(op, "expected mean and rstd of N * group = {} elements, got {} and {}", N * group, ir::str(sym_sizes(mean)),
         ir::str(sym_sizes(rstd)));
  if (!is_floating_point(input.dtype()) || grad_out.dtype() != input.dtype())
    fail(op, "expected floating grad_out and input of one dtype, got {} and {}", c10_type_name(grad_out.dtype()),
         c10_type_name(input.dtype()));
  std::vector<Tensor> in{grad_out, input, mean, rstd};
  if (present(weight)) {
    if (weight->dim() != 1 || weight->size(0) != C)
      fail(op, "expected weight of shape [{}], got {}", C, shape_str(weight->sizes()));
    in.push_back(*weight);
  }
  std::vector<Tensor> r = decomp::masked_results(
      dispatch(OpCall{ir::OpKind::native_group_norm_backward, std::move(in),
                      ir::AttrList({N, C, HxW, group, mask_attr(output_mask)})}),
      output_mask);
  return {r.at(0), r.at(1), r.at(2)};
}

namespace decomp {

std::vector<Tensor> native_group_norm(const DecompArgs& a) {
  auto [out, mean, rstd] = native_group_norm_impl(a.in(0), input_at(a, 1), input_at(a, 2), a.attr<int64_t>("N"),
                                                  a.attr<int64_t>("C"), a.attr<int64_t>("HxW"), a.attr<int64_t>("group"),
                                                  a.attr<double>("eps"));
  return {out, mean, rstd};
}

std::vector<Tensor> native_layer_norm(const DecompArgs& a) {
  auto [out, mean, rstd] = native_layer_norm_impl(a.in(0), a.attr<std::vector<int64_t>>("normalized_shape"),
                                                  input_at(a, 1), input_at(a, 2), a.attr<double>("eps"));
  return {out, mean, rstd};
}

std::vector<Tensor> native_layer_norm_backward(const DecompArgs& a) {
  return layer_norm_backward_impl(a.in(0), a.in(1), a.in(2), a.in(3), a.opt(4),
                                  a.attr<std::vector<int64_t>>("normalized_shape").size(), output_mask(a));
}

std::vector<Tensor> native_group_norm_backward(const DecompArgs& a) {
  return group_norm_backward_impl(a.in(0), a.in(1), a.in(2), a.in(3), a.opt(4), a.attr<int64_t>("N"),
                                  a.attr<int64_t>("C"), a.attr<int64_t>("HxW"), a.attr<int64_t>("group"),
                                  output_mask(a));
}

}  // namespace decomp

// ---- layer_norm, rms_norm (composites over the trailing dims; frontend/decompositions_norm.cpp) ----

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps) {
  std::vector<Tensor> ins{input};
  if (present(weight)) {
    ins.push_back(*weight);
  } else if (present(bias)) {
    if (!(bias->sizes() == normalized_shape))
      fail("layer_norm",
           "Expected bias to be of same shape as normalized_shape, but got bias of shape {} and normalized_shape = {}",
           shape_str(bias->sizes()), shape_str(normalized_shape));
    ins.push_back(ones(normalized_shape, bias->options()));
  }
  if (present(bias)) ins.push_back(*bias);
  return dispatch1(ir::OpKind::layer_norm, std::move(ins), {normalized_shape.vec(), eps});
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  std::vector<Tensor> ins{input};
  if (present(weight)) ins.push_back(*weight);
  return dispatch1(ir::OpKind::rms_norm, std::move(ins), {normalized_shape.vec(), eps.value_or(finfo_eps(compute_dtype(input.dtype())))});
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  return div(input, clamp_min(norm(input, Scalar(p), {dim}, /*keepdim=*/true), eps));
}

}  // namespace kiln
