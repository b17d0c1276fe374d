// kiln/frontend/ops_dropout.cpp — the Dropout family (frontend/ops_dropout.h): dropout and
// native_dropout, and native_dropout's decomposition (Philox draws, frontend/ops_random.h).
#include "frontend/ops_dropout.h"

#include "base/error.h"
#include "frontend/dispatch.h"
#include "frontend/symbolic.h"
#include "frontend/decompositions_detail.h"
#include "frontend/ops_factory.h"
#include "frontend/ops.h"
#include "frontend/ops_random.h"

#include <tuple>
#include <vector>

namespace kiln {

namespace {

using ir::OpKind;

// The dtype PyTorch computes f16/bf16 norms in (its opmath type): f32.
ScalarType compute_dtype_of(ScalarType t) {
  return (t == ScalarType::Half || t == ScalarType::BFloat16) ? ScalarType::Float : t;
}

}  // namespace

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

}  // namespace kiln
