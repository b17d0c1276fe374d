// kiln/frontend/ops_linear.cpp — the Linear family's frontend (frontend/ops_linear.h): linear,
// matmul, addmm, baddbmm, cross_entropy, pdist and cdist; einsum, which records matmuls, is
// frontend/ops_linear_einsum.cpp.
//
// Each checks what PyTorch checks, with its wording, and dispatches one composite op whose
// decomposition is frontend/decompositions_linear.cpp (pdist's and cdist's, which share this
// file's helpers, are here).
#include "frontend/ops_linear.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/symbolic.h"
#include "frontend/arg_checks.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops_matmul.h"
#include "frontend/ops_view.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "ir/shape_env.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;

bool present(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

// addmm / baddbmm / addmm_activation: self has the product's dtype and broadcasts to its shape;
// the self the op records, expanded to it.
Tensor product_self(ir::OpKind kind, std::string_view op, const Tensor& self, const Tensor& a, const Tensor& b) {
  if (self.dtype() != a.dtype())
    fail(op, "self and mat2 must have the same dtype, but got {} and {}", c10_type_name(self.dtype()), c10_type_name(a.dtype()));
  if (a.dtype() == ScalarType::Bool) fail(op, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
  std::vector<ir::Expr> out = {sym_size(a, -2), sym_size(b, -1)};
  if (kind == OpKind::baddbmm) out.insert(out.begin(), sym_size(a, 0));
  const std::vector<ir::Expr> s = sym_sizes(self);
  if (!sym_expandable(s, out))
    fail(op, "self of shape {} cannot be broadcast to the product's shape {}", ir::str(s), ir::str(out));
  return sym_expand(self, out);
}

Tensor add_product(ir::OpKind kind, std::string_view op, const Tensor& self, const Tensor& a, const Tensor& b,
                   const Scalar& beta, const Scalar& alpha) {
  Tensor s = product_self(kind, op, self, a, b);
  check_scalar_fits(op, beta, a.dtype());
  check_scalar_fits(op, alpha, a.dtype());
  // PyTorch converts beta and alpha to an integer product's dtype: 0.5 truncates to 0.
  auto in_dtype = [&](const Scalar& v) { return is_integral(a.dtype(), false) ? Scalar(v.to_int()) : v; };
  return dispatch1(kind, {s, a, b}, {in_dtype(beta), in_dtype(alpha)});
}

}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (input.dim() == 0) fail("linear", "both arguments to linear need to be at least 1D, but they are 0D and {}D", weight.dim());
  if (weight.dim() == 2 && !ir::sym_eq(sym_size(input, -1), sym_size(weight, 1))) {
    const IntArrayRef in = input.impl()->sizes(), w = weight.impl()->sizes();  // hints, for the message
    const int64_t rows = in.back() == 0 ? 0 : input.impl()->numel() / in.back();
    fail("linear", "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", input.dim() == 1 ? 1 : rows,
         in.back(), w[1], w[0]);
  }
  // A 1-D weight with a bias: PyTorch runs addmm, which wants a matrix, for a 2-D input and for
  // a contiguous input with a bias of one or more dims; other inputs with a 0-D bias take its
  // matmul path (measured, torch 2.15). kiln's result does not depend on the layout, so it
  // takes the contiguous input's rule: only a 0-D bias on an input that is not 2-D is added.
  if (present(bias) && weight.dim() != 2 && (input.dim() == 2 || bias->dim() != 0))
    fail("linear", "addmm: mat2 must be a matrix, got {}-D tensor", weight.dim());
  if (input.dtype() != weight.dtype())
    fail("linear", "mat1 and mat2 must have the same dtype, but got {} and {}", c10_type_name(input.dtype()),
         c10_type_name(weight.dtype()));
  std::vector<Tensor> ins{input, weight};
  if (present(bias)) ins.push_back(*bias);
  return dispatch1(OpKind::linear, std::move(ins));
}

Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     std::string_view reduction, int64_t ignore_index, double label_smoothing) {
  check_reduction("cross_entropy", reduction);
  std::vector<Tensor> ins{self, target};
  if (present(weight)) ins.push_back(*weight);
  return dispatch1(OpKind::cross_entropy, std::move(ins), {std::string(reduction), ignore_index, label_smoothing});
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  int64_t da = a.dim();
  int64_t db = b.dim();
  if (da == 0 || db == 0) {
    fail("matmul", "both arguments to matmul need to be at least 1D, but they are {}D and {}D", da, db);
  }
  check_same_dtype("matmul", "m1", "m2", a, b);
  // The contracted sizes: a's last dim against b's first (1-D) or second-to-last dim.
  if (!same_size(a, -1, b, db == 1 ? 0 : -2))
    fail("matmul", "shapes {} and {} cannot be multiplied", shape_str(a.impl()->sizes()), shape_str(b.impl()->sizes()));

  // Batch dims must broadcast (the decomposition in passes/decompositions_linear.cpp expands them).
  if (da > 2 || db > 2) {
    const std::vector<ir::Expr> sa = sym_sizes(a), sb = sym_sizes(b);
    std::vector<ir::Expr> batch_a(sa.begin(), sa.begin() + std::max<int64_t>(da - 2, 0));
    std::vector<ir::Expr> batch_b(sb.begin(), sb.begin() + std::max<int64_t>(db - 2, 0));
    sym_broadcast_shapes("matmul", batch_a, batch_b);
  }
  return dispatch1(OpKind::matmul, {a, b});
}

// addmm's meta function checks the dtypes first: self against mat2, then mat1 against mat2.
static void check_addmm_dtypes(std::string_view op, const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  if (self.dtype() != mat2.dtype())
    fail(op, "self and mat2 must have the same dtype, but got {} and {}", c10_type_name(self.dtype()), c10_type_name(mat2.dtype()));
  if (mat1.dtype() != mat2.dtype())
    fail(op, "mat1 and mat2 must have the same dtype, but got {} and {}", c10_type_name(mat1.dtype()), c10_type_name(mat2.dtype()));
}

Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha) {
  check_addmm_dtypes("addmm", self, mat1, mat2);
  check_mm("addmm", mat1, mat2);
  return add_product(OpKind::addmm, "addmm", self, mat1, mat2, beta, alpha);
}

Tensor addmm_activation(const Tensor& self, const Tensor& mat1, const Tensor& mat2, std::string_view activation) {
  if (activation != "none" && activation != "relu" && activation != "gelu_tanh")
    fail("addmm_activation", "activation must be 'none', 'relu' or 'gelu_tanh', got '{}'", activation);
  check_addmm_dtypes("addmm_activation", self, mat1, mat2);
  check_mm("addmm_activation", mat1, mat2);
  if (!is_floating_point(mat1.dtype()))
    fail("addmm_activation", "expected floating-point operands, got {}", c10_type_name(mat1.dtype()));
  Tensor s = product_self(OpKind::addmm_activation, "addmm_activation", self, mat1, mat2);
  return dispatch1(OpKind::addmm_activation, {s, mat1, mat2}, {std::string(activation)});
}

Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta, const Scalar& alpha) {
  check_bmm("baddbmm", batch1, batch2);
  if (self.dtype() != batch1.dtype())
    fail("baddbmm", "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}", cpp_type_name(self.dtype()),
         cpp_type_name(batch1.dtype()), cpp_type_name(batch2.dtype()));
  return add_product(OpKind::baddbmm, "baddbmm", self, batch1, batch2, beta, alpha);
}

static Tensor pdist_prims(const Tensor& input, double p) {
  const std::string_view op = "pdist";
  if (input.dim() != 2) fail(op, "pdist only supports 2D tensors, got: {}D", input.dim());
  if (!is_floating_point(input.dtype())) fail(op, "pdist only supports floating-point dtypes");
  if (!(p >= 0)) fail(op, "pdist only supports non-negative p values");
  const int64_t n = input.size(0), pairs = n * (n - 1) / 2;
  // The pairs i < j in row-major order: the flat positions of the upper triangle of [n, n],
  // compacted by their running count (iotas and a scatter: a decomposition records its
  // constants).
  const TensorOptions i64 = TensorOptions(ScalarType::Int64).device(input.device());
  const Tensor upper = lt(arange(n, i64).unsqueeze(1), arange(n, i64).unsqueeze(0)).reshape({n * n});
  const Tensor slot = where(upper, cumsum(upper, 0) - 1, Scalar(pairs));
  const Tensor flat = zeros({pairs + 1}, i64).scatter(0, slot, arange(n * n, i64)).narrow(0, 0, pairs);
  const Tensor first = div(flat, Scalar(std::max<int64_t>(n, 1)), "floor"), second = remainder(flat, Scalar(std::max<int64_t>(n, 1)));
  const Tensor diff = abs(input.index_select(0, first) - input.index_select(0, second));
  if (input.size(1) == 0) return diff.sum({-1});
  if (p == 0) return ne(diff, 0).to(input.dtype()).sum({-1});
  if (p == 1) return diff.sum({-1});
  if (p == 2) return sqrt((diff * diff).sum({-1}));
  if (p == std::numeric_limits<double>::infinity()) return diff.amax({-1});
  return pow(pow(diff, p).sum({-1}), 1.0 / p);
}

Tensor pdist(const Tensor& input, double p) { return dispatch1(ir::OpKind::pdist, {input}, {p}); }

namespace decomp {
std::vector<Tensor> pdist(const DecompArgs& a) { return {pdist_prims(a.in(0), a.attr<double>("p"))}; }
}  // namespace decomp

static Tensor cdist_prims(const Tensor& x1, const Tensor& x2, double p, int64_t mode) {
  const std::string_view op = "cdist";
  if (x1.dim() < 2) fail(op, "cdist only supports at least 2D tensors, X1 got: {}D", x1.dim());
  if (x2.dim() < 2) fail(op, "cdist only supports at least 2D tensors, X2 got: {}D", x2.dim());
  if (x1.size(-1) != x2.size(-1))
    fail(op, "X1 and X2 must have the same number of columns. X1: {} X2: {}", x1.size(-1), x2.size(-1));
  if (!is_floating_point(x1.dtype()) || !is_floating_point(x2.dtype()))
    fail(op, "cdist only supports floating-point dtypes, X1 got: {}, X2 got: {}", c10_type_name(x1.dtype()),
         c10_type_name(x2.dtype()));
  if (x1.dtype() != x2.dtype())
    fail(op, "X1 and X2 must have the same dtype, but got {} and {}", c10_type_name(x1.dtype()), c10_type_name(x2.dtype()));
  if (!(p >= 0)) fail(op, "cdist only supports non-negative p values");
  if (mode < 0 || mode > 2) fail(op, "{} is not a valid value for compute_mode", mode);
  const int64_t P = x1.size(-2), R = x2.size(-2);
  const bool use_mm = p == 2 && (mode == 1 || (mode == 0 && (P > 25 || R > 25)));
  // PyTorch's direct kernel has no f16/bf16 instance; its matrix-product form does.
  if ((x1.dtype() == ScalarType::Half || x1.dtype() == ScalarType::BFloat16) && !use_mm)
    fail(op, "\"cdist\" not implemented for '{}'", c10_type_name(x1.dtype()));
  if (use_mm) {
    // PyTorch's _euclidean_dist: |a|^2 + |b|^2 - 2 a.b as one product of padded operands.
    const Tensor n1 = (x1 * x1).sum({-1}, true), n2 = (x2 * x2).sum({-1}, true);
    const Tensor a = cat({x1 * -2, n1, ones_like(n1)}, -1), b = cat({x2, ones_like(n2), n2}, -1);
    return sqrt(clamp_min(matmul(a, b.transpose(-2, -1)), 0));
  }
  const Tensor diff = abs(x1.unsqueeze(-2) - x2.unsqueeze(-3));  // [..., P, R, M]
  if (x1.size(-1) == 0) return diff.sum({-1});                   // no columns: every distance is 0
  if (p == 0) return ne(diff, 0).to(x1.dtype()).sum({-1});
  if (p == 1) return diff.sum({-1});
  if (p == 2) return sqrt((diff * diff).sum({-1}));
  if (p == std::numeric_limits<double>::infinity()) return diff.amax({-1});
  return pow(pow(diff, p).sum({-1}), 1.0 / p);
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  return dispatch1(ir::OpKind::cdist, {x1, x2}, {p, compute_mode.value_or(0)});
}

namespace decomp {
std::vector<Tensor> cdist(const DecompArgs& a) {
  return {cdist_prims(a.in(0), a.in(1), a.attr<double>("p"), a.attr<int64_t>("compute_mode"))};
}
}  // namespace decomp

}  // namespace kiln
