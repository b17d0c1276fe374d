// kiln/frontend/ops_linear_losses.cpp — torch.nn.functional's losses beside cross_entropy
// (frontend/ops_linear.h): mse_loss, l1_loss, smooth_l1_loss, huber_loss, nll_loss,
// binary_cross_entropy, binary_cross_entropy_with_logits (and log_sigmoid), kl_div,
// soft_margin_loss, margin_ranking_loss, hinge_embedding_loss, cosine_embedding_loss,
// poisson_nll_loss, gaussian_nll_loss, triplet_margin_loss, multilabel_soft_margin_loss,
// multi_margin_loss and multilabel_margin_loss.
//
// Each is ATen's (or torch.nn.functional's) formula written with kiln's ops, in its order (measured
// against torch 2.15 to agree bit for bit where the steps are the same ops), then reduced: "mean",
// "sum" or "none". So each is traced, fused, compiled and differentiated through existing rules.
// Dtypes follow PyTorch's kernels: most compute in the operands' promoted dtype; huber,
// soft_margin, hinge_embedding and cosine_embedding write into their input's dtype, and
// binary_cross_entropy_with_logits into its target's, as ATen's in-place steps do.
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/arg_checks.h"
#include "frontend/decompositions_detail.h"
#include "frontend/grad_mode.h"
#include "frontend/ops.h"
#include "frontend/ops_factory.h"
#include "frontend/ops_view.h"
#include "frontend/promotion.h"
#include "frontend/symbolic.h"
#include "frontend/tracer.h"
#include "ir/shape_env.h"

#include <fmt/format.h>

#include <cmath>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

namespace {

Tensor reduce(const Tensor& loss, std::string_view reduction) {
  if (reduction == "mean") return loss.mean();
  if (reduction == "sum") return loss.sum();
  return loss;
}

// The operands' promoted dtype, which a floating kernel needs ("mse_cpu" has no integer one).
ScalarType floating_result(std::string_view op, const char* kernel, const Tensor& a, const Tensor& b) {
  const ScalarType dt = promote_types(a.dtype(), b.dtype());
  check_floating_kernel(op, kernel, dt);
  return dt;
}

// `value` as ATen's in-place step leaves it: in `like`'s dtype, which the value's must cast to.
Tensor in_dtype_of(std::string_view op, const Tensor& value, const Tensor& like) {
  if (!can_cast(value.dtype(), like.dtype()))
    fail(op, "result type {} can't be cast to the desired output type {}", c10_type_name(value.dtype()),
         c10_type_name(like.dtype()));
  return value.to(like.dtype());
}

// Sizes for messages: the hints, without a guard.
std::string torch_size(const Tensor& t) { return "torch.Size(" + shape_str(t.impl()->sizes()) + ")"; }

// Whether a and b have one shape (decided with guards where sizes are symbolic).
bool same_shape(const Tensor& a, const Tensor& b) {
  if (a.dim() != b.dim()) return false;
  for (int64_t d = 0; d < a.dim(); ++d)
    if (!ir::sym_eq(sym_size(a, d), sym_size(b, d))) return false;
  return true;
}

// A weight (or pos_weight) multiplied into `loss` in place, as ATen's mul_: it must broadcast to
// the loss's shape without growing it, and the loss keeps its dtype.
Tensor weighted(std::string_view op, const Tensor& loss, const Tensor& weight) {
  const std::vector<ir::Expr> shape = sym_broadcast_shapes(op, sym_sizes(loss), sym_sizes(weight));
  if (shape.size() != static_cast<size_t>(loss.dim()) || !ir::sym_eq(sym_product(shape), sym_numel(loss)))
    fail(op, "output with shape {} doesn't match the broadcast shape {}", shape_str(loss.impl()->sizes()),
         shape_str(broadcast_shapes(op, loss.impl()->sizes(), weight.impl()->sizes())));
  return in_dtype_of(op, mul(loss, weight), loss);
}

// A class-margin loss's input as [N, C] samples (ATen's nframe and dim): a 0-dim input is one
// sample of one class, a 1-D one a single sample. A sample needs at least one class.
Tensor as_samples(std::string_view op, const Tensor& self) {
  const int64_t nd = self.dim();
  if (nd > 2 || (nd >= 1 && ir::sym_eq(sym_size(self, -1), ir::Expr(0))))
    fail(op, "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
         shape_str(self.impl()->sizes()));
  if (nd == 2) return self;
  return nd == 1 ? self.unsqueeze(0) : self.reshape({1, 1});
}

// The element dtypes of a class-margin loss: a floating input (f16 and bf16 computed and summed in
// f32 and rounded once; PyTorch's CUDA kernels round each hinge), an int64 target.
void check_class_margin_dtypes(std::string_view op, const char* kernel, const Tensor& self, const Tensor& target) {
  check_floating_kernel(op, kernel, self.dtype());
  if (target.dtype() != ScalarType::Int64)
    fail(op, "expected scalar type Long but found {}", c10_type_name(target.dtype()));
}

// A class-margin hinge: z where z > 0, else 0, as ATen's loops add only z > 0. Unlike relu, a NaN
// gives 0 and passes no gradient.
Tensor hinge(const Tensor& z) { return where(gt(z, 0), z, Scalar(0.0)); }

}  // namespace

Tensor mse_loss(const Tensor& self, const Tensor& target, std::string_view reduction) {
  sym_broadcast_shapes("mse_loss", sym_sizes(self), sym_sizes(target));
  check_reduction("mse_loss", reduction);
  const ScalarType dt = floating_result("mse_loss", "mse_cpu", self, target);
  const Tensor d = sub(self.to(dt), target.to(dt));
  return reduce(mul(d, d), reduction);
}

Tensor l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction) {
  sym_broadcast_shapes("l1_loss", sym_sizes(self), sym_sizes(target));
  check_reduction("l1_loss", reduction);
  return reduce(abs(sub(self, target)), reduction);
}

Tensor smooth_l1_loss(const Tensor& self, const Tensor& target, std::string_view reduction, double beta) {
  constexpr std::string_view op = "smooth_l1_loss";
  sym_broadcast_shapes(op, sym_sizes(self), sym_sizes(target));
  check_reduction(op, reduction);
  if (beta < 0) fail(op, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return l1_loss(self, target, reduction);
  const ScalarType dt = floating_result(op, "smooth_l1_cpu", self, target);
  const Tensor z = abs(sub(self.to(dt), target.to(dt)));
  return reduce(where(lt(z, beta), div(mul(mul(z, 0.5), z), beta), sub(z, 0.5 * beta)), reduction);
}

Tensor huber_loss(const Tensor& self, const Tensor& target, std::string_view reduction, double delta) {
  constexpr std::string_view op = "huber_loss";
  sym_broadcast_shapes(op, sym_sizes(self), sym_sizes(target));
  check_reduction(op, reduction);
  if (!(delta > 0)) fail(op, "huber_loss does not support non-positive values for delta.");
  const ScalarType dt = promote_types(self.dtype(), target.dtype());
  if (is_floating_point(dt) && !is_floating_point(self.dtype()))
    fail(op, "result type {} can't be cast to the desired output type {}", c10_type_name(dt),
         c10_type_name(self.dtype()));
  check_floating_kernel(op, "huber_cpu", dt);
  const Tensor z = abs(sub(self.to(dt), target.to(dt)));
  const Tensor loss = where(lt(z, delta), mul(mul(z, 0.5), z), mul(sub(z, 0.5 * delta), delta));
  return reduce(loss.to(self.dtype()), reduction);
}

// -input[target] (times weight[target]) per element along the class dim (1, or 0 for a 1-D
// input), 0 where target == ignore_index; "mean" divides by the summed weights of the targets
// that count (NaN when none do).
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                std::string_view reduction, int64_t ignore_index) {
  constexpr std::string_view op = "nll_loss";
  check_reduction(op, reduction);
  if (self.dim() < 1) fail(op, "Expected 1 or more dimensions (got {})", self.dim());
  // Sizes compare as expressions (frontend/symbolic.h): traced with symbolic sizes, the checks
  // guard only what they must decide, so a batch of another size reuses the compiled program.
  const ir::Expr target_batch = target.dim() == 0 ? ir::Expr(0) : sym_size(target, 0);
  if (self.dim() != 1 && !ir::sym_eq(sym_size(self, 0), target_batch))
    fail(op, "Expected input batch_size ({}) to match target batch_size ({}).", self.size(0),
         target.dim() == 0 ? 0 : target.size(0));  // integers read only to report
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const ir::Expr classes = sym_size(self, class_dim);
  std::vector<ir::Expr> want;  // the target's sizes: the input's without the class dim
  for (int64_t d = 0; d < self.dim(); ++d)
    if (d != class_dim) want.push_back(sym_size(self, d));
  if (self.dim() <= 2 && target.dim() > 1) fail(op, "0D or 1D target tensor expected, multi-target not supported");
  // A 1-D input takes a 0-D target or one of one element; a K-d input a target of its other sizes.
  if (self.dim() == 1 && target.dim() == 1 && !ir::sym_eq(sym_size(target, 0), ir::Expr(1)))
    fail(op, "For 1D input, 1D target must have size 1, but got target size: {}", target.size(0));
  if (self.dim() > 2 && !sym_same_sizes(sym_sizes(target), want)) {
    std::vector<int64_t> want_sizes;  // integers read only to report
    for (int64_t d = 0; d < self.dim(); ++d)
      if (d != class_dim) want_sizes.push_back(self.size(d));
    fail(op, "Expected target size {}, got {}", shape_str(want_sizes), shape_str(target.sizes()));
  }
  if (weight) {
    if (weight->dim() != 1 || !ir::sym_eq(sym_size(*weight, 0), classes))
      fail(op,
           "weight tensor should be defined either for all {} classes or no classes but got weight tensor of shape: {}",
           self.size(class_dim), shape_str(weight->sizes()));
    if (weight->dtype() != self.dtype())
      fail(op, "expected scalar type {} but found {}", c10_type_name(self.dtype()), c10_type_name(weight->dtype()));
  }
  if (target.dtype() != ScalarType::Int64 && target.dtype() != ScalarType::UInt8)
    fail(op, "expected target dtype to be Long or Byte, but got {}", c10_type_name(target.dtype()));
  if (!is_floating_point(self.dtype()))
    fail(op, "\"nll_loss_out_frame\" not implemented for '{}'", c10_type_name(self.dtype()));
  const Tensor t = self.dim() == 1 ? target.to(ScalarType::Int64).reshape({}) : target.to(ScalarType::Int64);
  const Tensor valid = ne(t, Scalar(ignore_index));
  const Tensor safe = where(valid, t, Scalar(int64_t{0}));
  const Tensor picked = self.gather(class_dim, safe.unsqueeze(class_dim)).squeeze(class_dim);
  const Tensor zero = zeros({}, self.options());
  Tensor loss, total;
  if (weight) {
    const Tensor w = where(valid, sym_reshape(weight->index_select(0, safe.reshape({-1})), sym_sizes(safe)), zero);
    loss = where(valid, neg(mul(picked, w)), zero);
    total = w.sum();
  } else {
    loss = where(valid, neg(picked), zero);
    total = valid.sum().to(self.dtype());
  }
  if (reduction == "none") return loss;
  if (reduction == "sum") return loss.sum();
  return div(loss.sum(), total);
}

// ATen's log_sigmoid: min(x, 0) - log1p(exp(-|x|)), in f32 for f16 and bf16. Each branch is
// written on its own side of 0 (the other side's operand replaced by 0), so that the gradient is
// sigmoid(-x) everywhere, 1/2 at 0, and never 0 * inf.
Tensor log_sigmoid(const Tensor& self) {
  if (!is_floating_point(self.dtype()))
    fail("log_sigmoid", "\"log_sigmoid_cpu\" not implemented for '{}'", c10_type_name(self.dtype()));
  const Tensor x = self.to(decomp::opmath_dtype(self.dtype()));
  const Tensor negative = lt(x, 0);
  const Tensor below = where(negative, x, Scalar(0.0)), above = where(negative, Scalar(0.0), x);
  const Tensor out = where(negative, sub(below, log1p(exp(below))), neg(log1p(exp(neg(above)))));
  return out.to(self.dtype());
}

Tensor binary_cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                            std::string_view reduction) {
  constexpr std::string_view op = "binary_cross_entropy";
  check_reduction(op, reduction);
  if (!same_shape(target, self))
    fail(op,
         "Using a target size ({}) that is different to the input size ({}) is deprecated. Please ensure they have "
         "the same size.",
         torch_size(target), torch_size(self));
  if (target.dtype() != self.dtype())
    fail(op, "Found dtype {} but expected {}", c10_type_name(target.dtype()), c10_type_name(self.dtype()));
  if (!is_floating_point(self.dtype()))
    fail(op, "\"binary_cross_entropy\" not implemented for '{}'", c10_type_name(self.dtype()));
  // PyTorch's CPU kernel checks the values (its GPU kernel asserts on the device). kiln checks a
  // CPU tensor whose values are at hand; a traced value outside [0, 1] gives NaN.
  for (const auto& [t, name] : {std::pair<const Tensor&, const char*>{self, "input"}, {target, "target"}})
    if (t.is_cpu() && !t.is_traced() && !Tracer::current())
      for (double v : t.to_vector<double>())
        if (!(v >= 0 && v <= 1)) fail(op, "all elements of {} should be between 0 and 1", name);
  // (t - 1) max(log1p(-x), -100) - t max(log x, -100): a log that reaches -inf is clamped. The
  // input's gradient is ATen's (x - t) / max(x (1 - x), 1e-12), finite at 0 and 1 where the
  // clamped logs' own would be 0/0; it enters as g * (x - x), which adds 0 to the value (always:
  // a traced input does not say whether the compiled step will differentiate it).
  const Tensor x = self.detach();
  const Tensor low = full({}, -100.0, self.options());
  Tensor loss = sub(mul(sub(target, 1), maximum(log1p(neg(x)), low)), mul(target, maximum(log(x), low)));
  // (In f32 for f16 and bf16, whose 1e-12 would be 0: an infinite slope times 0 is NaN.)
  const ScalarType acc = decomp::opmath_dtype(self.dtype());
  const Tensor xa = x.to(acc), slope = div(sub(xa, target.detach().to(acc)), clamp_min(mul(rsub(xa, 1), xa), 1e-12));
  loss = add(loss, mul(slope, sub(self, x)).to(loss.dtype()));
  if (weight) loss = weighted(op, loss, *weight);
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight, std::string_view reduction) {
  constexpr std::string_view op = "binary_cross_entropy_with_logits";
  check_reduction(op, reduction);
  if (!same_shape(target, self))
    fail(op, "Target size ({}) must be the same as input size ({})", torch_size(target), torch_size(self));
  // (1 - t) x - lw log_sigmoid(x), lw = (pos_weight - 1) t + 1, then the weight; ATen writes
  // into (1 - t), so the result has the target's dtype and shape.
  Tensor log_sig = log_sigmoid(self);
  if (pos_weight) log_sig = weighted(op, log_sig, add(mul(sub(*pos_weight, 1), target), 1));
  Tensor loss = in_dtype_of(op, sub(mul(rsub(target, 1), self), log_sig), target);
  if (weight) loss = weighted(op, loss, *weight);
  return reduce(loss, reduction);
}

// "batchmean" is the sum over the first dim's size.
Tensor kl_div(const Tensor& self, const Tensor& target, std::string_view reduction, bool log_target) {
  constexpr std::string_view op = "kl_div";
  if (reduction != "batchmean") check_reduction(op, reduction);
  if (is_integral(self.dtype(), /*include_bool=*/true) || is_integral(target.dtype(), /*include_bool=*/true))
    fail(op, "kl_div: Integral inputs not supported.");
  const Tensor loss = log_target ? mul(exp(target), sub(target, self)) : sub(xlogy(target, target), mul(target, self));
  if (reduction != "batchmean") return reduce(loss, reduction);
  const Tensor total = loss.sum();
  if (self.dim() == 0) return total;
  return sym_div(total, sym_size(self, 0));  // a symbolic batch read at run time (an integer read pinned it)
}

Tensor soft_margin_loss(const Tensor& self, const Tensor& target, std::string_view reduction) {
  constexpr std::string_view op = "soft_margin_loss";
  check_reduction(op, reduction);
  // ATen multiplies into a tensor of the input's shape and dtype, then takes log1p(exp(.)) there.
  const Tensor product = weighted(op, neg(self), target);
  return reduce(log1p(exp(product)), reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           std::string_view reduction) {
  check_reduction("margin_ranking_loss", reduction);
  if (input1.dim() != input2.dim() || input1.dim() != target.dim())
    fail("margin_ranking_loss",
         "margin_ranking_loss : All input tensors should have same dimension but got sizes: input1: "
         "{}, input2: {}, target: {} ",
         torch_size(input1), torch_size(input2), torch_size(target));
  return reduce(clamp_min(add(mul(neg(target), sub(input1, input2)), margin), 0), reduction);
}

Tensor hinge_embedding_loss(const Tensor& self, const Tensor& target, double margin, std::string_view reduction) {
  constexpr std::string_view op = "hinge_embedding_loss";
  check_reduction(op, reduction);
  const Tensor zero = zeros({}, self.options());
  const Tensor margin_part = where(ne(target, 1), clamp_min(rsub(self, margin), 0), zero);
  const Tensor self_part = where(ne(target, -1), self, zero);
  return reduce(in_dtype_of(op, add(margin_part, self_part), self), reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             std::string_view reduction) {
  constexpr std::string_view op = "cosine_embedding_loss";
  check_reduction(op, reduction);
  const int64_t t = target.dim();
  if (t != 0 && t != 1) fail(op, "0D or 1D target tensor expected, multi-target not supported");
  if (t == 1 && (input1.dim() != 2 || input2.dim() != 2))
    fail(op, "1D target tensor expects 2D input tensors, but found inputs with sizes {} and {}.",
         shape_str(input1.sizes()), shape_str(input2.sizes()));
  if (t == 0 && (input1.dim() != 1 || input2.dim() != 1))
    fail(op, "0D target tensor expects 1D input tensors, but found inputs with sizes {} and {}.",
         shape_str(input1.sizes()), shape_str(input2.sizes()));
  constexpr double eps = 1e-12;  // ATen's EPSILON
  const Tensor product = mul(input1, input2).sum({t});
  const Tensor square1 = add(mul(input1, input1).sum({t}), eps), square2 = add(mul(input2, input2).sum({t}), eps);
  const Tensor cos = div(product, sqrt(mul(square1, square2)));
  const Tensor zero = zeros_like(cos);
  const Tensor loss =
      add(where(eq(target, 1), rsub(cos, 1), zero), where(eq(target, -1), clamp_min(sub(cos, margin), 0), zero));
  return reduce(in_dtype_of(op, loss, cos), reduction);
}

Tensor poisson_nll_loss(const Tensor& self, const Tensor& target, bool log_input, bool full, double eps,
                        std::string_view reduction) {
  check_reduction("poisson_nll_loss", reduction);
  Tensor loss = log_input ? sub(exp(self), mul(target, self)) : sub(self, mul(target, log(add(self, eps))));
  if (full) {  // Stirling's term for targets above 1
    const Tensor stirling =
        add(sub(mul(target, log(target)), target), mul(log(mul(target, 2 * std::numbers::pi)), 0.5));
    loss = add(loss, masked_fill(stirling, le(target, 1), 0));
  }
  return reduce(loss, reduction);
}

Tensor gaussian_nll_loss(const Tensor& self, const Tensor& target, const Tensor& var, bool full, double eps,
                         std::string_view reduction) {
  constexpr std::string_view op = "gaussian_nll_loss";
  if (var.is_traced() || Tracer::current())
    fail_data_dependent(op,
                        "gaussian_nll_loss checks that var has no negative entry, which a traced function does not "
                        "have; compile() runs such a function eagerly");
  for (double x : var.to_vector<double>())
    if (x < 0) fail(op, "var has negative entry/entries");
  Tensor v = var;
  if (var.sizes().vec() != self.sizes().vec()) {
    const std::vector<int64_t> in = self.sizes().vec(), vs = var.sizes().vec();
    if (!in.empty() && vs == std::vector<int64_t>(in.begin(), in.end() - 1)) {
      v = var.unsqueeze(-1);  // one dim short: the same variance across the last dim
    } else {
      // Same rank, and the sizes where var differs from the input sum to 1 (var is 1 along
      // exactly the dims it shares: PyTorch's rule).
      int64_t differing = 0;
      bool ok = vs.size() == in.size();
      for (size_t d = 0; ok && d < in.size(); ++d)
        if (vs[d] != in[d]) differing += vs[d];
      if (!ok || differing != 1) fail(op, "var is of incorrect size");
    }
  }
  if (reduction != "none" && reduction != "mean" && reduction != "sum") fail(op, "{} is not valid", reduction);
  // Clamped at eps outside autograd, as PyTorch clamps under no_grad: the value is the clamped
  // one and the gradient var's own.
  const Tensor clamped = add(clamp_min(v, eps).detach(), sub(v, v.detach()));
  const Tensor d = sub(self, target);
  Tensor loss = mul(add(log(clamped), div(mul(d, d), clamped)), 0.5);
  if (full) loss = add(loss, 0.5 * std::log(2 * std::numbers::pi));
  return reduce(loss, reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative, double margin,
                           double p, double eps, bool swap, std::string_view reduction) {
  constexpr std::string_view op = "triplet_margin_loss";
  check_reduction(op, reduction);
  if (!(margin > 0))  // Python's float text: 0.0, -1.0, 0.5
    fail(op, "margin must be greater than 0, got {}",
         margin == std::floor(margin) ? fmt::format("{:.1f}", margin) : fmt::format("{}", margin));
  if (anchor.dim() != positive.dim() || positive.dim() != negative.dim())
    fail(op,
         "The anchor, positive, and negative tensors are expected to have the same number of dimensions, but got: "
         "anchor {}D, positive {}D, and negative {}D inputs",
         anchor.dim(), positive.dim(), negative.dim());
  const Tensor to_positive = pairwise_distance(anchor, positive, p, eps);
  Tensor to_negative = pairwise_distance(anchor, negative, p, eps);
  if (swap) to_negative = minimum(to_negative, pairwise_distance(positive, negative, p, eps));
  return reduce(clamp_min(sub(add(to_positive, margin), to_negative), 0), reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                   std::string_view reduction) {
  constexpr std::string_view op = "multilabel_soft_margin_loss";
  Tensor loss = neg(add(mul(target, log_sigmoid(self)), mul(rsub(target, 1), log_sigmoid(neg(self)))));
  if (weight) loss = mul(loss, *weight);
  const int64_t class_dim = normalize_dim(op, -1, self.dim(), /*allow_scalar=*/false);
  loss = div(loss.sum({class_dim}), Scalar(self.size(class_dim)));
  if (reduction != "none" && reduction != "mean" && reduction != "sum") fail(op, "{} is not valid", reduction);
  return reduce(loss, reduction);
}

// Per sample, the sum over the classes j other than the target y of max(0, margin - x[y] + x[j])^p
// (times weight[y]), divided by the class count: ATen's loop, as whole-tensor ops. A hinge counts
// where z > 0, as ATen tests it: a tie (z == 0) passes no gradient and a NaN score adds nothing,
// neither to the loss nor to the gradient. A target outside [0, C) is caught by
// the gather that reads x[y] (its error names gather and the index). Over no samples "mean" is
// NaN and "sum" 0, as for any mean and sum; PyTorch's cpu kernels leave that output unwritten.
Tensor multi_margin_loss(const Tensor& self, const Tensor& target, double p, double margin,
                         const std::optional<Tensor>& weight, std::string_view reduction) {
  constexpr std::string_view op = "multi_margin_loss";
  check_reduction(op, reduction);
  if (p != 1 && p != 2) fail(op, "only p == 1 and p == 2 supported");
  if (weight && weight->dim() != 1) fail(op, "weight must be one-dimensional");
  if (weight && weight->requires_grad() && GradMode::is_enabled())  // PyTorch has no derivative for it
    fail(op,
         "The function 'multi_margin_loss' is not differentiable with respect to argument 'weight'. This input cannot "
         "have requires_grad True.");
  const Tensor x = as_samples(op, self);
  const ir::Expr frames = sym_size(x, 0), classes = sym_size(x, 1);
  if (target.dim() > 1 || !ir::sym_eq(sym_numel(target), frames))
    fail(op,
         "multi_margin_loss: target tensor should be 1-D with size equal to the number of input samples (batch size). "
         "Expected target size [{}], but got {}. Input has shape {}.",
         x.impl()->sizes()[0], shape_str(target.impl()->sizes()), shape_str(self.impl()->sizes()));
  if (weight && !ir::sym_eq(sym_numel(*weight), classes))
    fail(op, "inconsistent weight size, expected {} but got {}", x.impl()->sizes()[1],
         shape_str(weight->impl()->sizes()));
  check_class_margin_dtypes(op, "multi_margin_loss_cpu_kernel", self, target);
  if (weight && weight->dtype() != self.dtype())
    fail(op, "expected scalar type {} but found {}", c10_type_name(self.dtype()), c10_type_name(weight->dtype()));
  const ScalarType compute = decomp::opmath_dtype(self.dtype());
  const Tensor xs = x.to(compute);
  const Tensor y = sym_reshape(target, {frames}).unsqueeze(1);  // [N, 1]
  Tensor h = hinge(add(rsub(xs.gather(1, y), margin), xs));      // (margin - x[y]) + x[j], ATen's order
  if (p == 2) h = mul(h, h);
  if (weight) h = mul(h, weight->to(compute).index_select(0, y.squeeze(1)).unsqueeze(1));
  const Tensor loss = sym_div(where(ne(sym_positions(xs, 1), y), h, Scalar(0.0)).sum({1}), classes);
  if (reduction == "none") return (target.dim() == 0 ? loss.reshape({}) : loss).to(self.dtype());
  return reduce(loss, reduction).to(self.dtype());
}

// Per sample, with the target's class indices read up to its first -1: the sum over those targets
// t and the classes d not among them of max(0, 1 - x[t] + x[d]), divided by the class count, as
// ATen's loops (a target listed twice counts twice); hinges as multi_margin_loss's. The pairs make
// an [N, C, C] intermediate, which a compiled program fuses into its sum. Every target entry, the
// ones past the -1 too, must lie in [-1, C), as PyTorch checks: the gather reading x[t] catches the
// others (compiled, the scatter that marks the listed classes may catch them first). No samples: as
// multi_margin_loss.
Tensor multilabel_margin_loss(const Tensor& self, const Tensor& target, std::string_view reduction) {
  constexpr std::string_view op = "multilabel_margin_loss";
  check_reduction(op, reduction);
  const Tensor x = as_samples(op, self);
  const bool target_fits = self.dim() <= 1 ? target.dim() <= 1 && ir::sym_eq(sym_numel(target), sym_size(x, 1))
                                           : same_shape(target, self);
  if (!target_fits)
    fail(op, "inconsistent target size: {} for input of size: {}", shape_str(target.impl()->sizes()),
         shape_str(self.impl()->sizes()));
  check_class_margin_dtypes(op, "multilabel_margin_loss_forward_out_frame", self, target);
  const Tensor xs = x.to(decomp::opmath_dtype(self.dtype()));
  const Tensor t = sym_reshape(target, sym_sizes(x));                       // [N, C] class indices
  const Tensor listed = eq(cumsum(eq(t, -1), 1), 0);                         // before the first -1
  const Tensor index = masked_fill(t, eq(t, -1), Scalar(int64_t{0}));
  const Tensor z = add(rsub(xs.gather(1, index).unsqueeze(2), 1), xs.unsqueeze(1));  // [N, t, d]
  const Tensor is_target =  // [N, C]: class d is listed
      ne(scatter_reduce(zeros_like(t), 1, index, listed.to(ScalarType::Int64), "amax"), 0);
  const Tensor pairs = logical_and(listed.unsqueeze(2), logical_not(is_target).unsqueeze(1));
  const Tensor loss = sym_div(where(pairs, hinge(z), Scalar(0.0)).sum({1, 2}), sym_size(x, 1));
  if (reduction == "none") return (self.dim() == 2 ? loss : loss.reshape({})).to(self.dtype());
  return reduce(loss, reduction).to(self.dtype());
}

}  // namespace kiln
