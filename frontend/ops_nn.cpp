// kiln/frontend/ops_nn.cpp — the composite neural-network ops of frontend/ops_nn.h.
//
// Each op checks what PyTorch checks before computing (with its wording), resolves every
// default into an attribute (normalized dim, the dtype to compute in, eps) and dispatches the
// composite op. dispatch() records it when an input is traced and otherwise runs its
// decomposition eagerly; the composite's shape function (ir/shape_fns_composite.cpp) repeats
// the shape checks so that graphs read from text are checked too. A missing optional tensor
// is left out of the node's inputs; layer_norm with a bias but no weight passes a weight of
// ones, since only trailing optional tensors may be missing (docs/decisions.md).
#include "frontend/ops_nn.h"

#include "frontend/decompositions_detail.h"
#include "frontend/dispatch.h"
#include "base/error.h"
#include "frontend/symbolic.h"
#include "ir/shape_env.h"
#include "frontend/factories.h"
#include "frontend/ops.h"
#include "frontend/views.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;

bool present(const std::optional<Tensor>& t) { return t.has_value() && t->defined(); }

Tensor softmax_like(OpKind op, std::string_view name, const Tensor& self, int64_t dim,
                    std::optional<ScalarType> dtype) {
  int64_t d = normalize_dim(name, dim, self.dim());
  return dispatch1(op, {self}, {d, dtype.value_or(self.dtype())});
}

// The dtype PyTorch computes f16/bf16 norms in (its opmath type): f32.
ScalarType compute_dtype_of(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

}  // namespace

Tensor softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_like(OpKind::softmax, "softmax", self, dim, dtype);
}

Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_like(OpKind::log_softmax, "log_softmax", self, dim, dtype);
}

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
  return dispatch1(OpKind::layer_norm, std::move(ins), {normalized_shape.vec(), eps});
}

Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps) {
  std::vector<Tensor> ins{input};
  if (present(weight)) ins.push_back(*weight);
  return dispatch1(OpKind::rms_norm, std::move(ins), {normalized_shape.vec(), eps.value_or(finfo_eps(compute_dtype_of(input.dtype())))});
}

Tensor gelu(const Tensor& self, std::string_view approximate) {
  if (approximate != "none" && approximate != "tanh") fail("gelu", "approximate argument must be either none or tanh.");
  return dispatch1(OpKind::gelu, {self}, {std::string(approximate)});
}

Tensor silu(const Tensor& self) { return dispatch1(OpKind::silu, {self}); }

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (input.dim() == 0) fail("linear", "both arguments to linear need to be at least 1D, but they are 0D and {}D", weight.dim());
  if (weight.dim() == 2 && !ir::sym_eq(sym_size(input, -1), sym_size(weight, 1))) {
    const IntArrayRef in = input.impl()->sizes(), w = weight.impl()->sizes();  // hints, for the message
    const int64_t rows = in.back() == 0 ? 0 : input.impl()->numel() / in.back();
    fail("linear", "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", input.dim() == 1 ? 1 : rows,
         in.back(), w[1], w[0]);
  }
  // With a bias PyTorch runs addmm, which wants a matrix (a 1-D weight works only without one).
  if (present(bias) && weight.dim() != 2)
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
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    fail("cross_entropy", "{} is not a valid value for reduction", reduction);
  std::vector<Tensor> ins{self, target};
  if (present(weight)) ins.push_back(*weight);
  return dispatch1(OpKind::cross_entropy, std::move(ins), {std::string(reduction), ignore_index, label_smoothing});
}

Tensor dropout(const Tensor& input, double p, bool train) {
  if (!(p >= 0 && p <= 1)) fail("dropout", "dropout probability has to be between 0 and 1, but got {}", p);
  if (!is_floating_point(input.dtype()))
    fail("dropout", "expected a floating-point input, but got {}", c10_type_name(input.dtype()));
  if (!train || p == 0) return input;
  return std::get<0>(native_dropout(input, p, true));
}

std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train) {
  if (!(p >= 0 && p <= 1)) fail("native_dropout", "dropout probability has to be between 0 and 1, but got {}", p);
  // Evaluation copies any dtype (as PyTorch does); drawing a mask needs a floating input.
  const bool training = train.value_or(true);
  if (training && !is_floating_point(input.dtype()))
    fail("native_dropout", "expected a floating-point input, but got {}", c10_type_name(input.dtype()));
  // The draw's (seed, offset) is taken now, as the eager op's; a compiled program draws anew
  // on every call (runtime/program.cpp).
  Generator& g = default_generator();
  const auto seed = static_cast<int64_t>(g.seed());
  const int64_t offset = training && p > 0 && p < 1 ? static_cast<int64_t>(g.next_offset()) : 0;
  std::vector<Tensor> r = dispatch(OpCall{OpKind::native_dropout, {input}, ir::AttrList({p, training, seed, offset})});
  return {r.at(0), r.at(1)};
}

namespace decomp {

std::vector<Tensor> native_dropout(const DecompArgs& a) {
  const Tensor& input = a.in(0);
  const double p = a.attr<double>("p");
  // Nothing dropped (evaluation or p = 0): a copy and an all-true mask.
  if (!a.attr<bool>("train") || p == 0) return {input.clone(), ones_like(input, TensorOptions(ScalarType::Bool))};
  if (p == 1) return {input * 0, zeros_like(input, TensorOptions(ScalarType::Bool))};  // inf and NaN stay NaN
  const ScalarType acc = compute_dtype_of(input.dtype());
  const Tensor u = dispatch1(OpKind::uniform, {},
                             {sym_sizes(input), 0.0, 1.0, a.attr<int64_t>("seed"), a.attr<int64_t>("offset"), acc,
                              input.device()});
  const Tensor keep = lt(u, 1 - p);
  return {(input.to(acc) * where(keep, Scalar(1 / (1 - p)), Scalar(0.0))).to(input.dtype()), keep};
}

}  // namespace decomp

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

namespace {

// The math path: softmax(q @ k^T * scale + mask) @ v, with PyTorch's rule that a masked row
// seeing no key is zeros, and dropout on the probabilities.
Tensor sdpa_math(const Tensor& query, const Tensor& k, const Tensor& v, const std::optional<Tensor>& attn_mask,
                 double dropout_p, bool is_causal, double s) {
  Tensor scores = matmul(query, k.transpose(-2, -1)) * s;
  std::optional<Tensor> allowed;  // bool [.., L, S]: which keys each query attends to
  if (is_causal) {
    const Tensor i = sym_iota(sym_size(query, -2), kLong, query.device()).unsqueeze(1);
    const Tensor j = sym_iota(sym_size(k, -2), kLong, query.device()).unsqueeze(0);
    allowed = le(j, i);
  } else if (present(attn_mask)) {
    if (attn_mask->dtype() == ScalarType::Bool) allowed = *attn_mask;
    else scores = scores + *attn_mask;
  }
  if (allowed) scores = masked_fill(scores, logical_not(*allowed), -std::numeric_limits<double>::infinity());
  Tensor probs = softmax(scores, -1);
  // A row with every key masked (all -inf) would be NaN: PyTorch's math kernel gives zeros.
  if (present(attn_mask))
    probs = masked_fill(probs, all(eq(scores, -std::numeric_limits<double>::infinity()), -1, /*keepdim=*/true), 0);
  if (dropout_p > 0) probs = dropout(probs, dropout_p, true);
  return matmul(probs, v);
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa) {
  const std::string_view op = "scaled_dot_product_attention";
  if (query.dtype() != key.dtype() || query.dtype() != value.dtype())
    fail(op, "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and "
             "value.dtype: {} instead.", c10_type_name(query.dtype()), c10_type_name(key.dtype()),
         c10_type_name(value.dtype()));
  if (!is_floating_point(query.dtype()))
    fail(op, "expected floating-point query, key and value, but got {}", c10_type_name(query.dtype()));
  if (query.dim() < 2 || key.dim() < 2 || value.dim() < 2)
    fail(op, "expected query, key and value of at least 2 dims ([..., L, E]), but got {}, {} and {}",
         shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  if (!ir::sym_eq(sym_size(query, -1), sym_size(key, -1)) || !ir::sym_eq(sym_size(key, -2), sym_size(value, -2)))
    fail(op, "query {} and key {} must agree on the embedding dim, and key and value {} on the sequence length",
         shape_str(query.sizes()), shape_str(key.sizes()), shape_str(value.sizes()));
  if (is_causal && present(attn_mask))
    fail(op, "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True");
  if (present(attn_mask) && attn_mask->dtype() != ScalarType::Bool && attn_mask->dtype() != query.dtype())
    fail(op, "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and "
             "query.dtype: {} instead.", c10_type_name(attn_mask->dtype()), c10_type_name(query.dtype()));
  Tensor k = key, v = value;
  if (enable_gqa && query.dim() >= 3 && key.size(-3) != query.size(-3)) {
    const int64_t hq = query.size(-3), hk = key.size(-3);
    if (hk == 0 || hq % hk != 0)
      fail(op, "number of heads in key and value ({}) must divide the number of query heads ({}) with enable_gqa",
           hk, hq);
    auto share = [&](const Tensor& t) {  // [..., hk, S, E] -> [..., hk * (hq / hk), S, E], each head repeated
      std::vector<int64_t> grown = t.sizes().vec();
      grown.insert(grown.end() - 2, hq / hk);
      std::vector<int64_t> merged = t.sizes().vec();
      merged[merged.size() - 3] = hq;
      return t.unsqueeze(-3).expand(grown).reshape(merged);
    };
    k = share(key);
    v = share(value);
  }
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(query.size(-1))));
  // Without dropout the op is recorded whole (the cpu backend fuses it; others decompose it).
  if (dropout_p > 0) return sdpa_math(query, k, v, attn_mask, dropout_p, is_causal, s);
  std::vector<Tensor> ins{query, k, v};
  if (present(attn_mask)) ins.push_back(*attn_mask);
  return dispatch1(ir::OpKind::scaled_dot_product_attention, std::move(ins), {is_causal, s});
}

namespace decomp {
std::vector<Tensor> scaled_dot_product_attention(const DecompArgs& a) {
  const std::optional<Tensor> mask = a.opt(3) ? std::optional<Tensor>(*a.opt(3)) : std::nullopt;
  return {sdpa_math(a.in(0), a.in(1), a.in(2), mask, 0.0, a.attr<bool>("is_causal"), a.attr<double>("scale"))};
}
}  // namespace decomp

// ---- Tensor methods -------------------------------------------------------------------------------

Tensor Tensor::softmax(int64_t d, std::optional<ScalarType> dtype) const { return kiln::softmax(*this, d, dtype); }
Tensor Tensor::log_softmax(int64_t d, std::optional<ScalarType> dtype) const {
  return kiln::log_softmax(*this, d, dtype);
}
Tensor Tensor::var(IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) const {
  return kiln::var(*this, dims, correction, keepdim);
}
Tensor Tensor::std(IntArrayRef dims, const std::optional<Scalar>& correction, bool keepdim) const {
  return kiln::std(*this, dims, correction, keepdim);
}

}  // namespace kiln
