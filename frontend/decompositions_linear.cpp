// kiln/frontend/decompositions_linear.cpp — the Linear family's decompositions: matmul, addmm,
// baddbmm, linear and cross_entropy.
//
// matmul covers torch.matmul's rank cases on top of the mm and bmm prims: 1-D·1-D is a dot
// product, 1-D operands gain and then lose a unit dim, an N-D operand times a matrix or vector
// folds its batch into the rows of one mm, and other N-D operands broadcast their batch dims
// (expand), flatten them into one (reshape) and run one bmm. linear is
// matmul(x, weight^T) + bias. cross_entropy is log_softmax followed by PyTorch's nll_loss
// and label-smoothing formulas, with ignore_index entries contributing nothing and the mean
// dividing by the summed weights of the targets that count.
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_activation.h"
#include "frontend/ops_softmax.h"
#include "frontend/symbolic.h"
#include "frontend/ops_view.h"
#include "frontend/decompositions_detail.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <optional>
#include <vector>

namespace kiln::decomp {

Tensor matmul(const DecompArgs& args) {
  const Tensor& a = args.in(0);
  const Tensor& b = args.in(1);
  const int64_t da = a.dim(), db = b.dim();
  if (da == 1 && db == 1) return mm(a.unsqueeze(0), b.unsqueeze(1)).reshape(std::vector<int64_t>{});
  if (da == 2 && db == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (da == 1 && db == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (da == 2 && db == 2) return mm(a, b);

  // An N-D operand times a matrix or vector folds its batch dims into the rows of one mm, as
  // torch.matmul does: [..., n, k] -> [batch * n, k]. The weight of a linear layer on a 3-D
  // input is then read in place, not expanded across the batch into a bmm operand, and the
  // gradients are two mms.
  if (da >= 3 && db <= 2) {
    std::vector<ir::Expr> sa = sym_sizes(a);
    const ir::Expr k = sa.back();
    sa.pop_back();
    const Tensor rows = sym_reshape(a, {sym_product(sa), k});
    if (db == 1) return sym_reshape(mm(rows, b.unsqueeze(1)), sa);
    sa.push_back(sym_sizes(b).back());
    return sym_reshape(mm(rows, b), sa);
  }

  // Batched: broadcast the batch dims, flatten them into one, bmm, restore the shape. Sizes
  // are expressions so that a dynamic batch stays dynamic (frontend/symbolic.h).
  const std::vector<ir::Expr> sa = sym_sizes(a), sb = sym_sizes(b);
  const ir::Expr k = sa.back();
  const ir::Expr n = da > 1 ? sa[static_cast<size_t>(da - 2)] : ir::Expr(1);
  const ir::Expr p = db > 1 ? sb.back() : ir::Expr(1);
  std::vector<ir::Expr> batch_a(sa.begin(), sa.begin() + std::max<int64_t>(da - 2, 0));
  std::vector<ir::Expr> batch_b(sb.begin(), sb.begin() + std::max<int64_t>(db - 2, 0));
  std::vector<ir::Expr> batch = sym_broadcast_shapes("matmul", batch_a, batch_b);
  const ir::Expr nbatch = sym_product(batch);

  std::vector<ir::Expr> a_size = batch;
  a_size.push_back(n);
  a_size.push_back(k);
  Tensor a3 = sym_reshape(sym_expand(da == 1 ? a.unsqueeze(0) : a, a_size), {nbatch, n, k});
  std::vector<ir::Expr> b_size = batch;
  b_size.push_back(k);
  if (db > 1) b_size.push_back(p);
  Tensor b3 = sym_expand(b, b_size);
  b3 = db == 1 ? sym_reshape(b3, {nbatch, k}).unsqueeze(2) : sym_reshape(b3, {nbatch, k, p});

  std::vector<ir::Expr> out_size = batch;
  if (da > 1) out_size.push_back(n);
  if (db > 1) out_size.push_back(p);
  return sym_reshape(bmm(a3, b3), out_size);
}

namespace {

// beta * self + alpha * product, as at::addmm: beta = 0 ignores self (NaN included), and the
// scalars multiply only when they are not 1.
Tensor scaled_sum(const Tensor& self, Tensor product, const Scalar& beta, const Scalar& alpha) {
  if (!(alpha.to_double() == 1.0)) product = product * alpha;
  if (beta.to_double() == 0.0) return product;
  return (beta.to_double() == 1.0 ? self : self * beta) + product;
}

}  // namespace

Tensor addmm(const DecompArgs& args) {
  return scaled_sum(args.in(0), mm(args.in(1), args.in(2)), args.attr<Scalar>("beta"), args.attr<Scalar>("alpha"));
}

// activation(self + mat1 @ mat2) in f32 for f16 and bf16, rounded once (ATen's
// _addmm_activation, as cuBLASLt's epilogue computes it): the product, then the bias, as linear
// records them, so that passes/matmul_epilogues.h folds this form back into one node.
Tensor addmm_activation(const DecompArgs& args) {
  const Tensor& self = args.in(0);
  const ScalarType dt = self.dtype(), compute = opmath_dtype(dt);
  Tensor r = mm(args.in(1).to(compute), args.in(2).to(compute)) + self.to(compute);
  const std::string& act = args.attr<std::string>("activation");
  if (act == "relu") r = kiln::relu(r);
  else if (act == "gelu_tanh") r = kiln::gelu(r, "tanh");
  return r.to(dt);
}

Tensor baddbmm(const DecompArgs& args) {
  return scaled_sum(args.in(0), bmm(args.in(1), args.in(2)), args.attr<Scalar>("beta"), args.attr<Scalar>("alpha"));
}

// linear(x, W, b) = x W^T + b. For f16/bf16 the product stays in f32 until the bias is added
// and the sum is rounded once, as PyTorch's addmm does (rounding x W^T first loses the low
// bits that the bias may cancel).
Tensor linear(const DecompArgs& args) {
  const Tensor& x = args.in(0);
  const Tensor& w = args.in(1);
  const Tensor wt = w.dim() == 2 ? w.t() : w;
  const Tensor* b = args.opt(2);
  if (!b) return kiln::matmul(x, wt);
  const ScalarType compute = opmath_dtype(x.dtype());
  if (compute == x.dtype()) return kiln::matmul(x, wt) + *b;
  const ScalarType out = promote_types(x.dtype(), b->dtype());
  return (kiln::matmul(x.to(compute), wt.to(compute)) + b->to(compute)).to(out);
}

namespace {

// smoothing / classes for a symbolic class count, as a 0-dim tensor of `dtype`: the quotient in
// f64 from the size read at run time, then converted as a Scalar operand is (wrapped_number: to
// the other operand's dtype), so that a symbolic count computes what a constant one does
// (reading the count as an integer pinned the class dim: a compile per number of classes).
Tensor share(double smoothing, const ir::Expr& classes, ScalarType dtype, Device device) {
  return (Scalar(smoothing) / sym_scalar_tensor(classes, kDouble, device)).to(dtype);
}

// t * (smoothing / classes), as ATen multiplies by that double.
Tensor times_share(const Tensor& t, double smoothing, const ir::Expr& classes) {
  if (const std::optional<int64_t> c = classes.maybe_const()) return t * (smoothing / static_cast<double>(*c));
  return t * share(smoothing, classes, t.dtype(), t.device());
}

// The weight (one per class) as a tensor of x's rank that broadcasts along the class dim.
Tensor class_weight(const Tensor& weight, const Tensor& x, int64_t class_dim) {
  std::vector<ir::Expr> shape(static_cast<size_t>(x.dim()), ir::Expr(1));
  shape[static_cast<size_t>(class_dim)] = sym_size(weight, 0);
  return sym_reshape(weight, shape);
}

// Class probabilities (a floating target of the input's shape):
// loss_i = -sum_c w[c] q_ic log_softmax(x_i)[c], q = (1 - eps) target + eps / C; the mean
// divides by the number of rows, not by the weights.
Tensor cross_entropy_probabilities(const Tensor& x, const Tensor& target, const Tensor* weight,
                                   const std::string& reduction, double smoothing) {
  const int64_t class_dim = x.dim() == 1 ? 0 : 1;
  const ScalarType out = promote_types(x.dtype(), target.dtype());
  const Tensor logp = kiln::log_softmax(x, class_dim).to(out);
  Tensor q = target.to(out);
  if (smoothing > 0.0) {
    const ir::Expr classes = sym_size(x, class_dim);
    q = q * (1.0 - smoothing);
    if (const std::optional<int64_t> c = classes.maybe_const()) q = q + smoothing / static_cast<double>(*c);
    else q = q + share(smoothing, classes, out, q.device());
  }
  if (weight) q = q * class_weight(*weight, x, class_dim).to(out);
  const Tensor loss = -(logp * q).sum({class_dim});
  if (reduction == "none") return loss;
  return reduction == "sum" ? loss.sum() : loss.mean();
}

}  // namespace

// Class indices: loss_i = -w[t_i] log_softmax(x_i)[t_i] (0 where t_i == ignore_index); with
// label smoothing eps: (1 - eps) * nll + eps / C * smooth, smooth_i = -sum_c w[c]
// log_softmax(x_i)[c].
Tensor cross_entropy(const DecompArgs& args) {
  const Tensor& x = args.in(0);
  const Tensor& target = args.in(1);
  const Tensor* weight = args.opt(2);
  const std::string& reduction = args.attr<std::string>("reduction");
  const int64_t ignore_index = args.attr<int64_t>("ignore_index");
  const double smoothing = args.attr<double>("label_smoothing");
  if (is_floating_point(target.dtype())) return cross_entropy_probabilities(x, target, weight, reduction, smoothing);
  const int64_t class_dim = x.dim() == 1 ? 0 : 1;
  const ir::Expr classes = sym_size(x, class_dim);

  Tensor ignored = eq(target, Scalar(ignore_index));
  Tensor valid = logical_not(ignored);
  Tensor safe_target = where(ignored, Scalar(int64_t{0}), target);
  const Tensor index = safe_target.unsqueeze(class_dim);
  Tensor logp, picked;  // logp: the whole log_softmax, written only for label smoothing
  if (smoothing > 0.0 || ir::sym_eq(classes, ir::Expr(0))) {
    logp = kiln::log_softmax(x, class_dim);
    picked = logp.gather(class_dim, index).squeeze(class_dim);
  } else {
    // log_softmax(x)[t] = (x[t] - m) - log sum_c exp(x_c - m), as log_softmax computes it, from
    // the row's statistics (one fused row kernel) and the target's logit alone: no [N, C]
    // log_softmax is written and read back.
    const Tensor xc = x.to(opmath_dtype(x.dtype()));
    const Tensor m = amax(xc, {class_dim}, /*keepdim=*/true);
    const Tensor log_sum = log(kiln::sum(exp(xc - m), {class_dim}, /*keepdim=*/true));
    picked = ((xc.gather(class_dim, index) - m) - log_sum).to(x.dtype()).squeeze(class_dim);
  }

  Tensor nll, weight_sum;
  if (weight) {
    Tensor w_t = sym_reshape(weight->index_select(0, safe_target.flatten()), sym_sizes(target));
    nll = where(valid, -(picked * w_t), Scalar(0.0));
    weight_sum = where(valid, w_t, Scalar(0.0)).sum();
  } else {
    nll = where(valid, -picked, Scalar(0.0));
    weight_sum = valid.sum().to(x.dtype());
  }
  auto reduce = [&](const Tensor& loss) {
    if (reduction == "none") return loss;
    if (reduction == "sum") return loss.sum();
    return loss.sum() / weight_sum;
  };
  Tensor loss = reduce(nll);
  if (smoothing <= 0.0) return loss;

  Tensor smooth;
  if (weight) {
    smooth = -(logp * class_weight(*weight, x, class_dim)).sum({class_dim});
  } else {
    smooth = -logp.sum({class_dim});
  }
  smooth = where(ignored, Scalar(0.0), smooth);
  return loss * (1.0 - smoothing) + times_share(reduce(smooth), smoothing, classes);
}

}  // namespace kiln::decomp
